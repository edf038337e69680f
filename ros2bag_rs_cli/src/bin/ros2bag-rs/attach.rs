//! `attach` and `attachments`: files (calibrations, URDFs, configurations) carried in an MCAP
//! bag as MCAP attachments, added to a finished bag and listed or extracted.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rosbag2_rs_storage::{Attachment, McapExtras};

use crate::time_format;

/// `ros2bag-rs attach`.
#[derive(clap::Args)]
pub struct AttachArgs {
    /// The bag (directory or .mcap file); the attachments go into its first file.
    pub bag: PathBuf,
    /// The files to attach.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The attachment's name (one file only); default: the file's name.
    #[arg(long)]
    pub name: Option<String>,
    /// The attachment's media type; default: guessed from the file's extension
    /// (application/octet-stream when unknown).
    #[arg(long)]
    pub media_type: Option<String>,
}

/// `ros2bag-rs attachments`.
#[derive(clap::Args)]
pub struct AttachmentsArgs {
    /// The bag (directory or .mcap file).
    pub bag: PathBuf,
    /// Write each attachment to this directory (created if needed) under the last component
    /// of its name (`calib/left.yaml` as `left.yaml`); existing files are not overwritten.
    #[arg(long, value_name = "DIR")]
    pub extract: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Nanoseconds since the epoch of a system time (0 before the epoch).
fn epoch_ns(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64)
}

/// Adds the files to the bag; prints what was attached where.
pub fn attach(args: &AttachArgs) -> Result<()> {
    anyhow::ensure!(
        args.name.is_none() || args.files.len() == 1,
        "--name names one attachment: give one file"
    );
    let now = epoch_ns(std::time::SystemTime::now());
    let mut attachments = Vec::new();
    for file in &args.files {
        let data = std::fs::read(file).with_context(|| format!("{}", file.display()))?;
        let modified = std::fs::metadata(file)
            .and_then(|m| m.modified())
            .map_or(now, epoch_ns);
        let name = match &args.name {
            Some(name) => name.clone(),
            None => file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .with_context(|| format!("{}: not a file name", file.display()))?,
        };
        attachments.push(Attachment {
            name,
            media_type: args.media_type.clone().unwrap_or_else(|| {
                rosbag2_rs_storage::storage::mcap_extras::guess_media_type(file).to_string()
            }),
            log_time: now,
            create_time: modified,
            data: data.into(),
        });
    }
    let file = rosbag2_rs_storage::attach_to_bag(&args.bag, &attachments)?;
    for a in &attachments {
        println!(
            "attached {} ({}, {}) to {}",
            a.name,
            a.media_type,
            time_format::size(a.data.len() as u64),
            file.display()
        );
    }
    Ok(())
}

/// The name an attachment is extracted under: its last path component, never `..` or empty.
fn safe_name(name: &str, index: usize) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    match last {
        "" | "." | ".." => format!("attachment_{index}"),
        other => other.to_string(),
    }
}

/// Lists (and extracts) the bag's attachments.
pub fn attachments(args: &AttachmentsArgs) -> Result<()> {
    let files = rosbag2_rs_storage::bag_extras(&args.bag, true)?;
    let all: Vec<(&Path, &Attachment)> = files
        .iter()
        .flat_map(|(file, extras): &(PathBuf, McapExtras)| {
            extras.attachments.iter().map(move |a| (file.as_path(), a))
        })
        .collect();
    if args.json {
        let list: Vec<_> = all
            .iter()
            .map(|(file, a)| {
                serde_json::json!({
                    "name": a.name, "media_type": a.media_type, "size": a.data.len(),
                    "log_time_ns": a.log_time, "create_time_ns": a.create_time,
                    "file": file.display().to_string(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else if all.is_empty() {
        println!("(no attachments)");
    } else {
        for (file, a) in &all {
            println!("{}", line(a, file));
        }
    }
    if let Some(dir) = &args.extract {
        std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
        let mut used = std::collections::HashSet::new();
        for (i, (_, a)) in all.iter().enumerate() {
            let mut name = safe_name(&a.name, i);
            if !used.insert(name.clone()) {
                name = format!("{name}.{i}");
                used.insert(name.clone());
            }
            let target = dir.join(&name);
            std::fs::File::options()
                .write(true)
                .create_new(true)
                .open(&target)
                .and_then(|mut f| std::io::Write::write_all(&mut f, &a.data))
                .with_context(|| format!("{}: not extracted", target.display()))?;
            eprintln!("extracted {}", target.display());
        }
    }
    Ok(())
}

/// One attachment's line: name, size, media type, log time, file.
pub fn line(a: &Attachment, file: &Path) -> String {
    format!(
        "{} | {} B | {} | log time {} | {}",
        a.name,
        a.data.len(),
        a.media_type,
        time_format::timestamp(a.log_time.min(i64::MAX as u64) as i64, true),
        file.file_name().map_or_else(
            || file.display().to_string(),
            |n| n.to_string_lossy().into()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracted_names_stay_inside_the_directory() {
        assert_eq!(safe_name("calib/left.yaml", 0), "left.yaml");
        assert_eq!(safe_name("../../etc/passwd", 1), "passwd");
        assert_eq!(safe_name("..", 2), "attachment_2");
        assert_eq!(safe_name("", 3), "attachment_3");
        assert_eq!(safe_name("a\\b.txt", 4), "b.txt");
    }
}
