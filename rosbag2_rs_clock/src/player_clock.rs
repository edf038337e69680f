//! The `PlayerClock` trait: the only place where playback time is computed.

use crate::clock::Clock;
use crate::clock_publish::ClockPublisherMonitor;
use crate::{ClockError, Duration, Time};

/// Playback time for the player.
///
/// The player queries [`now`](Clock::now), sleeps with
/// [`sleep_until`](Clock::sleep_until) between messages, registers a jump
/// handler with [`create_jump_callback`](Clock::create_jump_callback) to
/// re-enqueue messages after a seek, and forwards control requests
/// (pause/resume/rate/jump) unchanged. The transport publishes `/clock`
/// when [`wait_clock_publish_due`](PlayerClock::wait_clock_publish_due)
/// hands it a time, and feeds `/clock` subscriptions and publisher counts
/// in with [`on_clock_message`](PlayerClock::on_clock_message) and
/// [`set_clock_publisher_count`](PlayerClock::set_clock_publisher_count).
///
/// All times are [`ClockType::Ros`](crate::ClockType::Ros).
pub trait PlayerClock: Clock + PlayerClockParts {
    /// Stop the flow of time. `now()` stays constant until resumed.
    /// Interrupts current sleepers (they return false).
    fn pause(&self) -> Result<(), ClockError>;

    /// Restart the flow of time from where it was paused.
    fn resume(&self) -> Result<(), ClockError>;

    /// True while time is paused (for sim time: while the `/clock` watchdog holds time).
    fn is_paused(&self) -> bool;

    /// Set the playback rate. Rejects `rate <= 0` and non-finite values
    /// with [`ClockError::InvalidRate`]; use [`pause`](PlayerClock::pause) to stop time.
    fn set_rate(&self, rate: f64) -> Result<(), ClockError>;

    /// Current playback rate (for sim time: the estimated real-time factor, or 1.0).
    fn get_rate(&self) -> f64;

    /// Move playback time to `time`, firing jump handlers; sleepers return false.
    fn jump(&self, time: Time) -> Result<(), ClockError>;

    /// The steady time at which playback time reaches `time` under current
    /// settings, if predictable (`None` e.g. for sim time without extrapolation).
    fn ros_to_steady(&self, time: Time) -> Option<Time>;

    /// Set the `/clock` publish frequency in Hz; `<= 0` disables publishing.
    /// A positive frequency makes a message due at once. Rejects non-finite values.
    fn set_clock_publish_frequency(&self, hz: f64) -> Result<(), ClockError>;

    /// The `/clock` publish frequency in Hz (0 when disabled).
    fn get_clock_publish_frequency(&self) -> f64;

    /// Non-blocking: if a `/clock` message is due, consume it and return the
    /// time to publish.
    fn take_clock_publish_due(&self) -> Option<Time>;

    /// Block until a `/clock` message is due (returns the time to publish) or
    /// `real_time_timeout` elapses / [`wakeup`](Clock::wakeup) is called (returns `None`).
    fn wait_clock_publish_due(&self, real_time_timeout: Duration) -> Option<Time>;

    /// Feed a time received on `/clock` (used by sim time; ignored by clocks
    /// that are themselves the time source).
    fn on_clock_message(&self, time: Time);

    /// Report the number of `/clock` publishers; more than one logs a warning.
    /// Returns true when more than one publisher is present.
    fn set_clock_publisher_count(&self, count: usize) -> bool {
        self.publishers().set_count(count)
    }

    /// The number of `/clock` publishers last reported.
    fn clock_publisher_count(&self) -> usize {
        self.publishers().count()
    }

    /// True while some thread is inside `sleep_until`.
    fn is_sleeping(&self) -> bool {
        self.parts().0.sleeping()
    }

    /// True for a clock driven by an external `/clock` (`--use-sim-time`).
    fn uses_sim_time(&self) -> bool;
}

/// What every player clock of this crate has besides its [`ClockParts`](crate::clock::ClockParts), on which
/// [`PlayerClock`]'s default methods work. Not reachable from outside the crate.
pub trait PlayerClockParts {
    /// The count of `/clock` publishers.
    fn publishers(&self) -> &ClockPublisherMonitor;
}
