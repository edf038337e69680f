//! `convert`: merge bags and rewrite them with another storage, compression, selection or time
//! range; RealSense recordings in and out.

use std::path::PathBuf;

use anyhow::{Context, Result};
use rosbag2_rs_storage::{InputBag, StorageId};
use rosbag2_rs_tools::flags::{InputArgs, TopicArgs, WriterArgs};
use rosbag2_rs_tools::{ConvertFilters, ConvertOptions};

use crate::times::time_range;
use crate::{convert_yaml, progress};

/// `convert`'s flags.
#[derive(clap::Args)]
pub struct ConvertArgs {
    /// The input bags, merged in receive-time order.
    #[command(flatten)]
    input: InputArgs,
    /// More input bags from a YAML file, as rosbag2 Lyrical's `convert --input-options` reads
    /// it: `input_bags: [{uri: ..., storage_id: ..., storage_config_uri: ..., start_time_ns:
    /// ..., end_time_ns: ...}]` (rosbag2 refuses it together with -i; taken here, after them).
    #[arg(long, value_name = "FILE.yaml")]
    input_options: Option<PathBuf>,
    /// Output bag directory, or .bag file for rosbag_v2 (must not exist); or, as for
    /// `ros2 bag convert -o/--output-options`, a YAML file of output bags
    /// (`output_bags: [{uri: ..., ...}]`).
    #[arg(short, long, alias = "output-options")]
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
    /// numbers, strings, field paths with `[i]` indexes; see docs/bags.md). Repeatable; topics without a
    /// clause are not filtered.
    #[arg(long = "where", value_name = "TOPIC: EXPR", allow_hyphen_values = true)]
    where_clauses: Vec<String>,
    /// Also keep the latest message of these topics from before --start, at its original time.
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    last_per_topic_before_start: Vec<String>,
    /// Message definitions of this ROS 2 distribution (humble, iron, jazzy, kilted) for inputs
    /// that store none (bags recorded before Iron); written into the output.
    #[arg(long, value_parser = rosbag2_rs_codec::Typestore::parse)]
    typestore: Option<rosbag2_rs_codec::Typestore>,
    /// Write a topic under another name: `/a:=/b`; or a type, with the same definition:
    /// `old_pkg/msg/T:=new_pkg/msg/T`. Repeatable.
    #[arg(long, value_name = "FROM:=TO")]
    rename: Vec<String>,
}

impl ConvertArgs {
    /// The input bags: the positional and `-i` ones, then those of `--input-options` (each with
    /// its window and reading settings).
    fn inputs(&self) -> Result<Vec<InputBag>> {
        let more = match &self.input_options {
            Some(file) => convert_yaml::read_inputs(file)?,
            None => Vec::new(),
        };
        let checked: Vec<(PathBuf, Option<StorageId>)> = more
            .iter()
            .map(|(bag, id)| (bag.path.clone(), *id))
            .collect();
        let paths = self.input.resolve_with(None, &checked)?;
        let given = paths.len() - more.len();
        Ok(paths
            .into_iter()
            .take(given)
            .map(InputBag::from)
            .chain(more.into_iter().map(|(bag, _)| bag))
            .collect())
    }

    /// The input bags' paths, for what reads them whole (a RealSense recording, the time range
    /// of `--start`/`--end`, the progress): an input read in part is refused by `what`.
    fn input_paths(&self, what: &str) -> Result<Vec<PathBuf>> {
        self.inputs()?
            .into_iter()
            .map(|bag| {
                anyhow::ensure!(
                    bag.start.is_none() && bag.end.is_none(),
                    "{}: start_time_ns and end_time_ns of --input-options do not apply to {what}",
                    bag.path.display()
                );
                Ok(bag.path)
            })
            .collect()
    }
}

/// Runs `convert`: one rosbag2 or ROS 1 bag, the bags of an options file, or a RealSense
/// recording (in either direction).
pub fn run(args: ConvertArgs) -> Result<()> {
    let to_realsense = args.writer.storage == "realsense";
    let options_file = convert_yaml::is_options_file(&args.output);
    anyhow::ensure!(
        !(to_realsense || options_file) || !args.has_message_filters(),
        "--where, --last-per-topic-before-start and --rename write one rosbag2 or ROS 1 bag: not \
         a RealSense recording, nor the bags of an options file"
    );
    if to_realsense {
        convert_to_realsense(args)
    } else if options_file {
        convert_options_file(&args)
    } else {
        convert_one(args)
    }
}

/// `convert -o options.yaml`: every output bag the file describes.
fn convert_options_file(args: &ConvertArgs) -> Result<()> {
    let inputs = args.inputs()?;
    for mut options in convert_yaml::read(&args.output, &inputs)? {
        options.typestore = args.typestore;
        let paths: Vec<PathBuf> = options.inputs.iter().map(|b| b.path.clone()).collect();
        let progress = progress::ConvertProgress::start(&paths, &options.output.uri);
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
    Ok(())
}

/// `convert -o BAG`: one output bag.
fn convert_one(args: ConvertArgs) -> Result<()> {
    let raw = args.raw;
    let filters = convert_filters(&args)?;
    let filtered = args.has_message_filters();
    let options = convert_options(args)?;
    // A RealSense recording becomes a rosbag2 bag in the realsense2_camera layout,
    // unless its own topics are asked for (--raw, or a ROS 1 bag as output).
    let to_ros1 = options.output.storage.storage == StorageId::Rosbag1;
    let metadata = match options.inputs.as_slice() {
        [input] if !raw && !to_ros1 && realsense_bag_rs::is_recording(&input.path) => {
            anyhow::ensure!(
                !filtered,
                "--where, --last-per-topic-before-start and --rename apply to the recording's \
                 own topics: add --raw"
            );
            realsense_bag_rs::bridge::convert(&input.path, options.output)?
        }
        _ => {
            let paths: Vec<PathBuf> = options.inputs.iter().map(|b| b.path.clone()).collect();
            let progress = progress::ConvertProgress::start(&paths, &options.output.uri);
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
    Ok(())
}

/// `convert -s realsense`: a RealSense recording copied as it is (cut to `--start`/`--end`, its
/// streams selected by the topic options, in another chunk compression, or in the other layout:
/// an output ending in `.db3` is SDK 2.58's rosbag2 file); ROS 2 camera topics turned into a
/// recording the SDK plays.
fn convert_to_realsense(args: ConvertArgs) -> Result<()> {
    let compression = args
        .writer
        .compression_format
        .unwrap_or(rosbag2_rs_storage::CompressionFormat::Lz4)
        .check_in(
            realsense_bag_rs::CHUNK_COMPRESSIONS,
            "RealSense chunk compression",
        )?;
    anyhow::ensure!(
        !realsense_bag_rs::is_db3_path(&args.output) || args.writer.compression_format.is_none(),
        "{}: --compression-format applies to a .bag; the SDK's .db3 layout compresses each image \
         (PNG, zstd) and has no chunks",
        args.output.display()
    );
    let inputs = args.input_paths("a RealSense output")?;
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
    let (start_ns, end_ns) = time_range(&inputs, &args.start, &args.end)?;
    let options = realsense_bag_rs::CopyOptions {
        start_ns,
        end_ns,
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
    let inputs = args.inputs()?;
    let (start, end) = match (&args.start, &args.end) {
        (None, None) => (None, None),
        _ => time_range(
            &args.input_paths("--start and --end")?,
            &args.start,
            &args.end,
        )?,
    };
    Ok(ConvertOptions {
        output: args.writer.options(args.output.clone())?,
        filter: args.topics.filter()?,
        start,
        end,
        skip_unknown: args.skip_unknown,
        typestore: args.typestore,
        inputs,
        ..ConvertOptions::default()
    })
}
