//! `doctor`: a read-only structural check of a bag (MCAP, SQLite3, ROS 1, rosbag2-compressed),
//! telling every problem found instead of stopping at the first:
//!
//! - **CRCs**: MCAP chunk CRCs (chunks failing them or failing to decompress are skipped by the
//!   reader and reported), the data section and summary section CRCs where the writer stored
//!   them; SQLite's `PRAGMA integrity_check`.
//! - **Index vs data**: the file's own index (MCAP summary statistics and chunk indexes, SQLite
//!   topics table, ROS 1 index and chunk infos) against what reading every message gives: counts
//!   per topic, message rows without a topic, an unindexed ROS 1 bag, a hot SQLite write-ahead
//!   log.
//! - **Time ranges**: the index's and `metadata.yaml`'s time ranges against the messages'.
//! - **metadata.yaml vs files**: listed files that are missing, storage files it does not list,
//!   per-file and per-topic counts, totals.
//! - **Definitions**: every topic's definition parses, a recorded RIHS01 type hash is the hash
//!   of the stored definition, and the first messages of each topic decode with it (a
//!   definition that does not match the payloads).
//!
//! What it finds is **damage** (something in the files is lost, broken or disagrees with an
//! index: `reindex` or a re-recording is needed) or a **remark** (the data is intact, but a tool
//! may stumble: no stored definition, a definition that does not decode the payloads, no data
//! section CRC, a time range written loosely). A disagreement between an index or
//! `metadata.yaml` and what reading gave is listed under the damage it follows from (a chunk
//! that fails its CRC makes every count after it disagree), and stands on its own only when
//! nothing explains it.
//!
//! It reuses the readers (strict mode) and the recovery scans of `reindex`; nothing is written.

mod files;
mod payloads;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use rosbag2_rs_codec::Typestore;
use rosbag2_rs_storage::compression::file_mode::uncompressed_name;
use rosbag2_rs_storage::compression::{BagCompression, CompressionMode};
use rosbag2_rs_storage::storage::StorageId;
use rosbag2_rs_storage::storage_files_in;
use rosbag2_rs_storage::{BagMetadata, METADATA_FILENAME};
use rosbag2_rs_storage::{Result, StorageError};

/// What kind of problem `doctor` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProblemKind {
    /// A file that cannot be opened or read to its end.
    Unreadable,
    /// A checksum that does not match (MCAP chunk, data or summary section).
    Crc,
    /// A file's index disagrees with its data, or the index is missing or damaged.
    Index,
    /// Time ranges that disagree.
    Time,
    /// `metadata.yaml` disagrees with the files, or cannot be read.
    Metadata,
    /// A topic's definition is missing, does not parse, or cannot be converted.
    Definition,
    /// Payloads that do not decode with their topic's definition.
    Payload,
}

impl ProblemKind {
    /// How a problem of this kind counts unless it says otherwise: definitions, payloads and
    /// time ranges are remarks (nothing of the data is lost), the rest damage.
    pub fn severity(self) -> Severity {
        match self {
            Self::Definition | Self::Payload | Self::Time => Severity::Remark,
            Self::Unreadable | Self::Crc | Self::Index | Self::Metadata => Severity::Damage,
        }
    }

    /// The kind's name in reports (`crc`, `index`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unreadable => "unreadable",
            Self::Crc => "crc",
            Self::Index => "index",
            Self::Time => "time",
            Self::Metadata => "metadata",
            Self::Definition => "definition",
            Self::Payload => "payload",
        }
    }
}

/// Whether a problem is damage or a remark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Something in the files is lost, broken, or disagrees with an index (`doctor` exits 1).
    Damage,
    /// The data is intact, but a tool may stumble (`doctor` exits 0).
    Remark,
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Its kind.
    pub kind: ProblemKind,
    /// Damage or remark.
    pub severity: Severity,
    /// The file it concerns, if one.
    pub file: Option<PathBuf>,
    /// The topic it concerns, if one.
    pub topic: Option<String>,
    /// What is wrong.
    pub message: String,
    /// A disagreement between what an index, `metadata.yaml` or a section CRC says and what
    /// reading gave: a consequence of damage in the same file (any damage, for the bag's
    /// totals) when there is some, a problem of its own otherwise.
    pub disagreement: bool,
    /// For damage: the disagreements it explains.
    pub consequences: Vec<Problem>,
}

impl Problem {
    fn file(path: &Path, kind: ProblemKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            severity: kind.severity(),
            file: Some(path.to_path_buf()),
            topic: None,
            message: message.into(),
            disagreement: false,
            consequences: Vec::new(),
        }
    }

    fn topic(path: &Path, topic: &str, kind: ProblemKind, message: impl Into<String>) -> Self {
        Self {
            topic: Some(topic.to_string()),
            ..Self::file(path, kind, message)
        }
    }

    fn bag(kind: ProblemKind, topic: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            file: None,
            topic: topic.map(str::to_string),
            ..Self::file(Path::new(""), kind, message)
        }
    }

    /// This problem as a remark.
    fn remark(self) -> Self {
        Self {
            severity: Severity::Remark,
            ..self
        }
    }

    /// This problem as a disagreement between an index, `metadata.yaml` or a section CRC and
    /// the data.
    fn disagreement(self) -> Self {
        Self {
            disagreement: true,
            ..self
        }
    }

    /// Damage that explains disagreements: found in the files, not a disagreement itself.
    fn is_cause(&self) -> bool {
        self.severity == Severity::Damage && !self.disagreement
    }
}

/// Puts each disagreement under the damage it follows from (found in the same file; any, for
/// a disagreement about the whole bag), merges a remark made of several files into one, then
/// lists damage before remarks.
fn arrange(problems: Vec<Problem>) -> Vec<Problem> {
    let (disagreements, found): (Vec<_>, Vec<_>) =
        problems.into_iter().partition(|p| p.disagreement);
    let mut arranged = merge_remarks(found);
    for d in disagreements {
        let same_file = arranged
            .iter()
            .position(|p| p.is_cause() && p.file.is_some() && p.file == d.file);
        let any = || arranged.iter().position(Problem::is_cause);
        match same_file.or_else(|| d.file.is_none().then(any).flatten()) {
            Some(cause) => arranged[cause].consequences.push(d),
            None => arranged.push(d),
        }
    }
    arranged.sort_by_key(|p| p.severity);
    arranged
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.kind.as_str())?;
        if let Some(file) = &self.file {
            write!(f, " {}", file.display())?;
        }
        if let Some(topic) = &self.topic {
            write!(f, " topic '{topic}'")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// What was read of one storage file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFile {
    /// The file.
    pub path: PathBuf,
    /// Its storage, when recognised.
    pub storage: Option<StorageId>,
    /// Messages read from it.
    pub messages: u64,
    /// Receive times (ns) of its first and last message read.
    pub time_range: Option<(i64, i64)>,
}

/// What `doctor` found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DoctorReport {
    /// The bag checked.
    pub bag: PathBuf,
    /// Its storage files, as read.
    pub files: Vec<CheckedFile>,
    /// Messages decoded against their definitions.
    pub decoded_messages: u64,
    /// The problems: damage first (each with the disagreements it explains), then remarks.
    pub problems: Vec<Problem>,
    /// What the check assumed or could not do (a definition taken from the bundled set, ...).
    pub notes: Vec<String>,
}

impl DoctorReport {
    /// True when no damage was found (remarks may have been).
    pub fn is_clean(&self) -> bool {
        self.damage().next().is_none()
    }

    /// The damage found, each with the disagreements it explains.
    pub fn damage(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Damage)
    }

    /// The remarks.
    pub fn remarks(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Remark)
    }

    /// Every problem, consequences included.
    pub fn all_problems(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .flat_map(|p| std::iter::once(p).chain(&p.consequences))
    }
}

/// How thoroughly `doctor` decodes, and with what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoctorOptions {
    /// Messages decoded per topic (from its first); `usize::MAX` decodes every message.
    pub samples_per_topic: usize,
    /// The ROS 2 distribution whose definitions decode topics the bag stores none for (else
    /// the bundled and installed ones).
    pub typestore: Option<Typestore>,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        Self {
            samples_per_topic: 5,
            typestore: None,
        }
    }
}

/// The storage files of a bag directory and its metadata, with the problems found locating them.
struct Located {
    files: Vec<PathBuf>,
    metadata: Option<BagMetadata>,
    compression: Option<BagCompression>,
}

fn locate(bag: &Path, problems: &mut Vec<Problem>) -> Result<Located> {
    if bag.is_file() {
        return Ok(Located {
            files: vec![bag.to_path_buf()],
            metadata: None,
            compression: None,
        });
    }
    if !bag.is_dir() {
        return Err(StorageError::io(
            bag,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such bag"),
        ));
    }
    let present = storage_files_in(bag)?;
    let metadata_path = bag.join(METADATA_FILENAME);
    if !metadata_path.exists() {
        problems.push(Problem::file(
            &metadata_path,
            ProblemKind::Metadata,
            "missing (`reindex` writes one from the files)",
        ));
        if present.is_empty() {
            problems.push(Problem::file(
                bag,
                ProblemKind::Unreadable,
                "no .mcap, .db3 or compressed storage file",
            ));
        }
        return Ok(Located {
            files: present,
            metadata: None,
            compression: None,
        });
    }
    let metadata = match BagMetadata::read_from_dir(bag) {
        Ok(m) => m,
        Err(e) => {
            problems.push(Problem::file(
                &metadata_path,
                ProblemKind::Metadata,
                e.to_string(),
            ));
            return Ok(Located {
                files: present,
                metadata: None,
                compression: None,
            });
        }
    };
    let compression =
        BagCompression::from_metadata(&metadata, &metadata_path).unwrap_or_else(|e| {
            problems.push(Problem::file(
                &metadata_path,
                ProblemKind::Metadata,
                e.to_string(),
            ));
            None
        });
    let mut files = Vec::new();
    for relative in &metadata.relative_file_paths {
        let direct = bag.join(relative);
        let by_name = Path::new(relative).file_name().map(|n| bag.join(n));
        match (direct.is_file(), by_name) {
            (true, _) => files.push(direct),
            (false, Some(p)) if p.is_file() => files.push(p),
            _ => problems.push(Problem::file(
                &metadata_path,
                ProblemKind::Metadata,
                format!("lists '{relative}', which does not exist"),
            )),
        }
    }
    for file in &present {
        if !files.contains(file) {
            problems.push(Problem::file(
                file,
                ProblemKind::Metadata,
                format!("a storage file {METADATA_FILENAME} does not list"),
            ));
        }
    }
    Ok(Located {
        files,
        metadata: Some(metadata),
        compression,
    })
}

/// The same remark made of several files (no data section CRC in each file of a split bag) as
/// one remark naming them.
fn merge_remarks(problems: Vec<Problem>) -> Vec<Problem> {
    let mut merged: Vec<(Problem, Vec<PathBuf>)> = Vec::new();
    for p in problems {
        let same = merged.iter_mut().find(|(q, _)| {
            p.severity == Severity::Remark
                && (q.severity, q.kind, &q.topic, &q.message)
                    == (p.severity, p.kind, &p.topic, &p.message)
        });
        match same {
            Some((_, files)) => files.extend(p.file),
            None => {
                let files = p.file.iter().cloned().collect();
                merged.push((p, files));
            }
        }
    }
    merged
        .into_iter()
        .map(|(p, files)| match files.len() {
            0 | 1 => p,
            n => {
                let names: Vec<String> = files
                    .iter()
                    .map(|f| {
                        f.file_name()
                            .unwrap_or(f.as_os_str())
                            .to_string_lossy()
                            .into()
                    })
                    .collect();
                Problem {
                    file: None,
                    message: format!("{} ({n} files: {})", p.message, names.join(", ")),
                    ..p
                }
            }
        })
        .collect()
}

/// Compares `metadata.yaml` with what the files hold.
fn check_metadata(
    metadata: &BagMetadata,
    scanned: &[(PathBuf, files::FileScan)],
    problems: &mut Vec<Problem>,
) {
    let mut found = Vec::new();
    let name_of = |p: &Path| {
        p.file_name()
            .map(|n| uncompressed_name(&n.to_string_lossy()).to_string())
            .unwrap_or_default()
    };
    for info in &metadata.files {
        let listed = name_of(Path::new(&info.path));
        let Some((path, scan)) = scanned.iter().find(|(p, _)| name_of(p) == listed) else {
            continue;
        };
        let read: u64 = scan.counts.values().sum();
        if read != info.message_count {
            found.push(Problem::file(
                path,
                ProblemKind::Metadata,
                format!(
                    "{METADATA_FILENAME} counts {} messages in it, reading gave {read}",
                    info.message_count
                ),
            ));
        }
        if let Some((first, last)) = scan.time_range {
            let listed = (info.starting_time, info.end_time());
            if listed != (first, last) {
                found.push(Problem::file(
                    path,
                    ProblemKind::Time,
                    format!(
                        "{METADATA_FILENAME} gives it the time range {} to {} ns, its messages \
                         span {first} to {last} ns",
                        listed.0, listed.1
                    ),
                ));
            }
        }
    }
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, scan) in scanned {
        for (topic, n) in &scan.counts {
            *counts.entry(topic).or_default() += n;
        }
    }
    for topic in &metadata.topics_with_message_count {
        let name = topic.topic_metadata.name.as_str();
        let read = counts.get(name).copied().unwrap_or(0);
        if read != topic.message_count {
            found.push(Problem::bag(
                ProblemKind::Metadata,
                Some(name),
                format!(
                    "{METADATA_FILENAME} counts {} messages, the files hold {read}",
                    topic.message_count
                ),
            ));
        }
    }
    for (name, n) in &counts {
        if metadata.topic(name).is_none() {
            found.push(Problem::bag(
                ProblemKind::Metadata,
                Some(name),
                format!("{n} messages on a topic {METADATA_FILENAME} does not list"),
            ));
        }
    }
    let total: u64 = counts.values().sum();
    if total != metadata.message_count {
        found.push(Problem::bag(
            ProblemKind::Metadata,
            None,
            format!(
                "{METADATA_FILENAME} counts {} messages in all, the files hold {total}",
                metadata.message_count
            ),
        ));
    }
    let range = scanned
        .iter()
        .filter_map(|(_, s)| s.time_range)
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
    if let Some((first, last)) = range {
        if (metadata.starting_time, metadata.end_time()) != (first, last) {
            found.push(Problem::bag(
                ProblemKind::Time,
                None,
                format!(
                    "{METADATA_FILENAME} gives the time range {} to {} ns, the messages span \
                     {first} to {last} ns",
                    metadata.starting_time,
                    metadata.end_time()
                ),
            ));
        }
    }
    problems.extend(found.into_iter().map(Problem::disagreement));
}

/// Checks `bag` (a bag directory or a single storage file) without changing it. An error is
/// returned only when there is no bag at `path`; everything else wrong is a [`Problem`].
pub fn doctor(bag: &Path, options: &DoctorOptions) -> Result<DoctorReport> {
    let mut report = DoctorReport {
        bag: bag.to_path_buf(),
        ..DoctorReport::default()
    };
    let problems = &mut report.problems;
    let located = locate(bag, problems)?;
    let message_compression = located
        .compression
        .filter(|c| c.mode == CompressionMode::Message)
        .map(|c| c.format);
    let mut scanned = Vec::new();
    let mut topics: Vec<(String, String)> = Vec::new();
    let mut payloads = payloads::PayloadCheck::new(options.samples_per_topic, options.typestore);
    for path in &located.files {
        let result = files::check_file(path, message_compression, &mut payloads, problems);
        let storage = StorageId::detect(path).ok();
        let Some((scan, reader)) = result else {
            report.files.push(CheckedFile {
                path: path.clone(),
                storage,
                messages: 0,
                time_range: None,
            });
            continue;
        };
        for topic in reader.topics() {
            let t = &topic.topic_metadata;
            match topics.iter().find(|(name, _)| *name == t.name) {
                Some((_, type_name)) if *type_name != t.type_name => problems.push(Problem::topic(
                    path,
                    &t.name,
                    ProblemKind::Index,
                    format!("type '{}' here, '{type_name}' in another file", t.type_name),
                )),
                Some(_) => {}
                None => topics.push((t.name.clone(), t.type_name.clone())),
            }
        }
        report.files.push(CheckedFile {
            path: path.clone(),
            storage,
            messages: scan.counts.values().sum(),
            time_range: scan.time_range,
        });
        scanned.push((path.clone(), scan));
    }
    if let Some(metadata) = &located.metadata {
        check_metadata(metadata, &scanned, problems);
    }
    report.decoded_messages = payloads.finish(&mut report.problems, &mut report.notes);
    report.problems = arrange(std::mem::take(&mut report.problems));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_print_kind_file_and_topic() {
        let p = Problem::topic(Path::new("a.mcap"), "/x", ProblemKind::Crc, "bad");
        assert_eq!(p.to_string(), "[crc] a.mcap topic '/x': bad");
        let p = Problem::bag(ProblemKind::Time, None, "off");
        assert_eq!(p.to_string(), "[time]: off");
    }

    #[test]
    fn footer_crcs_of_a_written_file_check_and_flipped_bytes_fail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.mcap");
        let mut writer = mcap::Writer::new(std::io::BufWriter::new(
            std::fs::File::create(&path).unwrap(),
        ))
        .unwrap();
        let channel = writer
            .add_channel(0, "/t", "cdr", &Default::default())
            .unwrap();
        for i in 0..10u64 {
            writer
                .write_to_known_channel(
                    &mcap::records::MessageHeader {
                        channel_id: channel,
                        sequence: i as u32,
                        log_time: i,
                        publish_time: i,
                    },
                    &[0, 1, 0, 0, i as u8],
                )
                .unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        let mut data = std::fs::read(&path).unwrap();
        let mut problems = Vec::new();
        files::mcap_section_crcs(&path, &data, &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        // A byte of the summary section (the statistics record sits there).
        let len = data.len();
        data[len - 60] ^= 0xff;
        files::mcap_section_crcs(&path, &data, &mut problems);
        assert!(
            problems
                .iter()
                .any(|p| p.message.contains("summary section CRC")),
            "{problems:?}"
        );
    }
}
