//! ROS 1 bag recovery.
//!
//! A recorder that is killed leaves a bag whose header says "no index" (or points past the
//! end), and whose last chunk may be cut by the end of the file. Reading such a bag in
//! [`crate::OpenMode::Recover`] scans it chunk by chunk; for the cut chunk the bytes present are
//! decoded as far as the decoder goes (bz2 and LZ4 decode block by block, an uncompressed chunk
//! is its bytes) and every whole connection and message record among them is kept, checked for
//! structure (a record header that parses, `op` 2 or 7, data within the bytes, a known
//! connection). [`repair_bag`] rewrites such a bag with its index, in place.

use std::path::Path;

use super::{decompress_prefix, FileRecovery, RecoveryAction};
use crate::error::{Result, StorageError};
use crate::formats::{CompressionFormat, StorageId};
use crate::rosbag1::record;
use crate::rosbag1::Ros1FormatError;
use crate::rosbag1::{BagReader, BagWriter, WriterOptions};
use crate::storage::plugin::OpenMode;

/// A chunk record cut by the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutChunk {
    /// File offset of the chunk record.
    pub offset: u64,
    /// The record's announced length (both length prefixes included), when on disk.
    pub record_len: Option<u64>,
    /// Bytes of the record on disk.
    pub present: u64,
    /// Its compression.
    pub compression: CompressionFormat,
    /// Its uncompressed size, from its header.
    pub size: u64,
    /// Bytes the decoder produced.
    pub decoded: u64,
    /// Bytes of whole records among them (what is kept).
    pub kept: u64,
    /// Messages among the kept records.
    pub messages: u64,
    /// Receive time of the last message kept, ns.
    pub last_time: Option<i64>,
}

/// Everything a recovering scan of a ROS 1 bag found damaged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ros1Damage {
    /// The bag has no usable index (it was scanned).
    pub unindexed: bool,
    /// The chunk the end of the file cuts, if any.
    pub cut_chunk: Option<CutChunk>,
    /// Another record the end of the file cuts: its offset and the bytes of it on disk.
    pub cut_record: Option<(u64, u64)>,
    /// Chunks that failed their checks: offset, length, why.
    pub skipped_chunks: Vec<(u64, u64, String)>,
    /// Chunk-info records of the index that list a chunk listed before (skipped: each chunk
    /// is read once).
    pub repeated_chunk_infos: u64,
}

impl Ros1Damage {
    /// True when nothing was found damaged (the bag may still lack its index).
    pub fn is_empty(&self) -> bool {
        self.cut_chunk.is_none()
            && self.cut_record.is_none()
            && self.skipped_chunks.is_empty()
            && self.repeated_chunk_infos == 0
    }

    /// Accounts for the damage in `report`.
    pub fn fill(&self, report: &mut FileRecovery) {
        let lost = &mut report.lost;
        let mut first = true;
        let mut unrecovered = Some(0);
        if let Some(c) = &self.cut_chunk {
            lost.damaged_bytes += c.present;
            lost.missing_bytes += c.record_len.map_or(0, |l| l.saturating_sub(c.present));
            let rest = c.size.saturating_sub(c.kept);
            unrecovered = unrecovered.map(|u| u + rest);
            report.salvaged_messages += c.messages;
            lost.add_messages((rest == 0).then_some(0), first);
            first = false;
            if rest > 0 {
                // The chunk's time range is in its chunk info, which a cut bag lacks: the lost
                // messages come after the last one kept.
                if let Some(t) = c.last_time {
                    lost.add_time_range(t, t);
                }
            }
            report.notes.push(format!(
                "chunk at offset {} cut by the end of the file: {} of its {} bytes on disk; {} of its \
                 {} bytes of records decoded ({}), {} bytes of whole records kept ({} messages); \
                 the time range of what is lost is not recorded before the index (lost messages \
                 were received at or after the last one kept)",
                c.offset,
                c.present,
                c.record_len.map_or("unknown".into(), |l| l.to_string()),
                c.decoded,
                c.size,
                c.compression.as_str(),
                c.kept,
                c.messages
            ));
        }
        if let Some((offset, present)) = self.cut_record {
            lost.damaged_bytes += present;
            lost.add_messages(Some(0), first);
            first = false;
            report.notes.push(format!(
                "record at offset {offset} cut by the end of the file ({present} bytes on disk)"
            ));
        }
        for (offset, len, reason) in &self.skipped_chunks {
            lost.damaged_bytes += len;
            lost.add_messages(None, first);
            first = false;
            unrecovered = None;
            report.notes.push(format!(
                "chunk at offset {offset} ({len} bytes) skipped: {reason}"
            ));
        }
        if self.repeated_chunk_infos > 0 {
            report.notes.push(format!(
                "{} chunk-info records list a chunk listed before: skipped, each chunk was read once",
                self.repeated_chunk_infos
            ));
        }
        if !self.is_empty() {
            lost.unrecovered_bytes = unrecovered;
        }
    }
}

/// Reads the chunk record at `pos` that the end of `file` cuts: its header and the bytes the
/// decoder produces from the data present (not yet cut to whole records).
pub(crate) fn read_cut_chunk(
    file: &[u8],
    pos: usize,
) -> std::result::Result<(CutChunk, Vec<u8>), Ros1FormatError> {
    let header_len = record::read_u32(file, pos)? as usize;
    let header_end = (pos + 4)
        .checked_add(header_len)
        .filter(|&e| e <= file.len())
        .ok_or(Ros1FormatError::ChunkHeaderCut)?;
    let fields = record::Fields::parse(&file[pos + 4..header_end])?;
    if fields.op()? != record::OP_CHUNK {
        return Err(Ros1FormatError::NotChunk);
    }
    let compression = CompressionFormat::parse(&fields.string("compression")?)
        .and_then(|c| c.check_chunks_of(StorageId::Rosbag1))?;
    let size = fields.u32("size")? as u64;
    let data_len = record::read_u32(file, header_end).ok();
    let data = file.get(header_end + 4..).unwrap_or_default();
    let data = &data[..data.len().min(data_len.unwrap_or(0) as usize)];
    let decoded = decompress_prefix(compression, data, size);
    Ok((
        CutChunk {
            offset: pos as u64,
            record_len: data_len.map(|l| (header_end + 4 - pos) as u64 + l as u64),
            present: (file.len() - pos) as u64,
            compression,
            size,
            decoded: decoded.len() as u64,
            kept: 0,
            messages: 0,
            last_time: None,
        },
        decoded,
    ))
}

/// Rewrites a ROS 1 bag whose index is missing or damaged from what [`BagReader`] recovers
/// (every intact chunk and the readable prefix of a cut one), with a fresh index, in place; the
/// original is replaced only once the new bag is complete. An intact indexed bag is left alone.
pub fn repair_bag(path: &Path) -> Result<FileRecovery> {
    let mut bag = BagReader::open(path, OpenMode::Recover)?;
    let mut report = FileRecovery::intact(path.to_path_buf(), StorageId::Rosbag1);
    let damage = bag.damage().clone();
    if bag.is_indexed() && damage.is_empty() {
        report.messages = bag.message_count();
        report.time_range = bag.time_range();
        return Ok(report);
    }
    let compression = bag
        .chunk_compressions()
        .first()
        .map_or(CompressionFormat::None, |(c, _)| *c);
    let tmp = path.with_extension("bag.repair");
    let _ = std::fs::remove_file(&tmp);
    let mut writer = BagWriter::create(
        &tmp,
        WriterOptions {
            compression,
            ..WriterOptions::default()
        },
    )?;
    let mut ids = std::collections::HashMap::new();
    for c in bag.connections() {
        ids.insert(c.id, writer.add_connection(c.clone()));
    }
    while let Some(m) = bag.read_next()? {
        let id = ids.get(&m.connection).copied().ok_or_else(|| {
            StorageError::corrupt(
                path,
                format!("message of unknown connection {}", m.connection),
            )
        })?;
        writer.write(id, m.time, &m.data)?;
        report.add_message(m.time, m.data.len());
    }
    writer.finish()?;
    drop(bag);
    std::fs::rename(&tmp, path).map_err(|e| StorageError::io(path, e))?;
    report.action = RecoveryAction::Rewritten;
    if damage.unindexed {
        report.notes.push(
            "the bag had no usable index (its recorder did not close it); index rebuilt".into(),
        );
    }
    damage.fill(&mut report);
    Ok(report)
}
