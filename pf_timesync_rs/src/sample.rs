//! Samples relating sensor time to ROS time, on continuous nanosecond timelines.

use crate::TimeSyncError;
use rosbag2_rs_clock::Duration;

/// A passive sample from a scan data packet.
///
/// `sensor_ns` is the (unwrapped) sensor time of the packet's first point,
/// `ros_ns` the ROS time when the packet was evaluated minus the time the
/// scanner needed to measure the packet's points. Delays only ever make
/// `ros_ns` later than the true ROS time of `sensor_ns`: the true line lies
/// at or below every passive sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassiveSample {
    /// Continuous sensor time in nanoseconds.
    pub sensor_ns: i64,
    /// ROS time of evaluation minus the packet's measuring duration, in nanoseconds.
    pub ros_ns: i64,
}

/// An active sample from an HTTP `system_time_raw` request.
///
/// The scanner read its clock (`sensor_ns`) at some ROS time between
/// `before_ns` (request sent) and `after_ns` (answer received): hard bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveSample {
    /// Continuous sensor time in nanoseconds.
    pub sensor_ns: i64,
    /// ROS time when the request was sent, in nanoseconds.
    pub before_ns: i64,
    /// ROS time when the answer arrived, in nanoseconds.
    pub after_ns: i64,
}

impl ActiveSample {
    /// Checked constructor: the answer cannot arrive before the request.
    pub fn new(sensor_ns: i64, before_ns: i64, after_ns: i64) -> Result<Self, TimeSyncError> {
        if after_ns < before_ns {
            return Err(TimeSyncError::AnswerBeforeRequest {
                before_ns,
                after_ns,
            });
        }
        Ok(ActiveSample {
            sensor_ns,
            before_ns,
            after_ns,
        })
    }

    /// Duration of the request (answer minus request time).
    pub fn round_trip(&self) -> Duration {
        Duration::from_nanos(self.after_ns.saturating_sub(self.before_ns))
    }
}

/// Time the scanner needs to measure `num_points` points at `sample_rate_hz`
/// (points per second): the correction from a packet's evaluation time back
/// to the time of its first point, apart from the unknown transport delay.
pub fn measuring_duration(num_points: u32, sample_rate_hz: f64) -> Result<Duration, TimeSyncError> {
    if !(sample_rate_hz.is_finite() && sample_rate_hz > 0.0) {
        return Err(TimeSyncError::InvalidRate {
            what: "sample rate",
            value: sample_rate_hz,
        });
    }
    let nanos = (num_points as f64 * 1e9 / sample_rate_hz).round();
    if nanos >= i64::MAX as f64 {
        return Err(TimeSyncError::InvalidRate {
            what: "sample rate",
            value: sample_rate_hz,
        });
    }
    Ok(Duration::from_nanos(nanos as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measuring_duration_of_a_packet() {
        // 360 points at 72 kHz: 5 ms.
        assert_eq!(
            measuring_duration(360, 72_000.0),
            Ok(Duration::from_millis(5))
        );
        assert_eq!(measuring_duration(0, 1.0), Ok(Duration::ZERO));
        assert!(measuring_duration(1, 0.0).is_err());
        assert!(measuring_duration(1, f64::NAN).is_err());
        assert!(measuring_duration(u32::MAX, 1e-9).is_err());
    }

    #[test]
    fn active_sample_order() {
        assert!(ActiveSample::new(0, 10, 9).is_err());
        let s = ActiveSample::new(0, 10, 25).unwrap();
        assert_eq!(s.round_trip(), Duration::from_nanos(15));
    }
}
