//! MCAP recovery: the readable prefix of a chunk cut by the end of the file, and the account of
//! what a damaged file lost.
//!
//! A chunk record starts with its message time range, uncompressed size and CRC and compression
//! name, then its records (compressed as one stream). When the file ends inside it, the records
//! present are decoded as far as the decoder goes (for an uncompressed chunk: the bytes present),
//! and the caller keeps the whole records among them. The chunk CRC covers the whole chunk and
//! cannot be checked on a prefix, so each record is checked for structure instead (known opcode,
//! length within the bytes present, message on a known channel).

use bytes::Bytes;

use super::{decompress_prefix, FileRecovery};
use crate::formats::{CompressionFormat, StorageId};
use crate::storage::mcap_records::{
    chunk, le_u32, le_u64, McapFormatError, RECORD_HEADER as HEADER_LEN,
};

/// Bytes of a record's opcode and length.
const RECORD_HEADER: u64 = 9;

/// A chunk record cut by the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutChunk {
    /// File offset of the chunk record.
    pub offset: u64,
    /// The record's length (opcode and length included) as it announces it.
    pub record_len: u64,
    /// Bytes of the record on disk.
    pub present: u64,
    /// Log time of its first message, from its header.
    pub start_time: u64,
    /// Log time of its last message, from its header.
    pub end_time: u64,
    /// Its compression (`""`, `lz4` or `zstd`).
    pub compression: String,
    /// Size of its records uncompressed, from its header.
    pub uncompressed_size: u64,
    /// Bytes of records the decoder produced from what is on disk.
    pub decoded: u64,
    /// Bytes of whole, well-formed records among them (what is kept).
    pub kept: u64,
    /// Messages among the kept records.
    pub messages: u64,
    /// Log time of the last message kept.
    pub last_time: Option<u64>,
}

/// A top-level record other than a chunk cut by the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutRecord {
    /// File offset of the record.
    pub offset: u64,
    /// Its opcode, if on disk.
    pub opcode: Option<u8>,
    /// Its announced length (opcode and length included), if on disk.
    pub record_len: Option<u64>,
    /// Bytes of it on disk.
    pub present: u64,
    /// The log time of a cut message record, if its header is on disk.
    pub log_time: Option<u64>,
}

/// A chunk skipped because it failed its checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedChunk {
    /// File offset of the chunk record.
    pub offset: u64,
    /// Length of the record.
    pub record_len: u64,
    /// The message time range its header or its chunk index claims, if readable.
    pub time_range: Option<(u64, u64)>,
    /// The number of messages its message index records list, if present.
    pub messages: Option<u64>,
    /// Why it was skipped.
    pub reason: String,
}

/// Everything a recovering scan of an MCAP file found damaged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McapDamage {
    /// Length of the file.
    pub file_len: u64,
    /// The chunk the end of the file cuts, if any.
    pub cut_chunk: Option<CutChunk>,
    /// The other record the end of the file cuts, if any.
    pub cut_record: Option<CutRecord>,
    /// Chunks that failed their checks.
    pub skipped_chunks: Vec<SkippedChunk>,
    /// Chunk index entries skipped because they list a chunk already listed (or a range inside
    /// one): each chunk is read once.
    pub ignored_chunk_indexes: Vec<IgnoredChunkIndex>,
}

/// A chunk index entry of the summary that was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredChunkIndex {
    /// The chunk offset it claims.
    pub offset: u64,
    /// The chunk length it claims.
    pub length: u64,
    /// Why it was skipped.
    pub reason: String,
}

impl McapDamage {
    /// True when the scan found nothing damaged.
    pub fn is_empty(&self) -> bool {
        self.cut_chunk.is_none()
            && self.cut_record.is_none()
            && self.skipped_chunks.is_empty()
            && self.ignored_chunk_indexes.is_empty()
    }

    /// Accounts for the damage in `report`: what was salvaged from damaged parts, what was lost.
    pub fn fill(&self, report: &mut FileRecovery) {
        let lost = &mut report.lost;
        let mut first = true;
        let mut unrecovered = Some(0u64);
        if let Some(c) = &self.cut_chunk {
            lost.damaged_bytes += c.present;
            lost.missing_bytes += c.record_len.saturating_sub(c.present);
            let rest = c.uncompressed_size.saturating_sub(c.kept);
            unrecovered = unrecovered.map(|u| u + rest);
            report.salvaged_messages += c.messages;
            if rest > 0 {
                let from = c.last_time.unwrap_or(c.start_time).max(c.start_time);
                lost.add_time_range(from as i64, c.end_time as i64);
                lost.add_messages(None, first);
            } else {
                lost.add_messages(Some(0), first);
            }
            first = false;
            report.notes.push(format!(
                "chunk at offset {} cut by the end of the file: {} of its {} bytes on disk; \
                 {} of its {} bytes of records decoded ({}), {} bytes of whole records kept \
                 ({} messages); its CRC covers the whole chunk and was not checked, each record \
                 was checked for structure instead",
                c.offset,
                c.present,
                c.record_len,
                c.decoded,
                c.uncompressed_size,
                if c.compression.is_empty() {
                    "uncompressed"
                } else {
                    c.compression.as_str()
                },
                c.kept,
                c.messages
            ));
        }
        if let Some(r) = &self.cut_record {
            lost.damaged_bytes += r.present;
            lost.missing_bytes += r.record_len.map_or(0, |l| l.saturating_sub(r.present));
            let is_message = r.opcode == Some(0x05);
            lost.add_messages(Some(u64::from(is_message)), first);
            if is_message {
                unrecovered = r
                    .record_len
                    .and_then(|l| Some(unrecovered? + l.saturating_sub(RECORD_HEADER)));
                if let Some(t) = r.log_time {
                    lost.add_time_range(t as i64, t as i64);
                }
            }
            first = false;
            report.notes.push(format!(
                "record at offset {} (opcode {}) cut by the end of the file: {} of its {} bytes on disk",
                r.offset,
                r.opcode.map_or("unknown".into(), |o| format!("0x{o:02x}")),
                r.present,
                r.record_len.map_or("unknown".into(), |l| l.to_string())
            ));
        }
        for s in &self.skipped_chunks {
            lost.damaged_bytes += s.record_len;
            lost.add_messages(s.messages, first);
            first = false;
            unrecovered = None;
            if let Some((a, b)) = s.time_range {
                lost.add_time_range(a as i64, b as i64);
            }
            report.notes.push(format!(
                "chunk at offset {} ({} bytes) skipped: {}",
                s.offset, s.record_len, s.reason
            ));
        }
        for c in &self.ignored_chunk_indexes {
            report.notes.push(format!(
                "chunk index entry for offset {} ({} bytes) skipped: it {}; the chunk was read once",
                c.offset, c.length, c.reason
            ));
        }
        if !self.is_empty() {
            lost.unrecovered_bytes = unrecovered;
        }
    }
}

/// Reads the chunk record at `offset` whose body runs past the end of `data`: its header and
/// the records the decoder produces from the bytes present (not yet cut to whole records).
pub(crate) fn read_cut_chunk(
    data: &Bytes,
    offset: usize,
) -> Result<(CutChunk, Bytes), McapFormatError> {
    let rest = data.get(offset..).unwrap_or_default();
    let missing = || McapFormatError::CutChunkHeaderMissing { offset };
    let field = |at: usize, n: usize| {
        at.checked_add(n)
            .and_then(|end| rest.get(at..end))
            .ok_or_else(missing)
    };
    let u64_at = |at: usize| field(at, 8).map(|b| le_u64(b, 0));
    // Offsets in the record: the opcode and body length, then the chunk's fixed fields.
    let body = HEADER_LEN;
    let body_len = u64_at(1)?;
    let start_time = u64_at(body + chunk::START_TIME)?;
    let end_time = u64_at(body + chunk::END_TIME)?;
    let uncompressed_size = u64_at(body + chunk::UNCOMPRESSED_SIZE)?;
    let name_len = le_u32(field(body + chunk::COMPRESSION_LEN, 4)?, 0) as usize;
    let name_at = body + chunk::COMPRESSION;
    let name_end = name_at
        .checked_add(name_len)
        .ok_or(McapFormatError::CompressionNameOutOfBounds)?;
    let compression = std::str::from_utf8(field(name_at, name_len)?)
        .map_err(|_| McapFormatError::CompressionNameNotUtf8.in_chunk(offset as u64))?
        .to_string();
    let records_len = u64_at(name_end)?;
    let records_start = name_end + 8;
    let present = rest.len() as u64;
    let record_len = body_len.saturating_add(HEADER_LEN as u64);
    if (records_start as u64).saturating_add(records_len) != record_len {
        return Err(McapFormatError::CutChunkLengthMismatch {
            offset,
            records_len,
            record_len,
        });
    }
    let Some(kind) = CompressionFormat::parse(&compression)
        .ok()
        .filter(|c| CompressionFormat::chunks_of(StorageId::Mcap).contains(c))
        .filter(|c| *c != CompressionFormat::None || compression.is_empty())
    else {
        return Err(McapFormatError::UnsupportedCompression { compression }.in_chunk(offset as u64));
    };
    let records_at = offset + records_start;
    let decoded = if kind == CompressionFormat::None {
        let end = data
            .len()
            .min(records_at.saturating_add(usize::try_from(uncompressed_size).unwrap_or(0)));
        data.slice(records_at.min(end)..end)
    } else {
        let compressed = data.get(records_at..).unwrap_or_default();
        Bytes::from(decompress_prefix(kind, compressed, uncompressed_size))
    };
    Ok((
        CutChunk {
            offset: offset as u64,
            record_len,
            present,
            start_time,
            end_time,
            compression,
            uncompressed_size,
            decoded: decoded.len() as u64,
            kept: 0,
            messages: 0,
            last_time: None,
        },
        decoded,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_chunk_header_is_an_error_not_a_panic() {
        let mut chunk = vec![0x06u8];
        chunk.extend(100u64.to_le_bytes());
        let data = Bytes::from(chunk);
        for cut in 0..data.len() {
            assert!(read_cut_chunk(&data.slice(..cut), 0).is_err());
        }
        assert!(read_cut_chunk(&data, 5).is_err());
    }
}
