//! The middleware backends: the conformance suite every backend passes, and what only the DDS
//! backends do (one test binary; each networked case in a private network namespace of its own).
//! What only the Zenoh backend does is a binary of its own (`tests/zenoh.rs`): Zenoh's runtime
//! threads are process-wide, so a process has one Zenoh test.

#[path = "../common/mod.rs"]
mod common;

mod conformance;
mod dds;
