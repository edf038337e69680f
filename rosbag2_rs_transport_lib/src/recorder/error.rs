//! Typed errors of the recorder.

use std::sync::Arc;

use rosbag2_rs_storage::StorageError;

use rosbag2_rs_middleware::error::TransportError;

/// Result alias of the recorder.
pub type Result<T, E = RecorderError> = std::result::Result<T, E>;

/// What went wrong recording.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    /// Options that cannot work together (no topic selection, bad limits, ...).
    #[error("invalid record options: {0}")]
    InvalidOptions(String),
    /// Writing the bag failed (existing directory, unwritable directory, full disk, ...).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The middleware failed (subscription, service, ...).
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// An operation that the recorder's mode does not offer (e.g. a snapshot when not in
    /// snapshot mode).
    #[error("{0}")]
    NotAvailable(String),
    /// A thread of the recorder could not be started.
    #[error("cannot start the {what} thread")]
    Spawn {
        /// Which thread.
        what: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The bag writer stopped after an earlier error (reported once, with its cause).
    #[error("the bag writer has failed")]
    WriterFailed(#[source] Arc<RecorderError>),
    /// A snapshot cannot be written where it would go (missing or unwritable directory, not
    /// enough free space); the buffers are kept.
    #[error("cannot write a snapshot: {0}")]
    SnapshotOutput(String),
    /// A request's argument beyond what the recorder accepts (service requests come from any
    /// peer); names the request field.
    #[error("{field} {value} is out of range: {allowed}")]
    OutOfRange {
        /// The request field, as the service type names it.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        allowed: String,
    },
    /// A writer thread is gone (it panicked, or the recorder is stopping).
    #[error("the {0} has stopped")]
    WriterStopped(&'static str),
}
