//! MCAP attachments and metadata records: what travels with the data besides messages
//! (calibration files, URDFs, configurations; key/value records).
//!
//! [`read_extras`] lists both from a file's top-level records (they are never inside chunks),
//! checking each attachment's CRC. [`append_attachments`] adds attachments to a finished file
//! without touching its messages: the data section is copied up to its `DataEnd` record, the
//! attachments follow, then a new `DataEnd` (its CRC recomputed, after checking the old one) and
//! the old summary with the new attachment indexes, the statistics' attachment count and the
//! summary offsets updated. The copy is written next to the file, checked by reading it back,
//! and only then renamed over the original, so a failure at any step leaves the original as it
//! was.

use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use mcap::records::op;

use super::mcap_records::{
    self, le_u32, le_u64, parse_checked, McapFormatError, Records, RECORD_HEADER,
};
use crate::error::{Result, StorageError};

pub use super::extras::{
    guess_media_type, Attachment, McapExtras, MetadataRecord, ROSBAG2_METADATA_NAME,
    USER_METADATA_NAME,
};

fn corrupt(path: &Path, reason: impl Into<String>) -> StorageError {
    StorageError::corrupt(path, reason)
}

/// Reads an MCAP string (`u32` length, bytes) at `*at`, advancing it.
fn read_string(body: &[u8], at: &mut usize) -> Option<String> {
    let len = le_u32(body.get(*at..*at + 4)?, 0) as usize;
    let text = body.get(*at + 4..(*at + 4).checked_add(len)?)?;
    *at += 4 + len;
    String::from_utf8(text.to_vec()).ok()
}

/// Parses an attachment record body at `body_start..body_end` of `data`, checking its CRC. By
/// hand rather than with the `mcap` crate: its CRC error names no attachment, and a user with
/// several wants to know which one is damaged.
fn parse_attachment(
    path: &Path,
    data: &Bytes,
    body_start: usize,
    body_end: usize,
) -> Result<Attachment> {
    let body = &data[body_start..body_end];
    let bad = |what: &str| {
        corrupt(
            path,
            format!(
                "attachment record at byte {}: {what}",
                body_start - RECORD_HEADER
            ),
        )
    };
    if body.len() < 16 {
        return Err(bad("too short"));
    }
    let (log_time, create_time) = (le_u64(body, 0), le_u64(body, 8));
    let mut at = 16;
    let name = read_string(body, &mut at).ok_or_else(|| bad("bad name"))?;
    let media_type = read_string(body, &mut at).ok_or_else(|| bad("bad media type"))?;
    let size = body
        .get(at..at + 8)
        .map(|b| le_u64(b, 0))
        .ok_or_else(|| bad("cut before its data"))?;
    at += 8;
    let data_end = usize::try_from(size)
        .ok()
        .and_then(|s| at.checked_add(s))
        .filter(|end| end.checked_add(4) == Some(body.len()))
        .ok_or_else(|| bad("data length does not match the record"))?;
    let crc = le_u32(body, data_end);
    if crc != 0 && crc32fast::hash(&body[..data_end]) != crc {
        return Err(bad(&format!("'{name}' fails its CRC check")));
    }
    Ok(Attachment {
        name,
        media_type,
        log_time,
        create_time,
        data: data.slice(body_start + at..body_start + data_end),
    })
}

/// Maps `path` and checks it is an MCAP file.
fn map_mcap(path: &Path) -> Result<Bytes> {
    if crate::compression::file_mode::is_compressed_file(path)? {
        return Err(StorageError::InvalidArgument(format!(
            "{}: a compressed file (rosbag2 file compression): attachments and metadata \
             records are read and written in uncompressed MCAP files; decompress it first with \
             `ros2bag-rs convert`",
            path.display()
        )));
    }
    let (data, _watch) =
        super::mapped_file::map_path(path).map_err(|e| StorageError::io(path, e))?;
    if !data.starts_with(mcap::MAGIC) {
        return Err(not_mcap(path));
    }
    Ok(data)
}

/// The error for a file of another storage.
fn not_mcap(path: &Path) -> StorageError {
    let kind = match super::StorageId::detect(path) {
        Ok(id) => format!("a {} file", id.display_name()),
        Err(_) => "not an MCAP file".into(),
    };
    StorageError::InvalidArgument(format!(
        "{}: {kind}: attachments and metadata records need MCAP storage (convert the bag with \
         `ros2bag-rs convert -s mcap`)",
        path.display()
    ))
}

/// The attachments and metadata records of the MCAP file `path`. A file of another storage is
/// an [`StorageError::InvalidArgument`]; a damaged record or a failed attachment CRC is
/// [`StorageError::Corrupt`].
pub fn read_extras(path: &Path) -> Result<McapExtras> {
    scan_extras(path, false)
}

/// What [`read_extras`] finds in a damaged file: every intact attachment and metadata record up
/// to the first record cut by the end of the file; damaged ones are left out with a warning
/// (`reindex` keeps these in the file it rewrites).
pub fn salvage_extras(path: &Path) -> Result<McapExtras> {
    scan_extras(path, true)
}

fn scan_extras(path: &Path, lenient: bool) -> Result<McapExtras> {
    let data = map_mcap(path)?;
    let mut extras = McapExtras::default();
    let records = Records {
        buf: &data,
        pos: mcap::MAGIC.len(),
    };
    for record in records {
        let (opcode, body, end) = match record {
            Ok(r) => r,
            Err(_) if lenient => break,
            Err(e) => {
                return Err(corrupt(
                    path,
                    format!("{e}; `ros2bag-rs reindex` recovers it"),
                ))
            }
        };
        let found = match opcode {
            op::ATTACHMENT => {
                parse_attachment(path, &data, body, end).map(|a| extras.attachments.push(a))
            }
            op::METADATA => match parse_checked(opcode, &data[body..end]) {
                Ok(mcap::records::Record::Metadata(m)) => {
                    extras.metadata.push(MetadataRecord {
                        name: m.name,
                        metadata: m.metadata,
                    });
                    Ok(())
                }
                _ => Err(corrupt(
                    path,
                    format!(
                        "unreadable metadata record at byte {}",
                        body - RECORD_HEADER
                    ),
                )),
            },
            op::DATA_END | op::FOOTER => break,
            _ => Ok(()),
        };
        match found {
            Err(e) if lenient => log::warn!("{e}: left out"),
            other => other?,
        }
    }
    Ok(extras)
}

/// Appends one record (opcode, length, body) to `out`.
fn push_record(out: &mut Vec<u8>, opcode: u8, body: &[u8]) {
    out.push(opcode);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
}

fn push_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// An attachment record's body, CRC included.
fn attachment_body(a: &Attachment) -> Vec<u8> {
    let mut body = Vec::with_capacity(a.data.len() + a.name.len() + a.media_type.len() + 40);
    body.extend_from_slice(&a.log_time.to_le_bytes());
    body.extend_from_slice(&a.create_time.to_le_bytes());
    push_string(&mut body, &a.name);
    push_string(&mut body, &a.media_type);
    body.extend_from_slice(&(a.data.len() as u64).to_le_bytes());
    body.extend_from_slice(&a.data);
    let crc = crc32fast::hash(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// An attachment index record's body for an attachment record at `offset` of `length` bytes.
fn attachment_index_body(a: &Attachment, offset: u64, length: u64) -> Vec<u8> {
    let mut body = Vec::new();
    for v in [
        offset,
        length,
        a.log_time,
        a.create_time,
        a.data.len() as u64,
    ] {
        body.extend_from_slice(&v.to_le_bytes());
    }
    push_string(&mut body, &a.name);
    push_string(&mut body, &a.media_type);
    body
}

/// Where the sections of a finished MCAP file are.
struct Layout {
    /// Offset of the `DataEnd` record.
    data_end: usize,
    /// Its data section CRC (0: not computed).
    data_crc: u32,
    /// The summary section's records (empty when the file has none), without summary offsets.
    summary: std::ops::Range<usize>,
}

fn layout(path: &Path, data: &[u8]) -> Result<Layout> {
    let sections = mcap_records::sections(data).map_err(|e| match e {
        McapFormatError::NoFooter | McapFormatError::NotFooter { .. } => corrupt(
            path,
            "not a finished MCAP file (no footer): `ros2bag-rs reindex` recovers it first",
        ),
        other => corrupt(path, other.to_string()),
    })?;
    Ok(Layout {
        data_end: sections.data_end,
        data_crc: sections.data_crc,
        summary: sections.summary.unwrap_or(0..0),
    })
}

/// The new file's summary: the old records with `new_indexes` after the attachment indexes and
/// the statistics' attachment count raised; then summary offsets for every group.
fn rebuild_summary(
    path: &Path,
    old: &[u8],
    new_indexes: &[Vec<u8>],
    summary_start: u64,
) -> Result<(Vec<u8>, u64)> {
    let mut records: Vec<(u8, Vec<u8>)> = Vec::new();
    for record in (Records { buf: old, pos: 0 }) {
        let (opcode, body, end) = record.map_err(|e| corrupt(path, format!("summary: {e}")))?;
        let mut body = old[body..end].to_vec();
        if opcode == op::STATISTICS {
            // message_count u64, schema_count u16, channel_count u32, then attachment_count u32.
            const AT: usize = 8 + 2 + 4;
            if body.len() < AT + 4 {
                return Err(corrupt(path, "summary: statistics record too short"));
            }
            let count = le_u32(&body, AT).saturating_add(new_indexes.len() as u32);
            body[AT..AT + 4].copy_from_slice(&count.to_le_bytes());
        }
        records.push((opcode, body));
    }
    let insert_at = records
        .iter()
        .rposition(|(o, _)| *o == op::ATTACHMENT_INDEX)
        .map_or(records.len(), |i| i + 1);
    for (i, body) in new_indexes.iter().enumerate() {
        records.insert(insert_at + i, (op::ATTACHMENT_INDEX, body.clone()));
    }
    let mut out = Vec::new();
    let mut groups: Vec<(u8, u64, u64)> = Vec::new();
    for (opcode, body) in &records {
        let start = summary_start + out.len() as u64;
        push_record(&mut out, *opcode, body);
        let length = summary_start + out.len() as u64 - start;
        match groups.last_mut() {
            Some((o, _, l)) if o == opcode => *l += length,
            _ => groups.push((*opcode, start, length)),
        }
    }
    let offsets_start = summary_start + out.len() as u64;
    for (opcode, start, length) in groups {
        let mut body = vec![opcode];
        body.extend_from_slice(&start.to_le_bytes());
        body.extend_from_slice(&length.to_le_bytes());
        push_record(&mut out, op::SUMMARY_OFFSET, &body);
    }
    Ok((out, offsets_start))
}

/// A temporary file next to `path`, removed on drop unless kept.
struct Sibling(Option<PathBuf>);

impl Drop for Sibling {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Adds `attachments` to the finished MCAP file `path` (see the module documentation): the
/// messages, schemas, channels, earlier attachments and metadata records stay as they are.
/// The original is replaced only by a copy that was read back successfully; on any error it is
/// left untouched.
pub fn append_attachments(path: &Path, attachments: &[Attachment]) -> Result<()> {
    let data = map_mcap(path)?;
    // The file must read cleanly first: a damaged bag is repaired by reindex, not extended.
    let before = super::mcap_reader::McapReader::open(path, super::OpenMode::Strict)?;
    let before_count = super::StorageReader::file_information(&before).message_count;
    drop(before);
    let layout = layout(path, &data)?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&data[..layout.data_end]);
    if layout.data_crc != 0 && hasher.clone().finalize() != layout.data_crc {
        return Err(corrupt(
            path,
            "the data section fails its CRC check: `ros2bag-rs doctor` tells more",
        ));
    }
    let mut tail = Vec::new();
    let mut indexes = Vec::new();
    for a in attachments {
        let offset = (layout.data_end + tail.len()) as u64;
        push_record(&mut tail, op::ATTACHMENT, &attachment_body(a));
        let length = (layout.data_end + tail.len()) as u64 - offset;
        indexes.push(attachment_index_body(a, offset, length));
    }
    hasher.update(&tail);
    let data_crc = hasher.finalize();
    push_record(&mut tail, op::DATA_END, &data_crc.to_le_bytes());
    let summary_start = (layout.data_end + tail.len()) as u64;
    let (footer_summary_start, offsets_start) = if layout.summary.is_empty() {
        // No summary before (readers scan the file): none after either.
        (0, 0)
    } else {
        let (summary, offsets_start) =
            rebuild_summary(path, &data[layout.summary.clone()], &indexes, summary_start)?;
        tail.extend_from_slice(&summary);
        (summary_start, offsets_start)
    };
    tail.push(op::FOOTER);
    tail.extend_from_slice(&20u64.to_le_bytes());
    tail.extend_from_slice(&footer_summary_start.to_le_bytes());
    tail.extend_from_slice(&offsets_start.to_le_bytes());
    let summary_crc = if footer_summary_start == 0 {
        0
    } else {
        let from = (summary_start - layout.data_end as u64) as usize;
        crc32fast::hash(&tail[from..])
    };
    tail.extend_from_slice(&summary_crc.to_le_bytes());
    tail.extend_from_slice(mcap::MAGIC);

    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.attach-{}.tmp", std::process::id()));
    let mut guard = Sibling(Some(temp.clone()));
    let io = |e| StorageError::io(&temp, e);
    let mut file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(io)?;
    file.write_all(&data[..layout.data_end]).map_err(io)?;
    file.write_all(&tail).map_err(io)?;
    if let Ok(meta) = std::fs::metadata(path) {
        file.set_permissions(meta.permissions()).map_err(io)?;
    }
    file.sync_all().map_err(io)?;
    drop(file);
    drop(data);
    // Read the copy back before it replaces anything.
    let after = super::mcap_reader::McapReader::open(&temp, super::OpenMode::Strict)?;
    let after_count = super::StorageReader::file_information(&after).message_count;
    drop(after);
    let extras = read_extras(&temp)?;
    let added = &extras.attachments[extras.attachments.len().saturating_sub(attachments.len())..];
    if after_count != before_count || added != attachments {
        return Err(corrupt(
            &temp,
            "the rewritten file does not read back as expected; the original is unchanged",
        ));
    }
    std::fs::rename(&temp, path).map_err(|e| StorageError::io(path, e))?;
    guard.0 = None;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The attachments and metadata records of every MCAP file of the bag at `path` (directory or
/// file), by file. `strict`: a file of another storage (or compressed) is an error saying that
/// attachments need MCAP; otherwise such files are left out.
pub fn bag_extras(path: &Path, strict: bool) -> Result<Vec<(PathBuf, McapExtras)>> {
    files_extras(&crate::Bag::locate(path)?.files, strict)
}

/// [`bag_extras`] of a bag's storage files.
pub fn files_extras(files: &[PathBuf], strict: bool) -> Result<Vec<(PathBuf, McapExtras)>> {
    let mut out = Vec::new();
    for file in files {
        let mcap = !crate::compression::file_mode::is_compressed_file(file)?
            && super::StorageId::detect(file)? == super::StorageId::Mcap;
        if mcap {
            out.push((file.clone(), read_extras(file)?));
        } else if strict {
            // The error says what the file is and that MCAP is needed.
            read_extras(file)?;
        }
    }
    Ok(out)
}

/// Adds `attachments` to the bag at `path` (directory or `.mcap` file): to its first file,
/// which must be an uncompressed MCAP file (see [`append_attachments`]). Returns that file.
pub fn attach_to_bag(path: &Path, attachments: &[Attachment]) -> Result<PathBuf> {
    let bag = crate::Bag::locate(path)?;
    let file = bag
        .files
        .first()
        .ok_or_else(|| corrupt(path, "the bag has no storage file"))?;
    append_attachments(file, attachments)?;
    Ok(file.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{create_writer, open_reader, OpenMode, StoragePreset, WriterOptions};
    use crate::{SerializedMessage, TopicMetadata};
    use rosbag2_rs_codec::MessageDefinition;

    /// An MCAP file of 50 messages on `/a`, written by our writer with `options`.
    fn write_file(path: &Path, options: &WriterOptions) {
        let mut w = create_writer(path.to_path_buf(), options).unwrap();
        let def = MessageDefinition {
            topic_type: "std_msgs/msg/String".into(),
            encoding: "ros2msg".into(),
            encoded_message_definition: "string data\n".into(),
            type_description_hash: String::new(),
        };
        w.create_topic(&TopicMetadata::new("/a", "std_msgs/msg/String"), &def)
            .unwrap();
        for i in 0..50i64 {
            let data = vec![0, 1, 0, 0, 2, 0, 0, 0, b'a' + (i % 26) as u8, 0];
            w.write(&SerializedMessage::new("/a".into(), 1000 + i, data))
                .unwrap();
        }
        w.finish().unwrap();
    }

    fn messages(path: &Path) -> Vec<(i64, Bytes)> {
        let mut r = open_reader(path, OpenMode::Strict).unwrap();
        let mut out = Vec::new();
        while let Some(m) = r.read_next().unwrap() {
            out.push((m.recv_timestamp, m.data));
        }
        out
    }

    fn attachment(name: &str, len: usize) -> Attachment {
        Attachment {
            name: name.into(),
            media_type: "application/octet-stream".into(),
            log_time: 7,
            create_time: 8,
            data: (0..len)
                .map(|i| (i * 31 % 251) as u8)
                .collect::<Vec<u8>>()
                .into(),
        }
    }

    #[test]
    fn appended_attachments_read_back_and_messages_stay() {
        for preset in [StoragePreset::None, StoragePreset::Fastwrite] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.mcap");
            let options = WriterOptions {
                preset,
                metadata: vec![MetadataRecord {
                    name: "site".into(),
                    metadata: [("robot".to_string(), "r2".to_string())].into(),
                }],
                ..WriterOptions::default()
            };
            write_file(&path, &options);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::Permissions::from_mode(0o640);
                std::fs::set_permissions(&path, mode).unwrap();
            }
            let before = messages(&path);
            let first = [attachment("calib.yaml", 3000)];
            append_attachments(&path, &first).unwrap();
            let second = [attachment("a.urdf", 0), attachment("b.bin", 70_000)];
            append_attachments(&path, &second).unwrap();
            assert_eq!(messages(&path), before, "{preset:?}");
            let extras = read_extras(&path).unwrap();
            let expected: Vec<Attachment> = first.iter().chain(&second).cloned().collect();
            assert_eq!(extras.attachments, expected, "{preset:?}");
            assert_eq!(
                extras.user_metadata().cloned().collect::<Vec<_>>(),
                options.metadata
            );
            // The summary the mcap crate reads agrees: three attachment indexes, counted.
            let data = std::fs::read(&path).unwrap();
            let summary = mcap::Summary::read(&data).unwrap().unwrap();
            assert_eq!(summary.attachment_indexes.len(), 3);
            assert_eq!(summary.stats.unwrap().attachment_count, 3);
            let a = mcap::read::attachment(&data, &summary.attachment_indexes[2]).unwrap();
            assert_eq!(&*a.data, &*second[1].data);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o640, "the file keeps its permissions");
            }
            // No temporary file is left behind.
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        }
    }

    #[test]
    fn bad_inputs_are_errors_and_leave_the_file_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let a = [attachment("c.txt", 10)];
        // Missing file.
        let missing = dir.path().join("none.mcap");
        assert!(matches!(
            append_attachments(&missing, &a),
            Err(StorageError::Io { .. })
        ));
        // Not MCAP: an SQLite3 file.
        let db3 = dir.path().join("x.db3");
        write_file(
            &db3,
            &WriterOptions {
                storage: crate::StorageId::Sqlite3,
                ..Default::default()
            },
        );
        let err = append_attachments(&db3, &a).unwrap_err().to_string();
        assert!(err.contains("need MCAP storage"), "{err}");
        assert!(read_extras(&db3).is_err());
        // Refused up front: a metadata record for SQLite3.
        let refused = create_writer(
            dir.path().join("y.db3"),
            &WriterOptions {
                storage: crate::StorageId::Sqlite3,
                metadata: vec![MetadataRecord::default()],
                ..Default::default()
            },
        );
        assert!(refused.is_err());
        // Truncated (no footer) and corrupted (a flipped byte in the data section).
        let good = dir.path().join("good.mcap");
        write_file(&good, &WriterOptions::default());
        let bytes = std::fs::read(&good).unwrap();
        let cut = dir.path().join("cut.mcap");
        std::fs::write(&cut, &bytes[..bytes.len() - 40]).unwrap();
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 3] ^= 0xff;
        let bad = dir.path().join("bad.mcap");
        std::fs::write(&bad, &flipped).unwrap();
        for (path, content) in [(&cut, &bytes[..bytes.len() - 40]), (&bad, &flipped[..])] {
            let err = append_attachments(path, &a).unwrap_err();
            assert!(
                matches!(
                    err,
                    StorageError::Corrupt { .. } | StorageError::McapFormat { .. }
                ),
                "{path:?}: {err}"
            );
            assert_eq!(std::fs::read(path).unwrap(), content);
        }
        // x.db3, good, cut, bad: nothing else (no y.db3, no temporary file).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    #[test]
    fn an_attachment_failing_its_crc_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.mcap");
        write_file(&path, &WriterOptions::default());
        append_attachments(&path, &[attachment("z.bin", 100)]).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let data = &attachment("z.bin", 100).data;
        let at = bytes
            .windows(data.len())
            .position(|w| w == &data[..])
            .unwrap();
        bytes[at + 50] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let err = read_extras(&path).unwrap_err().to_string();
        assert!(err.contains("'z.bin' fails its CRC check"), "{err}");
    }

    #[test]
    fn reindex_keeps_the_attachments_and_metadata_records_of_a_cut_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.mcap");
        let record = MetadataRecord {
            name: "site".into(),
            metadata: [("robot".to_string(), "r2".to_string())].into(),
        };
        let options = WriterOptions {
            metadata: vec![record.clone()],
            ..WriterOptions::default()
        };
        // Written by our writer: the metadata record first, then the attachment, then messages.
        let mut w = create_writer(path.clone(), &options).unwrap();
        let def = MessageDefinition {
            topic_type: "std_msgs/msg/String".into(),
            encoding: "ros2msg".into(),
            encoded_message_definition: "string data\n".into(),
            type_description_hash: String::new(),
        };
        w.create_topic(&TopicMetadata::new("/a", "std_msgs/msg/String"), &def)
            .unwrap();
        w.add_attachment(&attachment("calib.bin", 500)).unwrap();
        for i in 0..50i64 {
            let data = vec![0, 1, 0, 0, 2, 0, 0, 0, b'a', 0];
            w.write(&SerializedMessage::new("/a".into(), 1000 + i, data))
                .unwrap();
        }
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 200]).unwrap();
        let report = crate::reindex::repair_mcap(&path).unwrap();
        assert!(report.messages > 0);
        let extras = read_extras(&path).unwrap();
        assert_eq!(extras.attachments, [attachment("calib.bin", 500)]);
        assert_eq!(
            extras.user_metadata().cloned().collect::<Vec<_>>(),
            [record]
        );
    }

    #[test]
    fn media_types_are_guessed_from_extensions() {
        assert_eq!(
            guess_media_type(Path::new("a/robot.URDF")),
            "application/xml"
        );
        assert_eq!(guess_media_type(Path::new("c.yaml")), "application/yaml");
        assert_eq!(
            guess_media_type(Path::new("blob")),
            "application/octet-stream"
        );
    }
}
