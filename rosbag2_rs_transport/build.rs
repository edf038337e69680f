//! Build script (this package's and ros2bag_rs_cli's): gives the executables the run path (a
//! RUNPATH in a sourced ROS 2, as ament's nodes have, so that an overlay's libraries win) of the
//! Fast DDS or the ROS 2 (the rcl backend) the middleware backends link when it is outside the
//! system's library directories, and the link arguments they ask executables to add (libpython,
//! for the rcl backend in a venv of PyPI's ROS 2 wheels): the transport library's `links`
//! metadata, which reaches only its direct dependents.

fn main() {
    for var in [
        "DEP_ROSBAG2_RS_TRANSPORT_LIB_RPATH_ARG",
        "DEP_ROSBAG2_RS_TRANSPORT_LIB_LINK_ARGS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
        if let Ok(arg) = std::env::var(var) {
            println!("cargo:rustc-link-arg={arg}");
        }
    }
}
