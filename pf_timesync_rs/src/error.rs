//! Typed errors of the crate.

use rosbag2_rs_clock::{ClockError, ClockType, TimeError};

/// Everything that can go wrong when feeding samples or converting times.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TimeSyncError {
    /// A ROS time of another clock type than the one this synchronizer works in.
    #[error("a {got} time was given where a {expected} time was expected")]
    ClockMismatch {
        /// The clock type of the times fed so far.
        expected: ClockType,
        /// The clock type of the offending time.
        got: ClockType,
    },
    /// An active sample whose answer arrived before its request was sent.
    #[error("active sample: answer at {after_ns} ns is before the request at {before_ns} ns")]
    AnswerBeforeRequest {
        /// ROS time when the request was sent.
        before_ns: i64,
        /// ROS time when the answer arrived.
        after_ns: i64,
    },
    /// A sample rate or scan frequency that is zero, negative or not finite.
    #[error("invalid {what}: {value}")]
    InvalidRate {
        /// Which quantity was wrong.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// A negative time cannot be written as a raw sensor timestamp.
    #[error("negative time {0} ns has no raw sensor timestamp")]
    NegativeSensorTime(i64),
    /// An estimator name that is not known.
    #[error("unknown estimator `{name}` (known: {known})")]
    UnknownEstimator {
        /// The name given.
        name: String,
        /// Comma-separated list of the known names.
        known: &'static str,
    },
    /// A parameter out of its range.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An inconsistent scan data packet header.
    #[error("invalid packet header: {0}")]
    InvalidPacketHeader(&'static str),
    /// Time arithmetic overflowed.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// Registering the ROS clock jump handler failed.
    #[error(transparent)]
    Clock(#[from] ClockError),
}
