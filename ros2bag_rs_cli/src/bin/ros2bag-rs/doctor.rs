//! `doctor`: prints what [`rosbag2_rs_tools::doctor()`] found, as text or JSON.

use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;
use rosbag2_rs_codec::Typestore;
use rosbag2_rs_tools::{DoctorOptions, DoctorReport, Problem};

/// Output format of `doctor`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DoctorFormat {
    /// A line per damage (its consequences indented under it), per remark and per note, then
    /// a verdict.
    Text,
    /// One JSON object: files, damage (with consequences), remarks, notes, verdict.
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
    /// Decode topics the bag stores no definition for with this ROS 2 distribution's
    /// definitions (humble, iron, jazzy, kilted), as `cat` and `play` would.
    #[arg(long, value_parser = rosbag2_rs_codec::Typestore::parse)]
    typestore: Option<Typestore>,
}

/// Runs the check and prints the report; exits with status 1 when the bag is damaged (remarks
/// alone leave it clean).
pub fn run(args: &DoctorArgs) -> Result<()> {
    let options = DoctorOptions {
        samples_per_topic: if args.decode_all {
            usize::MAX
        } else {
            args.samples
        },
        typestore: args.typestore,
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
    for damage in report.damage() {
        out.push_str(&format!("DAMAGE {damage}\n"));
        for consequence in &damage.consequences {
            out.push_str(&format!("    so: {consequence}\n"));
        }
    }
    for remark in report.remarks() {
        out.push_str(&format!("remark {remark}\n"));
    }
    for note in &report.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    let messages: u64 = report.files.iter().map(|f| f.messages).sum();
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let causes = report.damage().count();
    let consequences: usize = report.damage().map(|d| d.consequences.len()).sum();
    let remarks = count(report.remarks().count(), "remark");
    let verdict = match causes {
        0 => format!("clean ({remarks}"),
        _ => format!(
            "DAMAGED ({} with {}; {remarks}",
            count(causes, "cause"),
            count(consequences, "consequence")
        ),
    };
    out.push_str(&format!(
        "{}: {verdict}; {} files, {messages} messages read, {} decoded)\n",
        report.bag.display(),
        report.files.len(),
        report.decoded_messages,
    ));
    out
}

fn problem_json(p: &Problem) -> serde_json::Value {
    serde_json::json!({
        "kind": p.kind.as_str(),
        "file": p.file.as_ref().map(|f| f.display().to_string()),
        "topic": p.topic,
        "message": p.message,
        "consequences": p.consequences.iter().map(problem_json).collect::<Vec<_>>(),
    })
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
        "damage": report.damage().map(problem_json).collect::<Vec<_>>(),
        "remarks": report.remarks().map(problem_json).collect::<Vec<_>>(),
        "notes": report.notes,
    })
}
