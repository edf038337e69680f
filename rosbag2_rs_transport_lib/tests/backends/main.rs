//! The middleware backends: the conformance suite every backend passes, and what only the DDS and
//! Zenoh backends do (one test binary; each networked case in a private network namespace of its
//! own).

#[path = "../common/mod.rs"]
mod common;

mod conformance;
mod dds;
mod zenoh;
