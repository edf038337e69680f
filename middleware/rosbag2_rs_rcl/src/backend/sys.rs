//! The bindings the build script generated from the sourced ROS 2's headers (`build/rcl.rs`),
//! and the few helpers every rcl call needs: return codes as typed errors, rcl's error string,
//! and the rmw functions looked up in the process.

#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code,
    missing_docs,
    unused_imports,
    clippy::all,
    clippy::undocumented_unsafe_blocks
)]

include!(concat!(env!("OUT_DIR"), "/rcl_bindings.rs"));
