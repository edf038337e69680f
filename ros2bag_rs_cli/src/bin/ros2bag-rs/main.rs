//! `ros2bag-rs`: a `ros2 bag`-style command line for rosbag2-rs. One module per verb; `play`,
//! `burst` and `record` share their flags and node front with the `player` and `recorder` nodes
//! (this package's library).

#![forbid(unsafe_code)]

mod attach;
mod cat;
mod control;
mod convert;
mod convert_yaml;
mod doctor;
mod export;
mod info;
mod list;
mod play;
mod progress;
mod reindex;
mod time_format;
mod times;
#[cfg(feature = "zenoh")]
mod zenoh_router;

use anyhow::Result;
use clap::{Parser, Subcommand};
use ros2bag_rs_cli::{
    command_line, exit, fail, init_logging, init_node_logging, parse_level, run_burst, run_record,
    split_ros_args, BurstArgs, PlayArgs, RecordArgs, RosArgs, PLAY_PARAMETERS, RECORD_PARAMETERS,
};
use rosbag2_rs_transport_lib::ros_arguments::RosArguments;

#[derive(Parser)]
#[command(
    name = "ros2bag-rs",
    version,
    about = "Record, play and inspect ROS 2 bags (rosbag2-rs)",
    args_override_self = true
)]
struct Cli {
    /// Log level: debug, info, warn, error or fatal (also trace, off).
    #[arg(long, global = true, default_value = "info", value_parser = parse_level)]
    log_level: log::LevelFilter,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a bag's files, size, duration, time range and topics (like `ros2 bag info`).
    Info(info::InfoArgs),
    /// Merge bags and rewrite them with another storage, compression, selection or time range.
    Convert(Box<convert::ConvertArgs>),
    /// Print messages decoded, in receive-time order: YAML like `ros2 topic echo`, JSON lines
    /// for scripts, or the payload in hex.
    Cat(cat::CatArgs),
    /// Record topics to a bag (like `ros2 bag record`), or buffer them for snapshots.
    #[command(args_override_self = true)]
    Record(Box<RecordArgs>),
    /// Play bags onto the ROS 2 graph with time control (like `ros2 bag play`).
    #[command(args_override_self = true)]
    Play(Box<PlayArgs>),
    /// Publish a bag's messages as fast as possible, then exit (like `ros2 bag burst`).
    #[command(args_override_self = true)]
    Burst(Box<BurstArgs>),
    /// The storage, converter and compression plugins built in (like `ros2 bag list`).
    List(list::ListArgs),
    /// Ask a running player to pause, resume, change rate, seek, ...; or a running recorder to
    /// write a snapshot, split, change its snapshot buffer limits or clear it.
    Control(control::ControlArgs),
    /// Rebuild a bag's metadata.yaml from its files, recovering what a killed recorder left:
    /// prints per file what was recovered and what was lost.
    Reindex(reindex::ReindexArgs),
    /// Export a topic: images (Image, CompressedImage) as numbered PNG/JPEG files with an
    /// index.csv and optionally a video (ffmpeg), or any topic as CSV.
    Export(Box<export::ExportArgs>),
    /// Check a bag's structure without changing it: CRCs, index vs data, time ranges,
    /// metadata.yaml vs files, definitions vs payloads. Exit status 0 when clean, 1 with a line
    /// per problem.
    Doctor(doctor::DoctorArgs),
    /// Add files (calibration, URDF, configuration) to an MCAP bag as MCAP attachments; the
    /// bag is rewritten next to itself and replaced only once the copy reads back.
    Attach(attach::AttachArgs),
    /// List an MCAP bag's attachments (name, size, media type, log time), or extract them.
    Attachments(attach::AttachmentsArgs),
    /// Run a Zenoh router configured as rmw_zenoh's `rmw_zenohd` (listens on `tcp/[::]:7447`;
    /// ZENOH_ROUTER_CONFIG_URI and ZENOH_CONFIG_OVERRIDE as for rmw_zenohd), until Ctrl-C.
    #[cfg(feature = "zenoh")]
    ZenohRouter,
}

fn main() {
    let (own, ros) = split_ros_args(std::env::args());
    let (cli, warnings, ros) = parse(own, &ros).unwrap_or_else(|e| fail(e));
    let node = match &cli.command {
        Command::Play(args) => args.node_name.as_str(),
        Command::Burst(args) => args.play.node_name.as_str(),
        Command::Record(args) => args.node_name.as_str(),
        _ => "ros2bag_rs",
    };
    match &ros {
        Some(ros) => init_node_logging(cli.log_level, ros),
        None => init_logging(cli.log_level, node),
    }
    warnings.iter().for_each(|w| log::warn!("{w}"));
    let namespace = ros.as_ref().map_or("/", |r| r.namespace.as_str());
    match run(cli.command, namespace) {
        Ok(()) => exit(0),
        Err(e) => fail(e),
    }
}

/// Parses the command line. `--ros-args` (node name, namespace, remaps, rosbag2's node
/// parameters, logging) apply to `play`, `burst` and `record`, as they do to rosbag2's nodes.
fn parse(own: Vec<String>, ros: &RosArgs) -> Result<(Cli, Vec<String>, Option<RosArguments>)> {
    if ros.is_empty() {
        return Ok((Cli::parse_from(own), Vec::new(), None));
    }
    let mut words = own.iter().skip(1);
    let mut verb = None;
    while let Some(word) = words.next() {
        match word.as_str() {
            "--log-level" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => {
                verb = Some(w);
                break;
            }
        }
    }
    let table = match verb {
        Some("play" | "burst") => &PLAY_PARAMETERS,
        Some("record") => &RECORD_PARAMETERS,
        _ => anyhow::bail!("--ros-args apply to play, burst and record only"),
    };
    let resolved = ros.resolve(&own, table)?;
    let (argv, warnings) = command_line(&resolved, own, table)?;
    Ok((Cli::parse_from(argv), warnings, Some(resolved)))
}

fn run(command: Command, namespace: &str) -> Result<()> {
    match command {
        Command::Info(args) => info::run(args),
        Command::Convert(args) => convert::run(*args),
        Command::Cat(args) => cat::run(args),
        Command::Record(args) => run_record(*args, namespace, Vec::new()),
        Command::Play(args) => play::run(*args, namespace),
        Command::Burst(args) => run_burst(&args, namespace),
        Command::List(args) => list::run(&args),
        Command::Control(args) => control::run_control(&args),
        Command::Reindex(args) => reindex::run(&args),
        Command::Export(args) => export::run(*args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Attach(args) => attach::attach(&args),
        Command::Attachments(args) => attach::attachments(&args),
        #[cfg(feature = "zenoh")]
        Command::ZenohRouter => zenoh_router::run_zenoh_router(),
    }
}
