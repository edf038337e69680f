//! The player clock `ros2 bag play`'s time options ask for: a time controller of its own, or a
//! follower of an external `/clock` under sim time. Above both clocks.

use std::sync::Arc;

use crate::player_clock::PlayerClock;
use crate::sim_time::{SimTimeClock, SimTimeConfig};
use crate::time_controller::{TimeControllerClock, TimeControllerConfig};
use crate::{ClockError, PlaybackRate, Time, TimeSource};

/// Options mirroring `ros2 bag play` time options, for [`create_player_clock`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerClockOptions {
    /// Playback time at start (usually the first message timestamp of the bag).
    pub starting_time: Time,
    /// Playback rate (`--rate`).
    pub rate: PlaybackRate,
    /// Start paused (`--start-paused`).
    pub start_paused: bool,
    /// `/clock` publish frequency in Hz (`--clock`); 0 disables.
    pub clock_publish_frequency: f64,
    /// Follow an external `/clock` (`--use-sim-time`).
    pub use_sim_time: bool,
    /// Extrapolate between `/clock` samples (`--extrapolate-ros-time`); only with sim time.
    pub extrapolate_ros_time: bool,
}

impl Default for PlayerClockOptions {
    fn default() -> Self {
        PlayerClockOptions {
            starting_time: Time::ros(0),
            rate: PlaybackRate::REAL_TIME,
            start_paused: true,
            clock_publish_frequency: 0.0,
            use_sim_time: false,
            extrapolate_ros_time: false,
        }
    }
}

/// Builds the player clock for these options on `source` (a [`MonotonicSource`](crate::MonotonicSource) in production,
/// a [`VirtualTimeSource`](crate::VirtualTimeSource) in tests).
pub fn create_player_clock(
    options: &PlayerClockOptions,
    source: Arc<dyn TimeSource>,
) -> Result<Arc<dyn PlayerClock>, ClockError> {
    if options.use_sim_time {
        if options.clock_publish_frequency > 0.0 {
            log::warn!("--clock is ignored with --use-sim-time: the external /clock drives time");
        }
        let cfg = SimTimeConfig {
            extrapolate: options.extrapolate_ros_time,
            ..SimTimeConfig::default()
        };
        Ok(Arc::new(SimTimeClock::with_source(cfg, source)))
    } else {
        if options.extrapolate_ros_time {
            log::warn!("--extrapolate-ros-time only has an effect with --use-sim-time");
        }
        let cfg = TimeControllerConfig {
            rate: options.rate,
            start_paused: options.start_paused,
            clock_publish_frequency: options.clock_publish_frequency,
        };
        Ok(Arc::new(TimeControllerClock::with_source(
            options.starting_time,
            cfg,
            source,
        )?))
    }
}
