//! The clock type tag carried by every [`Time`](crate::Time).

use std::fmt;

/// Which time abstraction a [`Time`](crate::Time) belongs to.
///
/// Times of different clock types cannot be compared or subtracted: the
/// checked operations on [`Time`](crate::Time) return
/// [`TimeError::ClockMismatch`](crate::TimeError::ClockMismatch) instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockType {
    /// ROS time: driven by `/clock` when a source is active, otherwise system time.
    /// Playback ("player") time is ROS time.
    Ros,
    /// Wall-clock time in nanoseconds since the Unix epoch. May jump (NTP, user).
    System,
    /// Monotonic time from an arbitrary origin (usually boot). Never jumps.
    Steady,
}

impl fmt::Display for ClockType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ClockType::Ros => "ROS",
            ClockType::System => "system",
            ClockType::Steady => "steady",
        };
        f.write_str(name)
    }
}
