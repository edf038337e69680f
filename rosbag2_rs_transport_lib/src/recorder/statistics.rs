//! `events/rosbag2_rs_statistics` (`record --statistics-rate HZ`): what the recorder has
//! received, written, dropped, seen lost in transport and throttled, per topic, published at a
//! settable rate for live monitoring (rosbag2 #2007 asks for it; rosbag2 itself reports only
//! losses, on `events/rosbag2_messages_lost`).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rosbag2_rs_interfaces::builtin_interfaces::{self, Time};
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::msg::{RecordStatistics, TopicRecordStatistics};

use rosbag2_rs_storage::QosProfile;

use super::cache::Backlog;
use super::error::Result;
use super::rated_publisher::RatedPublisher;
use super::stats::RecordedTopic;
use rosbag2_rs_middleware::Middleware;

/// The topic of the statistics, relative to the recorder node.
pub const STATISTICS_TOPIC: &str = "events/rosbag2_rs_statistics";

/// Publishes the statistics.
pub(super) struct Statistics {
    out: RatedPublisher<RecordStatistics>,
    node_name: String,
}

/// What the statistics are taken from.
pub(super) struct Snapshot<'a> {
    /// The recorder's clock, ns.
    pub now: i64,
    /// The bag being recorded, if any.
    pub uri: Option<&'a std::path::Path>,
    /// The recorded topics.
    pub topics: &'a [RecordedTopic],
    /// What waits to be written.
    pub backlog: Backlog,
    /// Times the writer fell behind so far.
    pub writer_stalls: u64,
}

impl Statistics {
    /// Statistics `rate` times a second (QoS from `overrides` if given there); `None` for a rate
    /// of 0 (none).
    pub fn new(
        middleware: &dyn Middleware,
        rate: f64,
        overrides: &BTreeMap<String, QosProfile>,
    ) -> Result<Option<Self>> {
        let what = "the statistics rate";
        Ok(
            RatedPublisher::new(middleware, STATISTICS_TOPIC, rate, what, overrides)?.map(|out| {
                Self {
                    out,
                    node_name: middleware.node().fully_qualified_name(),
                }
            }),
        )
    }

    /// The longest the caller may wait between two calls of [`Statistics::publish_due`].
    pub fn period(&self) -> Duration {
        self.out.period()
    }

    /// Publishes the totals of `from` when a period has passed since the last statistics
    /// (`lost_in_transport` gives the middleware's count of a topic).
    pub fn publish_due(&mut self, from: Snapshot<'_>, lost_in_transport: impl Fn(&str) -> u64) {
        if !self.out.is_due() {
            return;
        }
        self.out.publish(&RecordStatistics {
            stamp: Time::from_nanos(from.now),
            node_name: self.node_name.clone(),
            uri: from
                .uri
                .map(|u| u.display().to_string())
                .unwrap_or_default(),
            writer_lag: builtin_interfaces::Duration::from_nanos(from.backlog.lag_ns),
            bytes_waiting: from.backlog.bytes,
            writer_stalls: from.writer_stalls,
            topics: from
                .topics
                .iter()
                .map(|t| topic_statistics(t, lost_in_transport(&t.metadata.name)))
                .collect(),
        });
    }
}

/// `topic`'s totals.
fn topic_statistics(topic: &RecordedTopic, lost_in_transport: u64) -> TopicRecordStatistics {
    let c = &topic.counters;
    let load = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
    TopicRecordStatistics {
        topic_name: topic.metadata.name.clone(),
        received: load(&c.received),
        written: load(&c.written),
        dropped: c.lost_in_recorder(),
        lost_in_transport,
        throttled: load(&c.throttled),
        malformed: load(&c.malformed),
        silences: load(&c.silences),
    }
}
