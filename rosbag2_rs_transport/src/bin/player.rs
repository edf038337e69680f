//! `player`: plays bags onto the ROS 2 graph (`ros2 run rosbag2_rs_transport player BAG ...`).
//! Takes the flags of `ros2 bag play`. From `--ros-args` (as `ros2 launch` appends them) it takes
//! the node name and namespace (`-r __node:=`, `-r __ns:=`), topic remaps (`-r from:=to`) and
//! rosbag2's player parameters (`-p play.rate:=2.0`, `--params-file`, `storage.uri` for the bag).

use clap::Parser;
use rosbag2_rs_transport::player::cli::{run_play, PlayArgs, PLAY_PARAMETERS};
use rosbag2_rs_transport::ros_args::split_ros_args;

/// Play ROS 2 bags with time control (pause, rate, seek, /clock), services on /<node>/...
#[derive(Parser)]
#[command(name = "player", version, args_override_self = true)]
struct Args {
    /// Log level: debug, info, warn, error or fatal (also trace, off).
    #[arg(long, default_value = "info", value_parser = rosbag2_rs_transport::logging::parse_level)]
    log_level: log::LevelFilter,
    #[command(flatten)]
    play: PlayArgs,
}

fn main() {
    let (own, ros) = split_ros_args(std::env::args());
    let (argv, warnings) = ros
        .command_line(own, &PLAY_PARAMETERS)
        .unwrap_or_else(|e| exit(e));
    let args = Args::parse_from(argv);
    rosbag2_rs_transport::logging::init(args.log_level, &args.play.node_name);
    warnings.iter().for_each(|w| log::warn!("{w}"));
    if let Err(e) = run_play(&args.play, ros.namespace.as_deref().unwrap_or("/")) {
        exit(e);
    }
}

fn exit(e: anyhow::Error) -> ! {
    eprintln!("error: {e:#}");
    std::process::exit(1);
}
