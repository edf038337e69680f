//! # rosbag2_rs_transport
//!
//! The player and recorder nodes of rosbag2-rs (`ros2 run rosbag2_rs_transport player|recorder`,
//! this package's binaries, thin mains that call [`node_main`]) and their node front, which
//! `ros2bag-rs play|burst|record` (package `ros2bag_rs_cli`) runs too, as rosbag2_transport
//! holds it under `ros2 bag`: the flags of `ros2 bag play|burst|record` (built from the flag
//! groups of [`rosbag2_rs_tools::flags`]), rosbag2's node parameters and the rest of
//! `--ros-args` ([`split_ros_args`]), the processes' plumbing (logging through rcl or as rclcpp
//! prints it, `/rosout`, keyboard controls, SIGINT/SIGTERM, a progress line) and the `run_*`
//! functions that turn flags into the transport library's typed options and run the player or
//! recorder on a ROS 2 node. Errors are `anyhow`'s: this library is the binaries' shared `main`.

mod choice;
mod keyboard;
mod logging;
mod node_parameters;
mod play;
mod record;
mod ros_args;
mod shutdown;

use std::sync::Arc;

use anyhow::{Context, Result};

pub use logging::init_node as init_node_logging;
pub use node_parameters::declared as declared_parameters;
pub use play::{run_burst, run_play, BurstArgs, PlayArgs, PLAY_PARAMETERS};
pub use record::{default_bag_name, run_record, RecordArgs, RECORD_PARAMETERS};
pub use ros_args::{command_line, split_ros_args, Param, ParamTable, RosArgs};
pub use shutdown::shutdown_requested;

use rosbag2_rs_transport_lib::{
    serve_parameters, DeclaredParameter, Middleware, ParameterServices,
};

/// A node binary's command line: its flags, the rosbag2 node parameters it takes, and what it
/// runs.
pub trait NodeCommand: clap::Parser {
    /// rosbag2's parameters of this node and the flags they stand for.
    const PARAMETERS: ParamTable;
    /// The `--log-level` given.
    fn log_level(&self) -> log::LevelFilter;
    /// The node name, for log lines.
    fn node_name(&self) -> &str;
    /// Runs the node in `namespace`, declaring `parameters`.
    fn run(self, namespace: &str, parameters: Vec<DeclaredParameter>) -> Result<()>;
}

/// The `player` binary: `ros2 bag play`'s flags.
#[derive(clap::Parser)]
#[command(
    name = "player",
    version,
    about = "Play ROS 2 bags with time control (pause, rate, seek, /clock); services on /<node>/...",
    args_override_self = true
)]
pub struct PlayerNode {
    /// Log level: debug, info, warn, error or fatal (also trace, off).
    #[arg(long, default_value = "info", value_parser = rosbag2_rs_tools::console::parse_level)]
    log_level: log::LevelFilter,
    #[command(flatten)]
    play: PlayArgs,
}

impl NodeCommand for PlayerNode {
    const PARAMETERS: ParamTable = PLAY_PARAMETERS;
    fn log_level(&self) -> log::LevelFilter {
        self.log_level
    }
    fn node_name(&self) -> &str {
        &self.play.node_name
    }
    fn run(self, namespace: &str, parameters: Vec<DeclaredParameter>) -> Result<()> {
        run_play(&self.play, namespace, parameters)
    }
}

/// The `recorder` binary: `ros2 bag record`'s flags and the snapshot mode.
#[derive(clap::Parser)]
#[command(
    name = "recorder",
    version,
    about = "Record ROS 2 topics to a bag, or buffer them for snapshots (rosbag2-rs)",
    args_override_self = true
)]
pub struct RecorderNode {
    /// Log level: debug, info, warn, error or fatal (also trace, off).
    #[arg(long, default_value = "info", value_parser = rosbag2_rs_tools::console::parse_level)]
    log_level: log::LevelFilter,
    #[command(flatten)]
    record: RecordArgs,
}

impl NodeCommand for RecorderNode {
    const PARAMETERS: ParamTable = RECORD_PARAMETERS;
    fn log_level(&self) -> log::LevelFilter {
        self.log_level
    }
    fn node_name(&self) -> &str {
        &self.record.node_name
    }
    fn run(self, namespace: &str, parameters: Vec<DeclaredParameter>) -> Result<()> {
        run_record(self.record, namespace, parameters)
    }
}

/// The whole `main` of a node binary: `--ros-args` (node name, namespace, remaps, parameters)
/// turned into flags, the flags parsed, logging set up for the node, then the node run.
pub fn node_main<C: NodeCommand>() -> ! {
    let (own, ros) = split_ros_args(std::env::args());
    let ros = ros
        .resolve(&own, &C::PARAMETERS)
        .unwrap_or_else(|e| fail(e));
    let (argv, warnings) =
        ros_args::command_line(&ros, own, &C::PARAMETERS).unwrap_or_else(|e| fail(e));
    let clap_command = C::command();
    let matches = clap_command.clone().get_matches_from(argv);
    let command = C::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let parameters = node_parameters::declared(&C::PARAMETERS, &clap_command, &matches);
    logging::init_node(command.log_level(), &ros);
    warnings.iter().for_each(|w| log::warn!("{w}"));
    match command.run(&ros.namespace, parameters) {
        Ok(()) => exit(0),
        Err(e) => fail(e),
    }
}

/// How long [`exit`] waits for the process's nodes to leave the graph.
const LEAVE_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Exits with `code` once the process's nodes have left the graph (at most 3 s): a
/// node whose last reference went on another thread may still be saying goodbye, and peers would
/// otherwise see it until its lease ends.
pub fn exit(code: i32) -> ! {
    if !rosbag2_rs_transport_lib::wait_for_nodes_to_leave(LEAVE_GRACE) {
        log::debug!("a node was still on the graph at exit");
    }
    rosbag2_rs_transport_lib::ros_arguments::end_logging();
    std::process::exit(code)
}

/// Prints `error: ...` with the causes and exits with status 1; a closed pipe (`... | head`) is
/// the reader's choice and exits 0 quietly ([`rosbag2_rs_tools::console::report`]).
pub fn fail(e: anyhow::Error) -> ! {
    exit(rosbag2_rs_tools::console::report(e.as_ref()))
}

/// What a player or recorder node offers besides its own services, as every rclcpp node does:
/// its parameters (`ros2 param list`) and its log lines on `/rosout`. Drop it before the node.
#[derive(Debug)]
pub struct NodeServices {
    _parameters: ParameterServices,
    _rosout: logging::RosoutGuard,
}

/// Serves `parameters` on `node` and sends the process's log lines to its `/rosout`.
pub fn node_services(
    node: &dyn Middleware,
    parameters: Vec<DeclaredParameter>,
) -> Result<NodeServices> {
    Ok(NodeServices {
        _parameters: serve_parameters(node, parameters)
            .context("cannot serve the node's parameters")?,
        _rosout: logging::to_rosout(node),
    })
}

/// The node of a command-line tool, on the middleware `RMW_IMPLEMENTATION` selects, configured
/// from the ROS 2 environment variables. SIGINT and SIGTERM are caught from before the node
/// exists: a signal that comes while the tool still sets up is queued for it, never the end of
/// a process whose node is on the graph.
pub fn ros_node(name: &str, namespace: &str) -> Result<Arc<dyn Middleware>> {
    shutdown::shutdown_requested()?;
    rosbag2_rs_transport_lib::create_node(name, namespace)
        .with_context(|| format!("cannot create the ROS 2 node {name}"))
}
