//! The common clock interface and the steady and system clocks.

use crate::jump::{JumpHandle, JumpRegistry, JumpThreshold, PostJumpCallback, PreJumpCallback};
use crate::source::{MonotonicSource, SystemSource, TimeSource, WakeSignal};
use crate::{ClockError, ClockType, Duration, Time};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// One interface over steady, system, ROS and playback clocks.
pub trait Clock: Send + Sync {
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
    fn wakeup(&self);

    /// Register handlers for jumps passing `threshold`. They stay registered
    /// while the returned handle lives. Fails if the threshold signs are wrong.
    fn create_jump_callback(
        &self,
        pre: Option<PreJumpCallback>,
        post: Option<PostJumpCallback>,
        threshold: JumpThreshold,
    ) -> Result<JumpHandle, ClockError>;
}

/// Interruption bookkeeping shared by the clocks: a wake signal, an
/// interrupt epoch bumped by `wakeup`/pause/jump, and a sleeper count.
#[derive(Debug, Default)]
pub(crate) struct SleepGate {
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

    /// Count of explicit wake-ups.
    pub(crate) fn wakeups(&self) -> u64 {
        self.wakeups.load(Ordering::SeqCst)
    }

    /// Wake sleepers so that they re-evaluate (they keep sleeping if nothing relevant changed).
    pub(crate) fn poke(&self) {
        self.signal.notify();
    }

    pub(crate) fn enter(&self) -> SleeperGuard<'_> {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        SleeperGuard { gate: self }
    }

    pub(crate) fn sleeping(&self) -> bool {
        self.sleepers.load(Ordering::SeqCst) > 0
    }
}

pub(crate) struct SleeperGuard<'a> {
    gate: &'a SleepGate,
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
    let _sleeping = gate.enter();
    let epoch = gate.epoch();
    let timeout_deadline = source.now().saturating_add(timeout.as_nanos().max(0));
    loop {
        let seen = gate.signal.generation();
        if gate.epoch() != epoch {
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

/// Steady time: monotonic, never jumps, cannot be controlled.
pub struct SteadyClock {
    source: Arc<dyn TimeSource>,
    gate: SleepGate,
    jumps: JumpRegistry,
}

impl SteadyClock {
    /// A steady clock on the real monotonic source (precise sleeping).
    pub fn new() -> Self {
        Self::with_source(Arc::new(MonotonicSource::new()))
    }

    /// A steady clock on an injected source.
    pub fn with_source(source: Arc<dyn TimeSource>) -> Self {
        SteadyClock {
            source,
            gate: SleepGate::new(),
            jumps: JumpRegistry::new(),
        }
    }
}

impl Default for SteadyClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SteadyClock {
    fn clock_type(&self) -> ClockType {
        ClockType::Steady
    }

    fn now(&self) -> Time {
        Time::steady(self.source.now())
    }

    fn sleep_until(&self, until: Time, real_time_timeout: Duration) -> bool {
        if until.clock_type() != ClockType::Steady {
            log::warn!("SteadyClock::sleep_until called with a {until}");
            return false;
        }
        sleep_on_source(&*self.source, &self.gate, until.nanos(), real_time_timeout)
    }

    fn wakeup(&self) {
        self.gate.wakeup();
    }

    /// Steady time never jumps: handlers are kept but never called.
    fn create_jump_callback(
        &self,
        pre: Option<PreJumpCallback>,
        post: Option<PostJumpCallback>,
        threshold: JumpThreshold,
    ) -> Result<JumpHandle, ClockError> {
        self.jumps.register(pre, post, threshold)
    }
}

/// System (wall-clock) time.
///
/// The real-time timeout of `sleep_until` is measured on the system clock
/// itself. Jumps of the system clock are not detected (no handler is called).
pub struct SystemClock {
    source: Arc<dyn TimeSource>,
    gate: SleepGate,
    jumps: JumpRegistry,
}

impl SystemClock {
    /// A system clock on the real wall clock.
    pub fn new() -> Self {
        Self::with_source(Arc::new(SystemSource::new()))
    }

    /// A system clock on an injected source.
    pub fn with_source(source: Arc<dyn TimeSource>) -> Self {
        SystemClock {
            source,
            gate: SleepGate::new(),
            jumps: JumpRegistry::new(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn clock_type(&self) -> ClockType {
        ClockType::System
    }

    fn now(&self) -> Time {
        Time::system(self.source.now())
    }

    fn sleep_until(&self, until: Time, real_time_timeout: Duration) -> bool {
        if until.clock_type() != ClockType::System {
            log::warn!("SystemClock::sleep_until called with a {until}");
            return false;
        }
        sleep_on_source(&*self.source, &self.gate, until.nanos(), real_time_timeout)
    }

    fn wakeup(&self) {
        self.gate.wakeup();
    }

    fn create_jump_callback(
        &self,
        pre: Option<PreJumpCallback>,
        post: Option<PostJumpCallback>,
        threshold: JumpThreshold,
    ) -> Result<JumpHandle, ClockError> {
        self.jumps.register(pre, post, threshold)
    }
}
