//! `SimTimeClock`: playback time driven by an external `/clock` (`--use-sim-time`),
//! with optional extrapolation between samples (`--extrapolate-ros-time`).

use crate::clock::{Clock, ClockParts, SleepGate};
use crate::clock_publish::ClockPublisherMonitor;
use crate::jump::{ClockChange, JumpRegistry, TimeJump};
use crate::player_clock::{PlayerClock, PlayerClockParts};
use crate::source::{MonotonicSource, TimeSource};
use crate::{ClockError, ClockType, Duration, Time};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

/// Settings of a [`SimTimeClock`].
#[derive(Debug, Clone, PartialEq)]
pub struct SimTimeConfig {
    /// Extrapolate between `/clock` samples (`--extrapolate-ros-time`).
    pub extrapolate: bool,
    /// Number of recent samples used to estimate the real-time factor and the
    /// sample period (at least 2).
    pub window: usize,
    /// The watchdog pauses time when no sample arrived within
    /// `period * (1 + watchdog_tolerance)` after the last one.
    pub watchdog_tolerance: f64,
    /// A forward step larger than this many mean steps is a discontinuity:
    /// the estimate restarts from that sample.
    pub discontinuity_factor: f64,
}

impl Default for SimTimeConfig {
    fn default() -> Self {
        SimTimeConfig {
            extrapolate: false,
            window: 10,
            watchdog_tolerance: 0.5,
            discontinuity_factor: 4.0,
        }
    }
}

/// Linear model of the source fitted over the sample window.
#[derive(Debug, Clone, Copy)]
struct Model {
    r_last: i64,
    s_last: i64,
    /// ROS nanoseconds per steady nanosecond.
    rtf: f64,
    /// Mean steady interval between samples.
    period: f64,
    /// ROS-time step of the last sample: the most extrapolation may add.
    step: i64,
}

#[derive(Debug, Clone, Copy)]
struct Estimate {
    value: i64,
    overdue: bool,
    model: Option<Model>,
}

#[derive(Debug)]
struct State {
    /// (ros, steady) samples since the last reset, oldest first.
    samples: VecDeque<(i64, i64)>,
    /// Latest received ROS time.
    latest: Option<i64>,
    /// Highest time reportable before the latest sample: reported time never goes below it.
    floor: i64,
}

/// Playback clock following an external `/clock`.
///
/// A passive consumer: `pause`, `resume`, `set_rate`, `jump` and `/clock`
/// publication are refused with a warning and [`ClockError::SimTimeReadOnly`].
///
/// Without extrapolation `now()` is the latest received time (0 before the
/// first message). With extrapolation, `now()` is the latest sample plus
/// `rtf * elapsed`, where the real-time factor is estimated over the last
/// `window` samples, capped at one sample step ahead of the latest sample,
/// never below a time already reportable, and frozen by the watchdog as soon
/// as a sample is overdue. A backward jump of the source fires jump handlers.
pub struct SimTimeClock {
    config: SimTimeConfig,
    source: Arc<dyn TimeSource>,
    state: Mutex<State>,
    feed: Mutex<()>,
    gate: SleepGate,
    jumps: JumpRegistry,
    publishers: ClockPublisherMonitor,
}

impl ClockParts for SimTimeClock {
    fn parts(&self) -> (&SleepGate, &JumpRegistry) {
        (&self.gate, &self.jumps)
    }
}

impl SimTimeClock {
    /// A sim-time clock on the real monotonic source.
    pub fn new(config: SimTimeConfig) -> Self {
        Self::with_source(config, Arc::new(MonotonicSource::new()))
    }

    /// A sim-time clock on an injected steady source (used for arrival times,
    /// extrapolation, the watchdog and real-time timeouts).
    pub fn with_source(mut config: SimTimeConfig, source: Arc<dyn TimeSource>) -> Self {
        config.window = config.window.max(2);
        if !config.watchdog_tolerance.is_finite() || config.watchdog_tolerance < 0.0 {
            config.watchdog_tolerance = SimTimeConfig::default().watchdog_tolerance;
        }
        if !config.discontinuity_factor.is_finite() || config.discontinuity_factor < 1.0 {
            config.discontinuity_factor = SimTimeConfig::default().discontinuity_factor;
        }
        SimTimeClock {
            config,
            source,
            state: Mutex::new(State {
                samples: VecDeque::new(),
                latest: None,
                floor: i64::MIN,
            }),
            feed: Mutex::new(()),
            gate: SleepGate::new(),
            jumps: JumpRegistry::new(),
            publishers: ClockPublisherMonitor::new(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &SimTimeConfig {
        &self.config
    }

    /// True once a `/clock` message was received.
    pub fn has_time(&self) -> bool {
        self.state.lock().latest.is_some()
    }

    fn refuse(&self, op: &'static str) -> ClockError {
        log::warn!("{op} refused: playback follows an external /clock (--use-sim-time)");
        ClockError::SimTimeReadOnly(op)
    }

    fn model(&self, st: &State) -> Option<Model> {
        if !self.config.extrapolate || st.samples.len() < 2 {
            return None;
        }
        let (r_first, s_first) = *st.samples.front()?;
        let (r_last, s_last) = *st.samples.back()?;
        let (r_prev, _) = st.samples[st.samples.len() - 2];
        let span = s_last.saturating_sub(s_first);
        if span <= 0 {
            return None;
        }
        Some(Model {
            r_last,
            s_last,
            rtf: r_last.saturating_sub(r_first) as f64 / span as f64,
            period: span as f64 / (st.samples.len() - 1) as f64,
            step: r_last.saturating_sub(r_prev).max(0),
        })
    }

    fn overdue(&self, m: &Model, steady: i64) -> bool {
        steady.saturating_sub(m.s_last) as f64 > m.period * (1.0 + self.config.watchdog_tolerance)
    }

    fn estimate(&self, st: &State, steady: i64) -> Estimate {
        let Some(latest) = st.latest else {
            return Estimate {
                value: 0,
                overdue: false,
                model: None,
            };
        };
        let Some(m) = self.model(st) else {
            return Estimate {
                value: latest.max(st.floor),
                overdue: false,
                model: None,
            };
        };
        let elapsed = steady.saturating_sub(m.s_last).max(0) as f64;
        let ext = (m.rtf * elapsed).floor();
        let ext = if ext >= m.step as f64 {
            m.step
        } else {
            ext as i64
        };
        Estimate {
            value: m.r_last.saturating_add(ext).max(st.floor),
            overdue: self.overdue(&m, steady),
            model: Some(m),
        }
    }

    fn now_nanos(&self) -> i64 {
        let st = self.state.lock();
        self.estimate(&st, self.source.now()).value
    }

    /// Apply a sample that is not a backward jump.
    fn push_sample(&self, st: &mut State, ros: i64, steady: i64) {
        let est = self.estimate(st, steady);
        st.floor = st.floor.max(est.value);
        let mut reset = est.overdue; // the watchdog tripped before this sample
        if let (Some(m), Some(&(r_first, _))) = (est.model, st.samples.front()) {
            let step = ros.saturating_sub(m.r_last);
            let mean = m.r_last.saturating_sub(r_first) as f64 / (st.samples.len() - 1) as f64;
            if step as f64 > self.config.discontinuity_factor * mean && step > 0 {
                reset = true;
            }
        }
        if reset {
            st.samples.clear();
        }
        st.samples.push_back((ros, steady));
        while st.samples.len() > self.config.window {
            st.samples.pop_front();
        }
        st.latest = Some(ros);
    }
}

impl Clock for SimTimeClock {
    fn clock_type(&self) -> ClockType {
        ClockType::Ros
    }

    fn now(&self) -> Time {
        Time::ros(self.now_nanos())
    }

    fn sleep_until(&self, until: Time, real_time_timeout: Duration) -> bool {
        if until.clock_type() != ClockType::Ros {
            log::warn!("SimTimeClock::sleep_until called with a {until}");
            return false;
        }
        let until = until.nanos();
        let sleep = self.gate.enter(self.source.now(), real_time_timeout);
        let timeout_deadline = sleep.deadline;
        let mut was_overdue: Option<bool> = None;
        loop {
            let (seen, target) = {
                let st = self.state.lock();
                let seen = self.gate.signal.generation();
                if sleep.interrupted() {
                    return false; // source jumped back, or wakeup()
                }
                let now = self.source.now();
                let est = self.estimate(&st, now);
                if est.value >= until {
                    return true;
                }
                if now >= timeout_deadline {
                    return false;
                }
                if was_overdue == Some(false) && est.overdue {
                    return false; // the watchdog paused time meanwhile
                }
                was_overdue = Some(est.overdue);
                let mut target = timeout_deadline;
                if let Some(m) = est.model.filter(|_| !est.overdue) {
                    let need = until.saturating_sub(m.r_last);
                    if need <= m.step && m.rtf > 0.0 {
                        let reach = m.s_last.saturating_add((need as f64 / m.rtf).ceil() as i64);
                        target = target.min(reach.max(now.saturating_add(1)));
                    }
                    let watchdog = m.period * (1.0 + self.config.watchdog_tolerance);
                    let trip = m.s_last.saturating_add(watchdog as i64 + 1);
                    target = target.min(trip.max(now.saturating_add(1)));
                }
                (seen, target)
            };
            self.source.wait_until(target, &self.gate.signal, seen);
        }
    }
}

impl PlayerClock for SimTimeClock {
    fn pause(&self) -> Result<(), ClockError> {
        Err(self.refuse("pause"))
    }

    fn resume(&self) -> Result<(), ClockError> {
        Err(self.refuse("resume"))
    }

    /// True while the watchdog holds time (extrapolation only).
    fn is_paused(&self) -> bool {
        let st = self.state.lock();
        self.estimate(&st, self.source.now()).overdue
    }

    fn set_rate(&self, _rate: f64) -> Result<(), ClockError> {
        Err(self.refuse("set_rate"))
    }

    /// The estimated real-time factor of the source when extrapolating with
    /// at least two samples; 1.0 otherwise.
    fn get_rate(&self) -> f64 {
        let st = self.state.lock();
        self.model(&st).map_or(1.0, |m| m.rtf)
    }

    fn jump(&self, _time: Time) -> Result<(), ClockError> {
        Err(self.refuse("jump"))
    }

    /// Linear prediction from the extrapolation model; `None` without one.
    fn ros_to_steady(&self, time: Time) -> Option<Time> {
        if time.clock_type() != ClockType::Ros {
            return None;
        }
        let st = self.state.lock();
        let m = self.model(&st)?;
        if m.rtf <= 0.0 {
            return None;
        }
        let need = time.nanos().saturating_sub(m.r_last) as f64 / m.rtf;
        let need = need.ceil().clamp(i64::MIN as f64, i64::MAX as f64) as i64;
        Some(Time::steady(m.s_last.saturating_add(need)))
    }

    /// Only disabling (`hz <= 0`) is accepted: sim time does not publish `/clock`.
    fn set_clock_publish_frequency(&self, hz: f64) -> Result<(), ClockError> {
        crate::check_clock_publish_frequency(hz)?;
        if hz > 0.0 {
            return Err(self.refuse("set_clock_publish_frequency"));
        }
        Ok(())
    }

    fn get_clock_publish_frequency(&self) -> f64 {
        0.0
    }

    fn take_clock_publish_due(&self) -> Option<Time> {
        None
    }

    /// Never due: waits for the timeout or `wakeup()`, then returns `None`.
    fn wait_clock_publish_due(&self, real_time_timeout: Duration) -> Option<Time> {
        let watch = self.gate.watch_wakeups(&*self.source, real_time_timeout);
        loop {
            let seen = self.gate.signal.generation();
            if watch.woken() || self.source.now() >= watch.deadline {
                return None;
            }
            self.source
                .wait_until(watch.deadline, &self.gate.signal, seen);
        }
    }

    /// Feed one `/clock` sample.
    ///
    /// The first sample activates ROS time (handlers with `on_clock_change`
    /// are called). A sample older than the previous one is a backward jump:
    /// pre-jump handlers run before the new time is visible, sleepers are
    /// interrupted, then post-jump handlers run. Forward steps are reported to
    /// handlers whose `min_forward` threshold they reach.
    fn on_clock_message(&self, time: Time) {
        if time.clock_type() != ClockType::Ros {
            log::warn!("ignoring /clock message with a {time}");
            return;
        }
        let ros = time.nanos();
        let _feed = self.feed.lock();
        let (previous, reported) = {
            let st = self.state.lock();
            (st.latest, self.estimate(&st, self.source.now()).value)
        };
        let jump = match previous {
            None => TimeJump {
                clock_change: ClockChange::RosTimeActivated,
                delta: Duration::from_nanos(ros),
            },
            // Backward: the jump as seen by readers (from the reported time).
            Some(prev) if ros < prev => TimeJump {
                clock_change: ClockChange::RosTimeNoChange,
                delta: Duration::from_nanos(ros.saturating_sub(reported).min(-1)),
            },
            // Forward: the step of the source.
            Some(prev) => TimeJump {
                clock_change: ClockChange::RosTimeNoChange,
                delta: Duration::from_nanos(ros.saturating_sub(prev)),
            },
        };
        let backward = previous.is_some_and(|p| ros < p);
        self.jumps.notify_pre(&jump);
        {
            let mut st = self.state.lock();
            let steady = self.source.now();
            if backward {
                st.samples.clear();
                st.samples.push_back((ros, steady));
                st.latest = Some(ros);
                st.floor = ros;
                self.gate.interrupt();
            } else {
                if previous.is_none() {
                    st.floor = ros;
                }
                self.push_sample(&mut st, ros, steady);
                self.gate.poke();
            }
        }
        self.jumps.notify_post(&jump);
    }

    fn uses_sim_time(&self) -> bool {
        true
    }
}

impl PlayerClockParts for SimTimeClock {
    fn publishers(&self) -> &ClockPublisherMonitor {
        &self.publishers
    }
}
