//! `ros2bag-rs`: a `ros2 bag`-style command line for rosbag2-rs.

#![forbid(unsafe_code)]

mod attach;
mod cat;
mod convert_yaml;
mod doctor;
mod export;
mod info;
mod progress;
mod time_format;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use rosbag2_rs_storage::{BagWriterOptions, StorageId};
use rosbag2_rs_tools::{ConvertFilters, ConvertOptions};
use rosbag2_rs_transport::cli::{
    fail, init_logging, parse_level, run_burst, run_control, run_play, run_record, split_ros_args,
    BurstArgs, ControlArgs, InputArgs, PlayArgs, RecordArgs, RosArgs, TopicArgs, WriterArgs,
    PLAY_PARAMETERS, RECORD_PARAMETERS,
};

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

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum InfoFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Print a bag's files, size, duration, time range and topics (like `ros2 bag info`).
    Info(InfoArgs),
    /// Merge bags and rewrite them with another storage, compression, selection or time range.
    Convert(Box<ConvertArgs>),
    /// Print messages decoded, in receive-time order: YAML like `ros2 topic echo`, JSON lines
    /// for scripts, or the payload in hex.
    Cat {
        /// Bags (directories, .mcap/.db3/.bag files), merged in time order.
        #[arg(required = true)]
        bags: Vec<PathBuf>,
        /// Only these topics.
        #[arg(long, num_args = 1..)]
        topics: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "yaml")]
        format: cat::CatFormat,
        /// Print every element of long arrays (they are summarised otherwise).
        #[arg(long)]
        full: bool,
        /// From this time: seconds since the epoch, or `+S` seconds after the bag start.
        #[arg(long, allow_hyphen_values = true)]
        start: Option<String>,
        /// Up to this time: seconds since the epoch, or `+S` seconds after the bag start.
        #[arg(long, allow_hyphen_values = true)]
        end: Option<String>,
        /// Print at most this many messages.
        #[arg(short = 'n', long)]
        limit: Option<u64>,
        /// Message definitions of this ROS 2 distribution (humble, iron, jazzy, kilted) for
        /// bags that store none (recorded before Iron).
        #[arg(long, value_parser = parse_typestore)]
        typestore: Option<rosbag2_rs_codec::Typestore>,
    },
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
    List {
        /// Which kind of plugin.
        #[arg(value_enum)]
        plugin_type: PluginType,
        /// Also say what each one is.
        #[arg(short, long)]
        verbose: bool,
    },
    /// Ask a running player to pause, resume, change rate, seek, ...; or a running recorder to
    /// write a snapshot, split, change its snapshot buffer limits or clear it.
    Control(ControlArgs),
    /// Rebuild a bag's metadata.yaml from its files, recovering what a killed recorder left:
    /// prints per file what was recovered and what was lost.
    Reindex {
        /// Bag directory, or a ROS 1 .bag file (rewritten in place with a fresh index when its
        /// index is missing or damaged).
        bag: PathBuf,
        /// Storage of the bag's files (mcap, sqlite3): checked against the files.
        #[arg(short, long)]
        storage: Option<String>,
        /// Write a repaired copy here (a new directory, or a .bag file for a ROS 1 bag) and
        /// leave the input untouched, instead of repairing in place.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
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

/// The plugin kinds of `ros2 bag list`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PluginType {
    Storage,
    Converter,
    Compressor,
    Decompressor,
}

impl PluginType {
    /// The built-in plugins of this kind, with what they are.
    fn plugins(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Storage => &[
                ("mcap", "MCAP files (.mcap), read and written"),
                ("sqlite3", "SQLite3 databases (.db3), read and written"),
                (
                    "rosbag_v2",
                    "ROS 1 bags (.bag), read and written, converted to and from CDR",
                ),
            ],
            Self::Converter => &[("cdr", "CDR, the serialization of every ROS 2 middleware")],
            Self::Compressor | Self::Decompressor => &[(
                "zstd",
                "Zstandard, for rosbag2's file and message compression (--compression-mode)",
            )],
        }
    }
}

#[derive(clap::Args)]
struct InfoArgs {
    /// Bag directory or single .mcap/.db3/.bag file.
    bag: PathBuf,
    /// Storage of the bag (mcap, sqlite3, rosbag_v2): checked against the files, which are
    /// detected from their contents without it.
    #[arg(short, long)]
    storage: Option<String>,
    /// Only print the topic names.
    #[arg(short = 't', long)]
    topic_name: bool,
    /// Also print each topic's and service's share of the bag's bytes, its type hash, and its
    /// message rate, spread of inter-arrival times and largest gap (reads every message).
    #[arg(short, long)]
    verbose: bool,
    /// Print the message definitions the bag stores instead.
    #[arg(long)]
    schemas: bool,
    /// Order of topics and services.
    #[arg(long, value_enum, default_value = "name")]
    sort: info::SortBy,
    /// Print times in UTC instead of local time.
    #[arg(long)]
    utc: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: InfoFormat,
    /// With --schemas: for types the bag stores no definition of (bags recorded before Iron),
    /// print this ROS 2 distribution's (humble, iron, jazzy, kilted).
    #[arg(long, value_parser = parse_typestore)]
    typestore: Option<rosbag2_rs_codec::Typestore>,
}

#[derive(clap::Args)]
struct ConvertArgs {
    /// The input bags, merged in receive-time order.
    #[command(flatten)]
    input: InputArgs,
    /// Output bag directory, or .bag file for rosbag_v2 (must not exist); or, as for
    /// `ros2 bag convert -o`, a YAML file of output bags (`output_bags: [{uri: ..., ...}]`).
    #[arg(short, long)]
    output: PathBuf,
    /// The output's storage, compression and splitting.
    #[command(flatten)]
    writer: WriterArgs,
    /// The topics to keep.
    #[command(flatten)]
    topics: TopicArgs,
    /// Leave out topics whose type cannot be converted (with a warning) instead of failing.
    #[arg(long)]
    skip_unknown: bool,
    /// Copy a RealSense recording's own topics instead of writing the realsense2_camera layout.
    #[arg(long)]
    raw: bool,
    /// Keep messages from this time: seconds since the epoch, or `+S` seconds after the bag start.
    #[arg(long, allow_hyphen_values = true)]
    start: Option<String>,
    /// Keep messages up to this time: seconds since the epoch, or `+S` seconds after the bag start.
    #[arg(long, allow_hyphen_values = true)]
    end: Option<String>,
    /// Keep a topic's messages only where a condition on their fields holds:
    /// `'/odom: pose.pose.position.x > 3 and child_frame_id == "base"'` (comparisons, and/or/not,
    /// numbers, strings, field paths with `[i]` indexes; see README). Repeatable; topics without a
    /// clause are not filtered.
    #[arg(long = "where", value_name = "TOPIC: EXPR", allow_hyphen_values = true)]
    where_clauses: Vec<String>,
    /// Also keep the latest message of these topics from before --start, at its original time.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    last_per_topic_before_start: Vec<String>,
    /// Message definitions of this ROS 2 distribution (humble, iron, jazzy, kilted) for inputs
    /// that store none (bags recorded before Iron); written into the output.
    #[arg(long, value_parser = parse_typestore)]
    typestore: Option<rosbag2_rs_codec::Typestore>,
    /// Write a topic under another name: `/a:=/b`; or a type, with the same definition:
    /// `old_pkg/msg/T:=new_pkg/msg/T`. Repeatable.
    #[arg(long, value_name = "FROM:=TO")]
    rename: Vec<String>,
}

fn main() {
    let (own, ros) = split_ros_args(std::env::args());
    let (cli, warnings) = parse(own, &ros).unwrap_or_else(|e| fail(e));
    let node = match &cli.command {
        Command::Play(args) => args.node_name.as_str(),
        Command::Burst(args) => args.play.node_name.as_str(),
        Command::Record(args) => args.node_name.as_str(),
        _ => "ros2bag_rs",
    };
    init_logging(cli.log_level, node);
    warnings.iter().for_each(|w| log::warn!("{w}"));
    if let Err(e) = run(cli.command, ros.namespace.as_deref().unwrap_or("/")) {
        fail(e);
    }
}

/// Parses the command line. `--ros-args` (node name, namespace, remaps, rosbag2's node
/// parameters) apply to `play`, `burst` and `record`, as they do to rosbag2's nodes.
fn parse(own: Vec<String>, ros: &RosArgs) -> Result<(Cli, Vec<String>)> {
    if *ros == RosArgs::default() {
        return Ok((Cli::parse_from(own), Vec::new()));
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
    let (argv, warnings) = ros.command_line(own, table)?;
    Ok((Cli::parse_from(argv), warnings))
}

fn run(command: Command, namespace: &str) -> Result<()> {
    match command {
        Command::Info(args) => {
            let text = args.format == InfoFormat::Text;
            let summary = info::BagSummary::load(
                &args.bag,
                args.storage.as_deref(),
                args.verbose && !args.topic_name,
                args.typestore,
            )?;
            if args.topic_name && args.verbose {
                log::warn!("-t and -v together: -t is ignored");
            }
            if args.schemas {
                print!("{}", summary.schemas_text());
            } else if text {
                print!(
                    "{}",
                    summary.to_text(&info::TextOptions {
                        topic_names_only: args.topic_name && !args.verbose,
                        sort: args.sort,
                        utc: args.utc,
                    })
                );
            } else {
                println!("{}", serde_json::to_string_pretty(&summary.to_json())?)
            }
        }
        Command::Convert(args)
            if (args.writer.storage == "realsense"
                || convert_yaml::is_options_file(&args.output))
                && args.has_message_filters() =>
        {
            anyhow::bail!(
                "--where, --last-per-topic-before-start and --rename write one rosbag2 or ROS 1 \
                 bag: not a RealSense recording, nor the bags of an options file"
            )
        }
        Command::Convert(args) if args.writer.storage == "realsense" => {
            convert_to_realsense(*args)?
        }
        Command::Convert(args) if convert_yaml::is_options_file(&args.output) => {
            let inputs = args.input.resolve(None)?;
            for mut options in convert_yaml::read(&args.output, &inputs)? {
                options.typestore = args.typestore;
                let progress =
                    progress::ConvertProgress::start(&options.inputs, &options.output.uri);
                let metadata = rosbag2_rs_tools::convert(&options);
                drop(progress);
                let metadata = metadata?;
                println!(
                    "wrote {} messages on {} topics to {}",
                    metadata.message_count,
                    metadata.topics_with_message_count.len(),
                    options.output.uri.display()
                );
            }
        }
        Command::Convert(args) => {
            let raw = args.raw;
            let filters = convert_filters(&args)?;
            let filtered = args.has_message_filters();
            let options = convert_options(*args)?;
            // A RealSense recording becomes a rosbag2 bag in the realsense2_camera layout,
            // unless its own topics are asked for (--raw, or a ROS 1 bag as output).
            let to_ros1 = options.output.storage.storage == StorageId::Rosbag1;
            let metadata = match options.inputs.as_slice() {
                [input] if !raw && !to_ros1 && realsense_bag_rs::is_recording(input) => {
                    anyhow::ensure!(
                        !filtered,
                        "--where, --last-per-topic-before-start and --rename apply to the \
                         recording's own topics: add --raw"
                    );
                    realsense_bag_rs::bridge::convert(input, options.output)?
                }
                _ => {
                    let progress =
                        progress::ConvertProgress::start(&options.inputs, &options.output.uri);
                    let metadata = rosbag2_rs_tools::convert_filtered(&options, &filters);
                    drop(progress);
                    metadata?
                }
            };
            println!(
                "wrote {} messages on {} topics",
                metadata.message_count,
                metadata.topics_with_message_count.len()
            );
        }
        Command::Cat {
            bags,
            topics,
            format,
            full,
            start,
            end,
            limit,
            typestore,
        } => {
            let bag_start = relative_base(&bags, [&start, &end])?;
            let time =
                |t: &Option<String>| t.as_deref().map(|s| parse_time(s, bag_start)).transpose();
            cat::run(&cat::CatOptions {
                start: time(&start)?,
                end: time(&end)?,
                bags,
                topics,
                format,
                full,
                limit,
                typestore,
            })?
        }
        Command::Record(args) => run_record(*args, namespace)?,
        Command::Play(mut args) => {
            // A RealSense recording plays in the realsense2_camera layout, converted first.
            let converted = realsense_input(&args.input.bags)?;
            if let Some(dir) = &converted {
                args.input.bags = vec![dir.path().join("bag")];
            }
            run_play(&args, namespace)?
        }
        Command::Burst(args) => run_burst(&args, namespace)?,
        Command::Control(args) => run_control(&args)?,
        #[cfg(feature = "zenoh")]
        Command::ZenohRouter => rosbag2_rs_transport::cli::run_zenoh_router()?,
        Command::List {
            plugin_type,
            verbose,
        } => {
            for (name, what) in plugin_type.plugins() {
                if verbose {
                    println!("{name}: {what}");
                } else {
                    println!("{name}");
                }
            }
        }
        Command::Export(args) => {
            let bag_start = relative_base(&args.bags, [&args.start, &args.end])?;
            let time =
                |t: &Option<String>| t.as_deref().map(|s| parse_time(s, bag_start)).transpose();
            let (start, end) = (time(&args.start)?, time(&args.end)?);
            export::run(*args, start, end)?
        }
        Command::Attach(args) => attach::attach(&args)?,
        Command::Attachments(args) => attach::attachments(&args)?,
        Command::Doctor(args) => {
            if !doctor::run(&args)? {
                std::process::exit(1);
            }
        }
        Command::Reindex {
            bag,
            storage,
            output,
        } => {
            if let Some(id) = storage {
                rosbag2_rs_storage::Bag::locate(&bag)?.check_storage(StorageId::parse(&id)?)?;
            }
            let report = match &output {
                Some(output) => rosbag2_rs_storage::reindex_to(&bag, output)?,
                None => rosbag2_rs_storage::reindex(&bag)?,
            };
            for file in &report.files {
                println!("{file}");
            }
            println!(
                "reindexed {}: {} files, {} messages",
                output.as_ref().unwrap_or(&bag).display(),
                report.metadata.files.len(),
                report.metadata.message_count
            );
        }
    }
    Ok(())
}

/// `convert -s realsense`: a RealSense recording copied as it is (cut to `--start`/`--end`, its
/// streams selected by the topic options, in another chunk compression, or in the other layout:
/// an output ending in `.db3` is SDK 2.58's rosbag2 file); ROS 2 camera topics turned into a
/// recording the SDK plays.
fn convert_to_realsense(args: ConvertArgs) -> Result<()> {
    let compression = rosbag2_rs_storage::rosbag1::Compression::parse(
        args.writer.compression_format.as_deref().unwrap_or("lz4"),
    )
    .map_err(anyhow::Error::msg)?;
    anyhow::ensure!(
        compression != rosbag2_rs_storage::rosbag1::Compression::Bz2,
        "--compression-format bz2: the RealSense SDK reads only none and lz4 chunks"
    );
    anyhow::ensure!(
        !realsense_bag_rs::is_db3_path(&args.output) || args.writer.compression_format.is_none(),
        "{}: --compression-format applies to a .bag; the SDK's .db3 layout compresses each image \
         (PNG, zstd) and has no chunks",
        args.output.display()
    );
    let inputs = args.input.resolve(None)?;
    let recording = match inputs.as_slice() {
        [input] if realsense_bag_rs::is_recording(input) => Some(input.clone()),
        _ => None,
    };
    let Some(input) = recording else {
        anyhow::ensure!(
            args.start.is_none() && args.end.is_none() && args.topics.filter()?.is_all(),
            "--start, --end and topic selection apply to a RealSense recording as input only"
        );
        let frames = realsense_bag_rs::bridge::from_ros2(&inputs, &args.output, compression)?;
        println!("wrote {frames} frames to {}", args.output.display());
        return Ok(());
    };
    let bag_start = relative_base(&inputs, [&args.start, &args.end])?;
    let time = |t: &Option<String>| t.as_deref().map(|s| parse_time(s, bag_start)).transpose();
    let options = realsense_bag_rs::CopyOptions {
        start_ns: time(&args.start)?,
        end_ns: time(&args.end)?,
        topics: args.topics.filter()?,
        compression,
    };
    let report = realsense_bag_rs::copy_recording(&input, &args.output, &options)?;
    for stream in &report.dropped_streams {
        log::info!("{stream}: not selected, left out");
    }
    if report.frames == 0 {
        log::warn!(
            "{}: no frame in the selected time window and streams: the copy holds the device \
             description only",
            input.display()
        );
    }
    println!(
        "wrote {} frames ({} messages) to {}",
        report.frames,
        report.messages,
        args.output.display()
    );
    Ok(())
}

/// When the only input is a RealSense recording, its realsense2_camera-layout conversion in a
/// temporary directory (removed when dropped).
fn realsense_input(bags: &[PathBuf]) -> Result<Option<TempDir>> {
    let [input] = bags else {
        return Ok(None);
    };
    if !realsense_bag_rs::is_recording(input) {
        return Ok(None);
    }
    let dir = TempDir::new()?;
    log::info!(
        "{}: a RealSense recording; converting it to the realsense2_camera layout first",
        input.display()
    );
    realsense_bag_rs::bridge::convert(
        input,
        BagWriterOptions {
            uri: dir.path().join("bag"),
            ..Default::default()
        },
    )?;
    Ok(Some(dir))
}

/// A directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!("ros2bag-rs-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(Self(path))
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Parses `--typestore`.
fn parse_typestore(name: &str) -> Result<rosbag2_rs_codec::Typestore> {
    Ok(rosbag2_rs_codec::Typestore::parse(name)?)
}

/// The bag start (ns) when a `+S` time needs it, else 0.
fn relative_base(bags: &[PathBuf], times: [&Option<String>; 2]) -> Result<i64> {
    Ok(
        if times
            .iter()
            .any(|t| t.as_deref().is_some_and(|s| s.starts_with('+')))
        {
            rosbag2_rs_storage::SequentialReader::open_many(bags)?.start_time()
        } else {
            0
        },
    )
}

/// Parses `--start`/`--end`: absolute epoch seconds, or `+S` relative to `bag_start` (ns).
fn parse_time(text: &str, bag_start: i64) -> Result<i64> {
    let (relative, number) = match text.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let ns = match exact_nanos(number) {
        Some(ns) => ns,
        None => {
            let seconds: f64 = number
                .parse()
                .with_context(|| format!("invalid time '{text}': expected seconds"))?;
            anyhow::ensure!(
                seconds.is_finite() && seconds >= 0.0,
                "invalid time '{text}': must be a non-negative number of seconds"
            );
            rosbag2_rs_transport::cli::seconds(seconds, "time")?.as_nanos()
        }
    };
    Ok(if relative {
        bag_start.saturating_add(ns)
    } else {
        ns
    })
}

/// Decimal seconds (`1764271584.123456789`) as exact nanoseconds (an `f64` keeps only about
/// 16 digits: epoch times would move by up to a few hundred ns); `None` for any other form
/// (exponents, signs) or beyond 9 decimals or `i64`.
fn exact_nanos(number: &str) -> Option<i64> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 9 {
        return None;
    }
    let fraction: i64 = format!("{fraction:0<9}").parse().ok()?;
    whole
        .parse::<i64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(fraction)
}

impl ConvertArgs {
    /// Whether `--where`, `--last-per-topic-before-start` or `--rename` is given.
    fn has_message_filters(&self) -> bool {
        !self.where_clauses.is_empty()
            || !self.last_per_topic_before_start.is_empty()
            || !self.rename.is_empty()
    }
}

/// `--where`, `--last-per-topic-before-start` and `--rename` of `convert`.
fn convert_filters(args: &ConvertArgs) -> Result<ConvertFilters> {
    let where_clauses = args
        .where_clauses
        .iter()
        .map(|c| rosbag2_rs_tools::expr::split_clause(c))
        .collect::<Result<Vec<_>, _>>()?;
    let rename = args
        .rename
        .iter()
        .map(|r| {
            let (from, to) = r
                .split_once(":=")
                .with_context(|| format!("--rename '{r}': expected FROM:=TO"))?;
            anyhow::ensure!(
                !from.is_empty() && !to.is_empty(),
                "--rename '{r}': expected FROM:=TO"
            );
            Ok((from.to_string(), to.to_string()))
        })
        .collect::<Result<Vec<_>>>()?;
    // A topic name starts with '/', a type name (pkg/msg/Type) does not.
    let (rename, rename_types) = rename
        .into_iter()
        .partition(|(from, _)| from.starts_with('/'));
    Ok(ConvertFilters {
        where_clauses,
        last_before_start: args.last_per_topic_before_start.clone(),
        rename,
        rename_types,
    })
}

fn convert_options(args: ConvertArgs) -> Result<ConvertOptions> {
    let inputs = args.input.resolve(None)?;
    let bag_start = relative_base(&inputs, [&args.start, &args.end])?;
    let time = |t: &Option<String>| t.as_deref().map(|s| parse_time(s, bag_start)).transpose();
    Ok(ConvertOptions {
        output: args.writer.options(args.output.clone())?,
        filter: args.topics.filter()?,
        start: time(&args.start)?,
        end: time(&args.end)?,
        skip_unknown: args.skip_unknown,
        typestore: args.typestore,
        inputs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_absolute_and_relative() {
        assert_eq!(parse_time("1.5", 100).unwrap(), 1_500_000_000);
        assert_eq!(parse_time("+2", 100).unwrap(), 2_000_000_100);
        assert!(parse_time("-1", 0).is_err());
        assert!(parse_time("soon", 0).is_err());
        assert!(parse_time("nan", 0).is_err());
        // Epoch times to the nanosecond (an f64 would give ...123456768).
        assert_eq!(
            parse_time("1764271584.123456789", 0).unwrap(),
            1_764_271_584_123_456_789
        );
        assert_eq!(parse_time("+0.000000001", 5).unwrap(), 6);
        assert_eq!(parse_time("2.", 0).unwrap(), 2_000_000_000);
        assert_eq!(parse_time("1e3", 0).unwrap(), 1_000_000_000_000);
        assert!(parse_time(".5", 0).unwrap() == 500_000_000);
    }
}
