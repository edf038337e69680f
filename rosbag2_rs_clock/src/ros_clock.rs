//! `RosClock`: ROS time as in the "Clock and Time" design — the latest
//! `/clock` value when a source is active, system time otherwise.

use crate::clock::{Clock, ClockParts, SleepGate};
use crate::clock_publish::ClockPublisherMonitor;
use crate::jump::{ClockChange, JumpRegistry, TimeJump};
use crate::source::{MonotonicSource, SystemSource, TimeSource};
use crate::{ClockType, Duration, Time};
use parking_lot::Mutex;
use std::sync::Arc;

#[derive(Debug, Default)]
struct State {
    /// `use_sim_time`: follow `/clock` once a message arrived.
    override_enabled: bool,
    /// Latest `/clock` value.
    latest: Option<i64>,
}

impl State {
    fn active(&self) -> bool {
        self.override_enabled && self.latest.is_some()
    }
}

/// ROS time.
///
/// With the ROS time override enabled (`use_sim_time`) and at least one
/// `/clock` message received, `now()` is the latest received time. Otherwise
/// (no active source) it falls back to system time. Activation, deactivation
/// and jumps of the `/clock` value call the jump handlers; pre-jump handlers
/// complete before the new time is visible.
pub struct RosClock {
    system: Arc<dyn TimeSource>,
    steady: Arc<dyn TimeSource>,
    state: Mutex<State>,
    feed: Mutex<()>,
    gate: SleepGate,
    jumps: JumpRegistry,
    publishers: ClockPublisherMonitor,
}

impl ClockParts for RosClock {
    fn parts(&self) -> (&SleepGate, &JumpRegistry) {
        (&self.gate, &self.jumps)
    }
}

impl RosClock {
    /// A ROS clock on the real system and steady sources (override disabled).
    pub fn new() -> Self {
        Self::with_sources(
            Arc::new(SystemSource::new()),
            Arc::new(MonotonicSource::new()),
        )
    }

    /// A ROS clock on injected sources: `system` for the fallback, `steady`
    /// for real-time timeouts.
    pub fn with_sources(system: Arc<dyn TimeSource>, steady: Arc<dyn TimeSource>) -> Self {
        RosClock {
            system,
            steady,
            state: Mutex::new(State::default()),
            feed: Mutex::new(()),
            gate: SleepGate::new(),
            jumps: JumpRegistry::new(),
            publishers: ClockPublisherMonitor::new(),
        }
    }

    fn value(&self, st: &State) -> i64 {
        match st.latest {
            Some(t) if st.override_enabled => t,
            _ => self.system.now(),
        }
    }

    /// Apply a state change, calling jump handlers around it if time moves.
    fn change(&self, apply: impl FnOnce(&mut State)) {
        let _feed = self.feed.lock();
        let (before, active_before, mut after) = {
            let st = self.state.lock();
            let mut next = State {
                override_enabled: st.override_enabled,
                latest: st.latest,
            };
            apply(&mut next);
            (self.value(&st), st.active(), next)
        };
        let active_after = after.active();
        let after_value = self.value(&after);
        let clock_change = match (active_before, active_after) {
            (false, true) => ClockChange::RosTimeActivated,
            (true, false) => ClockChange::RosTimeDeactivated,
            _ => ClockChange::RosTimeNoChange,
        };
        let jump = TimeJump {
            clock_change,
            delta: Duration::from_nanos(after_value.saturating_sub(before)),
        };
        let notify = clock_change.is_clock_change() || (active_after && jump.delta.as_nanos() != 0);
        if notify {
            self.jumps.notify_pre(&jump);
        }
        {
            let mut st = self.state.lock();
            std::mem::swap(&mut *st, &mut after);
            if clock_change.is_clock_change() || jump.delta.is_negative() {
                self.gate.interrupt();
            } else {
                self.gate.poke();
            }
        }
        if notify {
            self.jumps.notify_post(&jump);
        }
    }

    /// Enable or disable following `/clock` (`use_sim_time`).
    pub fn set_ros_time_override(&self, enabled: bool) {
        self.change(|st| st.override_enabled = enabled);
    }

    /// True if the override is enabled.
    pub fn ros_time_override(&self) -> bool {
        self.state.lock().override_enabled
    }

    /// True if `now()` reports `/clock` time (override enabled and a message received).
    pub fn is_ros_time_active(&self) -> bool {
        self.state.lock().active()
    }

    /// Feed a `/clock` message (called by the transport).
    pub fn on_clock_message(&self, time: Time) {
        if time.clock_type() != ClockType::Ros {
            log::warn!("ignoring /clock message with a {time}");
            return;
        }
        self.change(|st| st.latest = Some(time.nanos()));
    }

    /// Report the number of `/clock` publishers; warns when more than one.
    pub fn set_clock_publisher_count(&self, count: usize) -> bool {
        self.publishers.set_count(count)
    }
}

impl Default for RosClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for RosClock {
    fn clock_type(&self) -> ClockType {
        ClockType::Ros
    }

    fn now(&self) -> Time {
        let st = self.state.lock();
        Time::ros(self.value(&st))
    }

    /// While `/clock` is active, waits for a message at or after `until`;
    /// otherwise waits on system time. Returns false on activation change,
    /// backward jump, timeout (measured on steady time) or `wakeup()`.
    fn sleep_until(&self, until: Time, real_time_timeout: Duration) -> bool {
        if until.clock_type() != ClockType::Ros {
            log::warn!("RosClock::sleep_until called with a {until}");
            return false;
        }
        let until = until.nanos();
        let sleep = self.gate.enter(self.steady.now(), real_time_timeout);
        let timeout_deadline = sleep.deadline;
        loop {
            let (seen, active, target) = {
                let st = self.state.lock();
                let seen = self.gate.signal.generation();
                if sleep.interrupted() {
                    return false;
                }
                if self.value(&st) >= until {
                    return true;
                }
                let steady_now = self.steady.now();
                if steady_now >= timeout_deadline {
                    return false;
                }
                if st.active() {
                    (seen, true, timeout_deadline)
                } else {
                    let left = timeout_deadline - steady_now;
                    (
                        seen,
                        false,
                        until.min(self.system.now().saturating_add(left)),
                    )
                }
            };
            if active {
                self.steady.wait_until(target, &self.gate.signal, seen);
            } else {
                self.system.wait_until(target, &self.gate.signal, seen);
            }
        }
    }
}
