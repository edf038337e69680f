//! Build script: when `AMENT_PREFIX_PATH` names a ROS 2 with rcl (a sourced `/opt/ros/<distro>`,
//! or a venv of PyPI's ROS 2 wheels), generates the bindings from that ROS 2's own headers with
//! bindgen, links rcl, and sets the cfg `rosbag2_rs_rcl` (see `build/rcl.rs`); without one the
//! crate is empty. Metadata for dependents (`links`): `found` (1 or 0), `rpath-dirs` (the
//! library directories executables need on their run path, a RUNPATH as ament's nodes have) and
//! `link-args` (libpython, for the wheels' rmw).

#[path = "build/rcl.rs"]
mod rcl;
#[path = "build/rcl_probe.rs"]
mod rcl_probe;
// The build uses what it links; the package.xml test reads the rest.
#[allow(dead_code)]
#[path = "build/ros_dependencies.rs"]
mod ros_dependencies;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=AMENT_PREFIX_PATH");
    let Some(dirs) = rcl::configure() else {
        println!("cargo:found=0");
        return;
    };
    println!("cargo:found=1");
    if !dirs.is_empty() {
        let dirs = std::env::join_paths(&dirs).expect("library paths without ':'");
        let dirs = dirs.to_string_lossy();
        println!("cargo:rpath-dirs={dirs}");
        // This package's own tests find the libraries as the executables do.
        println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags,-rpath,{dirs}");
    }
}
