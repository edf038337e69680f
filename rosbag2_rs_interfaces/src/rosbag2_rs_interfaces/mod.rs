//! `rosbag2_rs_interfaces`: services of rosbag2-rs that stock rosbag2 does not
//! have. Their `.srv` files are in this crate's `srv/` directory, built for
//! ROS 2 environments by the rosidl package next to them.

pub mod srv;
