//! The estimator interface every estimator implements (selected by name in
//! [`crate::selection`]).

use crate::sample::{ActiveSample, PassiveSample};

/// Estimates the sensor-to-ROS line from samples on continuous nanosecond
/// timelines (the [`Synchronizer`](crate::Synchronizer) unwraps raw times and
/// checks clock types before calling).
pub trait Estimator: Send {
    /// The name the estimator is selected by.
    fn name(&self) -> &'static str;
    /// Add a passive sample (scan data packet).
    fn add_passive(&mut self, sample: PassiveSample);
    /// Add an active sample (HTTP `system_time_raw` request).
    fn add_active(&mut self, sample: ActiveSample);
    /// Forget the passive samples (non-zero `scan_status`: the sample rate,
    /// and so the measuring-duration correction, may have changed).
    fn reset_passive(&mut self);
    /// Forget everything (ROS or sensor clock jump, new parameters).
    fn reset(&mut self);
    /// ROS nanoseconds of sensor nanoseconds; `None` before the estimator can answer.
    fn convert(&mut self, sensor_ns: i64) -> Option<i64>;
}
