//! The ROS arguments of a node's command line (`--ros-args ... [--]`), with rcl's meaning: the
//! model and the native parser of [`rosbag2_rs_middleware::ros_arguments`], and the choice of
//! parser and logging by the layer the node runs on: rcl's where the rcl backend runs, the
//! native one otherwise.

pub use rosbag2_rs_middleware::ros_arguments::*;

use crate::select::Layer;

/// Parses the ROS arguments of `argv` (the whole command line, program name first) for the node
/// named `node_name` in the code (before remapping): with rcl where the rcl backend runs, here
/// otherwise.
pub fn parse(argv: &[String], node_name: &str) -> Result<RosArguments, RosArgumentsError> {
    if Layer::from_env().ok() == Some(Layer::Rcl) {
        #[cfg(rosbag2_rs_rcl)]
        return rosbag2_rs_rcl::arguments::parse(argv, node_name);
    }
    parse_native(argv, node_name)
}

/// Hands the process's logging to rcl where rcl parsed `args` (see [`parse`] and
/// `rosbag2_rs_rcl::logging::log_through_rcl`); false (nothing done) elsewhere: the caller sets
/// up its own logging.
pub fn log_through_rcl(
    args: &RosArguments,
    level: log::LevelFilter,
    ours: &'static [&'static str],
    before_line: fn(),
) -> crate::Result<bool> {
    #[cfg(rosbag2_rs_rcl)]
    return rosbag2_rs_rcl::logging::log_through_rcl(args, level, ours, before_line);
    #[cfg(not(rosbag2_rs_rcl))]
    {
        let _ = (args, level, ours, before_line);
        Ok(false)
    }
}

/// Ends rcl's logging, if [`log_through_rcl`] started it (its log file is flushed); call
/// before the process exits.
pub fn end_logging() {
    #[cfg(rosbag2_rs_rcl)]
    rosbag2_rs_rcl::logging::finish();
}
