//! Storage plugins behind one pair of traits, and detection of a file's storage.

use std::path::{Path, PathBuf};

use crate::error::{Result, StorageError};
use crate::filter::TopicFilter;
use crate::message::{SerializedMessage, TopicMetadata};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use rosbag2_rs_codec::MessageDefinition;

pub mod blockfile;
mod config_file;
pub mod mapped_file;
pub mod mcap_extras;
pub mod mcap_reader;
pub mod mcap_records;
pub mod mcap_writer;
pub mod sqlite_reader;
pub mod sqlite_writer;

pub use config_file::{McapRecords, NoCrc, StorageConfig};

/// The storage formats this crate reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StorageId {
    /// MCAP (`.mcap`), the default.
    Mcap,
    /// SQLite3 (`.db3`).
    Sqlite3,
    /// ROS 1 bag format v2.0 (`.bag`), converted to and from CDR on the fly.
    Rosbag1,
}

impl StorageId {
    /// The identifier used in `metadata.yaml` and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcap => "mcap",
            Self::Sqlite3 => "sqlite3",
            Self::Rosbag1 => "rosbag_v2",
        }
    }

    /// The name used in messages: `MCAP`, `SQLite3`, `ROS 1`.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::Mcap => "MCAP",
            Self::Sqlite3 => "SQLite3",
            Self::Rosbag1 => "ROS 1",
        }
    }

    /// File extension including the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Mcap => ".mcap",
            Self::Sqlite3 => ".db3",
            Self::Rosbag1 => ".bag",
        }
    }

    /// Parses `mcap`, `sqlite3` or `rosbag_v2`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "mcap" => Ok(Self::Mcap),
            "sqlite3" => Ok(Self::Sqlite3),
            "rosbag_v2" => Ok(Self::Rosbag1),
            other => Err(StorageError::InvalidArgument(format!(
                "unknown storage '{other}' (expected 'mcap', 'sqlite3' or 'rosbag_v2')"
            ))),
        }
    }

    /// Detects the storage of a file from its first bytes, falling back to its extension; a
    /// file-mode compressed file (`.mcap.zstd`, `.db3.zstd`) is detected from its content.
    pub fn detect(path: &Path) -> Result<Self> {
        use std::io::Read;
        let mut head = [0u8; 16];
        let n = std::fs::File::open(path)
            .and_then(|mut f| f.read(&mut head))
            .map_err(|e| StorageError::io(path, e))?;
        if head[..n].starts_with(mcap::MAGIC) {
            return Ok(Self::Mcap);
        }
        if head[..n].starts_with(b"SQLite format 3\0") {
            return Ok(Self::Sqlite3);
        }
        if crate::rosbag1::is_rosbag1(&head[..n]) {
            return Ok(Self::Rosbag1);
        }
        if crate::compression::zstd::is_zstd(&head[..n]) {
            return crate::compression::file_mode::detect_inner_storage(path);
        }
        match path.extension().and_then(|e| e.to_str()) {
            Some("mcap") => Ok(Self::Mcap),
            Some("db3") => Ok(Self::Sqlite3),
            _ => Err(StorageError::corrupt(
                path,
                "neither an MCAP, an SQLite3 nor a ROS 1 bag file",
            )),
        }
    }
}

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
    fn add_attachment(&mut self, attachment: &mcap_extras::Attachment) -> Result<()> {
        Err(needs_mcap(self.path(), &attachment.name))
    }
    /// Adds a metadata record to the file (MCAP only: other storage refuses it).
    fn add_metadata(&mut self, record: &mcap_extras::MetadataRecord) -> Result<()> {
        Err(needs_mcap(self.path(), &record.name))
    }
}

/// The error for an attachment or metadata record given to a storage other than MCAP.
fn needs_mcap(path: &Path, what: &str) -> StorageError {
    StorageError::InvalidArgument(format!(
        "{}: '{what}': attachments and metadata records need MCAP storage (-s mcap)",
        path.display()
    ))
}

/// A rosbag2 storage preset (`--storage-preset-profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StoragePreset {
    /// The plugin's defaults (MCAP: uncompressed chunks; SQLite3: in-memory journal, no syncs).
    #[default]
    None,
    /// MCAP: no chunks, no summary CRC (nothing can be compressed).
    Fastwrite,
    /// MCAP: zstd level 1 chunks without chunk CRCs.
    ZstdFast,
    /// MCAP: zstd level 19 chunks of 4 MiB.
    ZstdSmall,
    /// SQLite3: write-ahead log and normal syncs.
    Resilient,
}

impl StoragePreset {
    /// Every preset with its spelling.
    const ALL: [(Self, &'static str); 5] = [
        (Self::None, "none"),
        (Self::Fastwrite, "fastwrite"),
        (Self::ZstdFast, "zstd_fast"),
        (Self::ZstdSmall, "zstd_small"),
        (Self::Resilient, "resilient"),
    ];

    /// The presets `storage` accepts.
    pub fn valid_for(storage: StorageId) -> &'static [Self] {
        match storage {
            StorageId::Mcap => &[Self::None, Self::Fastwrite, Self::ZstdFast, Self::ZstdSmall],
            StorageId::Sqlite3 => &[Self::None, Self::Resilient],
            StorageId::Rosbag1 => &[Self::None],
        }
    }

    /// The name on the command line and in rosbag2's configuration.
    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(p, _)| *p == self)
            .map_or("none", |(_, name)| name)
    }

    /// Parses any preset name (`""` is `none`).
    pub fn parse(text: &str) -> Result<Self> {
        match Self::ALL.iter().find(|(_, name)| *name == text) {
            Some((preset, _)) => Ok(*preset),
            None if text.is_empty() => Ok(Self::None),
            None => Err(StorageError::InvalidArgument(format!(
                "unknown storage preset '{text}' (valid: {})",
                names(Self::ALL.iter().map(|(_, n)| *n))
            ))),
        }
    }

    /// Parses a preset of `storage`; the error lists the presets `storage` accepts.
    pub fn parse_for(storage: StorageId, text: &str) -> Result<Self> {
        let preset = Self::parse(text).ok();
        preset
            .filter(|p| Self::valid_for(storage).contains(p))
            .ok_or_else(|| Self::unknown_for(storage, text))
    }

    fn unknown_for(storage: StorageId, text: &str) -> StorageError {
        StorageError::InvalidArgument(format!(
            "unknown {} storage preset '{text}' (valid: {})",
            storage.display_name(),
            names(Self::valid_for(storage).iter().map(|p| p.as_str()))
        ))
    }

    /// Checks that `storage` accepts this preset.
    pub fn check_for(self, storage: StorageId) -> Result<()> {
        match Self::valid_for(storage).contains(&self) {
            true => Ok(()),
            false => Err(Self::unknown_for(storage, self.as_str())),
        }
    }
}

/// Chunk compression of a storage file (`--compression-format` for MCAP chunks and ROS 1 chunks;
/// not rosbag2's file or message compression, see [`crate::compression`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ChunkCompression {
    /// Uncompressed chunks.
    #[default]
    None,
    /// LZ4 (MCAP, ROS 1).
    Lz4,
    /// Zstandard (MCAP).
    Zstd,
    /// bzip2 (ROS 1).
    Bz2,
}

impl ChunkCompression {
    /// Every compression with its spelling.
    const ALL: [(Self, &'static str); 4] = [
        (Self::None, "none"),
        (Self::Lz4, "lz4"),
        (Self::Zstd, "zstd"),
        (Self::Bz2, "bz2"),
    ];

    /// The chunk compressions `storage` accepts (SQLite3 has no chunks and ignores them all).
    pub fn valid_for(storage: StorageId) -> &'static [Self] {
        match storage {
            StorageId::Mcap => &[Self::None, Self::Lz4, Self::Zstd],
            StorageId::Sqlite3 => &[Self::None, Self::Lz4, Self::Zstd, Self::Bz2],
            StorageId::Rosbag1 => &[Self::None, Self::Bz2, Self::Lz4],
        }
    }

    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(c, _)| *c == self)
            .map_or("none", |(_, name)| name)
    }

    /// Parses any chunk compression name (`""` is `none`).
    pub fn parse(text: &str) -> Result<Self> {
        match Self::ALL.iter().find(|(_, name)| *name == text) {
            Some((c, _)) => Ok(*c),
            None if text.is_empty() => Ok(Self::None),
            None => Err(StorageError::InvalidArgument(format!(
                "unknown chunk compression '{text}' (valid: {})",
                names(Self::ALL.iter().map(|(_, n)| *n))
            ))),
        }
    }

    /// Parses a chunk compression of `storage`; the error lists the ones `storage` writes.
    pub fn parse_for(storage: StorageId, text: &str) -> Result<Self> {
        let compression = Self::parse(text).ok();
        compression
            .filter(|c| Self::valid_for(storage).contains(c))
            .ok_or_else(|| Self::unknown_for(storage, text))
    }

    fn unknown_for(storage: StorageId, text: &str) -> StorageError {
        let valid = Self::valid_for(storage).iter().map(|c| c.as_str());
        StorageError::InvalidArgument(match storage {
            StorageId::Rosbag1 => {
                format!("unknown chunk compression '{text}' (expected none, bz2 or lz4)")
            }
            _ => format!(
                "unknown {} compression '{text}' (valid: {})",
                storage.display_name(),
                names(valid)
            ),
        })
    }

    /// Checks that `storage` writes this chunk compression.
    pub fn check_for(self, storage: StorageId) -> Result<()> {
        match Self::valid_for(storage).contains(&self) {
            true => Ok(()),
            false => Err(Self::unknown_for(storage, self.as_str())),
        }
    }
}

fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

/// Writer options shared by the storage plugins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Storage format.
    pub storage: StorageId,
    /// rosbag2 storage preset (see [`StoragePreset::valid_for`]).
    pub preset: StoragePreset,
    /// Chunk compression (MCAP: overrides the preset's; ROS 1); `None`: the preset's.
    pub compression: Option<ChunkCompression>,
    /// Chunk size in bytes (MCAP and ROS 1).
    pub chunk_size: u64,
    /// A storage configuration file's settings, over the preset's (`--storage-config-file`).
    pub config: StorageConfig,
    /// Metadata records written at the start of every file (MCAP only; `--metadata`).
    pub metadata: Vec<mcap_extras::MetadataRecord>,
}

impl WriterOptions {
    /// Options from command-line spellings (`--storage`, `--storage-preset-profile`,
    /// `--compression-format`), the chunk size left at its default; an unknown or unsuitable
    /// value is an error listing the valid ones.
    pub fn parse(storage: &str, preset: &str, compression: Option<&str>) -> Result<Self> {
        let storage = StorageId::parse(storage)?;
        Ok(Self {
            storage,
            preset: StoragePreset::parse_for(storage, preset)?,
            compression: compression
                .map(|c| ChunkCompression::parse_for(storage, c))
                .transpose()?,
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

/// Opens a storage file for reading, detecting its format; a file-mode compressed file is
/// decompressed (see [`crate::compression::file_mode`]).
pub fn open_reader(path: &Path, mode: OpenMode) -> Result<Box<dyn StorageReader>> {
    open_reader_with(path, mode, &StorageConfig::default())
}

/// [`open_reader`] with what a storage configuration file sets for reading: SQLite3's
/// `read: pragmas`, run on each database as it is opened (MCAP has no reader options).
pub fn open_reader_with(
    path: &Path,
    mode: OpenMode,
    config: &StorageConfig,
) -> Result<Box<dyn StorageReader>> {
    if crate::compression::file_mode::is_compressed_file(path)? {
        return crate::compression::file_mode::open_compressed(path, mode);
    }
    Ok(match StorageId::detect(path)? {
        StorageId::Mcap => Box::new(mcap_reader::McapReader::open(path, mode)?),
        StorageId::Sqlite3 => Box::new(sqlite_reader::SqliteReader::open_with_pragmas(
            path,
            &config.read_pragmas,
        )?),
        StorageId::Rosbag1 => Box::new(crate::rosbag1::Ros1Reader::open(path, mode)?),
    })
}

/// Creates a new storage file for writing; `path` must not exist.
pub fn create_writer(path: PathBuf, options: &WriterOptions) -> Result<Box<dyn StorageWriter>> {
    if path.exists() {
        return Err(StorageError::AlreadyExists(path));
    }
    if let (Some(record), false) = (options.metadata.first(), options.storage == StorageId::Mcap) {
        return Err(needs_mcap(&path, &record.name));
    }
    Ok(match options.storage {
        StorageId::Mcap => Box::new(mcap_writer::McapWriter::create(path, options)?),
        StorageId::Sqlite3 => Box::new(sqlite_writer::SqliteWriter::create(
            path,
            options.preset,
            &options.config.write_pragmas,
        )?),
        StorageId::Rosbag1 => {
            options.preset.check_for(StorageId::Rosbag1)?;
            let compression = match options.compression.unwrap_or_default() {
                ChunkCompression::None => crate::rosbag1::Compression::None,
                ChunkCompression::Bz2 => crate::rosbag1::Compression::Bz2,
                ChunkCompression::Lz4 => crate::rosbag1::Compression::Lz4,
                other => return Err(other.check_for(StorageId::Rosbag1).unwrap_err()),
            };
            Box::new(crate::rosbag1::Ros1Writer::create(
                path,
                compression,
                options.chunk_size as usize,
            )?)
        }
    })
}
