//! Where the sourced ROS 2's rcl is (the build script's probe, also compiled into the library's
//! tests): which prefix of `AMENT_PREFIX_PATH` has rcl's headers and library, and the build error
//! when a ROS 2 with rcl is sourced without them.

use std::env;
use std::path::{Path, PathBuf};

/// A ROS 2 with rcl: its prefix and where its headers and libraries are.
pub struct Ros2 {
    /// The first prefix with rcl's headers and library.
    pub prefix: PathBuf,
    /// Its library directory.
    pub lib: PathBuf,
    /// The include directories of every prefix, in order.
    pub includes: Vec<PathBuf>,
}

/// The prefixes of `AMENT_PREFIX_PATH`, in order.
pub fn ament_prefixes() -> Vec<PathBuf> {
    env::var_os("AMENT_PREFIX_PATH")
        .map(|list| {
            env::split_paths(&list)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The include directories of a prefix: `include` and, for the nested layout of Humble and
/// later (`include/<pkg>/<pkg>/x.h`), each `include/<pkg>`.
fn include_dirs(prefix: &Path) -> Vec<PathBuf> {
    let include = prefix.join("include");
    if !include.is_dir() {
        return Vec::new();
    }
    let mut dirs = vec![include.clone()];
    if let Ok(entries) = std::fs::read_dir(&include) {
        let mut nested: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        nested.sort();
        dirs.extend(nested);
    }
    dirs
}

/// The ROS 2 of `prefixes` with rcl's headers and library; `Ok(None)` when none of them is a
/// ROS 2 with rcl. A ROS 2 with rcl (`share/rcl/package.xml`) whose headers or library are
/// missing is an error, the build's message (the opt-out is `ROSBAG2_RS_NO_RCL=1`): never a
/// silent build without the rcl backend.
pub fn find_rcl(prefixes: &[PathBuf]) -> Result<Option<Ros2>, String> {
    let complete = |p: &&PathBuf| {
        (p.join("include/rcl/rcl/rcl.h").is_file() || p.join("include/rcl/rcl.h").is_file())
            && p.join("lib/librcl.so").exists()
    };
    let Some(prefix) = prefixes.iter().find(complete) else {
        return match prefixes
            .iter()
            .find(|p| p.join("share/rcl/package.xml").is_file())
        {
            Some(rcl) => Err(format!(
                "a ROS 2 with rcl is sourced ({}) but its rcl headers (include/rcl/rcl.h) or \
                 library (lib/librcl.so) are missing: install its development files (`rosdep \
                 install --from-paths src`, or the distribution's ros-<distro>-rcl package), or \
                 set ROSBAG2_RS_NO_RCL=1 to build without the rcl backend",
                rcl.display()
            )),
            None => Ok(None),
        };
    };
    // Headers of every prefix (an overlay's first), so that a package built on top is seen too.
    let includes = prefixes.iter().flat_map(|p| include_dirs(p)).collect();
    Ok(Some(Ros2 {
        prefix: prefix.clone(),
        lib: prefix.join("lib"),
        includes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: PathBuf) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn a_sourced_ros2_without_rcls_headers_is_a_build_error_naming_the_opt_out() {
        let dir = tempfile::tempdir().unwrap();
        let (bare, other) = (dir.path().join("bare"), dir.path().join("other"));
        touch(bare.join("share/rcl/package.xml"));
        touch(bare.join("lib/librcl.so"));
        std::fs::create_dir_all(&other).unwrap();
        let err = find_rcl(&[other.clone(), bare.clone()]).err().unwrap();
        assert!(err.contains(&bare.display().to_string()), "{err}");
        assert!(err.contains("include/rcl/rcl.h"), "{err}");
        assert!(err.contains("ROSBAG2_RS_NO_RCL=1"), "{err}");
        // No ROS 2 at all: no rcl backend, no error.
        assert!(find_rcl(std::slice::from_ref(&other)).unwrap().is_none());
        // Headers and library in an underlay: found there, with every prefix's headers.
        let full = dir.path().join("full");
        touch(full.join("include/rcl/rcl/rcl.h"));
        touch(full.join("lib/librcl.so"));
        let ros2 = find_rcl(&[other, bare, full.clone()]).unwrap().unwrap();
        assert_eq!(ros2.prefix, full);
        assert_eq!(ros2.lib, full.join("lib"));
        assert!(ros2.includes.contains(&full.join("include/rcl")));
    }
}
