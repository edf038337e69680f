//! `TimeControllerClock`: playback time kept from a steady source, with
//! pause, rate, jump and `/clock` publication schedule.

use crate::clock::{Clock, ClockParts, SleepGate};
use crate::clock_publish::{ClockPublishSchedule, ClockPublisherMonitor};
use crate::jump::{ClockChange, JumpRegistry, TimeJump};
use crate::player_clock::{PlayerClock, PlayerClockParts};
use crate::scale::{PlaybackRate, RateScale};
use crate::source::{MonotonicSource, TimeSource};
use crate::{ClockError, ClockType, Duration, Time};
use parking_lot::{Mutex, ReentrantMutex};
use std::sync::Arc;

/// Settings of a [`TimeControllerClock`].
#[derive(Debug, Clone, PartialEq)]
pub struct TimeControllerConfig {
    /// Initial playback rate.
    pub rate: PlaybackRate,
    /// Start with time paused (default true: the player resumes when ready).
    pub start_paused: bool,
    /// Initial `/clock` publish frequency in Hz (<= 0 disables).
    pub clock_publish_frequency: f64,
}

impl Default for TimeControllerConfig {
    fn default() -> Self {
        TimeControllerConfig {
            rate: PlaybackRate::REAL_TIME,
            start_paused: true,
            clock_publish_frequency: 0.0,
        }
    }
}

/// Exact mapping between steady time and playback time, re-anchored on
/// every pause, resume, rate change and jump.
#[derive(Debug)]
struct State {
    ref_ros: i64,
    ref_steady: i64,
    scale: RateScale,
    paused: bool,
    publish: ClockPublishSchedule,
}

impl State {
    /// Playback time at steady time `steady` (constant while paused).
    fn ros_at(&self, steady: i64) -> i64 {
        if self.paused {
            return self.ref_ros;
        }
        let elapsed = steady.saturating_sub(self.ref_steady).max(0);
        self.ref_ros.saturating_add(self.scale.scale_floor(elapsed))
    }

    /// Earliest steady time at which playback time reaches `ros` (if running).
    fn steady_for(&self, ros: i64) -> i64 {
        self.ref_steady
            .saturating_add(self.scale.unscale_ceil(ros.saturating_sub(self.ref_ros)))
    }

    /// Take a new reference: the current playback time at `steady`.
    fn reanchor(&mut self, steady: i64) {
        self.ref_ros = self.ros_at(steady);
        self.ref_steady = steady;
    }
}

/// Playback clock that controls time (`ros2 bag play` without `--use-sim-time`).
///
/// Playback time is `ref_ros + rate * (steady_now - ref_steady)`, computed
/// exactly in integers; the reference is re-taken on every pause, resume,
/// rate change and jump, so no error accumulates however long playback runs.
pub struct TimeControllerClock {
    source: Arc<dyn TimeSource>,
    state: Mutex<State>,
    gate: SleepGate,
    jumps: JumpRegistry,
    jump_serial: ReentrantMutex<()>,
    publishers: ClockPublisherMonitor,
}

impl ClockParts for TimeControllerClock {
    fn parts(&self) -> (&SleepGate, &JumpRegistry) {
        (&self.gate, &self.jumps)
    }
}

impl std::fmt::Debug for TimeControllerClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeControllerClock")
            .field("state", &*self.state.lock())
            .finish()
    }
}

impl TimeControllerClock {
    /// A clock on the real monotonic source with precise sleeping, starting at `starting_time`.
    pub fn new(starting_time: Time, config: TimeControllerConfig) -> Result<Self, ClockError> {
        Self::with_source(starting_time, config, Arc::new(MonotonicSource::new()))
    }

    /// A clock on an injected steady source (e.g. a
    /// [`VirtualTimeSource`](crate::VirtualTimeSource) in tests, or a
    /// [`MonotonicSource`] with [`SpinPolicy::low_power`](crate::SpinPolicy::low_power)).
    pub fn with_source(
        starting_time: Time,
        config: TimeControllerConfig,
        source: Arc<dyn TimeSource>,
    ) -> Result<Self, ClockError> {
        check_ros(starting_time)?;
        let scale = RateScale::new(config.rate);
        let steady = source.now();
        let mut publish = ClockPublishSchedule::disabled();
        publish.set_frequency(config.clock_publish_frequency, steady)?;
        Ok(TimeControllerClock {
            state: Mutex::new(State {
                ref_ros: starting_time.nanos(),
                ref_steady: steady,
                scale,
                paused: config.start_paused,
                publish,
            }),
            source,
            gate: SleepGate::new(),
            jumps: JumpRegistry::new(),
            jump_serial: ReentrantMutex::new(()),
            publishers: ClockPublisherMonitor::new(),
        })
    }

    /// The steady source this clock runs on.
    pub fn source(&self) -> &Arc<dyn TimeSource> {
        &self.source
    }
}

fn check_ros(t: Time) -> Result<(), ClockError> {
    if t.clock_type() == ClockType::Ros {
        Ok(())
    } else {
        Err(ClockError::WrongClockType {
            expected: ClockType::Ros,
            found: t.clock_type(),
        })
    }
}

impl Clock for TimeControllerClock {
    fn clock_type(&self) -> ClockType {
        ClockType::Ros
    }

    fn now(&self) -> Time {
        let st = self.state.lock();
        Time::ros(st.ros_at(self.source.now()))
    }

    fn sleep_until(&self, until: Time, real_time_timeout: Duration) -> bool {
        if let Err(e) = check_ros(until) {
            log::warn!("TimeControllerClock::sleep_until: {e}");
            return false;
        }
        let until = until.nanos();
        let sleep = self.gate.enter(self.source.now(), real_time_timeout);
        let timeout_deadline = sleep.deadline;
        let mut waited_while_paused = false;
        loop {
            let (seen, target) = {
                let st = self.state.lock();
                let seen = self.gate.signal.generation();
                if sleep.interrupted() {
                    return false; // paused, jumped or woken meanwhile
                }
                let now = self.source.now();
                if st.paused {
                    // Time cannot advance: wait for a change or the timeout, then report false.
                    if now >= timeout_deadline {
                        return false;
                    }
                    waited_while_paused = true;
                    (seen, timeout_deadline)
                } else {
                    if waited_while_paused {
                        return false; // resumed while we waited: let the caller re-evaluate
                    }
                    if st.ros_at(now) >= until {
                        return true;
                    }
                    if now >= timeout_deadline {
                        return false;
                    }
                    (seen, st.steady_for(until).min(timeout_deadline))
                }
            };
            // Spurious wake-ups and rate changes just loop and recompute the deadline.
            self.source.wait_until(target, &self.gate.signal, seen);
        }
    }
}

impl PlayerClock for TimeControllerClock {
    fn pause(&self) -> Result<(), ClockError> {
        let mut st = self.state.lock();
        if st.paused {
            return Ok(());
        }
        let now = self.source.now();
        st.reanchor(now);
        st.paused = true;
        st.publish.due_now(now);
        self.gate.interrupt();
        Ok(())
    }

    fn resume(&self) -> Result<(), ClockError> {
        let mut st = self.state.lock();
        if !st.paused {
            return Ok(());
        }
        let now = self.source.now();
        st.ref_steady = now; // ROS reference stays where it was paused
        st.paused = false;
        st.publish.due_now(now);
        self.gate.poke();
        Ok(())
    }

    fn is_paused(&self) -> bool {
        self.state.lock().paused
    }

    fn set_rate(&self, rate: f64) -> Result<(), ClockError> {
        let scale = RateScale::new(PlaybackRate::new(rate).inspect_err(|e| log::warn!("{e}"))?);
        let mut st = self.state.lock();
        if st.scale.rate() == rate {
            return Ok(());
        }
        st.reanchor(self.source.now());
        st.scale = scale;
        self.gate.poke(); // sleepers recompute their steady deadline
        Ok(())
    }

    fn get_rate(&self) -> f64 {
        self.state.lock().scale.rate()
    }

    fn jump(&self, time: Time) -> Result<(), ClockError> {
        check_ros(time)?;
        let _serial = self.jump_serial.lock();
        let delta = {
            let st = self.state.lock();
            time.nanos().saturating_sub(st.ros_at(self.source.now()))
        };
        let jump = TimeJump {
            clock_change: ClockChange::RosTimeNoChange,
            delta: Duration::from_nanos(delta),
        };
        // Pre-jump handlers complete before anyone can observe the new time.
        self.jumps.notify_pre(&jump);
        {
            let mut st = self.state.lock();
            let now = self.source.now();
            st.ref_ros = time.nanos();
            st.ref_steady = now;
            st.publish.due_now(now);
            self.gate.interrupt();
        }
        self.jumps.notify_post(&jump);
        Ok(())
    }

    fn ros_to_steady(&self, time: Time) -> Option<Time> {
        if time.clock_type() != ClockType::Ros {
            return None;
        }
        let st = self.state.lock();
        if st.paused {
            return None;
        }
        Some(Time::steady(st.steady_for(time.nanos())))
    }

    fn set_clock_publish_frequency(&self, hz: f64) -> Result<(), ClockError> {
        let mut st = self.state.lock();
        let now = self.source.now();
        st.publish.set_frequency(hz, now)?;
        self.gate.poke();
        Ok(())
    }

    fn get_clock_publish_frequency(&self) -> f64 {
        self.state.lock().publish.frequency()
    }

    fn take_clock_publish_due(&self) -> Option<Time> {
        let mut st = self.state.lock();
        let now = self.source.now();
        if st.publish.take_due(now) {
            Some(Time::ros(st.ros_at(now)))
        } else {
            None
        }
    }

    fn wait_clock_publish_due(&self, real_time_timeout: Duration) -> Option<Time> {
        let watch = self.gate.watch_wakeups(&*self.source, real_time_timeout);
        loop {
            let (seen, target) = {
                let mut st = self.state.lock();
                let seen = self.gate.signal.generation();
                if watch.woken() {
                    return None;
                }
                let now = self.source.now();
                if st.publish.take_due(now) {
                    return Some(Time::ros(st.ros_at(now)));
                }
                if now >= watch.deadline {
                    return None;
                }
                let next = st.publish.next_due().unwrap_or(i64::MAX);
                (seen, next.min(watch.deadline))
            };
            self.source.wait_until(target, &self.gate.signal, seen);
        }
    }

    fn on_clock_message(&self, time: Time) {
        log::debug!("TimeControllerClock ignores /clock message {time}: it is the time source");
    }

    fn uses_sim_time(&self) -> bool {
        false
    }
}

impl PlayerClockParts for TimeControllerClock {
    fn publishers(&self) -> &ClockPublisherMonitor {
        &self.publishers
    }
}
