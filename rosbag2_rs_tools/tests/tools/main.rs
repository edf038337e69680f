//! The file tools: convert, convert with ROS 1 bags, doctor, and the toolkit (one test binary,
//! one module per concern).

#[allow(dead_code)]
#[path = "../../../rosbag2_rs_storage/tests/storage/bags.rs"]
mod bags;
mod convert;
mod convert_ros1;
mod doctor;
mod toolkit;
