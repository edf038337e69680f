//! The front end a driver talks to: raw sensor times in, ROS times out,
//! with wrap handling, clock-type checks, resets and clock-jump detection.

use crate::estimator::Estimator;
use crate::sample::{measuring_duration, ActiveSample, PassiveSample};
use crate::selection::{EstimatorKind, Params};
use crate::sensor_time::{raw_to_nanos, SensorUnwrapper};
use crate::TimeSyncError;
use rosbag2_rs_clock::{Clock, ClockType, Duration, JumpHandle, JumpThreshold, Time};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How often, and why, the samples were reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResetCounts {
    /// Non-zero `scan_status` or explicit passive resets.
    pub scan_status: u64,
    /// ROS clock jumps reported by the watched clock.
    pub ros_jump: u64,
    /// Disagreements of sensor and ROS time advances beyond the tolerance.
    pub clock_jump: u64,
    /// Parameter changes and explicit full resets.
    pub full: u64,
}

/// Converts a scanner's raw timestamps to ROS time with one estimator.
///
/// Feed it passive samples ([`add_packet`](Self::add_packet) or
/// [`add_passive`](Self::add_passive)), active samples
/// ([`add_active`](Self::add_active)) and packet status
/// ([`scan_status`](Self::scan_status)); ask [`to_ros`](Self::to_ros).
/// [`watch_clock`](Self::watch_clock) resets the samples when the ROS clock
/// jumps (sim time activation, a backward jump, a large forward jump); a
/// jump of either clock is also detected from the samples themselves.
pub struct Synchronizer {
    kind: EstimatorKind,
    params: Params,
    estimator: Box<dyn Estimator>,
    unwrapper: SensorUnwrapper,
    clock_type: Option<ClockType>,
    jump_pending: Arc<AtomicBool>,
    last: Option<(i64, i64)>,
    resets: ResetCounts,
}

impl std::fmt::Debug for Synchronizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Synchronizer")
            .field("kind", &self.kind)
            .field("params", &self.params)
            .field("resets", &self.resets)
            .finish()
    }
}

impl Synchronizer {
    /// A synchronizer with the estimator `kind`; fails on invalid parameters.
    pub fn new(kind: EstimatorKind, params: Params) -> Result<Self, TimeSyncError> {
        params.validate()?;
        Ok(Synchronizer {
            kind,
            params,
            estimator: kind.build(&params),
            unwrapper: SensorUnwrapper::new(),
            clock_type: None,
            jump_pending: Arc::new(AtomicBool::new(false)),
            last: None,
            resets: ResetCounts::default(),
        })
    }

    /// The estimator in use.
    pub fn kind(&self) -> EstimatorKind {
        self.kind
    }

    /// The parameters in use.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Reset counters.
    pub fn reset_counts(&self) -> ResetCounts {
        self.resets
    }

    /// Take new parameters. If they differ, everything is reset (like the
    /// driver's re-`init`) and `true` returned.
    pub fn set_params(&mut self, params: Params) -> Result<bool, TimeSyncError> {
        params.validate()?;
        if params == self.params {
            return Ok(false);
        }
        self.params = params;
        self.estimator = self.kind.build(&params);
        self.clear();
        self.resets.full += 1;
        Ok(true)
    }

    /// Reset the samples whenever `clock` jumps: on ROS time activation or
    /// deactivation, any backward jump, and forward jumps of at least
    /// `forward_jump_ms`. The reset happens at the next call into this
    /// synchronizer. Keep the handle alive as long as the watch should last.
    pub fn watch_clock(&self, clock: &dyn Clock) -> Result<JumpHandle, TimeSyncError> {
        let pending = Arc::clone(&self.jump_pending);
        let threshold = JumpThreshold {
            on_clock_change: true,
            min_forward: Duration::from_millis(self.params.forward_jump_ms),
            min_backward: Duration::from_nanos(-1),
        };
        let handle = clock.create_jump_callback(
            Some(Box::new(move |jump| {
                log::info!(
                    "ROS clock jump ({:?}, {}): time sync reset",
                    jump.clock_change,
                    jump.delta
                );
                pending.store(true, Ordering::SeqCst);
            })),
            None,
            threshold,
        )?;
        Ok(handle)
    }

    /// Forget everything: samples, learnt skew, wrap state.
    pub fn reset(&mut self) {
        self.clear();
        self.resets.full += 1;
    }

    /// Forget the passive samples (what a non-zero `scan_status` does).
    pub fn reset_passive(&mut self) {
        self.estimator.reset_passive();
        self.resets.scan_status += 1;
    }

    /// The `scan_status` (status flags) of a packet header: non-zero resets
    /// the passive samples. Returns whether it did.
    pub fn scan_status(&mut self, status: u32) -> bool {
        self.poll_jump();
        if status != 0 {
            self.reset_passive();
            true
        } else {
            false
        }
    }

    fn clear(&mut self) {
        self.estimator.reset();
        self.unwrapper.reset();
        self.last = None;
    }

    fn poll_jump(&mut self) {
        if self.jump_pending.swap(false, Ordering::SeqCst) {
            self.clear();
            self.resets.ros_jump += 1;
        }
    }

    fn check_clock(&mut self, t: Time) -> Result<(), TimeSyncError> {
        match self.clock_type {
            None => {
                self.clock_type = Some(t.clock_type());
                Ok(())
            }
            Some(expected) if expected == t.clock_type() => Ok(()),
            Some(expected) => Err(TimeSyncError::ClockMismatch {
                expected,
                got: t.clock_type(),
            }),
        }
    }

    /// Unwrap `raw` and check that sensor and ROS time advanced alike since
    /// the previous sample; a disagreement beyond the tolerance is a jump of
    /// one of the clocks and resets everything.
    fn admit(&mut self, raw: u64, ros_ns: i64) -> i64 {
        let mut sensor = self.unwrapper.peek(raw);
        if let Some((s0, r0)) = self.last {
            let disagreement = (sensor - s0).saturating_sub(ros_ns.saturating_sub(r0));
            if disagreement.saturating_abs()
                > self.params.jump_tolerance_ms.saturating_mul(1_000_000)
            {
                log::warn!("sensor and ROS time disagree by {disagreement} ns: clock jump, time sync reset");
                self.clear();
                self.resets.clock_jump += 1;
                sensor = raw_to_nanos(raw);
            }
        }
        self.unwrapper.unwrap(raw);
        if self.last.is_none_or(|(s0, _)| sensor >= s0) {
            self.last = Some((sensor, ros_ns));
        }
        sensor
    }

    /// Add a passive sample: `ros` is the packet's evaluation time minus its
    /// measuring duration.
    pub fn add_passive(&mut self, raw: u64, ros: Time) -> Result<(), TimeSyncError> {
        self.poll_jump();
        self.check_clock(ros)?;
        let sensor_ns = self.admit(raw, ros.nanos());
        self.estimator.add_passive(PassiveSample {
            sensor_ns,
            ros_ns: ros.nanos(),
        });
        Ok(())
    }

    /// Add a passive sample from a packet: its first point's raw time, the
    /// ROS time when evaluation started, its point count and the sample rate.
    pub fn add_packet(
        &mut self,
        raw: u64,
        evaluated: Time,
        num_points: u32,
        sample_rate_hz: f64,
    ) -> Result<(), TimeSyncError> {
        let measuring = measuring_duration(num_points, sample_rate_hz)?;
        let ros = evaluated.checked_sub(measuring)?;
        self.add_passive(raw, ros)
    }

    /// Add an active sample: the raw time answered by `system_time_raw`,
    /// the ROS times when the request was sent and the answer arrived.
    pub fn add_active(&mut self, raw: u64, before: Time, after: Time) -> Result<(), TimeSyncError> {
        self.poll_jump();
        self.check_clock(before)?;
        self.check_clock(after)?;
        let checked = ActiveSample::new(0, before.nanos(), after.nanos())?;
        let sensor_ns = self.admit(raw, before.nanos());
        self.estimator.add_active(ActiveSample {
            sensor_ns,
            ..checked
        });
        Ok(())
    }

    /// ROS time of a raw sensor time; `None` until the estimator can answer.
    pub fn to_ros(&mut self, raw: u64) -> Result<Option<Time>, TimeSyncError> {
        self.poll_jump();
        let sensor = self.unwrapper.peek(raw);
        let clock_type = self.clock_type.unwrap_or(ClockType::Ros);
        Ok(self
            .estimator
            .convert(sensor)
            .map(|ns| Time::from_nanos(ns, clock_type)))
    }
}
