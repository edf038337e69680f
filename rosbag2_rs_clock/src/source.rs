//! Injectable time sources: where clocks read raw time and how they wait.
//!
//! Every clock in this crate reads time and blocks through a [`TimeSource`].
//! Production code uses [`MonotonicSource`] (steady) and [`SystemSource`]
//! (wall clock); tests use [`VirtualTimeSource`](crate::VirtualTimeSource),
//! which the test advances by hand.

use crate::Duration;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// A notification channel between a clock's state changes and its sleepers.
///
/// The generation counter increases on every [`notify`](WakeSignal::notify).
/// A sleeper reads the generation while holding its clock's state lock, then
/// waits with [`TimeSource::wait_until`]; a notify that happens after the read
/// always ends the wait, so no wake-up is lost.
#[derive(Debug, Default)]
pub struct WakeSignal {
    generation: AtomicU64,
    mutex: Mutex<()>,
    cv: Condvar,
}

impl WakeSignal {
    /// A new signal at generation 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current generation.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Bump the generation and wake every waiter.
    pub fn notify(&self) {
        {
            let _g = self.mutex.lock();
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        self.cv.notify_all();
    }

    /// Wake waiters without bumping the generation, so that they re-check
    /// their deadline (used by virtual sources when time advances).
    pub fn poke(&self) {
        let _g = self.mutex.lock();
        self.cv.notify_all();
    }

    pub(crate) fn lock(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.mutex.lock()
    }

    pub(crate) fn condvar(&self) -> &Condvar {
        &self.cv
    }
}

/// Why [`TimeSource::wait_until`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// The source's time reached the deadline.
    Reached,
    /// The signal's generation changed (the clock's state changed).
    Woken,
}

/// A raw time source: a timeline in nanoseconds and a way to block on it.
pub trait TimeSource: Send + Sync {
    /// Current time of this source in nanoseconds.
    fn now(&self) -> i64;

    /// Block until `self.now() >= deadline` or until `signal.generation() != seen`.
    ///
    /// Must return at once if either already holds. May not return early
    /// otherwise (implementations loop over spurious wake-ups).
    fn wait_until(&self, deadline: i64, signal: &Arc<WakeSignal>, seen: u64) -> WaitOutcome;
}

/// How the real sources finish a wait: coarse condition-variable wait to just
/// before the deadline, then a short busy spin.
///
/// Plain condition-variable waits wake up ~60-150 µs late on a loaded Linux
/// box; spinning for the last stretch brings median lateness to ~1 µs, at the
/// cost of CPU time proportional to the spin window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpinPolicy {
    /// Upper bound of the spin window (bounds CPU use). Zero disables spinning.
    pub max_spin: Duration,
    /// Lower bound of the spin window when spinning is enabled.
    pub min_spin: Duration,
    /// Adapt the window to the measured lateness of coarse waits
    /// (between `min_spin` and `max_spin`); otherwise always `max_spin`.
    pub adaptive: bool,
}

impl SpinPolicy {
    /// Precise sleeping: adaptive window between 20 µs and 400 µs.
    pub const fn precise() -> Self {
        SpinPolicy {
            max_spin: Duration::from_micros(400),
            min_spin: Duration::from_micros(20),
            adaptive: true,
        }
    }

    /// Low-power sleeping: no spin at all (plain condition-variable waits).
    pub const fn low_power() -> Self {
        SpinPolicy {
            max_spin: Duration::ZERO,
            min_spin: Duration::ZERO,
            adaptive: false,
        }
    }

    /// True if this policy spins at all.
    pub fn spins(&self) -> bool {
        self.max_spin.as_nanos() > 0
    }
}

impl Default for SpinPolicy {
    fn default() -> Self {
        Self::precise()
    }
}

/// Spin window state: a running estimate of the ~90th percentile of the
/// lateness of coarse waits.
///
/// Stochastic quantile tracking: each observation above the estimate raises
/// it by a fixed step, each one below lowers it by a step 8 times smaller, so
/// the estimate settles where ~11% of observations lie above it. Outliers
/// (preemption by other processes, which no spin can fix) move it by one
/// step only, which keeps the CPU spent spinning bounded under load.
#[derive(Debug)]
struct SpinState {
    policy: SpinPolicy,
    /// Estimated lateness quantile of a coarse wait, in ns.
    lateness_estimate: AtomicI64,
}

/// Step up of the quantile estimate (ns).
const QUANTILE_STEP_UP: i64 = 2_000;
/// Step down of the quantile estimate (ns).
const QUANTILE_STEP_DOWN: i64 = QUANTILE_STEP_UP / 8;

impl SpinState {
    fn new(policy: SpinPolicy) -> Self {
        SpinState {
            policy,
            lateness_estimate: AtomicI64::new(100_000.min(policy.max_spin.as_nanos())),
        }
    }

    fn window(&self) -> i64 {
        let max = self.policy.max_spin.as_nanos().max(0);
        if max == 0 {
            return 0;
        }
        let min = self.policy.min_spin.as_nanos().clamp(0, max);
        if !self.policy.adaptive {
            return max;
        }
        // Margin of 25% + 10 µs above the estimate.
        let est = self.lateness_estimate.load(Ordering::Relaxed);
        (est + est / 4 + 10_000).clamp(min, max)
    }

    /// Feed one observed lateness of a coarse wait.
    fn observe(&self, late: i64) {
        if !self.policy.adaptive || !self.policy.spins() {
            return;
        }
        let est = self.lateness_estimate.load(Ordering::Relaxed);
        let next = if late > est {
            est + QUANTILE_STEP_UP
        } else {
            est - QUANTILE_STEP_DOWN
        };
        let next = next.clamp(0, self.policy.max_spin.as_nanos());
        self.lateness_estimate.store(next, Ordering::Relaxed);
    }
}

/// Shared wait loop of the real sources: coarse condvar wait, then spin.
fn precise_wait(
    now: &dyn Fn() -> i64,
    deadline: i64,
    signal: &WakeSignal,
    seen: u64,
    spin: &SpinState,
    max_chunk: i64,
) -> WaitOutcome {
    {
        let mut guard = signal.lock();
        loop {
            if signal.generation() != seen {
                return WaitOutcome::Woken;
            }
            let start = now();
            if start >= deadline {
                return WaitOutcome::Reached;
            }
            let remaining = deadline.saturating_sub(start);
            let window = spin.window();
            if remaining <= window {
                break;
            }
            let coarse = (remaining - window).min(max_chunk);
            let timed_out = signal
                .condvar()
                .wait_for(&mut guard, std::time::Duration::from_nanos(coarse as u64))
                .timed_out();
            if timed_out && coarse < max_chunk {
                spin.observe(now().saturating_sub(start.saturating_add(coarse)));
            }
        }
    }
    loop {
        if signal.generation() != seen {
            return WaitOutcome::Woken;
        }
        if now() >= deadline {
            return WaitOutcome::Reached;
        }
        std::hint::spin_loop();
    }
}

fn process_origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

/// The real steady source: `std::time::Instant`, nanoseconds since a
/// process-wide origin (so all instances share one timeline).
#[derive(Debug)]
pub struct MonotonicSource {
    spin: SpinState,
}

impl MonotonicSource {
    /// A steady source with the default [`SpinPolicy::precise`].
    pub fn new() -> Self {
        Self::with_spin(SpinPolicy::precise())
    }

    /// A steady source with a chosen spin policy.
    pub fn with_spin(policy: SpinPolicy) -> Self {
        MonotonicSource {
            spin: SpinState::new(policy),
        }
    }

    /// The spin policy in use.
    pub fn spin_policy(&self) -> SpinPolicy {
        self.spin.policy
    }
}

impl Default for MonotonicSource {
    fn default() -> Self {
        Self::new()
    }
}

impl TimeSource for MonotonicSource {
    fn now(&self) -> i64 {
        i64::try_from(process_origin().elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    fn wait_until(&self, deadline: i64, signal: &Arc<WakeSignal>, seen: u64) -> WaitOutcome {
        precise_wait(&|| self.now(), deadline, signal, seen, &self.spin, i64::MAX)
    }
}

/// The real system (wall-clock) source: nanoseconds since the Unix epoch.
///
/// Waits re-check the wall clock at least every 100 ms, so a jump of the
/// system clock delays a wake-up by at most that much.
#[derive(Debug)]
pub struct SystemSource {
    spin: SpinState,
}

impl SystemSource {
    /// A system source with the default [`SpinPolicy::precise`].
    pub fn new() -> Self {
        Self::with_spin(SpinPolicy::precise())
    }

    /// A system source with a chosen spin policy.
    pub fn with_spin(policy: SpinPolicy) -> Self {
        SystemSource {
            spin: SpinState::new(policy),
        }
    }
}

impl Default for SystemSource {
    fn default() -> Self {
        Self::new()
    }
}

impl TimeSource for SystemSource {
    fn now(&self) -> i64 {
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
        }
    }

    fn wait_until(&self, deadline: i64, signal: &Arc<WakeSignal>, seen: u64) -> WaitOutcome {
        precise_wait(
            &|| self.now(),
            deadline,
            signal,
            seen,
            &self.spin,
            100_000_000,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_window_is_bounded() {
        let s = SpinState::new(SpinPolicy::precise());
        for _ in 0..1_000 {
            s.observe(10_000_000);
        }
        assert_eq!(s.window(), 400_000);
        for _ in 0..10_000 {
            s.observe(0);
        }
        assert_eq!(s.window(), 20_000);
        // Settles near the 90th percentile of the observations.
        let mut x: u64 = 1;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.observe(((x >> 33) % 100) as i64 * 1_000);
        }
        let est = s.lateness_estimate.load(Ordering::Relaxed);
        assert!((80_000..=95_000).contains(&est), "{est}");
        let off = SpinState::new(SpinPolicy::low_power());
        off.observe(1_000_000);
        assert_eq!(off.window(), 0);
    }

    #[test]
    fn already_reached_or_woken_returns_at_once() {
        let src = MonotonicSource::new();
        let sig = Arc::new(WakeSignal::new());
        assert_eq!(src.wait_until(i64::MIN, &sig, 0), WaitOutcome::Reached);
        sig.notify();
        assert_eq!(src.wait_until(i64::MAX, &sig, 0), WaitOutcome::Woken);
        let sys = SystemSource::new();
        assert_eq!(sys.wait_until(i64::MAX, &sig, 0), WaitOutcome::Woken);
    }
}
