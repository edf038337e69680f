//! Per-topic throttling while recording (`record --throttle TOPIC:=LIMIT`; rosbag2 #2211 asks
//! for it): a limit in messages or bytes per second of bag time (the receive timestamps).
//!
//! The limit is a hard bound: any window of one second of bag time holds at most the limit's
//! worth of recorded messages (below 1 message/s: consecutive messages are at least the period
//! apart). Within that bound, messages are kept evenly: each kept message books the next slot one
//! period (its cost over the rate) later, and a message is kept when it arrives no earlier than
//! half its period before its slot, so an input with jitter keeps the full rate instead of
//! losing every message that comes a little early.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

const SECOND_NS: i64 = 1_000_000_000;

/// How much of a topic may be recorded per second of bag time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThrottleLimit {
    /// Messages per second (positive; below 1: one message per `1/rate` seconds).
    MessagesPerSecond(f64),
    /// Payload bytes per second (positive).
    BytesPerSecond(u64),
}

/// A throttle limit that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThrottleLimitError {
    /// Not a number, with or without a unit.
    #[error(
        "'{0}': expected messages per second (10, 2.5hz) or bytes per second (500B/s, 64kB/s, \
         2MB/s, 1GB/s)"
    )]
    Syntax(String),
    /// Zero, negative or not finite.
    #[error("'{0}': the limit must be positive")]
    NotPositive(String),
}

impl FromStr for ThrottleLimit {
    type Err = ThrottleLimitError;

    /// `10` or `10hz`: messages per second; `500B/s`, `64kB/s`, `2MB/s`, `1GB/s` (powers of
    /// 1000) or `64KiB/s`, `2MiB/s`, `1GiB/s` (powers of 1024): bytes per second.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let syntax = || ThrottleLimitError::Syntax(text.to_string());
        let positive = || ThrottleLimitError::NotPositive(text.to_string());
        let lower = text.trim().to_ascii_lowercase();
        if let Some(amount) = lower.strip_suffix("b/s") {
            let units: [(&str, u64); 7] = [
                ("ki", 1 << 10),
                ("mi", 1 << 20),
                ("gi", 1 << 30),
                ("k", 1_000),
                ("m", 1_000_000),
                ("g", 1_000_000_000),
                ("", 1),
            ];
            let (number, scale) = units
                .iter()
                .find_map(|(unit, scale)| amount.strip_suffix(unit).map(|n| (n, *scale)))
                .ok_or_else(syntax)?;
            let value: f64 = number.trim().parse().map_err(|_| syntax())?;
            let bytes = value * scale as f64;
            if !(bytes.is_finite() && bytes >= 1.0 && bytes <= u64::MAX as f64) {
                return Err(positive());
            }
            return Ok(Self::BytesPerSecond(bytes as u64));
        }
        let number = lower.strip_suffix("hz").unwrap_or(&lower);
        let rate: f64 = number.trim().parse().map_err(|_| syntax())?;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(positive());
        }
        Ok(Self::MessagesPerSecond(rate))
    }
}

impl fmt::Display for ThrottleLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MessagesPerSecond(rate) => write!(f, "{rate} Hz"),
            Self::BytesPerSecond(bytes) => write!(f, "{bytes} B/s"),
        }
    }
}

/// The state of one topic's throttle.
#[derive(Debug)]
pub struct Throttle {
    limit: ThrottleLimit,
    /// Length of the window the bound applies to, ns.
    window_ns: i64,
    /// Most cost (messages or bytes) recorded in any window.
    cap: u64,
    /// The recorded messages still within a window of the newest: (receive time, cost).
    recent: VecDeque<(i64, u64)>,
    /// Their total cost.
    recent_cost: u64,
    /// The slot booked for the next message (ns); `None` before the first.
    next_slot: Option<i64>,
}

impl Throttle {
    /// A throttle of `limit`, with nothing recorded yet.
    pub fn new(limit: ThrottleLimit) -> Self {
        let (window_ns, cap) = match limit {
            ThrottleLimit::MessagesPerSecond(rate) if rate < 1.0 => {
                ((SECOND_NS as f64 / rate).ceil() as i64, 1)
            }
            ThrottleLimit::MessagesPerSecond(rate) => (SECOND_NS, rate.floor() as u64),
            ThrottleLimit::BytesPerSecond(bytes) => (SECOND_NS, bytes),
        };
        Self {
            limit,
            window_ns,
            cap,
            recent: VecDeque::new(),
            recent_cost: 0,
            next_slot: None,
        }
    }

    /// Whether a message of `bytes` received at `recv_ns` is recorded (and then counted against
    /// the limit). A message larger than a bytes-per-second limit never is. A receive time
    /// before the last recorded one (the clock went back) starts the throttle afresh.
    pub fn admit(&mut self, recv_ns: i64, bytes: u64) -> bool {
        let cost = match self.limit {
            ThrottleLimit::MessagesPerSecond(_) => 1,
            ThrottleLimit::BytesPerSecond(_) => bytes,
        };
        if cost > self.cap {
            return false;
        }
        if self.recent.back().is_some_and(|&(last, _)| recv_ns < last) {
            *self = Self::new(self.limit);
        }
        while let Some(&(t, c)) = self.recent.front() {
            if recv_ns.saturating_sub(t) < self.window_ns {
                break;
            }
            self.recent.pop_front();
            self.recent_cost -= c;
        }
        if self.recent_cost + cost > self.cap {
            return false;
        }
        let period = self.period_ns(cost);
        if self
            .next_slot
            .is_some_and(|slot| recv_ns < slot.saturating_sub(period / 2))
        {
            return false;
        }
        self.next_slot = Some(
            self.next_slot
                .unwrap_or(recv_ns)
                .max(recv_ns)
                .saturating_add(period),
        );
        self.recent.push_back((recv_ns, cost));
        self.recent_cost += cost;
        true
    }

    /// The time `cost` takes at the limit's rate, ns.
    fn period_ns(&self, cost: u64) -> i64 {
        let rate = match self.limit {
            ThrottleLimit::MessagesPerSecond(rate) => rate,
            ThrottleLimit::BytesPerSecond(bytes) => bytes as f64,
        };
        (cost as f64 * SECOND_NS as f64 / rate) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// The most cost recorded within any window of `window` ns starting at a recorded message
    /// (the fullest windows start at one).
    fn fullest_window(kept: &[(i64, u64)], window: i64) -> u64 {
        kept.iter()
            .map(|&(start, _)| {
                kept.iter()
                    .filter(|&&(t, _)| t >= start && t - start < window)
                    .map(|&(_, c)| c)
                    .sum()
            })
            .max()
            .unwrap_or(0)
    }

    /// Feeds `arrivals` (receive time, bytes), returns what is kept.
    fn run(limit: ThrottleLimit, arrivals: impl Iterator<Item = (i64, u64)>) -> Vec<(i64, u64)> {
        let mut throttle = Throttle::new(limit);
        arrivals
            .filter(|&(t, bytes)| throttle.admit(t, bytes))
            .collect()
    }

    /// A 30 Hz input with up to ±`jitter_ms` of pseudo-random jitter, for `seconds`.
    fn jittery(seconds: i64, jitter_ms: i64) -> impl Iterator<Item = (i64, u64)> {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        (0..seconds * 30).map(move |i| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let jitter = (seed % (2 * jitter_ms as u64 + 1)) as i64 - jitter_ms;
            (i * SECOND_NS / 30 + jitter * MS, 100 + seed % 900)
        })
    }

    #[test]
    fn limits_parse_as_messages_or_bytes_per_second() {
        let parse = |s: &str| s.parse::<ThrottleLimit>();
        assert_eq!(parse("10"), Ok(ThrottleLimit::MessagesPerSecond(10.0)));
        assert_eq!(parse("2.5Hz"), Ok(ThrottleLimit::MessagesPerSecond(2.5)));
        assert_eq!(parse("500B/s"), Ok(ThrottleLimit::BytesPerSecond(500)));
        assert_eq!(parse("2MB/s"), Ok(ThrottleLimit::BytesPerSecond(2_000_000)));
        assert_eq!(parse("1.5kB/s"), Ok(ThrottleLimit::BytesPerSecond(1500)));
        assert_eq!(parse("1MiB/s"), Ok(ThrottleLimit::BytesPerSecond(1 << 20)));
        assert!(matches!(parse("fast"), Err(ThrottleLimitError::Syntax(_))));
        assert!(matches!(parse("2XB/s"), Err(ThrottleLimitError::Syntax(_))));
        assert!(matches!(
            parse("0"),
            Err(ThrottleLimitError::NotPositive(_))
        ));
        assert!(matches!(
            parse("-1hz"),
            Err(ThrottleLimitError::NotPositive(_))
        ));
        assert!(matches!(
            parse("NaN"),
            Err(ThrottleLimitError::NotPositive(_))
        ));
    }

    #[test]
    fn no_second_holds_more_than_the_limit_and_the_rate_is_kept_despite_jitter() {
        for (rate, jitter_ms) in [(10.0, 0), (10.0, 10), (7.0, 15), (2.5, 10), (29.0, 5)] {
            let kept = run(
                ThrottleLimit::MessagesPerSecond(rate),
                jittery(60, jitter_ms),
            );
            let counted: Vec<_> = kept.iter().map(|&(t, _)| (t, 1)).collect();
            let fullest = fullest_window(&counted, SECOND_NS);
            assert!(fullest <= rate as u64, "{rate} Hz: {fullest} in one second");
            let achieved = kept.len() as f64 / 60.0;
            // A fractional rate is bound by its whole messages in any second.
            assert!(
                achieved >= rate.floor() * 0.95,
                "{rate} Hz with {jitter_ms} ms of jitter: {achieved:.2} Hz recorded"
            );
        }
    }

    #[test]
    fn below_one_message_a_second_messages_are_a_period_apart() {
        let kept = run(ThrottleLimit::MessagesPerSecond(0.2), jittery(60, 10));
        assert!(kept.windows(2).all(|w| w[1].0 - w[0].0 >= 5 * SECOND_NS));
        assert!(
            kept.len() >= 11,
            "{} messages in 60 s at 0.2 Hz",
            kept.len()
        );
    }

    #[test]
    fn a_bytes_limit_bounds_every_second_and_refuses_a_message_larger_than_it() {
        // The input brings about 16.5 kB/s.
        let limit = 8_000;
        let kept = run(ThrottleLimit::BytesPerSecond(limit), jittery(60, 10));
        assert!(fullest_window(&kept, SECOND_NS) <= limit);
        let bytes: u64 = kept.iter().map(|&(_, b)| b).sum();
        assert!(
            bytes as f64 / 60.0 >= limit as f64 * 0.9,
            "{bytes} B in 60 s"
        );
        let mut throttle = Throttle::new(ThrottleLimit::BytesPerSecond(100));
        assert!(!throttle.admit(0, 101));
        assert!(throttle.admit(0, 100));
    }

    #[test]
    fn a_clock_that_goes_back_starts_afresh() {
        let mut throttle = Throttle::new(ThrottleLimit::MessagesPerSecond(1.0));
        assert!(throttle.admit(100 * SECOND_NS, 1));
        assert!(!throttle.admit(100 * SECOND_NS + 10 * MS, 1));
        assert!(throttle.admit(SECOND_NS, 1), "after the jump back");
    }
}
