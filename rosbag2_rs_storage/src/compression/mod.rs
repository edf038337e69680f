//! rosbag2's bag compression, read and written as `rosbag2_compression` does it.
//!
//! rosbag2 compresses a bag in one of two modes, recorded in `metadata.yaml` as
//! `compression_mode` (`FILE` or `MESSAGE`) and `compression_format` (`zstd`):
//!
//! * **file mode**: every storage file is compressed as a whole once it is closed (on a split
//!   and at close) into `<file>.zstd` (`bag_0.mcap.zstd`, `bag_0.db3.zstd`), the uncompressed file
//!   is removed and `relative_file_paths` names the compressed file (`files[].path` keeps the
//!   uncompressed name). See [`file_mode`].
//! * **message mode**: the storage files are ordinary `.mcap`/`.db3` files, but every message's
//!   data is one zstd frame. See [`message_mode`].
//!
//! [`zstd`] holds the codec itself.

use std::path::Path;

use crate::error::{Result, StorageError};
use crate::filter::TopicFilter;
use crate::formats::StorageId;
use crate::message::SerializedMessage;
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use crate::storage::plugin::{StorageReader, UnreadableTopic};

pub use crate::formats::{CompressionFormat, CompressionMode};
use rosbag2_rs_codec::MessageDefinition;

pub mod file_mode;
pub mod message_mode;
pub mod zstd;

/// What a compressed storage file's reader changes about the reader it wraps; everything
/// else is forwarded unchanged (see [`AdaptedReader`]).
pub trait ReaderAdapter: Send {
    /// The path the reader reports, given the inner reader's.
    fn path<'a>(&'a self, inner: &'a Path) -> &'a Path {
        inner
    }
    /// A message as read from the inner reader, turned into the one returned; `path` is the
    /// reported path.
    fn message(&self, path: &Path, message: SerializedMessage) -> Result<SerializedMessage> {
        let _ = path;
        Ok(message)
    }
    /// The inner reader's file statistics, turned into the ones returned.
    fn file_information(&self, inner: FileInformation) -> FileInformation {
        inner
    }
}

/// A storage reader around another that forwards every call to it, changed only where its
/// [`ReaderAdapter`] says.
pub struct AdaptedReader<A> {
    // Dropped first: the adapter may own what the inner reader reads (a temporary file).
    inner: Box<dyn StorageReader>,
    adapter: A,
}

impl<A: ReaderAdapter> AdaptedReader<A> {
    /// Wraps `inner`, changed by `adapter`.
    pub fn wrap(inner: Box<dyn StorageReader>, adapter: A) -> Self {
        Self { inner, adapter }
    }
}

impl<A: ReaderAdapter> StorageReader for AdaptedReader<A> {
    fn path(&self) -> &Path {
        self.adapter.path(self.inner.path())
    }
    fn storage_id(&self) -> StorageId {
        self.inner.storage_id()
    }
    fn topics(&self) -> &[TopicInformation] {
        self.inner.topics()
    }
    fn message_definitions(&self) -> &[MessageDefinition] {
        self.inner.message_definitions()
    }
    fn unreadable_topics(&self) -> &[UnreadableTopic] {
        self.inner.unreadable_topics()
    }
    fn set_filter(&mut self, filter: &TopicFilter) {
        self.inner.set_filter(filter)
    }
    fn seek(&mut self, time_ns: i64) -> Result<()> {
        self.inner.seek(time_ns)
    }
    fn read_next(&mut self) -> Result<Option<SerializedMessage>> {
        match self.inner.read_next()? {
            Some(message) => self.adapter.message(self.path(), message).map(Some),
            None => Ok(None),
        }
    }
    fn file_information(&self) -> FileInformation {
        self.adapter.file_information(self.inner.file_information())
    }
    fn embedded_metadata(&self) -> Option<BagMetadata> {
        self.inner.embedded_metadata()
    }
}

/// How a bag writer compresses (`--compression-mode`, `--compression-format`,
/// `--compression-queue-size`, `--compression-threads`, `--compression-threads-priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressionOptions {
    /// File, message or no compression.
    pub mode: CompressionMode,
    /// The compression format.
    pub format: CompressionFormat,
    /// Message mode: messages that may wait for a compression thread beyond one per thread;
    /// when that many wait, writing blocks until one is compressed (no message is dropped).
    /// Ignored in file mode.
    pub queue_size: usize,
    /// Compression threads; 0 is one per CPU. In message mode a single thread compresses on
    /// the writing thread itself (unless `threads_priority` is set); in file mode closed files
    /// are always compressed in the background, by this many threads.
    pub threads: usize,
    /// The nice value (-20 highest to 19 lowest) of the compression threads; `None` leaves them
    /// at the writer's. With a priority, message mode always compresses on its own threads, so
    /// that the writing thread keeps its priority.
    pub threads_priority: Option<i32>,
}

impl Default for CompressionOptions {
    fn default() -> Self {
        Self {
            mode: CompressionMode::None,
            format: CompressionFormat::Zstd,
            queue_size: 1,
            threads: 0,
            threads_priority: None,
        }
    }
}

impl CompressionOptions {
    /// The number of compression threads to use (`threads`, or one per CPU when 0).
    pub fn effective_threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// Gives the calling thread the nice value `priority` as rosbag2 does for its compression
/// threads; a refusal (raising the priority needs `CAP_SYS_NICE`) is logged, not fatal.
pub(crate) fn set_thread_priority(priority: i32) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid and setpriority take and return plain integers; on Linux
        // PRIO_PROCESS with a thread id sets that one thread's nice value.
        let done = unsafe {
            let tid = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, priority)
        };
        if done != 0 {
            log::warn!(
                "could not set the nice value of a compression thread to {priority}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    log::warn!("compression thread priorities are only set on Linux (asked: {priority})");
}

/// The compression of an existing bag, from its `metadata.yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BagCompression {
    /// File or message mode (never [`CompressionMode::None`]).
    pub mode: CompressionMode,
    /// The format.
    pub format: CompressionFormat,
}

impl BagCompression {
    /// Reads `compression_mode` and `compression_format` of `metadata` (read from
    /// `metadata_path`): `None` for an uncompressed bag, an error naming the file for a mode or
    /// format this crate does not know.
    pub fn from_metadata(metadata: &BagMetadata, metadata_path: &Path) -> Result<Option<Self>> {
        let err = |reason: String| StorageError::Metadata {
            path: metadata_path.to_path_buf(),
            reason,
        };
        let mode = CompressionMode::parse_any_case(&metadata.compression_mode)
            .map_err(|e| err(format!("{e} in compression_mode")))?;
        if mode == CompressionMode::None {
            return Ok(None);
        }
        let format = CompressionFormat::parse(&metadata.compression_format)
            .and_then(CompressionFormat::check_compressor)
            .map_err(|e| {
                err(format!(
                    "{e} in compression_format for compression_mode {}",
                    mode.as_metadata_str()
                ))
            })?;
        Ok(Some(Self { mode, format }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bag_compression_from_metadata() {
        let path = Path::new("/bag/metadata.yaml");
        let mut m = BagMetadata::default();
        assert_eq!(BagCompression::from_metadata(&m, path).unwrap(), None);
        m.compression_mode = "NONE".into();
        assert_eq!(BagCompression::from_metadata(&m, path).unwrap(), None);
        m.compression_mode = "FILE".into();
        m.compression_format = "zstd".into();
        assert_eq!(
            BagCompression::from_metadata(&m, path).unwrap(),
            Some(BagCompression {
                mode: CompressionMode::File,
                format: CompressionFormat::Zstd
            })
        );
        m.compression_format = "lz77".into();
        let e = BagCompression::from_metadata(&m, path)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/bag/metadata.yaml") && e.contains("'lz77'"),
            "{e}"
        );
    }
}
