//! Flag groups that several verbs share, each one struct reused with `#[command(flatten)]`:
//! the input bags ([`InputArgs`]: `play`, `burst`, `convert`), the topic selection
//! ([`TopicArgs`]: `play`, `burst`, `record`, `convert`) and the output storage ([`WriterArgs`]:
//! `record`, `convert`); plus the conversions from command-line units they all need. The file
//! tools (`ros2bag-rs convert`) and the player and recorder nodes (`rosbag2_rs_transport`) both
//! build on them, so they live below both, free of any middleware.

use std::path::PathBuf;

use rosbag2_rs_clock::Duration;
use rosbag2_rs_storage::{
    Bag, BagWriterOptions, CompressionFormat, CompressionMode, CompressionOptions, StorageConfig,
    StorageError, StorageId, StoragePreset, TopicFilter, UnknownName, WriterOptions,
};

/// Why flags do not make options: each names the flag or the value at fault.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// A number of seconds that is not a finite number within ±292 years.
    #[error("{flag} takes a number of seconds, got {value}")]
    Seconds {
        /// The flag.
        flag: String,
        /// What it was given.
        value: f64,
    },
    /// A negative number of seconds where none may be.
    #[error("{flag} must be a non-negative number of seconds, got {value}")]
    NegativeSeconds {
        /// The flag.
        flag: String,
        /// What it was given.
        value: f64,
    },
    /// No input bag at all.
    #[error("no bag given: name one (or -i URI, or the storage.uri parameter)")]
    NoBag,
    /// `--metadata` without `=`, or with an empty key.
    #[error("--metadata expects KEY=VALUE, got '{0}'")]
    MetadataPair(String),
    /// `--metadata-name` empty or rosbag2's own.
    #[error("--metadata-name: '{0}' is not a name of your own ('rosbag2' is rosbag2's record)")]
    MetadataName(String),
    /// `--metadata` with a storage other than MCAP.
    #[error("--metadata writes an MCAP metadata record: it needs -s mcap")]
    MetadataNeedsMcap,
    /// A storage id, preset, compression, configuration file, regex or bag refused by storage.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl From<UnknownName> for FlagError {
    fn from(e: UnknownName) -> Self {
        Self::Storage(e.into())
    }
}

/// What flags give, or why not.
pub type Result<T, E = FlagError> = std::result::Result<T, E>;

/// Seconds from the command line as a [`Duration`], with the flag named in the error.
pub fn seconds(value: f64, flag: &str) -> Result<Duration> {
    Duration::from_secs_f64(value).map_err(|_| FlagError::Seconds {
        flag: flag.to_string(),
        value,
    })
}

/// [`seconds`] that must not be negative.
pub fn non_negative_seconds(value: f64, flag: &str) -> Result<Duration> {
    if value < 0.0 {
        return Err(FlagError::NegativeSeconds {
            flag: flag.to_string(),
            value,
        });
    }
    seconds(value, flag)
}

/// A topic name as given, made absolute (`chatter` is `/chatter`).
pub fn topic_name(name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/{name}")
    }
}

/// Input bags: positional, and `-i URI [STORAGE_ID]` as `ros2 bag` spells them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InputArgs {
    /// Bags (directories or .mcap/.db3/.bag files), merged in time order.
    pub bags: Vec<PathBuf>,
    /// A bag as `ros2 bag ... -i URI [STORAGE_ID]` takes it (several allowed).
    #[arg(short = 'i', long = "input", num_args = 1..=2, value_names = ["URI", "STORAGE_ID"])]
    pub inputs: Vec<String>,
}

impl InputArgs {
    /// `-i URI [STORAGE_ID] -i URI ...` as (uri, id) pairs: clap hands over the values of every
    /// `-i` in one list, and a storage id is recognised by name after its URI.
    fn grouped(&self) -> Vec<(&str, Option<StorageId>)> {
        let mut out: Vec<(&str, Option<StorageId>)> = Vec::new();
        for value in &self.inputs {
            match (out.last_mut(), StorageId::parse(value)) {
                (Some((_, id @ None)), Ok(storage)) => *id = Some(storage),
                _ => out.push((value, None)),
            }
        }
        out
    }

    /// The bags: the positional ones, then the `-i` inputs, each checked against its storage id
    /// (`-i URI ID`, or `storage` for all) when one is given. At least one is required.
    pub fn resolve(&self, storage: Option<StorageId>) -> Result<Vec<PathBuf>> {
        self.resolve_with(storage, &[])
    }

    /// [`InputArgs::resolve`] with more bags after those (`convert --input-options`), each
    /// with its storage id if it has one.
    pub fn resolve_with(
        &self,
        storage: Option<StorageId>,
        more: &[(PathBuf, Option<StorageId>)],
    ) -> Result<Vec<PathBuf>> {
        let mut bags: Vec<(PathBuf, Option<StorageId>)> =
            self.bags.iter().map(|b| (b.clone(), storage)).collect();
        for (uri, id) in self.grouped() {
            bags.push((PathBuf::from(uri), id.or(storage)));
        }
        bags.extend(more.iter().cloned());
        if bags.is_empty() {
            return Err(FlagError::NoBag);
        }
        for (bag, id) in &bags {
            if let Some(id) = id {
                Bag::locate(bag)?.check_storage(*id)?;
            }
        }
        Ok(bags.into_iter().map(|(b, _)| b).collect())
    }
}

/// Topic selection by name and regular expression.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TopicArgs {
    /// Only these topics.
    #[arg(long, num_args = 1..)]
    pub topics: Vec<String>,
    /// Topics matching this regular expression (`play`, `burst` and `convert`: the whole name,
    /// as rosbag2's player; `record`: anywhere in the name, as `ros2 bag record -e`).
    #[arg(short = 'e', long)]
    pub regex: Option<String>,
    /// Leave out topics matching this regular expression (matched as `--regex`; `--exclude` is
    /// its Humble/Iron spelling).
    #[arg(short = 'x', long, alias = "exclude")]
    pub exclude_regex: Option<String>,
    /// Leave out these topics.
    #[arg(long, num_args = 1..)]
    pub exclude_topics: Vec<String>,
}

impl TopicArgs {
    /// The selection as a filter on whole names.
    pub fn filter(&self) -> Result<TopicFilter> {
        Ok(TopicFilter::from_parts(
            self.topics.iter().map(|t| topic_name(t)).collect(),
            self.regex.as_deref(),
            self.exclude_topics.iter().map(|t| topic_name(t)).collect(),
            self.exclude_regex.as_deref(),
        )?)
    }
}

/// Where and how a bag is written.
#[derive(Debug, Clone, clap::Args)]
pub struct WriterArgs {
    /// Storage: mcap or sqlite3 (`convert` also: rosbag_v2, a ROS 1 bag in one .bag file;
    /// realsense, a RealSense recording, .bag or the SDK 2.58+ .db3 by the output name, from a
    /// recording or camera topics).
    #[arg(short = 's', long, default_value = "mcap")]
    pub storage: String,
    /// Storage preset: mcap none|fastwrite|zstd_fast|zstd_small; sqlite3 none|resilient.
    #[arg(long, default_value = "none")]
    pub storage_preset_profile: StoragePreset,
    /// With --compression-mode file or message, rosbag2's compressor (zstd); without it, chunk
    /// compression: MCAP none, lz4 or zstd; ROS 1 none, bz2 or lz4.
    #[arg(long)]
    pub compression_format: Option<CompressionFormat>,
    /// rosbag2's compression: file (each closed file compressed whole, `*.mcap.zstd`), message
    /// (each message's bytes), or none.
    #[arg(long, default_value = "none", value_parser = CompressionMode::parse_any_case)]
    pub compression_mode: CompressionMode,
    /// Message mode: messages that may wait for a compression thread (writing waits beyond
    /// that; nothing is dropped).
    #[arg(long, default_value_t = 1)]
    pub compression_queue_size: usize,
    /// Compression threads (0: one per CPU).
    #[arg(long, default_value_t = 0)]
    pub compression_threads: usize,
    /// Nice value of the compression threads, -20 (highest) to 19 (lowest); raising the
    /// priority needs CAP_SYS_NICE (refused with a warning). Default: the recorder's.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
    pub compression_threads_priority: Option<i32>,
    /// A storage configuration file, as rosbag2's plugins take it: MCAP writer options
    /// (`chunkSize`, `compression`, `compressionLevel`, `noChunking`), SQLite3 `write: pragmas`.
    #[arg(long, value_name = "FILE")]
    pub storage_config_file: Option<PathBuf>,
    /// Split files at this size in bytes (0: no limit).
    #[arg(short = 'b', long, default_value_t = 0)]
    pub max_bag_size: u64,
    /// Split files at this duration in seconds (0: no limit).
    #[arg(short = 'd', long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub max_bag_duration: f64,
    /// A KEY=VALUE pair of an MCAP metadata record written in every file (repeatable; MCAP
    /// only). The record is named by --metadata-name.
    #[arg(long = "metadata", value_name = "KEY=VALUE")]
    pub metadata: Vec<String>,
    /// The name of the metadata record --metadata writes.
    #[arg(long, default_value = rosbag2_rs_storage::storage::mcap_extras::USER_METADATA_NAME)]
    pub metadata_name: String,
}

impl WriterArgs {
    /// The metadata record of `--metadata KEY=VALUE ...`, if any pair is given.
    pub fn metadata_record(&self) -> Result<Option<rosbag2_rs_storage::MetadataRecord>> {
        if self.metadata.is_empty() {
            return Ok(None);
        }
        if self.metadata_name.is_empty() || self.metadata_name == "rosbag2" {
            return Err(FlagError::MetadataName(self.metadata_name.clone()));
        }
        let mut metadata = std::collections::BTreeMap::new();
        for pair in &self.metadata {
            let (key, value) = pair
                .split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| FlagError::MetadataPair(pair.clone()))?;
            metadata.insert(key.to_string(), value.to_string());
        }
        Ok(Some(rosbag2_rs_storage::MetadataRecord {
            name: self.metadata_name.clone(),
            metadata,
        }))
    }

    /// The writer options for a bag at `uri`.
    pub fn options(&self, uri: PathBuf) -> Result<BagWriterOptions> {
        let mode = self.compression_mode;
        let rosbag2_compression = mode != CompressionMode::None;
        let compression = CompressionOptions {
            mode,
            format: match self.compression_format {
                Some(format) if rosbag2_compression => format.check_compressor()?,
                _ => CompressionOptions::default().format,
            },
            queue_size: self.compression_queue_size,
            threads: self.compression_threads,
            threads_priority: self.compression_threads_priority,
        };
        let chunk_compression = self.compression_format.filter(|_| !rosbag2_compression);
        let mut storage = WriterOptions::new(
            StorageId::parse(&self.storage)?,
            self.storage_preset_profile,
            chunk_compression,
        )?;
        if let Some(file) = &self.storage_config_file {
            storage.config = StorageConfig::load(file, storage.storage)?;
        }
        if let Some(record) = self.metadata_record()? {
            if storage.storage != StorageId::Mcap {
                return Err(FlagError::MetadataNeedsMcap);
            }
            storage.metadata.push(record);
        }
        Ok(BagWriterOptions {
            uri,
            storage,
            compression,
            max_bagfile_size: self.max_bag_size,
            max_bagfile_duration: non_negative_seconds(
                self.max_bag_duration,
                "--max-bag-duration",
            )?
            .as_nanos(),
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        inputs: InputArgs,
        #[command(flatten)]
        topics: TopicArgs,
        #[command(flatten)]
        writer: WriterArgs,
    }

    #[test]
    fn metadata_pairs_make_one_mcap_record() {
        let cli = Cli::try_parse_from([
            "x",
            "--metadata",
            "robot=r2",
            "--metadata",
            "eq=a=b",
            "--metadata-name",
            "site",
        ])
        .unwrap();
        let options = cli.writer.options("bag".into()).unwrap();
        assert_eq!(
            options.storage.metadata,
            [rosbag2_rs_storage::MetadataRecord {
                name: "site".into(),
                metadata: [
                    ("robot".to_string(), "r2".to_string()),
                    ("eq".to_string(), "a=b".to_string())
                ]
                .into(),
            }]
        );
        let default_name = Cli::try_parse_from(["x", "--metadata", "k=v"]).unwrap();
        assert_eq!(
            default_name
                .writer
                .options("bag".into())
                .unwrap()
                .storage
                .metadata[0]
                .name,
            "rosbag2_rs"
        );
        for bad in [
            &["x", "--metadata", "novalue"][..],
            &["x", "--metadata", "=v"],
            &["x", "--metadata", "k=v", "-s", "sqlite3"],
            &["x", "--metadata", "k=v", "--metadata-name", "rosbag2"],
        ] {
            let cli = Cli::try_parse_from(bad).unwrap();
            assert!(cli.writer.options("bag".into()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn inputs_group_their_storage_ids() {
        let cli =
            Cli::try_parse_from(["x", "a", "-i", "b", "mcap", "-i", "c", "-i", "d", "sqlite3"])
                .unwrap();
        assert_eq!(
            cli.inputs.grouped(),
            [
                ("b", Some(StorageId::Mcap)),
                ("c", None),
                ("d", Some(StorageId::Sqlite3))
            ]
        );
        assert!(Cli::try_parse_from(["x"])
            .unwrap()
            .inputs
            .resolve(None)
            .is_err());
    }

    #[test]
    fn topics_are_made_absolute_and_seconds_checked() {
        let cli = Cli::try_parse_from(["x", "--topics", "a", "/b", "-x", "/b"]).unwrap();
        let filter = cli.topics.filter().unwrap();
        assert!(filter.matches("/a") && !filter.matches("/b") && !filter.matches("/c"));
        assert_eq!(seconds(1.5, "--d").unwrap().as_nanos(), 1_500_000_000);
        assert!(seconds(f64::NAN, "--d").is_err());
    }

    #[test]
    fn compression_thread_priority_is_a_nice_value() {
        let options = |args: &[&str]| {
            Cli::try_parse_from([&["x"], args].concat())
                .map(|cli| cli.writer.options("bag".into()).unwrap().compression)
        };
        assert_eq!(options(&[]).unwrap().threads_priority, None);
        let low = options(&["--compression-threads-priority", "-5"]).unwrap();
        assert_eq!(low.threads_priority, Some(-5));
        for bad in ["20", "-21", "low"] {
            assert!(options(&["--compression-threads-priority", bad]).is_err());
        }
    }
}
