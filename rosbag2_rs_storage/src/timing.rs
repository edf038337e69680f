//! Per-topic arrival statistics (`info -v`): message rate, spread of the inter-arrival times and
//! the largest gap, accumulated in one pass over receive times.

/// Receive-time statistics of one topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArrivalStats {
    /// Messages seen.
    pub count: u64,
    /// Receive time of the first (ns).
    pub first: i64,
    /// Receive time of the last (ns).
    pub last: i64,
    /// Shortest time between consecutive messages (ns); 0 with fewer than two messages.
    pub min_interval: i64,
    /// Longest time between consecutive messages (ns), the largest gap.
    pub max_interval: i64,
    /// Receive time of the message that ends the largest gap (ns).
    pub max_interval_end: i64,
}

impl ArrivalStats {
    /// Adds a message received at `time` (ns); times come in non-decreasing order from an
    /// intact bag, in any order from a damaged one (an MCAP log time past 2^63 reads as a
    /// negative time): intervals saturate.
    pub fn add(&mut self, time: i64) {
        if self.count == 0 {
            self.first = time;
        } else {
            let interval = time.saturating_sub(self.last);
            if self.count == 1 || interval < self.min_interval {
                self.min_interval = interval;
            }
            if self.count == 1 || interval > self.max_interval {
                self.max_interval = interval;
                self.max_interval_end = time;
            }
        }
        self.last = time;
        self.count += 1;
    }

    /// Mean rate in Hz over the span from the first to the last message; `None` with fewer than
    /// two messages or no time between them.
    pub fn mean_rate(&self) -> Option<f64> {
        let span = self.last.saturating_sub(self.first);
        (self.count >= 2 && span > 0).then(|| (self.count - 1) as f64 * 1e9 / span as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Times from a file whose MCAP log times straddle 2^63 (`i64::MAX - 9`, then one read
    /// as `i64::MIN + 100`): the interval overflowed (a panic of `export` and `info -v`,
    /// found by `tools/hostile_cli.sh`). It saturates.
    #[test]
    fn times_out_of_order_at_the_ends_of_the_range_saturate() {
        let mut s = ArrivalStats::default();
        s.add(i64::MAX - 9);
        s.add(i64::MIN + 100);
        assert_eq!(s.count, 2);
        assert_eq!(s.min_interval, i64::MIN);
        assert_eq!(s.mean_rate(), None);
        let mut s = ArrivalStats::default();
        s.add(i64::MIN);
        s.add(i64::MAX);
        assert_eq!(s.max_interval, i64::MAX);
        assert!(s.mean_rate().is_some());
    }

    #[test]
    fn rate_intervals_and_largest_gap() {
        let mut s = ArrivalStats::default();
        assert_eq!(s.mean_rate(), None);
        for t in [0, 100_000_000, 200_000_000, 700_000_000, 750_000_000] {
            s.add(t);
        }
        assert_eq!(s.count, 5);
        assert_eq!(s.min_interval, 50_000_000);
        assert_eq!(s.max_interval, 500_000_000);
        assert_eq!(s.max_interval_end, 700_000_000);
        let rate = s.mean_rate().unwrap();
        assert!((rate - 4.0 / 0.75).abs() < 1e-9, "{rate}");
    }
}
