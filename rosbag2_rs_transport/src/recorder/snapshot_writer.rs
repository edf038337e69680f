//! Writes snapshots on a thread of their own, each to a new bag named from the output prefix
//! and the local time of the write, never overwriting an existing directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use rosbag2_rs_storage::{BagWriter, BagWriterOptions};

use super::error::{RecorderError, Result};
use super::snapshot::{into_messages, Taken};
use super::stats::{RecordedTopic, TopicCounters};

/// One snapshot to write.
pub(crate) struct SnapshotJob {
    /// The buffers' content.
    pub taken: Taken,
    /// Every recorded topic (all are created in the bag, with or without messages).
    pub topics: Vec<RecordedTopic>,
    /// Where to report the bag written (or the error).
    pub reply: Option<Sender<Result<PathBuf>>>,
}

/// The snapshot writer thread.
pub(crate) struct SnapshotWriter {
    jobs: Option<Sender<SnapshotJob>>,
    thread: Option<JoinHandle<Vec<PathBuf>>>,
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

    /// Waits for queued snapshots and returns every bag written.
    pub fn finish(mut self) -> Vec<PathBuf> {
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

fn run(template: BagWriterOptions, jobs: Receiver<SnapshotJob>) -> Vec<PathBuf> {
    let mut written = Vec::new();
    for job in jobs {
        let result = write_snapshot(&template, job.taken, &job.topics);
        match &result {
            Ok(path) => {
                log::info!("snapshot written to {}", path.display());
                written.push(path.clone());
            }
            Err(e) => log::error!("snapshot failed: {}", crate::error_chain::Chain(&e)),
        }
        if let Some(reply) = job.reply {
            let _ = reply.send(result);
        }
    }
    written
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

fn write_snapshot(
    template: &BagWriterOptions,
    taken: Taken,
    topics: &[RecordedTopic],
) -> Result<PathBuf> {
    let counts: Vec<(std::sync::Arc<TopicCounters>, u64)> = taken
        .iter()
        .map(|(_, c, q)| (c.clone(), q.len() as u64))
        .collect();
    let messages = into_messages(taken);
    let dir = snapshot_dir(&template.uri);
    let result = (|| -> Result<()> {
        let mut writer = BagWriter::create(BagWriterOptions {
            uri: dir.clone(),
            ..template.clone()
        })?;
        for topic in topics {
            writer.create_topic(&topic.metadata, None)?;
        }
        for message in &messages {
            writer.write(message)?;
        }
        writer.close()?;
        Ok(())
    })();
    for (counters, n) in counts {
        let counter = match result {
            Ok(()) => &counters.written,
            // Not written: a loss, unlike eviction.
            Err(_) => &counters.dropped,
        };
        counter.fetch_add(n, Ordering::Relaxed);
    }
    result.map(|()| dir)
}
