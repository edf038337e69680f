//! `builtin_interfaces`: the ROS 2 time types used inside other messages.
//!
//! Also reachable as `builtin_interfaces::msg::{Time, Duration}`, the ROS 2 path.

use serde::{Deserialize, Serialize};

const NANOS_PER_SEC: i64 = 1_000_000_000;

fn split_nanos(nanos: i64) -> (i32, u32) {
    let sec = nanos.div_euclid(NANOS_PER_SEC);
    let nanosec = nanos.rem_euclid(NANOS_PER_SEC) as u32;
    (sec.clamp(i32::MIN as i64, i32::MAX as i64) as i32, nanosec)
}

/// `builtin_interfaces/msg/Time`: a point in time, seconds plus nanoseconds
/// (`nanosec` is always added, also for negative `sec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct Time {
    /// Whole seconds.
    pub sec: i32,
    /// Nanoseconds added to `sec`, in `0..1_000_000_000`.
    pub nanosec: u32,
}

impl Time {
    /// The time `nanos` nanoseconds after the epoch (seconds saturate at the
    /// `i32` range).
    pub fn from_nanos(nanos: i64) -> Self {
        let (sec, nanosec) = split_nanos(nanos);
        Time { sec, nanosec }
    }

    /// Nanoseconds since the epoch: `sec * 1e9 + nanosec`.
    pub fn as_nanos(&self) -> i64 {
        i64::from(self.sec) * NANOS_PER_SEC + i64::from(self.nanosec)
    }
}

/// `builtin_interfaces/msg/Duration`: a span of time, seconds plus nanoseconds
/// (`nanosec` is always added, also for negative `sec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct Duration {
    /// Whole seconds.
    pub sec: i32,
    /// Nanoseconds added to `sec`, in `0..1_000_000_000`.
    pub nanosec: u32,
}

impl Duration {
    /// A duration of `nanos` nanoseconds (seconds saturate at the `i32` range).
    pub fn from_nanos(nanos: i64) -> Self {
        let (sec, nanosec) = split_nanos(nanos);
        Duration { sec, nanosec }
    }

    /// Length in nanoseconds: `sec * 1e9 + nanosec`.
    pub fn as_nanos(&self) -> i64 {
        i64::from(self.sec) * NANOS_PER_SEC + i64::from(self.nanosec)
    }
}

impl_message!(Time, "builtin_interfaces/msg/Time");
impl_message!(Duration, "builtin_interfaces/msg/Duration");

/// The ROS 2 path of these types: `builtin_interfaces::msg::Time`.
pub mod msg {
    pub use super::{Duration, Time};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_round_trip() {
        for nanos in [
            0,
            1,
            1_500_000_000,
            -1,
            -1_500_000_000,
            1_700_000_000_123_456_789,
        ] {
            assert_eq!(Time::from_nanos(nanos).as_nanos(), nanos);
            assert_eq!(Duration::from_nanos(nanos).as_nanos(), nanos);
        }
        assert_eq!(
            Time::from_nanos(-1),
            Time {
                sec: -1,
                nanosec: 999_999_999
            }
        );
        assert_eq!(
            Duration::from_nanos(2_000_000_003),
            Duration { sec: 2, nanosec: 3 }
        );
    }

    #[test]
    fn from_nanos_saturates() {
        assert_eq!(Time::from_nanos(i64::MAX).sec, i32::MAX);
        assert_eq!(Duration::from_nanos(i64::MIN).sec, i32::MIN);
    }
}
