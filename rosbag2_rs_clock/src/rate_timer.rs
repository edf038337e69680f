//! `Rate` (fixed-period loop pacing) and `Timer` (periodic callback on a thread),
//! for any [`Clock`], including sim time that pauses.

use crate::clock::Clock;
use crate::{ClockError, Duration, Time};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Paces a loop at a fixed period of a clock's time.
///
/// Cycle boundaries keep phase (no drift). If the loop falls more than one
/// period behind, or the clock jumps backwards, the schedule restarts from now.
pub struct Rate {
    clock: Arc<dyn Clock>,
    period: Duration,
    next: Time,
}

impl Rate {
    /// A rate with the given period (> 0); the first cycle ends one period from now.
    pub fn new(clock: Arc<dyn Clock>, period: Duration) -> Result<Self, ClockError> {
        if period.as_nanos() <= 0 {
            return Err(ClockError::InvalidPeriod("period must be > 0"));
        }
        let next = clock.now().saturating_add(period);
        Ok(Rate {
            clock,
            period,
            next,
        })
    }

    /// A rate of `hz` cycles per second of the clock's time.
    pub fn from_hz(clock: Arc<dyn Clock>, hz: f64) -> Result<Self, ClockError> {
        Self::new(clock, Duration::from_hz(hz)?)
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// End time of the current cycle.
    pub fn next_deadline(&self) -> Time {
        self.next
    }

    /// Restart the schedule: the next cycle ends one period from now.
    pub fn reset(&mut self) {
        self.next = self.clock.now().saturating_add(self.period);
    }

    /// Sleep until the end of the current cycle.
    ///
    /// Returns true when the cycle ended (and schedules the next one); false
    /// when the sleep was interrupted or timed out (call again to keep waiting).
    pub fn sleep(&mut self, real_time_timeout: Duration) -> bool {
        let reached = self.clock.sleep_until(self.next, real_time_timeout);
        let now = self.clock.now();
        if !reached {
            // A backward jump makes the deadline unreachable for a long time: restart.
            if now < self.next.saturating_sub(self.period) {
                self.reset();
            }
            return false;
        }
        self.next = self.next.saturating_add(self.period);
        if self.next <= now {
            self.next = now.saturating_add(self.period);
        }
        true
    }
}

struct TimerShared {
    cancelled: AtomicBool,
}

/// Calls a callback once per period of a clock's time, on its own thread.
///
/// The callback receives the clock time at which it fired. On a paused or
/// stalled clock it does not fire. Cancelling (or dropping) the timer calls
/// [`Clock::wakeup`] on the clock to end the pending sleep, which also makes
/// other current sleepers on that clock return false once.
pub struct Timer {
    clock: Arc<dyn Clock>,
    shared: Arc<TimerShared>,
    thread: Option<JoinHandle<()>>,
}

impl Timer {
    /// Start a timer with the given period (> 0).
    pub fn spawn<F>(
        clock: Arc<dyn Clock>,
        period: Duration,
        mut callback: F,
    ) -> Result<Self, ClockError>
    where
        F: FnMut(Time) + Send + 'static,
    {
        let mut rate = Rate::new(Arc::clone(&clock), period)?;
        let shared = Arc::new(TimerShared {
            cancelled: AtomicBool::new(false),
        });
        let thread_shared = Arc::clone(&shared);
        let thread_clock = Arc::clone(&clock);
        let thread = std::thread::Builder::new()
            .name("rosbag2_rs_clock-timer".into())
            .spawn(move || loop {
                if thread_shared.cancelled.load(Ordering::SeqCst) {
                    break;
                }
                if rate.sleep(Duration::from_secs(1)) {
                    if thread_shared.cancelled.load(Ordering::SeqCst) {
                        break;
                    }
                    callback(thread_clock.now());
                }
            })
            .map_err(|e| ClockError::Spawn(e.to_string()))?;
        Ok(Timer {
            clock,
            shared,
            thread: Some(thread),
        })
    }

    /// Stop the timer and wait for its thread to end.
    pub fn cancel(&mut self) {
        self.shared.cancelled.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            // Repeat the wake-up until the thread notices (it may be between sleeps).
            while !t.is_finished() {
                self.clock.wakeup();
                std::thread::yield_now();
            }
            let _ = t.join();
        }
    }

    /// True until cancelled.
    pub fn is_active(&self) -> bool {
        !self.shared.cancelled.load(Ordering::SeqCst)
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.cancel();
    }
}
