//! `recorder`: the rosbag2-rs recorder node (`ros2 run rosbag2_rs_transport recorder ...`), with
//! the flags of `ros2 bag record` and the snapshot mode.

use clap::Parser;
use rosbag2_rs_transport::recorder::cli::{run, RecordArgs};

#[derive(Parser)]
#[command(
    name = "recorder",
    version,
    about = "Record ROS 2 topics to a bag (rosbag2-rs)"
)]
struct Cli {
    /// Log level: error, warn, info, debug or trace.
    #[arg(long, default_value = "info")]
    log_level: log::LevelFilter,
    #[command(flatten)]
    args: RecordArgs,
}

fn main() {
    let cli = Cli::parse();
    // The DDS stack is chatty at info level (discovery, locators): keep it at warnings unless
    // debugging.
    let dds = if cli.log_level >= log::LevelFilter::Debug {
        cli.log_level
    } else {
        cli.log_level.min(log::LevelFilter::Warn)
    };
    env_logger::Builder::new()
        .filter_level(cli.log_level)
        .filter_module("rustdds", dds)
        .filter_module("ros2_client", dds)
        .format_timestamp_millis()
        .init();
    if let Err(e) = run(cli.args) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
