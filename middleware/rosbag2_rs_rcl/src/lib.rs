//! # rosbag2_rs_rcl
//!
//! ROS 2 through rcl and the rmw the sourced ROS 2 selects (rcl's `rmw_implementation` reads
//! `RMW_IMPLEMENTATION`, exactly as for rosbag2 itself): built when the build script finds rcl
//! under `AMENT_PREFIX_PATH` (cfg `rosbag2_rs_rcl`, bindings generated from that ROS 2's
//! headers, see `build/rcl.rs`).
//!
//! Topics move serialized bytes as rclcpp's generic publisher and subscription do
//! (`rcl_publish_serialized_message`, `rcl_take_serialized_message`), with each type's C type
//! support loaded at run time (`typesupport`). Services and clients use the type's C structs,
//! allocated through its introspection type support and converted to and from CDR with
//! `rmw_serialize` / `rmw_deserialize` (`service`, `client`).
//!
//! Each `RclMiddleware` is one rcl context with one node, and one thread that waits on the
//! node's one wait set: its subscriptions, services and clients, a guard condition that wakes it
//! when entities come or go, and the node's graph guard condition. The wait thread only takes:
//! messages go to their callbacks (the recorder's cache, never the disk), requests to each
//! service's worker thread (`service`), graph changes to the graph thread (`graph`).
//!
//! Built where the build script finds rcl (a sourced ROS 2), cfg `rosbag2_rs_rcl`; empty
//! elsewhere.

#[cfg(rosbag2_rs_rcl)]
mod backend;
#[cfg(rosbag2_rs_rcl)]
pub use backend::*;

/// `package.xml` declares, by rosdep key, every ROS package the build links or reads and every one
/// the nodes load at run time through rcl (the build script's own list, `build/ros_dependencies.rs`).
#[cfg(test)]
#[path = "../build/ros_dependencies.rs"]
mod ros_dependencies;

/// The build script's search for rcl, whose refusals are checked here.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../build/rcl_probe.rs"]
mod rcl_probe;

#[cfg(test)]
mod package_manifest {
    use super::ros_dependencies;

    /// Whether `xml` declares `key` as one of `kinds` of dependency.
    pub fn declared(xml: &str, key: &str, kinds: &[&str]) -> bool {
        kinds
            .iter()
            .any(|kind| xml.contains(&format!(">{key}</{kind}>")))
    }

    #[test]
    fn package_xml_declares_every_ros_dependency() {
        let xml = include_str!("../package.xml");
        let build = ["depend", "build_depend"];
        let run = ["depend", "exec_depend"];
        for (_, key) in ros_dependencies::LINKED {
            assert!(
                declared(xml, key, &["depend"]),
                "{key}: linked, not a <depend>"
            );
        }
        for key in ros_dependencies::HEADERS_ONLY
            .iter()
            .chain(ros_dependencies::BUILD_TOOLS)
        {
            assert!(
                declared(xml, key, &build),
                "{key}: built with, not declared"
            );
        }
        for key in ros_dependencies::RUN {
            assert!(
                declared(xml, key, &run),
                "{key}: loaded at run time, not declared"
            );
        }
    }

    #[test]
    fn the_fast_dds_backend_declares_the_fast_dds_it_links() {
        let xml = include_str!("../../rosbag2_rs_fastdds/package.xml");
        for key in ros_dependencies::FAST_DDS {
            assert!(
                declared(xml, key, &["depend"]),
                "{key}: linked, not a <depend>"
            );
        }
    }
}

/// The golden table of ROS command lines, parsed by rcl as rclpy parses them.
#[cfg(all(test, rosbag2_rs_rcl))]
#[path = "../../rosbag2_rs_middleware/src/ros_arguments_golden.rs"]
mod ros_arguments_golden;

#[cfg(all(test, rosbag2_rs_rcl))]
mod golden {
    #[test]
    fn golden_command_lines_parse_as_rcl_parses_them() {
        crate::ros_arguments_golden::check_every_case(crate::arguments::parse);
    }
}
