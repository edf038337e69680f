//! The common clock interface and the steady and system clocks.

use crate::jump::{JumpHandle, JumpRegistry, JumpThreshold, PostJumpCallback, PreJumpCallback};
use crate::source::{MonotonicSource, SystemSource, TimeSource, WakeSignal};
use crate::{ClockError, ClockType, Duration, Time};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// One interface over steady, system, ROS and playback clocks (this crate's clocks only).
pub trait Clock: Send + Sync + ClockParts {
    /// The clock type of the times this clock reports and accepts.
    fn clock_type(&self) -> ClockType;

    /// Current time of this clock.
    fn now(&self) -> Time;

    /// Block until this clock reaches `until`.
    ///
    /// Returns true when the time was reached; false when `real_time_timeout`
    /// of real time elapsed first, when the clock was paused, jumped or
    /// otherwise interrupted meanwhile, on [`wakeup`](Clock::wakeup), or when
    /// `until` has the wrong clock type. Spurious wake-ups are handled inside.
    fn sleep_until(&self, until: Time, real_time_timeout: Duration) -> bool;

    /// Sleep for `duration` of this clock's time (see [`sleep_until`](Clock::sleep_until)).
    fn sleep_for(&self, duration: Duration, real_time_timeout: Duration) -> bool {
        let until = self.now().saturating_add(duration);
        self.sleep_until(until, real_time_timeout)
    }

    /// Make every current `sleep_until` return false at once.
    fn wakeup(&self) {
        self.parts().0.wakeup();
    }

    /// Register handlers for jumps passing `threshold`. They stay registered
    /// while the returned handle lives. Fails if the threshold signs are wrong.
    fn create_jump_callback(
        &self,
        pre: Option<PreJumpCallback>,
        post: Option<PostJumpCallback>,
        threshold: JumpThreshold,
    ) -> Result<JumpHandle, ClockError> {
        let handle = self.parts().1.register(pre, post, threshold)?;
        self.jump_callback_created();
        Ok(handle)
    }
}

/// What every clock of this crate has, on which [`Clock`]'s default methods work: its sleep
/// gate and its jump handlers. Not reachable from outside the crate, so only this crate's
/// clocks implement [`Clock`].
pub trait ClockParts {
    /// The sleepers' interruption bookkeeping and the registered jump handlers.
    fn parts(&self) -> (&SleepGate, &JumpRegistry);
    /// Called after a jump callback was registered.
    fn jump_callback_created(&self) {}
}

/// Interruption bookkeeping shared by the clocks: a wake signal, an
/// interrupt epoch bumped by `wakeup`/pause/jump, and a sleeper count.
#[derive(Debug, Default)]
pub struct SleepGate {
    pub(crate) signal: Arc<WakeSignal>,
    interrupts: AtomicU64,
    wakeups: AtomicU64,
    sleepers: AtomicUsize,
}

impl SleepGate {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Current interrupt epoch.
    pub(crate) fn epoch(&self) -> u64 {
        self.interrupts.load(Ordering::SeqCst)
    }

    /// Interrupt current sleepers (they return false).
    pub(crate) fn interrupt(&self) {
        self.interrupts.fetch_add(1, Ordering::SeqCst);
        self.signal.notify();
    }

    /// Explicit `wakeup()`: interrupt sleepers and any `/clock` publish waiter.
    pub(crate) fn wakeup(&self) {
        self.wakeups.fetch_add(1, Ordering::SeqCst);
        self.interrupt();
    }

    /// Starts a wait, timed out by `source`, that only an explicit wake-up interrupts, such as
    /// a wait for a `/clock` publish.
    pub(crate) fn watch_wakeups(
        &self,
        source: &dyn TimeSource,
        timeout: Duration,
    ) -> WakeupWatch<'_> {
        WakeupWatch {
            gate: self,
            wakeups: self.wakeups.load(Ordering::SeqCst),
            deadline: source.now().saturating_add(timeout.as_nanos().max(0)),
        }
    }

    /// Wake sleepers so that they re-evaluate (they keep sleeping if nothing relevant changed).
    pub(crate) fn poke(&self) {
        self.signal.notify();
    }

    /// Starts a sleep at `now` on the time source that measures `timeout`: counts a sleeper
    /// until the guard is dropped, and notes the interrupt epoch and the timeout deadline.
    pub(crate) fn enter(&self, now: i64, timeout: Duration) -> SleeperGuard<'_> {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        SleeperGuard {
            gate: self,
            epoch: self.epoch(),
            deadline: now.saturating_add(timeout.as_nanos().max(0)),
        }
    }

    pub(crate) fn sleeping(&self) -> bool {
        self.sleepers.load(Ordering::SeqCst) > 0
    }
}

/// A wait in progress that only an explicit wake-up interrupts (see
/// [`SleepGate::watch_wakeups`]).
pub(crate) struct WakeupWatch<'a> {
    gate: &'a SleepGate,
    wakeups: u64,
    /// When the wait times out.
    pub(crate) deadline: i64,
}

impl WakeupWatch<'_> {
    /// Whether [`Clock::wakeup`] was called since the wait started.
    pub(crate) fn woken(&self) -> bool {
        self.gate.wakeups.load(Ordering::SeqCst) != self.wakeups
    }
}

/// One sleep in progress (see [`SleepGate::enter`]).
pub(crate) struct SleeperGuard<'a> {
    gate: &'a SleepGate,
    epoch: u64,
    /// When the sleep times out, on the source that measures the timeout.
    pub(crate) deadline: i64,
}

impl SleeperGuard<'_> {
    /// Whether the clock was interrupted (woken, paused, jumped) since the sleep started.
    pub(crate) fn interrupted(&self) -> bool {
        self.gate.epoch() != self.epoch
    }
}

impl Drop for SleeperGuard<'_> {
    fn drop(&mut self) {
        self.gate.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Sleep on one source until `until`, with the timeout measured on the same source.
fn sleep_on_source(
    source: &dyn TimeSource,
    gate: &SleepGate,
    until: i64,
    timeout: Duration,
) -> bool {
    let sleep = gate.enter(source.now(), timeout);
    let timeout_deadline = sleep.deadline;
    loop {
        let seen = gate.signal.generation();
        if sleep.interrupted() {
            return false;
        }
        let now = source.now();
        if now >= until {
            return true;
        }
        if now >= timeout_deadline {
            return false;
        }
        source.wait_until(until.min(timeout_deadline), &gate.signal, seen);
    }
}

/// Which time a [`SourceClock`] tells, and the real source it reads by default.
pub trait SourceKind: Send + Sync + 'static {
    /// The clock type of the times it returns.
    const CLOCK_TYPE: ClockType;
    /// The real source behind `new()`.
    fn real_source() -> Arc<dyn TimeSource>;
    /// Whether the real source can be set (stepped) by others: its steps are jumps.
    const SETTABLE: bool = false;
}

/// [`SteadyClock`]'s kind: the monotonic source.
pub struct Steady;

impl SourceKind for Steady {
    const CLOCK_TYPE: ClockType = ClockType::Steady;
    fn real_source() -> Arc<dyn TimeSource> {
        Arc::new(MonotonicSource::new())
    }
}

/// [`SystemClock`]'s kind: the wall clock.
pub struct System;

impl SourceKind for System {
    const CLOCK_TYPE: ClockType = ClockType::System;
    const SETTABLE: bool = true;
    fn real_source() -> Arc<dyn TimeSource> {
        Arc::new(SystemSource::new())
    }
}

/// A clock that tells the time of one source, uncontrolled: the body of [`SteadyClock`] and
/// [`SystemClock`]. The real-time timeout of `sleep_until` is measured on the source itself.
/// A [`SystemClock`] on the real wall clock calls its jump handlers when the system clock is
/// set (Linux: noticed at once, with the size of the step); on an injected source, and for
/// steady time, jump handlers are kept but never called.
pub struct SourceClock<K> {
    source: Arc<dyn TimeSource>,
    gate: SleepGate,
    jumps: JumpRegistry,
    /// Steps of the real wall clock are reported to `jumps` (from the first jump callback on).
    reports_steps: std::sync::Once,
    real: bool,
    kind: PhantomData<K>,
}

/// Steady time: monotonic, never jumps, cannot be controlled.
pub type SteadyClock = SourceClock<Steady>;

/// System (wall-clock) time. Steps of the system clock call the jump handlers.
pub type SystemClock = SourceClock<System>;

impl<K: SourceKind> SourceClock<K> {
    /// A clock on the real source of its kind (precise sleeping).
    pub fn new() -> Self {
        Self {
            real: true,
            ..Self::with_source(K::real_source())
        }
    }

    /// A clock on an injected source.
    pub fn with_source(source: Arc<dyn TimeSource>) -> Self {
        SourceClock {
            source,
            gate: SleepGate::new(),
            jumps: JumpRegistry::new(),
            reports_steps: std::sync::Once::new(),
            real: false,
            kind: PhantomData,
        }
    }
}

impl<K: SourceKind> Default for SourceClock<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: SourceKind> ClockParts for SourceClock<K> {
    fn parts(&self) -> (&SleepGate, &JumpRegistry) {
        (&self.gate, &self.jumps)
    }
    /// From the first jump callback on, steps of the real wall clock are reported as jumps.
    fn jump_callback_created(&self) {
        if K::SETTABLE && self.real {
            self.reports_steps
                .call_once(|| crate::wall_steps::report_to(&self.jumps));
        }
    }
}

impl<K: SourceKind> Clock for SourceClock<K> {
    fn clock_type(&self) -> ClockType {
        K::CLOCK_TYPE
    }

    fn now(&self) -> Time {
        Time::from_nanos(self.source.now(), K::CLOCK_TYPE)
    }

    fn sleep_until(&self, until: Time, real_time_timeout: Duration) -> bool {
        if until.clock_type() != K::CLOCK_TYPE {
            log::warn!(
                "a {} clock was asked to sleep until a {until}",
                K::CLOCK_TYPE
            );
            return false;
        }
        sleep_on_source(&*self.source, &self.gate, until.nanos(), real_time_timeout)
    }
}
