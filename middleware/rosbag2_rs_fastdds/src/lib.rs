//! # rosbag2_rs_fastdds
//!
//! ROS 2 over Fast DDS, the library under rmw_fastrtps_cpp (ROS 2's default middleware),
//! through a small C++ shim (`shim.cpp`, built by the crate's build script against an installed
//! Fast DDS 2.x or 3.x; `compat.hpp` names what differs). Samples travel as serialized bytes
//! with ROS 2's wire conventions as rmw_fastrtps_cpp (Jazzy) has them: `rt/`, `rq/`, `rr/` topics and `pkg::msg::dds_::Type_`
//! type names, QoS as its `qos.cpp` maps them, synchronous publication, no data sharing,
//! `enclave=/;` participant USER_DATA and `typehash=` endpoint USER_DATA, its service mapping
//! on sample identities (`service`), and the node's entry on `ros_discovery_info`.
//! Fast DDS's default transports (shared memory and UDP) carry the data.
//!
//! Built where the build script finds a Fast DDS (feature `required`, or a sourced ROS 2's own;
//! see `build.rs`), cfg `rosbag2_rs_fastdds`; empty elsewhere.

#[cfg(rosbag2_rs_fastdds)]
mod backend;
#[cfg(rosbag2_rs_fastdds)]
pub use backend::*;
