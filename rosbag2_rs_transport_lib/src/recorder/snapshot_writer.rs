//! Writes snapshots on a thread of their own, each to a new bag named from the output prefix
//! and the local time of the write, never overwriting an existing directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use rosbag2_rs_storage::{BagWriter, BagWriterOptions};

use super::error::{RecorderError, Result};
use super::snapshot::{into_messages, Selection, Taken};
use super::stats::RecordedTopic;

/// One snapshot to write.
pub(crate) struct SnapshotJob {
    /// The buffers' content.
    pub taken: Taken,
    /// Which of it to write.
    pub selection: Selection,
    /// The bag to write; `None`: the timestamped default name.
    pub dir: Option<std::path::PathBuf>,
    /// Every recorded topic (all are created in the bag, with or without messages).
    pub topics: Vec<RecordedTopic>,
    /// The recording's loss and silence counts at the trigger, added to `custom_data`.
    pub health: std::collections::BTreeMap<String, String>,
    /// Where to report the bag written (or the error).
    pub reply: Option<Sender<Result<PathBuf>>>,
}

/// The snapshot writer thread.
pub(crate) struct SnapshotWriter {
    jobs: Option<Sender<SnapshotJob>>,
    thread: Option<JoinHandle<SnapshotOutcome>>,
}

impl SnapshotWriter {
    /// Starts the thread; `template` gives the storage options and the name prefix (`uri`).
    pub fn spawn(template: BagWriterOptions) -> Result<Self> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let thread = std::thread::Builder::new()
            .name("rosbag2_snapshot".into())
            .spawn(move || run(template, rx))
            .map_err(|source| RecorderError::Spawn {
                what: "snapshot writer",
                source,
            })?;
        Ok(Self {
            jobs: Some(tx),
            thread: Some(thread),
        })
    }

    /// A handle to queue jobs.
    pub fn sender(&self) -> Option<Sender<SnapshotJob>> {
        self.jobs.clone()
    }

    /// Waits for queued snapshots and returns what was written and what failed.
    pub fn finish(mut self) -> SnapshotOutcome {
        self.jobs = None;
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for SnapshotWriter {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the snapshot writer did.
#[derive(Debug, Default)]
pub(crate) struct SnapshotOutcome {
    /// Every bag written, in order.
    pub written: Vec<PathBuf>,
    /// Why each failed snapshot failed.
    pub failed: Vec<String>,
}

fn run(template: BagWriterOptions, jobs: Receiver<SnapshotJob>) -> SnapshotOutcome {
    let mut outcome = SnapshotOutcome::default();
    for mut job in jobs {
        let reply = job.reply.take();
        let result = write_snapshot(&template, job);
        match &result {
            Ok(path) => {
                log::info!("snapshot written to {}", path.display());
                outcome.written.push(path.clone());
            }
            Err(e) => {
                let why = crate::error_chain::Chain(&e).to_string();
                log::error!("snapshot failed: {why}");
                outcome.failed.push(why);
            }
        }
        if let Some(reply) = reply {
            let _ = reply.send(result);
        }
    }
    outcome
}

/// Why a snapshot of `needed` bytes could not be written next to `prefix` now, if it could
/// not: the directory is missing or not writable, or has less free space than the buffers
/// hold. Checked before the buffers are taken, so that a refused snapshot loses nothing.
pub(crate) fn check_output(prefix: &Path, needed: u64) -> Result<()> {
    let dir = match prefix.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let refuse = |why: String| Err(RecorderError::SnapshotOutput(why));
    if !dir.is_dir() {
        return refuse(format!("{} is not a directory", dir.display()));
    }
    let probe = dir.join(format!(".rosbag2_rs_probe_{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
        }
        Err(e) => return refuse(format!("cannot write in {}: {e}", dir.display())),
    }
    if let Some(free) = rosbag2_rs_storage::free_space(&dir) {
        if free < needed {
            return refuse(format!(
                "{} has {free} bytes free, the buffers hold {needed}",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// `YYYYMMDD-HHMMSS` of the current local time.
fn local_stamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as libc::time_t;
    // SAFETY: tm is plain data, for which all zeros is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads `now` and writes into `tm`, both ours.
    unsafe { libc::localtime_r(&now, &mut tm) };
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// `<prefix>_<YYYYMMDD-HHMMSS>` (local time, as rosbag2 names snapshots), with `-N` appended
/// while that exists.
pub(crate) fn snapshot_dir(prefix: &Path) -> PathBuf {
    let stamp = local_stamp();
    let base = format!("{}_{stamp}", prefix.display());
    let mut dir = PathBuf::from(&base);
    let mut n = 1;
    while dir.exists() {
        dir = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    dir
}

fn write_snapshot(template: &BagWriterOptions, job: SnapshotJob) -> Result<PathBuf> {
    let (messages, counts) = into_messages(job.taken, &job.selection);
    let dir = job.dir.unwrap_or_else(|| snapshot_dir(&template.uri));
    let topics: Vec<&RecordedTopic> = job
        .topics
        .iter()
        .filter(|t| {
            job.selection.topics.is_empty() || job.selection.topics.contains(&t.metadata.name)
        })
        .collect();
    let result = (|| -> Result<()> {
        let mut options = BagWriterOptions {
            uri: dir.clone(),
            ..template.clone()
        };
        options.custom_data.extend(job.health);
        let mut writer = BagWriter::create(options)?;
        for topic in topics {
            writer.create_topic(&topic.metadata, topic.definition.clone())?;
        }
        for message in &messages {
            writer.write(message)?;
        }
        writer.close()?;
        Ok(())
    })();
    for (counters, written, outside) in counts {
        let counter = match result {
            Ok(()) => &counters.written,
            // Not written: a loss, unlike eviction.
            Err(_) => &counters.lost_in_failed_snapshots,
        };
        counter.fetch_add(written, Ordering::Relaxed);
        // Outside the requested window: taken out of the buffers but not asked for.
        counters.evicted.fetch_add(outside, Ordering::Relaxed);
    }
    result.map(|()| dir)
}
