//! Logging of the nodes. On the rcl backend they log through rcl, as rclcpp nodes do
//! ([`init_node`]: rcl's levels, console format, log file and `/rosout`). Elsewhere lines are
//! printed by the binaries' console logger ([`rosbag2_rs_tools::console`], rclcpp's format) at
//! the ROS arguments' level for the node's logger, or the program's `--log-level`; while a node
//! is up, every line logged also goes to its `/rosout` ([`to_rosout`]) unless
//! `--disable-rosout-logs` said otherwise.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rosbag2_rs_tools::console::{self, clear_progress_line, OURS};

use rosbag2_rs_transport_lib::ros_arguments::{log_through_rcl, RosArguments};
use rosbag2_rs_transport_lib::{LogOrigin, Middleware, Rosout};

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
    console::install(level, &ros.node_name, ros.logging.stdout, Some(publish));
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
