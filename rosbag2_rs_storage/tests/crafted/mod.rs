//! Generators of the crafted files of issue 48 ("hostile input, second round"): each file is a
//! few KB that defeats a per-record check. Nothing generated is committed (`*.mcap`, `*.bag`
//! are ignored): the tests make them at run time.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use mcap::records::op;

/// Bytes of the record header: opcode and body length.
const RECORD_HEADER: usize = 9;
/// Bytes of the footer record and the closing magic.
const FOOTER_AND_MAGIC: usize = RECORD_HEADER + 20 + 8;

/// A record: opcode, body length, body.
pub fn record(opcode: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![opcode];
    r.extend((body.len() as u64).to_le_bytes());
    r.extend_from_slice(body);
    r
}

/// A length-prefixed (`u32`) MCAP string.
fn string(s: &str) -> Vec<u8> {
    let mut b = (s.len() as u32).to_le_bytes().to_vec();
    b.extend(s.as_bytes());
    b
}

/// `(opcode, body offset)` of every record of the summary section of an MCAP file.
pub fn summary_records(data: &[u8]) -> Vec<(u8, usize)> {
    let footer = data.len() - FOOTER_AND_MAGIC;
    assert_eq!(data[footer], op::FOOTER);
    let start = u64::from_le_bytes(data[footer + 9..footer + 17].try_into().unwrap()) as usize;
    let mut out = Vec::new();
    let mut at = start;
    while at < footer {
        let len = u64::from_le_bytes(data[at + 1..at + 9].try_into().unwrap()) as usize;
        out.push((data[at], at + RECORD_HEADER));
        at += RECORD_HEADER + len;
    }
    out
}

/// Which summary index a crafted file makes lie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LyingIndex {
    /// The metadata index (of the `rosbag2` metadata record): read by the `mcap` crate's
    /// `read::metadata`, which panicked on the wrapping sum (read.rs:959).
    Metadata,
    /// An attachment index.
    Attachment,
    /// A chunk index.
    Chunk,
}

/// A small valid MCAP file (one chunk, one attachment, the `rosbag2` metadata record) whose
/// `which` summary index entry claims a length such that offset + length wraps past 2^64 to 1.
pub fn mcap_wrapping_index(dir: &Path, which: LyingIndex) -> PathBuf {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut writer = mcap::WriteOptions::new().create(&mut out).unwrap();
    let schema = writer
        .add_schema("std_msgs/msg/String", "ros2msg", b"string data")
        .unwrap();
    let channel = writer
        .add_channel(schema, "/t", "cdr", &BTreeMap::new())
        .unwrap();
    for t in 0..3u64 {
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: t as u32,
            log_time: t,
            publish_time: t,
        };
        writer
            .write_to_known_channel(&header, &[0, 1, 0, 0, 1, 0, 0, 0, 0])
            .unwrap();
    }
    writer
        .attach(&mcap::Attachment {
            log_time: 0,
            create_time: 0,
            name: "a.txt".into(),
            media_type: "text/plain".into(),
            data: std::borrow::Cow::Borrowed(b"hello"),
        })
        .unwrap();
    let yaml = "rosbag2_bagfile_information:\n  version: 9\n  storage_identifier: mcap\n";
    writer
        .write_metadata(&mcap::records::Metadata {
            name: "rosbag2".into(),
            metadata: BTreeMap::from([("serialized_metadata".into(), yaml.into())]),
        })
        .unwrap();
    writer.finish().unwrap();
    drop(writer);
    let mut data = out.into_inner();
    // Offset and length of the entry: chunk index (start offset at 16, length at 24),
    // attachment and metadata indexes (offset at 0, length at 8).
    let (opcode, offset_at) = match which {
        LyingIndex::Metadata => (op::METADATA_INDEX, 0),
        LyingIndex::Attachment => (op::ATTACHMENT_INDEX, 0),
        LyingIndex::Chunk => (op::CHUNK_INDEX, 16),
    };
    let (_, body) = *summary_records(&data)
        .iter()
        .find(|(o, _)| *o == opcode)
        .expect("the index record");
    let at = body + offset_at;
    let offset = u64::from_le_bytes(data[at..at + 8].try_into().unwrap());
    let wrapping = (u64::MAX - offset).wrapping_add(2);
    data[at + 8..at + 16].copy_from_slice(&wrapping.to_le_bytes());
    let path = dir.join(format!("wrapping_{which:?}_index.mcap").to_lowercase());
    std::fs::write(&path, data).unwrap();
    path
}

/// The channel and schema of [`mcap_big_chunk`]: `/big`, a byte array type.
fn big_schema_and_channel() -> (Vec<u8>, Vec<u8>) {
    let mut schema = 1u16.to_le_bytes().to_vec();
    schema.extend(string("test_msgs/msg/Blob"));
    schema.extend(string("ros2msg"));
    schema.extend(string("uint8[] data"));
    let mut channel = 1u16.to_le_bytes().to_vec();
    channel.extend(1u16.to_le_bytes());
    channel.extend(string("/big"));
    channel.extend(string("cdr"));
    channel.extend(0u32.to_le_bytes());
    (record(op::SCHEMA, &schema), record(op::CHANNEL, &channel))
}

/// A chunk compressed with zstd whose records are one message of `message_len` zero bytes on
/// channel 1 at log time `time` (compressed as it is written: nothing of that size is held), and
/// the uncompressed size of its records. `declared` replaces the uncompressed size in the
/// chunk's header when given.
fn zstd_chunk(message_len: u64, time: u64, declared: Option<u64>) -> (Vec<u8>, u64) {
    let mut message_head = vec![op::MESSAGE];
    message_head.extend((22 + message_len).to_le_bytes());
    message_head.extend(1u16.to_le_bytes());
    message_head.extend(0u32.to_le_bytes());
    message_head.extend(time.to_le_bytes());
    message_head.extend(time.to_le_bytes());
    let uncompressed = message_head.len() as u64 + message_len;
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    encoder.write_all(&message_head).unwrap();
    let zeros = vec![0u8; 1 << 20];
    let mut left = message_len;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        encoder.write_all(&zeros[..n]).unwrap();
        left -= n as u64;
    }
    let compressed = encoder.finish().unwrap();
    let mut body = Vec::new();
    body.extend(time.to_le_bytes());
    body.extend(time.to_le_bytes());
    body.extend(declared.unwrap_or(uncompressed).to_le_bytes());
    body.extend(0u32.to_le_bytes()); // no CRC
    body.extend(string("zstd"));
    body.extend((compressed.len() as u64).to_le_bytes());
    body.extend(&compressed);
    (record(op::CHUNK, &body), uncompressed)
}

/// A chunk index body for the chunk of `chunk_len` bytes at `offset`.
fn chunk_index(
    offset: u64,
    chunk_len: u64,
    time: u64,
    compressed: u64,
    uncompressed: u64,
) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(time.to_le_bytes());
    b.extend(time.to_le_bytes());
    b.extend(offset.to_le_bytes());
    b.extend(chunk_len.to_le_bytes());
    b.extend(0u32.to_le_bytes()); // no message index offsets
    b.extend(0u64.to_le_bytes()); // message index length
    b.extend(string("zstd"));
    b.extend(compressed.to_le_bytes());
    b.extend(uncompressed.to_le_bytes());
    record(op::CHUNK_INDEX, &b)
}

/// An MCAP file of zstd chunks, each one message of `message_len` zero bytes at log time 1
/// (so that they overlap in time), each listed by `listings` chunk indexes in the summary;
/// `declared` replaces each chunk's declared uncompressed size when given.
pub fn mcap_zstd_chunks(
    dir: &Path,
    name: &str,
    chunks: usize,
    message_len: u64,
    declared: Option<u64>,
    listings: usize,
) -> PathBuf {
    let (schema, channel) = big_schema_and_channel();
    let mut data = mcap::MAGIC.to_vec();
    let mut header = string("ros2");
    header.extend(string("crafted"));
    data.extend(record(op::HEADER, &header));
    data.extend(&schema);
    data.extend(&channel);
    let mut indexes = Vec::new();
    for _ in 0..chunks {
        let (chunk, uncompressed) = zstd_chunk(message_len, 1, declared);
        let offset = data.len() as u64;
        let compressed = chunk.len() as u64 - 9 - 8 - 8 - 8 - 4 - 8 - 8;
        for _ in 0..listings {
            indexes.extend(chunk_index(
                offset,
                chunk.len() as u64,
                1,
                compressed,
                declared.unwrap_or(uncompressed),
            ));
        }
        data.extend(chunk);
    }
    data.extend(record(op::DATA_END, &0u32.to_le_bytes()));
    let summary_start = data.len() as u64;
    data.extend(&schema);
    data.extend(&channel);
    let messages = chunks as u64;
    let mut stats = Vec::new();
    stats.extend(messages.to_le_bytes());
    stats.extend(1u16.to_le_bytes()); // schemas
    stats.extend(1u32.to_le_bytes()); // channels
    stats.extend(0u32.to_le_bytes()); // attachments
    stats.extend(0u32.to_le_bytes()); // metadata
    stats.extend((chunks as u32).to_le_bytes());
    stats.extend(1u64.to_le_bytes());
    stats.extend(1u64.to_le_bytes());
    stats.extend(10u32.to_le_bytes());
    stats.extend(1u16.to_le_bytes());
    stats.extend(messages.to_le_bytes());
    data.extend(record(op::STATISTICS, &stats));
    data.extend(indexes);
    let mut footer = summary_start.to_le_bytes().to_vec();
    footer.extend(0u64.to_le_bytes());
    footer.extend(0u32.to_le_bytes());
    data.extend(record(op::FOOTER, &footer));
    data.extend(mcap::MAGIC);
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

/// The file: one zstd chunk holding a 300 MB message, listed by 16 chunk indexes
/// (about 12 KB).
pub fn mcap_big_chunk_listed_16_times(dir: &Path) -> PathBuf {
    mcap_zstd_chunks(dir, "big_chunk_x16.mcap", 1, 300 << 20, None, 16)
}

/// The ROS 1 definition of [`ros1_empty_elements`]: a sequence of messages that are each a
/// sequence of `std_msgs/Empty`, which takes no bytes in ROS 1.
pub const EMPTY_ELEMENTS_DEFINITION: &str = "test_msgs/Inner[] items\n\
================================================================================\n\
MSG: test_msgs/Inner\n\
std_msgs/Empty[] e\n\
================================================================================\n\
MSG: std_msgs/Empty\n";

/// The payload of [`ros1_empty_elements`]: `outer` items of `inner` empty elements each.
pub fn empty_elements_payload(outer: u32, inner: u32) -> Vec<u8> {
    let mut data = outer.to_le_bytes().to_vec();
    for _ in 0..outer {
        data.extend(inner.to_le_bytes());
    }
    data
}

/// A ROS 1 bag writer at `path` (uncompressed, 1 MiB chunks) with one connection on `topic`.
fn ros1_writer(
    path: &Path,
    topic: &str,
    type_name: &str,
    md5sum: &str,
    definition: &str,
) -> (rosbag2_rs_storage::rosbag1::BagWriter, u32) {
    use rosbag2_rs_storage::rosbag1::{BagWriter, Compression, Connection, WriterOptions};
    let mut writer = BagWriter::create(
        path,
        WriterOptions {
            compression: Compression::None,
            chunk_threshold: 1 << 20,
        },
    )
    .unwrap();
    let id = writer.add_connection(Connection {
        id: 0,
        topic: topic.into(),
        type_name: type_name.into(),
        md5sum: md5sum.into(),
        message_definition: definition.into(),
        callerid: None,
        latching: false,
    });
    (writer, id)
}

/// A ROS 1 bag of one message whose type has elements of zero bytes: 1000 × 2^20
/// `std_msgs/Empty` in 4 KB.
pub fn ros1_empty_elements(dir: &Path) -> PathBuf {
    let path = dir.join("empty_elements.bag");
    let (mut writer, id) = ros1_writer(
        &path,
        "/empties",
        "test_msgs/Outer",
        "0123456789abcdef0123456789abcdef",
        EMPTY_ELEMENTS_DEFINITION,
    );
    writer
        .write(id, 1_000_000_000, &empty_elements_payload(1000, 1 << 20))
        .unwrap();
    writer.finish().unwrap();
    path
}

/// A valid MCAP file of one `std_msgs/msg/String` message at each of `log_times`.
pub fn mcap_log_times(path: &Path, log_times: &[u64]) -> PathBuf {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut writer = mcap::WriteOptions::new().create(&mut out).unwrap();
    let schema = writer
        .add_schema("std_msgs/msg/String", "ros2msg", b"string data")
        .unwrap();
    let channel = writer
        .add_channel(schema, "/t", "cdr", &BTreeMap::new())
        .unwrap();
    for &t in log_times {
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: 0,
            log_time: t,
            publish_time: t,
        };
        writer
            .write_to_known_channel(&header, &[0, 1, 0, 0, 1, 0, 0, 0, 0])
            .unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    std::fs::write(path, out.into_inner()).unwrap();
    path.to_path_buf()
}

/// `(start, end)` of every record of a ROS 1 bag whose header holds `op=<op>`.
pub fn ros1_records(data: &[u8], op: u8) -> Vec<(usize, usize)> {
    let u32_at = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    let needle = [b'o', b'p', b'=', op];
    let mut out = Vec::new();
    let mut at = b"#ROSBAG V2.0\n".len();
    while at + 4 <= data.len() {
        let header_len = u32_at(at);
        let header = &data[at + 4..at + 4 + header_len];
        let data_len = u32_at(at + 4 + header_len);
        let end = at + 8 + header_len + data_len;
        if header.windows(4).any(|w| w == needle) {
            out.push((at, end));
        }
        at = end;
    }
    out
}

/// A ROS 1 bag of 10 `std_msgs/String` messages in one chunk, whose index lists the chunk in
/// `copies` chunk-info records (the index runs to the end of the file: copies are appended).
pub fn ros1_chunk_listed_many_times(dir: &Path, copies: usize) -> PathBuf {
    let path = dir.join("chunk_listed_many_times.bag");
    let (mut writer, id) = ros1_writer(
        &path,
        "/chatter",
        "std_msgs/String",
        "992ce8a1687cec8c8bd883ec73ca41d1",
        "string data\n",
    );
    for i in 0..10 {
        writer
            .write(id, 1_000 + i, &[2, 0, 0, 0, b'h', b'i'])
            .unwrap();
    }
    writer.finish().unwrap();
    let mut data = std::fs::read(&path).unwrap();
    let infos = ros1_records(&data, 0x06);
    assert_eq!(infos.len(), 1, "one chunk-info record");
    let (start, end) = infos[0];
    let record = data[start..end].to_vec();
    for _ in 1..copies {
        data.extend_from_slice(&record);
    }
    std::fs::write(&path, data).unwrap();
    path
}
