//! The names a bag's formats go by — storage, storage preset, compression mode and format —
//! each parsed once from its command-line or `metadata.yaml` spelling into the one type that
//! every layer below takes. The bottom of the crate: nothing here depends on another module.

use std::fmt;
use std::str::FromStr;

/// A name that is not one of its kind's, or not one the place it is used accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{text}' (valid: {valid})")]
pub struct UnknownName {
    /// The kind of name: `storage`, `MCAP storage preset`, `compression format`, ...
    pub what: String,
    /// The name given.
    pub text: String,
    /// The names accepted there, comma-separated.
    pub valid: String,
}

impl UnknownName {
    fn new<'a>(what: impl Into<String>, text: &str, valid: impl Iterator<Item = &'a str>) -> Self {
        Self {
            what: what.into(),
            text: text.to_string(),
            valid: valid.collect::<Vec<_>>().join(", "),
        }
    }
}

/// Implements `as_str`, `parse` (by the spellings of `ALL`; `""` is the first one when
/// `empty_is_first`, as rosbag2 reads an empty preset, mode or chunk compression), `FromStr` and
/// `Display` for a name enum.
macro_rules! spelled {
    ($type:ty, $what:literal, empty_is_first: $empty:literal) => {
        impl $type {
            /// The spelling on the command line and in rosbag2's files.
            pub fn as_str(self) -> &'static str {
                Self::ALL
                    .iter()
                    .find(|(value, _)| *value == self)
                    .map_or("", |(_, name)| name)
            }

            #[doc = concat!("Parses a ", $what, " by its spelling.")]
            pub fn parse(text: &str) -> Result<Self, UnknownName> {
                match Self::ALL.iter().find(|(_, name)| *name == text) {
                    Some((value, _)) => Ok(*value),
                    None if $empty && text.is_empty() => Ok(Self::ALL[0].0),
                    None => Err(UnknownName::new(
                        $what,
                        text,
                        Self::ALL.iter().map(|(_, n)| *n),
                    )),
                }
            }

            /// Checks that this is one of `valid`, named `what` in the error.
            pub fn check_in(self, valid: &[Self], what: &str) -> Result<Self, UnknownName> {
                match valid.contains(&self) {
                    true => Ok(self),
                    false => Err(UnknownName::new(
                        what,
                        self.as_str(),
                        valid.iter().map(|v| v.as_str()),
                    )),
                }
            }
        }

        impl FromStr for $type {
            type Err = UnknownName;
            fn from_str(text: &str) -> Result<Self, UnknownName> {
                Self::parse(text)
            }
        }

        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// The storage formats this crate reads and writes (detected from a file's bytes by
/// `StorageId::detect`, in the `storage` module, which opens the plugins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StorageId {
    /// MCAP (`.mcap`), the default.
    Mcap,
    /// SQLite3 (`.db3`).
    Sqlite3,
    /// ROS 1 bag format v2.0 (`.bag`), converted to and from CDR on the fly.
    Rosbag1,
}

spelled!(StorageId, "storage", empty_is_first: false);

impl StorageId {
    /// Every storage with its identifier in `metadata.yaml` and on the command line.
    const ALL: [(Self, &'static str); 3] = [
        (Self::Mcap, "mcap"),
        (Self::Sqlite3, "sqlite3"),
        (Self::Rosbag1, "rosbag_v2"),
    ];

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

spelled!(StoragePreset, "storage preset", empty_is_first: true);

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

    /// Parses a preset of `storage`; the error lists the presets `storage` accepts.
    pub fn parse_for(storage: StorageId, text: &str) -> Result<Self, UnknownName> {
        match Self::parse(text) {
            Ok(preset) => preset.check_for(storage),
            Err(_) => Err(UnknownName::new(
                Self::what_for(storage),
                text,
                Self::valid_for(storage).iter().map(|p| p.as_str()),
            )),
        }
    }

    /// Checks that `storage` accepts this preset.
    pub fn check_for(self, storage: StorageId) -> Result<Self, UnknownName> {
        self.check_in(Self::valid_for(storage), &Self::what_for(storage))
    }

    fn what_for(storage: StorageId) -> String {
        format!("{} storage preset", storage.display_name())
    }
}

/// How a bag is compressed by rosbag2's compressor (`--compression-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompressionMode {
    /// Not compressed.
    #[default]
    None,
    /// Whole storage files compressed once closed.
    File,
    /// Every message's data compressed on its own.
    Message,
}

spelled!(CompressionMode, "compression mode", empty_is_first: true);

impl CompressionMode {
    /// Every mode with its command-line spelling.
    const ALL: [(Self, &'static str); 3] = [
        (Self::None, "none"),
        (Self::File, "file"),
        (Self::Message, "message"),
    ];

    /// Parses `none`, `file` or `message` in any case (an empty string is `none`), as
    /// rosbag2's command line and `metadata.yaml` spell them.
    pub fn parse_any_case(text: &str) -> Result<Self, UnknownName> {
        Self::parse(&text.to_ascii_lowercase()).map_err(|e| UnknownName {
            text: text.into(),
            ..e
        })
    }

    /// The value of `compression_mode` in `metadata.yaml` (`NONE`, `FILE`, `MESSAGE`).
    pub fn as_metadata_str(self) -> &'static str {
        match self {
            Self::None => "NONE",
            Self::File => "FILE",
            Self::Message => "MESSAGE",
        }
    }
}

/// A compression format, as `--compression-format` names it: rosbag2's compressor in file or
/// message mode (`zstd`, [`CompressionFormat::check_compressor`]), otherwise the chunk
/// compression of a storage file (MCAP none/lz4/zstd, ROS 1 none/bz2/lz4,
/// [`CompressionFormat::check_chunks_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompressionFormat {
    /// Stored as is.
    None,
    /// LZ4 frames (MCAP and ROS 1 chunks).
    Lz4,
    /// Zstandard (rosbag2's compressor; MCAP chunks).
    Zstd,
    /// bzip2 (ROS 1 chunks).
    Bz2,
}

spelled!(CompressionFormat, "compression format", empty_is_first: true);

impl CompressionFormat {
    /// Every format with its spelling.
    const ALL: [(Self, &'static str); 4] = [
        (Self::None, "none"),
        (Self::Lz4, "lz4"),
        (Self::Zstd, "zstd"),
        (Self::Bz2, "bz2"),
    ];

    /// The formats of rosbag2's compression plugins (file and message mode).
    pub const COMPRESSORS: &'static [Self] = &[Self::Zstd];

    /// The chunk compressions `storage` writes (SQLite3 has no chunks and ignores them all).
    pub fn chunks_of(storage: StorageId) -> &'static [Self] {
        match storage {
            StorageId::Mcap => &[Self::None, Self::Lz4, Self::Zstd],
            StorageId::Sqlite3 => &[Self::None, Self::Lz4, Self::Zstd, Self::Bz2],
            StorageId::Rosbag1 => &[Self::None, Self::Bz2, Self::Lz4],
        }
    }

    /// The extension of a file compressed whole in this format (file mode), without the dot.
    pub fn extension(self) -> &'static str {
        self.as_str()
    }

    /// Checks that this is a format of rosbag2's compressor (file and message mode).
    pub fn check_compressor(self) -> Result<Self, UnknownName> {
        Self::check_in(self, Self::COMPRESSORS, "compressor")
    }

    /// Checks that `storage` writes chunks in this format.
    pub fn check_chunks_of(self, storage: StorageId) -> Result<Self, UnknownName> {
        let what = format!("{} chunk compression", storage.display_name());
        Self::check_in(self, Self::chunks_of(storage), &what)
    }
}

/// A file-mode compressed file's name without its compression extension (`bag_0.mcap.zstd` →
/// `bag_0.mcap`); other names unchanged.
pub fn uncompressed_name(name: &str) -> &str {
    name.strip_suffix(".zstd").unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_to_what_they_spell_and_errors_list_the_valid_ones() {
        assert_eq!(StorageId::parse("rosbag_v2"), Ok(StorageId::Rosbag1));
        assert!(StorageId::parse("").is_err());
        assert_eq!(StorageId::Sqlite3.to_string(), "sqlite3");
        assert_eq!(StoragePreset::parse(""), Ok(StoragePreset::None));
        assert_eq!(
            CompressionMode::parse_any_case("FILE"),
            Ok(CompressionMode::File)
        );
        assert_eq!(CompressionMode::parse(""), Ok(CompressionMode::None));
        assert_eq!("bz2".parse(), Ok(CompressionFormat::Bz2));
        let e = CompressionMode::parse_any_case("Chunk")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "unknown compression mode 'Chunk' (valid: none, file, message)"
        );
        let e = CompressionFormat::parse("lzma").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown compression format 'lzma' (valid: none, lz4, zstd, bz2)"
        );
    }

    #[test]
    fn each_place_takes_its_own_formats() {
        let e = StoragePreset::parse_for(StorageId::Sqlite3, "zstd_fast").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown SQLite3 storage preset 'zstd_fast' (valid: none, resilient)"
        );
        assert!(CompressionFormat::Zstd.check_compressor().is_ok());
        let e = CompressionFormat::Lz4.check_compressor().unwrap_err();
        assert_eq!(e.to_string(), "unknown compressor 'lz4' (valid: zstd)");
        assert!(CompressionFormat::Bz2
            .check_chunks_of(StorageId::Mcap)
            .is_err());
        let e = CompressionFormat::Zstd
            .check_chunks_of(StorageId::Rosbag1)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown ROS 1 chunk compression 'zstd' (valid: none, bz2, lz4)"
        );
        assert_eq!(uncompressed_name("b_0.mcap.zstd"), "b_0.mcap");
    }
}
