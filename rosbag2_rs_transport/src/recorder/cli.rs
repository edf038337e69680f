//! The command line of the recorder, shared by the `recorder` binary and `ros2bag-rs record`:
//! `ros2 bag record`'s flags, plus the snapshot mode. Logging is set up by the caller.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rosbag2_rs_storage::WriterOptions;

use super::{RecordOptions, Recorder, SnapshotLimits, TopicSelection};
use crate::dds::{DdsConfig, DdsMiddleware};
use crate::keyboard::{Key, KeyboardControls};
use crate::ros_args::{Param, ParamTable};

/// `record`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct RecordArgs {
    /// Topics to record (same as --topics).
    #[arg(value_name = "TOPIC")]
    pub positional_topics: Vec<String>,
    /// Topics to record.
    #[arg(long, num_args = 1..)]
    pub topics: Vec<String>,
    /// Record all topics (hidden and unpublished ones need their own flags).
    #[arg(short = 'a', long, alias = "all-topics")]
    pub all: bool,
    /// Serialization format to record in: only `cdr`, what every ROS 2 middleware uses.
    #[arg(short = 'f', long, default_value = "cdr", value_parser = ["cdr"])]
    pub serialization_format: String,
    /// Record topics whose name contains a match of this regular expression.
    #[arg(short = 'e', long)]
    pub regex: Option<String>,
    /// Do not record topics whose name contains a match of this regular expression.
    #[arg(short = 'x', long)]
    pub exclude_regex: Option<String>,
    /// Do not record these topics.
    #[arg(long, num_args = 1..)]
    pub exclude_topics: Vec<String>,
    /// Record topics of these types (pkg/msg/Type).
    #[arg(long, num_args = 1..)]
    pub topic_types: Vec<String>,
    /// Also record hidden topics (a name token starting with `_`).
    #[arg(long)]
    pub include_hidden_topics: bool,
    /// Also record topics that have no publisher (with the subscriptions' type).
    #[arg(long)]
    pub include_unpublished_topics: bool,
    /// Only record topics present at the start.
    #[arg(long)]
    pub no_discovery: bool,
    /// How often to look for new topics, in milliseconds.
    #[arg(short = 'p', long, default_value_t = 100)]
    pub polling_interval: u64,
    /// YAML file of QoS profiles to subscribe with, per topic.
    #[arg(long)]
    pub qos_profile_overrides_path: Option<PathBuf>,
    /// Output bag directory (must not exist); default rosbag2_YYYY_MM_DD-HH_MM_SS. In snapshot
    /// mode, the prefix of the snapshot bags.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Storage: mcap or sqlite3.
    #[arg(short = 's', long, default_value = "mcap")]
    pub storage: String,
    /// Storage preset: mcap none|fastwrite|zstd_fast|zstd_small; sqlite3 none|resilient.
    #[arg(long, default_value = "none")]
    pub storage_preset_profile: String,
    /// MCAP chunk compression: none, lz4 or zstd.
    #[arg(long)]
    pub compression_format: Option<String>,
    /// Split files at this size in bytes (0: no limit).
    #[arg(short = 'b', long, default_value_t = 0)]
    pub max_bag_size: u64,
    /// Split files at this duration in seconds (0: no limit).
    #[arg(short = 'd', long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub max_bag_duration: f64,
    /// Bytes of messages the cache holds while the disk is busy; beyond it messages are dropped
    /// and counted (0: no limit).
    #[arg(long, default_value_t = super::options::DEFAULT_MAX_CACHE_SIZE)]
    pub max_cache_size: u64,
    /// Start paused (resume with the `resume` service or the space bar).
    #[arg(long)]
    pub start_paused: bool,
    /// Timestamps from /clock instead of the system clock.
    #[arg(long)]
    pub use_sim_time: bool,
    /// Name of the recorder node (services are under /NODE_NAME/).
    #[arg(long, default_value = "rosbag2_recorder")]
    pub node_name: String,
    /// Metadata to store in the bag, KEY=VALUE.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub custom_data: Vec<String>,
    /// Do not read the keyboard (space pauses and resumes).
    #[arg(long)]
    pub disable_keyboard_controls: bool,
    /// Snapshot mode: buffer messages in memory and write them only when the snapshot service
    /// is called (and at shutdown).
    #[arg(long, alias = "snapshot-mode")]
    pub snapshot: bool,
    /// Snapshot mode: bytes buffered per topic (0: no limit by size).
    #[arg(long, value_name = "BYTES")]
    pub max_buffer_size: Option<u64>,
    /// Snapshot mode: seconds buffered per topic, newest minus oldest message (0: no limit by
    /// duration). Default 10 when neither limit is given.
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub max_buffer_duration: Option<f64>,
}

/// rosbag2's recorder node parameters (`ros2 launch` files for its composable recorder) and the
/// flags they stand for.
pub const RECORD_PARAMETERS: ParamTable = ParamTable {
    node: "recorder",
    params: &[
        ("use_sim_time", Param::Switch("--use-sim-time")),
        ("record.all_topics", Param::Switch("--all")),
        (
            "record.is_discovery_disabled",
            Param::Switch("--no-discovery"),
        ),
        ("record.topics", Param::List("--topics")),
        ("record.topic_types", Param::List("--topic-types")),
        (
            "record.topic_polling_interval",
            Param::Milliseconds("--polling-interval"),
        ),
        ("record.regex", Param::Value("--regex")),
        ("record.exclude_regex", Param::Value("--exclude-regex")),
        ("record.exclude_topics", Param::List("--exclude-topics")),
        (
            "record.compression_format",
            Param::Value("--compression-format"),
        ),
        (
            "record.qos_profile_overrides_path",
            Param::Value("--qos-profile-overrides-path"),
        ),
        (
            "record.include_hidden_topics",
            Param::Switch("--include-hidden-topics"),
        ),
        (
            "record.include_unpublished_topics",
            Param::Switch("--include-unpublished-topics"),
        ),
        ("record.start_paused", Param::Switch("--start-paused")),
        (
            "record.disable_keyboard_controls",
            Param::Switch("--disable-keyboard-controls"),
        ),
        ("storage.uri", Param::Value("--output")),
        ("storage.storage_id", Param::Value("--storage")),
        (
            "storage.max_bagfile_size",
            Param::Positive("--max-bag-size"),
        ),
        (
            "storage.max_bagfile_duration",
            Param::Positive("--max-bag-duration"),
        ),
        ("storage.max_cache_size", Param::Value("--max-cache-size")),
        (
            "storage.storage_preset_profile",
            Param::Value("--storage-preset-profile"),
        ),
        ("storage.snapshot_mode", Param::Switch("--snapshot")),
        ("storage.custom_data", Param::List("--custom-data")),
        ("record.all_services", Param::Unsupported),
        ("record.services", Param::Unsupported),
        ("record.exclude_services", Param::Unsupported),
        ("record.exclude_topic_types", Param::Unsupported),
        ("record.rmw_serialization_format", Param::Unsupported),
        ("record.node_prefix", Param::Unsupported),
        ("record.compression_mode", Param::Unsupported),
        ("record.compression_queue_size", Param::Unsupported),
        ("record.compression_threads", Param::Unsupported),
        ("record.compression_threads_priority", Param::Unsupported),
        ("record.ignore_leaf_topics", Param::Unsupported),
        ("storage.storage_config_uri", Param::Unsupported),
        ("storage.start_time_ns", Param::Unsupported),
        ("storage.end_time_ns", Param::Unsupported),
    ],
    node_name_flag: "--node-name",
    remap_flag: None,
};

/// `rosbag2_YYYY_MM_DD-HH_MM_SS` in local time, as rosbag2 names bags.
pub fn default_bag_name() -> PathBuf {
    PathBuf::from(
        chrono::Local::now()
            .format("rosbag2_%Y_%m_%d-%H_%M_%S")
            .to_string(),
    )
}

fn seconds_to_ns(seconds: f64, flag: &str) -> Result<i64> {
    if !seconds.is_finite() || seconds < 0.0 || seconds * 1e9 > i64::MAX as f64 {
        bail!("{flag} must be a non-negative number of seconds, got {seconds}");
    }
    Ok((seconds * 1e9).round() as i64)
}

impl RecordArgs {
    /// The library options these arguments describe.
    pub fn to_options(&self) -> Result<RecordOptions> {
        let mut topics = self.positional_topics.clone();
        topics.extend(self.topics.iter().cloned());
        let selection = TopicSelection {
            all: self.all,
            topics,
            regex: self.regex.clone(),
            exclude_regex: self.exclude_regex.clone(),
            exclude_topics: self.exclude_topics.clone(),
            topic_types: self.topic_types.clone(),
            include_hidden_topics: self.include_hidden_topics,
            include_unpublished_topics: self.include_unpublished_topics,
        };
        let mut custom_data = BTreeMap::new();
        for pair in &self.custom_data {
            let Some((key, value)) = pair.split_once('=') else {
                bail!("--custom-data expects KEY=VALUE, got '{pair}'");
            };
            custom_data.insert(key.to_string(), value.to_string());
        }
        let qos_overrides = match &self.qos_profile_overrides_path {
            Some(path) => crate::qos_overrides::load_qos_overrides(path)?,
            None => BTreeMap::new(),
        };
        let snapshot = if self.snapshot {
            let max_duration_ns = match (self.max_buffer_size, self.max_buffer_duration) {
                (None, None) => super::options::DEFAULT_SNAPSHOT_DURATION_NS,
                (_, Some(d)) => seconds_to_ns(d, "--max-buffer-duration")?,
                (Some(_), None) => 0,
            };
            Some(SnapshotLimits {
                max_bytes_per_topic: self.max_buffer_size.unwrap_or(0),
                max_duration_ns,
            })
        } else {
            if self.max_buffer_size.is_some() || self.max_buffer_duration.is_some() {
                bail!("--max-buffer-size and --max-buffer-duration need --snapshot");
            }
            None
        };
        if snapshot.is_some() && (self.max_bag_size > 0 || self.max_bag_duration > 0.0) {
            bail!("--max-bag-size and --max-bag-duration do not apply to snapshots");
        }
        let options = RecordOptions {
            uri: self.output.clone().unwrap_or_else(default_bag_name),
            storage: WriterOptions::parse(
                &self.storage,
                &self.storage_preset_profile,
                self.compression_format.as_deref(),
            )?,
            max_bagfile_size: self.max_bag_size,
            max_bagfile_duration: seconds_to_ns(self.max_bag_duration, "--max-bag-duration")?,
            max_cache_size: self.max_cache_size,
            custom_data,
            selection,
            discovery: !self.no_discovery,
            polling_interval: Duration::from_millis(self.polling_interval),
            qos_overrides,
            start_paused: self.start_paused,
            use_sim_time: self.use_sim_time,
            snapshot,
        };
        options.validate()?;
        if options.snapshot.is_none() && options.uri.exists() {
            bail!(
                "output '{}' already exists: choose another name with -o",
                options.uri.display()
            );
        }
        Ok(options)
    }
}

/// Records on the DDS graph until SIGINT/SIGTERM (or a writer failure), then closes the bag
/// and prints the per-topic summary. The node is in the root namespace.
pub fn run(args: RecordArgs) -> Result<()> {
    run_in_namespace(args, "/")
}

/// [`run`] with the recorder node in `namespace`.
pub fn run_in_namespace(args: RecordArgs, namespace: &str) -> Result<()> {
    let options = args.to_options()?;
    let shutdown = crate::shutdown::shutdown_requested()?;
    let middleware = DdsMiddleware::with_config(&args.node_name, namespace, DdsConfig::from_env()?)
        .context("cannot join the ROS 2 graph")?;
    let snapshot_mode = options.snapshot.is_some();
    let uri = options.uri.clone();
    let recorder = Recorder::start(Arc::new(middleware), options)?;
    let service_prefix = crate::names::NodeIdentity::new(&args.node_name, namespace)
        .map(|n| n.fully_qualified_name())
        .unwrap_or_else(|_| args.node_name.clone());
    if snapshot_mode {
        eprintln!(
            "buffering for snapshots {}_*: call {service_prefix}/snapshot to write one; Ctrl-C to stop",
            uri.display()
        );
    } else {
        eprintln!("recording to {}: Ctrl-C to stop", uri.display());
    }
    let keyboard = if args.disable_keyboard_controls {
        None
    } else {
        let control = recorder.control();
        KeyboardControls::spawn(move |key| {
            if key == Key::Space {
                if control.is_paused() {
                    control.resume();
                } else {
                    control.pause();
                }
            }
        })
    };
    if keyboard.is_some() {
        eprintln!("press space to pause or resume");
    }
    loop {
        crossbeam_channel::select! {
            recv(shutdown) -> _ => break,
            default(Duration::from_millis(200)) => {
                if let Some(failure) = recorder.failure() {
                    log::error!("stopping: {failure}");
                    break;
                }
            }
        }
    }
    drop(keyboard);
    let summary = recorder.stop()?;
    eprint!("{}", summary.to_text());
    for snapshot in &summary.snapshots {
        eprintln!("snapshot: {}", snapshot.display());
    }
    if let Some(bag) = &summary.bag {
        eprintln!(
            "recorded {} messages on {} topics to {}",
            summary.written(),
            summary.topics.len(),
            bag.display()
        );
    }
    if summary.dropped() > 0 {
        log::warn!(
            "{} messages were dropped because the disk did not keep up (see --max-cache-size)",
            summary.dropped()
        );
    }
    Ok(())
}
