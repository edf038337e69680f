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

/// Parses `--log-level` as ROS 2 spells it (`debug`, `info`, `warn`, `error`, `fatal`, any case)
/// plus `trace` and `off`; `fatal` shows errors only.
pub fn parse_level(text: &str) -> Result<log::LevelFilter, String> {
    match text.to_ascii_lowercase().as_str() {
        "fatal" => Ok(log::LevelFilter::Error),
        other => other.parse().map_err(|_| {
            format!("unknown log level '{text}' (debug, info, warn, error, fatal, trace or off)")
        }),
    }
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn ros_level_names() {
        use log::LevelFilter::*;
        for (text, level) in [
            ("fatal", Error),
            ("WARN", Warn),
            ("info", Info),
            ("debug", Debug),
        ] {
            assert_eq!(super::parse_level(text), Ok(level));
        }
        assert!(super::parse_level("loud").is_err());
    }
}
