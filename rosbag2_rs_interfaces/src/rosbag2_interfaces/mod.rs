//! `rosbag2_interfaces`: the services and messages of ROS 2's rosbag2 player
//! and recorder, as defined in ROS 2 Jazzy (reference copies of the `.srv` and
//! `.msg` files are in this crate's `rosbag2_interfaces/` directory).

pub mod msg;
pub mod srv;
