//! The writer's lag: how long the oldest message not yet written has waited (a slow or stalled
//! disk, or a writer that stopped, shows here first; rosbag2's recorder stops writing without a
//! word in ros2/rosbag2#2463). The recorder's watch thread looks a few times a second
//! ([`LagWatch::observe`], on the recorder's clock): past [`LAG_BOUND_NS`] it warns once, and
//! says when the writer has caught up (under half the bound); the statistics carry the lag, the
//! bytes waiting and the number of stalls.

use super::cache::Backlog;

/// The writer is behind when the oldest message not yet written has waited this long, ns.
pub const LAG_BOUND_NS: i64 = 2_000_000_000;

/// A change in the writer's lag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum LagEvent {
    /// The writer fell behind: `backlog` waits.
    Behind(Backlog),
    /// It caught up, `after_ns` after it fell behind.
    CaughtUp {
        /// From the receive time of the oldest message waiting when it fell behind.
        after_ns: i64,
    },
}

/// Watches the writer's backlog for stalls.
#[derive(Debug, Default)]
pub(super) struct LagWatch {
    /// When the oldest message waiting arrived, while the writer is behind.
    behind_since: Option<i64>,
    stalls: u64,
}

impl LagWatch {
    /// Looks at `backlog` at `now`; returns what changed.
    pub fn observe(&mut self, backlog: Backlog, now: i64) -> Option<LagEvent> {
        match self.behind_since {
            None if backlog.lag_ns > LAG_BOUND_NS => {
                self.behind_since = Some(now - backlog.lag_ns);
                self.stalls += 1;
                Some(LagEvent::Behind(backlog))
            }
            Some(since) if backlog.lag_ns <= LAG_BOUND_NS / 2 => {
                self.behind_since = None;
                Some(LagEvent::CaughtUp {
                    after_ns: now - since,
                })
            }
            _ => None,
        }
    }

    /// Times the writer fell behind so far.
    pub fn stalls(&self) -> u64 {
        self.stalls
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn lag(lag_ns: i64) -> Backlog {
        Backlog { lag_ns, bytes: 7 }
    }

    #[test]
    fn a_stall_is_reported_once_and_its_end_with_its_length() {
        let mut watch = LagWatch::default();
        assert_eq!(watch.observe(lag(S), 10 * S), None);
        assert_eq!(
            watch.observe(lag(2 * S), 11 * S),
            None,
            "at the bound: not yet"
        );
        assert_eq!(
            watch.observe(lag(3 * S), 12 * S),
            Some(LagEvent::Behind(lag(3 * S)))
        );
        assert_eq!(watch.observe(lag(9 * S), 18 * S), None, "reported once");
        assert_eq!(
            watch.observe(lag(S + 1), 19 * S),
            None,
            "above half the bound"
        );
        assert_eq!(
            watch.observe(lag(S / 2), 20 * S),
            Some(LagEvent::CaughtUp { after_ns: 11 * S })
        );
        assert_eq!(watch.stalls(), 1);
        watch.observe(lag(5 * S), 30 * S);
        assert_eq!(watch.stalls(), 2);
    }
}
