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
    /// A message that does not decode (or encode) as its type says.
    #[error("{path}: topic '{topic}': {source}")]
    Codec {
        /// The recording.
        path: PathBuf,
        /// The topic.
        topic: String,
        /// What the codec found.
        #[source]
        source: Box<rosbag2_rs_codec::msg::CodecError>,
    },
    /// An image of the rosbag2 layout (a PNG) that does not decode.
    #[error("{path}: topic '{topic}': {source}")]
    Image {
        /// The recording.
        path: PathBuf,
        /// The topic.
        topic: String,
        /// What is wrong with the image.
        #[source]
        source: ImageError,
    },
    /// A playback control was refused (an invalid speed, say).
    #[error("playback: {0}")]
    Playback(#[source] rosbag2_rs_clock::ClockError),
    /// What the output's layout cannot hold (a pose stream in the SDK's `.db3` layout).
    #[error("{path}: {what}")]
    Unsupported {
        /// The file being written.
        path: PathBuf,
        /// What it cannot hold, and what to do instead.
        what: String,
    },
    /// Something every recording has is missing.
    #[error("{path}: not a RealSense recording: {what}")]
    Missing {
        /// The recording.
        path: PathBuf,
        /// What is missing.
        what: String,
    },
}

/// Why a compressed image of the rosbag2 layout does not decode.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// A `compressedDepth` image shorter than its 12-byte header.
    #[error("compressedDepth image shorter than its header")]
    Truncated,
    /// The PNG itself.
    #[error(transparent)]
    Png(#[from] rosbag2_rs_codec::image::PngError),
    /// The zstd frame of a format PNG has no layout for (`YUYV; zstd; 64x48 step=128`).
    #[error("zstd image: {0}")]
    Zstd(#[source] std::io::Error),
    /// A zstd image whose format text gives no size (`<w>x<h> step=<s>`).
    #[error("zstd image without its size in '{0}'")]
    ZstdSize(String),
}
