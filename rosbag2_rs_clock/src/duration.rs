//! Signed durations in integer nanoseconds.

use crate::TimeError;
use std::fmt;

/// Nanoseconds per second.
pub const NANOS_PER_SEC: i64 = 1_000_000_000;

/// A signed time interval in integer nanoseconds.
///
/// Arithmetic is checked (`checked_*` returns `None` on overflow) or
/// saturating (`saturating_*`); nothing panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration {
    nanos: i64,
}

impl Duration {
    /// The zero duration.
    pub const ZERO: Duration = Duration { nanos: 0 };
    /// The largest representable duration (about 292 years).
    pub const MAX: Duration = Duration { nanos: i64::MAX };
    /// The most negative representable duration.
    pub const MIN: Duration = Duration { nanos: i64::MIN };

    /// A duration of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: i64) -> Self {
        Duration { nanos }
    }

    /// A duration of `micros` microseconds, saturating on overflow.
    pub const fn from_micros(micros: i64) -> Self {
        Duration {
            nanos: micros.saturating_mul(1_000),
        }
    }

    /// A duration of `millis` milliseconds, saturating on overflow.
    pub const fn from_millis(millis: i64) -> Self {
        Duration {
            nanos: millis.saturating_mul(1_000_000),
        }
    }

    /// A duration of `secs` seconds, saturating on overflow.
    pub const fn from_secs(secs: i64) -> Self {
        Duration {
            nanos: secs.saturating_mul(NANOS_PER_SEC),
        }
    }

    /// A duration from floating-point seconds, rounded to the nearest nanosecond.
    ///
    /// Fails on NaN/infinity and on values outside the `i64` nanosecond range.
    pub fn from_secs_f64(secs: f64) -> Result<Self, TimeError> {
        if !secs.is_finite() {
            return Err(TimeError::NotFinite);
        }
        let nanos = (secs * NANOS_PER_SEC as f64).round();
        if nanos >= i64::MAX as f64 || nanos < i64::MIN as f64 {
            return Err(TimeError::Overflow);
        }
        Ok(Duration {
            nanos: nanos as i64,
        })
    }

    /// The period of a frequency in Hz (`1/hz` seconds). Fails for `hz <= 0` or non-finite.
    pub fn from_hz(hz: f64) -> Result<Self, TimeError> {
        if !hz.is_finite() {
            return Err(TimeError::NotFinite);
        }
        if hz <= 0.0 {
            return Err(TimeError::OutOfRange("frequency must be > 0"));
        }
        Self::from_secs_f64(1.0 / hz)
    }

    /// Total nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.nanos
    }

    /// Floating-point seconds (lossy beyond 2^53 ns).
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / NANOS_PER_SEC as f64
    }

    /// True for durations below zero.
    pub const fn is_negative(self) -> bool {
        self.nanos < 0
    }

    /// `self + rhs`, or `None` on overflow.
    pub const fn checked_add(self, rhs: Duration) -> Option<Duration> {
        match self.nanos.checked_add(rhs.nanos) {
            Some(nanos) => Some(Duration { nanos }),
            None => None,
        }
    }

    /// `self - rhs`, or `None` on overflow.
    pub const fn checked_sub(self, rhs: Duration) -> Option<Duration> {
        match self.nanos.checked_sub(rhs.nanos) {
            Some(nanos) => Some(Duration { nanos }),
            None => None,
        }
    }

    /// `self * k`, or `None` on overflow.
    pub const fn checked_mul(self, k: i64) -> Option<Duration> {
        match self.nanos.checked_mul(k) {
            Some(nanos) => Some(Duration { nanos }),
            None => None,
        }
    }

    /// `-self`, or `None` for [`Duration::MIN`].
    pub const fn checked_neg(self) -> Option<Duration> {
        match self.nanos.checked_neg() {
            Some(nanos) => Some(Duration { nanos }),
            None => None,
        }
    }

    /// `self + rhs`, saturating at the bounds.
    pub const fn saturating_add(self, rhs: Duration) -> Duration {
        Duration {
            nanos: self.nanos.saturating_add(rhs.nanos),
        }
    }

    /// `self - rhs`, saturating at the bounds.
    pub const fn saturating_sub(self, rhs: Duration) -> Duration {
        Duration {
            nanos: self.nanos.saturating_sub(rhs.nanos),
        }
    }

    /// Scale by a floating-point factor, rounding to the nearest nanosecond.
    /// Fails on non-finite factors or overflow.
    pub fn checked_mul_f64(self, factor: f64) -> Result<Duration, TimeError> {
        if !factor.is_finite() {
            return Err(TimeError::NotFinite);
        }
        let v = (self.nanos as f64 * factor).round();
        if v >= i64::MAX as f64 || v < i64::MIN as f64 {
            return Err(TimeError::Overflow);
        }
        Ok(Duration { nanos: v as i64 })
    }

    /// The fields of a `builtin_interfaces/Duration` (seconds floored, `nanosec` in
    /// `[0, 1e9)`). Fails if the seconds do not fit in `int32`.
    pub fn to_sec_nanosec(self) -> Result<(i32, u32), TimeError> {
        split_nanos(self.nanos)
    }

    /// Built from the fields of a `builtin_interfaces/Duration`. Fails if `nanosec >= 1e9`.
    pub fn from_sec_nanosec(sec: i32, nanosec: u32) -> Result<Duration, TimeError> {
        Ok(Duration {
            nanos: join_nanos(sec, nanosec)?,
        })
    }

    /// Convert a non-negative duration to `std::time::Duration` (negative values become zero).
    pub fn to_std(self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.nanos.max(0) as u64)
    }

    /// Convert from `std::time::Duration`, saturating at [`Duration::MAX`].
    pub fn from_std(d: std::time::Duration) -> Duration {
        Duration {
            nanos: i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        }
    }
}

/// Split signed nanoseconds into (`int32` seconds floored, `uint32` nanoseconds).
pub(crate) fn split_nanos(nanos: i64) -> Result<(i32, u32), TimeError> {
    let sec = nanos.div_euclid(NANOS_PER_SEC);
    let nsec = nanos.rem_euclid(NANOS_PER_SEC);
    let sec =
        i32::try_from(sec).map_err(|_| TimeError::OutOfRange("seconds do not fit in int32"))?;
    Ok((sec, nsec as u32))
}

/// Join `int32` seconds and `uint32` nanoseconds into signed nanoseconds.
pub(crate) fn join_nanos(sec: i32, nanosec: u32) -> Result<i64, TimeError> {
    if i64::from(nanosec) >= NANOS_PER_SEC {
        return Err(TimeError::OutOfRange("nanosec must be below 1e9"));
    }
    // |sec| < 2^31, so sec * 1e9 + nanosec always fits in i64.
    Ok(i64::from(sec) * NANOS_PER_SEC + i64::from(nanosec))
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.nanos < 0 { "-" } else { "" };
        let abs = self.nanos.unsigned_abs();
        write!(
            f,
            "{sign}{}.{:09}s",
            abs / NANOS_PER_SEC as u64,
            abs % NANOS_PER_SEC as u64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msg_round_trip_including_negative() {
        for n in [
            0,
            1,
            999_999_999,
            1_000_000_000,
            -1,
            -1_500_000_000,
            12_345_678_901,
        ] {
            let d = Duration::from_nanos(n);
            let (sec, nanosec) = d.to_sec_nanosec().unwrap();
            assert!(nanosec < 1_000_000_000);
            assert_eq!(Duration::from_sec_nanosec(sec, nanosec).unwrap(), d);
        }
        let m = Duration::from_nanos(-1).to_sec_nanosec().unwrap();
        assert_eq!(m, (-1, 999_999_999));
    }

    #[test]
    fn out_of_range_and_overflow_are_errors() {
        assert!(Duration::MAX.to_sec_nanosec().is_err());
        assert!(Duration::from_sec_nanosec(0, 1_000_000_000).is_err());
        assert_eq!(Duration::MAX.checked_add(Duration::from_nanos(1)), None);
        assert_eq!(Duration::MIN.checked_neg(), None);
        assert_eq!(Duration::from_secs_f64(f64::NAN), Err(TimeError::NotFinite));
        assert_eq!(Duration::from_secs_f64(1e300), Err(TimeError::Overflow));
        assert!(Duration::from_hz(0.0).is_err());
        assert_eq!(Duration::from_hz(1000.0).unwrap(), Duration::from_millis(1));
        assert_eq!(Duration::from_secs(i64::MAX), Duration::MAX);
    }

    #[test]
    fn display() {
        assert_eq!(
            Duration::from_nanos(-1_500_000_000).to_string(),
            "-1.500000000s"
        );
    }
}
