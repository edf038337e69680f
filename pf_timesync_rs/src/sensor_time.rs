//! The scanner's raw timestamps: NTP-style 32.32 fixed point, seconds masked
//! to 31 bits as the PF driver reads them, and an unwrapper for the wrap of
//! that seconds field.

use crate::TimeSyncError;
use rosbag2_rs_clock::{ClockType, Time, NANOS_PER_SEC};

/// Seconds after which the masked 31-bit seconds field wraps to zero.
pub const WRAP_SECONDS: i64 = 1 << 31;
/// [`WRAP_SECONDS`] in nanoseconds: the period of the masked sensor time.
pub const WRAP_NANOS: i64 = WRAP_SECONDS * NANOS_PER_SEC;

/// Nanoseconds of a raw timestamp, exactly as the PF driver computes them:
/// seconds = bits 32..63 masked to 31 bits, nanoseconds = fraction × 10⁹ / 2³²
/// rounded down. The result is in `[0, WRAP_NANOS)`.
pub fn raw_to_nanos(raw: u64) -> i64 {
    let secs = ((raw >> 32) & 0x7fff_ffff) as i64;
    let frac = raw & 0xffff_ffff;
    let nanos = ((frac * 1_000_000_000) >> 32) as i64;
    secs * NANOS_PER_SEC + nanos
}

/// A raw timestamp as a [`Time`] of `clock_type` (the PF driver's `raw_to_rclcpp`).
pub fn raw_to_time(raw: u64, clock_type: ClockType) -> Time {
    Time::from_nanos(raw_to_nanos(raw), clock_type)
}

/// The raw timestamp of `nanos` (taken modulo [`WRAP_NANOS`], so unwrapped
/// sensor times map back to what the scanner sends). The fraction is rounded
/// up, so that `raw_to_nanos(nanos_to_raw(n)) == n` for every `n` in
/// `[0, WRAP_NANOS)`.
pub fn nanos_to_raw(nanos: i64) -> u64 {
    let n = nanos.rem_euclid(WRAP_NANOS);
    let secs = (n / NANOS_PER_SEC) as u64;
    let rem = (n % NANOS_PER_SEC) as u64;
    let frac = (rem << 32).div_ceil(NANOS_PER_SEC as u64);
    (secs << 32) | frac
}

/// The raw timestamp of a [`Time`]; fails for negative times.
pub fn time_to_raw(time: Time) -> Result<u64, TimeSyncError> {
    if time.nanos() < 0 {
        return Err(TimeSyncError::NegativeSensorTime(time.nanos()));
    }
    Ok(nanos_to_raw(time.nanos()))
}

/// Turns masked sensor times into a continuous nanosecond timeline across
/// wraps of the 31-bit seconds field.
///
/// Each raw time is placed in the wrap period that brings it nearest to the
/// newest sensor time seen so far, so a sample from just before a wrap that
/// arrives after one from just after it (out of order) stays before it.
/// Works as long as consecutive samples are less than half a wrap period
/// (34 years) apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SensorUnwrapper {
    newest: Option<i64>,
}

impl SensorUnwrapper {
    /// An unwrapper that has seen nothing: the first time is taken as is.
    pub fn new() -> Self {
        Self::default()
    }

    /// The continuous nanoseconds of `raw` (without remembering it).
    pub fn peek(&self, raw: u64) -> i64 {
        let masked = raw_to_nanos(raw);
        match self.newest {
            None => masked,
            Some(reference) => {
                // Number of whole periods between the masked value and the
                // reference, rounded to the nearest.
                let diff = reference - masked;
                let k = (diff + WRAP_NANOS / 2).div_euclid(WRAP_NANOS);
                masked.saturating_add(k.saturating_mul(WRAP_NANOS))
            }
        }
    }

    /// The continuous nanoseconds of `raw`; remembers it if it is the newest.
    pub fn unwrap(&mut self, raw: u64) -> i64 {
        let t = self.peek(raw);
        if self.newest.is_none_or(|n| t > n) {
            self.newest = Some(t);
        }
        t
    }

    /// The newest continuous sensor time seen, if any.
    pub fn newest(&self) -> Option<i64> {
        self.newest
    }

    /// Forget everything (after a sensor clock jump).
    pub fn reset(&mut self) {
        self.newest = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pf_conversion() {
        // 5 s and a quarter second.
        let raw = (5u64 << 32) | 0x4000_0000;
        assert_eq!(raw_to_nanos(raw), 5_250_000_000);
        // The top bit of the seconds is masked away.
        assert_eq!(raw_to_nanos(raw | (1 << 63)), 5_250_000_000);
        // The fraction is rounded down: 1/2^32 s = 0.23 ns -> 0.
        assert_eq!(raw_to_nanos(1), 0);
        assert_eq!(raw_to_nanos(5), 1);
        assert_eq!(raw_to_time(raw, ClockType::Ros), Time::ros(5_250_000_000));
    }

    #[test]
    fn raw_round_trip() {
        for n in [
            0,
            1,
            999_999_999,
            1_000_000_000,
            123_456_789_012,
            WRAP_NANOS - 1,
        ] {
            assert_eq!(raw_to_nanos(nanos_to_raw(n)), n, "{n}");
        }
        assert_eq!(raw_to_nanos(nanos_to_raw(WRAP_NANOS + 7)), 7);
        assert_eq!(time_to_raw(Time::ros(3)).map(raw_to_nanos), Ok(3));
        assert_eq!(
            time_to_raw(Time::ros(-3)),
            Err(TimeSyncError::NegativeSensorTime(-3))
        );
    }

    #[test]
    fn unwraps_across_the_wrap_and_out_of_order() {
        let mut u = SensorUnwrapper::new();
        let before = WRAP_NANOS - 50_000_000; // 50 ms before the wrap
        let after = WRAP_NANOS + 30_000_000; // 30 ms after it
        assert_eq!(u.unwrap(nanos_to_raw(before)), before);
        assert_eq!(u.unwrap(nanos_to_raw(after)), after);
        // A late sample from before the wrap stays before it.
        assert_eq!(u.unwrap(nanos_to_raw(before + 10)), before + 10);
        assert_eq!(u.newest(), Some(after));
        // And the next one after the wrap continues.
        assert_eq!(u.unwrap(nanos_to_raw(after + 1_000)), after + 1_000);
        // Peek does not move the reference.
        assert_eq!(u.peek(nanos_to_raw(before)), before);
        // A second wrap.
        let later = 2 * WRAP_NANOS + 5;
        let mut t = after;
        while t < later {
            t = (t + WRAP_NANOS / 3).min(later);
            assert_eq!(u.unwrap(nanos_to_raw(t)), t);
        }
        u.reset();
        assert_eq!(u.unwrap(nanos_to_raw(later)), 5);
    }
}
