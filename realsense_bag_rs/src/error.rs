//! Errors of the RealSense reader: each names the file and, where it applies, the topic.

use std::path::PathBuf;

/// What went wrong reading a RealSense recording.
#[derive(Debug, thiserror::Error)]
pub enum RealSenseError {
    /// The bag itself could not be read.
    #[error(transparent)]
    Storage(#[from] rosbag2_rs_storage::StorageError),
    /// A message that is not what the RealSense layout says it is.
    #[error("{path}: topic '{topic}': {reason}")]
    Invalid {
        /// The recording.
        path: PathBuf,
        /// The topic.
        topic: String,
        /// What is wrong.
        reason: String,
    },
    /// A playback control was refused (an invalid speed, say).
    #[error("playback: {0}")]
    Playback(String),
    /// Something every recording has is missing.
    #[error("{path}: not a RealSense recording: {what}")]
    Missing {
        /// The recording.
        path: PathBuf,
        /// What is missing.
        what: String,
    },
}
