//! `export`: a topic as image files (and a video) or as CSV, through
//! [`rosbag2_rs_tools::export`].

use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;
use rosbag2_rs_tools::export::{export, ExportKind, ExportOptions};

/// What `export` writes.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportAs {
    /// Images for Image and CompressedImage topics, CSV for the others.
    Auto,
    /// PNG/JPEG files with an index.csv.
    Images,
    /// One CSV file, fields flattened to columns.
    Csv,
}

/// `export`'s arguments.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Bags (directories, .mcap/.db3/.bag files), merged in time order.
    #[arg(required = true)]
    pub bags: Vec<PathBuf>,
    /// The topic to export.
    #[arg(long)]
    pub topic: String,
    /// Output directory (created; must be empty if it exists).
    #[arg(short, long)]
    pub output: PathBuf,
    /// What to write.
    #[arg(long = "as", value_enum, default_value = "auto")]
    pub kind: ExportAs,
    /// CSV columns to keep, as dotted field paths (a path keeps everything under it).
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub fields: Vec<String>,
    /// Also encode the frames into this video file with ffmpeg (H.264).
    #[arg(long)]
    pub video: Option<PathBuf>,
    /// From this time: seconds since the epoch, or `+S` seconds after the bag start.
    #[arg(long, allow_hyphen_values = true)]
    pub start: Option<String>,
    /// Up to this time: seconds since the epoch, or `+S` seconds after the bag start.
    #[arg(long, allow_hyphen_values = true)]
    pub end: Option<String>,
    /// Message definitions of this ROS 2 distribution (humble, iron, jazzy, kilted) for bags
    /// that store none (recorded before Iron).
    #[arg(long, value_parser = rosbag2_rs_codec::Typestore::parse)]
    pub typestore: Option<rosbag2_rs_codec::Typestore>,
}

/// Runs the export and says what it wrote.
pub fn run(args: ExportArgs) -> Result<()> {
    let (start, end) = crate::times::time_range(&args.bags, &args.start, &args.end)?;
    let report = export(&ExportOptions {
        inputs: args.bags,
        topic: args.topic.clone(),
        output: args.output.clone(),
        kind: match args.kind {
            ExportAs::Auto => ExportKind::Auto,
            ExportAs::Images => ExportKind::Images,
            ExportAs::Csv => ExportKind::Csv,
        },
        fields: args.fields,
        start,
        end,
        video: args.video,
        typestore: args.typestore,
    })?;
    if report.skipped > 0 {
        log::warn!(
            "{} messages left out; the first: {}",
            report.skipped,
            report.first_skip_reason.as_deref().unwrap_or("?")
        );
    }
    println!(
        "exported {} messages of {} to {}{}{}",
        report.messages,
        args.topic,
        args.output.display(),
        report
            .index
            .map(|i| format!(" (index {})", i.display()))
            .unwrap_or_default(),
        report
            .video
            .map(|v| format!(", video {}", v.display()))
            .unwrap_or_default()
    );
    Ok(())
}
