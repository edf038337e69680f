//! `rosbag2_rs_interfaces/msg`: what the recorder publishes beyond rosbag2.

use serde::{Deserialize, Serialize};

use crate::builtin_interfaces::{Duration, Time};

/// `rosbag2_rs_interfaces/msg/TopicRecordStatistics`: one recorded topic's totals since its
/// recording started.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicRecordStatistics {
    /// The topic.
    pub topic_name: String,
    /// Messages that arrived while recording (not paused) and passed the topic's throttle.
    pub received: u64,
    /// Messages written to the bag (snapshot mode: to snapshots).
    pub written: u64,
    /// Messages lost in the recorder: a full cache, a failed writer, no `/clock` yet, a failed
    /// snapshot.
    pub dropped: u64,
    /// Messages the middleware lost on the way, where it can tell (else 0).
    pub lost_in_transport: u64,
    /// Messages left out by the topic's `--throttle` limit.
    pub throttled: u64,
    /// Samples too short for their CDR encapsulation header: no message, never recorded.
    pub malformed: u64,
    /// Times the topic went silent while its publishers were still on the graph.
    pub silences: u64,
}

/// `rosbag2_rs_interfaces/msg/RecordStatistics`: what a recorder has recorded so far, per topic
/// (on `events/rosbag2_rs_statistics`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RecordStatistics {
    /// The recorder's clock when taken.
    pub stamp: Time,
    /// The fully qualified name of the recorder node.
    pub node_name: String,
    /// The bag being recorded (empty while stopped; snapshot mode: the snapshots' prefix).
    pub uri: String,
    /// How long the oldest message waiting to be written has waited (zero while the writer
    /// keeps up).
    pub writer_lag: Duration,
    /// What the messages waiting to be written cost in memory, bytes.
    pub bytes_waiting: u64,
    /// Times the writer fell behind by more than the recorder's bound since recording started.
    pub writer_stalls: u64,
    /// Every recorded topic.
    pub topics: Vec<TopicRecordStatistics>,
}

impl_message!(
    TopicRecordStatistics,
    "rosbag2_rs_interfaces/msg/TopicRecordStatistics"
);
impl_message!(
    RecordStatistics,
    "rosbag2_rs_interfaces/msg/RecordStatistics"
);
