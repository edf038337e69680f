//! Logging for the binaries. On the rcl backend the nodes log through rcl, as rclcpp nodes do
//! ([`init_node`]: rcl's levels, console format, log file and `/rosout`). Elsewhere lines are
//! printed here in rclcpp's default format: `--log-level` (the program's flag, or the ROS
//! arguments' level for the node's logger) applies to rosbag2-rs itself. The DDS stack
//! underneath is silent unless the level is debug or trace (its warnings are per-packet notes
//! and its shutdown reports errors about entities it already dropped); rosbag2-rs logs the DDS
//! failures that matter itself. `RUST_LOG` (env_logger's filters) replaces all of this. While a
//! node is up, every line logged also goes to its `/rosout` ([`to_rosout`]) unless
//! `--disable-rosout-logs` said otherwise.

use std::cell::Cell;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rosbag2_rs_transport_lib::ros_arguments::{log_through_rcl, RosArguments};
use rosbag2_rs_transport_lib::{LogOrigin, Middleware, Rosout};

/// The crates whose messages `--log-level` controls.
const OURS: &[&str] = &[
    "rosbag2_rs_codec",
    "rosbag2_rs_storage",
    "rosbag2_rs_tools",
    "rosbag2_rs_clock",
    "rosbag2_rs_transport_lib",
    "realsense_bag_rs",
    "pf_timesync_rs",
    "ros2bag_rs_cli",
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

/// Tells the logger whether a progress line is on the terminal (see [`init`]).
pub fn set_progress_line(active: bool) {
    PROGRESS_LINE.store(active, Ordering::SeqCst);
}

/// Whether [`to_rosout`] publishes this process's lines (not when rcl does, nor after
/// `--disable-rosout-logs`).
static OWN_ROSOUT: AtomicBool = AtomicBool::new(true);

/// The `/rosout` publisher of the process's node, while it is up.
static ROSOUT: Mutex<Option<Rosout>> = Mutex::new(None);

thread_local! {
    /// Set while this thread publishes a line on `/rosout`: what the middleware logs meanwhile
    /// goes to the console only.
    static PUBLISHING: Cell<bool> = const { Cell::new(false) };
}

/// Sends every line logged from now on to `node`'s `/rosout` too, until the guard is dropped
/// (before the node goes: the publisher is one of its entities). A node that cannot publish
/// there is logged and left without.
pub fn to_rosout(node: &dyn Middleware) -> RosoutGuard {
    if !OWN_ROSOUT.load(Ordering::SeqCst) {
        return RosoutGuard(());
    }
    match Rosout::new(node) {
        Ok(rosout) => {
            *ROSOUT.lock().unwrap_or_else(|e| e.into_inner()) = Some(rosout);
        }
        Err(e) => log::warn!("log lines do not go to /rosout: {e}"),
    }
    RosoutGuard(())
}

/// Sends log lines to `/rosout` while it lives (see [`to_rosout`]).
#[derive(Debug)]
pub struct RosoutGuard(());

impl Drop for RosoutGuard {
    fn drop(&mut self) {
        let rosout = ROSOUT.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(rosout);
    }
}

/// Publishes `record` on `/rosout`, if a node is up.
fn publish(record: &log::Record<'_>, message: &str) {
    if PUBLISHING.with(|p| p.replace(true)) {
        return;
    }
    if let Some(rosout) = ROSOUT.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        let origin = LogOrigin {
            file: record.file().unwrap_or_default(),
            module: record.module_path().unwrap_or_default(),
            line: record.line().unwrap_or_default(),
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        // A line that cannot go out is on the console already.
        let _ = rosout.log(record.level(), message, origin, now);
    }
    PUBLISHING.with(|p| p.set(false));
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

/// Clears the progress line, if one is on the terminal, before a log line is printed.
fn clear_progress_line() {
    if PROGRESS_LINE.load(Ordering::SeqCst) && std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
}

/// Installs the logger of a node whose ROS arguments are `ros`; call once at the start of
/// `main`. Through rcl where rcl parsed them; else printed here, at `ros`'s level for the
/// node's logger (or `level`, the program's own flag), to the console unless
/// `--disable-stdout-logs`, and to `/rosout` unless `--disable-rosout-logs`.
pub fn init_node(level: log::LevelFilter, ros: &RosArguments) {
    if std::env::var_os("RUST_LOG").is_none() {
        match log_through_rcl(ros, level, OURS, clear_progress_line) {
            Ok(true) => {
                // rcl publishes /rosout from its nodes.
                OWN_ROSOUT.store(false, Ordering::SeqCst);
                return;
            }
            Ok(false) => {}
            Err(e) => eprintln!("cannot log through rcl, logging here: {e}"),
        }
    }
    let level = ros
        .logging
        .level_of(&ros.logger_name())
        .map_or(level, |s| s.level_filter());
    OWN_ROSOUT.store(ros.logging.rosout, Ordering::SeqCst);
    install(level, &ros.node_name, ros.logging.stdout);
    if let Some(file) = &ros.logging.config_file {
        log::warn!(
            "--log-config-file {}: the native backends have no logging library to configure",
            file.display()
        );
    }
    if let Some(name) = &ros.logging.file_name {
        log::warn!("--log-file-name {name}: the native backends write no log file");
    }
}

/// Installs the logger for the node `node` (its name, as rclcpp shows it in every line); call
/// once at the start of `main`.
pub fn init(level: log::LevelFilter, node: &str) {
    install(level, node, true);
}

/// The console logger, printing to stderr when `console`.
fn install(level: log::LevelFilter, node: &str, console: bool) {
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
        publish(record, &message);
        writeln!(out, "{line}")
    });
    builder.init();
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

    #[test]
    fn lines_look_like_rclcpp() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 42);
        assert_eq!(
            super::format_line(log::Level::Warn, at, "rosbag2_player", "hello"),
            "[WARN] [1700000000.000000042] [rosbag2_player]: hello"
        );
    }
}
