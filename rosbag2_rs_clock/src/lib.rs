//! ROS time abstractions and the [`PlayerClock`] that owns all playback time logic.
//!
//! - [`Time`], [`Duration`] and [`ClockType`]: integer nanoseconds, checked
//!   arithmetic, `builtin_interfaces` conversions, and a clock tag so that
//!   times of different clocks never mix silently.
//! - [`Clock`]: one interface over [`SteadyClock`], [`SystemClock`],
//!   [`RosClock`] and the player clocks, with jump handlers
//!   ([`JumpThreshold`], [`JumpHandle`]), [`Rate`] and [`Timer`].
//! - [`PlayerClock`]: playback time. [`TimeControllerClock`] controls time
//!   (pause, rate, jump, `/clock` schedule); [`SimTimeClock`] follows an
//!   external `/clock`, optionally extrapolating between samples.
//! - [`TimeSource`]: every clock reads and waits through an injectable
//!   source: [`MonotonicSource`] / [`SystemSource`] in production (precise
//!   sleep: condition variable to just before the deadline, then a bounded
//!   spin, see [`SpinPolicy`]), [`VirtualTimeSource`] in tests.
#![forbid(unsafe_code)]

mod clock;
mod clock_publish;
mod clock_type;
mod duration;
mod error;
mod jump;
mod player_clock;
mod player_options;
mod rate_timer;
mod ros_clock;
mod scale;
mod sim_time;
mod source;
mod time;
mod time_controller;
mod virtual_source;
mod wall_steps;

pub use clock::{Clock, SourceClock, SourceKind, Steady, SteadyClock, System, SystemClock};
pub use clock_publish::{
    check_clock_publish_frequency, ClockPublisherMonitor, MAX_CLOCK_PUBLISH_FREQUENCY,
};
pub use clock_type::ClockType;
pub use duration::{Duration, NANOS_PER_SEC};
pub use error::{ClockError, TimeError};
pub use jump::{
    ClockChange, JumpHandle, JumpRegistry, JumpThreshold, PostJumpCallback, PreJumpCallback,
    TimeJump,
};
pub use player_clock::PlayerClock;
pub use player_options::{create_player_clock, PlayerClockOptions};
pub use rate_timer::{Rate, Timer};
pub use ros_clock::RosClock;
pub use scale::PlaybackRate;
pub use sim_time::{SimTimeClock, SimTimeConfig};
pub use source::{MonotonicSource, SpinPolicy, SystemSource, TimeSource, WaitOutcome, WakeSignal};
pub use time::Time;
pub use time_controller::{TimeControllerClock, TimeControllerConfig};
pub use virtual_source::VirtualTimeSource;
