//! What recovering one storage file gave back and what it could not.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::StorageError;
use crate::formats::StorageId;

/// What was done to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryAction {
    /// The file was intact; only its statistics were read.
    Intact,
    /// SQLite's write-ahead log left by a killed writer was applied to the database.
    WalApplied,
    /// The file was rewritten from the parts that could still be read.
    Rewritten,
    /// The file cannot be read at all (empty, foreign, unreadable): it was left as it is and
    /// out of the bag's metadata.
    Unreadable,
}

/// What a damaged file lost. Counts are `None` where the file holds nothing to count them by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loss {
    /// Bytes of the file in damaged parts (a record cut by the end of the file, chunks or pages
    /// that failed their checks), whether or not something was salvaged from them.
    pub damaged_bytes: u64,
    /// Bytes the damaged parts announce (a cut record's length, the database's page count) that
    /// are not on disk at all.
    pub missing_bytes: u64,
    /// Uncompressed record bytes of the damaged parts that were not recovered, when knowable.
    pub unrecovered_bytes: Option<u64>,
    /// Messages known to be lost, when knowable; `None` when the damaged part does not say.
    pub messages: Option<u64>,
    /// Receive times (ns, inclusive) between which the lost messages lie, when knowable.
    pub time_range: Option<(i64, i64)>,
}

impl Loss {
    /// True when nothing is known to be damaged or lost.
    pub fn is_empty(&self) -> bool {
        self.damaged_bytes == 0
            && self.missing_bytes == 0
            && self.unrecovered_bytes.unwrap_or(0) == 0
            && self.messages.unwrap_or(0) == 0
    }

    /// Widens the lost time range by `[a, b]`.
    pub fn add_time_range(&mut self, a: i64, b: i64) {
        self.time_range = Some(match self.time_range {
            Some((x, y)) => (x.min(a), y.max(b)),
            None => (a.min(b), a.max(b)),
        });
    }

    /// Adds `n` lost messages (`None`: an unknown number, which makes the total unknown).
    pub fn add_messages(&mut self, n: Option<u64>, first: bool) {
        self.messages = match (first, self.messages, n) {
            (true, _, n) => n,
            (false, Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
}

/// The outcome of recovering (or checking) one storage file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRecovery {
    /// The storage file.
    pub path: PathBuf,
    /// Its format.
    pub storage: StorageId,
    /// What was done to it.
    pub action: RecoveryAction,
    /// Messages the file holds after recovery.
    pub messages: u64,
    /// Payload bytes of those messages.
    pub message_bytes: u64,
    /// Receive times (ns) of the first and the last of them.
    pub time_range: Option<(i64, i64)>,
    /// Of those messages, how many came from a part that a plain reader cannot read (a cut
    /// chunk's readable prefix, orphaned database pages).
    pub salvaged_messages: u64,
    /// What could not be recovered.
    pub lost: Loss,
    /// Details worth telling the user (what was cut, what was skipped and why).
    pub notes: Vec<String>,
}

impl FileRecovery {
    /// An intact file's entry.
    pub fn intact(path: PathBuf, storage: StorageId) -> Self {
        Self {
            path,
            storage,
            action: RecoveryAction::Intact,
            messages: 0,
            message_bytes: 0,
            time_range: None,
            salvaged_messages: 0,
            lost: Loss::default(),
            notes: Vec::new(),
        }
    }

    /// The entry of a file that cannot be read at all, with the reason as its note.
    pub fn unreadable(path: &Path, error: &StorageError) -> Self {
        let storage = match path.extension().and_then(|e| e.to_str()) {
            Some("db3") => StorageId::Sqlite3,
            Some("bag") => StorageId::Rosbag1,
            _ => StorageId::Mcap,
        };
        let mut report = Self::intact(path.to_path_buf(), storage);
        report.action = RecoveryAction::Unreadable;
        report.lost.damaged_bytes = std::fs::metadata(path).map_or(0, |m| m.len());
        report
            .notes
            .push(format!("left out of metadata.yaml: {error}"));
        report
    }

    /// Counts one recovered message.
    pub fn add_message(&mut self, time: i64, bytes: usize) {
        self.messages += 1;
        self.message_bytes += bytes as u64;
        self.time_range = Some(match self.time_range {
            Some((a, b)) => (a.min(time), b.max(time)),
            None => (time, time),
        });
    }
}

/// Formats nanoseconds since the epoch as seconds with nine decimals.
fn seconds(ns: i64) -> String {
    format!(
        "{}{}.{:09}",
        if ns < 0 { "-" } else { "" },
        ns.unsigned_abs() / 1_000_000_000,
        ns.unsigned_abs() % 1_000_000_000
    )
}

impl fmt::Display for FileRecovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let action = match self.action {
            RecoveryAction::Intact => "intact",
            RecoveryAction::WalApplied => "write-ahead log applied",
            RecoveryAction::Rewritten => "repaired",
            RecoveryAction::Unreadable => "unreadable",
        };
        write!(
            f,
            "{} ({}, {action}): {} messages",
            self.path.display(),
            self.storage.as_str(),
            self.messages,
        )?;
        if self.action != RecoveryAction::Intact || self.message_bytes > 0 {
            write!(f, ", {} bytes", self.message_bytes)?;
        }
        if let Some((a, b)) = self.time_range {
            write!(
                f,
                ", {} s to {} s ({:.3} s)",
                seconds(a),
                seconds(b),
                (b - a) as f64 / 1e9
            )?;
        }
        if self.salvaged_messages > 0 {
            write!(
                f,
                "; {} of them salvaged from the damaged part",
                self.salvaged_messages
            )?;
        }
        if !self.lost.is_empty() {
            write!(
                f,
                "\n  damaged: {} bytes on disk, {} bytes missing",
                self.lost.damaged_bytes, self.lost.missing_bytes
            )?;
            if let Some(n) = self.lost.unrecovered_bytes {
                write!(f, "; lost: {n} bytes of records")?;
            } else {
                write!(f, "; lost: an unknown number of bytes")?;
            }
            match self.lost.messages {
                Some(n) => write!(f, ", {n} messages")?,
                None => write!(f, ", an unknown number of messages")?,
            }
            if let Some((a, b)) = self.lost.time_range {
                write!(
                    f,
                    " received within {} s to {} s ({:.3} s)",
                    seconds(a),
                    seconds(b),
                    (b - a) as f64 / 1e9
                )?;
            }
        }
        for note in &self.notes {
            write!(f, "\n  {note}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_prints_what_was_lost() {
        let mut r = FileRecovery::intact("a.mcap".into(), StorageId::Mcap);
        r.add_message(1_500_000_000, 10);
        r.add_message(2_000_000_000, 5);
        assert_eq!(r.time_range, Some((1_500_000_000, 2_000_000_000)));
        assert!(!r.to_string().contains("lost"));
        r.lost.damaged_bytes = 7;
        r.lost.add_time_range(3_000_000_001, 2_000_000_000);
        let text = r.to_string();
        assert!(text.contains("2 messages, 15 bytes"), "{text}");
        assert!(text.contains("unknown number of messages"), "{text}");
        assert!(text.contains("3.000000001 s"), "{text}");
        assert_eq!(seconds(-1), "-0.000000001");
    }
}
