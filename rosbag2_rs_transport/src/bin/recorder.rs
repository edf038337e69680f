//! `recorder`: the rosbag2-rs recorder node (`ros2 run rosbag2_rs_transport recorder ...`), with
//! the flags of `ros2 bag record` and the snapshot mode. `--ros-args -r __node:=NAME -r __ns:=NS`
//! as appended by `ros2 launch` set the node name and namespace.

use clap::Parser;
use rosbag2_rs_transport::recorder::cli::{run_in_namespace, RecordArgs};
use rosbag2_rs_transport::ros_args::split_ros_args;

#[derive(Parser)]
#[command(
    name = "recorder",
    version,
    about = "Record ROS 2 topics to a bag (rosbag2-rs)"
)]
struct Cli {
    /// Log level: debug, info, warn, error or fatal (also trace, off).
    #[arg(long, default_value = "info", value_parser = rosbag2_rs_transport::logging::parse_level)]
    log_level: log::LevelFilter,
    #[command(flatten)]
    args: RecordArgs,
}

fn main() {
    let (own, ros) = split_ros_args(std::env::args());
    let mut cli = Cli::parse_from(own);
    rosbag2_rs_transport::logging::init(cli.log_level);
    if let Some(name) = ros.node_name {
        cli.args.node_name = name;
    }
    if let Err(e) = run_in_namespace(cli.args, ros.namespace.as_deref().unwrap_or("/")) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
