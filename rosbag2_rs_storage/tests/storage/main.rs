//! Bags through the storage plugins: writing and reading, compression, configuration files,
//! recovery of damaged files, faults, type hashes (one test binary, one module per concern; the
//! hostile-input tests with their capped allocators are `rosbag2_rs_tools`' binaries).

pub mod bags;
mod compression;
mod faults;
mod recovery;
mod storage;
mod storage_config;
mod truncation;
mod type_hash;
