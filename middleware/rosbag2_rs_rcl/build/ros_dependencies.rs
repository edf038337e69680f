//! The ROS packages the rcl backend builds against and loads at run time, by rosdep key: one
//! list for the build script (what it links) and for the test that `package.xml` declares each,
//! so that `rosdep install --from-paths src` brings everything a bare ROS image lacks.

/// The libraries the rcl backend links, each with the rosdep key of the package installing it.
pub const LINKED: &[(&str, &str)] = &[
    ("rcl", "rcl"),
    ("rmw", "rmw"),
    ("rcutils", "rcutils"),
    ("rcl_yaml_param_parser", "rcl_yaml_param_parser"),
    ("rosidl_runtime_c", "rosidl_runtime_c"),
];

/// The Fast DDS the native Fast DDS backend (rosbag2_rs_fastdds) links in a sourced ROS 2 (its
/// build script takes the one that ROS 2's rmw_fastrtps_cpp uses), by rosdep key: 2.x
/// (`fastrtps`, up to Jazzy), 3.x (`fastdds`, from Kilted); its `package.xml` declares each under
/// the matching distributions.
pub const FAST_DDS: &[&str] = &["fastrtps", "fastdds"];

/// Packages whose headers only the bindings read.
pub const HEADERS_ONLY: &[&str] = &["rosidl_typesupport_introspection_c"];

/// System packages the build needs: libclang for bindgen.
pub const BUILD_TOOLS: &[&str] = &["libclang-dev"];

/// What the nodes load at run time: the rmw ROS 2 selects, and the packages whose type supports
/// they dlopen through the ament index (services, parameters, `/rosout`, `/clock`, type
/// descriptions, service events, actions). This workspace's own rosidl package,
/// `rosbag2_rs_interfaces`, is not declared: built only in a sourced ROS 2, it is skipped
/// without one, and colcon refuses to build a package whose declared dependency it skipped.
pub const RUN: &[&str] = &[
    "rmw_implementation",
    "rcl_interfaces",
    "rosgraph_msgs",
    "rosbag2_interfaces",
    "type_description_interfaces",
    "service_msgs",
    "builtin_interfaces",
    "action_msgs",
];
