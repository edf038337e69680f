//! Steps of the system (wall) clock, noticed as they happen: someone sets `CLOCK_REALTIME`
//! (an administrator, NTP stepping, a VM resuming) and the jump handlers of every live
//! [`SystemClock`](crate::SystemClock) on the real source are called with the size of the step,
//! as rcl calls its system-time jump callbacks.
//!
//! On Linux a `timerfd` on `CLOCK_REALTIME`, armed far in the future with
//! `TFD_TIMER_CANCEL_ON_SET`, is cancelled by every discontinuous change of the clock; the step
//! is the change of the wall clock's offset from the monotonic clock across it. One thread per
//! process watches, from the first clock that asks on. Elsewhere steps are not noticed.

use parking_lot::Mutex;

use crate::jump::{ClockChange, JumpRegistry, TimeJump, WeakJumpRegistry};
use crate::Duration;

/// Where steps of the wall clock come from.
pub(crate) trait WallSteps {
    /// The wall clock minus the monotonic clock, ns.
    fn offset(&mut self) -> i64;
    /// Blocks until the wall clock was set (after [`arm`](Self::arm)); an error ends watching.
    fn wait(&mut self) -> std::io::Result<()>;
    /// Prepares the next [`wait`](Self::wait).
    fn arm(&mut self) -> std::io::Result<()>;
}

/// Reports each step `steps` notices to `notify`, until `steps` fails.
pub(crate) fn watch(mut steps: impl WallSteps, notify: impl Fn(&TimeJump)) -> std::io::Error {
    loop {
        // Armed before the offset is read: a step in between still cancels the wait.
        if let Err(e) = steps.arm() {
            return e;
        }
        let before = steps.offset();
        if let Err(e) = steps.wait() {
            return e;
        }
        let delta = steps.offset().saturating_sub(before);
        notify(&TimeJump {
            clock_change: ClockChange::SystemTimeNoChange,
            delta: Duration::from_nanos(delta),
        });
    }
}

/// The registries of the clocks that want steps reported.
static WATCHED: Mutex<Vec<WeakJumpRegistry>> = Mutex::new(Vec::new());

/// Calls `registry`'s handlers on every step of the wall clock from now on, for as long as it
/// lives (starts the watching thread the first time).
pub(crate) fn report_to(registry: &JumpRegistry) {
    let mut watched = WATCHED.lock();
    let first = watched.is_empty();
    watched.retain(|r| r.upgrade().is_some());
    watched.push(registry.downgrade());
    if first {
        start();
    }
}

fn notify_all(jump: &TimeJump) {
    let live: Vec<JumpRegistry> = WATCHED.lock().iter().filter_map(|r| r.upgrade()).collect();
    log::info!(
        "the system clock was set: a jump of {} ns",
        jump.delta.as_nanos()
    );
    for registry in &live {
        registry.notify_pre(jump);
    }
    for registry in &live {
        registry.notify_post(jump);
    }
}

#[cfg(target_os = "linux")]
fn start() {
    let steps = match timerfd::CancelOnSet::new() {
        Ok(steps) => steps,
        Err(e) => {
            log::warn!("system clock steps will not be noticed: {e}");
            return;
        }
    };
    let spawned = std::thread::Builder::new()
        .name("wall-clock-steps".into())
        .spawn(move || {
            let e = watch(steps, notify_all);
            log::warn!("system clock steps are no longer noticed: {e}");
        });
    if let Err(e) = spawned {
        log::warn!("system clock steps will not be noticed: {e}");
    }
}

#[cfg(not(target_os = "linux"))]
fn start() {
    log::debug!("system clock steps are not noticed on this platform");
}

#[cfg(target_os = "linux")]
mod timerfd {
    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

    use super::WallSteps;
    use crate::source::{MonotonicSource, SystemSource, TimeSource};

    /// A `timerfd` that the kernel cancels when `CLOCK_REALTIME` is set.
    pub(super) struct CancelOnSet {
        timer: TimerFd,
        wall: SystemSource,
        steady: MonotonicSource,
    }

    impl CancelOnSet {
        pub(super) fn new() -> std::io::Result<Self> {
            Ok(Self {
                timer: TimerFd::new(ClockId::CLOCK_REALTIME, TimerFlags::TFD_CLOEXEC)?,
                wall: SystemSource::new(),
                steady: MonotonicSource::new(),
            })
        }
    }

    impl WallSteps for CancelOnSet {
        fn offset(&mut self) -> i64 {
            self.wall.now().saturating_sub(self.steady.now())
        }

        fn wait(&mut self) -> std::io::Result<()> {
            // The expiry lies centuries ahead: the wait ends when the clock is set.
            Ok(self.timer.wait()?)
        }

        fn arm(&mut self) -> std::io::Result<()> {
            let far = TimeSpec::new(i64::from(i32::MAX) * 2, 0);
            Ok(self.timer.set(
                Expiration::OneShot(far),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME | TimerSetTimeFlags::TFD_TIMER_CANCEL_ON_SET,
            )?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Steps given in advance: each wait "happens" with the next offset.
    struct Scripted {
        offsets: VecDeque<i64>,
        current: i64,
    }

    impl WallSteps for Scripted {
        fn offset(&mut self) -> i64 {
            self.current
        }
        fn wait(&mut self) -> std::io::Result<()> {
            self.current = self
                .offsets
                .pop_front()
                .ok_or_else(|| std::io::Error::other("script ended"))?;
            Ok(())
        }
        fn arm(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn each_step_is_reported_with_its_size() {
        let steps = Scripted {
            offsets: [5_000_000_000, 5_000_000_000, 3_000_000_000].into(),
            current: 0,
        };
        let seen = Mutex::new(Vec::new());
        let end = watch(steps, |jump| {
            assert_eq!(jump.clock_change, ClockChange::SystemTimeNoChange);
            seen.lock().push(jump.delta.as_nanos());
        });
        assert_eq!(end.to_string(), "script ended");
        assert_eq!(*seen.lock(), [5_000_000_000, 0, -2_000_000_000]);
    }
}
