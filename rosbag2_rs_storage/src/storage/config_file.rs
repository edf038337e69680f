//! Storage configuration files (`--storage-config-file`), as rosbag2's storage plugins read
//! them: for MCAP, writer options in the mcap library's names (`noChunking`, `chunkSize`,
//! `compression`, `compressionLevel`, ...); for SQLite3, `write: pragmas: [...]` run when a
//! database is created and `read: pragmas: [...]` run when one is opened for reading.
//!
//! ```yaml
//! # MCAP
//! chunkSize: 8388608
//! compression: Zstd
//! compressionLevel: Slowest
//! ```
//!
//! ```yaml
//! # SQLite3
//! write:
//!   pragmas: ["journal_mode = WAL", "synchronous = NORMAL"]
//! ```

use std::path::Path;

use yaml_rust2::Yaml;

use crate::error::{Result, StorageError};
use crate::formats::{CompressionFormat, StorageId};

/// What a storage configuration file sets, applied over the storage preset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageConfig {
    /// MCAP: write messages without chunks (`noChunking`).
    pub no_chunking: Option<bool>,
    /// MCAP: the chunk size in bytes (`chunkSize`).
    pub chunk_size: Option<u64>,
    /// MCAP: chunk compression (`compression`: `None`, `Lz4`, `Zstd`).
    pub compression: Option<CompressionFormat>,
    /// MCAP: the zstd level (`compressionLevel`), as the mcap C++ library that rosbag2 links
    /// maps its names: `Fastest` -5, `Fast` -3, `Default` 1, `Slow` 5, `Slowest` 19. (For lz4
    /// chunks the names change only the C++ library's acceleration; lz4 chunks here are
    /// compressed at lz4's default whatever the name.)
    pub compression_level: Option<i32>,
    /// MCAP: CRCs left out (`noChunkCRC`, `noAttachmentCRC`, `noSummaryCRC`, as
    /// rosbag2_storage_mcap spells them; `noCRC` all of them and the data section's).
    pub no_crc: NoCrc,
    /// MCAP: the data section's CRC (`enableDataCRC`). rosbag2 computes it only when asked; this
    /// writer computes it unless `enableDataCRC: false` (or `noCRC`) says otherwise.
    pub data_crc: Option<bool>,
    /// MCAP: the index and summary records written (`noMessageIndex`, `noSummary`, ...).
    pub records: McapRecords,
    /// SQLite3: `PRAGMA` statements (`name = value`) run when a database is created.
    pub write_pragmas: Vec<String>,
    /// SQLite3: `PRAGMA` statements run when a database is opened for reading.
    pub read_pragmas: Vec<String>,
}

/// The MCAP CRCs a storage configuration leaves out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoCrc {
    /// No chunk CRCs.
    pub chunk: bool,
    /// No attachment CRCs.
    pub attachment: bool,
    /// No summary section CRC.
    pub summary: bool,
    /// No data section CRC.
    pub data: bool,
}

/// The MCAP records besides messages that a storage configuration may leave out, as the mcap
/// library's `no...` options name them: all written unless a file says `noX: true`. A reader
/// (ours, rosbag2's, the mcap tools) then scans the file for what an index would have told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McapRecords {
    /// Message indexes after each chunk (`noMessageIndex`).
    pub message_index: bool,
    /// The summary section at all (`noSummary`): none of the records below.
    pub summary: bool,
    /// Schemas repeated in the summary (`noRepeatedSchemas`).
    pub repeated_schemas: bool,
    /// Channels repeated in the summary (`noRepeatedChannels`).
    pub repeated_channels: bool,
    /// Attachment indexes (`noAttachmentIndex`).
    pub attachment_index: bool,
    /// Metadata indexes (`noMetadataIndex`).
    pub metadata_index: bool,
    /// Chunk indexes (`noChunkIndex`).
    pub chunk_index: bool,
    /// The statistics record (`noStatistics`).
    pub statistics: bool,
    /// Summary offsets (`noSummaryOffsets`).
    pub summary_offsets: bool,
}

impl Default for McapRecords {
    fn default() -> Self {
        Self {
            message_index: true,
            summary: true,
            repeated_schemas: true,
            repeated_channels: true,
            attachment_index: true,
            metadata_index: true,
            chunk_index: true,
            statistics: true,
            summary_offsets: true,
        }
    }
}

impl McapRecords {
    /// The record a `no...` key of a storage configuration leaves out.
    fn named(&mut self, key: &str) -> Option<&mut bool> {
        Some(match key {
            "noMessageIndex" => &mut self.message_index,
            "noSummary" => &mut self.summary,
            "noRepeatedSchemas" => &mut self.repeated_schemas,
            "noRepeatedChannels" => &mut self.repeated_channels,
            "noAttachmentIndex" => &mut self.attachment_index,
            "noMetadataIndex" => &mut self.metadata_index,
            "noChunkIndex" => &mut self.chunk_index,
            "noStatistics" => &mut self.statistics,
            "noSummaryOffsets" => &mut self.summary_offsets,
            _ => return None,
        })
    }
}

impl StorageConfig {
    /// Reads `path` for `storage`. An unreadable file, a wrong value, an unknown key or a pragma
    /// with characters SQLite would take as more than one statement is an error naming the
    /// file.
    pub fn load(path: &Path, storage: StorageId) -> Result<Self> {
        let bad = |reason: String| StorageError::Config {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| StorageError::io(path, e))?;
        let docs = crate::limits::load_yaml(&text).map_err(|e| bad(format!("not YAML: {e}")))?;
        let doc = docs.into_iter().next().unwrap_or(Yaml::Null);
        let map = match &doc {
            Yaml::Hash(map) => map.clone(),
            Yaml::Null => Default::default(),
            _ => return Err(bad("expected a mapping".into())),
        };
        let mut config = Self::default();
        for (key, value) in &map {
            let key = key.as_str().unwrap_or_default();
            match (storage, key) {
                (StorageId::Mcap, "noChunking") => {
                    config.no_chunking = Some(value.as_bool().ok_or_else(|| bad(format!("{key}: expected true or false")))?)
                }
                (StorageId::Mcap, "noChunkCRC" | "noAttachmentCRC" | "noSummaryCRC" | "noCRC") => {
                    let off = value.as_bool().ok_or_else(|| bad(format!("{key}: expected true or false")))?;
                    let c = &mut config.no_crc;
                    match key {
                        "noChunkCRC" => c.chunk = off,
                        "noAttachmentCRC" => c.attachment = off,
                        "noSummaryCRC" => c.summary = off,
                        _ => *c = NoCrc { chunk: off, attachment: off, summary: off, data: off },
                    }
                }
                (StorageId::Mcap, "chunkSize") => {
                    let size = value.as_i64().filter(|s| *s > 0);
                    config.chunk_size =
                        Some(size.ok_or_else(|| bad(format!("{key}: expected a positive integer")))? as u64)
                }
                (StorageId::Mcap, "compression") => {
                    config.compression = Some(match value.as_str() {
                        Some("None") | Some("") => CompressionFormat::None,
                        Some("Lz4") => CompressionFormat::Lz4,
                        Some("Zstd") => CompressionFormat::Zstd,
                        _ => return Err(bad(format!("{key}: expected None, Lz4 or Zstd, got {value:?}"))),
                    })
                }
                (StorageId::Mcap, "compressionLevel") => {
                    config.compression_level = Some(match value.as_str() {
                        Some("Fastest") => -5,
                        Some("Fast") => -3,
                        Some("Default") => 1,
                        Some("Slow") => 5,
                        Some("Slowest") => 19,
                        _ => {
                            return Err(bad(format!(
                                "{key}: expected Fastest, Fast, Default, Slow or Slowest, got {value:?}"
                            )))
                        }
                    })
                }
                (StorageId::Mcap, "enableDataCRC") => {
                    config.data_crc = Some(value.as_bool().ok_or_else(|| bad(format!("{key}: expected true or false")))?)
                }
                (StorageId::Mcap, "forceCompression") => {
                    // The mcap C++ library stores a chunk uncompressed when compressing would
                    // make it larger, unless forced; this writer always compresses.
                    let forced = value.as_bool().ok_or_else(|| bad(format!("{key}: expected true or false")))?;
                    if !forced {
                        log::info!("{}: forceCompression: false: this MCAP writer compresses every chunk", path.display())
                    }
                }
                (StorageId::Mcap, key) if config.records.named(key).is_some() => {
                    let off = value.as_bool().ok_or_else(|| bad(format!("{key}: expected true or false")))?;
                    if let Some(record) = config.records.named(key) {
                        *record = !off;
                    }
                }
                (StorageId::Sqlite3, "write") => config.write_pragmas = pragmas(value, &bad)?,
                (StorageId::Sqlite3, "read") => config.read_pragmas = pragmas(value, &bad)?,
                _ => {
                    return Err(bad(format!(
                        "unknown setting '{key}' for the {} storage",
                        storage.as_str()
                    )))
                }
            }
        }
        Ok(config)
    }
}

/// The `pragmas` list of a `write:`/`read:` section, each checked to be one `name = value`.
fn pragmas(section: &Yaml, bad: &dyn Fn(String) -> StorageError) -> Result<Vec<String>> {
    let list = match &section["pragmas"] {
        Yaml::Array(items) => items,
        Yaml::BadValue | Yaml::Null => return Ok(Vec::new()),
        _ => return Err(bad("pragmas: expected a list of strings".into())),
    };
    list.iter()
        .map(|item| {
            let text = item
                .as_str()
                .ok_or_else(|| bad("pragmas: expected a list of strings".into()))?
                .trim();
            if text.is_empty() || text.contains([';', '\'', '"', '\n']) {
                return Err(bad(format!("pragma '{text}': expected one 'name = value'")));
            }
            Ok(format!("PRAGMA {text};"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, storage: StorageId) -> Result<StorageConfig> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.yaml");
        std::fs::write(&file, text).unwrap();
        StorageConfig::load(&file, storage)
    }

    #[test]
    fn mcap_writer_options_in_the_mcap_librarys_names() {
        let c = load(
            "chunkSize: 8388608\ncompression: Zstd\ncompressionLevel: Slowest\nnoChunkCRC: true\n",
            StorageId::Mcap,
        )
        .unwrap();
        assert_eq!(c.chunk_size, Some(8 << 20));
        assert_eq!(c.compression, Some(CompressionFormat::Zstd));
        assert_eq!(c.compression_level, Some(19));
        let levels: Vec<Option<i32>> = ["Fastest", "Fast", "Default", "Slow", "Slowest"]
            .iter()
            .map(|l| {
                load(&format!("compressionLevel: {l}\n"), StorageId::Mcap)
                    .unwrap()
                    .compression_level
            })
            .collect();
        // mcap C++ (rosbag2's mcap_vendor) ZStdCompressionLevel.
        assert_eq!(levels, [Some(-5), Some(-3), Some(1), Some(5), Some(19)]);
        let indexes = load(
            "noMessageIndex: true\nnoSummary: false\nnoChunkIndex: true\nenableDataCRC: true\n",
            StorageId::Mcap,
        )
        .unwrap();
        assert_eq!(
            indexes.records,
            McapRecords {
                message_index: false,
                chunk_index: false,
                ..McapRecords::default()
            }
        );
        assert_eq!(indexes.data_crc, Some(true));
        assert_eq!(
            c.no_crc,
            NoCrc {
                chunk: true,
                ..NoCrc::default()
            }
        );
        let c = load(
            "noAttachmentCRC: true\nnoSummaryCRC: true\n",
            StorageId::Mcap,
        )
        .unwrap();
        assert!(c.no_crc.attachment && c.no_crc.summary && !c.no_crc.chunk);
        let c = load("noCRC: true\n", StorageId::Mcap).unwrap();
        assert!(c.no_crc.chunk && c.no_crc.attachment && c.no_crc.summary && c.no_crc.data);
        assert_eq!(
            load("noChunking: true\n", StorageId::Mcap)
                .unwrap()
                .no_chunking,
            Some(true)
        );
        for bad in [
            "compression: Brotli\n",
            "chunkSize: -1\n",
            "noChunkCRC: maybe\n",
            "noSummary: 1\n",
            "colour: blue\n",
            "- a\n",
        ] {
            assert!(load(bad, StorageId::Mcap).is_err(), "{bad}");
        }
    }

    #[test]
    fn sqlite_pragmas_one_statement_each() {
        let c = load(
            "write:\n  pragmas: [\"journal_mode = WAL\", \"synchronous = NORMAL\"]\nread:\n  pragmas: []\n",
            StorageId::Sqlite3,
        )
        .unwrap();
        assert_eq!(
            c.write_pragmas,
            ["PRAGMA journal_mode = WAL;", "PRAGMA synchronous = NORMAL;"]
        );
        let err = load(
            "write:\n  pragmas: [\"a = 1; DROP TABLE messages\"]\n",
            StorageId::Sqlite3,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("config.yaml") && err.contains("one 'name = value'"),
            "{err}"
        );
    }
}
