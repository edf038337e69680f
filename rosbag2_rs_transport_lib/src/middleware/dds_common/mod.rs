//! What the two DDS backends (Cyclone DDS and Fast DDS) share because ROS 2's rmw layers share
//! it: `ros_discovery_info` (rmw_dds_common) and the `key=value;` USER_DATA of participants and
//! endpoints; and reading XTypes type objects as ROS 2 type descriptions.

pub mod announcer;
pub mod discovery_info;
// Used by the Fast DDS backend; Cyclone's USER_DATA parsing is still its own (sys.rs).
#[cfg_attr(not(rosbag2_rs_fastdds), allow(dead_code))]
pub mod user_data;
pub mod xtypes;

/// A DDS GUID (12-byte prefix, 4-byte entity id), also a ROS 2 GID.
pub type Guid = [u8; 16];
