//! The file tools: convert with ROS 1 bags, doctor, and the toolkit (one test binary, one module per
//! concern).

mod convert_ros1;
mod doctor;
mod toolkit;
