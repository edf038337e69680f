//! Time-jump notifications: thresholds, jump descriptions and handler registry.

use crate::{ClockError, Duration};
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

/// What kind of discontinuity happened (mirrors `rcl_clock_change_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockChange {
    /// ROS time jumped while ROS time stayed active (e.g. seek, source rewind).
    RosTimeNoChange,
    /// A `/clock` source became active: ROS time switched from system time to it.
    RosTimeActivated,
    /// The `/clock` source was deactivated: ROS time fell back to system time.
    RosTimeDeactivated,
    /// A system or steady clock jumped.
    SystemTimeNoChange,
}

impl ClockChange {
    /// True for activation/deactivation of ROS time.
    pub fn is_clock_change(self) -> bool {
        matches!(
            self,
            ClockChange::RosTimeActivated | ClockChange::RosTimeDeactivated
        )
    }
}

/// A time jump as reported to handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeJump {
    /// Kind of discontinuity.
    pub clock_change: ClockChange,
    /// New time minus old time (negative for backward jumps).
    pub delta: Duration,
}

/// When a handler is called (mirrors `rcl_jump_threshold_t`).
///
/// A jump notifies the handler if any enabled condition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct JumpThreshold {
    /// Notify on ROS time activation/deactivation.
    pub on_clock_change: bool,
    /// Notify on forward jumps with `delta >= min_forward`. Must be `>= 0`; zero disables.
    pub min_forward: Duration,
    /// Notify on backward jumps with `delta <= min_backward`. Must be `<= 0`; zero disables.
    pub min_backward: Duration,
}

impl JumpThreshold {
    /// Notify on every jump: clock changes, and any forward or backward jump of at least 1 ns.
    pub const fn any() -> Self {
        JumpThreshold {
            on_clock_change: true,
            min_forward: Duration::from_nanos(1),
            min_backward: Duration::from_nanos(-1),
        }
    }

    /// Notify only on backward jumps (any size) and clock changes.
    pub const fn backward_only() -> Self {
        JumpThreshold {
            on_clock_change: true,
            min_forward: Duration::ZERO,
            min_backward: Duration::from_nanos(-1),
        }
    }

    /// Check the signs of the thresholds.
    pub fn validate(&self) -> Result<(), ClockError> {
        if self.min_forward.is_negative() {
            return Err(ClockError::InvalidThreshold(
                "min_forward must be positive or zero",
            ));
        }
        if self.min_backward.as_nanos() > 0 {
            return Err(ClockError::InvalidThreshold(
                "min_backward must be negative or zero",
            ));
        }
        Ok(())
    }

    /// Whether `jump` passes this threshold.
    pub fn matches(&self, jump: &TimeJump) -> bool {
        let d = jump.delta.as_nanos();
        (self.on_clock_change && jump.clock_change.is_clock_change())
            || (self.min_backward.as_nanos() != 0 && d < 0 && d <= self.min_backward.as_nanos())
            || (self.min_forward.as_nanos() != 0 && d > 0 && d >= self.min_forward.as_nanos())
    }
}

impl Default for JumpThreshold {
    fn default() -> Self {
        Self::any()
    }
}

/// Callback run before a jump becomes visible. The clock's new time cannot be
/// observed by any reader until every pre-jump callback has returned.
pub type PreJumpCallback = Box<dyn Fn(&TimeJump) + Send + Sync>;
/// Callback run after a jump became visible.
pub type PostJumpCallback = Box<dyn Fn(&TimeJump) + Send + Sync>;

struct Handler {
    id: u64,
    pre: Option<PreJumpCallback>,
    post: Option<PostJumpCallback>,
    threshold: JumpThreshold,
}

#[derive(Default)]
struct RegistryInner {
    next_id: u64,
    handlers: Vec<Arc<Handler>>,
}

/// The list of jump handlers of one clock. Clocks own one and call
/// [`notify_pre`](JumpRegistry::notify_pre) / [`notify_post`](JumpRegistry::notify_post).
#[derive(Clone, Default)]
pub struct JumpRegistry {
    inner: Arc<Mutex<RegistryInner>>,
}

impl std::fmt::Debug for JumpRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JumpRegistry")
            .field("handlers", &self.len())
            .finish()
    }
}

impl JumpRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register handlers; they stay registered until the returned handle is dropped.
    pub fn register(
        &self,
        pre: Option<PreJumpCallback>,
        post: Option<PostJumpCallback>,
        threshold: JumpThreshold,
    ) -> Result<JumpHandle, ClockError> {
        threshold.validate()?;
        let mut inner = self.inner.lock();
        let id = inner.next_id;
        inner.next_id += 1;
        inner.handlers.push(Arc::new(Handler {
            id,
            pre,
            post,
            threshold,
        }));
        Ok(JumpHandle {
            id,
            registry: Arc::downgrade(&self.inner),
        })
    }

    /// A reference that does not keep the registry alive.
    pub(crate) fn downgrade(&self) -> WeakJumpRegistry {
        WeakJumpRegistry(Arc::downgrade(&self.inner))
    }

    /// Number of registered handlers.
    pub fn len(&self) -> usize {
        self.inner.lock().handlers.len()
    }

    /// True if no handler is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn matching(&self, jump: &TimeJump) -> Vec<Arc<Handler>> {
        self.inner
            .lock()
            .handlers
            .iter()
            .filter(|h| h.threshold.matches(jump))
            .cloned()
            .collect()
    }

    /// Run matching pre-jump callbacks (no lock is held while they run).
    pub fn notify_pre(&self, jump: &TimeJump) {
        for h in self.matching(jump) {
            if let Some(cb) = &h.pre {
                cb(jump);
            }
        }
    }

    /// Run matching post-jump callbacks (no lock is held while they run).
    pub fn notify_post(&self, jump: &TimeJump) {
        for h in self.matching(jump) {
            if let Some(cb) = &h.post {
                cb(jump);
            }
        }
    }
}

/// A [`JumpRegistry`] that may be gone.
#[derive(Clone)]
pub(crate) struct WeakJumpRegistry(Weak<Mutex<RegistryInner>>);

impl WeakJumpRegistry {
    /// The registry, while its clock lives.
    pub(crate) fn upgrade(&self) -> Option<JumpRegistry> {
        self.0.upgrade().map(|inner| JumpRegistry { inner })
    }
}

/// Keeps a jump handler registered; dropping it unregisters the handler.
#[derive(Debug)]
#[must_use = "dropping the handle unregisters the jump handler"]
pub struct JumpHandle {
    id: u64,
    registry: Weak<Mutex<RegistryInner>>,
}

impl Drop for JumpHandle {
    fn drop(&mut self) {
        if let Some(reg) = self.registry.upgrade() {
            let removed: Vec<Arc<Handler>> = {
                let mut inner = reg.lock();
                let (gone, kept): (Vec<_>, Vec<_>) =
                    inner.handlers.drain(..).partition(|h| h.id == self.id);
                inner.handlers = kept;
                gone
            };
            // Handlers (and captured state) are dropped outside the lock.
            drop(removed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn jump(ns: i64, change: ClockChange) -> TimeJump {
        TimeJump {
            clock_change: change,
            delta: Duration::from_nanos(ns),
        }
    }

    #[test]
    fn thresholds() {
        let t = JumpThreshold {
            on_clock_change: false,
            min_forward: Duration::from_secs(1),
            min_backward: Duration::from_millis(-10),
        };
        assert!(t.validate().is_ok());
        assert!(!t.matches(&jump(999_999_999, ClockChange::RosTimeNoChange)));
        assert!(t.matches(&jump(1_000_000_000, ClockChange::RosTimeNoChange)));
        assert!(!t.matches(&jump(-9_999_999, ClockChange::RosTimeNoChange)));
        assert!(t.matches(&jump(-10_000_000, ClockChange::RosTimeNoChange)));
        assert!(!t.matches(&jump(0, ClockChange::RosTimeActivated)));
        assert!(JumpThreshold::any().matches(&jump(0, ClockChange::RosTimeActivated)));
        let bad = JumpThreshold {
            min_forward: Duration::from_nanos(-1),
            ..JumpThreshold::any()
        };
        assert!(bad.validate().is_err());
        let bad = JumpThreshold {
            min_backward: Duration::from_nanos(1),
            ..JumpThreshold::any()
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn handle_drop_unregisters() {
        let reg = JumpRegistry::new();
        let count = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&count);
        let h = reg
            .register(
                Some(Box::new(move |_| {
                    c.fetch_add(1, Ordering::SeqCst);
                })),
                None,
                JumpThreshold::any(),
            )
            .unwrap();
        reg.notify_pre(&jump(5, ClockChange::RosTimeNoChange));
        assert_eq!(count.load(Ordering::SeqCst), 1);
        drop(h);
        assert!(reg.is_empty());
        reg.notify_pre(&jump(5, ClockChange::RosTimeNoChange));
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}
