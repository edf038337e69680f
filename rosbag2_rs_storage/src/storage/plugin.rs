//! What a storage plugin is: the reader and writer traits every format implements, and the
//! options a writer is created with. Below the plugins, which implement it, and the module that
//! opens them.

use std::path::Path;

use super::config_file::StorageConfig;
use super::extras::{Attachment, MetadataRecord};
use crate::error::{Result, StorageError};
use crate::filter::TopicFilter;
use crate::formats::{CompressionFormat, StorageId, StoragePreset};
use crate::message::{SerializedMessage, TopicMetadata};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use rosbag2_rs_codec::MessageDefinition;

/// How strictly a damaged file is treated when opened for reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenMode {
    /// A truncated or corrupted file is an error.
    #[default]
    Strict,
    /// Read every intact part of a damaged file and skip the rest with a warning (reindex).
    Recover,
}

/// A topic a reader leaves out because its messages cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableTopic {
    /// The topic.
    pub topic: String,
    /// Its type as stored.
    pub type_name: String,
    /// Why it cannot be read.
    pub reason: String,
}

/// Reads one storage file in receive-time order.
pub trait StorageReader: Send {
    /// The file being read.
    fn path(&self) -> &Path;
    /// Its storage format.
    fn storage_id(&self) -> StorageId;
    /// All topics in the file with their message counts.
    fn topics(&self) -> &[TopicInformation];
    /// The message definitions stored in the file.
    fn message_definitions(&self) -> &[MessageDefinition];
    /// Topics left out because their messages cannot be converted (ROS 1 types without a ROS 2
    /// equivalent); empty for rosbag2 storage.
    fn unreadable_topics(&self) -> &[UnreadableTopic] {
        &[]
    }
    /// Restricts subsequent reads to the topics `filter` selects.
    fn set_filter(&mut self, filter: &TopicFilter);
    /// Repositions so that the next message is the first with receive time `>= time_ns`, using
    /// the storage's index.
    fn seek(&mut self, time_ns: i64) -> Result<()>;
    /// The next message in receive-time order (ties in file order), or `None` at the end.
    fn read_next(&mut self) -> Result<Option<SerializedMessage>>;
    /// File statistics: first and last receive time and the message count.
    fn file_information(&self) -> FileInformation;
    /// The `metadata.yaml` a rosbag2 writer embedded in the file, if any.
    fn embedded_metadata(&self) -> Option<BagMetadata>;
}

/// Writes one storage file.
pub trait StorageWriter: Send {
    /// The file being written.
    fn path(&self) -> &Path;
    /// Registers a topic and its type's definition; must precede the topic's first message.
    fn create_topic(&mut self, topic: &TopicMetadata, definition: &MessageDefinition)
        -> Result<()>;
    /// Appends one message.
    fn write(&mut self, message: &SerializedMessage) -> Result<()>;
    /// Bytes written to the file so far (an estimate while buffers are pending).
    fn bytes_written(&self) -> u64;
    /// Makes everything written so far durable in the file's own terms (a finished chunk, a
    /// committed transaction), so a crash after this loses nothing before it.
    fn flush(&mut self) -> Result<()>;
    /// Stores the bag's metadata inside the file (MCAP metadata record, SQLite `metadata` table).
    fn update_metadata(&mut self, metadata: &BagMetadata) -> Result<()>;
    /// Finishes the file (summary, indexes) and closes it.
    fn finish(self: Box<Self>) -> Result<()>;
    /// Adds an attachment to the file (MCAP only: other storage refuses it).
    fn add_attachment(&mut self, attachment: &Attachment) -> Result<()> {
        Err(needs_mcap(self.path(), &attachment.name))
    }
    /// Adds a metadata record to the file (MCAP only: other storage refuses it).
    fn add_metadata(&mut self, record: &MetadataRecord) -> Result<()> {
        Err(needs_mcap(self.path(), &record.name))
    }
}

/// The error for an attachment or metadata record given to a storage other than MCAP.
pub(crate) fn needs_mcap(path: &Path, what: &str) -> StorageError {
    StorageError::InvalidArgument(format!(
        "{}: '{what}': attachments and metadata records need MCAP storage (-s mcap)",
        path.display()
    ))
}

/// Writer options shared by the storage plugins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Storage format.
    pub storage: StorageId,
    /// rosbag2 storage preset (see [`StoragePreset::valid_for`]).
    pub preset: StoragePreset,
    /// Chunk compression (MCAP: overrides the preset's; ROS 1); `None`: the preset's.
    pub compression: Option<CompressionFormat>,
    /// Chunk size in bytes (MCAP and ROS 1).
    pub chunk_size: u64,
    /// A storage configuration file's settings, over the preset's (`--storage-config-file`).
    pub config: StorageConfig,
    /// Metadata records written at the start of every file (MCAP only; `--metadata`).
    pub metadata: Vec<MetadataRecord>,
}

impl WriterOptions {
    /// Options for `storage` with `preset` and chunk `compression`, the chunk size left at its
    /// default; a preset or compression `storage` does not take is an error listing the ones
    /// it does.
    pub fn new(
        storage: StorageId,
        preset: StoragePreset,
        compression: Option<CompressionFormat>,
    ) -> Result<Self> {
        preset.check_for(storage)?;
        if let Some(compression) = compression {
            compression.check_chunks_of(storage)?;
        }
        Ok(Self {
            storage,
            preset,
            compression,
            ..Self::default()
        })
    }
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            storage: StorageId::Mcap,
            preset: StoragePreset::None,
            compression: None,
            chunk_size: 768 * 1024,
            config: StorageConfig::default(),
            metadata: Vec::new(),
        }
    }
}
