//! The recorder's services on `/<node_name>/...`, with rosbag2's names and types: `pause`,
//! `resume`, `is_paused`, `split_bagfile`, `snapshot`; in snapshot mode also
//! `snapshot/memory`, `snapshot/duration`, `snapshot/clear_buffer`, `snapshot/pause` and
//! `snapshot/resume`.
//!
//! Handlers never wait on the disk: a split or a snapshot is queued to the writer threads and
//! the response sent at once (the snapshot response says whether there was anything to write).

use std::sync::Arc;

use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::*;

use super::Inner;
use crate::middleware::error::Result;
use crate::middleware::services::serve_introspected;
use crate::middleware::Handle;

/// Serves every recorder service; dropping the handles removes them.
pub(crate) fn serve_all(inner: &Arc<Inner>) -> Result<Vec<Handle>> {
    let mw = inner.middleware.as_ref();
    let introspection = inner.service_introspection;
    let mut handles = Vec::new();
    let i = inner.clone();
    handles.push(serve_introspected::<Pause>(
        mw,
        introspection,
        "~/pause",
        move |_| {
            i.pause();
            PauseResponse::default()
        },
    )?);
    let i = inner.clone();
    handles.push(serve_introspected::<Resume>(
        mw,
        introspection,
        "~/resume",
        move |_| {
            i.resume();
            ResumeResponse::default()
        },
    )?);
    let i = inner.clone();
    handles.push(serve_introspected::<IsPaused>(
        mw,
        introspection,
        "~/is_paused",
        move |_| IsPausedResponse {
            paused: i.is_paused(),
        },
    )?);
    let i = inner.clone();
    handles.push(serve_introspected::<SplitBagfile>(
        mw,
        introspection,
        "~/split_bagfile",
        move |_| {
            if let Err(e) = i.split() {
                log::warn!("split_bagfile: {}", crate::error_chain::Chain(&e));
            }
            SplitBagfileResponse::default()
        },
    )?);
    let i = inner.clone();
    handles.push(serve_introspected::<Snapshot>(
        mw,
        introspection,
        "~/snapshot",
        move |_| {
            let success = match i.request_snapshot(None) {
                Ok(queued) => queued,
                Err(e) => {
                    log::warn!("snapshot: {}", crate::error_chain::Chain(&e));
                    false
                }
            };
            SnapshotResponse { success }
        },
    )?);
    if inner.snapshot_buffers().is_err() {
        return Ok(handles);
    }
    let i = inner.clone();
    handles.push(serve_introspected::<SetMemory>(
        mw,
        introspection,
        "~/snapshot/memory",
        move |req| reply_memory(i.set_snapshot_memory(req.max_bytes_per_topic)),
    )?);
    let i = inner.clone();
    handles.push(serve_introspected::<SetDuration>(
        mw,
        introspection,
        "~/snapshot/duration",
        move |req| reply_duration(i.set_snapshot_duration(req.max_duration_seconds)),
    )?);
    let i = inner.clone();
    handles.push(serve_introspected::<ClearBuffer>(
        mw,
        introspection,
        "~/snapshot/clear_buffer",
        move |_| {
            let (success, message) = match i.clear_snapshot_buffer() {
                Ok(n) => (true, format!("cleared {n} messages")),
                Err(e) => (false, e.to_string()),
            };
            ClearBufferResponse { success, message }
        },
    )?);
    let i = inner.clone();
    handles.push(serve_introspected::<Pause>(
        mw,
        introspection,
        "~/snapshot/pause",
        move |_| {
            i.pause();
            PauseResponse::default()
        },
    )?);
    let i = inner.clone();
    handles.push(serve_introspected::<Resume>(
        mw,
        introspection,
        "~/snapshot/resume",
        move |_| {
            i.resume();
            ResumeResponse::default()
        },
    )?);
    Ok(handles)
}

fn reply_memory(result: super::Result<String>) -> SetMemoryResponse {
    match result {
        Ok(message) => SetMemoryResponse {
            success: true,
            message,
        },
        Err(e) => SetMemoryResponse {
            success: false,
            message: e.to_string(),
        },
    }
}

fn reply_duration(result: super::Result<String>) -> SetDurationResponse {
    match result {
        Ok(message) => SetDurationResponse {
            success: true,
            message,
        },
        Err(e) => SetDurationResponse {
            success: false,
            message: e.to_string(),
        },
    }
}
