//! # rosbag2_rs_dds_common
//!
//! What the two DDS backends (`rosbag2_rs_cyclonedds`, `rosbag2_rs_fastdds`) share because ROS
//! 2's DDS rmw layers share it: the ROS 2 discovery variables ([`config`]), `ros_discovery_info`
//! (rmw_dds_common, [`discovery_info`], announced by [`announcer`]), the graph a node sees
//! ([`graph`]), the DDS policies of a ROS QoS profile ([`qos`]), and the `key=value;`
//! USER_DATA of participants and endpoints ([`user_data`]); and reading XTypes type objects as
//! ROS 2 type descriptions ([`xtypes`]). Names no DDS vendor.

pub mod announcer;
pub mod config;
pub mod discovery_info;
pub mod graph;
pub mod qos;
pub mod user_data;
pub mod xtypes;

/// A DDS GUID (12-byte prefix, 4-byte entity id), also a ROS 2 GID.
pub type Guid = [u8; 16];

impl From<discovery_info::DecodeError> for rosbag2_rs_middleware::TransportError {
    fn from(e: discovery_info::DecodeError) -> Self {
        Self::DiscoveryInfo(Box::new(e))
    }
}
