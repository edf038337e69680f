//! The player and the recorder over the deterministic in-process backend, one module per concern
//! (one test binary: each links every middleware backend).

#[path = "../common/mod.rs"]
mod common;
mod recorder_support;

mod inprocess;
mod player;
mod recorder;
mod recorder_control;
mod recorder_retention;
mod recorder_snapshot;
mod recorder_throttle;
mod type_hash;
