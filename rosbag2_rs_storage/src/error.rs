//! Typed errors of the storage layer. Every error names the file it concerns.

use std::path::PathBuf;

/// Result alias used throughout the storage layer.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// What went wrong while reading or writing a bag.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// An operating-system error on a file or directory.
    /// The cause is part of the message (and deliberately not a `source()`, which would make
    /// error chains print it twice).
    #[error("{path}: {error}")]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// A file whose content is not what its format requires (truncated, corrupted, foreign).
    #[error("{path}: {reason}")]
    Corrupt {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A storage configuration file (`--storage-config-file`) that cannot be used.
    #[error("{}: storage configuration: {reason}", path.display())]
    Config {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `metadata.yaml` could not be parsed or lacks required fields.
    #[error("{path}: invalid metadata: {reason}")]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A topic's offered QoS profiles in `metadata.yaml` do not parse.
    #[error("{path}: invalid metadata: topic '{topic}': {source}")]
    MetadataQos {
        /// The metadata file.
        path: PathBuf,
        /// The topic.
        topic: String,
        /// What is wrong with its profiles.
        #[source]
        source: crate::qos::QosError,
    },
    /// An SQLite error while accessing a `.db3` file.
    #[error("{path}: sqlite: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
    /// An error reported by the MCAP library.
    #[error("{path}: mcap: {source}")]
    Mcap {
        /// The MCAP file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: mcap::McapError,
    },
    /// An MCAP file whose records are malformed (truncated, corrupted).
    #[error("{path}: {source}")]
    McapFormat {
        /// The MCAP file.
        path: PathBuf,
        /// What is malformed, and where.
        #[source]
        source: crate::storage::mcap_records::McapFormatError,
    },
    /// A ROS 1 bag whose records, chunks or index are malformed (truncated, corrupted).
    #[error("{path}: {source}")]
    Ros1Format {
        /// The bag.
        path: PathBuf,
        /// What is malformed, and where.
        #[source]
        source: crate::rosbag1::Ros1FormatError,
    },
    /// A compressed storage file (file-mode compression) could not be decompressed.
    #[error("{path}: {format} decompression failed: {source}")]
    Decompress {
        /// The compressed file.
        path: PathBuf,
        /// Its compression format.
        format: crate::formats::CompressionFormat,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// A file-mode compressed storage file larger, decompressed, than it may take in the
    /// temporary directory ([`crate::limits::FILE_MODE_BYTES`], the free space there).
    #[error("{path}: {source}")]
    FileModeTooLarge {
        /// The compressed file.
        path: PathBuf,
        /// What it claims or decompressed to, and the bounds.
        #[source]
        source: crate::limits::FileModeTooLarge,
    },
    /// A message of a message-mode compressed bag could not be decompressed.
    #[error("{path}: message on '{topic}' at {recv_timestamp} ns: {format} decompression failed: {source}")]
    DecompressMessage {
        /// The storage file holding the message.
        path: PathBuf,
        /// The message's topic.
        topic: String,
        /// The message's receive time, ns.
        recv_timestamp: i64,
        /// The bag's compression format.
        format: crate::formats::CompressionFormat,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// A storage file or a message could not be compressed while writing.
    #[error("{path}: {format} compression failed: {source}")]
    Compress {
        /// The file being compressed or written.
        path: PathBuf,
        /// The compression format.
        format: crate::formats::CompressionFormat,
        /// The encoder's error.
        #[source]
        source: std::io::Error,
    },
    /// A storage, preset, compression mode or format that is not one, or not one this place
    /// takes.
    #[error(transparent)]
    UnknownName(#[from] crate::formats::UnknownName),
    /// The caller asked for something the bag or the options do not allow.
    #[error("{0}")]
    InvalidArgument(String),
    /// The output location already exists; bags are never overwritten.
    #[error("{0}: already exists, refusing to overwrite")]
    AlreadyExists(PathBuf),
    /// The disk holding the bag is nearly full: the writer closed the bag cleanly (everything
    /// written so far is readable) and writes no more.
    #[error("{}: {free} bytes free, below the minimum of {min}: the bag is closed, nothing more is written", path.display())]
    LowDiskSpace {
        /// The bag directory.
        path: PathBuf,
        /// Bytes available.
        free: u64,
        /// The minimum asked for.
        min: u64,
    },
}

impl StorageError {
    /// Builds an [`StorageError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            error,
        }
    }

    /// Builds a [`StorageError::Corrupt`] for `path`.
    pub fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Self::Corrupt {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
