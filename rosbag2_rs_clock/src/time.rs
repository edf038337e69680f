//! Time points in integer nanoseconds, tagged with their clock type.

use crate::duration::{join_nanos, split_nanos};
use crate::{ClockType, Duration, TimeError};
use std::cmp::Ordering;
use std::fmt;

/// A point in time: signed nanoseconds on the timeline of one [`ClockType`].
///
/// Times of different clock types are never equal, never ordered
/// (`partial_cmp` returns `None`) and cannot be subtracted: use the checked
/// methods, which report [`TimeError::ClockMismatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    nanos: i64,
    clock_type: ClockType,
}

impl Time {
    /// A time of `nanos` nanoseconds on the timeline of `clock_type`.
    pub const fn from_nanos(nanos: i64, clock_type: ClockType) -> Self {
        Time { nanos, clock_type }
    }

    /// A ROS time (the playback timeline) of `nanos` nanoseconds.
    pub const fn ros(nanos: i64) -> Self {
        Time::from_nanos(nanos, ClockType::Ros)
    }

    /// A steady time of `nanos` nanoseconds.
    pub const fn steady(nanos: i64) -> Self {
        Time::from_nanos(nanos, ClockType::Steady)
    }

    /// A system time of `nanos` nanoseconds since the Unix epoch.
    pub const fn system(nanos: i64) -> Self {
        Time::from_nanos(nanos, ClockType::System)
    }

    /// Nanoseconds since this clock's epoch.
    pub const fn nanos(self) -> i64 {
        self.nanos
    }

    /// The clock type this time belongs to.
    pub const fn clock_type(self) -> ClockType {
        self.clock_type
    }

    /// Floating-point seconds (lossy beyond 2^53 ns).
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / 1e9
    }

    /// `self + d`, or [`TimeError::Overflow`].
    pub fn checked_add(self, d: Duration) -> Result<Time, TimeError> {
        self.nanos
            .checked_add(d.as_nanos())
            .map(|nanos| Time { nanos, ..self })
            .ok_or(TimeError::Overflow)
    }

    /// `self - d`, or [`TimeError::Overflow`].
    pub fn checked_sub(self, d: Duration) -> Result<Time, TimeError> {
        self.nanos
            .checked_sub(d.as_nanos())
            .map(|nanos| Time { nanos, ..self })
            .ok_or(TimeError::Overflow)
    }

    /// `self + d`, saturating at the bounds of `i64` nanoseconds.
    pub fn saturating_add(self, d: Duration) -> Time {
        Time {
            nanos: self.nanos.saturating_add(d.as_nanos()),
            ..self
        }
    }

    /// `self - d`, saturating at the bounds of `i64` nanoseconds.
    pub fn saturating_sub(self, d: Duration) -> Time {
        Time {
            nanos: self.nanos.saturating_sub(d.as_nanos()),
            ..self
        }
    }

    /// `self - earlier` as a duration. Fails on clock mismatch or overflow.
    pub fn checked_duration_since(self, earlier: Time) -> Result<Duration, TimeError> {
        self.check_same_clock(earlier)?;
        self.nanos
            .checked_sub(earlier.nanos)
            .map(Duration::from_nanos)
            .ok_or(TimeError::Overflow)
    }

    /// Compare with a time of the same clock type; fails on clock mismatch.
    pub fn checked_cmp(self, other: Time) -> Result<Ordering, TimeError> {
        self.check_same_clock(other)?;
        Ok(self.nanos.cmp(&other.nanos))
    }

    /// Err if `other` is of a different clock type.
    pub fn check_same_clock(self, other: Time) -> Result<(), TimeError> {
        if self.clock_type == other.clock_type {
            Ok(())
        } else {
            Err(TimeError::ClockMismatch {
                left: self.clock_type,
                right: other.clock_type,
            })
        }
    }

    /// The fields of a `builtin_interfaces/Time` (`sec`, `nanosec` in `[0, 1e9)`). Fails if the
    /// seconds do not fit in `int32`.
    pub fn to_sec_nanosec(self) -> Result<(i32, u32), TimeError> {
        split_nanos(self.nanos)
    }

    /// Built from the fields of a `builtin_interfaces/Time` on the timeline of `clock_type`.
    /// Fails if `nanosec >= 1e9`.
    pub fn from_sec_nanosec(
        sec: i32,
        nanosec: u32,
        clock_type: ClockType,
    ) -> Result<Time, TimeError> {
        Ok(Time {
            nanos: join_nanos(sec, nanosec)?,
            clock_type,
        })
    }
}

impl PartialOrd for Time {
    /// `None` when the clock types differ.
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        if self.clock_type == other.clock_type {
            Some(self.nanos.cmp(&other.nanos))
        } else {
            None
        }
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({})",
            Duration::from_nanos(self.nanos),
            self.clock_type
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_do_not_mix() {
        let a = Time::ros(5);
        let b = Time::system(5);
        assert_ne!(a, b);
        assert_eq!(a.partial_cmp(&b), None);
        assert!(!(a.lt(&b) || a.gt(&b) || a.le(&b) || a.ge(&b)));
        assert_eq!(
            a.checked_duration_since(b),
            Err(TimeError::ClockMismatch {
                left: ClockType::Ros,
                right: ClockType::System
            })
        );
        assert!(a.checked_cmp(b).is_err());
        assert_eq!(
            Time::ros(10).checked_duration_since(a).unwrap(),
            Duration::from_nanos(5)
        );
    }

    #[test]
    fn checked_arithmetic() {
        assert_eq!(
            Time::ros(i64::MAX).checked_add(Duration::from_nanos(1)),
            Err(TimeError::Overflow)
        );
        assert_eq!(
            Time::ros(i64::MIN).checked_sub(Duration::from_nanos(1)),
            Err(TimeError::Overflow)
        );
        assert_eq!(
            Time::ros(i64::MAX).saturating_add(Duration::from_secs(1)),
            Time::ros(i64::MAX)
        );
        assert_eq!(
            Time::ros(i64::MAX).checked_duration_since(Time::ros(-1)),
            Err(TimeError::Overflow)
        );
    }

    #[test]
    fn msg_conversions() {
        let t = Time::ros(1_700_000_000_123_456_789);
        let (sec, nanosec) = t.to_sec_nanosec().unwrap();
        assert_eq!((sec, nanosec), (1_700_000_000, 123_456_789));
        assert_eq!(
            Time::from_sec_nanosec(sec, nanosec, ClockType::Ros).unwrap(),
            t
        );
        assert!(Time::ros(i64::MAX).to_sec_nanosec().is_err());
        assert!(Time::from_sec_nanosec(1, 2_000_000_000, ClockType::Ros).is_err());
    }
}
