//! Typed errors of this crate.

use crate::ClockType;
use thiserror::Error;

/// Errors of the [`Time`](crate::Time) and [`Duration`](crate::Duration) arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TimeError {
    /// The result does not fit in signed 64-bit nanoseconds.
    #[error("time arithmetic overflowed 64-bit nanoseconds")]
    Overflow,
    /// Two times of different clock types were combined.
    #[error("cannot combine a {left} time with a {right} time")]
    ClockMismatch {
        /// Clock type of the left operand.
        left: ClockType,
        /// Clock type of the right operand.
        right: ClockType,
    },
    /// The value cannot be represented as a `builtin_interfaces` message
    /// (seconds do not fit in `int32`, or nanoseconds are not below 10^9).
    #[error("value out of range for builtin_interfaces: {0}")]
    OutOfRange(&'static str),
    /// A floating-point input was NaN or infinite.
    #[error("non-finite floating point value")]
    NotFinite,
}

/// Errors of the clocks.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ClockError {
    /// A playback rate must be finite and strictly positive (use pause to stop time).
    #[error("invalid playback rate {0}: must be finite and > 0")]
    InvalidRate(f64),
    /// A playback rate given as text that is not a number.
    #[error("'{0}' is not a playback rate (a number > 0)")]
    NotARate(String),
    /// A frequency must be finite and at most [`crate::MAX_CLOCK_PUBLISH_FREQUENCY`] (values
    /// <= 0 disable the feature).
    #[error("invalid frequency {0}: must be finite and at most 10000 Hz")]
    InvalidFrequency(f64),
    /// The clock is a passive consumer of an external `/clock` and refuses time control.
    #[error("clock driven by external /clock (sim time) refuses `{0}`")]
    SimTimeReadOnly(&'static str),
    /// A time of the wrong clock type was passed.
    #[error("expected a {expected} time, got a {found} time")]
    WrongClockType {
        /// Clock type the clock works in.
        expected: ClockType,
        /// Clock type that was passed.
        found: ClockType,
    },
    /// A jump threshold has the wrong sign.
    #[error("invalid jump threshold: {0}")]
    InvalidThreshold(&'static str),
    /// A period or duration argument is not usable (e.g. zero or negative period).
    #[error("invalid period: {0}")]
    InvalidPeriod(&'static str),
    /// Time arithmetic failed.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// Spawning a helper thread failed.
    #[error("failed to spawn thread: {0}")]
    Spawn(String),
}
