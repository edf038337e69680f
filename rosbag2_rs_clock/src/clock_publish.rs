//! `/clock` publication schedule and `/clock` publisher-count monitoring.
//!
//! The clock decides *when* a `/clock` message is due; the transport only
//! publishes the time it is handed.

use crate::ClockError;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The highest `/clock` publish frequency accepted, in Hz: ten times what simulators publish at
/// most. A service request can set the frequency, so a peer must not be able to make the player
/// publish `/clock` in a busy loop.
pub const MAX_CLOCK_PUBLISH_FREQUENCY: f64 = 10_000.0;

/// Whether `hz` is a `/clock` publish frequency a clock takes: finite and at most
/// [`MAX_CLOCK_PUBLISH_FREQUENCY`] (`<= 0` disables publishing).
pub fn check_clock_publish_frequency(hz: f64) -> Result<(), ClockError> {
    if hz.is_finite() && hz <= MAX_CLOCK_PUBLISH_FREQUENCY {
        Ok(())
    } else {
        Err(ClockError::InvalidFrequency(hz))
    }
}

/// Steady-time schedule of `/clock` messages at a fixed frequency.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClockPublishSchedule {
    frequency: f64,
    period: i64,
    next_due: Option<i64>,
}

impl ClockPublishSchedule {
    /// Disabled schedule.
    pub(crate) fn disabled() -> Self {
        ClockPublishSchedule {
            frequency: 0.0,
            period: 0,
            next_due: None,
        }
    }

    /// Set the frequency in Hz (<= 0 disables; above [`MAX_CLOCK_PUBLISH_FREQUENCY`] refused).
    /// The first message is due at once.
    pub(crate) fn set_frequency(&mut self, hz: f64, steady_now: i64) -> Result<(), ClockError> {
        check_clock_publish_frequency(hz)?;
        if hz <= 0.0 {
            *self = Self::disabled();
            return Ok(());
        }
        let period = (1e9 / hz).round();
        self.period = if period >= i64::MAX as f64 {
            i64::MAX
        } else {
            (period as i64).max(1)
        };
        self.frequency = hz;
        self.next_due = Some(steady_now);
        Ok(())
    }

    /// The frequency in Hz (0 when disabled).
    pub(crate) fn frequency(&self) -> f64 {
        self.frequency
    }

    /// Steady time at which the next message is due, if publishing is enabled.
    pub(crate) fn next_due(&self) -> Option<i64> {
        self.next_due
    }

    /// Make a message due at once (after a jump, pause or resume), if enabled.
    pub(crate) fn due_now(&mut self, steady_now: i64) {
        if self.next_due.is_some() {
            self.next_due = Some(steady_now);
        }
    }

    /// If a message is due at `steady_now`, consume it and return true.
    /// Keeps phase (no drift); after a stall it skips missed slots instead of bursting.
    pub(crate) fn take_due(&mut self, steady_now: i64) -> bool {
        match self.next_due {
            Some(due) if steady_now >= due => {
                let mut next = due.saturating_add(self.period);
                if next <= steady_now {
                    next = steady_now.saturating_add(self.period);
                }
                self.next_due = Some(next);
                true
            }
            _ => false,
        }
    }
}

/// Watches the number of `/clock` publishers reported by the transport and
/// warns (once per episode) when there is more than one.
#[derive(Debug, Default)]
pub struct ClockPublisherMonitor {
    count: AtomicUsize,
    warned: AtomicBool,
}

impl ClockPublisherMonitor {
    /// A monitor with a count of zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record the current publisher count. Returns true (and logs a warning
    /// the first time) when more than one publisher is present.
    pub fn set_count(&self, n: usize) -> bool {
        self.count.store(n, Ordering::SeqCst);
        if n > 1 {
            if !self.warned.swap(true, Ordering::SeqCst) {
                log::warn!(
                    "{n} publishers on /clock detected; time will be inconsistent. \
                     Make sure only one ROS time source publishes /clock"
                );
            }
            true
        } else {
            self.warned.store(false, Ordering::SeqCst);
            false
        }
    }

    /// Last reported publisher count.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// True while more than one publisher is reported.
    pub fn has_multiple(&self) -> bool {
        self.count() > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_keeps_phase_and_skips_after_stall() {
        let mut s = ClockPublishSchedule::disabled();
        assert!(!s.take_due(0));
        s.set_frequency(1000.0, 10).unwrap();
        assert!(s.take_due(10));
        assert!(!s.take_due(10));
        assert_eq!(s.next_due(), Some(1_000_010));
        assert!(s.take_due(1_000_300));
        assert_eq!(s.next_due(), Some(2_000_010));
        assert!(s.take_due(9_000_000));
        assert_eq!(s.next_due(), Some(10_000_000));
        s.due_now(9_500_000);
        assert!(s.take_due(9_500_000));
        assert!(s.set_frequency(f64::NAN, 0).is_err());
        s.set_frequency(-1.0, 0).unwrap();
        assert_eq!(s.next_due(), None);
        assert_eq!(s.frequency(), 0.0);
    }

    #[test]
    fn frequencies_beyond_the_cap_or_not_finite_are_refused_and_change_nothing() {
        let mut s = ClockPublishSchedule::disabled();
        s.set_frequency(MAX_CLOCK_PUBLISH_FREQUENCY, 0).unwrap();
        assert_eq!(s.period, 100_000);
        for hz in [
            MAX_CLOCK_PUBLISH_FREQUENCY * 1.01,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ] {
            assert!(matches!(
                s.set_frequency(hz, 0),
                Err(ClockError::InvalidFrequency(_))
            ));
            assert_eq!(s.frequency(), MAX_CLOCK_PUBLISH_FREQUENCY);
        }
    }

    #[test]
    fn monitor_flags_multiple_publishers() {
        let m = ClockPublisherMonitor::new();
        assert!(!m.set_count(1));
        assert!(m.set_count(2));
        assert!(m.has_multiple());
        assert!(m.set_count(3));
        assert!(!m.set_count(0));
        assert_eq!(m.count(), 0);
    }
}
