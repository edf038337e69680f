//! Per-topic counters (updated lock-free on the subscription path) and the summary the recorder
//! returns when it stops.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rosbag2_rs_storage::TopicMetadata;

/// Counters of one recorded topic.
#[derive(Debug, Default)]
pub struct TopicCounters {
    /// Messages that arrived while recording (not paused) and passed the topic's throttle.
    pub received: AtomicU64,
    /// Messages that could not be written: the cache was full or the writer had failed.
    pub dropped: AtomicU64,
    /// Messages written to a bag (normal mode: by the writer thread as it writes them, then the
    /// bag's count once closed; snapshot mode: in snapshots).
    pub written: AtomicU64,
    /// Snapshot mode: messages evicted from the ring buffer by its limits (by design, not a loss).
    pub evicted: AtomicU64,
    /// Sim time: messages that arrived before the first `/clock` and were not recorded (the
    /// hold was full, or no `/clock` ever came).
    pub dropped_before_clock: AtomicU64,
    /// Snapshot mode: messages taken from the buffers by a snapshot whose writing failed.
    pub lost_in_failed_snapshots: AtomicU64,
    /// The receive time of the first message that arrived while recording (ns; 0: none).
    pub first_received_ns: AtomicI64,
    /// The receive time of the newest message that arrived while recording (ns).
    pub last_received_ns: AtomicI64,
    /// Times the topic went silent: no message for ten of its periods (and at least a second).
    pub silences: AtomicU64,
    /// Messages left out by the topic's `--throttle` limit (by design, not a loss).
    pub throttled: AtomicU64,
    /// Samples too short for their CDR encapsulation header: no message, never recorded
    /// (counted whether or not the recording is paused).
    pub malformed: AtomicU64,
}

impl TopicCounters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Messages lost in the recorder, every way: dropped, not recorded before the first
    /// `/clock`, lost in failed snapshots.
    pub fn lost_in_recorder(&self) -> u64 {
        [
            &self.dropped,
            &self.dropped_before_clock,
            &self.lost_in_failed_snapshots,
        ]
        .iter()
        .map(|n| n.load(Ordering::Relaxed))
        .sum()
    }
}

/// A topic the recorder subscribed to: its bag metadata and counters.
#[derive(Debug, Clone)]
pub struct RecordedTopic {
    /// Name (shared by all its messages), type, offered QoS.
    pub metadata: TopicMetadata,
    /// The shared topic name of its messages.
    pub name: Arc<str>,
    /// Its counters.
    pub counters: Arc<TopicCounters>,
    /// Its definition when it was learned from the graph (no local one); `None`: looked up
    /// by the bag writer.
    pub definition: Option<rosbag2_rs_codec::MessageDefinition>,
}

/// The topics recorded so far, shared by discovery (which adds them before subscribing) and the
/// writer threads (which create them in the bag before writing their messages).
#[derive(Debug, Default)]
pub struct TopicRegistry {
    topics: Mutex<Vec<RecordedTopic>>,
}

/// The `custom_data` key prefix (then the topic name) of the messages the middleware lost on a
/// topic before they reached the recorder.
pub const LOST_MESSAGES_KEY: &str = "lost_messages:";
/// The `custom_data` key prefix (then the topic name) of the messages the recorder received but
/// could not write (the cache was full, or the writer had failed).
pub const DROPPED_MESSAGES_KEY: &str = "dropped_messages:";
/// The `custom_data` key prefix (then the topic name) of the messages that arrived, under sim
/// time, before the first `/clock` and were not recorded.
pub const DROPPED_BEFORE_CLOCK_KEY: &str = "dropped_before_clock:";
/// The `custom_data` key prefix (then the topic name) of the times a topic went silent for
/// longer than 10 of its periods.
pub const SILENCES_KEY: &str = "silences:";
/// The `custom_data` key prefix (then the topic name) of the messages a `--throttle` limit left
/// out.
pub const THROTTLED_MESSAGES_KEY: &str = "throttled_messages:";
/// The `custom_data` key prefix (then the topic name) of the samples too short for their CDR
/// encapsulation header, not recorded.
pub const MALFORMED_MESSAGES_KEY: &str = "malformed_messages:";

impl TopicRegistry {
    /// The bag's loss and stall counts so far, as `custom_data` entries: per topic, the
    /// messages dropped by the recorder ([`DROPPED_MESSAGES_KEY`]), not recorded before the
    /// first `/clock` ([`DROPPED_BEFORE_CLOCK_KEY`]), lost by the middleware on the way
    /// ([`LOST_MESSAGES_KEY`], from `lost`), left out by a throttle
    /// ([`THROTTLED_MESSAGES_KEY`]), the malformed samples not recorded
    /// ([`MALFORMED_MESSAGES_KEY`]), and the topic's silences ([`SILENCES_KEY`]).
    /// Only counts above zero are listed: a missing key means none.
    pub fn health_counts(&self, lost: impl Fn(&str) -> u64) -> BTreeMap<String, String> {
        let mut entries = BTreeMap::new();
        for topic in self.all() {
            let name = &topic.metadata.name;
            let counts = [
                (
                    DROPPED_MESSAGES_KEY,
                    topic.counters.dropped.load(Ordering::Relaxed),
                ),
                (
                    DROPPED_BEFORE_CLOCK_KEY,
                    topic.counters.dropped_before_clock.load(Ordering::Relaxed),
                ),
                (LOST_MESSAGES_KEY, lost(name)),
                (
                    THROTTLED_MESSAGES_KEY,
                    topic.counters.throttled.load(Ordering::Relaxed),
                ),
                (
                    SILENCES_KEY,
                    topic.counters.silences.load(Ordering::Relaxed),
                ),
                (
                    MALFORMED_MESSAGES_KEY,
                    topic.counters.malformed.load(Ordering::Relaxed),
                ),
            ];
            for (key, n) in counts.into_iter().filter(|(_, n)| *n > 0) {
                entries.insert(format!("{key}{name}"), n.to_string());
            }
        }
        entries
    }

    /// Adds a topic.
    pub fn add(&self, topic: RecordedTopic) {
        self.topics.lock().push(topic);
    }

    /// Topics from index `from` on.
    pub fn since(&self, from: usize) -> Vec<RecordedTopic> {
        self.topics.lock().get(from..).unwrap_or_default().to_vec()
    }

    /// All topics.
    pub fn all(&self) -> Vec<RecordedTopic> {
        self.since(0)
    }
}

/// Why the recorder dropped messages (see [`TopicCounters::dropped`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    /// Message compression took most of the writer's time: the CPU is the bottleneck.
    Compression,
    /// Writing to storage took most of the writer's time: the disk is the bottleneck.
    Disk,
    /// The bag writer failed (e.g. the disk is full) and writes nothing more.
    WriterFailed,
}

impl DropCause {
    /// The cause for a writer that spent `compression` of its `busy` time on compression:
    /// compression when that is more than half of it, the disk otherwise.
    pub fn from_shares(compression: std::time::Duration, busy: std::time::Duration) -> Self {
        if compression * 2 > busy {
            Self::Compression
        } else {
            Self::Disk
        }
    }
}

impl std::fmt::Display for DropCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Compression => {
                "compression did not keep up: the CPU is the bottleneck (see \
                 --compression-threads and --compression-queue-size, or compress files instead \
                 of messages, or a larger --max-cache-size for bursts)"
            }
            Self::Disk => "the disk did not keep up (see --max-cache-size)",
            Self::WriterFailed => "the bag could no longer be written",
        })
    }
}

/// One topic's line in the [`RecordSummary`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSummary {
    /// Topic name.
    pub topic: String,
    /// Message type.
    pub type_name: String,
    /// Messages that arrived while recording (and passed the topic's throttle).
    pub received: u64,
    /// Messages written to the bag (or to snapshots).
    pub written: u64,
    /// Messages lost because the disk could not keep up (or the writer failed).
    pub dropped: u64,
    /// Snapshot mode: messages evicted from the ring buffer by its limits.
    pub evicted: u64,
    /// Sim time: messages that arrived before the first `/clock` and were not recorded.
    pub dropped_before_clock: u64,
    /// Snapshot mode: messages lost because the snapshot holding them failed to write.
    pub lost_in_failed_snapshots: u64,
    /// Times the topic went silent for longer than 10 of its periods.
    pub silences: u64,
    /// Messages left out by the topic's `--throttle` limit.
    pub throttled: u64,
    /// Messages the middleware lost before they reached the recorder (Zenoh: gaps in the
    /// publishers' sequence numbers); 0 where the middleware cannot tell.
    pub lost: u64,
    /// Samples too short for their CDR encapsulation header, not recorded.
    pub malformed: u64,
}

/// What a recording did, returned by [`super::Recorder::stop`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordSummary {
    /// Normal mode: the bag directory.
    pub bag: Option<PathBuf>,
    /// Snapshot mode: every snapshot bag written, in order (including the one at shutdown).
    pub snapshots: Vec<PathBuf>,
    /// Snapshot mode: why each snapshot that could not be written failed.
    pub failed_snapshots: Vec<String>,
    /// Per topic, sorted by name.
    pub topics: Vec<TopicSummary>,
    /// Why messages were dropped (`None` when none was).
    pub drop_cause: Option<DropCause>,
    /// Recorded types whose definition is known neither here nor to their publishers' nodes:
    /// recorded with an empty definition.
    pub missing_definitions: Vec<String>,
}

impl RecordSummary {
    pub(crate) fn from_registry(registry: &TopicRegistry) -> Vec<TopicSummary> {
        let mut topics: Vec<TopicSummary> = registry
            .all()
            .into_iter()
            .map(|t| TopicSummary {
                topic: t.metadata.name.clone(),
                type_name: t.metadata.type_name.clone(),
                received: t.counters.received.load(Ordering::Relaxed),
                written: t.counters.written.load(Ordering::Relaxed),
                dropped: t.counters.dropped.load(Ordering::Relaxed),
                evicted: t.counters.evicted.load(Ordering::Relaxed),
                dropped_before_clock: t.counters.dropped_before_clock.load(Ordering::Relaxed),
                lost_in_failed_snapshots: t
                    .counters
                    .lost_in_failed_snapshots
                    .load(Ordering::Relaxed),
                silences: t.counters.silences.load(Ordering::Relaxed),
                throttled: t.counters.throttled.load(Ordering::Relaxed),
                lost: 0,
                malformed: t.counters.malformed.load(Ordering::Relaxed),
            })
            .collect();
        topics.sort_by(|a, b| a.topic.cmp(&b.topic));
        topics
    }

    /// Total messages dropped on all topics.
    pub fn dropped(&self) -> u64 {
        self.topics.iter().map(|t| t.dropped).sum()
    }

    /// Total messages the middleware lost on all topics.
    pub fn lost(&self) -> u64 {
        self.topics.iter().map(|t| t.lost).sum()
    }

    /// Total malformed samples (too short for their encapsulation) on all topics.
    pub fn malformed(&self) -> u64 {
        self.topics.iter().map(|t| t.malformed).sum()
    }

    /// Total messages written on all topics.
    pub fn written(&self) -> u64 {
        self.topics.iter().map(|t| t.written).sum()
    }

    /// Total messages received on all topics.
    pub fn received(&self) -> u64 {
        self.topics.iter().map(|t| t.received).sum()
    }

    /// A human-readable table, one line per topic.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for t in &self.topics {
            out.push_str(&format!(
                "{}: received {}, written {}, dropped {}{}{}{}{}{}{}{}\n",
                t.topic,
                t.received,
                t.written,
                t.dropped,
                if t.lost > 0 {
                    format!(", lost on the way {}", t.lost)
                } else {
                    String::new()
                },
                if t.evicted > 0 {
                    format!(", evicted by the buffer limits {}", t.evicted)
                } else {
                    String::new()
                },
                if t.dropped_before_clock > 0 {
                    format!(
                        ", not recorded before the first /clock {}",
                        t.dropped_before_clock
                    )
                } else {
                    String::new()
                },
                if t.lost_in_failed_snapshots > 0 {
                    format!(", lost in failed snapshots {}", t.lost_in_failed_snapshots)
                } else {
                    String::new()
                },
                if t.silences > 0 {
                    format!(", went silent {} times", t.silences)
                } else {
                    String::new()
                },
                if t.throttled > 0 {
                    format!(", left out by the throttle {}", t.throttled)
                } else {
                    String::new()
                },
                if t.malformed > 0 {
                    format!(
                        ", malformed (too short for their encapsulation) {}",
                        t.malformed
                    )
                } else {
                    String::new()
                }
            ));
        }
        out
    }
}
