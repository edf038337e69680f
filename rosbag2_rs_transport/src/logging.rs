//! Logging for the binaries: `--log-level` applies to rosbag2-rs itself. The DDS stack underneath
//! is silent unless `--log-level` is debug or trace (its warnings are per-packet notes and its
//! shutdown reports errors about entities it already dropped); rosbag2-rs logs the DDS failures
//! that matter itself. `RUST_LOG` overrides all of this.

/// The crates whose messages `--log-level` controls.
const OURS: &[&str] = &[
    "rosbag2_rs_storage",
    "rosbag2_rs_clock",
    "rosbag2_rs_transport",
    "ros2bag_rs_cli",
    "ros2bag_rs",
    "player",
    "recorder",
];

/// Installs the logger; call once at the start of `main`.
pub fn init(level: log::LevelFilter) {
    let mut builder = env_logger::Builder::new();
    let others = if level >= log::LevelFilter::Debug {
        log::LevelFilter::Warn
    } else {
        log::LevelFilter::Off
    };
    builder.filter_level(others).format_target(false);
    for module in OURS {
        builder.filter_module(module, level);
    }
    builder.parse_env("RUST_LOG").init();
}
