//! `events/rosbag2_messages_lost` (rosbag2 Lyrical): the messages each topic lost since the last
//! event, before reaching the recorder (the middleware's count) and in it (dropped: a full cache,
//! a failed writer, no `/clock` yet, a failed snapshot), published at most `rate` times a second
//! and only when something was lost.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rosbag2_rs_interfaces::rosbag2_interfaces::msg::{
    MessagesLostEvent, MessagesLostEventTopicStat,
};
use rosbag2_rs_interfaces::{try_to_cdr, MessageType};
use rosbag2_rs_storage::QosProfile;

use super::error::{RecorderError, Result};
use super::stats::RecordedTopic;
use crate::middleware::{Middleware, RawPublisher};

/// The topic of the lost-messages events, relative to the recorder node (as in rosbag2).
pub const MESSAGES_LOST_TOPIC: &str = "events/rosbag2_messages_lost";

/// rosbag2's bound on `--stats-max-publishing-rate`.
pub const MAX_STATS_RATE: f64 = 1000.0;

/// Publishes the lost-messages events.
pub(super) struct LossEvents {
    publisher: Box<dyn RawPublisher>,
    node_name: String,
    period: Duration,
    last_event: Option<Instant>,
    /// Per topic, the totals (transport, recorder) already reported.
    reported: HashMap<String, (u64, u64)>,
}

impl LossEvents {
    /// Events at most `rate` times a second; `None` for a rate of 0 (no events).
    pub fn new(middleware: &dyn Middleware, rate: f64) -> Result<Option<Self>> {
        if !(0.0..=MAX_STATS_RATE).contains(&rate) {
            return Err(RecorderError::InvalidOptions(format!(
                "the statistics publishing rate must be within 0 and {MAX_STATS_RATE} Hz, \
                 got {rate}"
            )));
        }
        if rate == 0.0 {
            return Ok(None);
        }
        let publisher = middleware.create_publisher(
            MESSAGES_LOST_TOPIC,
            MessagesLostEvent::TYPE_NAME,
            &QosProfile {
                depth: 10,
                ..QosProfile::default()
            },
        )?;
        Ok(Some(Self {
            publisher,
            node_name: middleware.node().fully_qualified_name(),
            period: Duration::from_secs_f64(1.0 / rate),
            last_event: None,
            reported: HashMap::new(),
        }))
    }

    /// The longest the caller may wait between two calls of [`LossEvents::publish_due`].
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Publishes what `topics` lost since the last event (`lost_in_transport` gives the
    /// middleware's total of a topic), unless nothing was or the last event is too recent.
    pub fn publish_due(
        &mut self,
        topics: &[RecordedTopic],
        lost_in_transport: impl Fn(&str) -> u64,
    ) {
        let now = Instant::now();
        if self.last_event.is_some_and(|t| now < t + self.period) {
            return;
        }
        let totals = topics.iter().map(|t| {
            let c = &t.counters;
            let in_recorder = [
                &c.dropped,
                &c.dropped_before_clock,
                &c.lost_in_failed_snapshots,
            ]
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .sum();
            (
                t.metadata.name.clone(),
                (lost_in_transport(&t.metadata.name), in_recorder),
            )
        });
        let stats = losses_since(&mut self.reported, totals);
        if stats.is_empty() {
            return;
        }
        let event = MessagesLostEvent {
            node_name: self.node_name.clone(),
            messages_lost_statistics: stats,
        };
        let bytes = match try_to_cdr(&event) {
            Ok(bytes) => bytes,
            Err(e) => {
                log::warn!("cannot encode the event of {MESSAGES_LOST_TOPIC}: {e}");
                return;
            }
        };
        match self.publisher.publish(&bytes.into()) {
            Ok(()) => self.last_event = Some(now),
            Err(e) => log::warn!("cannot publish on {MESSAGES_LOST_TOPIC}: {e}"),
        }
    }
}

/// The losses of each topic since `reported` (which is brought up to date): topics that lost
/// nothing new are left out.
fn losses_since(
    reported: &mut HashMap<String, (u64, u64)>,
    totals: impl Iterator<Item = (String, (u64, u64))>,
) -> Vec<MessagesLostEventTopicStat> {
    let mut stats = Vec::new();
    for (topic, (transport, recorder)) in totals {
        let (old_transport, old_recorder) = reported.get(&topic).copied().unwrap_or_default();
        let (new_transport, new_recorder) = (
            transport.saturating_sub(old_transport),
            recorder.saturating_sub(old_recorder),
        );
        if new_transport > 0 || new_recorder > 0 {
            stats.push(MessagesLostEventTopicStat {
                topic_name: topic.clone(),
                messages_lost_in_transport: new_transport,
                messages_lost_in_recorder: new_recorder,
            });
        }
        reported.insert(topic, (transport, recorder));
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_counts_what_was_lost_since_the_last_one() {
        let mut reported = HashMap::new();
        let totals = |list: &[(&str, u64, u64)]| {
            list.iter()
                .map(|(t, a, b)| (t.to_string(), (*a, *b)))
                .collect::<Vec<_>>()
                .into_iter()
        };
        let first = losses_since(&mut reported, totals(&[("/a", 2, 0), ("/b", 0, 0)]));
        assert_eq!(first.len(), 1);
        assert_eq!(
            (
                first[0].topic_name.as_str(),
                first[0].messages_lost_in_transport
            ),
            ("/a", 2)
        );
        assert!(losses_since(&mut reported, totals(&[("/a", 2, 0), ("/b", 0, 0)])).is_empty());
        let third = losses_since(&mut reported, totals(&[("/a", 2, 5), ("/b", 1, 0)]));
        let counts: Vec<_> = third
            .iter()
            .map(|s| {
                (
                    s.topic_name.as_str(),
                    s.messages_lost_in_transport,
                    s.messages_lost_in_recorder,
                )
            })
            .collect();
        assert_eq!(counts, [("/a", 0, 5), ("/b", 1, 0)]);
    }
}
