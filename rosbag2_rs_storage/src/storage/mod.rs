//! Storage plugins behind one pair of traits ([`plugin`]), and the top of them: detecting a
//! file's storage, opening a reader or creating a writer for it.

use std::path::{Path, PathBuf};

use crate::error::{Result, StorageError};

pub mod blockfile;
pub(crate) mod config_file;
mod extras;
pub mod mapped_file;
pub mod mcap_extras;
pub mod mcap_reader;
pub mod mcap_records;
pub mod mcap_writer;
pub mod plugin;
pub mod sqlite_reader;
pub mod sqlite_writer;

pub use crate::formats::{CompressionFormat, StorageId, StoragePreset};
pub use config_file::{McapRecords, NoCrc, StorageConfig};
pub use plugin::{OpenMode, StorageReader, StorageWriter, UnreadableTopic, WriterOptions};

impl StorageId {
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
        return Err(plugin::needs_mcap(&path, &record.name));
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
            let compression = options.compression.unwrap_or(CompressionFormat::None);
            compression.check_chunks_of(StorageId::Rosbag1)?;
            Box::new(crate::rosbag1::Ros1Writer::create(
                path,
                compression,
                options.chunk_size as usize,
            )?)
        }
    })
}
