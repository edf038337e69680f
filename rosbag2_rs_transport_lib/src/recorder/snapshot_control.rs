//! Snapshot mode's control: triggers (with their file name, topic subset, window and
//! post-trigger tail), the tails being recorded, and the limits and buffer changes the services
//! ask for. Methods of the recorder's shared state ([`Inner`]).

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crossbeam_channel::Sender;

use super::options::{max_service_buffer_bytes, MAX_SERVICE_BUFFER_DURATION_NS};
use super::snapshot::{Selection, SnapshotBuffers, Taken};
use super::snapshot_writer::{check_output, SnapshotJob};
use super::{Inner, RecorderError, Result, Sink, SnapshotLimits, SnapshotTrigger};
use rosbag2_rs_middleware::names::expand_name;

/// The most snapshots recording their post-trigger tail at once; a trigger with a tail beyond
/// them is refused.
pub const MAX_PENDING_TAILS: usize = 16;

/// A snapshot whose post-trigger tail is still being recorded.
pub(super) struct PendingSnapshot {
    /// What the trigger took.
    taken: Taken,
    /// Which topics and window it writes.
    selection: Selection,
    /// When it was triggered: the tail's messages are received after it.
    triggered: i64,
    /// The last receive time of the tail.
    deadline: i64,
    /// The bag to write (`None`: the timestamped default).
    dir: Option<PathBuf>,
    reply: Option<Sender<Result<PathBuf>>>,
}

impl Inner {
    /// Takes the selected buffers and queues them for writing (at once, or at the end of the
    /// post-trigger tail); ends a pause. `None` when there was nothing to write.
    pub(super) fn trigger(
        &self,
        request: &SnapshotTrigger,
        reply: Option<Sender<Result<PathBuf>>>,
    ) -> Result<Option<Option<PathBuf>>> {
        let Sink::Snapshots {
            buffers,
            jobs,
            prefix,
            pending,
        } = &self.sink
        else {
            return Err(RecorderError::NotAvailable(
                "the recorder is not in snapshot mode (--snapshot)".into(),
            ));
        };
        request.validate()?;
        if request.post_trigger_ns > 0 && pending.lock().len() >= MAX_PENDING_TAILS {
            return Err(RecorderError::NotAvailable(format!(
                "{MAX_PENDING_TAILS} snapshots are already recording their post-trigger tails"
            )));
        }
        let node = self.middleware.node();
        let selection = Selection {
            topics: request
                .topics
                .iter()
                .map(|t| expand_name(t, node))
                .collect::<crate::Result<_>>()?,
            start: request.start_time,
            stop: request.stop_time,
        };
        let dir = match &request.filename {
            Some(name) => {
                let dir = match prefix.parent() {
                    Some(parent) if name.is_relative() => parent.join(name),
                    _ => name.clone(),
                };
                if dir.exists() {
                    return Err(RecorderError::SnapshotOutput(format!(
                        "{} already exists",
                        dir.display()
                    )));
                }
                Some(dir)
            }
            None => None,
        };
        let jobs = jobs.lock();
        let Some(jobs) = jobs.as_ref() else {
            return Err(RecorderError::WriterStopped("snapshot writer"));
        };
        let now = self.now();
        buffers.trim_all(now);
        let (count, bytes) = buffers.occupancy();
        if count == 0 && request.post_trigger_ns <= 0 {
            log::info!("snapshot requested with empty buffers: no bag written");
            self.end_pause_by_trigger();
            return Ok(None);
        }
        // Checked before the buffers are taken: a snapshot that cannot be written keeps them.
        let target = dir.clone().unwrap_or_else(|| prefix.clone());
        check_output(&target, bytes)?;
        let taken = buffers.take(&selection, now, now);
        self.end_pause_by_trigger();
        if request.post_trigger_ns > 0 {
            let deadline = now.saturating_add(request.post_trigger_ns);
            log::info!(
                "snapshot triggered: recording {} s more into it",
                request.post_trigger_ns as f64 / 1e9
            );
            let mut pending = pending.lock();
            pending.push(PendingSnapshot {
                taken,
                selection,
                triggered: now,
                deadline,
                dir: dir.clone(),
                reply,
            });
            hold_tails(buffers, &pending);
            return Ok(Some(dir));
        }
        let job = self.snapshot_job(taken, selection, dir.clone(), reply);
        jobs.send(job)
            .map_err(|_| RecorderError::WriterStopped("snapshot writer"))?;
        Ok(Some(dir))
    }

    /// Pausing lasts until resume or a trigger (rosbag2's snapshot design).
    fn end_pause_by_trigger(&self) {
        if self.paused.swap(false, Ordering::SeqCst) {
            log::info!("buffering resumed by the snapshot trigger");
        }
    }

    /// Queues every pending snapshot whose tail ended by `now` for writing, with its tail's
    /// messages (received up to its deadline).
    pub(super) fn complete_tails(&self, now: i64) {
        let Sink::Snapshots {
            buffers,
            jobs,
            pending,
            ..
        } = &self.sink
        else {
            return;
        };
        let due: Vec<PendingSnapshot> = {
            let mut pending = pending.lock();
            // Strictly after the deadline: a message stamped at the deadline itself may still
            // be on its way.
            if pending.iter().all(|p| p.deadline >= now) {
                return;
            }
            let (due, waiting) = std::mem::take(&mut *pending)
                .into_iter()
                .partition(|p| p.deadline < now);
            *pending = waiting;
            due
        };
        let done: Vec<SnapshotJob> = due
            .into_iter()
            .map(|mut p| {
                let until = p.deadline.min(now);
                merge_tail(&mut p.taken, buffers.take(&p.selection, until, until));
                self.snapshot_job(p.taken, p.selection, p.dir, p.reply)
            })
            .collect();
        hold_tails(buffers, &pending.lock());
        let jobs = jobs.lock();
        for job in done {
            match jobs.as_ref() {
                Some(jobs) => {
                    if let Err(e) = jobs.send(job) {
                        log::error!("snapshot lost: the snapshot writer has stopped");
                        drop(e);
                    }
                }
                None => log::error!("snapshot lost: the snapshot writer has stopped"),
            }
        }
    }

    /// A snapshot to write, with every recorded topic and the counts so far.
    fn snapshot_job(
        &self,
        taken: Taken,
        selection: Selection,
        dir: Option<PathBuf>,
        reply: Option<Sender<Result<PathBuf>>>,
    ) -> SnapshotJob {
        SnapshotJob {
            taken,
            selection,
            dir,
            topics: self.registry().all(),
            health: self
                .registry()
                .health_counts(|t| self.middleware.lost_messages(t)),
            reply,
        }
    }

    /// `snapshot/memory`: bytes per topic, at most [`max_service_buffer_bytes`] (non-positive:
    /// no limit by size).
    pub(super) fn set_snapshot_memory(&self, memory: f64) -> Result<String> {
        let buffers = self.snapshot_buffers()?;
        let max = max_service_buffer_bytes();
        if memory.is_nan() || memory > max as f64 {
            return Err(RecorderError::OutOfRange {
                field: "memory",
                value: memory.to_string(),
                allowed: format!("at most {max} bytes (the physical memory)"),
            });
        }
        let max_bytes_per_topic = if memory > 0.0 { memory as u64 } else { 0 };
        let limits = SnapshotLimits {
            max_bytes_per_topic,
            ..buffers.limits()
        };
        limits.validate()?;
        buffers.set_limits(limits, self.now());
        Ok(format!(
            "max buffer size per topic: {max_bytes_per_topic} bytes (0: no limit)"
        ))
    }

    /// `snapshot/duration`: seconds, at most [`MAX_SERVICE_BUFFER_DURATION_NS`] (non-positive:
    /// no limit by time).
    pub(super) fn set_snapshot_duration(&self, seconds: f64) -> Result<String> {
        let buffers = self.snapshot_buffers()?;
        let max = MAX_SERVICE_BUFFER_DURATION_NS as f64 / 1e9;
        if seconds > max {
            return Err(RecorderError::OutOfRange {
                field: "duration",
                value: seconds.to_string(),
                allowed: format!("at most {max} s"),
            });
        }
        let invalid =
            || RecorderError::InvalidOptions(format!("invalid buffer duration {seconds} s"));
        let max_duration_ns = if seconds > 0.0 {
            rosbag2_rs_clock::Duration::from_secs_f64(seconds)
                .map_err(|_| invalid())?
                .as_nanos()
        } else if seconds.is_nan() {
            return Err(invalid());
        } else {
            0
        };
        let limits = SnapshotLimits {
            max_duration_ns,
            ..buffers.limits()
        };
        limits.validate()?;
        buffers.set_limits(limits, self.now());
        Ok(format!(
            "max buffer duration: {seconds} s (non-positive: no limit)"
        ))
    }

    pub(super) fn clear_snapshot_buffer(&self) -> Result<usize> {
        Ok(self.snapshot_buffers()?.clear())
    }
}

/// Keeps the messages of the pending snapshots' tails from time eviction (a tail may last longer
/// than the buffers' duration): from the earliest trigger among `pending` on.
fn hold_tails(buffers: &SnapshotBuffers, pending: &[PendingSnapshot]) {
    buffers.hold_after(
        pending
            .iter()
            .map(|p| p.triggered)
            .min()
            .unwrap_or(i64::MAX),
    );
}

/// Adds a tail's messages after what the trigger took, topic by topic.
fn merge_tail(taken: &mut Taken, tail: Taken) {
    for t in tail {
        match taken.iter_mut().find(|x| x.topic == t.topic) {
            Some(x) => {
                for entry in t.queue.into_iter() {
                    x.queue.push_back(entry);
                }
            }
            None => taken.push(t),
        }
    }
}
