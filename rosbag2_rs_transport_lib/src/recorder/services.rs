//! The recorder's services on `/<node_name>/...`, with rosbag2's names and types: `pause`,
//! `resume` (Lyrical: at a time), `is_paused`, (ours) `pause_at` a time, `split_bagfile` (Lyrical: at a time),
//! `snapshot`; rosbag2 Lyrical's recorder control `record`, `stop`, `start_discovery`,
//! `stop_discovery`, `is_discovery_running` (Lyrical: `record` also at a time), and ours `is_recording`, `get_uri`,
//! `subscribe_to_topics` and `get_subscribed_topics`; in snapshot mode also
//! `snapshot/trigger` (`rosbag2_rs_interfaces/srv/TriggerSnapshot`: file name, topics, window,
//! post-trigger tail), `snapshot/memory`, `snapshot/duration`, `snapshot/clear_buffer`,
//! `snapshot/pause` and `snapshot/resume`.
//!
//! A service whose type the middleware cannot load (the rcl backend: a package not installed, or
//! an older `rosbag2_interfaces`) is left out with a note, and the recorder records.
//!
//! Handlers never wait on the disk: a split or a snapshot is queued to the writer threads and
//! the response sent at once (the snapshot response says whether there was anything to write).

use std::sync::Arc;

use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::*;
use rosbag2_rs_interfaces::ServiceType;

use super::cache::Command;
use super::schedule::{Schedule, TimeMode};
use super::{Inner, RecorderError, SnapshotTrigger};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::names::expand_name;
use rosbag2_rs_middleware::services::ServiceSet;
use rosbag2_rs_middleware::Handle;

/// Serves every recorder service; dropping the handles removes them.
pub(crate) fn serve_all(inner: &Arc<Inner>) -> Result<Vec<Handle>> {
    let mut services = Services {
        inner,
        set: ServiceSet::new(inner.middleware.as_ref(), inner.service_introspection),
    };
    serve_pause_resume(&mut services, "~")?;
    services.serve::<IsPaused>("~/is_paused", |i, _| IsPausedResponse {
        paused: i.is_paused(),
    })?;
    services.serve::<SplitBagfile>("~/split_bagfile", reply_split)?;
    serve_recorder_control(&mut services)?;
    services.serve::<Snapshot>("~/snapshot", |i, _| {
        let queued = if i.options.snapshot_files {
            // rosbag2's snapshot mode: the ring into the current file, then the next one.
            let (tx, _) = crossbeam_channel::bounded(1);
            i.command(Command::Snapshot(tx)).map(Some)
        } else {
            i.trigger(&SnapshotTrigger::default(), None)
                .map(|q| q.map(|_| ()))
        };
        let success = match queued {
            Ok(queued) => queued.is_some(),
            Err(e) => {
                log::warn!("snapshot: {}", crate::error_chain::Chain(&e));
                false
            }
        };
        SnapshotResponse { success }
    })?;
    if inner.snapshot_buffers().is_ok() {
        serve_snapshot_control(&mut services)?;
    }
    Ok(services.set.finish())
}

/// The snapshot mode's own services (`~/snapshot/...`).
fn serve_snapshot_control(services: &mut Services<'_>) -> Result<()> {
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
    serve_pause_resume(services, "~/snapshot")
}

/// The recorder's services being set up: what they act on and the services so far.
struct Services<'a> {
    inner: &'a Arc<Inner>,
    set: ServiceSet<'a>,
}

impl Services<'_> {
    /// Serves `name`; `handler` answers each request with the recorder's state at hand.
    fn serve<S: ServiceType>(
        &mut self,
        name: &str,
        handler: impl Fn(&Inner, S::Request) -> S::Response + Send + 'static,
    ) -> Result<()> {
        let inner = Arc::clone(self.inner);
        self.set.serve::<S>(name, move |req| handler(&inner, req))
    }
}

/// Serves `<prefix>/pause`, `<prefix>/pause_at` and `<prefix>/resume`, which pause and resume
/// the recording.
fn serve_pause_resume(services: &mut Services<'_>, prefix: &str) -> Result<()> {
    services.serve::<Pause>(&format!("{prefix}/pause"), |i, _| {
        i.pause();
        PauseResponse::default()
    })?;
    services.serve::<PauseAt>(&format!("{prefix}/pause_at"), |i, req| {
        i.pause_at(req.pause_time.as_nanos());
        PauseAtResponse {
            success: true,
            message: String::new(),
        }
    })?;
    services.serve::<Resume>(&format!("{prefix}/resume"), reply_resume)
}

/// rosbag2 Lyrical's recorder control and ours (left out, with a note, where the installed
/// `rosbag2_interfaces` is older: see [`ServiceSet`]).
fn serve_recorder_control(services: &mut Services<'_>) -> Result<()> {
    services.serve::<Record>("~/record", |i, req| {
        let start = Some(req.start_time.as_nanos()).filter(|t| *t != 0);
        outcome(i.record(&req.uri, start).map(drop), RecordResponse::new)
    })?;
    services.serve::<Stop>("~/stop", |i, _| {
        outcome(i.stop_recording().map(drop), StopResponse::new)
    })?;
    services.serve::<StartDiscovery>("~/start_discovery", |i, _| {
        outcome(i.set_discovery(true), StartDiscoveryResponse::new)
    })?;
    services.serve::<StopDiscovery>("~/stop_discovery", |i, _| {
        outcome(i.set_discovery(false), StopDiscoveryResponse::new)
    })?;
    services.serve::<IsDiscoveryRunning>("~/is_discovery_running", |i, _| {
        IsDiscoveryRunningResponse {
            running: i.is_discovery_running(),
        }
    })?;
    services.serve::<IsRecording>("~/is_recording", |i, _| IsRecordingResponse {
        recording: i.is_recording(),
    })?;
    services.serve::<SubscribeToTopics>("~/subscribe_to_topics", reply_subscribe)?;
    services.serve::<GetSubscribedTopics>("~/get_subscribed_topics", |i, _| {
        GetSubscribedTopicsResponse {
            topics: i.subscriptions.lock().keys().cloned().collect(),
        }
    })?;
    services.serve::<GetUri>("~/get_uri", |i, _| GetUriResponse {
        uri: i.uri().map(|u| u.display().to_string()).unwrap_or_default(),
    })
}

fn reply_subscribe(inner: &Inner, req: SubscribeToTopicsRequest) -> SubscribeToTopicsResponse {
    match inner.subscribe_to(&req.topics, &req.topic_types) {
        Ok((subscribed_topics, unavailable_topics)) => SubscribeToTopicsResponse {
            return_code: i32::from(subscribed_topics.is_empty()),
            error_string: if subscribed_topics.is_empty() {
                "none of the topics could be subscribed to".into()
            } else {
                String::new()
            },
            subscribed_topics,
            unavailable_topics,
        },
        Err(e) => failed(
            "subscribe_to_topics",
            SubscribeToTopicsResponse {
                return_code: 1,
                error_string: e.to_string(),
                subscribed_topics: Vec::new(),
                unavailable_topics: req.topics,
            },
        ),
    }
}

/// A response with return code 0, or 1 and the error.
fn outcome<R>(result: super::Result<()>, response: impl Fn(i32, String) -> R) -> R {
    match result {
        Ok(()) => response(0, String::new()),
        Err(e) => {
            let why = crate::error_chain::Chain(&e).to_string();
            log::warn!("{why}");
            response(1, why)
        }
    }
}

/// The schedule a `Resume` or `SplitBagfile` request asks for: `Ok(None)` for at once (a zero
/// time), `Err` with the invalid part's return code (`mode_code` for the mode, `topic_code`
/// for the tracking topic).
fn requested_schedule(
    inner: &Inner,
    time: &rosbag2_rs_interfaces::builtin_interfaces::Time,
    mode: i32,
    topic: &str,
    (mode_code, topic_code): (i32, i32),
) -> std::result::Result<Option<Schedule>, (i32, String)> {
    let mode = TimeMode::from_wire(mode).ok_or((mode_code, format!("invalid mode {mode}")))?;
    let time_ns = time.as_nanos();
    if time_ns == 0 {
        return Ok(None);
    }
    let topic = match topic {
        "" => None,
        t => Some(
            expand_name(t, inner.middleware.node())
                .map_err(|e| (topic_code, format!("invalid tracking topic '{t}': {e}")))?,
        ),
    };
    Ok(Some(Schedule {
        time_ns,
        mode,
        topic,
    }))
}

fn reply_resume(inner: &Inner, req: ResumeRequest) -> ResumeResponse {
    let codes = (
        ResumeResponse::RETURN_CODE_INVALID_RESUME_MODE,
        ResumeResponse::RETURN_CODE_INVALID_TRACKING_TOPIC,
    );
    let schedule = requested_schedule(
        inner,
        &req.resume_time,
        req.resume_mode,
        &req.tracking_topic_name,
        codes,
    );
    let result = match schedule {
        Err((code, why)) => return failed("resume", ResumeResponse::new(code, why)),
        Ok(None) => {
            inner.resume();
            Ok(())
        }
        Ok(Some(schedule)) => inner.schedule_resume(schedule),
    };
    match result {
        Ok(()) => ResumeResponse::default(),
        Err(e) => failed(
            "resume",
            ResumeResponse::new(ResumeResponse::RETURN_CODE_RESUME_FAILED, e.to_string()),
        ),
    }
}

fn reply_split(inner: &Inner, req: SplitBagfileRequest) -> SplitBagfileResponse {
    let codes = (
        SplitBagfileResponse::RETURN_CODE_INVALID_SPLIT_MODE,
        SplitBagfileResponse::RETURN_CODE_INVALID_TRACKING_TOPIC,
    );
    let schedule = requested_schedule(
        inner,
        &req.split_time,
        req.split_mode,
        &req.tracking_topic_name,
        codes,
    );
    let result = match schedule {
        Err((code, why)) => return failed("split_bagfile", SplitBagfileResponse::new(code, why)),
        Ok(_) if !inner.is_recording() => {
            return failed(
                "split_bagfile",
                SplitBagfileResponse::new(
                    SplitBagfileResponse::RETURN_CODE_NOT_RECORDING,
                    "the recorder is not recording",
                ),
            )
        }
        Ok(None) => inner.split().map(drop),
        Ok(Some(schedule)) => inner.schedule_split(schedule),
    };
    match result {
        Ok(()) => SplitBagfileResponse::default(),
        Err(e @ RecorderError::NotAvailable(_)) => failed(
            "split_bagfile",
            SplitBagfileResponse::new(
                SplitBagfileResponse::RETURN_CODE_NOT_RECORDING,
                e.to_string(),
            ),
        ),
        Err(e) => failed(
            "split_bagfile",
            SplitBagfileResponse::new(
                SplitBagfileResponse::RETURN_CODE_SPLIT_FAILED,
                crate::error_chain::Chain(&e).to_string(),
            ),
        ),
    }
}

/// Logs a failed request's response and returns it.
fn failed<R: std::fmt::Debug>(service: &str, response: R) -> R {
    log::warn!("{service}: {response:?}");
    response
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
    let max = super::options::MAX_POST_TRIGGER_NS as f64 / 1e9;
    if post > max {
        return Err(super::RecorderError::OutOfRange {
            field: "post_trigger_seconds",
            value: post.to_string(),
            allowed: format!("at most {max} s"),
        });
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_post_trigger_time_beyond_an_hour_is_refused_naming_the_field() {
        let request = |post_trigger_seconds| TriggerSnapshotRequest {
            post_trigger_seconds,
            ..Default::default()
        };
        for absurd in [3600.5, 1e12, f64::INFINITY] {
            let e = snapshot_request(&request(absurd)).unwrap_err().to_string();
            assert!(
                e.contains("post_trigger_seconds") && e.contains("at most 3600 s"),
                "{e}"
            );
        }
        let ok = snapshot_request(&request(3600.0)).unwrap();
        assert_eq!(
            ok.post_trigger_ns,
            super::super::options::MAX_POST_TRIGGER_NS
        );
        let e = SnapshotTrigger {
            post_trigger_ns: i64::MAX,
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(e.contains("post_trigger_seconds"), "{e}");
    }
}
