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
    /// Adds a message received at `time` (ns); times come in non-decreasing order.
    pub fn add(&mut self, time: i64) {
        if self.count == 0 {
            self.first = time;
        } else {
            let interval = time - self.last;
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
        let span = self.last - self.first;
        (self.count >= 2 && span > 0).then(|| (self.count - 1) as f64 * 1e9 / span as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
