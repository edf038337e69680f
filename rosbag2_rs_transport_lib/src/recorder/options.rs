//! What to record and how: the library-level options behind `ros2bag-rs record`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use rosbag2_rs_storage::{CompressionOptions, QosProfile, Retention, WriterOptions};

use super::discovery::TopicSelection;
use super::error::{RecorderError, Result};
use super::throttle::ThrottleLimit;
use rosbag2_rs_middleware::services::ServiceIntrospection;

/// rosbag2's default `--max-cache-size`: 100 MiB.
pub const DEFAULT_MAX_CACHE_SIZE: u64 = 100 * 1024 * 1024;

/// The default `--min-free-space`: 64 MiB.
pub const DEFAULT_MIN_FREE_SPACE: u64 = 64 * 1024 * 1024;

/// The snapshot mode's default window when neither limit is given: 10 s.
pub const DEFAULT_SNAPSHOT_DURATION_NS: i64 = 10_000_000_000;

/// Limits of the snapshot buffers (rosbag2's snapshot design): bytes per topic, and a time
/// window `now() - max_duration` on every topic. A non-positive limit disables its axis; at
/// least one must be positive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotLimits {
    /// Maximum bytes kept per topic, each message counted at its memory cost
    /// ([`super::message_cost`]: payload and overhead; 0: no limit by size).
    pub max_bytes_per_topic: u64,
    /// Messages received before now minus this many ns are evicted, on every topic
    /// (non-positive: no limit by duration).
    pub max_duration_ns: i64,
}

impl Default for SnapshotLimits {
    fn default() -> Self {
        Self {
            max_bytes_per_topic: 0,
            max_duration_ns: DEFAULT_SNAPSHOT_DURATION_NS,
        }
    }
}

impl SnapshotLimits {
    /// The same limits with a disabled duration written as 0.
    pub fn normalized(self) -> Self {
        Self {
            max_duration_ns: self.max_duration_ns.max(0),
            ..self
        }
    }

    /// Checks that at least one limit is positive.
    pub fn validate(&self) -> Result<()> {
        if self.max_bytes_per_topic == 0 && self.max_duration_ns <= 0 {
            return Err(RecorderError::InvalidOptions(
                "snapshot mode needs a positive --max-buffer-size or --max-buffer-duration".into(),
            ));
        }
        Ok(())
    }
}

/// The longest post-trigger tail a snapshot trigger may ask for (1 hour): the tail is held from
/// time eviction while it is recorded.
pub const MAX_POST_TRIGGER_NS: i64 = 3600 * 1_000_000_000;

/// The longest buffer duration the `snapshot/duration` service accepts (1 day).
pub const MAX_SERVICE_BUFFER_DURATION_NS: i64 = 24 * 3600 * 1_000_000_000;

/// The most bytes per topic the `snapshot/memory` service accepts: the machine's physical
/// memory (1 TiB where it cannot be read).
pub fn max_service_buffer_bytes() -> u64 {
    // SAFETY: sysconf only reads system values.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    match (u64::try_from(pages), u64::try_from(page_size)) {
        (Ok(p), Ok(s)) if p > 0 && s > 0 => p.saturating_mul(s),
        _ => 1 << 40,
    }
}

/// What a snapshot trigger asks for (rosbag_snapshot's `TriggerSnapshot`, plus a tail). The
/// default is the plain trigger: everything buffered, to the timestamped default name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotTrigger {
    /// Bag directory to write (must not exist); relative: in the directory of the output
    /// prefix. `None`: `<prefix>_<YYYYMMDD-HHMMSS>`.
    pub filename: Option<PathBuf>,
    /// Topics to write (expanded against the recorder's node); empty: all. The others stay
    /// buffered.
    pub topics: Vec<String>,
    /// Earliest receive time written, ns; `None`: no limit.
    pub start_time: Option<i64>,
    /// Latest receive time written, ns; `None`: no limit.
    pub stop_time: Option<i64>,
    /// Keep recording this many ns after the trigger into the same snapshot (non-positive:
    /// none). The tail is buffered meanwhile, so it is bounded by the buffer limits too.
    pub post_trigger_ns: i64,
}

impl SnapshotTrigger {
    /// Checks the window and the post-trigger tail (at most [`MAX_POST_TRIGGER_NS`]).
    pub fn validate(&self) -> Result<()> {
        if self.post_trigger_ns > MAX_POST_TRIGGER_NS {
            return Err(RecorderError::OutOfRange {
                field: "post_trigger_seconds",
                value: format!("{}", self.post_trigger_ns as f64 / 1e9),
                allowed: format!("at most {} s", MAX_POST_TRIGGER_NS / 1_000_000_000),
            });
        }
        if let (Some(start), Some(stop)) = (self.start_time, self.stop_time) {
            if stop < start {
                return Err(RecorderError::InvalidOptions(format!(
                    "snapshot window ends ({stop} ns) before it starts ({start} ns)"
                )));
            }
        }
        Ok(())
    }
}

/// Everything the [`super::Recorder`] needs to know.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The bag directory to create (it must not exist). In snapshot mode, the prefix of the
    /// snapshot bags, each named `<uri>_<YYYYMMDD-HHMMSS>[-N]`.
    pub uri: PathBuf,
    /// Storage plugin, preset and compression.
    pub storage: WriterOptions,
    /// rosbag2's file or message compression (`--compression-mode`).
    pub compression: CompressionOptions,
    /// Split files at this size in bytes (0: never).
    pub max_bagfile_size: u64,
    /// Split files at this receive-time span in ns (0: never).
    pub max_bagfile_duration: i64,
    /// Bytes the cache holds before it drops messages while the disk lags, each message counted
    /// at its memory cost ([`super::message_cost`]; 0: no cache, each
    /// message written before its callback returns, as rosbag2 does).
    pub max_cache_size: u64,
    /// Receive-time span in ns of the messages the cache holds while the disk lags, beyond
    /// which it drops messages too (0: no bound by time; rosbag2 Lyrical's
    /// `--max-cache-duration`).
    pub max_cache_duration: i64,
    /// User key/value pairs stored in the bag's metadata.
    pub custom_data: BTreeMap<String, String>,
    /// Which topics to record.
    pub selection: TopicSelection,
    /// Keep looking for new topics after the start (`false`: `--no-discovery`).
    pub discovery: bool,
    /// How often the graph is polled for new topics (graph events also wake discovery at once).
    pub polling_interval: Duration,
    /// QoS to request per topic instead of the one adapted to the publishers' offers.
    pub qos_overrides: BTreeMap<String, QosProfile>,
    /// Start paused: nothing is recorded (or buffered) until resumed.
    pub start_paused: bool,
    /// Messages received before this time (ns, the recorder's clock) are not recorded, as
    /// rosbag2's writer leaves them out (`storage.start_time_ns`).
    pub start_time_ns: Option<i64>,
    /// Messages received after this time (ns) are not recorded (`storage.end_time_ns`).
    pub end_time_ns: Option<i64>,
    /// Receive timestamps from `/clock` (ROS time) instead of the middleware's receive time.
    pub use_sim_time: bool,
    /// Snapshot mode of this project's design: keep per-topic ring buffers and write each
    /// trigger's to a new bag.
    pub snapshot: Option<SnapshotLimits>,
    /// rosbag2's snapshot mode: the cache is one ring of every topic's messages, bounded by
    /// `max_cache_size` and `max_cache_duration` (one must be set), and only the `snapshot`
    /// service writes it, each snapshot into the next file of the bag (the retention's
    /// `max_bag_files` keeps the last ones). Exclusive of `snapshot`.
    pub snapshot_files: bool,
    /// Service introspection of the recorder's own services (off by default, as in rclcpp).
    pub service_introspection: ServiceIntrospection,
    /// Keep the latest message of every transient-local topic across cuts: each split file
    /// starts with it, and a snapshot holds it even when it is older than the buffers
    /// (default true; `--no-repeat-latched` turns it off).
    pub repeat_latched: bool,
    /// Repeat instead the latest messages of these topics only, as many as each one's depth
    /// (rosbag2 Lyrical's `--repeat-transient-local TOPIC[=DEPTH]`; snapshots keep one).
    pub repeat_topics: BTreeMap<String, usize>,
    /// Repeat the latest this many messages of every transient-local topic, also with
    /// `repeat_topics` (whose depths win) and whatever `repeat_latched` says (rosbag2 Lyrical's
    /// `--repeat-all-transient-local [DEPTH]`; 0: none; snapshots keep one).
    pub repeat_all_transient_local: Option<usize>,
    /// Topics recorded at most at a rate (`--throttle TOPIC:=LIMIT`): what goes beyond it is
    /// not recorded, and counted per topic as throttled.
    pub throttle: BTreeMap<String, ThrottleLimit>,
    /// Bounds on the bag's closed files (`--max-bag-files`, `--max-total-size`,
    /// `--max-total-duration`): the oldest are deleted after each split.
    pub retention: Retention,
    /// Stop cleanly (bag closed and readable) when less than this many bytes are free on the
    /// bag's disk, after deleting the oldest files under retention (0: no check).
    pub min_free_space: u64,
    /// At most this many `events/rosbag2_messages_lost` a second, each with what every topic
    /// lost since the last one (0: none; at most [`super::MAX_STATS_RATE`]; default 1, as
    /// rosbag2 Lyrical).
    pub stats_max_publishing_rate: f64,
    /// This many times a second, every topic's totals on `events/rosbag2_rs_statistics`
    /// (received, written, dropped, lost in transport, throttled; 0: none, the default; at
    /// most [`super::MAX_STATS_RATE`]).
    pub statistics_rate: f64,
}

impl Default for RecordOptions {
    fn default() -> Self {
        Self {
            uri: PathBuf::new(),
            storage: WriterOptions::default(),
            compression: CompressionOptions::default(),
            max_bagfile_size: 0,
            max_bagfile_duration: 0,
            max_cache_size: DEFAULT_MAX_CACHE_SIZE,
            max_cache_duration: 0,
            custom_data: BTreeMap::new(),
            selection: TopicSelection::default(),
            discovery: true,
            polling_interval: Duration::from_millis(100),
            qos_overrides: BTreeMap::new(),
            start_paused: false,
            start_time_ns: None,
            end_time_ns: None,
            use_sim_time: false,
            snapshot: None,
            snapshot_files: false,
            service_introspection: ServiceIntrospection::Off,
            repeat_latched: true,
            repeat_topics: BTreeMap::new(),
            repeat_all_transient_local: None,
            throttle: BTreeMap::new(),
            retention: Retention::default(),
            min_free_space: DEFAULT_MIN_FREE_SPACE,
            stats_max_publishing_rate: 1.0,
            statistics_rate: 0.0,
        }
    }
}

impl RecordOptions {
    /// How many of the latest messages of each transient-local topic not in `repeat_topics`
    /// every split file repeats: `repeat_all_transient_local`, else one while `repeat_latched`
    /// and no topic is named, else none.
    pub fn latched_depth(&self) -> usize {
        match self.repeat_all_transient_local {
            Some(depth) => depth,
            None => usize::from(self.repeat_latched && self.repeat_topics.is_empty()),
        }
    }

    /// Checks the options that can be checked before touching the graph or the disk.
    pub fn validate(&self) -> Result<()> {
        if self.uri.as_os_str().is_empty() {
            return Err(RecorderError::InvalidOptions("no output bag given".into()));
        }
        if self.max_bagfile_duration < 0 {
            return Err(RecorderError::InvalidOptions(
                "the maximum bag duration must not be negative".into(),
            ));
        }
        if self.polling_interval.is_zero() {
            return Err(RecorderError::InvalidOptions(
                "the polling interval must be positive".into(),
            ));
        }
        self.selection.validate()?;
        if let Some(limits) = &self.snapshot {
            limits.validate()?;
            if self.retention.is_active() {
                return Err(RecorderError::InvalidOptions(
                    "--max-bag-files, --max-total-size and --max-total-duration do not apply to \
                     snapshots"
                        .into(),
                ));
            }
        }
        if self.snapshot_files {
            if self.snapshot.is_some() {
                return Err(RecorderError::InvalidOptions(
                    "rosbag2's snapshot mode and per-topic snapshot buffers are exclusive".into(),
                ));
            }
            if self.max_cache_size == 0 && self.max_cache_duration <= 0 {
                // ros2bag's record verb refuses it in these words.
                return Err(RecorderError::InvalidOptions(
                    "In snapshot mode, either the max_cache_duration or max_cache_size shall not \
                     be set to zero."
                        .into(),
                ));
            }
        }
        if self.retention.max_total_duration < 0 {
            return Err(RecorderError::InvalidOptions(
                "the maximum total duration must not be negative".into(),
            ));
        }
        Ok(())
    }
}
