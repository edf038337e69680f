//! `reindex`: rebuild a bag's metadata.yaml from its files, recovering what a killed recorder
//! left, and print per file what was recovered and what was lost.

use std::path::PathBuf;

use anyhow::Result;
use rosbag2_rs_storage::{Bag, StorageId};

/// `reindex`'s flags.
#[derive(clap::Args)]
pub struct ReindexArgs {
    /// Bag directory, or a ROS 1 .bag file (rewritten in place with a fresh index when its
    /// index is missing or damaged).
    pub bag: PathBuf,
    /// Storage of the bag's files (mcap, sqlite3): checked against the files.
    #[arg(short, long)]
    pub storage: Option<StorageId>,
    /// Write a repaired copy here (a new directory, or a .bag file for a ROS 1 bag) and
    /// leave the input untouched, instead of repairing in place.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// Runs `reindex`.
pub fn run(args: &ReindexArgs) -> Result<()> {
    if let Some(id) = args.storage {
        Bag::locate(&args.bag)?.check_storage(id)?;
    }
    let report = match &args.output {
        Some(output) => rosbag2_rs_storage::reindex_to(&args.bag, output)?,
        None => rosbag2_rs_storage::reindex(&args.bag)?,
    };
    for file in &report.files {
        println!("{file}");
    }
    println!(
        "reindexed {}: {} files, {} messages",
        args.output.as_ref().unwrap_or(&args.bag).display(),
        report.metadata.files.len(),
        report.metadata.message_count
    );
    Ok(())
}
