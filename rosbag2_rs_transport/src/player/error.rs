//! Why a playback could not start or continue.

use rosbag2_rs_clock::ClockError;
use rosbag2_rs_storage::StorageError;

use crate::middleware::error::TransportError;

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
    #[error("playback failed: {0}")]
    Playback(String),
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
