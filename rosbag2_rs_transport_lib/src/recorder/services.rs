//! The recorder's services on `/<node_name>/...`, with rosbag2's names and types: `pause`,
//! `resume`, `is_paused`, `split_bagfile`, `snapshot`; in snapshot mode also
//! `snapshot/trigger` (`rosbag2_rs_interfaces/srv/TriggerSnapshot`: file name, topics, window,
//! post-trigger tail), `snapshot/memory`, `snapshot/duration`, `snapshot/clear_buffer`,
//! `snapshot/pause` and `snapshot/resume`.
//!
//! Handlers never wait on the disk: a split or a snapshot is queued to the writer threads and
//! the response sent at once (the snapshot response says whether there was anything to write).

use std::sync::Arc;

use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::*;
use rosbag2_rs_interfaces::ServiceType;

use super::{Inner, SnapshotTrigger};
use crate::middleware::error::Result;
use crate::middleware::services::serve_introspected;
use crate::middleware::Handle;

/// Serves every recorder service; dropping the handles removes them.
pub(crate) fn serve_all(inner: &Arc<Inner>) -> Result<Vec<Handle>> {
    let mut services = Services {
        inner,
        handles: Vec::new(),
    };
    serve_pause_resume(&mut services, "~")?;
    services.serve::<IsPaused>("~/is_paused", |i, _| IsPausedResponse {
        paused: i.is_paused(),
    })?;
    services.serve::<SplitBagfile>("~/split_bagfile", |i, _| {
        if let Err(e) = i.split() {
            log::warn!("split_bagfile: {}", crate::error_chain::Chain(&e));
        }
        SplitBagfileResponse::default()
    })?;
    services.serve::<Snapshot>("~/snapshot", |i, _| {
        let success = match i.trigger(&SnapshotTrigger::default(), None) {
            Ok(queued) => queued.is_some(),
            Err(e) => {
                log::warn!("snapshot: {}", crate::error_chain::Chain(&e));
                false
            }
        };
        SnapshotResponse { success }
    })?;
    if inner.snapshot_buffers().is_err() {
        return Ok(services.handles);
    }
    services.serve::<TriggerSnapshot>("~/snapshot/trigger", reply_trigger)?;
    services.serve::<SetMemory>("~/snapshot/memory", |i, req| SetMemoryResponse {
        success: applied("snapshot/memory", i.set_snapshot_memory(req.memory)),
    })?;
    services.serve::<SetDuration>("~/snapshot/duration", |i, req| SetDurationResponse {
        success: applied("snapshot/duration", i.set_snapshot_duration(req.duration)),
    })?;
    services.serve::<ClearBuffer>("~/snapshot/clear_buffer", |i, _| {
        let (success, message) = match i.clear_snapshot_buffer() {
            Ok(n) => (true, format!("cleared {n} messages")),
            Err(e) => (false, e.to_string()),
        };
        ClearBufferResponse { success, message }
    })?;
    serve_pause_resume(&mut services, "~/snapshot")?;
    Ok(services.handles)
}

/// The recorder's services being set up: what they serve and their handles so far.
struct Services<'a> {
    inner: &'a Arc<Inner>,
    handles: Vec<Handle>,
}

impl Services<'_> {
    /// Serves `name`; `handler` answers each request with the recorder's state at hand.
    fn serve<S: ServiceType>(
        &mut self,
        name: &str,
        handler: impl Fn(&Inner, S::Request) -> S::Response + Send + 'static,
    ) -> Result<()> {
        let inner = Arc::clone(self.inner);
        self.handles.push(serve_introspected::<S>(
            self.inner.middleware.as_ref(),
            self.inner.service_introspection,
            name,
            move |req| handler(&inner, req),
        )?);
        Ok(())
    }
}

/// Serves `<prefix>/pause` and `<prefix>/resume`, which pause and resume the recording.
fn serve_pause_resume(services: &mut Services<'_>, prefix: &str) -> Result<()> {
    services.serve::<Pause>(&format!("{prefix}/pause"), |i, _| {
        i.pause();
        PauseResponse::default()
    })?;
    services.serve::<Resume>(&format!("{prefix}/resume"), |i, _| {
        i.resume();
        ResumeResponse::default()
    })
}

/// Logs the outcome of a reconfiguration; true if applied.
fn applied(service: &str, result: super::Result<String>) -> bool {
    match result {
        Ok(message) => {
            log::info!("{service}: {message}");
            true
        }
        Err(e) => {
            log::warn!("{service}: {e}");
            false
        }
    }
}

/// The library request a `TriggerSnapshot` request stands for (zero times: no limit).
pub(crate) fn snapshot_request(req: &TriggerSnapshotRequest) -> super::Result<SnapshotTrigger> {
    let time = |t: &rosbag2_rs_interfaces::builtin_interfaces::Time| {
        let ns = t.as_nanos();
        (ns != 0).then_some(ns)
    };
    let post = req.post_trigger_seconds;
    let post_trigger_ns = if post > 0.0 {
        rosbag2_rs_clock::Duration::from_secs_f64(post)
            .map_err(|_| {
                super::RecorderError::InvalidOptions(format!("invalid post_trigger_seconds {post}"))
            })?
            .as_nanos()
    } else {
        0
    };
    Ok(SnapshotTrigger {
        filename: (!req.filename.is_empty()).then(|| req.filename.clone().into()),
        topics: req.topics.clone(),
        start_time: time(&req.start_time),
        stop_time: time(&req.stop_time),
        post_trigger_ns,
    })
}

fn reply_trigger(inner: &Inner, req: TriggerSnapshotRequest) -> TriggerSnapshotResponse {
    let result = snapshot_request(&req).and_then(|r| inner.trigger(&r, None).map(|q| (r, q)));
    let (success, message) = match result {
        Ok((_, None)) => (
            false,
            "the buffers are empty: no snapshot written".to_string(),
        ),
        Ok((r, Some(dir))) => {
            let to = dir.map_or_else(
                || "the timestamped default name".to_string(),
                |d| d.display().to_string(),
            );
            let tail = if r.post_trigger_ns > 0 {
                format!(" after {} s more", r.post_trigger_ns as f64 / 1e9)
            } else {
                String::new()
            };
            (true, format!("snapshot queued to {to}{tail}"))
        }
        Err(e) => {
            let why = crate::error_chain::Chain(&e).to_string();
            log::warn!("snapshot/trigger: {why}");
            (false, why)
        }
    };
    TriggerSnapshotResponse { success, message }
}
