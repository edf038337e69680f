//! `events/rosbag2_messages_lost` (rosbag2 Lyrical): the messages each topic lost since the last
//! event, before reaching the recorder (the middleware's count) and in it (dropped: a full cache,
//! a failed writer, no `/clock` yet, a failed snapshot), published at most `rate` times a second
//! and only when something was lost.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use rosbag2_rs_interfaces::rosbag2_interfaces::msg::{
    MessagesLostEvent, MessagesLostEventTopicStat,
};

use rosbag2_rs_storage::QosProfile;

use super::error::Result;
use super::rated_publisher::RatedPublisher;
use super::stats::RecordedTopic;
use rosbag2_rs_middleware::Middleware;

/// The topic of the lost-messages events, relative to the recorder node (as in rosbag2).
pub const MESSAGES_LOST_TOPIC: &str = "events/rosbag2_messages_lost";

/// Publishes the lost-messages events.
pub(super) struct LossEvents {
    out: RatedPublisher<MessagesLostEvent>,
    node_name: String,
    /// Per topic, the totals (transport, recorder) already reported.
    reported: HashMap<String, (u64, u64)>,
}

impl LossEvents {
    /// Events at most `rate` times a second (QoS from `overrides` if given there); `None` for a
    /// rate of 0 (no events).
    pub fn new(
        middleware: &dyn Middleware,
        rate: f64,
        overrides: &BTreeMap<String, QosProfile>,
    ) -> Result<Option<Self>> {
        let what = "the statistics publishing rate";
        Ok(
            RatedPublisher::new(middleware, MESSAGES_LOST_TOPIC, rate, what, overrides)?.map(
                |out| Self {
                    out,
                    node_name: middleware.node().fully_qualified_name(),
                    reported: HashMap::new(),
                },
            ),
        )
    }

    /// The longest the caller may wait between two calls of [`LossEvents::publish_due`].
    pub fn period(&self) -> Duration {
        self.out.period()
    }

    /// Publishes what `topics` lost since the last event (`lost_in_transport` gives the
    /// middleware's total of a topic), unless nothing was or the last event is too recent.
    pub fn publish_due(
        &mut self,
        topics: &[RecordedTopic],
        lost_in_transport: impl Fn(&str) -> u64,
    ) {
        if !self.out.is_due() {
            return;
        }
        let totals = topics.iter().map(|t| {
            (
                t.metadata.name.clone(),
                (
                    lost_in_transport(&t.metadata.name),
                    t.counters.lost_in_recorder(),
                ),
            )
        });
        let stats = losses_since(&mut self.reported, totals);
        if !stats.is_empty() {
            self.out.publish(&MessagesLostEvent {
                node_name: self.node_name.clone(),
                messages_lost_statistics: stats,
            });
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
