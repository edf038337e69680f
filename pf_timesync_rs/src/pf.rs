//! The PF driver's `TimeSync`, faithfully: same sample rules, same
//! arithmetic (double-precision seconds, truncation to nanoseconds), so that
//! a user of `pf_driver` gets identical stamps.
//!
//! Rules of `update(sensor_time_raw, req_duration_us, pc_time)` (pf_driver
//! `timesync.cpp`, the version described by the driver's `docs/timesync.md`
//! with `timesync_period` and `timesync_regression`):
//!
//! 1. A request that took more than 50 ms (`req_duration_us > 50000`) is ignored.
//! 2. If samples exist and the sensor time advanced more than one second since
//!    the newest one, all samples are dropped (reset) and the new one is kept.
//! 3. Otherwise a sample less than `min_interval` of sensor time after the
//!    newest one is ignored (this includes any sample going backwards);
//!    `min_interval` is `timesync_period / 200` when the period is positive,
//!    100 ms otherwise.
//! 4. The sample is appended; at most 200 samples are kept (1 when
//!    `timesync_period` is zero), the oldest is dropped.
//! 5. Coefficients are computed relative to the newest sample
//!    (`sensor_base`, `pc_base`): with regression, least squares of
//!    `pc - pc_base` over `sensor - sensor_base`; with averaging, the mean of
//!    `(pc - pc_base) - (sensor - sensor_base)` as offset and
//!    `(pc_newest - pc_oldest) / (sensor_newest - sensor_oldest)` as factor.
//! 6. `sensor_to_ros`: `pc_base + trunc_ns(base + s + (factor - 1) s)` with
//!    `s = sensor - sensor_base` in seconds.
//!
//! The driver resets its passive instance on a non-zero `scan_status` and
//! both instances (through `init`) when it is (re)configured.

use crate::estimator::Estimator;
use crate::sample::{ActiveSample, PassiveSample};
use crate::sensor_time::raw_to_nanos;
use rosbag2_rs_clock::{ClockType, Time};
use std::collections::VecDeque;

/// Requests that took longer than this many microseconds are ignored.
pub const MAX_REQUEST_DURATION_US: u32 = 50_000;
/// Number of samples kept when `timesync_period` is non-zero.
pub const NOMINAL_SAMPLES: usize = 200;
/// Minimum sensor time between samples when `timesync_period` is not positive.
pub const DEFAULT_MIN_INTERVAL_S: f64 = 0.1;
/// A gap in sensor time of more than this (seconds) resets the samples.
pub const MAX_GAP_S: f64 = 1.0;

/// One sample of [`TimeSync`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeSyncSample {
    /// Sensor time, nanoseconds.
    pub sensor_ns: i64,
    /// PC (ROS) time, nanoseconds.
    pub pc_ns: i64,
    /// Duration of the request in microseconds (0 for passive samples).
    pub req_duration_us: u32,
}

/// What [`TimeSync::update`] did with a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateOutcome {
    /// The sample was added.
    Accepted,
    /// The samples were reset (gap of more than one second), then it was added.
    AcceptedAfterReset,
    /// Ignored: the request took more than 50 ms.
    IgnoredSlowRequest,
    /// Ignored: less than the minimum interval after the newest sample.
    IgnoredRateLimit,
}

/// The PF driver's time synchronisation state (one instance per sample source).
#[derive(Debug, Clone)]
pub struct TimeSync {
    samples: VecDeque<TimeSyncSample>,
    sum_req_duration_us: u64,
    base_time: f64,
    scale_time: f64,
    period_ms: i32,
    regression: bool,
    sensor_base: i64,
    pc_base: i64,
    clock_type: ClockType,
}

impl TimeSync {
    /// A `TimeSync` initialised with `timesync_period` (ms) and `timesync_regression`.
    pub fn new(period_ms: i32, regression: bool) -> Self {
        TimeSync {
            samples: VecDeque::new(),
            sum_req_duration_us: 0,
            base_time: 0.0,
            scale_time: 0.0,
            period_ms,
            regression,
            sensor_base: 0,
            pc_base: 0,
            clock_type: ClockType::Ros,
        }
    }

    /// The driver's `init`: reset and take new parameters.
    pub fn init(&mut self, period_ms: i32, regression: bool) {
        self.reset();
        self.period_ms = period_ms;
        self.regression = regression;
    }

    /// Take new parameters; resets (returns true) only if they differ.
    pub fn set_params(&mut self, period_ms: i32, regression: bool) -> bool {
        if (period_ms, regression) == (self.period_ms, self.regression) {
            return false;
        }
        self.init(period_ms, regression);
        true
    }

    /// `timesync_period` in milliseconds.
    pub fn period_ms(&self) -> i32 {
        self.period_ms
    }

    /// `timesync_regression`.
    pub fn regression(&self) -> bool {
        self.regression
    }

    /// Drop all samples and coefficients.
    pub fn reset(&mut self) {
        self.samples.clear();
        self.sensor_base = 0;
        self.pc_base = 0;
        self.base_time = 0.0;
        self.scale_time = 0.0;
        self.sum_req_duration_us = 0;
        log::debug!("timesync reset");
    }

    /// True once a sample was kept (the driver only converts then).
    pub fn valid(&self) -> bool {
        !self.samples.is_empty()
    }

    /// The samples kept, oldest first.
    pub fn samples(&self) -> impl ExactSizeIterator<Item = &TimeSyncSample> {
        self.samples.iter()
    }

    /// Mean request duration of the kept samples, in microseconds.
    pub fn mean_request_duration_us(&self) -> Option<u64> {
        (!self.samples.is_empty()).then(|| self.sum_req_duration_us / self.samples.len() as u64)
    }

    /// The coefficients: `(sensor_base_ns, pc_base_ns, base_time_s, time_factor)`.
    pub fn coefficients(&self) -> (i64, i64, f64, f64) {
        (
            self.sensor_base,
            self.pc_base,
            self.base_time,
            self.scale_time + 1.0,
        )
    }

    /// Add a sample from a raw sensor timestamp (the driver's `update`).
    /// `pc_time` is the ROS time of the sample; its clock type is used for
    /// converted times.
    pub fn update(
        &mut self,
        sensor_time_raw: u64,
        req_duration_us: u32,
        pc_time: Time,
    ) -> UpdateOutcome {
        self.clock_type = pc_time.clock_type();
        self.update_nanos(
            raw_to_nanos(sensor_time_raw),
            req_duration_us,
            pc_time.nanos(),
        )
    }

    /// Add a sample with the sensor time already in nanoseconds (unwrapped).
    pub fn update_nanos(
        &mut self,
        sensor_ns: i64,
        req_duration_us: u32,
        pc_ns: i64,
    ) -> UpdateOutcome {
        let nominal = if self.period_ms == 0 {
            1
        } else {
            NOMINAL_SAMPLES
        };
        if req_duration_us > MAX_REQUEST_DURATION_US {
            return UpdateOutcome::IgnoredSlowRequest;
        }
        let mut outcome = UpdateOutcome::Accepted;
        if let Some(last) = self.samples.back() {
            let since_last = seconds(sensor_ns.saturating_sub(last.sensor_ns));
            if since_last > MAX_GAP_S {
                self.reset();
                outcome = UpdateOutcome::AcceptedAfterReset;
            } else {
                let min_interval = if self.period_ms > 0 {
                    (0.001 * self.period_ms as f64) / NOMINAL_SAMPLES as f64
                } else {
                    DEFAULT_MIN_INTERVAL_S
                };
                if since_last < min_interval {
                    return UpdateOutcome::IgnoredRateLimit;
                }
            }
        }
        self.sum_req_duration_us += u64::from(req_duration_us);
        self.samples.push_back(TimeSyncSample {
            sensor_ns,
            pc_ns,
            req_duration_us,
        });
        if self.samples.len() > nominal {
            if let Some(front) = self.samples.pop_front() {
                self.sum_req_duration_us -= u64::from(front.req_duration_us);
            }
        }
        self.compute();
        outcome
    }

    fn compute(&mut self) {
        let (Some(front), Some(back)) = (self.samples.front(), self.samples.back()) else {
            return;
        };
        let (front, back) = (*front, *back);
        let sensor_base = back.sensor_ns;
        let pc_base = back.pc_ns;
        let mut time_factor = 1.0;
        let mut base_time = 0.0;
        if self.regression {
            let (mut sum_x, mut sum_xx, mut sum_y, mut sum_xy) = (0.0, 0.0, 0.0, 0.0);
            for s in &self.samples {
                let x = seconds(s.sensor_ns - sensor_base);
                let y = seconds(s.pc_ns - pc_base);
                sum_x += x;
                sum_xx += x * x;
                sum_y += y;
                sum_xy += x * y;
            }
            let n = self.samples.len() as f64;
            let den = n * sum_xx - sum_x * sum_x;
            time_factor = if den == 0.0 {
                1.0
            } else {
                (n * sum_xy - sum_x * sum_y) / den
            };
            base_time = (sum_y - time_factor * sum_x) / n;
        } else {
            for s in &self.samples {
                base_time += seconds((s.pc_ns - pc_base) - (s.sensor_ns - sensor_base));
            }
            if self.samples.len() > 1 {
                base_time /= self.samples.len() as f64;
                let pc_period = seconds(back.pc_ns - front.pc_ns);
                let sensor_period = seconds(back.sensor_ns - front.sensor_ns);
                // The driver only checks pc_period; the rate limit keeps the
                // sensor period positive, checked here to never divide by zero.
                if pc_period > 0.0 && sensor_period > 0.0 {
                    time_factor = pc_period / sensor_period;
                }
            }
        }
        self.sensor_base = sensor_base;
        self.pc_base = pc_base;
        self.base_time = base_time;
        self.scale_time = time_factor - 1.0;
        log::trace!(
            "timesync update: n={} base={base_time} factor={time_factor}",
            self.samples.len()
        );
    }

    /// Convert a raw sensor timestamp (the driver's `sensor_to_pc`); `None`
    /// before the first sample.
    pub fn sensor_to_ros(&self, sensor_time_raw: u64) -> Option<Time> {
        self.sensor_nanos_to_ros(raw_to_nanos(sensor_time_raw))
            .map(|ns| Time::from_nanos(ns, self.clock_type))
    }

    /// Convert a sensor time in nanoseconds; `None` before the first sample.
    pub fn sensor_nanos_to_ros(&self, sensor_ns: i64) -> Option<i64> {
        if !self.valid() {
            return None;
        }
        let sensor_seconds = seconds(sensor_ns.saturating_sub(self.sensor_base));
        let conv = self.base_time + sensor_seconds + self.scale_time * sensor_seconds;
        // std::chrono::duration_cast<nanoseconds>(duration<double>): truncation.
        let conv_ns = (conv * 1e9) as i64;
        Some(self.pc_base.saturating_add(conv_ns))
    }
}

fn seconds(nanos: i64) -> f64 {
    nanos as f64 / 1e9
}

/// Both PF instances as one [`Estimator`]: passive samples feed
/// `passive_timesync`, active ones `active_timesync` (with the request
/// duration in whole microseconds and the request time as PC time, like the
/// driver's timer callback). Conversion uses the active instance when it has
/// samples, the passive one otherwise, like the driver's scan stamping.
///
/// With `timesync_period` 0 and no active samples the driver stamps each scan
/// from its own packet's reception ("no averaging"); here the passive
/// instance (which then keeps only the newest sample, at most one per 100 ms)
/// answers instead.
#[derive(Debug, Clone)]
pub struct PfEstimator {
    active: TimeSync,
    passive: TimeSync,
}

impl PfEstimator {
    /// Both instances with `timesync_period` (ms) and `timesync_regression`.
    pub fn new(period_ms: i32, regression: bool) -> Self {
        PfEstimator {
            active: TimeSync::new(period_ms, regression),
            passive: TimeSync::new(period_ms, regression),
        }
    }

    /// The instance fed by HTTP requests.
    pub fn active(&self) -> &TimeSync {
        &self.active
    }

    /// The instance fed by scan data packets.
    pub fn passive(&self) -> &TimeSync {
        &self.passive
    }
}

impl Estimator for PfEstimator {
    fn name(&self) -> &'static str {
        if self.passive.regression() {
            "pf-regression"
        } else {
            "pf-mean"
        }
    }

    fn add_passive(&mut self, sample: PassiveSample) {
        self.passive
            .update_nanos(sample.sensor_ns, 0, sample.ros_ns);
    }

    fn add_active(&mut self, sample: ActiveSample) {
        let us = sample.after_ns.saturating_sub(sample.before_ns) / 1000;
        let us = u32::try_from(us.max(0)).unwrap_or(u32::MAX);
        self.active
            .update_nanos(sample.sensor_ns, us, sample.before_ns);
    }

    fn reset_passive(&mut self) {
        self.passive.reset();
    }

    fn reset(&mut self) {
        self.passive.reset();
        self.active.reset();
    }

    fn convert(&mut self, sensor_ns: i64) -> Option<i64> {
        if self.active.valid() {
            self.active.sensor_nanos_to_ros(sensor_ns)
        } else {
            self.passive.sensor_nanos_to_ros(sensor_ns)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensor_time::nanos_to_raw;

    const S: i64 = 1_000_000_000;

    /// Sensor time 1000 s + `ms`, as raw.
    fn raw(ms: i64) -> u64 {
        nanos_to_raw(1000 * S + ms * 1_000_000)
    }

    fn pc(ms: i64) -> Time {
        Time::ros(100 * S + ms * 1_000_000)
    }

    fn three_samples(regression: bool) -> TimeSync {
        let mut ts = TimeSync::new(10_000, regression);
        assert_eq!(ts.update(raw(0), 0, pc(0)), UpdateOutcome::Accepted);
        assert_eq!(ts.update(raw(100), 0, pc(200)), UpdateOutcome::Accepted);
        assert_eq!(ts.update(raw(200), 0, pc(300)), UpdateOutcome::Accepted);
        ts
    }

    #[test]
    fn regression_by_hand() {
        // Relative to the newest sample: x = -0.2, -0.1, 0; y = -0.3, -0.1, 0.
        // Σx = -0.3, Σx² = 0.05, Σy = -0.4, Σxy = 0.07, den = 0.06,
        // factor = (0.21 - 0.12) / 0.06 = 1.5, base = (-0.4 + 0.45) / 3 = 1/60.
        let ts = three_samples(true);
        let (sb, pb, base, factor) = ts.coefficients();
        assert_eq!((sb, pb), (1000 * S + 200_000_000, 100 * S + 300_000_000));
        assert!((factor - 1.5).abs() < 1e-9, "{factor}");
        assert!((base - 1.0 / 60.0).abs() < 1e-9, "{base}");
        // At +0.1 s: 1/60 + 0.1 + 0.5 * 0.1 = 0.1666… s, truncated to ns.
        assert_eq!(ts.sensor_to_ros(raw(300)), Some(Time::ros(100_466_666_666)));
    }

    #[test]
    fn averaging_by_hand() {
        // Offsets (pc - pcb) - (s - sb): -0.1, 0, 0 -> mean -1/30;
        // factor = (100.3 - 100.0) / (0.2 - 0) = 1.5.
        let ts = three_samples(false);
        let (_, _, base, factor) = ts.coefficients();
        assert!((factor - 1.5).abs() < 1e-9, "{factor}");
        assert!((base + 1.0 / 30.0).abs() < 1e-9, "{base}");
        // At +0.1 s: -1/30 + 0.1 + 0.05 = 0.11666… s.
        assert_eq!(ts.sensor_to_ros(raw(300)), Some(Time::ros(100_416_666_666)));
        // One sample: offset of that sample, factor 1.
        let mut one = TimeSync::new(10_000, false);
        assert_eq!(one.sensor_to_ros(raw(0)), None);
        one.update(raw(0), 0, pc(5));
        assert_eq!(one.sensor_to_ros(raw(1000)), Some(pc(1005)));
    }

    #[test]
    fn window_of_200_samples() {
        let mut ts = TimeSync::new(10_000, true);
        for i in 0..250 {
            assert_eq!(
                ts.update(raw(i * 60), 0, pc(i * 60)),
                UpdateOutcome::Accepted
            );
        }
        assert_eq!(ts.samples().len(), NOMINAL_SAMPLES);
        assert_eq!(
            ts.samples().next().map(|s| s.sensor_ns),
            Some(1000 * S + 50 * 60_000_000)
        );
        // Period 0: only the newest sample is kept.
        let mut ts = TimeSync::new(0, true);
        ts.update(raw(0), 0, pc(0));
        ts.update(raw(100), 0, pc(150));
        assert_eq!(ts.samples().len(), 1);
        assert_eq!(ts.sensor_to_ros(raw(300)), Some(pc(350)));
    }

    #[test]
    fn rate_limit() {
        // No period: at most one sample per 100 ms of sensor time.
        let mut ts = TimeSync::new(0, false);
        ts.update(raw(0), 0, pc(0));
        assert_eq!(
            ts.update(raw(99), 0, pc(99)),
            UpdateOutcome::IgnoredRateLimit
        );
        assert_eq!(ts.update(raw(100), 0, pc(100)), UpdateOutcome::Accepted);
        // Backwards is ignored too.
        assert_eq!(
            ts.update(raw(50), 0, pc(500)),
            UpdateOutcome::IgnoredRateLimit
        );
        // Period 20 s: 20 s / 200 = 100 ms as well; period 10 s: 50 ms.
        let mut ts = TimeSync::new(20_000, false);
        ts.update(raw(0), 0, pc(0));
        assert_eq!(
            ts.update(raw(99), 0, pc(99)),
            UpdateOutcome::IgnoredRateLimit
        );
        assert_eq!(ts.update(raw(100), 0, pc(100)), UpdateOutcome::Accepted);
        let mut ts = TimeSync::new(10_000, false);
        ts.update(raw(0), 0, pc(0));
        assert_eq!(
            ts.update(raw(49), 0, pc(49)),
            UpdateOutcome::IgnoredRateLimit
        );
        assert_eq!(ts.update(raw(50), 0, pc(50)), UpdateOutcome::Accepted);
        assert_eq!(ts.samples().len(), 2);
    }

    #[test]
    fn slow_requests_and_gaps() {
        let mut ts = TimeSync::new(10_000, false);
        assert_eq!(
            ts.update(raw(0), 50_001, pc(0)),
            UpdateOutcome::IgnoredSlowRequest
        );
        assert!(!ts.valid());
        assert_eq!(ts.update(raw(0), 50_000, pc(0)), UpdateOutcome::Accepted);
        assert_eq!(
            ts.update(raw(500), 30_000, pc(500)),
            UpdateOutcome::Accepted
        );
        assert_eq!(ts.mean_request_duration_us(), Some(40_000));
        // Exactly one second later is no gap.
        assert_eq!(ts.update(raw(1500), 0, pc(1500)), UpdateOutcome::Accepted);
        assert_eq!(ts.samples().len(), 3);
        // More than one second: reset, then kept.
        let out = ts.update(nanos_to_raw(1000 * S + 2_500_000_001), 0, pc(7000));
        assert_eq!(out, UpdateOutcome::AcceptedAfterReset);
        assert_eq!(ts.samples().len(), 1);
        assert_eq!(ts.mean_request_duration_us(), Some(0));
    }

    #[test]
    fn params_and_estimator() {
        let mut ts = three_samples(false);
        assert!(!ts.set_params(10_000, false));
        assert!(ts.valid());
        assert!(ts.set_params(10_000, true));
        assert!(!ts.valid());

        let mut est = PfEstimator::new(10_000, false);
        assert_eq!(est.name(), "pf-mean");
        assert_eq!(est.convert(0), None);
        est.add_passive(PassiveSample {
            sensor_ns: 0,
            ros_ns: 1_000,
        });
        assert_eq!(est.convert(10), Some(1_010));
        // Active samples take over, with the request time as PC time.
        est.add_active(ActiveSample {
            sensor_ns: 0,
            before_ns: 5_000,
            after_ns: 9_000,
        });
        assert_eq!(
            est.active().samples().next().map(|s| s.req_duration_us),
            Some(4)
        );
        assert_eq!(est.convert(10), Some(5_010));
        // Too slow a request is ignored.
        est.add_active(ActiveSample {
            sensor_ns: 500_000_000,
            before_ns: 0,
            after_ns: 50_001_000,
        });
        assert_eq!(est.active().samples().len(), 1);
        est.reset_passive();
        assert!(!est.passive().valid() && est.active().valid());
        est.reset();
        assert_eq!(est.convert(10), None);
    }
}
