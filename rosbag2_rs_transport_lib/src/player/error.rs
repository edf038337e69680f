//! Why a playback could not start or continue.

use rosbag2_rs_clock::ClockError;
use rosbag2_rs_storage::StorageError;

use rosbag2_rs_middleware::error::TransportError;

/// A player error.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    /// An option that cannot be used.
    #[error("{0}")]
    InvalidOption(String),
    /// A control request that cannot be served now (e.g. play-next while playing).
    #[error("{0}")]
    Refused(String),
    /// Playback failed part-way (the bag became unreadable).
    #[error("playback failed")]
    Playback(#[source] StorageError),
    /// The thread that reads ahead of playback is gone.
    #[error("playback failed: the {0} thread stopped")]
    ThreadStopped(&'static str),
    /// A playback thread could not be started.
    #[error("cannot start the player thread")]
    Spawn(#[source] std::io::Error),
    /// The bag could not be read.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The graph could not be reached.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The clock refused a setting.
    #[error(transparent)]
    Clock(#[from] ClockError),
}
