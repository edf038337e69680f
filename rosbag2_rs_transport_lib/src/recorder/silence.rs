//! Silent topics: a topic that was publishing (for at least [`MIN_SILENCE_NS`]: a single burst
//! is not a rate) and stops for longer than [`SILENCE_FACTOR`] times its measured period (and
//! at least [`MIN_SILENCE_NS`]) is reported once, and again when it publishes again.
//!
//! The recorder's watch thread looks at each topic's counters a few times a second
//! ([`SilenceWatch::observe`]) on the recorder's clock (virtual time in tests, ROS time under
//! sim time). The period is measured from the receive times seen between two looks (at the
//! first look: since the first message): the mean inter-arrival of the messages in between,
//! smoothed across looks and weighted by how many messages the look saw. The subscription path
//! only stores the receive times of the first and the newest message.

use std::collections::HashMap;

/// A topic is silent after this many of its measured periods without a message.
pub const SILENCE_FACTOR: f64 = 10.0;
/// ... and never before this long (ns), so that jitter on a fast topic is no silence.
pub const MIN_SILENCE_NS: i64 = 1_000_000_000;

/// A change in a topic's activity.
#[derive(Debug, Clone, PartialEq)]
pub enum SilenceEvent {
    /// No message for `silent_ns`, more than the threshold for a topic of `period_ns`.
    Silent {
        /// The topic's measured period before it went silent.
        period_ns: i64,
        /// How long it has been silent at the look that noticed it.
        silent_ns: i64,
    },
    /// A topic reported silent publishes again.
    Resumed,
}

#[derive(Debug, Default)]
struct Activity {
    /// Messages received at the last look.
    seen: u64,
    /// The receive time of the first message.
    first_ns: i64,
    /// The receive time of the newest of them (`None`: no baseline to measure from).
    last_ns: Option<i64>,
    /// The measured period.
    period_ns: Option<f64>,
    /// The silence started no earlier than this (a pause of the recorder restarts it).
    quiet_from: i64,
    /// A silence was reported and has not ended.
    silent: bool,
}

/// Per-topic activity across looks; see the module documentation.
#[derive(Debug, Default)]
pub struct SilenceWatch {
    topics: HashMap<String, Activity>,
}

impl SilenceWatch {
    /// Looks at `topic` at time `now`: `received` messages so far, the first received at
    /// `first_ns` and the newest at `last_ns`. Returns what changed since the last look.
    pub fn observe(
        &mut self,
        topic: &str,
        received: u64,
        [first_ns, last_ns]: [i64; 2],
        now: i64,
    ) -> Option<SilenceEvent> {
        let a = self.topics.entry(topic.to_string()).or_default();
        if received > a.seen {
            let mut fresh = received - a.seen;
            let mut previous = a.last_ns.filter(|_| !a.silent);
            if a.seen == 0 && a.last_ns.is_none() {
                a.first_ns = first_ns;
                if received > 1 {
                    (previous, fresh) = (Some(first_ns), received - 1);
                }
            }
            if let Some(previous) = previous {
                let sample = (last_ns - previous) as f64 / fresh as f64;
                let weight = fresh as f64 / (fresh as f64 + 10.0);
                a.period_ns = Some(match a.period_ns {
                    Some(p) => p + (sample - p) * weight,
                    None => sample,
                });
            }
            a.seen = received;
            a.last_ns = Some(last_ns);
            return std::mem::take(&mut a.silent).then_some(SilenceEvent::Resumed);
        }
        let (Some(last), Some(period), false) = (a.last_ns, a.period_ns, a.silent) else {
            return None;
        };
        if last - a.first_ns < MIN_SILENCE_NS {
            return None; // a burst, not a rate
        }
        let silent_ns = now - last.max(a.quiet_from);
        let threshold = ((period * SILENCE_FACTOR) as i64).max(MIN_SILENCE_NS);
        if silent_ns <= threshold {
            return None;
        }
        a.silent = true;
        Some(SilenceEvent::Silent {
            period_ns: period as i64,
            silent_ns,
        })
    }

    /// The recorder is paused at `now`: no topic is silent while it is, and silences count
    /// from the resume on (the next look after it). Measured periods are kept.
    pub fn pause(&mut self, now: i64) {
        for a in self.topics.values_mut() {
            a.quiet_from = now;
            a.last_ns = a.last_ns.map(|_| now);
            a.silent = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// Feeds a topic publishing every `period` ms from `from` to `to` (exclusive), looked at
    /// every 200 ms; returns the events and the message count.
    fn publish(
        watch: &mut SilenceWatch,
        received: &mut u64,
        period: i64,
        from: i64,
        to: i64,
    ) -> Vec<SilenceEvent> {
        let mut events = Vec::new();
        let mut next = from;
        let (mut first, mut last) = (None, 0);
        for now in (from..to).step_by(10) {
            while next <= now {
                *received += 1;
                first.get_or_insert(next);
                last = next;
                next += period;
            }
            if now % 200 == 0 {
                let seen = [first.unwrap_or(0) * MS, last * MS];
                events.extend(watch.observe("/t", *received, seen, now * MS));
            }
        }
        events
    }

    fn look(watch: &mut SilenceWatch, received: u64, last: i64, now: i64) -> Option<SilenceEvent> {
        watch.observe("/t", received, [0, last * MS], now * MS)
    }

    #[test]
    fn a_topic_silent_for_ten_periods_is_reported_once_and_again_when_it_resumes() {
        let mut watch = SilenceWatch::default();
        let mut n = 0;
        // 10 Hz for 5 s: never silent.
        assert!(publish(&mut watch, &mut n, 100, 0, 5000).is_empty());
        let last = 4900;
        // Quiet: 1 s (10 periods) is not yet silent, a look after it is, once.
        assert_eq!(look(&mut watch, n, last, 5800), None);
        assert_eq!(look(&mut watch, n, last, 5900), None);
        match look(&mut watch, n, last, 6000) {
            Some(SilenceEvent::Silent {
                period_ns,
                silent_ns,
            }) => {
                assert_eq!(period_ns, 100 * MS);
                assert_eq!(silent_ns, 1100 * MS);
            }
            other => panic!("expected a silence, got {other:?}"),
        }
        assert_eq!(look(&mut watch, n, last, 9000), None);
        assert_eq!(
            look(&mut watch, n + 1, 9100, 9200),
            Some(SilenceEvent::Resumed)
        );
        // The gap did not become the period: the next silence needs 10 × 100 ms again.
        assert_eq!(look(&mut watch, n + 2, 9200, 9400), None);
        assert!(matches!(
            look(&mut watch, n + 2, 9200, 10300),
            Some(SilenceEvent::Silent { .. })
        ));
    }

    #[test]
    fn a_slow_topic_needs_ten_of_its_own_periods_and_a_fast_one_at_least_a_second() {
        let mut watch = SilenceWatch::default();
        let mut n = 0;
        // 1 Hz for 10 s.
        assert!(publish(&mut watch, &mut n, 1000, 0, 10_000).is_empty());
        assert_eq!(look(&mut watch, n, 9000, 18_800), None);
        assert!(look(&mut watch, n, 9000, 19_200).is_some());

        let mut watch = SilenceWatch::default();
        let mut n = 0;
        // 1 kHz: 10 periods is 10 ms, but a silence needs a second.
        assert!(publish(&mut watch, &mut n, 1, 0, 2000).is_empty());
        assert_eq!(look(&mut watch, n, 1999, 2800), None);
        assert!(look(&mut watch, n, 1999, 3200).is_some());
    }

    #[test]
    fn a_burst_seen_at_one_look_is_measured_from_its_first_message() {
        let mut watch = SilenceWatch::default();
        // 20 messages 100 ms apart, all seen at the first look.
        let seen = [1000 * MS, 2900 * MS];
        assert_eq!(watch.observe("/t", 20, seen, 3000 * MS), None);
        assert_eq!(watch.observe("/t", 20, seen, 3900 * MS), None);
        assert_eq!(
            watch.observe("/t", 20, seen, 4000 * MS),
            Some(SilenceEvent::Silent {
                period_ns: 100 * MS,
                silent_ns: 1100 * MS
            })
        );
    }

    #[test]
    fn a_burst_then_quiet_is_no_silence() {
        let mut watch = SilenceWatch::default();
        // 30 messages within 30 ms, then nothing.
        assert_eq!(
            watch.observe("/t", 30, [1000 * MS, 1029 * MS], 1100 * MS),
            None
        );
        assert_eq!(
            watch.observe("/t", 30, [1000 * MS, 1029 * MS], 60_000 * MS),
            None
        );
    }

    #[test]
    fn a_topic_that_never_published_twice_or_a_paused_recorder_is_no_silence() {
        let mut watch = SilenceWatch::default();
        assert_eq!(look(&mut watch, 0, 0, 100_000), None);
        assert_eq!(look(&mut watch, 1, 50, 100), None);
        assert_eq!(
            look(&mut watch, 1, 50, 100_000),
            None,
            "one message: no period"
        );

        let mut watch = SilenceWatch::default();
        let mut n = 0;
        assert!(publish(&mut watch, &mut n, 100, 0, 2000).is_empty());
        // Paused from 2 s to 10 s: nothing arrives, nothing is silent.
        for now in (2000..10_000).step_by(200) {
            watch.pause(now * MS);
        }
        // Resumed at 10 s: silent only 10 periods after the resume.
        assert_eq!(look(&mut watch, n, 1900, 10_800), None);
        assert!(look(&mut watch, n, 1900, 11_200).is_some());
    }
}
