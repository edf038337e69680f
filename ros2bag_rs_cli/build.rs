//! Build script: gives the executables the RUNPATH (never DT_RPATH, which would shadow a sourced
//! overlay's libraries) of the Fast DDS (feature `fastdds`) or the ROS 2
//! (the rcl backend) that rosbag2_rs_transport_lib links when it is outside the system's library
//! directories, and the link arguments it asks executables to add (libpython, for the rcl backend
//! in a venv of PyPI's ROS 2 wheels).

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_ROSBAG2_RS_FASTDDS_RPATH");
    println!("cargo:rerun-if-env-changed=DEP_ROSBAG2_RS_FASTDDS_LINK_ARGS");
    if let Ok(lib) = std::env::var("DEP_ROSBAG2_RS_FASTDDS_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags,-rpath,{lib}");
    }
    if let Ok(args) = std::env::var("DEP_ROSBAG2_RS_FASTDDS_LINK_ARGS") {
        println!("cargo:rustc-link-arg={args}");
    }
}
