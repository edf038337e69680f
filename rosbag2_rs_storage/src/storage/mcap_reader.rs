//! MCAP storage reader.
//!
//! The file is memory-mapped ([`mapped_file`]: a file truncated by another process while it is
//! read gives [`McapFormatError::TruncatedWhileReading`], not a crash); payloads of uncompressed chunks are handed out as slices of the
//! mapping and payloads of compressed chunks as slices of the decompressed chunk, so no message
//! is copied. Messages come out in log-time (receive-time) order: chunks are taken in order of
//! their start time, chunks whose time ranges overlap are decoded together and merged, and a
//! chunk whose messages are out of order is sorted. Seeking skips whole chunks by their index.
//!
//! A file with a summary section is opened from it without touching the data. A file without
//! one (written without a summary, or cut short by a crash) is scanned record by record; in
//! [`OpenMode::Strict`] a truncated or corrupted file is an error, in [`OpenMode::Recover`]
//! every intact chunk is read, the readable prefix of a chunk cut by the end of the file too
//! (the crate's recovery of cut chunks), and the rest skipped with a warning; [`McapReader::damage`]
//! then tells what was damaged.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use mcap::records::op;

use super::mapped_file::{self, Watch};
use super::mcap_records::{
    check_lengths, check_summary, check_summary_indexes, le_u16, le_u64, message, metadata_at,
    parse_checked, parse_chunk_header, ChunkHeader, McapFormatError, Records, RECORD_HEADER,
};
use crate::error::{Result, StorageError};
use crate::filter::TopicFilter;
use crate::formats::StorageId;
use crate::limits;
use crate::message::{SerializedMessage, TopicMetadata};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use crate::qos;
use crate::recover::mcap::{
    read_cut_chunk, CutRecord, IgnoredChunkIndex, McapDamage, SkippedChunk,
};
use crate::storage::plugin::{OpenMode, StorageReader};
use rosbag2_rs_codec::MessageDefinition;

/// Loose (unchunked) message records are grouped into runs of at most this many.
const LOOSE_RUN: usize = 4096;

/// Where the records of one decodable unit live.
#[derive(Debug, Clone)]
enum Unit {
    /// A chunk record at this file offset.
    Chunk { offset: u64 },
    /// A byte range of top-level records holding loose messages.
    Records { start: u64, end: u64 },
    /// Whole records recovered from a chunk cut by the end of the file.
    Decoded { records: Bytes },
}

#[derive(Debug, Clone)]
struct UnitRef {
    start_time: u64,
    end_time: u64,
    file_offset: u64,
    unit: Unit,
}

/// Message statistics gathered by a scan.
struct ScanStats {
    first: u64,
    last: u64,
    count: u64,
}

impl Default for ScanStats {
    fn default() -> Self {
        Self {
            first: u64::MAX,
            last: 0,
            count: 0,
        }
    }
}

/// A run of loose message records being gathered by a scan.
#[derive(Default)]
struct LooseRun {
    start: u64,
    end: u64,
    times: Option<(u64, u64)>,
    len: usize,
}

impl LooseRun {
    fn add(&mut self, record_start: u64, record_end: u64, t: u64) {
        if self.len == 0 {
            self.start = record_start;
        }
        self.end = record_end;
        self.times = Some(self.times.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        self.len += 1;
    }

    fn flush_into(&mut self, units: &mut Vec<UnitRef>) {
        if let Some((start_time, end_time)) = self.times.take() {
            units.push(UnitRef {
                start_time,
                end_time,
                file_offset: self.start,
                unit: Unit::Records {
                    start: self.start,
                    end: self.end,
                },
            });
        }
        self.len = 0;
    }
}

#[derive(Debug, Clone)]
struct ChannelEntry {
    topic: Arc<str>,
    topic_index: usize,
    selected: bool,
}

/// Reads one `.mcap` file.
pub struct McapReader {
    path: PathBuf,
    data: Bytes,
    /// Tells whether `data`, when mapped, was truncated under the reader.
    watch: Watch,
    channels: Vec<Option<ChannelEntry>>,
    /// Schema id -> type name, for channels met during a scan.
    schema_ids: HashMap<u16, String>,
    topics: Vec<TopicInformation>,
    definitions: Vec<MessageDefinition>,
    units: Vec<UnitRef>,
    info: FileInformation,
    embedded: Option<BagMetadata>,
    seek_time: u64,
    next_unit: usize,
    pending: std::vec::IntoIter<SerializedMessage>,
    damage: McapDamage,
    /// Compression of the first chunk met (`""` for uncompressed), if any.
    chunk_compression: Option<String>,
}

impl McapReader {
    /// Opens `path`; see the module documentation for what `mode` changes.
    pub fn open(path: &Path, mode: OpenMode) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| StorageError::io(path, e))?;
        let len = file
            .metadata()
            .map_err(|e| StorageError::io(path, e))?
            .len();
        if len < mcap::MAGIC.len() as u64 {
            return Err(format_error(path, McapFormatError::TooShort { len }));
        }
        let (data, watch) = mapped_file::map(&file).map_err(|e| StorageError::io(path, e))?;
        Self::from_data(path, data, watch, mode)
    }

    /// Reads an MCAP file held in memory; `path` names it in errors and as the reader's file.
    pub fn from_bytes(path: &Path, data: Bytes, mode: OpenMode) -> Result<Self> {
        Self::from_data(path, data, Watch::NONE, mode)
    }

    /// Reads an MCAP file mapped by [`mapped_file::map`] (a decompressed `.mcap.zstd`); `path`
    /// names it in errors and as the reader's file.
    pub fn from_mapping(
        path: &Path,
        (data, watch): (Bytes, Watch),
        mode: OpenMode,
    ) -> Result<Self> {
        Self::from_data(path, data, watch, mode)
    }

    fn from_data(path: &Path, data: Bytes, watch: Watch, mode: OpenMode) -> Result<Self> {
        let len = data.len() as u64;
        if len < mcap::MAGIC.len() as u64 {
            return Err(format_error(path, McapFormatError::TooShort { len }));
        }
        if !data.starts_with(mcap::MAGIC) {
            return Err(format_error(path, McapFormatError::BadMagic));
        }
        let mut reader = Self {
            path: path.to_path_buf(),
            data,
            watch,
            channels: Vec::new(),
            schema_ids: HashMap::new(),
            topics: Vec::new(),
            definitions: Vec::new(),
            units: Vec::new(),
            info: FileInformation {
                path: crate::formats::uncompressed_name(&file_name(path)).to_string(),
                ..Default::default()
            },
            embedded: None,
            seek_time: 0,
            next_unit: 0,
            pending: Vec::new().into_iter(),
            damage: McapDamage {
                file_len: len,
                ..McapDamage::default()
            },
            chunk_compression: None,
        };
        let complete = reader.data.len() >= 16 && reader.data.ends_with(mcap::MAGIC);
        let summary = if complete {
            check_summary(&reader.data)
                .and_then(|()| {
                    mcap::Summary::read(&reader.data)
                        .map_err(|source| McapFormatError::BadSummary { source })
                })
                .and_then(|summary| match summary {
                    Some(s) => check_summary_indexes(&s, len).map(|()| Some(s)),
                    None => Ok(None),
                })
        } else {
            Ok(None)
        };
        match summary {
            Ok(Some(summary)) if reader.open_from_summary(&summary)? => {}
            Ok(_) if complete => reader.scan(OpenMode::Strict)?,
            Ok(_) if mode == OpenMode::Strict => {
                return Err(format_error(path, McapFormatError::NoFooter));
            }
            Err(e) if mode == OpenMode::Strict => return Err(format_error(path, e)),
            _ => reader.scan(OpenMode::Recover)?,
        }
        reader.check_mapping()?;
        reader.units.sort_by_key(|u| (u.start_time, u.file_offset));
        Ok(reader)
    }

    /// Whether the file lacks a valid footer and summary (it needs repair to be read strictly).
    pub fn needs_repair(path: &Path) -> Result<bool> {
        match Self::open(path, OpenMode::Strict) {
            Ok(_) => Ok(false),
            Err(StorageError::Corrupt { .. } | StorageError::McapFormat { .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// What was found damaged so far (empty for an intact file): by a scan in
    /// [`OpenMode::Recover`], and in either mode the chunks skipped because they failed their
    /// checks (when opening a file without a summary, or when reading).
    pub fn damage(&self) -> &McapDamage {
        &self.damage
    }

    /// The compression of the file's chunks (`""`: uncompressed), `None` when it has none.
    pub fn chunk_compression(&self) -> Option<&str> {
        self.chunk_compression.as_deref()
    }

    fn format_error(&self, source: McapFormatError) -> StorageError {
        match self.watch.truncated() {
            // Whatever was wrong came from the zeros that replaced the lost part of the file.
            true => format_error(&self.path, McapFormatError::TruncatedWhileReading),
            false => format_error(&self.path, source),
        }
    }

    /// An error when the file was truncated under the reader (see [`mapped_file`]).
    fn check_mapping(&self) -> Result<()> {
        match self.watch.truncated() {
            true => Err(format_error(
                &self.path,
                McapFormatError::TruncatedWhileReading,
            )),
            false => Ok(()),
        }
    }

    /// Uses the summary section; returns false when it lacks what is needed (chunk indexes for
    /// chunked data, statistics, the channels with messages), so that the caller scans instead.
    fn open_from_summary(&mut self, summary: &mcap::Summary) -> Result<bool> {
        let Some(stats) = &summary.stats else {
            return Ok(false);
        };
        if summary.chunk_indexes.is_empty() && stats.message_count > 0 {
            return Ok(false);
        }
        // A summary need not repeat the channels (`noRepeatedChannels`): channels with messages
        // that it lacks are found by scanning.
        if stats
            .channel_message_counts
            .keys()
            .any(|id| !summary.channels.contains_key(id))
        {
            return Ok(false);
        }
        let mut schemas: Vec<_> = summary.schemas.values().collect();
        schemas.sort_by_key(|s| s.id);
        for schema in schemas {
            self.add_schema(&schema.name, &schema.encoding, &schema.data);
        }
        let mut channels: Vec<_> = summary.channels.values().collect();
        channels.sort_by_key(|c| c.id);
        for ch in channels {
            let type_name = ch
                .schema
                .as_ref()
                .map(|s| s.name.clone())
                .unwrap_or_default();
            self.add_channel(
                ch.id,
                &ch.topic,
                &type_name,
                &ch.message_encoding,
                &ch.metadata,
            );
        }
        for (id, count) in &stats.channel_message_counts {
            if let Some(Some(entry)) = self.channels.get(*id as usize) {
                let topic = &mut self.topics[entry.topic_index];
                topic.message_count = topic.message_count.saturating_add(*count);
            }
        }
        for ci in self.distinct_chunks(&summary.chunk_indexes) {
            self.units.push(UnitRef {
                start_time: ci.message_start_time,
                end_time: ci.message_end_time,
                file_offset: ci.chunk_start_offset,
                unit: Unit::Chunk {
                    offset: ci.chunk_start_offset,
                },
            });
        }
        if stats.message_count > 0 {
            self.info.starting_time = stats.message_start_time as i64;
            self.info.duration = stats
                .message_end_time
                .saturating_sub(stats.message_start_time) as i64;
        }
        self.info.message_count = stats.message_count;
        if let Some(index) = summary
            .metadata_indexes
            .iter()
            .find(|m| m.name == "rosbag2")
        {
            match metadata_at(&self.data, index) {
                Ok(record) => self.set_embedded(&record.metadata),
                Err(e) => log::warn!(
                    "{}: unreadable rosbag2 metadata record: {e}",
                    self.path.display()
                ),
            }
        }
        Ok(true)
    }

    /// The chunk indexes of the summary, each chunk once: an entry listing a chunk listed
    /// before, or a byte range inside one listed before, is skipped with a warning (its
    /// messages would be read twice). The entries have been checked against the file.
    fn distinct_chunks<'s>(
        &mut self,
        indexes: &'s [mcap::records::ChunkIndex],
    ) -> Vec<&'s mcap::records::ChunkIndex> {
        let mut sorted: Vec<_> = indexes.iter().collect();
        sorted.sort_by_key(|ci| (ci.chunk_start_offset, std::cmp::Reverse(ci.chunk_length)));
        let mut kept: Vec<&mcap::records::ChunkIndex> = Vec::with_capacity(sorted.len());
        for ci in sorted {
            let Some(last) = kept.last() else {
                kept.push(ci);
                continue;
            };
            let last_end = last.chunk_start_offset + last.chunk_length;
            if ci.chunk_start_offset >= last_end {
                kept.push(ci);
                continue;
            }
            let what = match ci.chunk_start_offset == last.chunk_start_offset {
                true => "lists the chunk again".to_string(),
                false => format!(
                    "points inside the chunk at offset {} ({} bytes)",
                    last.chunk_start_offset, last.chunk_length
                ),
            };
            log::warn!(
                "{}: a chunk index entry (chunk at offset {}, {} bytes, messages received from {} to {} ns) {what}; skipping the entry: each chunk is read once",
                self.path.display(),
                ci.chunk_start_offset,
                ci.chunk_length,
                ci.message_start_time,
                ci.message_end_time
            );
            self.damage.ignored_chunk_indexes.push(IgnoredChunkIndex {
                offset: ci.chunk_start_offset,
                length: ci.chunk_length,
                reason: what,
            });
        }
        kept
    }

    /// Reads the file record by record, building the unit list, topics and statistics.
    fn scan(&mut self, mode: OpenMode) -> Result<()> {
        let data = self.data.clone();
        let mut stats = ScanStats::default();
        let mut run = LooseRun::default();
        let records = Records {
            buf: &data,
            pos: mcap::MAGIC.len(),
        };
        let mut next_record = mcap::MAGIC.len();
        for record in records {
            let (op, body, end) = match record {
                Ok(r) => r,
                Err(reason) => {
                    self.damaged(
                        mode,
                        McapFormatError::Truncated {
                            source: Box::new(reason),
                        },
                    )?;
                    run.flush_into(&mut self.units);
                    self.recover_cut_record(next_record, &mut stats);
                    break;
                }
            };
            next_record = end;
            let record_start = (body - RECORD_HEADER) as u64;
            match op {
                op::SCHEMA | op::CHANNEL => {
                    if let Err(reason) = self.register_record(op, &data[body..end]) {
                        self.damaged(mode, reason)?;
                    }
                }
                op::MESSAGE if end - body >= message::DATA => {
                    let t = le_u64(&data, body + message::LOG_TIME);
                    run.add(record_start, end as u64, t);
                    self.count_message(le_u16(&data, body + message::CHANNEL_ID), t, &mut stats);
                    if run.len >= LOOSE_RUN {
                        run.flush_into(&mut self.units);
                    }
                }
                op::MESSAGE => self.damaged(
                    mode,
                    McapFormatError::MessageTooShortAt {
                        offset: record_start,
                    },
                )?,
                op::CHUNK => {
                    run.flush_into(&mut self.units);
                    match self.scan_chunk(record_start, &mut stats) {
                        Ok(unit) => self.units.push(unit),
                        Err(error) => {
                            // A damaged chunk hides only itself, in either mode: its length is
                            // known, so the scan goes on with the next record.
                            self.check_mapping()?;
                            let time_range = parse_chunk_header(&data, body, end)
                                .ok()
                                .map(|h| (h.start_time, h.end_time));
                            self.skip_chunk(record_start, time_range, &error);
                        }
                    }
                }
                op::METADATA => match check_lengths(op, &data[body..end]).map(|()| {
                    mcap::parse_record(op, &data[body..end]).map_err(|source| {
                        McapFormatError::BadMetadata {
                            offset: record_start,
                            source,
                        }
                    })
                }) {
                    Ok(Ok(mcap::records::Record::Metadata(m))) if m.name == "rosbag2" => {
                        self.set_embedded(&m.metadata)
                    }
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) | Err(e) => self.damaged(mode, e)?,
                },
                op::DATA_END => break,
                // Indexes, attachments and statistics are not needed to read messages; a run of
                // loose messages may span them.
                _ => {}
            }
        }
        run.flush_into(&mut self.units);
        if stats.count > 0 {
            self.info.starting_time = stats.first as i64;
            self.info.duration = (stats.last - stats.first) as i64;
        }
        self.info.message_count = stats.count;
        Ok(())
    }

    /// Recovers what the record at `at`, cut by the end of the file, holds: the whole records
    /// of a chunk's readable prefix (see [`crate::recover::mcap`]); any other record is noted.
    fn recover_cut_record(&mut self, at: usize, stats: &mut ScanStats) {
        let data = self.data.clone();
        let rest = data.get(at..).unwrap_or_default();
        let opcode = rest.first().copied();
        if opcode == Some(op::CHUNK) {
            match self.recover_cut_chunk(at, stats) {
                Ok(()) => return,
                Err(reason) => log::warn!(
                    "{}: nothing recovered from the cut chunk: {reason}",
                    self.path.display()
                ),
            }
        }
        let record_len = rest
            .get(1..RECORD_HEADER)
            .map(|b| le_u64(b, 0).saturating_add(RECORD_HEADER as u64));
        let log_at = RECORD_HEADER + message::LOG_TIME;
        let log_time = (opcode == Some(op::MESSAGE))
            .then(|| rest.get(log_at..log_at + 8).map(|b| le_u64(b, 0)))
            .flatten();
        self.damage.cut_record = Some(CutRecord {
            offset: at as u64,
            opcode,
            record_len,
            present: rest.len() as u64,
            log_time,
        });
    }

    /// Keeps the whole, well-formed records of the readable prefix of the chunk at `at`.
    fn recover_cut_chunk(
        &mut self,
        at: usize,
        stats: &mut ScanStats,
    ) -> std::result::Result<(), McapFormatError> {
        let (mut cut, decoded) = read_cut_chunk(&self.data, at)?;
        self.chunk_compression
            .get_or_insert_with(|| cut.compression.clone());
        let (mut kept, mut times) = (0, (u64::MAX, 0u64));
        for record in (Records {
            buf: &decoded,
            pos: 0,
        }) {
            let Ok((op, body, end)) = record else {
                break;
            };
            let whole = match op {
                op::SCHEMA | op::CHANNEL => self.register_record(op, &decoded[body..end]).is_ok(),
                op::MESSAGE if end - body >= message::DATA => {
                    let channel = le_u16(&decoded, body + message::CHANNEL_ID);
                    let known = self
                        .channels
                        .get(channel as usize)
                        .is_some_and(Option::is_some);
                    if known {
                        let t = le_u64(&decoded, body + message::LOG_TIME);
                        times = (times.0.min(t), times.1.max(t));
                        self.count_message(channel, t, stats);
                        cut.messages += 1;
                        cut.last_time = Some(times.1);
                    }
                    known
                }
                _ => false,
            };
            if !whole {
                log::warn!(
                    "{}: cut chunk at offset {at}: record at chunk offset {} is not well formed; keeping what precedes it",
                    self.path.display(),
                    body - 9
                );
                break;
            }
            kept = end;
        }
        cut.kept = kept as u64;
        log::warn!(
            "{}: chunk at offset {at} cut by the end of the file: {} messages recovered from its {} decoded bytes",
            self.path.display(),
            cut.messages,
            cut.decoded
        );
        if cut.messages > 0 {
            self.units.push(UnitRef {
                start_time: times.0,
                end_time: times.1,
                file_offset: at as u64,
                unit: Unit::Decoded {
                    records: decoded.slice(..kept),
                },
            });
        }
        self.damage.cut_chunk = Some(cut);
        Ok(())
    }

    /// Notes the damaged chunk at `offset` (what its header or index says it held) and warns
    /// about it once; readers go on with the next chunk.
    fn skip_chunk(&mut self, offset: u64, time_range: Option<(u64, u64)>, error: &McapFormatError) {
        if self
            .damage
            .skipped_chunks
            .iter()
            .any(|c| c.offset == offset)
        {
            return;
        }
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        let record_len = self
            .data
            .get(at..)
            .filter(|rest| rest.len() >= RECORD_HEADER)
            .map_or(0, |rest| {
                le_u64(rest, 1).saturating_add(RECORD_HEADER as u64)
            });
        let messages = indexed_messages(&self.data, offset.saturating_add(record_len));
        let lost = match (messages, time_range) {
            (Some(n), Some((a, b))) => format!("{n} messages received from {a} to {b} ns lost"),
            (Some(n), None) => format!("{n} messages lost"),
            (None, Some((a, b))) => format!("the messages received from {a} to {b} ns lost"),
            (None, None) => "its messages lost".to_string(),
        };
        log::warn!(
            "{}: {error}; skipping the chunk ({lost}); `ros2bag-rs reindex` rewrites the file without it",
            self.path.display()
        );
        self.damage.skipped_chunks.push(SkippedChunk {
            offset,
            record_len,
            time_range,
            messages,
            reason: error.to_string(),
        });
    }

    /// A damaged part of the file: an error when strict, a warning when recovering.
    fn damaged(&self, mode: OpenMode, reason: McapFormatError) -> Result<()> {
        match mode {
            OpenMode::Strict => Err(self.format_error(reason)),
            OpenMode::Recover => {
                log::warn!("{}: {reason}; skipping it", self.path.display());
                Ok(())
            }
        }
    }

    /// Decodes a chunk found by a scan: registers its schemas and channels, counts messages.
    fn scan_chunk(
        &mut self,
        offset: u64,
        stats: &mut ScanStats,
    ) -> std::result::Result<UnitRef, McapFormatError> {
        let (header, records) = self.decompress_chunk(offset)?;
        self.chunk_compression
            .get_or_insert_with(|| header.compression.clone());
        let mut times = (u64::MAX, 0u64);
        for record in (Records {
            buf: &records,
            pos: 0,
        }) {
            let (op, body, end) = record.map_err(|e| e.in_chunk(offset))?;
            match op {
                op::SCHEMA | op::CHANNEL => self.register_record(op, &records[body..end])?,
                op::MESSAGE if end - body >= message::DATA => {
                    let t = le_u64(&records, body + message::LOG_TIME);
                    times = (times.0.min(t), times.1.max(t));
                    self.count_message(le_u16(&records, body + message::CHANNEL_ID), t, stats);
                }
                op::MESSAGE => return Err(McapFormatError::MessageTooShort.in_chunk(offset)),
                _ => {}
            }
        }
        if times.0 == u64::MAX {
            times = (header.start_time, header.end_time);
        }
        Ok(UnitRef {
            start_time: times.0,
            end_time: times.1,
            file_offset: offset,
            unit: Unit::Chunk { offset },
        })
    }

    fn count_message(&mut self, channel: u16, t: u64, stats: &mut ScanStats) {
        stats.first = stats.first.min(t);
        stats.last = stats.last.max(t);
        stats.count += 1;
        if let Some(Some(entry)) = self.channels.get(channel as usize) {
            self.topics[entry.topic_index].message_count += 1;
        }
    }

    fn register_record(
        &mut self,
        opcode: u8,
        body: &[u8],
    ) -> std::result::Result<(), McapFormatError> {
        match parse_checked(opcode, body)? {
            mcap::records::Record::Schema { header, data } => {
                if !self.definitions.iter().any(|d| d.topic_type == header.name) {
                    self.add_schema(&header.name, &header.encoding, &data);
                }
                self.schema_ids.insert(header.id, header.name);
            }
            mcap::records::Record::Channel(ch) => {
                let known = self
                    .channels
                    .get(ch.id as usize)
                    .is_some_and(Option::is_some);
                if !known {
                    let type_name = self
                        .schema_ids
                        .get(&ch.schema_id)
                        .cloned()
                        .unwrap_or_default();
                    self.add_channel(
                        ch.id,
                        &ch.topic,
                        &type_name,
                        &ch.message_encoding,
                        &ch.metadata,
                    );
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn add_schema(&mut self, name: &str, encoding: &str, data: &[u8]) {
        self.definitions.push(MessageDefinition {
            topic_type: name.to_string(),
            encoding: encoding.to_string(),
            encoded_message_definition: String::from_utf8_lossy(data).into_owned(),
            type_description_hash: String::new(),
        });
    }

    fn add_channel(
        &mut self,
        id: u16,
        topic: &str,
        type_name: &str,
        encoding: &str,
        metadata: &BTreeMap<String, String>,
    ) {
        let topic_index = match self
            .topics
            .iter()
            .position(|t| t.topic_metadata.name == topic)
        {
            Some(i) => i,
            None => {
                let offered_qos_profiles = metadata
                    .get("offered_qos_profiles")
                    .map(|text| {
                        qos::parse_profiles(text).unwrap_or_else(|e| {
                            log::warn!("{}: topic '{topic}': unreadable offered_qos_profiles ({e}); ignoring them", self.path.display());
                            Vec::new()
                        })
                    })
                    .unwrap_or_default();
                self.topics.push(TopicInformation {
                    topic_metadata: TopicMetadata {
                        name: topic.to_string(),
                        type_name: type_name.to_string(),
                        serialization_format: encoding.to_string(),
                        offered_qos_profiles,
                        type_description_hash: metadata
                            .get("topic_type_hash")
                            .cloned()
                            .unwrap_or_default(),
                    },
                    message_count: 0,
                });
                self.topics.len() - 1
            }
        };
        let shared: Arc<str> = self
            .channels
            .iter()
            .flatten()
            .find(|c| c.topic_index == topic_index)
            .map(|c| c.topic.clone())
            .unwrap_or_else(|| topic.into());
        if self.channels.len() <= id as usize {
            self.channels.resize(id as usize + 1, None);
        }
        self.channels[id as usize] = Some(ChannelEntry {
            topic: shared,
            topic_index,
            selected: true,
        });
    }

    fn set_embedded(&mut self, metadata: &BTreeMap<String, String>) {
        if let Some(text) = metadata.get("serialized_metadata") {
            match BagMetadata::from_yaml_str(text, &self.path) {
                Ok(m) => self.embedded = Some(m),
                Err(e) => log::warn!("embedded rosbag2 metadata ignored: {e}"),
            }
        }
    }

    /// Parses the header of the chunk record at `offset`.
    fn chunk_header(&self, offset: u64) -> std::result::Result<ChunkHeader, McapFormatError> {
        let data = &self.data;
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        if data.len().saturating_sub(RECORD_HEADER) < at || data[at] != op::CHUNK {
            return Err(McapFormatError::NoChunk { offset });
        }
        let end = usize::try_from(le_u64(data, at + 1))
            .ok()
            .and_then(|len| (at + RECORD_HEADER).checked_add(len))
            .filter(|&e| e <= data.len())
            .ok_or(McapFormatError::ChunkPastEnd { offset })?;
        parse_chunk_header(data, at + RECORD_HEADER, end).map_err(|e| e.in_chunk(offset))
    }

    /// Reads and checks the chunk record at `offset`; returns its header and records.
    fn decompress_chunk(
        &self,
        offset: u64,
    ) -> std::result::Result<(ChunkHeader, Bytes), McapFormatError> {
        let data = &self.data;
        let header = self.chunk_header(offset)?;
        let size = limits::check_chunk_size(header.uncompressed_size)
            .map_err(|e| McapFormatError::ChunkTooLarge(e).in_chunk(offset))?;
        let compressed = &data[header.records.clone()];
        let decompress_error = |compression, source| {
            McapFormatError::Decompress {
                compression,
                source,
            }
            .in_chunk(offset)
        };
        let mut out = Vec::new();
        let records = match header.compression.as_str() {
            "" => data.slice(header.records.clone()),
            "zstd" => {
                zstd::stream::read::Decoder::with_buffer(compressed)
                    .and_then(|d| limits::read_declared(d, size, &mut out))
                    .map_err(|e| decompress_error("zstd", e))?;
                Bytes::from(out)
            }
            "lz4" => {
                lz4::Decoder::new(compressed)
                    .and_then(|d| limits::read_declared(d, size, &mut out))
                    .map_err(|e| decompress_error("lz4", e))?;
                Bytes::from(out)
            }
            other => {
                return Err(McapFormatError::UnsupportedCompression {
                    compression: other.to_string(),
                }
                .in_chunk(offset))
            }
        };
        if records.len() as u64 != header.uncompressed_size {
            return Err(McapFormatError::SizeMismatch {
                actual: records.len() as u64,
                expected: header.uncompressed_size,
            }
            .in_chunk(offset));
        }
        if header.uncompressed_crc != 0 && crc32fast::hash(&records) != header.uncompressed_crc {
            return Err(McapFormatError::CrcMismatch.in_chunk(offset));
        }
        Ok((header, records))
    }

    /// Appends the selected messages at or after the seek time from one unit to `out`.
    fn decode_unit(&self, unit: &UnitRef, out: &mut Vec<SerializedMessage>) -> Result<()> {
        let (buf, range) = match unit.unit {
            Unit::Chunk { offset } => {
                let (_, records) = self
                    .decompress_chunk(offset)
                    .map_err(|e| self.format_error(e))?;
                let len = records.len();
                (records, 0..len)
            }
            Unit::Records { start, end } => (self.data.clone(), start as usize..end as usize),
            Unit::Decoded { ref records } => (records.clone(), 0..records.len()),
        };
        let records = Records {
            buf: &buf[..range.end],
            pos: range.start,
        };
        for record in records {
            let (op, body, end) = record.map_err(|e| self.format_error(e))?;
            if op != op::MESSAGE || end - body < message::DATA {
                continue;
            }
            let log_time = le_u64(&buf, body + message::LOG_TIME);
            if log_time < self.seek_time {
                continue;
            }
            let Some(Some(channel)) = self
                .channels
                .get(le_u16(&buf, body + message::CHANNEL_ID) as usize)
            else {
                continue;
            };
            if !channel.selected {
                continue;
            }
            out.push(SerializedMessage {
                topic: channel.topic.clone(),
                recv_timestamp: log_time as i64,
                send_timestamp: le_u64(&buf, body + message::PUBLISH_TIME) as i64,
                data: buf.slice(body + message::DATA..end),
            });
        }
        Ok(())
    }

    /// Decodes the next group of units whose time ranges overlap, merged in time order.
    fn load_next_group(&mut self) -> Result<()> {
        let first = self.next_unit;
        let (last, end_time) = group_end(&self.units, first);
        self.next_unit = last;
        if end_time < self.seek_time {
            return Ok(());
        }
        let mut group: Vec<UnitRef> = self.units[first..last].to_vec();
        group.sort_by_key(|u| u.file_offset);
        // The group's compressed chunks are held decompressed at once: what they declare must
        // fit the file's budget (uncompressed chunks are slices of the file; a chunk beyond
        // the cap on one chunk is skipped as damaged without being decompressed).
        let declared = group.iter().filter_map(|u| match u.unit {
            Unit::Chunk { offset } => self
                .chunk_header(offset)
                .ok()
                .filter(|h| !h.compression.is_empty())
                .map(|h| h.uncompressed_size)
                .filter(|&size| limits::check_chunk_size(size).is_ok()),
            _ => None,
        });
        if let Err(source) = limits::check_alive(declared) {
            return Err(self.format_error(McapFormatError::OverAliveBudget {
                offset: group[0].file_offset,
                source,
            }));
        }
        let mut out = Vec::new();
        for unit in group {
            let kept = out.len();
            match (self.decode_unit(&unit, &mut out), &unit.unit) {
                (Ok(()), _) => {}
                // A chunk that fails its checks (CRC, decompression, records) is skipped; a
                // file truncated under the reader is not a damaged chunk and stays an error.
                (Err(StorageError::McapFormat { source, .. }), Unit::Chunk { offset })
                    if !self.watch.truncated() =>
                {
                    out.truncate(kept);
                    self.skip_chunk(*offset, Some((unit.start_time, unit.end_time)), &source);
                }
                (Err(e), _) => return Err(e),
            }
        }
        self.check_mapping()?;
        if !out.is_sorted_by_key(|m| m.recv_timestamp) {
            out.sort_by_key(|m| m.recv_timestamp);
        }
        self.pending = out.into_iter();
        Ok(())
    }
}

/// The number of messages the message index records right after a chunk (ending at `chunk_end`)
/// list for it; `None` when no index follows the chunk or it is malformed.
fn indexed_messages(data: &[u8], chunk_end: u64) -> Option<u64> {
    // Message index: channel id (u16), then its entries (log time, offset: 16 bytes each) as an
    // array prefixed by its byte length (u32).
    const ENTRY: u64 = 16;
    let mut at = usize::try_from(chunk_end).ok()?;
    let mut count = None;
    while data.get(at) == Some(&op::MESSAGE_INDEX) {
        let header = data.get(at..at + RECORD_HEADER + 6)?;
        let body_len = le_u64(header, 1);
        let entries_len = u64::from(u32::from_le_bytes(
            header[RECORD_HEADER + 2..RECORD_HEADER + 6]
                .try_into()
                .ok()?,
        ));
        if entries_len % ENTRY != 0 || entries_len + 6 > body_len {
            return None;
        }
        count = Some(count.unwrap_or(0) + entries_len / ENTRY);
        at = at
            .checked_add(RECORD_HEADER)?
            .checked_add(usize::try_from(body_len).ok()?)?;
    }
    count
}

/// The group of units starting at `first` (of units sorted by start time): it extends while the
/// next unit starts at or before the latest end time so far, so that messages of overlapping
/// units are merged. Returns the index after the group and the group's end time.
fn group_end(units: &[UnitRef], first: usize) -> (usize, u64) {
    let mut end_time = units[first].end_time;
    let mut last = first + 1;
    while last < units.len() && units[last].start_time <= end_time {
        end_time = end_time.max(units[last].end_time);
        last += 1;
    }
    (last, end_time)
}

fn format_error(path: &Path, source: McapFormatError) -> StorageError {
    StorageError::McapFormat {
        path: path.to_path_buf(),
        source,
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl StorageReader for McapReader {
    fn path(&self) -> &Path {
        &self.path
    }

    fn storage_id(&self) -> StorageId {
        StorageId::Mcap
    }

    fn topics(&self) -> &[TopicInformation] {
        &self.topics
    }

    fn message_definitions(&self) -> &[MessageDefinition] {
        &self.definitions
    }

    fn set_filter(&mut self, filter: &TopicFilter) {
        for entry in self.channels.iter_mut().flatten() {
            entry.selected = filter.matches(&entry.topic);
        }
        let pending = std::mem::take(&mut self.pending);
        self.pending = pending
            .filter(|m| filter.matches(&m.topic))
            .collect::<Vec<_>>()
            .into_iter();
    }

    fn seek(&mut self, time_ns: i64) -> Result<()> {
        self.seek_time = time_ns.max(0) as u64;
        self.next_unit = 0;
        self.pending = Vec::new().into_iter();
        Ok(())
    }

    fn read_next(&mut self) -> Result<Option<SerializedMessage>> {
        loop {
            if let Some(message) = self.pending.next() {
                return Ok(Some(message));
            }
            if self.next_unit >= self.units.len() {
                return Ok(None);
            }
            self.load_next_group()?;
        }
    }

    fn file_information(&self) -> FileInformation {
        self.info.clone()
    }

    fn embedded_metadata(&self) -> Option<BagMetadata> {
        self.embedded.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(start_time: u64, end_time: u64, file_offset: u64) -> UnitRef {
        UnitRef {
            start_time,
            end_time,
            file_offset,
            unit: Unit::Chunk {
                offset: file_offset,
            },
        }
    }

    fn groups(units: &[UnitRef]) -> Vec<(usize, usize, u64)> {
        let mut out = Vec::new();
        let mut first = 0;
        while first < units.len() {
            let (last, end) = group_end(units, first);
            out.push((first, last, end));
            first = last;
        }
        out
    }

    #[test]
    fn overlapping_units_are_grouped_transitively() {
        let units = [
            unit(0, 10, 100),
            unit(5, 20, 200),
            unit(21, 30, 300),
            unit(30, 40, 400),
            unit(32, 35, 500),
            unit(50, 60, 600),
        ];
        assert_eq!(groups(&units), vec![(0, 2, 20), (2, 5, 40), (5, 6, 60)]);
        // A long unit swallows every later one it overlaps, even through gaps between them.
        let units = [
            unit(0, 100, 1),
            unit(10, 11, 2),
            unit(50, 51, 3),
            unit(101, 102, 4),
        ];
        assert_eq!(groups(&units), vec![(0, 3, 100), (3, 4, 102)]);
    }

    /// An MCAP file of one channel whose chunks hold `chunks` (log times), in that order.
    fn mcap_with_chunks(chunks: &[&[u64]]) -> Bytes {
        mcap_compressed_chunks(chunks, None)
    }

    /// [`mcap_with_chunks`] with its chunks compressed by `compression`.
    fn mcap_compressed_chunks(chunks: &[&[u64]], compression: Option<mcap::Compression>) -> Bytes {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut writer = mcap::WriteOptions::new()
            .compression(compression)
            .create(&mut out)
            .unwrap();
        let schema = writer
            .add_schema("std_msgs/msg/String", "ros2msg", b"string data")
            .unwrap();
        let channel = writer
            .add_channel(schema, "/t", "cdr", &BTreeMap::new())
            .unwrap();
        for times in chunks {
            for &t in *times {
                let header = mcap::records::MessageHeader {
                    channel_id: channel,
                    sequence: 0,
                    log_time: t,
                    publish_time: t,
                };
                writer
                    .write_to_known_channel(&header, &t.to_le_bytes())
                    .unwrap();
            }
            writer.flush().unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        Bytes::from(out.into_inner())
    }

    fn read_times(reader: &mut McapReader) -> Vec<i64> {
        std::iter::from_fn(|| reader.read_next().unwrap())
            .map(|m| {
                assert_eq!(m.data.as_ref(), (m.recv_timestamp as u64).to_le_bytes());
                m.recv_timestamp
            })
            .collect()
    }

    #[test]
    fn overlapping_chunks_are_merged_in_time_order() {
        // Chunks [0..20] and [5..15] overlap, [30..40] does not; the last chunk is unsorted.
        let data = mcap_with_chunks(&[&[0, 10, 20], &[5, 15], &[40, 30]]);
        let mut reader =
            McapReader::from_bytes(Path::new("mem.mcap"), data, OpenMode::Strict).unwrap();
        assert_eq!(reader.units.len(), 3);
        assert_eq!(read_times(&mut reader), vec![0, 5, 10, 15, 20, 30, 40]);
        reader.seek(12).unwrap();
        assert_eq!(read_times(&mut reader), vec![15, 20, 30, 40]);
        reader.seek(25).unwrap();
        assert_eq!(read_times(&mut reader), vec![30, 40]);
    }

    #[test]
    fn damaged_chunks_are_typed_errors_and_skipped_by_readers() {
        let data = mcap_with_chunks(&[&[1, 2, 3]]);
        let mut reader =
            McapReader::from_bytes(Path::new("mem.mcap"), data.clone(), OpenMode::Strict).unwrap();
        let offset = match reader.units[0].unit {
            Unit::Chunk { offset } => offset as usize,
            _ => unreachable!(),
        };
        // Flip a byte of the chunk's (uncompressed) records: the CRC catches it.
        let mut bad = data.to_vec();
        let last_record_byte = offset + RECORD_HEADER + 60;
        bad[last_record_byte] ^= 0xFF;
        reader.data = Bytes::from(bad);
        let err = reader.decompress_chunk(offset as u64).unwrap_err();
        assert!(matches!(&err, McapFormatError::InChunk { .. }), "{err}");
        let err = format_error(Path::new("mem.mcap"), err);
        assert!(
            err.to_string().starts_with("mem.mcap: chunk at offset"),
            "{err}"
        );
        assert!(std::error::Error::source(&err).is_some());
        // Readers skip it, and say what it held (its message index lists 3 messages).
        assert!(reader.read_next().unwrap().is_none());
        let skipped = &reader.damage().skipped_chunks;
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].offset, offset as u64);
        assert_eq!(skipped[0].messages, Some(3));
        assert_eq!(skipped[0].time_range, Some((1, 3)));
        assert!(skipped[0].reason.contains("CRC"), "{}", skipped[0].reason);
    }

    /// A compressed chunk whose header claims 15 GiB (CRC 0) is refused by the size cap before
    /// anything is reserved (it used to abort the process); readers report it as damage.
    #[test]
    fn a_chunk_claiming_gigabytes_is_refused_before_allocating() {
        for compression in [mcap::Compression::Lz4, mcap::Compression::Zstd] {
            let data = mcap_compressed_chunks(&[&[1, 2, 3]], Some(compression));
            let reader =
                McapReader::from_bytes(Path::new("bomb.mcap"), data.clone(), OpenMode::Strict)
                    .unwrap();
            let Unit::Chunk { offset } = reader.units[0].unit else {
                unreachable!()
            };
            let body = offset as usize + RECORD_HEADER;
            let mut bomb = data.to_vec();
            bomb[body + 16..body + 24].copy_from_slice(&(15u64 << 30).to_le_bytes());
            bomb[body + 24..body + 28].fill(0);
            let mut reader =
                McapReader::from_bytes(Path::new("bomb.mcap"), Bytes::from(bomb), OpenMode::Strict)
                    .unwrap();
            let err = reader.decompress_chunk(offset).unwrap_err();
            let McapFormatError::InChunk { source, .. } = &err else {
                panic!("{err}")
            };
            assert!(
                matches!(**source, McapFormatError::ChunkTooLarge(_)),
                "{compression:?}: {err}"
            );
            let text = format_error(Path::new("bomb.mcap"), err).to_string();
            assert!(
                text.starts_with(&format!(
                    "bomb.mcap: chunk at offset {offset}: declares 16106127360 bytes"
                )),
                "{text}"
            );
            assert!(reader.read_next().unwrap().is_none());
            assert_eq!(reader.damage().skipped_chunks.len(), 1);
        }
    }
}
