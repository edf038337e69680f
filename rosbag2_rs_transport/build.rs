//! Build script: gives the executables the run path (a RUNPATH in a sourced ROS 2, as ament's
//! nodes have, so that an overlay's libraries win) of the Fast DDS (feature `fastdds`) or the ROS 2
//! (the rcl backend) that rosbag2_rs_transport_lib links when it is outside the system's library
//! directories, and the link arguments it asks executables to add (libpython, for the rcl backend
//! in a venv of PyPI's ROS 2 wheels).

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_ROSBAG2_RS_FASTDDS_RPATH_ARG");
    println!("cargo:rerun-if-env-changed=DEP_ROSBAG2_RS_FASTDDS_LINK_ARGS");
    if let Ok(arg) = std::env::var("DEP_ROSBAG2_RS_FASTDDS_RPATH_ARG") {
        println!("cargo:rustc-link-arg={arg}");
    }
    if let Ok(args) = std::env::var("DEP_ROSBAG2_RS_FASTDDS_LINK_ARGS") {
        println!("cargo:rustc-link-arg={args}");
    }
}
