//! rcl's logging, configured as rclcpp configures it (`rcl_logging_configure_with_output_handler`
//! with rcl's own console, `/rosout` and log-file handlers behind one process-wide lock), and the
//! `log` crate's records fed into it (`rcutils_log` under the node's logger name). rcl then
//! applies the `--log-level` rules, `--disable-*-logs`, `RCUTILS_CONSOLE_OUTPUT_FORMAT`,
//! `RCUTILS_COLORIZED_OUTPUT`, the log file under `ROS_LOG_DIR` (or `~/.ros/log`), and publishes
//! `/rosout` from every node it creates.

use std::ffi::{c_char, c_int, CString};
use std::sync::OnceLock;

use parking_lot::ReentrantMutex;

use super::arguments;
use super::ffi::{self, check};
use super::sys;
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::ros_arguments::RosArguments;

/// rclcpp's global logging mutex: rcl's output handlers are not thread-safe. Reentrant: a
/// handler that publishes on `/rosout` may log again on the same thread.
static LOGGING: ReentrantMutex<()> = ReentrantMutex::new(());

/// Whether rcl's logging was configured (once per process).
static CONFIGURED: OnceLock<bool> = OnceLock::new();

/// The output handler rcl calls for every line: rcl's own handlers, under [`LOGGING`].
unsafe extern "C" fn output_handler(
    location: *const sys::rcutils_log_location_t,
    severity: c_int,
    name: *const c_char,
    timestamp: sys::rcutils_time_point_value_t,
    format: *const c_char,
    args: *mut sys::va_list,
) {
    let _lock = LOGGING.lock();
    // SAFETY: the arguments are rcutils' own, passed on unchanged.
    unsafe {
        sys::rcl_logging_multiple_output_handler(location, severity, name, timestamp, format, args)
    }
}

/// Configures rcl's logging from the process's arguments (those `ros_arguments::parse` kept);
/// false when there are none.
pub(crate) fn configure() -> Result<bool> {
    if let Some(done) = CONFIGURED.get() {
        return Ok(*done);
    }
    let Some(process) = arguments::process() else {
        return Ok(false);
    };
    let allocator = ffi::allocator();
    // SAFETY: the parsed arguments are initialised and outlive the call (they are kept for the
    // process); the handler has rcutils' signature.
    let ret = process.with_parsed(|args| unsafe {
        sys::rcl_logging_configure_with_output_handler(args, &allocator, Some(output_handler))
    });
    check(ret, || "cannot configure rcl's logging".into())?;
    Ok(*CONFIGURED.get_or_init(|| true))
}

/// Hands the process's logging to rcl where rcl parsed `args` ([`arguments::parse`]): rcl's
/// levels, console format and colours (`RCUTILS_CONSOLE_OUTPUT_FORMAT`,
/// `RCUTILS_COLORIZED_OUTPUT`), log file (`ROS_LOG_DIR`) and `/rosout` (published by rcl from
/// every node it creates), with the `log` crate's records of the crates `ours` (others only at
/// debug) under the node's logger. `level` is the program's own `--log-level`, for the node's
/// logger when the ROS arguments set none; `before_line` runs before each line is printed. False
/// (nothing done) where rcl did not parse `args`: the caller sets up its own logging.
pub fn log_through_rcl(
    args: &RosArguments,
    level: log::LevelFilter,
    ours: &'static [&'static str],
    before_line: fn(),
) -> Result<bool> {
    if !args.by_rcl || !configure()? {
        return Ok(false);
    }
    let logger = args.logger_name();
    if args.logging.level_of(&logger).is_none() {
        set_level(&logger, level)?;
    }
    let rcl_logger = RclLogger::new(&logger, ours, before_line)?;
    log::set_boxed_logger(Box::new(rcl_logger)).map_err(install_error)?;
    log::set_max_level(effective_level(&logger));
    Ok(true)
}

/// Ends rcl's logging (its log file is flushed and closed), if [`log_through_rcl`] started it;
/// call before the process exits.
pub fn finish() {
    if CONFIGURED.get() == Some(&true) {
        let _lock = LOGGING.lock();
        // SAFETY: configured once above; nothing logs through rcl after the process's end.
        let _ = unsafe { sys::rcl_logging_fini() };
    }
}

/// Creates `node`'s `/rosout` publisher where rcl's logging publishes there (configured, and not
/// `--disable-rosout-logs`): true when it did. rcl leaves this to the client library.
///
/// # Safety
/// `node` is an initialised node.
pub(crate) unsafe fn init_rosout(node: *mut sys::rcl_node_t) -> bool {
    // SAFETY: the node is initialised (caller); rcl registers the publisher under its logger name.
    unsafe {
        if !sys::rcl_logging_rosout_enabled() {
            return false;
        }
        let ret = sys::rcl_logging_rosout_init_publisher_for_node(node);
        if ret != ffi::RET_OK {
            log::warn!("{}", ffi::error(ret, "no /rosout for the node".into()));
        }
        ret == ffi::RET_OK
    }
}

/// Removes `node`'s `/rosout` publisher ([`init_rosout`]), before the node goes.
///
/// # Safety
/// `node` is an initialised node whose publisher [`init_rosout`] created.
pub(crate) unsafe fn fini_rosout(node: *mut sys::rcl_node_t) {
    let _lock = LOGGING.lock();
    // SAFETY: as the caller says; under the logging lock, so no line is being published.
    let ret = unsafe { sys::rcl_logging_rosout_fini_publisher_for_node(node) };
    if ret != ffi::RET_OK {
        log::debug!("{}", ffi::error(ret, "/rosout publisher".into()));
    }
}

/// rcutils' severity of a `log` level (`RCUTILS_LOG_SEVERITY_*`).
fn severity(level: log::Level) -> c_int {
    match level {
        log::Level::Error => 40,
        log::Level::Warn => 30,
        log::Level::Info => 20,
        log::Level::Debug | log::Level::Trace => 10,
    }
}

/// `RCUTILS_LOG_SEVERITY_FATAL`.
const FATAL: c_int = 50;

/// Sets the level of `logger` (`rcutils_logging_set_logger_level`).
pub(crate) fn set_level(logger: &str, level: log::LevelFilter) -> Result<()> {
    let name = ffi::cstring(logger)?;
    let level = match level.to_level() {
        Some(level) => severity(level),
        None => FATAL,
    };
    // SAFETY: a NUL-terminated name; rcutils copies it.
    check(
        unsafe { sys::rcutils_logging_set_logger_level(name.as_ptr(), level) },
        || format!("cannot set the level of logger {logger}"),
    )
}

/// The level filter that shows what `logger` logs now.
pub(crate) fn effective_level(logger: &str) -> log::LevelFilter {
    let Ok(name) = ffi::cstring(logger) else {
        return log::LevelFilter::Info;
    };
    // SAFETY: a NUL-terminated name.
    let level = unsafe { sys::rcutils_logging_get_logger_effective_level(name.as_ptr()) };
    match level {
        l if l <= 10 => log::LevelFilter::Debug,
        l if l <= 20 => log::LevelFilter::Info,
        l if l <= 30 => log::LevelFilter::Warn,
        l if l <= 40 => log::LevelFilter::Error,
        _ => log::LevelFilter::Off,
    }
}

/// The `log` crate's logger that hands every record to rcl under one logger name (the node's),
/// so that rcl's console format, log file and `/rosout` carry them.
pub(crate) struct RclLogger {
    name: CString,
    /// Crates whose records are ours (the rest shown only when the node's logger is at debug).
    ours: &'static [&'static str],
    /// Shows the records of other crates.
    others: bool,
    /// Called before each line reaches the console (a progress line to clear).
    before_line: fn(),
}

impl RclLogger {
    /// A logger under `name`.
    pub fn new(name: &str, ours: &'static [&'static str], before_line: fn()) -> Result<Self> {
        Ok(Self {
            name: ffi::cstring(name)?,
            ours,
            others: effective_level(name) >= log::LevelFilter::Debug,
            before_line,
        })
    }

    fn is_ours(&self, target: &str) -> bool {
        let krate = target.split("::").next().unwrap_or(target);
        self.ours.contains(&krate)
    }
}

impl log::Log for RclLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        (self.others || self.is_ours(metadata.target()))
            // SAFETY: a NUL-terminated name.
            && unsafe {
                sys::rcutils_logging_logger_is_enabled_for(
                    self.name.as_ptr(),
                    severity(metadata.level()),
                )
            }
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let text = |s: &str| CString::new(s.replace('\0', "")).unwrap_or_default();
        let message = text(&record.args().to_string());
        let function = text(record.module_path().unwrap_or_default());
        let file = text(record.file().unwrap_or_default());
        let location = sys::rcutils_log_location_t {
            function_name: function.as_ptr(),
            file_name: file.as_ptr(),
            line_number: record.line().unwrap_or_default() as usize,
        };
        (self.before_line)();
        // SAFETY: every string is NUL-terminated and alive for the call; the format takes one
        // string argument, which is given.
        unsafe {
            sys::rcutils_log(
                &location,
                severity(record.level()),
                self.name.as_ptr(),
                c"%s".as_ptr(),
                message.as_ptr(),
            )
        }
    }

    fn flush(&self) {}
}

/// The error for a logger that cannot be installed.
pub(crate) fn install_error(e: log::SetLoggerError) -> TransportError {
    TransportError::Middleware(format!("cannot install the rcl logger: {e}"))
}
