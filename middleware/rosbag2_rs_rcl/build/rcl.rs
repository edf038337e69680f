//! The rcl backend's half of the build script: finds rcl in the ROS 2 that `AMENT_PREFIX_PATH`
//! names, generates bindings from that ROS 2's own headers with bindgen, links rcl, and sets
//! the cfgs the backend is compiled under.
//!
//! Why our own bindgen call and not the `r2r_rcl` crate (which also runs bindgen over the sourced
//! headers): `r2r_rcl` links `rmw_implementation` unconditionally (its build script's fixed list
//! of libraries), which PyPI's ROS 2 wheels do not ship (their `librcl.so` links
//! `librmw_fastrtps_cpp.so` directly, and the `ros-*-rmw-implementation` wheel is empty), so a
//! binary built with it does not link there; it also binds all of rcl, rmw, rcutils and the
//! action and yaml libraries (minutes of bindgen and a large, unchecked surface) where we use a
//! few dozen functions; it does not link libpython, which the wheels' rmw needs loaded; and it
//! is one more crate whose release must follow each ROS distribution. Here: about 70 allowlisted
//! functions, and `rmw_serialize` / `rmw_deserialize` / `rmw_get_implementation_identifier`
//! looked up at run time in the process (they live in whichever rmw library rcl loaded), so no
//! rmw vendor is named at link time.
//!
//! Emits, when rcl is found:
//! - `cfg(rosbag2_rs_rcl)`: the backend is compiled;
//! - `cfg(rosbag2_rs_rcl_type_hash)`: the rmw's endpoint info carries a type hash (Jazzy and
//!   later; Humble's does not);
//! - `cfg(rosbag2_rs_rcl_dynamic)`: rcl builds type supports at run time from type descriptions
//!   (`rcl/dynamic_message_type_support.h`, Jazzy and later);
//! - `ROSBAG2_RS_ROS_DISTRO` (compile-time env): the distribution, from `ROS_DISTRO` or rcl's
//!   version;
//! - the bindings at `$OUT_DIR/rcl_bindings.rs`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use crate::rcl_probe::ament_prefixes;
use crate::rcl_probe::find_rcl;

/// The rcl, rmw and rcutils functions the backend calls (bindgen generates nothing else but
/// the types they use).
const FUNCTIONS: &[&str] = &[
    // context
    "rcl_get_zero_initialized_init_options",
    "rcl_init_options_init",
    "rcl_init_options_fini",
    "rcl_get_zero_initialized_context",
    "rcl_init",
    "rcl_shutdown",
    "rcl_context_fini",
    // node
    "rcl_get_zero_initialized_node",
    "rcl_node_get_default_options",
    "rcl_node_init",
    "rcl_node_fini",
    "rcl_node_get_graph_guard_condition",
    "rcl_node_get_name",
    "rcl_node_get_namespace",
    // arguments, as rcl parses them
    "rcl_get_zero_initialized_arguments",
    "rcl_parse_arguments",
    "rcl_arguments_fini",
    "rcl_arguments_get_count_unparsed_ros",
    "rcl_arguments_get_unparsed_ros",
    "rcl_arguments_get_param_overrides",
    "rcl_yaml_node_struct_fini",
    "rcl_get_zero_initialized_log_levels",
    "rcl_arguments_get_log_levels",
    "rcl_log_levels_fini",
    "rcl_remap_node_name",
    "rcl_remap_node_namespace",
    // logging
    "rcl_logging_configure_with_output_handler",
    "rcl_logging_multiple_output_handler",
    "rcl_logging_fini",
    "rcl_logging_rosout_enabled",
    "rcl_logging_rosout_init_publisher_for_node",
    "rcl_logging_rosout_fini_publisher_for_node",
    "rcutils_log",
    "rcutils_logging_logger_is_enabled_for",
    "rcutils_logging_get_logger_effective_level",
    "rcutils_logging_set_logger_level",
    // publishers and subscriptions
    "rcl_get_zero_initialized_publisher",
    "rcl_publisher_get_default_options",
    "rcl_publisher_init",
    "rcl_publisher_fini",
    "rcl_publish_serialized_message",
    "rcl_publisher_get_subscription_count",
    "rcl_publisher_wait_for_all_acked",
    "rcl_get_zero_initialized_subscription",
    "rcl_subscription_get_default_options",
    "rcl_subscription_init",
    "rcl_subscription_fini",
    "rcl_take_serialized_message",
    // services and clients
    "rcl_get_zero_initialized_service",
    "rcl_service_get_default_options",
    "rcl_service_init",
    "rcl_service_fini",
    "rcl_take_request_with_info",
    "rcl_send_response",
    "rcl_get_zero_initialized_client",
    "rcl_client_get_default_options",
    "rcl_client_init",
    "rcl_client_fini",
    "rcl_send_request",
    "rcl_take_response_with_info",
    "rcl_service_server_is_available",
    // wait sets and guard conditions
    "rcl_get_zero_initialized_wait_set",
    "rcl_wait_set_init",
    "rcl_wait_set_fini",
    "rcl_wait_set_clear",
    "rcl_wait_set_resize",
    "rcl_wait_set_add_subscription",
    "rcl_wait_set_add_guard_condition",
    "rcl_wait_set_add_service",
    "rcl_wait_set_add_client",
    "rcl_wait",
    "rcl_get_zero_initialized_guard_condition",
    "rcl_guard_condition_get_default_options",
    "rcl_guard_condition_init",
    "rcl_guard_condition_fini",
    "rcl_trigger_guard_condition",
    // graph
    "rcl_get_topic_names_and_types",
    "rcl_get_publishers_info_by_topic",
    "rcl_get_subscriptions_info_by_topic",
    "rcl_get_node_names_with_enclaves",
    "rcl_names_and_types_fini",
    "rmw_get_zero_initialized_names_and_types",
    "rmw_get_zero_initialized_topic_endpoint_info_array",
    "rmw_topic_endpoint_info_array_fini",
    "rcutils_get_zero_initialized_string_array",
    "rcutils_string_array_fini",
    // errors, allocators, byte arrays
    "rcutils_get_error_string",
    "rcutils_reset_error",
    "rcutils_get_default_allocator",
    "rcutils_get_zero_initialized_uint8_array",
    "rcutils_uint8_array_init",
    "rcutils_uint8_array_fini",
    // run-time type support from a type description (with DYNAMIC_HEADERS)
    "rcl_dynamic_message_type_support_handle_init",
    "rcl_convert_type_description_msg_to_runtime",
    "rosidl_runtime_c__type_description__TypeDescription__destroy",
];

/// Types the backend names besides those the functions use.
const TYPES: &[&str] = &[
    "rosidl_typesupport_introspection_c__MessageMembers",
    "rosidl_typesupport_introspection_c__MessageMembers_s",
    "rosidl_message_type_support_t",
    "rosidl_service_type_support_t",
    "rmw_message_info_t",
    "rmw_service_info_t",
    "rmw_request_id_t",
    "rmw_serialized_message_t",
    "rmw_ret_t",
    "rmw_time_t",
];

/// The return codes (macros in rcl/types.h and rmw/ret_types.h).
const VARS: &[&str] = &["RCL_RET_.*", "RMW_RET_.*"];

/// The headers the bindings come from.
const HEADERS: &[&str] = &[
    "rcl/rcl.h",
    "rcl/graph.h",
    "rcl/remap.h",
    "rcl/logging.h",
    "rcl/logging_rosout.h",
    "rcl/log_level.h",
    "rcl_yaml_param_parser/parser.h",
    "rcutils/logging.h",
    "rcl/error_handling.h",
    "rmw/rmw.h",
    "rmw/serialized_message.h",
    "rmw/topic_endpoint_info_array.h",
    "rcutils/allocator.h",
    "rcutils/error_handling.h",
    "rcutils/types/uint8_array.h",
    "rcutils/types/string_array.h",
    "rosidl_runtime_c/message_type_support_struct.h",
    "rosidl_runtime_c/service_type_support_struct.h",
    "rosidl_typesupport_introspection_c/message_introspection.h",
];

/// The headers of rcl's dynamic type support (Jazzy and later), included where they exist.
const DYNAMIC_HEADERS: &[&str] = &[
    "rcl/dynamic_message_type_support.h",
    "rcl/type_description_conversions.h",
    "rosidl_runtime_c/type_description/type_description__functions.h",
];

/// The ROS 2 distribution: `ROS_DISTRO` when set (a sourced setup sets it), else from rcl's
/// version in its package.xml.
fn distro(prefix: &Path) -> String {
    if let Some(d) = env::var("ROS_DISTRO").ok().filter(|d| !d.trim().is_empty()) {
        return d.trim().to_string();
    }
    let xml = std::fs::read_to_string(prefix.join("share/rcl/package.xml")).unwrap_or_default();
    let major = xml
        .split("<version>")
        .nth(1)
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.trim().parse::<u32>().ok());
    match major {
        Some(5) => "humble",
        Some(6) => "iron",
        Some(9) => "jazzy",
        Some(10) => "kilted",
        Some(_) => "rolling",
        None => "unknown",
    }
    .to_string()
}

/// PyPI's ROS 2 wheels: a venv whose `lib/python3.X/site-packages` holds `ros_*.libs`
/// directories (auditwheel's bundled libraries). Returns those directories.
fn wheel_dirs(prefix: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.filter_map(|e| e.ok()) {
        if !e.file_name().to_string_lossy().starts_with("python3") {
            continue;
        }
        let site = e.path().join("site-packages");
        let Ok(libs) = std::fs::read_dir(&site) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = libs
            .filter_map(|l| l.ok())
            .filter(|l| {
                let n = l.file_name().to_string_lossy().into_owned();
                n.starts_with("ros_") && n.ends_with(".libs")
            })
            .map(|l| l.path())
            .collect();
        dirs.sort();
        out.extend(dirs);
    }
    out
}

/// The wheels' rmw and rcl link `lib*__rosidl_generator_py.so`, which use libpython's symbols
/// without linking it (a Python extension's convention): a native executable must load
/// libpython itself. Asks the venv's own Python where its shared libpython is: `(dir, name)`
/// with `name` as `-l` takes it (`python3.11`).
fn libpython(prefix: &Path) -> Option<(PathBuf, String)> {
    let python = ["bin/python3", "bin/python"]
        .iter()
        .map(|b| prefix.join(b))
        .find(|p| p.exists())?;
    let out = Command::new(python)
        .args([
            "-c",
            "import sysconfig as s; print(s.get_config_var('LIBDIR')); print(s.get_config_var('LDLIBRARY'))",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut lines = text.lines();
    let dir = PathBuf::from(lines.next()?.trim());
    let file = lines.next()?.trim().to_string();
    let name = file.strip_prefix("lib")?.strip_suffix(".so")?.to_string();
    dir.join(&file).exists().then_some((dir, name))
}

/// Finds rcl, generates the bindings, links; returns the directories the executables' RPATH
/// needs, or `None` without rcl.
pub fn configure() -> Option<Vec<PathBuf>> {
    println!("cargo::rustc-check-cfg=cfg(rosbag2_rs_rcl)");
    println!("cargo::rustc-check-cfg=cfg(rosbag2_rs_rcl_type_hash)");
    println!("cargo::rustc-check-cfg=cfg(rosbag2_rs_rcl_dynamic)");
    println!("cargo:rerun-if-env-changed=ROS_DISTRO");
    println!("cargo:rerun-if-env-changed=ROSBAG2_RS_NO_RCL");
    println!("cargo:rerun-if-changed=build/rcl.rs");
    println!("cargo:rerun-if-changed=build/rcl_probe.rs");
    if env::var_os("ROSBAG2_RS_NO_RCL").is_some() {
        return None;
    }
    let ros2 = find_rcl(&ament_prefixes()).unwrap_or_else(|e| panic!("{e}"))?;
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let wrapper = out.join("rcl_wrapper.h");
    let has_header = |h: &str| ros2.includes.iter().any(|i| i.join(h).is_file());
    let dynamic = DYNAMIC_HEADERS.iter().all(|h| has_header(h));
    let text: String = HEADERS
        .iter()
        .chain(if dynamic { DYNAMIC_HEADERS } else { &[] })
        .map(|h| format!("#include <{h}>\n"))
        .collect();
    std::fs::write(&wrapper, text).expect("OUT_DIR is writable");
    let mut builder = bindgen::Builder::default()
        .header(wrapper.to_string_lossy())
        .clang_args(ros2.includes.iter().map(|i| format!("-I{}", i.display())))
        .layout_tests(false)
        .generate_comments(false)
        .derive_default(true)
        .default_enum_style(bindgen::EnumVariation::Consts)
        .default_macro_constant_type(bindgen::MacroTypeVariation::Signed)
        .allowlist_recursively(true);
    for f in FUNCTIONS {
        builder = builder.allowlist_function(f);
    }
    for t in TYPES {
        builder = builder.allowlist_type(t);
    }
    for v in VARS {
        builder = builder.allowlist_var(v);
    }
    let bindings = builder.generate().unwrap_or_else(|e| {
        panic!(
            "rcl found in {} (AMENT_PREFIX_PATH) but bindgen failed on its headers: {e}; \
             install libclang (Debian/Ubuntu: `apt-get install libclang-dev`), or set \
             ROSBAG2_RS_NO_RCL=1 to build without the rcl backend",
            ros2.prefix.display()
        )
    });
    bindings
        .write_to_file(out.join("rcl_bindings.rs"))
        .expect("OUT_DIR is writable");

    println!("cargo:rustc-cfg=rosbag2_rs_rcl");
    if dynamic {
        println!("cargo:rustc-cfg=rosbag2_rs_rcl_dynamic");
    }
    let endpoint_header = ros2
        .includes
        .iter()
        .map(|i| i.join("rmw/topic_endpoint_info.h"))
        .find(|h| h.is_file());
    if endpoint_header
        .and_then(|h| std::fs::read_to_string(h).ok())
        .is_some_and(|t| t.contains("topic_type_hash"))
    {
        println!("cargo:rustc-cfg=rosbag2_rs_rcl_type_hash");
    }
    println!(
        "cargo:rustc-env=ROSBAG2_RS_ROS_DISTRO={}",
        distro(&ros2.prefix)
    );
    // Each library from the first prefix of the sourced environment that has it (an overlay's
    // own rebuild before the underlay's; an isolated install keeps each package in a prefix of
    // its own), and that directory in the executables' RUNPATH.
    let mut rpath = Vec::new();
    for (lib, _) in crate::ros_dependencies::LINKED {
        let dir = ament_prefixes()
            .iter()
            .map(|p| p.join("lib"))
            .find(|d| d.join(format!("lib{lib}.so")).exists())
            .unwrap_or_else(|| ros2.lib.clone());
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=dylib={lib}");
        if !dir.starts_with("/usr/lib") && !dir.starts_with("/lib") && !rpath.contains(&dir) {
            rpath.push(dir);
        }
    }
    // An overlay's libraries (a colcon workspace first in AMENT_PREFIX_PATH) are found through
    // the ament index at run time (their type supports are dlopened by full path).
    let wheels = wheel_dirs(&ros2.prefix);
    if !wheels.is_empty() {
        rpath.extend(wheels);
        match libpython(&ros2.prefix) {
            Some((dir, name)) => {
                // Nothing of ours calls into it, so `--as-needed` (rustc's default) would drop
                // it: linked with `--no-as-needed` into this package's tests, and into the
                // executables above it through the `link-args` metadata (the transport library
                // passes it on). The `-as-needed` link modifier is unstable.
                let args = format!(
                    "-Wl,-L,{},--push-state,--no-as-needed,-l{name},--pop-state",
                    dir.display()
                );
                println!("cargo:rustc-link-arg={args}");
                println!("cargo:link-args={args}");
                rpath.push(dir);
            }
            None => println!(
                "cargo:warning=ROS 2 wheels in {} but no shared libpython found through its \
                 bin/python3: the rcl backend's executables will fail to load the rmw",
                ros2.prefix.display()
            ),
        }
    }
    Some(rpath)
}
