//! The playback device (the SDK's `rs2::playback`) on rosbag2-rs's `PlayerClock`: frames on the
//! recording's schedule at a speed factor (real time) or as fast as they are taken (non-real
//! time), with pause, resume, seek, speed, position, status, loop and a stream filter. Unlike
//! the SDK's, it never drops or repeats a frame: the consumer pulls, and the clock decides only
//! *when* the next frame is handed over.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rosbag2_rs_clock::{Duration, PlayerClock, Time};

use crate::error::RealSenseError;
use crate::model::{Device, Event, Frame};
use crate::reader::Recording;

/// Where playback stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Frames are being delivered.
    Playing,
    /// Paused: no frame is delivered until resumed.
    Paused,
    /// The end was reached (and looping is off).
    Stopped,
}

#[derive(Default)]
struct Shared {
    seek: Mutex<Option<i64>>,
    stopped: AtomicBool,
    position: Mutex<i64>,
    /// Each option's value as playback stands: (sensor, name) → value.
    options: Mutex<HashMap<(u32, String), f32>>,
}

/// Every option of `device` at its value at file time `time_ns`.
fn option_values(device: &Device, time_ns: i64) -> HashMap<(u32, String), f32> {
    device
        .sensors
        .iter()
        .flat_map(|s| {
            s.options
                .iter()
                .map(move |o| ((s.index, o.name.clone()), o.value_at(time_ns)))
        })
        .collect()
}

/// Controls a [`Playback`] from any thread.
#[derive(Clone)]
pub struct PlaybackHandle {
    clock: Arc<dyn PlayerClock>,
    shared: Arc<Shared>,
    start_ns: i64,
    end_ns: i64,
}

impl PlaybackHandle {
    /// Stops delivering frames until [`resume`](Self::resume).
    pub fn pause(&self) -> Result<(), RealSenseError> {
        self.clock.pause().map_err(clock_error)
    }

    /// Continues with the next frame.
    pub fn resume(&self) -> Result<(), RealSenseError> {
        self.clock.resume().map_err(clock_error)
    }

    /// Sets the speed factor (> 0) of real-time playback.
    pub fn set_speed(&self, speed: f64) -> Result<(), RealSenseError> {
        self.clock.set_rate(speed).map_err(clock_error)
    }

    /// Moves to `offset_ns` from the start of the recording: the next frame of each stream is
    /// its first at or after that point.
    pub fn seek(&self, offset_ns: i64) -> Result<(), RealSenseError> {
        let target = self.start_ns + offset_ns.clamp(0, self.end_ns - self.start_ns);
        *self.shared.seek.lock() = Some(target);
        self.clock.jump(Time::ros(target)).map_err(clock_error)
    }

    /// Position of the last delivered frame, ns from the start of the recording.
    pub fn position(&self) -> i64 {
        *self.shared.position.lock() - self.start_ns
    }

    /// Length of the recording, ns.
    pub fn duration(&self) -> i64 {
        self.end_ns - self.start_ns
    }

    /// The value option `name` of sensor `sensor` has at the playback position: its recorded
    /// value at the start, then each recorded change once playback reaches it (the SDK's
    /// playback sensors do the same).
    pub fn option(&self, sensor: u32, name: &str) -> Option<f32> {
        self.shared
            .options
            .lock()
            .get(&(sensor, name.to_string()))
            .copied()
    }

    /// Playing, paused or stopped.
    pub fn status(&self) -> Status {
        if self.shared.stopped.load(Ordering::SeqCst) {
            Status::Stopped
        } else if self.clock.is_paused() {
            Status::Paused
        } else {
            Status::Playing
        }
    }
}

fn clock_error(e: rosbag2_rs_clock::ClockError) -> RealSenseError {
    RealSenseError::Playback(e)
}

/// Which streams to deliver: `keep(stream, index)`.
type StreamFilter = Box<dyn Fn(&str, u32) -> bool + Send>;

/// Plays a recording; see the module documentation.
pub struct Playback {
    recording: Recording,
    handle: PlaybackHandle,
    real_time: bool,
    looping: bool,
    filter: Option<StreamFilter>,
}

/// How long a wait lasts before the playback looks for a seek or stop again.
const POLL: Duration = Duration::from_nanos(100_000_000);

impl Playback {
    /// Plays `recording` on `clock`, whose time is the recording's file time (start it at
    /// [`Recording::time_range`]'s first value).
    pub fn new(recording: Recording, clock: Arc<dyn PlayerClock>) -> Self {
        let (start_ns, end_ns) = recording.time_range();
        let options = option_values(recording.device(), start_ns);
        Self {
            recording,
            handle: PlaybackHandle {
                clock,
                shared: Arc::new(Shared {
                    position: Mutex::new(start_ns),
                    options: Mutex::new(options),
                    ..Shared::default()
                }),
                start_ns,
                end_ns,
            },
            real_time: true,
            looping: false,
            filter: None,
        }
    }

    /// A handle to control playback from other threads.
    pub fn handle(&self) -> PlaybackHandle {
        self.handle.clone()
    }

    /// Real time (frames on the recording's schedule, the default) or as fast as taken.
    pub fn set_real_time(&mut self, real_time: bool) {
        self.real_time = real_time;
    }

    /// Start over at the end instead of stopping.
    pub fn set_loop(&mut self, looping: bool) {
        self.looping = looping;
    }

    /// Delivers only the streams `keep(stream, index)` accepts.
    pub fn set_filter(&mut self, keep: impl Fn(&str, u32) -> bool + Send + 'static) {
        self.filter = Some(Box::new(keep));
    }

    fn take_seek(&mut self) -> Result<bool, RealSenseError> {
        let target = self.handle.shared.seek.lock().take();
        match target {
            Some(t) => {
                self.recording.seek(t)?;
                // Options as they were just before the target: later changes come as events.
                *self.handle.shared.options.lock() = option_values(self.recording.device(), t - 1);
                self.handle.shared.stopped.store(false, Ordering::SeqCst);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Waits until `frame` is due (real time) or until not paused (non-real time). False when a
    /// seek came first: the frame is then not delivered.
    fn wait_for(&self, recorded_ns: i64) -> bool {
        let clock = &self.handle.clock;
        loop {
            if self.handle.shared.seek.lock().is_some() {
                return false;
            }
            if self.real_time {
                if clock.sleep_until(Time::ros(recorded_ns), POLL) && !clock.is_paused() {
                    return true;
                }
            } else if clock.is_paused() {
                clock.sleep_until(Time::ros(clock.now().nanos() + 1), POLL);
            } else {
                return true;
            }
        }
    }

    /// The next frame, when it is due; `None` at the end (unless looping). Option changes on
    /// the way are applied at their time ([`PlaybackHandle::option`]).
    pub fn next_frame(&mut self) -> Result<Option<Frame>, RealSenseError> {
        while let Some(event) = self.next_event()? {
            if let Event::Frame(frame) = event {
                return Ok(Some(frame));
            }
        }
        Ok(None)
    }

    /// The next frame, option change or notification, when it is due; `None` at the end
    /// (unless looping). An option change is applied when it is handed out.
    pub fn next_event(&mut self) -> Result<Option<Event>, RealSenseError> {
        loop {
            self.take_seek()?;
            let Some(event) = self.recording.next_event()? else {
                if self.looping {
                    self.handle.seek(0)?;
                    continue;
                }
                self.handle.shared.stopped.store(true, Ordering::SeqCst);
                return Ok(None);
            };
            if let Event::Frame(frame) = &event {
                if self
                    .filter
                    .as_ref()
                    .is_some_and(|keep| !keep(&frame.stream, frame.index))
                {
                    continue;
                }
            }
            if !self.wait_for(event.recorded_ns()) {
                continue;
            }
            match &event {
                Event::Frame(frame) => *self.handle.shared.position.lock() = frame.recorded_ns,
                Event::Option(change) => {
                    self.handle
                        .shared
                        .options
                        .lock()
                        .insert((change.sensor, change.name.clone()), change.value);
                }
                Event::Notification(_) | Event::Log(_) | Event::Time(_) => {}
            }
            return Ok(Some(event));
        }
    }
}
