//! Build script: which backends the backend crates built (their `links` metadata: rcl found in
//! a sourced ROS 2, Fast DDS found), as the cfgs `rosbag2_rs_rcl` and `rosbag2_rs_fastdds`, and
//! the run path and link arguments the executables above need for them.
//!
//! Libraries outside the system's library directories (a ROS 2 install, a venv of ROS 2 wheels)
//! are found at run time through the executables' run path: this package's examples, tests and
//! benchmarks get it here, the executables of rosbag2_rs_transport (the nodes) and
//! ros2bag_rs_cli through the `rpath-arg` and `link-args` metadata
//! (`DEP_ROSBAG2_RS_TRANSPORT_LIB_*`). Built in a sourced ROS 2, it is a RUNPATH, as ament's
//! nodes have: searched after LD_LIBRARY_PATH, so that a sourced overlay's rebuilt libraries win
//! over the ones built against (the sourced environment also finds their dependencies). Without
//! ROS 2 (Fast DDS from a prefix) there is no environment to source, and a DT_RPATH also serves
//! the dependencies of the libraries found through it.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rosbag2_rs_rcl)");
    println!("cargo::rustc-check-cfg=cfg(rosbag2_rs_fastdds)");
    let var = |name: &str| {
        println!("cargo:rerun-if-env-changed={name}");
        env::var(name).ok().filter(|v| !v.is_empty())
    };
    let rcl = var("DEP_ROSBAG2_RS_RCL_FOUND").as_deref() == Some("1");
    let fastdds = var("DEP_ROSBAG2_RS_FASTDDS_FOUND").as_deref() == Some("1");
    if rcl {
        println!("cargo:rustc-cfg=rosbag2_rs_rcl");
    }
    if fastdds {
        println!("cargo:rustc-cfg=rosbag2_rs_fastdds");
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for list in [
        var("DEP_ROSBAG2_RS_RCL_RPATH_DIRS"),
        var("DEP_ROSBAG2_RS_FASTDDS_RPATH_DIRS"),
    ]
    .into_iter()
    .flatten()
    {
        for dir in env::split_paths(&list) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    if !dirs.is_empty() {
        let rpath = env::join_paths(&dirs).expect("library paths without ':'");
        let dtags = if rcl { "enable" } else { "disable" };
        let arg = format!("-Wl,--{dtags}-new-dtags,-rpath,{}", rpath.to_string_lossy());
        println!("cargo:rustc-link-arg={arg}");
        println!("cargo:rpath-arg={arg}");
    }
    if let Some(args) = var("DEP_ROSBAG2_RS_RCL_LINK_ARGS") {
        println!("cargo:rustc-link-arg={args}");
        println!("cargo:link-args={args}");
    }
}
