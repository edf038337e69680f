//! Writing ROS 1 bags (format v2.0) the way `rosbag` does: connection and message records
//! gathered into chunks, each chunk followed by one index record per connection, and at close
//! the connection and chunk-info records and a bag header that points at them.
//!
//! A finished chunk is written out at once, so a writer that is killed leaves an unindexed bag
//! from which every finished chunk is read.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::compression;
use super::reader::Connection;
use super::record::{self, header_bytes, time_bytes, write_record};
use crate::error::{Result, StorageError};
use crate::formats::{CompressionFormat, StorageId};

/// How to write a bag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Chunk compression.
    pub compression: CompressionFormat,
    /// A chunk is finished once its uncompressed records reach this many bytes.
    pub chunk_threshold: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            compression: CompressionFormat::None,
            chunk_threshold: 768 * 1024,
        }
    }
}

struct ChunkInfo {
    pos: u64,
    start: i64,
    end: i64,
    counts: BTreeMap<u32, u32>,
}

/// A ROS 1 bag being written.
pub struct BagWriter {
    path: PathBuf,
    file: std::fs::File,
    options: WriterOptions,
    pos: u64,
    connections: Vec<Connection>,
    /// Uncompressed records of the open chunk.
    chunk: Vec<u8>,
    /// Index entries of the open chunk per connection: (time, offset).
    index: BTreeMap<u32, Vec<(i64, u32)>>,
    chunk_range: Option<(i64, i64)>,
    /// Connections whose record is already in some chunk.
    written: Vec<bool>,
    chunk_infos: Vec<ChunkInfo>,
}

fn connection_header(c: &Connection) -> Vec<u8> {
    let mut fields: Vec<(&str, &[u8])> = vec![
        ("topic", c.topic.as_bytes()),
        ("type", c.type_name.as_bytes()),
        ("md5sum", c.md5sum.as_bytes()),
        ("message_definition", c.message_definition.as_bytes()),
    ];
    if let Some(callerid) = &c.callerid {
        fields.push(("callerid", callerid.as_bytes()));
    }
    if c.latching {
        fields.push(("latching", b"1"));
    }
    header_bytes(&fields)
}

fn connection_record(out: &mut Vec<u8>, c: &Connection) {
    write_record(
        out,
        &[
            ("op", &[record::OP_CONNECTION]),
            ("conn", &c.id.to_le_bytes()),
            ("topic", c.topic.as_bytes()),
        ],
        &connection_header(c),
    );
}

fn bag_header(index_pos: u64, connections: u32, chunks: u32) -> Vec<u8> {
    let (index_pos, connections, chunks) = (
        index_pos.to_le_bytes(),
        connections.to_le_bytes(),
        chunks.to_le_bytes(),
    );
    let fields: [(&str, &[u8]); 4] = [
        ("op", &[record::OP_BAG_HEADER]),
        ("index_pos", &index_pos),
        ("conn_count", &connections),
        ("chunk_count", &chunks),
    ];
    // As rosbag does: the data is spaces so that header and data fill 4096 bytes.
    let padding = vec![b' '; record::BAG_HEADER_LEN - 4 - header_bytes(&fields).len()];
    let mut out = Vec::with_capacity(record::BAG_HEADER_LEN + 4);
    write_record(&mut out, &fields, &padding);
    out
}

impl BagWriter {
    /// Creates the bag; `path` must not exist.
    pub fn create(path: &Path, options: WriterOptions) -> Result<Self> {
        options.compression.check_chunks_of(StorageId::Rosbag1)?;
        let io = |e| StorageError::io(path, e);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => StorageError::AlreadyExists(path.into()),
                _ => io(e),
            })?;
        let mut head = record::MAGIC.to_vec();
        head.extend(bag_header(0, 0, 0));
        file.write_all(&head).map_err(io)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            options,
            pos: head.len() as u64,
            connections: Vec::new(),
            chunk: Vec::new(),
            index: BTreeMap::new(),
            chunk_range: None,
            written: Vec::new(),
            chunk_infos: Vec::new(),
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written so far, the open chunk included.
    pub fn bytes_written(&self) -> u64 {
        self.pos + self.chunk.len() as u64
    }

    /// Adds a connection; its `id` is assigned here and returned.
    pub fn add_connection(&mut self, mut connection: Connection) -> u32 {
        connection.id = self.connections.len() as u32;
        self.connections.push(connection);
        self.written.push(false);
        self.connections.len() as u32 - 1
    }

    /// Appends one message of connection `id` received at `time_ns`.
    pub fn write(&mut self, id: u32, time_ns: i64, data: &[u8]) -> Result<()> {
        let Some(c) = self.connections.get(id as usize) else {
            return Err(StorageError::InvalidArgument(format!(
                "{}: no connection {id}",
                self.path.display()
            )));
        };
        if !self.written[id as usize] {
            connection_record(&mut self.chunk, c);
            self.written[id as usize] = true;
        }
        let offset = self.chunk.len() as u32;
        write_record(
            &mut self.chunk,
            &[
                ("op", &[record::OP_MESSAGE]),
                ("conn", &id.to_le_bytes()),
                ("time", &time_bytes(time_ns)),
            ],
            data,
        );
        self.index.entry(id).or_default().push((time_ns, offset));
        self.chunk_range = Some(match self.chunk_range {
            Some((a, b)) => (a.min(time_ns), b.max(time_ns)),
            None => (time_ns, time_ns),
        });
        if self.chunk.len() >= self.options.chunk_threshold {
            self.flush()?;
        }
        Ok(())
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Finishes the open chunk (if any) and writes it with its index records.
    pub fn flush(&mut self) -> Result<()> {
        let Some((start, end)) = self.chunk_range.take() else {
            return Ok(());
        };
        let compressed = compression::compress(self.options.compression, &self.chunk)
            .map_err(|e| StorageError::io(&self.path, e))?;
        let mut out = Vec::with_capacity(compressed.len() + 256);
        write_record(
            &mut out,
            &[
                ("op", &[record::OP_CHUNK]),
                ("compression", self.options.compression.as_str().as_bytes()),
                ("size", &(self.chunk.len() as u32).to_le_bytes()),
            ],
            &compressed,
        );
        let mut counts = BTreeMap::new();
        for (&id, entries) in &self.index {
            let mut data = Vec::with_capacity(entries.len() * 12);
            for &(time, offset) in entries {
                data.extend_from_slice(&time_bytes(time));
                data.extend_from_slice(&offset.to_le_bytes());
            }
            write_record(
                &mut out,
                &[
                    ("op", &[record::OP_INDEX]),
                    ("ver", &1u32.to_le_bytes()),
                    ("conn", &id.to_le_bytes()),
                    ("count", &(entries.len() as u32).to_le_bytes()),
                ],
                &data,
            );
            counts.insert(id, entries.len() as u32);
        }
        let pos = self.pos;
        self.append(&out)?;
        self.chunk_infos.push(ChunkInfo {
            pos,
            start,
            end,
            counts,
        });
        self.chunk.clear();
        self.index.clear();
        Ok(())
    }

    /// Writes the last chunk, the index and the final bag header, and syncs the file.
    pub fn finish(mut self) -> Result<()> {
        self.flush()?;
        let index_pos = self.pos;
        let mut out = Vec::new();
        for c in &self.connections {
            connection_record(&mut out, c);
        }
        for info in &self.chunk_infos {
            let mut data = Vec::with_capacity(info.counts.len() * 8);
            for (id, count) in &info.counts {
                data.extend_from_slice(&id.to_le_bytes());
                data.extend_from_slice(&count.to_le_bytes());
            }
            write_record(
                &mut out,
                &[
                    ("op", &[record::OP_CHUNK_INFO]),
                    ("ver", &1u32.to_le_bytes()),
                    ("chunk_pos", &info.pos.to_le_bytes()),
                    ("start_time", &time_bytes(info.start)),
                    ("end_time", &time_bytes(info.end)),
                    ("count", &(info.counts.len() as u32).to_le_bytes()),
                ],
                &data,
            );
        }
        self.append(&out)?;
        let header = bag_header(
            index_pos,
            self.connections.len() as u32,
            self.chunk_infos.len() as u32,
        );
        let io = |e| StorageError::io(&self.path, e);
        self.file
            .seek(SeekFrom::Start(record::MAGIC.len() as u64))
            .map_err(io)?;
        self.file.write_all(&header).map_err(io)?;
        self.file.sync_all().map_err(io)
    }
}
