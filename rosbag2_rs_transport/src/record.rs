//! The command line of the recorder, shared by the `recorder` binary and `ros2bag-rs record`:
//! `ros2 bag record`'s flags, plus the snapshot mode. Logging is set up by the caller.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::choice::choice;
use crate::keyboard::{Key, KeyboardControls};
use crate::ros_args::{Param, ParamTable};
use rosbag2_rs_storage::Retention;
use rosbag2_rs_tools::flags::{seconds, TopicArgs, WriterArgs};
use rosbag2_rs_transport_lib::{
    load_qos_overrides, DeclaredParameter, DropCause, NodeIdentity, RecordOptions, Recorder,
    ServiceIntrospection, SnapshotLimits, ThrottleLimit, ThrottleLimitError, TopicSelection,
    DEFAULT_MAX_CACHE_SIZE, DEFAULT_MIN_FREE_SPACE,
};

/// `record`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct RecordArgs {
    /// Topics to record (same as --topics).
    #[arg(value_name = "TOPIC")]
    pub positional_topics: Vec<String>,
    /// Topics to record by name and regular expression.
    #[command(flatten)]
    pub topics: TopicArgs,
    /// Record all topics, all services' events and all actions (hidden and unpublished topics
    /// need their own flags).
    #[arg(short = 'a', long)]
    pub all: bool,
    /// Record all topics (hidden and unpublished ones need their own flags), no services.
    #[arg(long)]
    pub all_topics: bool,
    /// Record the events of every service with introspection on (`<service>/_service_event`).
    #[arg(long)]
    pub all_services: bool,
    /// Record the events of these services (`<service>/_service_event`).
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub services: Vec<String>,
    /// Do not record the events of these services.
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub exclude_services: Vec<String>,
    /// Record every action: its services' events (`<action>/_action/send_goal`, `cancel_goal`,
    /// `get_result`) and its `feedback` and `status` topics.
    #[arg(long)]
    pub all_actions: bool,
    /// Record these actions (as --all-actions does).
    #[arg(long, num_args = 1.., value_name = "ACTION")]
    pub actions: Vec<String>,
    /// Do not record these actions.
    #[arg(long, num_args = 1.., value_name = "ACTION")]
    pub exclude_actions: Vec<String>,
    /// Do not record topics of these types (pkg/msg/Type).
    #[arg(long, num_args = 1.., value_name = "TYPE")]
    pub exclude_topic_types: Vec<String>,
    /// Publish service events of the recorder's own services (off, metadata or contents).
    #[arg(long, value_parser = choice::<ServiceIntrospection>(), default_value = "off")]
    pub service_introspection: ServiceIntrospection,
    /// Serialization format to record in: only `cdr`, what every ROS 2 middleware uses.
    #[arg(short = 'f', long, default_value = "cdr", value_parser = ["cdr"])]
    pub serialization_format: String,
    /// Record topics of these types (pkg/msg/Type).
    #[arg(long, num_args = 1..)]
    pub topic_types: Vec<String>,
    /// Also record hidden topics (a name token starting with `_`).
    #[arg(long)]
    pub include_hidden_topics: bool,
    /// Also record topics that have no publisher (with the subscriptions' type).
    #[arg(long)]
    pub include_unpublished_topics: bool,
    /// Leave out topics without a subscription (until one appears).
    #[arg(long)]
    pub ignore_leaf_topics: bool,
    /// Only record topics present at the start.
    #[arg(long)]
    pub no_discovery: bool,
    /// At the end, print each recorded type whose definition was found neither locally
    /// (`AMENT_PREFIX_PATH`, bundled) nor from its publishers' nodes (`get_type_description`),
    /// one per line on stdout: those topics were recorded with an empty definition.
    #[arg(long)]
    pub print_missing_definitions: bool,
    /// How often to look for new topics, in milliseconds.
    #[arg(short = 'p', long, default_value_t = 100)]
    pub polling_interval: u64,
    /// YAML file of QoS profiles to subscribe with, per topic.
    #[arg(long)]
    pub qos_profile_overrides_path: Option<PathBuf>,
    /// A YAML file of topics recorded with the type given, subscribed at the start whether or
    /// not they are on the graph yet: `static_topics_and_types_list: [[/topic, pkg/msg/Type],
    /// ...]` (rosbag2 Lyrical).
    #[arg(long, value_name = "FILE")]
    pub static_topics_path: Option<PathBuf>,
    /// Output bag directory (must not exist); default rosbag2_YYYY_MM_DD-HH_MM_SS. In snapshot
    /// mode, the prefix of the snapshot bags.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// The bag's storage, compression and splitting.
    #[command(flatten)]
    pub writer: WriterArgs,
    /// Bytes of messages the cache holds while the disk is busy (each message counted with a
    /// 192-byte overhead, at least 1 byte of payload); beyond it messages are dropped
    /// and counted (0: no cache, as in rosbag2: each message is written before the next is
    /// taken, none dropped).
    #[arg(long, default_value_t = DEFAULT_MAX_CACHE_SIZE)]
    pub max_cache_size: u64,
    /// Seconds of messages the cache holds while the disk is busy, by receive time; beyond it
    /// messages are dropped and counted too (0: no bound by time; with --max-cache-size 0, the
    /// only bound).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    pub max_cache_duration: f64,
    /// At most this many events a second on events/rosbag2_messages_lost, each with the
    /// messages every topic lost since the last one (0: none, at most 1000).
    #[arg(
        long,
        alias = "stats_max_publishing_rate",
        value_name = "HZ",
        default_value_t = 1.0
    )]
    pub stats_max_publishing_rate: f64,
    /// Publish every topic's totals (received, written, dropped, lost in transport, throttled)
    /// this many times a second on events/rosbag2_rs_statistics (0: not at all).
    #[arg(long, value_name = "HZ", default_value_t = 0.0)]
    pub statistics_rate: f64,
    /// Start paused (resume with the `resume` service or the space bar).
    #[arg(long)]
    pub start_paused: bool,
    /// Record only messages received at or after this time, in ns (rosbag2's parameter
    /// storage.start_time_ns; negative: no bound).
    #[arg(long, value_name = "NS", allow_negative_numbers = true)]
    pub start_time_ns: Option<i64>,
    /// Record only messages received at or before this time, in ns (rosbag2's parameter
    /// storage.end_time_ns; negative: no bound).
    #[arg(long, value_name = "NS", allow_negative_numbers = true)]
    pub end_time_ns: Option<i64>,
    /// Timestamps from /clock instead of the system clock.
    #[arg(long)]
    pub use_sim_time: bool,
    /// Name of the recorder node (services are under /NODE_NAME/).
    #[arg(long, default_value = "rosbag2_recorder")]
    pub node_name: String,
    /// Metadata to store in the bag, KEY=VALUE (none given: none, as in rosbag2).
    #[arg(long, num_args = 0.., value_name = "KEY=VALUE")]
    pub custom_data: Vec<String>,
    /// Do not read the keyboard (space pauses and resumes).
    #[arg(long)]
    pub disable_keyboard_controls: bool,
    /// Snapshot mode, as rosbag2's: the cache (--max-cache-size, --max-cache-duration) becomes
    /// a ring of the latest messages of every topic, written only when the snapshot service is
    /// called (and at shutdown), each snapshot into the next file of the bag (--max-bag-files
    /// keeps the last ones; -b and -d do not split it, as in rosbag2). With --max-buffer-size or
    /// --max-buffer-duration: per-topic buffers instead, each snapshot a bag of its own.
    #[arg(long = "snapshot-mode", alias = "snapshot")]
    pub snapshot: bool,
    /// Snapshot mode with per-topic buffers: bytes buffered per topic, each message counted
    /// with a 192-byte overhead (non-positive: no limit by size).
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    pub max_buffer_size: Option<i64>,
    /// Snapshot mode with per-topic buffers: seconds buffered, messages received before now
    /// minus this are dropped on every topic (non-positive: no limit by duration).
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub max_buffer_duration: Option<f64>,
    /// Do not repeat the latest message of each transient-local topic at the start of every
    /// split file (and in every snapshot).
    #[arg(long)]
    pub no_repeat_latched: bool,
    /// Repeat instead the latest messages of only these topics, DEPTH of each (default 1), at
    /// the start of every split file (snapshots: the latest one), as rosbag2 Lyrical does.
    #[arg(long, num_args = 1.., value_name = "TOPIC[=DEPTH]", value_parser = repeat_topic)]
    pub repeat_transient_local: Vec<(String, usize)>,
    /// Repeat the latest DEPTH (default 1) messages of every transient-local topic at the start
    /// of every split file, also with --repeat-transient-local (whose depths win), as rosbag2
    /// Lyrical does (0: none).
    #[arg(long, value_name = "DEPTH", num_args = 0..=1, default_missing_value = "1")]
    pub repeat_all_transient_local: Option<usize>,
    /// Record these topics at most at a rate, in messages (`/camera:=5`, `/scan:=2.5hz`) or
    /// bytes (`/points:=2MB/s`, `/image:=512KiB/s`) per second of bag time: no second of the bag
    /// holds more; what is left out is counted per topic.
    #[arg(long, num_args = 1.., value_name = "TOPIC:=LIMIT", value_parser = throttle_topic)]
    pub throttle: Vec<(String, ThrottleLimit)>,
    /// Retention: keep at most N files (the one being written included), deleting the oldest
    /// after each split (0: no limit).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_bag_files: u64,
    /// Retention: keep at most this many bytes of closed files, deleting the oldest after each
    /// split (0: no limit).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub max_total_size: u64,
    /// Retention: keep at most this many seconds of closed files (first to last message),
    /// deleting the oldest after each split (0: no limit).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    pub max_total_duration: f64,
    /// Stop cleanly (bag closed, readable) when the disk has less free space than this, after
    /// deleting the oldest files under retention (0: no check).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MIN_FREE_SPACE)]
    pub min_free_space: u64,
}

/// rosbag2's recorder node parameters (`ros2 launch` files for its composable recorder) and the
/// flags they stand for.
pub const RECORD_PARAMETERS: ParamTable = ParamTable {
    node: "recorder",
    params: &[
        ("use_sim_time", Param::Switch("--use-sim-time")),
        ("record.all_topics", Param::Switch("--all-topics")),
        ("record.all_services", Param::Switch("--all-services")),
        ("record.services", Param::List("--services")),
        ("record.exclude_services", Param::List("--exclude-services")),
        ("record.all_actions", Param::Switch("--all-actions")),
        ("record.actions", Param::List("--actions")),
        ("record.exclude_actions", Param::List("--exclude-actions")),
        (
            "record.exclude_topic_types",
            Param::List("--exclude-topic-types"),
        ),
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
        ("storage.max_bag_files", Param::Positive("--max-bag-files")),
        (
            "record.statistics_max_publishing_rate",
            Param::Value("--stats-max-publishing-rate"),
        ),
        (
            "storage.max_cache_duration",
            Param::Value("--max-cache-duration"),
        ),
        (
            "storage.storage_preset_profile",
            Param::Value("--storage-preset-profile"),
        ),
        ("storage.snapshot_mode", Param::Switch("--snapshot-mode")),
        ("storage.custom_data", Param::List("--custom-data")),
        // rosbag2 Lyrical splits the format in two (the first deprecated); only cdr exists.
        ("record.rmw_serialization_format", Param::Only("cdr")),
        ("record.input_serialization_format", Param::Only("cdr")),
        ("record.output_serialization_format", Param::Only("cdr")),
        ("record.node_prefix", Param::Unused),
        (
            "record.compression_mode",
            Param::Value("--compression-mode"),
        ),
        (
            "record.compression_queue_size",
            Param::Value("--compression-queue-size"),
        ),
        (
            "record.compression_threads",
            Param::Value("--compression-threads"),
        ),
        (
            "record.compression_threads_priority",
            Param::Value("--compression-threads-priority"),
        ),
        (
            "record.ignore_leaf_topics",
            Param::Switch("--ignore-leaf-topics"),
        ),
        (
            "storage.storage_config_uri",
            Param::Value("--storage-config-file"),
        ),
        (
            "record.repeat_transient_local",
            Param::List("--repeat-transient-local"),
        ),
        (
            "record.repeat_all_transient_local",
            Param::Positive("--repeat-all-transient-local"),
        ),
        ("record.throttle", Param::List("--throttle")),
        ("record.statistics_rate", Param::Value("--statistics-rate")),
        ("storage.start_time_ns", Param::Value("--start-time-ns")),
        ("storage.end_time_ns", Param::Value("--end-time-ns")),
    ],
    default_node_name: "rosbag2_recorder",
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

impl RecordArgs {
    /// The library options these arguments describe.
    pub fn to_options(&self) -> Result<RecordOptions> {
        let mut topics = self.positional_topics.clone();
        topics.extend(self.topics.topics.iter().cloned());
        let selection = TopicSelection {
            all: self.all || self.all_topics,
            all_services: self.all || self.all_services,
            services: self.services.clone(),
            exclude_services: self.exclude_services.clone(),
            all_actions: self.all || self.all_actions,
            actions: self.actions.clone(),
            exclude_actions: self.exclude_actions.clone(),
            exclude_topic_types: self.exclude_topic_types.clone(),
            topics,
            regex: self.topics.regex.clone(),
            exclude_regex: self.topics.exclude_regex.clone(),
            exclude_topics: self.topics.exclude_topics.clone(),
            topic_types: self.topic_types.clone(),
            include_hidden_topics: self.include_hidden_topics,
            include_unpublished_topics: self.include_unpublished_topics,
            ignore_leaf_topics: self.ignore_leaf_topics,
            static_topics: match &self.static_topics_path {
                Some(path) => load_static_topics(path)?,
                None => Vec::new(),
            },
        };
        let mut custom_data = BTreeMap::new();
        for pair in &self.custom_data {
            let Some((key, value)) = pair.split_once('=') else {
                bail!("--custom-data expects KEY=VALUE, got '{pair}'");
            };
            custom_data.insert(key.to_string(), value.to_string());
        }
        let qos_overrides = match &self.qos_profile_overrides_path {
            Some(path) => load_qos_overrides(path)?,
            None => BTreeMap::new(),
        };
        let per_topic = self.max_buffer_size.is_some() || self.max_buffer_duration.is_some();
        let snapshot = if self.snapshot && per_topic {
            // The seed's snapshot design: a non-positive limit disables its axis.
            let max_duration_ns = match self.max_buffer_duration {
                Some(d) if d.is_nan() => bail!("--max-buffer-duration: not a number"),
                Some(d) if d > 0.0 => seconds(d, "--max-buffer-duration")?.as_nanos(),
                _ => 0,
            };
            Some(SnapshotLimits {
                max_bytes_per_topic: self.max_buffer_size.unwrap_or(0).max(0) as u64,
                max_duration_ns,
            })
        } else if per_topic {
            bail!("--max-buffer-size and --max-buffer-duration need --snapshot-mode");
        } else {
            None
        };
        let snapshot_files = self.snapshot && !per_topic;
        if self.use_sim_time && self.no_discovery {
            // ros2bag's record verb and rosbag2's recorder refuse it alike.
            bail!(
                "--use-sim-time and --no-discovery both set, but are incompatible settings: \
                 the /clock topic needs to be discovered to record with sim time"
            );
        }
        if snapshot.is_some()
            && (self.writer.max_bag_size > 0 || self.writer.max_bag_duration > 0.0)
        {
            bail!("--max-bag-size and --max-bag-duration do not apply to snapshots");
        }
        let mut bag = self
            .writer
            .options(self.output.clone().unwrap_or_else(default_bag_name))?;
        if snapshot_files && (bag.max_bagfile_size > 0 || bag.max_bagfile_duration > 0) {
            log::warn!(
                "--max-bag-size and --max-bag-duration do not split a bag in snapshot mode (as in \
                 rosbag2): each snapshot is a file of its own"
            );
            (bag.max_bagfile_size, bag.max_bagfile_duration) = (0, 0);
        }
        let options = RecordOptions {
            uri: bag.uri,
            storage: bag.storage,
            compression: bag.compression,
            max_bagfile_size: bag.max_bagfile_size,
            max_bagfile_duration: bag.max_bagfile_duration,
            max_cache_size: self.max_cache_size,
            max_cache_duration: rosbag2_rs_tools::flags::non_negative_seconds(
                self.max_cache_duration,
                "--max-cache-duration",
            )?
            .as_nanos(),
            custom_data,
            selection,
            discovery: !self.no_discovery,
            polling_interval: Duration::from_millis(self.polling_interval),
            qos_overrides,
            start_paused: self.start_paused,
            start_time_ns: self.start_time_ns.filter(|t| *t >= 0),
            end_time_ns: self.end_time_ns.filter(|t| *t >= 0),
            use_sim_time: self.use_sim_time,
            snapshot,
            snapshot_files,
            service_introspection: self.service_introspection,
            repeat_latched: !self.no_repeat_latched,
            repeat_topics: self.repeat_transient_local.iter().cloned().collect(),
            repeat_all_transient_local: self.repeat_all_transient_local,
            throttle: self.throttle.iter().cloned().collect(),
            retention: Retention {
                max_files: self.max_bag_files,
                max_total_size: self.max_total_size,
                max_total_duration: if self.max_total_duration > 0.0 {
                    seconds(self.max_total_duration, "--max-total-duration")?.as_nanos()
                } else if self.max_total_duration == 0.0 {
                    0
                } else {
                    bail!("--max-total-duration must not be negative")
                },
            },
            min_free_space: self.min_free_space,
            stats_max_publishing_rate: self.stats_max_publishing_rate,
            statistics_rate: self.statistics_rate,
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

/// Records on the DDS graph, with the recorder node in `namespace`, until SIGINT/SIGTERM (or a
/// writer failure), then closes the bag and prints the per-topic summary.
pub fn run_record(
    args: RecordArgs,
    namespace: &str,
    parameters: Vec<DeclaredParameter>,
) -> Result<()> {
    let options = args.to_options()?;
    let shutdown = crate::shutdown::shutdown_requested()?;
    let middleware = crate::ros_node(&args.node_name, namespace)?;
    let _services = crate::node_services(&*middleware, parameters)?;
    let (per_topic_snapshots, snapshot_files) =
        (options.snapshot.is_some(), options.snapshot_files);
    let uri = options.uri.clone();
    let recorder = Recorder::start(middleware, options)?;
    let service_prefix = NodeIdentity::new(&args.node_name, namespace)
        .map(|n| n.fully_qualified_name())
        .unwrap_or_else(|_| args.node_name.clone());
    if snapshot_files {
        eprintln!(
            "buffering for snapshots into {}: call {service_prefix}/snapshot to write one; Ctrl-C to stop",
            uri.display()
        );
    } else if per_topic_snapshots {
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
    if !summary.missing_definitions.is_empty() {
        log::warn!(
            "recorded without a definition (no local package, no answer from their nodes): {}",
            summary.missing_definitions.join(", ")
        );
    }
    if args.print_missing_definitions {
        for type_name in &summary.missing_definitions {
            println!("{type_name}");
        }
    }
    if summary.dropped() > 0 {
        let cause = summary.drop_cause.unwrap_or(DropCause::Disk);
        log::warn!("{} messages were dropped: {cause}", summary.dropped());
    }
    anyhow::ensure!(
        summary.failed_snapshots.is_empty(),
        "{} snapshot(s) could not be written: {}",
        summary.failed_snapshots.len(),
        summary.failed_snapshots.join("; ")
    );
    Ok(())
}

/// A `--repeat-transient-local` value that is not `TOPIC[=DEPTH]`.
#[derive(Debug, thiserror::Error)]
pub enum RepeatTopicError {
    /// `=DEPTH` with no topic before it.
    #[error("'{0}': the topic name is empty")]
    NoTopic(String),
    /// A depth that is not a positive integer.
    #[error("'{value}': the depth must be a positive integer")]
    BadDepth {
        /// The whole value.
        value: String,
        /// Why the depth did not parse (none for 0).
        #[source]
        source: Option<std::num::ParseIntError>,
    },
}

/// `TOPIC[=DEPTH]` of `--repeat-transient-local`: a topic and a positive depth (default 1).
fn repeat_topic(value: &str) -> std::result::Result<(String, usize), RepeatTopicError> {
    let (topic, depth) = value.split_once('=').unwrap_or((value, "1"));
    if topic.is_empty() {
        return Err(RepeatTopicError::NoTopic(value.to_string()));
    }
    let bad = |source| RepeatTopicError::BadDepth {
        value: value.to_string(),
        source,
    };
    match depth.parse::<usize>() {
        Ok(0) => Err(bad(None)),
        Ok(depth) => Ok((topic.to_string(), depth)),
        Err(e) => Err(bad(Some(e))),
    }
}

/// A `--throttle` value that is not `TOPIC:=LIMIT`.
#[derive(Debug, thiserror::Error)]
pub enum ThrottleArgError {
    /// No `:=`, or nothing before it.
    #[error("'{0}': expected TOPIC:=LIMIT, e.g. /camera:=5 or /points:=2MB/s")]
    Syntax(String),
    /// The limit does not parse.
    #[error("--throttle {topic}")]
    Limit {
        /// The topic.
        topic: String,
        /// Why.
        #[source]
        source: ThrottleLimitError,
    },
}

/// `TOPIC:=LIMIT` of `--throttle`.
fn throttle_topic(value: &str) -> std::result::Result<(String, ThrottleLimit), ThrottleArgError> {
    match value.split_once(":=") {
        Some((topic, limit)) if !topic.is_empty() => limit
            .parse()
            .map(|limit| (topic.to_string(), limit))
            .map_err(|source| ThrottleArgError::Limit {
                topic: topic.to_string(),
                source,
            }),
        _ => Err(ThrottleArgError::Syntax(value.to_string())),
    }
}

/// The `static_topics_and_types_list` of a `--static-topics-path` file: `[topic, type]` pairs.
fn load_static_topics(path: &std::path::Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read static topics file {}", path.display()))?;
    let docs = rosbag2_rs_storage::limits::load_yaml(&text)
        .with_context(|| format!("static topics file {} is not YAML", path.display()))?;
    let list = docs
        .first()
        .map(|doc| &doc["static_topics_and_types_list"])
        .and_then(|list| list.as_vec())
        .with_context(|| {
            format!(
                "{}: no static_topics_and_types_list of [topic, type] pairs",
                path.display()
            )
        })?;
    list.iter()
        .enumerate()
        .map(|(i, entry)| match entry.as_vec().map(Vec::as_slice) {
            Some([topic, type_name]) => match (topic.as_str(), type_name.as_str()) {
                (Some(t), Some(ty)) if !t.is_empty() && !ty.is_empty() => {
                    Ok((t.to_string(), ty.to_string()))
                }
                _ => bail!("{}: entry {i} is not [topic, type]", path.display()),
            },
            _ => bail!("{}: entry {i} is not [topic, type]", path.display()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_topics_files_are_read_as_rosbag2_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("static.yaml");
        std::fs::write(
            &file,
            "static_topics_and_types_list:\n  - [/a, std_msgs/msg/String]\n  - [b, pkg/msg/T]\n",
        )
        .unwrap();
        assert_eq!(
            load_static_topics(&file).unwrap(),
            [
                ("/a".to_string(), "std_msgs/msg/String".to_string()),
                ("b".to_string(), "pkg/msg/T".to_string())
            ]
        );
        for bad in ["other: 1\n", "static_topics_and_types_list:\n  - [/a]\n"] {
            std::fs::write(&file, bad).unwrap();
            let error = load_static_topics(&file).unwrap_err().to_string();
            assert!(error.contains("static.yaml"), "{error}");
        }
    }

    #[test]
    fn throttle_values_are_topic_and_limit() {
        assert_eq!(
            throttle_topic("/camera:=5").unwrap(),
            ("/camera".into(), ThrottleLimit::MessagesPerSecond(5.0))
        );
        assert_eq!(
            throttle_topic("points:=2MB/s").unwrap(),
            ("points".into(), ThrottleLimit::BytesPerSecond(2_000_000))
        );
        assert!(matches!(
            throttle_topic("/camera=5"),
            Err(ThrottleArgError::Syntax(_))
        ));
        assert!(matches!(
            throttle_topic(":=5"),
            Err(ThrottleArgError::Syntax(_))
        ));
        assert!(matches!(
            throttle_topic("/camera:=0"),
            Err(ThrottleArgError::Limit { .. })
        ));
    }

    #[test]
    fn sim_time_without_discovery_is_refused_as_rosbag2_refuses_it() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            record: RecordArgs,
        }
        let parse = |args: &[&str]| {
            Cli::try_parse_from(["record", "-a"].iter().chain(args))
                .unwrap()
                .record
                .to_options()
        };
        let err = parse(&["--use-sim-time", "--no-discovery"]).unwrap_err();
        assert!(err.to_string().contains("incompatible"), "{err}");
        assert!(parse(&["--use-sim-time"]).is_ok());
        assert!(parse(&["--no-discovery"]).is_ok());
    }

    #[test]
    fn repeat_depths_default_to_one_and_must_be_positive() {
        assert_eq!(repeat_topic("/tf").unwrap(), ("/tf".to_string(), 1));
        assert_eq!(repeat_topic("/tf=3").unwrap(), ("/tf".to_string(), 3));
        for bad in ["/tf=0", "=2", "/tf=x"] {
            assert!(repeat_topic(bad).is_err(), "{bad}");
        }
    }
}
