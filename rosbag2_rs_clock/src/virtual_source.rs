//! A virtual time source for deterministic tests.

use crate::source::{TimeSource, WaitOutcome, WakeSignal};
use crate::Duration;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

/// A time source whose time moves only when told to.
///
/// Two modes:
/// - **blocking** ([`VirtualTimeSource::new`]): a waiting thread blocks until
///   the test advances time past its deadline (or the clock's state changes).
///   The test can wait for sleepers with [`wait_for_waiters`](Self::wait_for_waiters)
///   and jump to their deadline with [`advance_to_next_deadline`](Self::advance_to_next_deadline).
/// - **auto-advancing** ([`VirtualTimeSource::auto_advancing`]): a wait moves
///   virtual time straight to its deadline and returns, so single-threaded
///   tests can sleep without blocking.
///
/// Cloning shares the same timeline.
#[derive(Debug, Clone)]
pub struct VirtualTimeSource {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    signal: Arc<WakeSignal>,
    /// The signal generation the waiter went to sleep on; a newer one means it was woken.
    seen: u64,
    deadline: i64,
}

#[derive(Debug)]
struct Inner {
    now: AtomicI64,
    auto_advance: bool,
    next_id: AtomicU64,
    waiters: Mutex<Vec<Waiter>>,
    waiters_changed: Condvar,
}

impl VirtualTimeSource {
    /// A blocking virtual source starting at `start_nanos`.
    pub fn new(start_nanos: i64) -> Self {
        Self::build(start_nanos, false)
    }

    /// An auto-advancing virtual source starting at `start_nanos`.
    pub fn auto_advancing(start_nanos: i64) -> Self {
        Self::build(start_nanos, true)
    }

    fn build(start: i64, auto_advance: bool) -> Self {
        VirtualTimeSource {
            inner: Arc::new(Inner {
                now: AtomicI64::new(start),
                auto_advance,
                next_id: AtomicU64::new(0),
                waiters: Mutex::new(Vec::new()),
                waiters_changed: Condvar::new(),
            }),
        }
    }

    /// This source as a shareable trait object.
    pub fn as_source(&self) -> Arc<dyn TimeSource> {
        Arc::new(self.clone())
    }

    /// Current virtual time in nanoseconds.
    pub fn now_nanos(&self) -> i64 {
        self.inner.now.load(Ordering::SeqCst)
    }

    /// Move time forward by `d` (negative values are ignored) and wake waiters.
    pub fn advance(&self, d: Duration) {
        let d = d.as_nanos().max(0);
        let cur = self.now_nanos();
        self.set(cur.saturating_add(d));
    }

    /// Set time to `t` (may go backwards, to model a system-clock jump) and wake waiters.
    pub fn set(&self, t: i64) {
        self.inner.now.store(t, Ordering::SeqCst);
        self.poke_all();
    }

    fn poke_all(&self) {
        let signals: Vec<Arc<WakeSignal>> = self
            .inner
            .waiters
            .lock()
            .iter()
            .map(|w| Arc::clone(&w.signal))
            .collect();
        for s in signals {
            s.poke();
        }
    }

    /// Number of threads currently inside [`TimeSource::wait_until`].
    pub fn waiter_count(&self) -> usize {
        self.inner.waiters.lock().len()
    }

    /// Earliest deadline among current waiters.
    pub fn next_deadline(&self) -> Option<i64> {
        self.inner.waiters.lock().iter().map(|w| w.deadline).min()
    }

    /// Advance to the earliest waiter deadline (if later than now); returns it.
    pub fn advance_to_next_deadline(&self) -> Option<i64> {
        let d = self.next_deadline()?;
        if d > self.now_nanos() {
            self.set(d);
        }
        Some(d)
    }

    /// Block until at least `n` threads are waiting on this source.
    ///
    /// Returns false if that did not happen within `guard` of real time; the
    /// guard only protects a broken test from hanging and is never part of an
    /// assertion about timing.
    pub fn wait_for_waiters(&self, n: usize, guard: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + guard;
        let mut waiters = self.inner.waiters.lock();
        while waiters.len() < n {
            if self
                .inner
                .waiters_changed
                .wait_until(&mut waiters, deadline)
                .timed_out()
            {
                return waiters.len() >= n;
            }
        }
        true
    }

    /// Block until at least `n` threads wait on this source, every waiter's deadline lies ahead
    /// of the current virtual time and none has been woken. After [`advance`](Self::advance) or
    /// [`set`](Self::set), this is the moment the woken threads have done their work and gone
    /// back to sleep. Returns false if that did not happen within `guard` of real time (a
    /// safety net for broken tests, never a timing assertion).
    pub fn wait_settled(&self, n: usize, guard: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + guard;
        let mut waiters = self.inner.waiters.lock();
        loop {
            let now = self.now_nanos();
            let asleep = |w: &Waiter| w.deadline > now && w.signal.generation() == w.seen;
            if waiters.len() >= n && waiters.iter().all(asleep) {
                return true;
            }
            if self
                .inner
                .waiters_changed
                .wait_until(&mut waiters, deadline)
                .timed_out()
            {
                return false;
            }
        }
    }

    fn register(&self, signal: &Arc<WakeSignal>, seen: u64, deadline: i64) -> u64 {
        let id = self.inner.next_id.fetch_add(1, Ordering::SeqCst);
        self.inner.waiters.lock().push(Waiter {
            id,
            signal: Arc::clone(signal),
            seen,
            deadline,
        });
        self.inner.waiters_changed.notify_all();
        id
    }

    fn unregister(&self, id: u64) {
        self.inner.waiters.lock().retain(|w| w.id != id);
        self.inner.waiters_changed.notify_all();
    }
}

impl TimeSource for VirtualTimeSource {
    fn now(&self) -> i64 {
        self.now_nanos()
    }

    fn wait_until(&self, deadline: i64, signal: &Arc<WakeSignal>, seen: u64) -> WaitOutcome {
        if signal.generation() != seen {
            return WaitOutcome::Woken;
        }
        if self.now_nanos() >= deadline {
            return WaitOutcome::Reached;
        }
        if self.inner.auto_advance {
            self.inner.now.fetch_max(deadline, Ordering::SeqCst);
            self.poke_all();
            return WaitOutcome::Reached;
        }
        let id = self.register(signal, seen, deadline);
        let outcome = {
            let mut guard = signal.lock();
            loop {
                if signal.generation() != seen {
                    break WaitOutcome::Woken;
                }
                if self.now_nanos() >= deadline {
                    break WaitOutcome::Reached;
                }
                signal.condvar().wait(&mut guard);
            }
        };
        self.unregister(id);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_advance_moves_to_deadline() {
        let v = VirtualTimeSource::auto_advancing(5);
        let sig = Arc::new(WakeSignal::new());
        assert_eq!(v.wait_until(100, &sig, 0), WaitOutcome::Reached);
        assert_eq!(v.now_nanos(), 100);
        assert_eq!(v.wait_until(50, &sig, 0), WaitOutcome::Reached);
        assert_eq!(v.now_nanos(), 100);
        sig.notify();
        assert_eq!(v.wait_until(500, &sig, 0), WaitOutcome::Woken);
        assert_eq!(v.now_nanos(), 100);
    }

    #[test]
    fn blocking_wait_returns_when_advanced() {
        let v = VirtualTimeSource::new(0);
        let sig = Arc::new(WakeSignal::new());
        let (v2, sig2) = (v.clone(), Arc::clone(&sig));
        let h = std::thread::spawn(move || v2.wait_until(1_000, &sig2, 0));
        assert!(v.wait_for_waiters(1, std::time::Duration::from_secs(10)));
        assert_eq!(v.next_deadline(), Some(1_000));
        v.advance(Duration::from_nanos(999));
        v.advance_to_next_deadline();
        assert_eq!(h.join().unwrap(), WaitOutcome::Reached);
        assert_eq!(v.now_nanos(), 1_000);
        assert_eq!(v.waiter_count(), 0);
    }

    #[test]
    fn blocking_wait_returns_when_notified() {
        let v = VirtualTimeSource::new(0);
        let sig = Arc::new(WakeSignal::new());
        let (v2, sig2) = (v.clone(), Arc::clone(&sig));
        let h = std::thread::spawn(move || v2.wait_until(1_000, &sig2, 0));
        assert!(v.wait_for_waiters(1, std::time::Duration::from_secs(10)));
        sig.notify();
        assert_eq!(h.join().unwrap(), WaitOutcome::Woken);
        assert_eq!(v.now_nanos(), 0);
    }
}
