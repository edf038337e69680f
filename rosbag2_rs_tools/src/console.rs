//! The console of the binaries (`ros2bag-rs`, the `player` and `recorder` nodes): log lines
//! printed as rclcpp prints them, `--log-level` for rosbag2-rs's own crates, a progress line that
//! log lines clear first, and errors reported as `error: ...` with their causes. The DDS and
//! Zenoh stacks underneath are silent unless the level is debug or trace (their warnings are
//! per-packet notes and their shutdown reports errors about entities already dropped);
//! rosbag2-rs logs the failures that matter itself. `RUST_LOG` (env_logger's filters) replaces
//! the levels. The nodes add rcl logging and `/rosout` on top (`rosbag2_rs_transport`).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// The crates whose messages `--log-level` controls.
pub const OURS: &[&str] = &[
    "rosbag2_rs_codec",
    "rosbag2_rs_storage",
    "rosbag2_rs_tools",
    "rosbag2_rs_clock",
    "rosbag2_rs_interfaces",
    "rosbag2_rs_middleware",
    "rosbag2_rs_dds_common",
    "rosbag2_rs_cyclonedds",
    "rosbag2_rs_fastdds",
    "rosbag2_rs_zenoh",
    "rosbag2_rs_rcl",
    "rosbag2_rs_transport_lib",
    "rosbag2_rs_transport",
    "realsense_bag_rs",
    "pf_timesync_rs",
    "ros2bag_rs",
    "player",
    "recorder",
];

/// Parses `--log-level` as ROS 2 spells it (`debug`, `info`, `warn`, `error`, `fatal`, any case)
/// plus `trace` and `off`; `fatal` shows errors only.
pub fn parse_level(text: &str) -> Result<log::LevelFilter, UnknownLogLevel> {
    match text.to_ascii_lowercase().as_str() {
        "fatal" => Ok(log::LevelFilter::Error),
        other => other.parse().map_err(|_| UnknownLogLevel(text.to_string())),
    }
}

/// A `--log-level` that is none of the levels [`parse_level`] knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown log level '{0}' (debug, info, warn, error, fatal, trace or off)")]
pub struct UnknownLogLevel(
    /// The level as given.
    pub String,
);

/// Set while a progress line is being redrawn on the terminal: log lines then clear it first.
static PROGRESS_LINE: AtomicBool = AtomicBool::new(false);

/// Tells the logger whether a progress line is on the terminal (see [`install`]).
pub fn set_progress_line(active: bool) {
    PROGRESS_LINE.store(active, Ordering::SeqCst);
}

/// Clears the progress line, if one is on the terminal, before a log line is printed elsewhere
/// (rcl's console).
pub fn clear_progress_line() {
    if PROGRESS_LINE.load(Ordering::SeqCst) && std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
}

/// One log line as rclcpp prints it: `[INFO] [1732480000.123456789] [rosbag2_player]: message`.
fn format_line(level: log::Level, now: std::time::SystemTime, node: &str, message: &str) -> String {
    let level = match level {
        log::Level::Error => "ERROR",
        log::Level::Warn => "WARN",
        log::Level::Info => "INFO",
        log::Level::Debug | log::Level::Trace => "DEBUG",
    };
    let since_epoch = now
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "[{level}] [{}.{:09}] [{node}]: {message}",
        since_epoch.as_secs(),
        since_epoch.subsec_nanos()
    )
}

/// Called with every line logged and its message, besides the console (a node's `/rosout`).
pub type LineHook = fn(&log::Record<'_>, &str);

/// Installs the console logger of the program `node` (its name, as rclcpp shows it in every
/// line): lines of rosbag2-rs's crates at `level`, printed to stderr when `console`, and handed to
/// `hook`. Call once at the start of `main`.
pub fn install(level: log::LevelFilter, node: &str, console: bool, hook: Option<LineHook>) {
    let mut builder = env_logger::Builder::new();
    match std::env::var("RUST_LOG") {
        // In place of the levels below, not on top of them: `RUST_LOG=debug` raises everything.
        Ok(filters) => {
            builder.parse_filters(&filters);
        }
        Err(_) => {
            let others = if level >= log::LevelFilter::Debug {
                log::LevelFilter::Warn
            } else {
                log::LevelFilter::Off
            };
            builder.filter_level(others);
            for module in OURS {
                builder.filter_module(module, level);
            }
        }
    }
    if !console {
        builder.target(env_logger::Target::Pipe(Box::new(std::io::sink())));
    }
    let node = node.trim_start_matches('/').to_string();
    let clear = std::io::stderr().is_terminal();
    builder.format(move |out, record| {
        if clear && PROGRESS_LINE.load(Ordering::SeqCst) {
            write!(out, "\r\x1b[K")?;
        }
        let message = record.args().to_string();
        let line = format_line(
            record.level(),
            std::time::SystemTime::now(),
            &node,
            &message,
        );
        if let Some(hook) = hook {
            hook(record, &message);
        }
        writeln!(out, "{line}")
    });
    builder.init();
}

/// Reports why a program failed and gives its exit status: `error: ...` with every cause on
/// stderr and 1; but 0, quietly, when a closed pipe (`... | head`) is among the causes, which is
/// the reader's choice.
pub fn report(error: &(dyn std::error::Error + 'static)) -> i32 {
    let mut causes = std::iter::successors(Some(error), |e| e.source());
    if causes.clone().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    }) {
        return 0;
    }
    let mut line = String::from("error: ");
    if let Some(first) = causes.next() {
        line.push_str(&first.to_string());
    }
    for cause in causes {
        line.push_str(": ");
        line.push_str(&cause.to_string());
    }
    eprintln!("{line}");
    1
}

#[cfg(test)]
mod tests {
    /// Every crate of the workspace that logs is one of [`super::OURS`]: a crate left out would
    /// have its lines dropped below warn (the middleware crates' were, when they split off).
    #[test]
    fn every_crate_of_ours_is_ours() {
        let workspace = include_str!("../../Cargo.toml");
        for member in workspace
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"')?.strip_suffix("\","))
        {
            let name = member.rsplit('/').next().unwrap_or(member);
            if name != "ros2bag_rs_cli" {
                assert!(super::OURS.contains(&name), "{name} is not in OURS");
            }
        }
    }

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

    #[test]
    fn lines_look_like_rclcpp() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 42);
        assert_eq!(
            super::format_line(log::Level::Warn, at, "rosbag2_player", "hello"),
            "[WARN] [1700000000.000000042] [rosbag2_player]: hello"
        );
    }
}
