//! `player`: plays bags onto the ROS 2 graph (`ros2 run rosbag2_rs_transport player BAG ...`).
//! Takes the flags of `ros2 bag play`; `--ros-args -r __node:=NAME -r __ns:=NS` as appended by
//! `ros2 launch` set the node name and namespace.

use clap::Parser;
use rosbag2_rs_transport::player::cli::{run_play, PlayArgs};
use rosbag2_rs_transport::ros_args::split_ros_args;

/// Play ROS 2 bags with time control (pause, rate, seek, /clock), services on /<node>/...
#[derive(Parser)]
#[command(name = "player", version)]
struct Args {
    /// Log level: debug, info, warn, error or fatal (also trace, off).
    #[arg(long, default_value = "info", value_parser = rosbag2_rs_transport::logging::parse_level)]
    log_level: log::LevelFilter,
    #[command(flatten)]
    play: PlayArgs,
}

fn main() {
    let (own, ros) = split_ros_args(std::env::args());
    let mut args = Args::parse_from(own);
    rosbag2_rs_transport::logging::init(args.log_level);
    if let Some(name) = ros.node_name {
        args.play.node_name = name;
    }
    if let Err(e) = run_play(&args.play, ros.namespace.as_deref().unwrap_or("/")) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
