//! The per-file checks of `doctor`: what each storage format can tell about its own integrity
//! (MCAP section CRCs and chunk checks, SQLite's integrity check and orphan rows, ROS 1 index
//! and chunks), and one full read of the file counting what it holds.

use std::collections::BTreeMap;
use std::path::Path;

use super::payloads::PayloadCheck;
use super::{Problem, ProblemKind};
use rosbag2_rs_storage::compression::message_mode::DecompressingReader;
use rosbag2_rs_storage::compression::CompressionFormat;
use rosbag2_rs_storage::storage::mcap_reader::McapReader;
use rosbag2_rs_storage::storage::{open_reader, OpenMode, StorageReader};

/// What one full read of a storage file found.
#[derive(Debug, Default)]
pub(super) struct FileScan {
    /// Messages read per topic.
    pub counts: BTreeMap<String, u64>,
    /// Receive times of the first and last message read.
    pub time_range: Option<(i64, i64)>,
}

impl FileScan {
    fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// The problems of the MCAP file `data` that its footer and data end records tell: the summary
/// section's CRC and the data section's CRC, where the writer stored them (0: not stored).
/// Returns whether the data section CRC was stored.
pub(super) fn mcap_section_crcs(path: &Path, data: &[u8], problems: &mut Vec<Problem>) -> bool {
    use rosbag2_rs_storage::storage::mcap_records::{sections, McapFormatError};
    let sections = match sections(data) {
        Ok(sections) => sections,
        // A missing footer is reported by opening the file.
        Err(McapFormatError::NoFooter) => return false,
        Err(e) => {
            problems.push(Problem::file(path, ProblemKind::Index, e.to_string()));
            return false;
        }
    };
    if let (Some(range), stored @ 1..) = (sections.summary_crc_range(), sections.summary_crc) {
        let actual = crc32fast::hash(&data[range]);
        if actual != stored {
            problems.push(Problem::file(
                path,
                ProblemKind::Crc,
                format!(
                    "summary section CRC mismatch: stored {stored:#010x}, computed {actual:#010x}"
                ),
            ));
        }
    }
    let stored = sections.data_crc;
    if stored != 0 {
        let actual = crc32fast::hash(&data[..sections.data_end]);
        if actual != stored {
            // Damage of its own, unless a chunk of the file fails too: that explains it.
            problems.push(
                Problem::file(
                    path,
                    ProblemKind::Crc,
                    format!(
                        "data section CRC mismatch: stored {stored:#010x}, computed {actual:#010x}"
                    ),
                )
                .disagreement(),
            );
        }
    }
    stored != 0
}

/// SQLite's own checks of a `.db3`: `PRAGMA integrity_check`, a write-ahead log left beside it,
/// and message rows the reader skips (a topic id no topic has, a timestamp or data of the wrong
/// type).
pub(super) fn sqlite_checks(path: &Path, problems: &mut Vec<Problem>) {
    let wal = rosbag2_rs_storage::recover::sqlite::wal_path(path);
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        problems.push(Problem::file(
            path,
            ProblemKind::Index,
            format!(
                "a write-ahead log ({}) holds data not yet in the database (`reindex` applies it)",
                wal.display()
            ),
        ));
    }
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = match rusqlite::Connection::open_with_flags(path, flags) {
        Ok(conn) => conn,
        Err(e) => {
            problems.push(Problem::file(path, ProblemKind::Unreadable, e.to_string()));
            return;
        }
    };
    let mut check = |sql: &str, what: &str, kind: ProblemKind| {
        let result: rusqlite::Result<Vec<String>> = conn.prepare(sql).and_then(|mut stmt| {
            stmt.query_map([], |row| row.get::<_, rusqlite::types::Value>(0))?
                .map(|v| {
                    v.map(|v| match v {
                        rusqlite::types::Value::Text(t) => t,
                        rusqlite::types::Value::Integer(i) => i.to_string(),
                        other => format!("{other:?}"),
                    })
                })
                .collect()
        });
        match result {
            Ok(rows) => {
                for row in rows.into_iter().filter(|r| r != "ok" && r != "0") {
                    problems.push(Problem::file(path, kind, format!("{what}: {row}")));
                }
            }
            Err(e) => problems.push(Problem::file(path, kind, format!("{what}: {e}"))),
        }
    };
    check(
        "PRAGMA integrity_check",
        "SQLite integrity check",
        ProblemKind::Index,
    );
    check(
        "SELECT count(*) FROM messages WHERE topic_id NOT IN (SELECT id FROM topics)",
        "message rows whose topic id no topic has",
        ProblemKind::Index,
    );
    check(
        "SELECT count(*) FROM messages WHERE typeof(timestamp) != 'integer' \
         OR typeof(topic_id) != 'integer' OR typeof(data) NOT IN ('blob', 'null')",
        "message rows with a timestamp, topic id or data of the wrong type",
        ProblemKind::Index,
    );
}

/// The ROS 1 bag's index state, from its own reader.
pub(super) fn ros1_checks(path: &Path, problems: &mut Vec<Problem>) {
    match rosbag2_rs_storage::rosbag1::BagReader::open(path, OpenMode::Strict) {
        Ok(bag) if !bag.is_indexed() => problems.push(Problem::file(
            path,
            ProblemKind::Index,
            "no usable index (the bag was not closed by its recorder; `reindex` rewrites it)",
        )),
        Ok(bag) if !bag.damage().is_empty() => {
            let mut report = rosbag2_rs_storage::recover::FileRecovery::intact(
                path.to_path_buf(),
                rosbag2_rs_storage::StorageId::Rosbag1,
            );
            bag.damage().fill(&mut report);
            problems.push(Problem::file(
                path,
                ProblemKind::Index,
                format!("damaged: {}", report.notes.join("; ")),
            ));
        }
        Ok(_) => {}
        Err(e) => problems.push(Problem::file(path, ProblemKind::Index, e.to_string())),
    }
}

/// Reads every message of `reader`, decoding the first of each topic; a read error ends the
/// scan as a problem.
fn read_all(
    reader: &mut dyn StorageReader,
    payloads: &mut PayloadCheck,
    scan: &mut FileScan,
    problems: &mut Vec<Problem>,
) {
    payloads.add_topics(reader);
    loop {
        match reader.read_next() {
            Ok(Some(m)) => {
                *scan.counts.entry(m.topic.to_string()).or_default() += 1;
                let t = m.recv_timestamp;
                scan.time_range = Some(
                    scan.time_range
                        .map_or((t, t), |(a, b)| (a.min(t), b.max(t))),
                );
                payloads.check(&m.topic, t, &m.data);
            }
            Ok(None) => break,
            Err(e) => {
                problems.push(Problem::file(
                    reader.path(),
                    ProblemKind::Unreadable,
                    format!("reading stopped after {} messages: {e}", scan.total()),
                ));
                break;
            }
        }
    }
}

/// What the file's own index says, compared with what reading it gave.
fn compare_index(reader: &dyn StorageReader, scan: &FileScan, problems: &mut Vec<Problem>) {
    let mut found = Vec::new();
    let path = reader.path();
    for topic in reader.topics() {
        let name = &topic.topic_metadata.name;
        let read = scan.counts.get(name).copied().unwrap_or(0);
        if read != topic.message_count {
            found.push(Problem::topic(
                path,
                name,
                ProblemKind::Index,
                format!(
                    "the file's index counts {} messages, reading gave {read}",
                    topic.message_count
                ),
            ));
        }
    }
    for (name, n) in &scan.counts {
        if !reader
            .topics()
            .iter()
            .any(|t| &t.topic_metadata.name == name)
        {
            found.push(Problem::topic(
                path,
                name,
                ProblemKind::Index,
                format!("{n} messages on a topic the file does not list"),
            ));
        }
    }
    let info = reader.file_information();
    if let Some((first, last)) = scan.time_range {
        let indexed = (info.starting_time, info.end_time());
        if info.message_count > 0 && indexed != (first, last) {
            found.push(Problem::file(
                path,
                ProblemKind::Time,
                format!(
                    "the file's index gives the time range {} to {} ns, its messages span {first} to {last} ns",
                    indexed.0, indexed.1
                ),
            ));
        }
    }
    problems.extend(found.into_iter().map(Problem::disagreement));
}

/// Opens and reads one storage file, with the checks its format allows. Returns the scan and
/// the definitions and topics the file stores (empty when it cannot be opened).
pub(super) fn check_file(
    path: &Path,
    message_compression: Option<CompressionFormat>,
    payloads: &mut PayloadCheck,
    problems: &mut Vec<Problem>,
) -> Option<(FileScan, Box<dyn StorageReader>)> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        problems.push(Problem::file(path, ProblemKind::Unreadable, "empty file"));
        return None;
    }
    let compressed =
        rosbag2_rs_storage::compression::file_mode::is_compressed_file(path).unwrap_or(false);
    let storage = rosbag2_rs_storage::StorageId::detect(path);
    let mut scan = FileScan::default();
    let mut reader: Box<dyn StorageReader> = match (compressed, storage) {
        (_, Err(e)) => {
            problems.push(Problem::file(path, ProblemKind::Unreadable, e.to_string()));
            return None;
        }
        (false, Ok(rosbag2_rs_storage::StorageId::Mcap)) => {
            if let Ok((data, _watch)) = rosbag2_rs_storage::storage::mapped_file::map_path(path) {
                if !mcap_section_crcs(path, &data, problems) {
                    problems.push(
                        Problem::file(
                            path,
                            ProblemKind::Crc,
                            "no data section CRC stored: a changed payload byte is found only \
                             where chunk CRCs are stored or the payload no longer decodes",
                        )
                        .remark(),
                    );
                }
            }
            let mut mcap = match McapReader::open(path, OpenMode::Strict) {
                Ok(r) => r,
                Err(e) => {
                    problems.push(Problem::file(path, ProblemKind::Index, e.to_string()));
                    return None;
                }
            };
            // Attachments (their CRCs) and metadata records must read too.
            if let Err(e) = rosbag2_rs_storage::storage::mcap_extras::read_extras(path) {
                let kind = match e.to_string().contains("CRC") {
                    true => ProblemKind::Crc,
                    false => ProblemKind::Unreadable,
                };
                problems.push(Problem::file(path, kind, e.to_string()));
            }
            if message_compression.is_none() {
                read_all(&mut mcap, payloads, &mut scan, problems);
                for chunk in &mcap.damage().skipped_chunks {
                    problems.push(Problem::file(
                        path,
                        ProblemKind::Crc,
                        format!(
                            "chunk at offset {} ({} bytes{}) skipped: {}",
                            chunk.offset,
                            chunk.record_len,
                            chunk
                                .messages
                                .map(|n| format!(", {n} messages"))
                                .unwrap_or_default(),
                            chunk.reason
                        ),
                    ));
                }
                compare_index(&mcap, &scan, problems);
                return Some((scan, Box::new(mcap)));
            }
            Box::new(mcap)
        }
        (compressed, Ok(id)) => {
            if !compressed {
                match id {
                    rosbag2_rs_storage::StorageId::Sqlite3 => sqlite_checks(path, problems),
                    rosbag2_rs_storage::StorageId::Rosbag1 => ros1_checks(path, problems),
                    rosbag2_rs_storage::StorageId::Mcap => {}
                }
            }
            match open_reader(path, OpenMode::Strict) {
                Ok(r) => r,
                Err(e) => {
                    problems.push(Problem::file(path, ProblemKind::Unreadable, e.to_string()));
                    return None;
                }
            }
        }
    };
    for u in reader.unreadable_topics() {
        problems.push(Problem::topic(
            path,
            &u.topic,
            ProblemKind::Definition,
            format!("({}) cannot be converted: {}", u.type_name, u.reason),
        ));
    }
    if let Some(format) = message_compression {
        reader = Box::new(DecompressingReader::new(reader, format));
    }
    read_all(reader.as_mut(), payloads, &mut scan, problems);
    compare_index(reader.as_ref(), &scan, problems);
    Some((scan, reader))
}
