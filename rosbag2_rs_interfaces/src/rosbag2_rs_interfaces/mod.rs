//! `rosbag2_rs_interfaces`: messages and services of rosbag2-rs that stock
//! rosbag2 does not have. Their `.msg` and `.srv` files are in this crate's
//! `msg/` and `srv/` directories, built for ROS 2 environments by the rosidl
//! package next to them.

pub mod msg;
pub mod srv;
