//! Reading ROS 1 bags (format v2.0) as they are stored: connections with their ROS 1 types and
//! definitions, and messages as ROS 1 serialized bytes in receive-time order.
//!
//! An indexed bag is opened from its index (connection and chunk-info records at `index_pos`,
//! index records after each chunk) without decompressing anything. An unindexed bag (a recorder
//! that never closed it) is scanned chunk by chunk and everything intact is read; a truncated
//! chunk cut by the end of the file gives back its readable prefix (see
//! [`crate::recover::ros1`]), and [`BagReader::damage`] tells what was damaged. The file is memory-mapped: messages of uncompressed chunks are
//! slices of the mapping, those of compressed chunks slices of the decompressed chunk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use super::compression;
use super::error::Ros1FormatError;
use super::record::{self, Fields, Record};
use crate::error::{Result, StorageError};
use crate::formats::{CompressionFormat, StorageId};
use crate::recover::ros1::{read_cut_chunk, Ros1Damage};
use crate::storage::OpenMode;

/// One connection: a publisher's topic and type as the recorder saw them.
#[derive(Debug, Clone, PartialEq)]
pub struct Connection {
    /// Connection id, unique within the bag.
    pub id: u32,
    /// Topic name.
    pub topic: String,
    /// ROS 1 type, `pkg/Type`.
    pub type_name: String,
    /// The type's md5sum.
    pub md5sum: String,
    /// The full message definition, dependencies appended after `MSG:` lines.
    pub message_definition: String,
    /// The publishing node, when recorded.
    pub callerid: Option<String>,
    /// True for latched topics.
    pub latching: bool,
}

impl Connection {
    fn from_record(r: &Record<'_>) -> std::result::Result<Self, Ros1FormatError> {
        let header = Fields::parse(r.data)?;
        Ok(Self {
            id: r.fields.u32("conn")?,
            topic: header
                .opt_string("topic")
                .map_or_else(|| r.fields.string("topic"), Ok)?,
            type_name: header.string("type")?,
            md5sum: header.string("md5sum")?,
            message_definition: header.opt_string("message_definition").unwrap_or_default(),
            callerid: header.opt_string("callerid"),
            latching: header.opt_string("latching").is_some_and(|v| v == "1"),
        })
    }
}

/// One message as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RawMessage {
    /// Id of its connection.
    pub connection: u32,
    /// Receive time, ns.
    pub time: i64,
    /// ROS 1 serialized bytes.
    pub data: Bytes,
}

#[derive(Debug, Clone)]
struct Chunk {
    /// File offset of the chunk record.
    pos: u64,
    compression: CompressionFormat,
    size: usize,
    /// Range of the compressed data in the file.
    data: std::ops::Range<usize>,
    /// The whole records recovered from a chunk cut by the end of the file.
    recovered: Option<Bytes>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: i64,
    chunk: u32,
    offset: u32,
    connection: u32,
}

/// Decompressed chunks kept for reading; overlapping chunks are read in turns.
const CHUNK_CACHE: usize = 4;

/// A chunk's bytes: a slice of the file when stored uncompressed, else decompressed.
fn load_chunk(file: &Bytes, chunk: &Chunk) -> std::result::Result<Bytes, Ros1FormatError> {
    if let Some(records) = &chunk.recovered {
        return Ok(records.clone());
    }
    Ok(match chunk.compression {
        CompressionFormat::None if chunk.data.len() == chunk.size => file.slice(chunk.data.clone()),
        c => Bytes::from(compression::decompress(
            c,
            &file[chunk.data.clone()],
            chunk.size,
        )?),
    })
}

/// A ROS 1 bag opened for reading.
pub struct BagReader {
    path: PathBuf,
    file: Bytes,
    connections: Vec<Connection>,
    by_id: HashMap<u32, usize>,
    chunks: Vec<Chunk>,
    entries: Vec<Entry>,
    next: usize,
    selected: Vec<bool>,
    cache: Vec<(u32, Bytes)>,
    indexed: bool,
    /// The index ran past the end of the file: the bag was cut short.
    truncated: bool,
    damage: Ros1Damage,
}

impl std::fmt::Debug for BagReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BagReader")
            .field("path", &self.path)
            .field("connections", &self.connections.len())
            .field("chunks", &self.chunks.len())
            .field("messages", &self.entries.len())
            .finish()
    }
}

/// True when the file starts with the ROS 1 bag v2.0 magic.
pub fn is_rosbag1(head: &[u8]) -> bool {
    head.starts_with(record::MAGIC)
}

impl BagReader {
    /// Opens a bag. In [`OpenMode::Strict`] a damaged index is an error; in
    /// [`OpenMode::Recover`] the bag is then scanned instead. An unindexed bag is always scanned.
    pub fn open(path: &Path, mode: OpenMode) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| StorageError::io(path, e))?;
        // A bag truncated while mapped reads as zeros past its new end (a parse error, never a
        // crash): see `storage::mapped_file`.
        let (map, _watch) =
            crate::storage::mapped_file::map(&file).map_err(|e| StorageError::io(path, e))?;
        let mut reader = Self {
            path: path.to_path_buf(),
            file: map,
            connections: Vec::new(),
            by_id: HashMap::new(),
            chunks: Vec::new(),
            entries: Vec::new(),
            next: 0,
            selected: Vec::new(),
            cache: Vec::new(),
            indexed: false,
            truncated: false,
            damage: Ros1Damage::default(),
        };
        let corrupt = |source: Ros1FormatError| StorageError::Ros1Format {
            path: path.to_path_buf(),
            source,
        };
        if !is_rosbag1(&reader.file) {
            return Err(StorageError::corrupt(
                path,
                "not a ROS 1 bag (no '#ROSBAG V2.0' magic)",
            ));
        }
        let header = record::parse_record(&reader.file, record::MAGIC.len())
            .and_then(|r| {
                (r.fields.op()? == record::OP_BAG_HEADER)
                    .then_some(())
                    .ok_or(Ros1FormatError::NotBagHeader)?;
                Ok((r.fields.u64("index_pos")?, r.len))
            })
            .map_err(|e| corrupt(e.at("bag header", record::MAGIC.len())))?;
        let (index_pos, header_len) = header;
        let first_record = record::MAGIC.len() + header_len;
        if index_pos == 0 || index_pos as usize >= reader.file.len() {
            log::warn!(
                "{}: {}; reading every intact chunk",
                path.display(),
                if index_pos == 0 {
                    "unindexed bag (not closed by its recorder)"
                } else {
                    "the bag was cut short before its index"
                }
            );
            reader.scan(first_record);
        } else {
            match reader.read_index(index_pos as usize) {
                Ok(()) => reader.indexed = true,
                Err(e) if mode == OpenMode::Recover || reader.truncated => {
                    log::warn!("{}: {e}; scanning the chunks instead", path.display());
                    reader.connections.clear();
                    reader.by_id.clear();
                    reader.damage.repeated_chunk_infos = 0;
                    reader.chunks.clear();
                    reader.entries.clear();
                    reader.scan(first_record);
                }
                Err(e) => return Err(corrupt(e)),
            }
        }
        reader
            .entries
            .sort_unstable_by_key(|e| (e.time, e.chunk, e.offset));
        reader.selected = vec![true; reader.connections.len()];
        Ok(reader)
    }

    fn add_connection(&mut self, c: Connection) {
        if !self.by_id.contains_key(&c.id) {
            self.by_id.insert(c.id, self.connections.len());
            self.connections.push(c);
        }
    }

    fn read_index(&mut self, index_pos: usize) -> std::result::Result<(), Ros1FormatError> {
        let file = self.file.clone();
        let mut pos = index_pos;
        let mut chunk_infos = Vec::new();
        while pos < file.len() {
            self.truncated = record::runs_past_end(&file, pos);
            let r = record::parse_record(&file, pos).map_err(|e| e.at("index record", pos))?;
            match r.fields.op()? {
                record::OP_CONNECTION => self.add_connection(
                    Connection::from_record(&r).map_err(|e| e.at("connection record", pos))?,
                ),
                record::OP_CHUNK_INFO => chunk_infos.push(
                    r.fields
                        .u64("chunk_pos")
                        .map_err(|e| e.at("chunk info", pos))?,
                ),
                _ => {}
            }
            pos += r.len;
        }
        // A chunk listed by several chunk-info records is read once (its messages would be
        // returned once per record).
        let mut seen = std::collections::HashSet::new();
        for chunk_pos in chunk_infos {
            if !seen.insert(chunk_pos) {
                self.damage.repeated_chunk_infos += 1;
                continue;
            }
            let at = usize::try_from(chunk_pos).unwrap_or(usize::MAX);
            self.read_chunk_index(at).map_err(|e| e.at("chunk", at))?;
        }
        if self.damage.repeated_chunk_infos > 0 {
            log::warn!(
                "{}: {} chunk-info records of the index list a chunk listed before; skipping them: each chunk is read once",
                self.path.display(),
                self.damage.repeated_chunk_infos
            );
        }
        Ok(())
    }

    fn chunk_at(&self, pos: usize) -> std::result::Result<(Chunk, usize), Ros1FormatError> {
        let r = record::parse_record(&self.file, pos)?;
        if r.fields.op()? != record::OP_CHUNK {
            return Err(Ros1FormatError::NotChunk);
        }
        let chunk = Chunk {
            pos: pos as u64,
            compression: CompressionFormat::parse(&r.fields.string("compression")?)
                .and_then(|c| c.check_chunks_of(StorageId::Rosbag1))?,
            size: r.fields.u32("size")? as usize,
            data: r.data_offset..r.data_offset + r.data.len(),
            recovered: None,
        };
        Ok((chunk, pos + r.len))
    }

    fn read_chunk_index(&mut self, pos: usize) -> std::result::Result<(), Ros1FormatError> {
        let (chunk, mut at) = self.chunk_at(pos)?;
        let id = self.chunks.len() as u32;
        let file = self.file.clone();
        while at < file.len() {
            let Ok(r) = record::parse_record(&file, at) else {
                break;
            };
            if r.fields.op()? != record::OP_INDEX {
                break;
            }
            let connection = r.fields.u32("conn")?;
            let count = r.fields.u32("count")? as usize;
            let index_error = |e: Ros1FormatError| e.at("index record", at);
            let version = r.fields.u32("ver")?;
            if version != 1 {
                return Err(index_error(Ros1FormatError::IndexVersion(version)));
            }
            if r.data.len() != count * 12 {
                return Err(index_error(Ros1FormatError::IndexSize {
                    count,
                    len: r.data.len(),
                }));
            }
            for e in r.data.chunks_exact(12) {
                let offset = record::read_u32(e, 8)?;
                if offset as usize >= chunk.size {
                    return Err(index_error(Ros1FormatError::IndexEntryBeyond {
                        offset,
                        size: chunk.size,
                    }));
                }
                self.entries.push(Entry {
                    time: record::time_ns(record::read_u32(e, 0)?, record::read_u32(e, 4)?),
                    chunk: id,
                    offset,
                    connection,
                });
            }
            at += r.len;
        }
        self.chunks.push(chunk);
        Ok(())
    }

    /// Walks the records from `pos`, reading every chunk that decompresses; stops at the first
    /// record that is cut short.
    fn scan(&mut self, mut pos: usize) {
        let file = self.file.clone();
        self.damage.unindexed = true;
        while pos < file.len() {
            let r = match record::parse_record(&file, pos) {
                Ok(r) => r,
                Err(e) => {
                    log::warn!(
                        "{}: record at offset {pos}: {e}; reading what the {} bytes from there hold",
                        self.path.display(),
                        file.len() - pos
                    );
                    match read_cut_chunk(&file, pos) {
                        Ok((cut, decoded)) => self.take_cut_chunk(cut, decoded),
                        Err(_) => {
                            self.damage.cut_record = Some((pos as u64, (file.len() - pos) as u64))
                        }
                    }
                    break;
                }
            };
            let next = pos + r.len;
            let op = r.fields.op().unwrap_or(0);
            if op == record::OP_CONNECTION {
                match Connection::from_record(&r) {
                    Ok(c) => self.add_connection(c),
                    Err(e) => {
                        log::warn!("{}: connection at offset {pos}: {e}", self.path.display())
                    }
                }
            } else if op == record::OP_CHUNK {
                if let Err(e) = self.scan_chunk(pos) {
                    log::warn!(
                        "{}: chunk at offset {pos} skipped: {e}",
                        self.path.display()
                    );
                    self.damage
                        .skipped_chunks
                        .push((pos as u64, r.len as u64, e.to_string()));
                }
            }
            pos = next;
        }
    }

    /// Keeps the whole, well-formed records of the readable prefix of a cut chunk.
    fn take_cut_chunk(&mut self, mut cut: crate::recover::ros1::CutChunk, decoded: Vec<u8>) {
        let data = Bytes::from(decoded);
        let id = self.chunks.len() as u32;
        let (mut entries, mut connections): (Vec<Entry>, Vec<Connection>) =
            (Vec::new(), Vec::new());
        let mut at = 0;
        while at < data.len() {
            let Ok(r) = record::parse_record(&data, at) else {
                break;
            };
            let whole = match r.fields.op() {
                Ok(record::OP_CONNECTION) => Connection::from_record(&r)
                    .map(|c| connections.push(c))
                    .is_ok(),
                Ok(record::OP_MESSAGE) => match (r.fields.time("time"), r.fields.u32("conn")) {
                    (Ok(time), Ok(connection))
                        if self.by_id.contains_key(&connection)
                            || connections.iter().any(|c| c.id == connection) =>
                    {
                        entries.push(Entry {
                            time,
                            chunk: id,
                            offset: at as u32,
                            connection,
                        });
                        cut.messages += 1;
                        cut.last_time = Some(cut.last_time.map_or(time, |t| t.max(time)));
                        true
                    }
                    _ => false,
                },
                _ => false,
            };
            if !whole {
                break;
            }
            at += r.len;
        }
        cut.kept = at as u64;
        log::warn!(
            "{}: chunk at offset {} cut by the end of the file: {} messages recovered from its {} decoded bytes",
            self.path.display(),
            cut.offset,
            cut.messages,
            cut.decoded
        );
        connections.into_iter().for_each(|c| self.add_connection(c));
        if !entries.is_empty() {
            self.entries.extend(entries);
            self.chunks.push(Chunk {
                pos: cut.offset,
                compression: cut.compression,
                size: at,
                data: 0..0,
                recovered: Some(data.slice(..at)),
            });
        }
        self.damage.cut_chunk = Some(cut);
    }

    /// What a recovering scan found damaged (empty for an intact bag).
    pub fn damage(&self) -> &Ros1Damage {
        &self.damage
    }

    fn scan_chunk(&mut self, pos: usize) -> std::result::Result<(), Ros1FormatError> {
        let (chunk, _) = self.chunk_at(pos)?;
        let data = compression::decompress(
            chunk.compression,
            &self.file[chunk.data.clone()],
            chunk.size,
        )?;
        let id = self.chunks.len() as u32;
        let mut entries = Vec::new();
        let mut connections = Vec::new();
        let mut at = 0;
        while at < data.len() {
            let r = record::parse_record(&data, at).map_err(|e| Ros1FormatError::InChunk {
                offset: at as u64,
                source: Box::new(e),
            })?;
            match r.fields.op()? {
                record::OP_CONNECTION => connections.push(Connection::from_record(&r)?),
                record::OP_MESSAGE => entries.push(Entry {
                    time: r.fields.time("time")?,
                    chunk: id,
                    offset: at as u32,
                    connection: r.fields.u32("conn")?,
                }),
                _ => {}
            }
            at += r.len;
        }
        connections.into_iter().for_each(|c| self.add_connection(c));
        self.entries.extend(entries);
        self.chunks.push(chunk);
        Ok(())
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the bag was opened from its index (false: scanned).
    pub fn is_indexed(&self) -> bool {
        self.indexed
    }

    /// All connections, in the order the bag lists them.
    pub fn connections(&self) -> &[Connection] {
        &self.connections
    }

    /// The connection with id `id`.
    pub fn connection(&self, id: u32) -> Option<&Connection> {
        self.by_id.get(&id).map(|&i| &self.connections[i])
    }

    /// Number of messages per connection id.
    pub fn message_counts(&self) -> HashMap<u32, u64> {
        let mut counts = HashMap::new();
        for e in &self.entries {
            *counts.entry(e.connection).or_insert(0) += 1;
        }
        counts
    }

    /// Total number of messages.
    pub fn message_count(&self) -> u64 {
        self.entries.len() as u64
    }

    /// Receive times of the first and the last message, ns.
    pub fn time_range(&self) -> Option<(i64, i64)> {
        Some((self.entries.first()?.time, self.entries.last()?.time))
    }

    /// The compression of each chunk, with how many chunks use it.
    pub fn chunk_compressions(&self) -> Vec<(CompressionFormat, usize)> {
        let mut out: Vec<(CompressionFormat, usize)> = Vec::new();
        for c in &self.chunks {
            match out.iter_mut().find(|(k, _)| *k == c.compression) {
                Some((_, n)) => *n += 1,
                None => out.push((c.compression, 1)),
            }
        }
        out
    }

    /// Reads only the connections `keep` accepts, from the next message on.
    pub fn set_filter(&mut self, keep: impl Fn(&Connection) -> bool) {
        self.selected = self.connections.iter().map(keep).collect();
    }

    /// Repositions so that the next message is the first received at or after `time_ns`.
    pub fn seek(&mut self, time_ns: i64) {
        self.next = self.entries.partition_point(|e| e.time < time_ns);
    }

    fn chunk_data(&mut self, id: u32) -> std::result::Result<Bytes, Ros1FormatError> {
        if let Some((_, data)) = self.cache.iter().find(|(c, _)| *c == id) {
            return Ok(data.clone());
        }
        // Decompressed chunks kept share the file's budget of bytes held at once
        // (`limits::ALIVE_BYTES`): the oldest go first.
        let chunk = &self.chunks[id as usize];
        let held = |c: &Chunk| match (&c.recovered, c.compression) {
            (None, CompressionFormat::None) | (Some(_), _) => 0,
            _ => c.size as u64,
        };
        let incoming = held(chunk);
        let budget = crate::limits::ALIVE_BYTES.get();
        while !self.cache.is_empty()
            && (self.cache.len() == CHUNK_CACHE
                || self
                    .cache
                    .iter()
                    .map(|(c, _)| held(&self.chunks[*c as usize]))
                    .sum::<u64>()
                    .saturating_add(incoming)
                    > budget)
        {
            self.cache.remove(0);
        }
        let data = load_chunk(&self.file, &self.chunks[id as usize])?;
        self.cache.push((id, data.clone()));
        Ok(data)
    }

    /// The next selected message in receive-time order (ties in file order), or `None`.
    pub fn read_next(&mut self) -> Result<Option<RawMessage>> {
        while let Some(&entry) = self.entries.get(self.next) {
            self.next += 1;
            let selected = self
                .by_id
                .get(&entry.connection)
                .is_some_and(|&i| self.selected[i]);
            if !selected {
                continue;
            }
            return self.message(entry).map(Some).map_err(|e| {
                let topic = self
                    .connection(entry.connection)
                    .map_or("?", |c| c.topic.as_str());
                StorageError::Ros1Format {
                    path: self.path.clone(),
                    source: Ros1FormatError::Message {
                        chunk: self.chunks[entry.chunk as usize].pos,
                        topic: topic.to_string(),
                        offset: entry.offset,
                        source: Box::new(e),
                    },
                }
            });
        }
        Ok(None)
    }

    fn message(&mut self, entry: Entry) -> std::result::Result<RawMessage, Ros1FormatError> {
        let data = self.chunk_data(entry.chunk)?;
        let (connection, _, range) = record::parse_message_record(&data, entry.offset as usize)?;
        if connection != entry.connection {
            return Err(Ros1FormatError::ConnectionMismatch {
                index: entry.connection,
                message: connection,
            });
        }
        Ok(RawMessage {
            connection,
            time: entry.time,
            data: data.slice(range),
        })
    }
}
