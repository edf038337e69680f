//! Pauses and resumes scheduled for a time of the player node's clock (system time, as a ROS 2
//! node's clock without sim time): `resume` with a `resume_time` (rosbag2's `Resume.srv`) and
//! `pause_at` (`rosbag2_rs_interfaces/srv/PauseAt`). Players asked for the same time act at the
//! same instant whatever the delay of each request, so several players start or stop together.
//!
//! A pause and a resume can both be pending (play from one time to another); a newer request of
//! the same kind replaces the pending one. Each waits on its own thread, sleeping on the system
//! clock until the time comes (precise sleeping; a virtual source in tests).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rosbag2_rs_clock::{Clock, ClockType, Time};

use super::{Core, PlayerError, WAIT};

/// What a schedule does when its time comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    /// Pause playback.
    Pause,
    /// Resume playback.
    Resume,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Resume => "resume",
        }
    }
}

/// The pending schedules: a generation per action, bumped by each new request so that the
/// thread of a replaced one gives up.
#[derive(Debug, Default)]
pub(super) struct Schedules {
    pause: AtomicU64,
    resume: AtomicU64,
}

impl Schedules {
    fn generation(&self, action: Action) -> &AtomicU64 {
        match action {
            Action::Pause => &self.pause,
            Action::Resume => &self.resume,
        }
    }
}

impl Core {
    /// Runs `action` when the node's clock reaches `time_ns` (at once when it already has),
    /// replacing a pending one of the same kind.
    pub(super) fn schedule(
        self: &Arc<Self>,
        action: Action,
        time_ns: i64,
    ) -> Result<(), PlayerError> {
        self.refuse_under_sim_time(&format!("a scheduled {}", action.as_str()))?;
        let generation = self
            .schedules
            .generation(action)
            .fetch_add(1, Ordering::SeqCst)
            + 1;
        // The thread of a replaced schedule wakes and sees it is no longer current.
        self.system.wakeup();
        if self.system.now().nanos() >= time_ns {
            return self.act(action);
        }
        log::info!("{} scheduled at {time_ns} ns (node time)", action.as_str());
        let core = Arc::downgrade(self);
        std::thread::Builder::new()
            .name(format!("rosbag2_{}_at", action.as_str()))
            .spawn(move || loop {
                let Some(core) = core.upgrade() else { return };
                if core.schedules.generation(action).load(Ordering::SeqCst) != generation {
                    return;
                }
                let until = Time::from_nanos(time_ns, ClockType::System);
                if core.system.sleep_until(until, WAIT) || core.system.now() >= until {
                    if core.schedules.generation(action).load(Ordering::SeqCst) == generation {
                        if let Err(e) = core.act(action) {
                            log::warn!("scheduled {}: {e}", action.as_str());
                        }
                    }
                    return;
                }
            })
            .map_err(PlayerError::Spawn)?;
        Ok(())
    }

    fn act(&self, action: Action) -> Result<(), PlayerError> {
        match action {
            Action::Pause => self.pause(),
            Action::Resume => self.resume(),
        }
    }
}
