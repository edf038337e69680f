//! `ros2bag-rs`: a `ros2 bag`-style command line for rosbag2-rs. One module per verb. The file
//! tools need no middleware; with the `transport` feature, `play`, `burst` and `record` run the
//! node front of the `player` and `recorder` nodes (package `rosbag2_rs_transport`), and
//! `control` calls their services.

#![forbid(unsafe_code)]

mod attach;
mod cat;
#[cfg(feature = "transport")]
mod control;
mod convert;
mod convert_yaml;
mod doctor;
mod export;
#[cfg(not(feature = "transport"))]
mod files_only;
mod info;
mod list;
#[cfg(feature = "transport")]
mod nodes;
#[cfg(feature = "transport")]
mod play;
mod progress;
mod reindex;
mod time_format;
mod times;
#[cfg(feature = "zenoh")]
mod zenoh_router;

use anyhow::Result;
use clap::{Parser, Subcommand};
#[cfg(not(feature = "transport"))]
use files_only::{exit, fail, parse_and_init_logging, Node};
#[cfg(feature = "transport")]
use nodes::{exit, fail, parse_and_init_logging, Node};
use rosbag2_rs_tools::console::parse_level;
#[cfg(feature = "transport")]
use rosbag2_rs_transport::{run_burst, run_record, BurstArgs, PlayArgs, RecordArgs};

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
    #[cfg(feature = "transport")]
    #[command(args_override_self = true)]
    Record(Box<RecordArgs>),
    /// Play bags onto the ROS 2 graph with time control (like `ros2 bag play`).
    #[cfg(feature = "transport")]
    #[command(args_override_self = true)]
    Play(Box<PlayArgs>),
    /// Publish a bag's messages as fast as possible, then exit (like `ros2 bag burst`).
    #[cfg(feature = "transport")]
    #[command(args_override_self = true)]
    Burst(Box<BurstArgs>),
    /// The storage, converter and compression plugins built in (like `ros2 bag list`).
    List(list::ListArgs),
    /// Ask a running player to pause, resume, change rate, seek, ...; or a running recorder to
    /// write a snapshot, split, change its snapshot buffer limits or clear it.
    #[cfg(feature = "transport")]
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
    /// A verb this build lacks (`play`, `record`, ... without the `transport` feature).
    #[cfg(not(feature = "transport"))]
    #[command(external_subcommand)]
    Missing(Vec<String>),
}

fn main() {
    let (cli, node) = parse_and_init_logging();
    match run(cli.command, node) {
        Ok(()) => exit(0),
        Err(e) => fail(e),
    }
}

/// Runs the verb; `play`, `burst` and `record` as `node`.
fn run(
    command: Command,
    #[cfg_attr(not(feature = "transport"), allow(unused_variables))] node: Node,
) -> Result<()> {
    match command {
        Command::Info(args) => info::run(args),
        Command::Convert(args) => convert::run(*args),
        Command::Cat(args) => cat::run(args),
        #[cfg(feature = "transport")]
        Command::Record(args) => run_record(*args, &node.namespace, node.parameters),
        #[cfg(feature = "transport")]
        Command::Play(args) => play::run(*args, &node.namespace, node.parameters),
        #[cfg(feature = "transport")]
        Command::Burst(args) => run_burst(&args, &node.namespace, node.parameters),
        Command::List(args) => list::run(&args),
        #[cfg(feature = "transport")]
        Command::Control(args) => control::run_control(&args),
        Command::Reindex(args) => reindex::run(&args),
        Command::Export(args) => export::run(*args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Attach(args) => attach::attach(&args),
        Command::Attachments(args) => attach::attachments(&args),
        #[cfg(feature = "zenoh")]
        Command::ZenohRouter => zenoh_router::run_zenoh_router(),
        #[cfg(not(feature = "transport"))]
        Command::Missing(words) => files_only::missing(&words),
    }
}
