//! `doctor`: prints what [`rosbag2_rs_tools::doctor()`] found, as text or JSON.

use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;
use rosbag2_rs_tools::{DoctorOptions, DoctorReport};

/// Output format of `doctor`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DoctorFormat {
    /// A line per problem, then a verdict.
    Text,
    /// One JSON object: files, problems, notes, verdict.
    Json,
}

/// `doctor`'s arguments.
#[derive(clap::Args)]
pub struct DoctorArgs {
    /// Bag directory, or a single .mcap/.db3/.bag file (compressed .zstd too).
    bag: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: DoctorFormat,
    /// Messages decoded per topic against its definition (from the first).
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Decode every message against its definition (slower).
    #[arg(long)]
    decode_all: bool,
}

/// Runs the check and prints the report; exits with status 1 when the bag is not clean.
pub fn run(args: &DoctorArgs) -> Result<()> {
    let options = DoctorOptions {
        samples_per_topic: if args.decode_all {
            usize::MAX
        } else {
            args.samples
        },
    };
    let report = rosbag2_rs_tools::doctor(&args.bag, &options)?;
    match args.format {
        DoctorFormat::Text => print!("{}", to_text(&report)),
        DoctorFormat::Json => println!("{}", serde_json::to_string_pretty(&to_json(&report))?),
    }
    if !report.is_clean() {
        std::process::exit(1);
    }
    Ok(())
}

fn to_text(report: &DoctorReport) -> String {
    let mut out = String::new();
    for problem in &report.problems {
        out.push_str(&format!("{problem}\n"));
    }
    for note in &report.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    let messages: u64 = report.files.iter().map(|f| f.messages).sum();
    out.push_str(&format!(
        "{}: {} ({} files, {messages} messages read, {} decoded, {} problems)\n",
        report.bag.display(),
        if report.is_clean() {
            "clean"
        } else {
            "PROBLEMS"
        },
        report.files.len(),
        report.decoded_messages,
        report.problems.len()
    ));
    out
}

fn to_json(report: &DoctorReport) -> serde_json::Value {
    use serde_json::json;
    json!({
        "bag": report.bag.display().to_string(),
        "clean": report.is_clean(),
        "files": report.files.iter().map(|f| json!({
            "path": f.path.display().to_string(),
            "storage": f.storage.map(|s| s.as_str()),
            "messages": f.messages,
            "time_range": f.time_range.map(|(a, b)| [a, b]),
        })).collect::<Vec<_>>(),
        "decoded_messages": report.decoded_messages,
        "problems": report.problems.iter().map(|p| json!({
            "kind": p.kind.as_str(),
            "file": p.file.as_ref().map(|f| f.display().to_string()),
            "topic": p.topic,
            "message": p.message,
        })).collect::<Vec<_>>(),
        "notes": report.notes,
    })
}
