//! `recorder`: the rosbag2-rs recorder node (`ros2 run rosbag2_rs_transport recorder ...`), with
//! the flags of `ros2 bag record` and the snapshot mode. From `--ros-args` (as `ros2 launch`
//! appends them) it takes the node name and namespace (`-r __node:=`, `-r __ns:=`) and rosbag2's
//! recorder parameters (`-p record.all_topics:=true`, `--params-file`, `storage.uri`, ...).

use clap::Parser;
use rosbag2_rs_transport::recorder::cli::{run_in_namespace, RecordArgs, RECORD_PARAMETERS};
use rosbag2_rs_transport::ros_args::split_ros_args;

#[derive(Parser)]
#[command(
    name = "recorder",
    version,
    about = "Record ROS 2 topics to a bag (rosbag2-rs)",
    args_override_self = true
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
    let (argv, warnings) = ros
        .command_line(own, &RECORD_PARAMETERS)
        .unwrap_or_else(|e| exit(e));
    let cli = Cli::parse_from(argv);
    rosbag2_rs_transport::logging::init(cli.log_level, &cli.args.node_name);
    warnings.iter().for_each(|w| log::warn!("{w}"));
    if let Err(e) = run_in_namespace(cli.args, ros.namespace.as_deref().unwrap_or("/")) {
        exit(e);
    }
}

fn exit(e: anyhow::Error) -> ! {
    eprintln!("error: {e:#}");
    std::process::exit(1);
}
