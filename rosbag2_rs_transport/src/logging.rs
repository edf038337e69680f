//! Logging for the binaries: `--log-level` applies to rosbag2-rs itself; the DDS stack underneath
//! logs warnings and errors only (its info output is per-packet noise). `RUST_LOG` overrides both.

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
    builder
        .filter_level(log::LevelFilter::Warn.min(level))
        .format_target(false);
    for module in OURS {
        builder.filter_module(module, level);
    }
    builder.parse_env("RUST_LOG").init();
}
