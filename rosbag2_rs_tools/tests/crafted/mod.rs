//! Generators of the crafted files of issue 48 ("hostile input, second round"): each file is a
//! few KB that defeats a per-record check. Nothing generated is committed (`*.mcap`, `*.bag`
//! are ignored): the tests make them at run time, and [`write_all`] writes every one of them
//! for the command-line proof (`cargo run -p rosbag2_rs_tools --example crafted_files DIR`,
//! run by `tools/hostile_cli.sh`; RealSense's own crafted recording comes from
//! `realsense_bag_rs`'s `crafted_png_bomb` example).

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

/// A chunk compressed with zstd whose records are one message of `message_len` bytes (a
/// `test_msgs/msg/Blob` of zeros) on channel 1 at log time `time` (compressed as it is written: nothing of that size is held), and
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
    // A `uint8[]` in CDR (little endian) when it is long enough: its length, then zeros.
    let mut left = message_len;
    if message_len >= 8 {
        encoder.write_all(&[0, 1, 0, 0]).unwrap();
        encoder
            .write_all(&(message_len as u32 - 8).to_le_bytes())
            .unwrap();
        left -= 8;
    }
    let zeros = vec![0u8; 1 << 20];
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
    use rosbag2_rs_storage::rosbag1::{BagWriter, Connection, WriterOptions};
    use rosbag2_rs_storage::CompressionFormat;
    let mut writer = BagWriter::create(
        path,
        WriterOptions {
            compression: CompressionFormat::None,
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

/// A small bag directory of `/t` `std_msgs/msg/String` messages, one at each of `times`, in
/// `storage` (SQLite: 1 KiB pages), each a text of `text_len` bytes, `compression` as given.
fn string_bag(
    uri: &Path,
    storage: rosbag2_rs_storage::StorageId,
    times: &[i64],
    text_len: usize,
    compression: rosbag2_rs_storage::CompressionOptions,
) -> PathBuf {
    use rosbag2_rs_storage::storage::{StorageConfig, WriterOptions};
    use rosbag2_rs_storage::{BagWriter, BagWriterOptions, SerializedMessage, TopicMetadata};
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.to_path_buf(),
        storage: WriterOptions {
            storage,
            config: StorageConfig {
                write_pragmas: vec!["PRAGMA page_size = 1024".into()],
                ..Default::default()
            },
            ..Default::default()
        },
        compression,
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new("/t", "std_msgs/msg/String"), None)
        .unwrap();
    for (i, &t) in times.iter().enumerate() {
        let text = format!("{i}").repeat(text_len.max(1));
        let mut data = vec![0, 1, 0, 0];
        data.extend((text.len() as u32 + 1).to_le_bytes());
        data.extend(text.as_bytes());
        data.push(0);
        writer
            .write(&SerializedMessage::new("/t".into(), t, data))
            .unwrap();
    }
    writer.close().unwrap();
    uri.to_path_buf()
}

/// The one storage file of a bag directory (not `metadata.yaml`).
pub fn storage_file(uri: &Path) -> PathBuf {
    std::fs::read_dir(uri)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().is_some_and(|n| n != "metadata.yaml"))
        .unwrap()
}

/// A SQLite varint at `at`: its value and length.
fn sqlite_varint(b: &[u8], at: usize) -> (u64, usize) {
    let mut v = 0u64;
    for i in 0..9 {
        let byte = b[at + i];
        if i == 8 {
            return ((v << 8) | u64::from(byte), 9);
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    unreachable!()
}

/// A `.db3` bag (1 KiB pages) of three 2 KB messages, each spilling onto two overflow pages,
/// whose `messages` leaf repeats the second row's cell pointer to fill its pointer array, and
/// whose first row's overflow chain loops onto itself: SQLite calls it malformed, the salvage
/// (`reindex`) read each repeated cell and each pass of a loop again (cell count x file size).
/// Salvaged now: rows 2 and 3, row 1 dropped (its chain is broken).
pub fn sqlite_salvage_loops(dir: &Path) -> PathBuf {
    let uri = string_bag(
        &dir.join("sqlite_salvage_loops"),
        rosbag2_rs_storage::StorageId::Sqlite3,
        &[1_000, 2_000, 3_000],
        // 2 KB rows: 104 bytes in the leaf (SQLite's minimum local part), two overflow pages.
        2060,
        Default::default(),
    );
    let db = storage_file(&uri);
    let root: u32 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'messages'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut data = std::fs::read(&db).unwrap();
    const PAGE: usize = 1024;
    let page_at = |n: u32| (n as usize - 1) * PAGE;
    let leaf = page_at(root);
    assert_eq!(data[leaf], 0x0D, "the messages table is one leaf");
    let be16 = |d: &[u8], at: usize| usize::from(u16::from_be_bytes([d[at], d[at + 1]]));
    let be32 = |d: &[u8], at: usize| u32::from_be_bytes(d[at..at + 4].try_into().unwrap());
    assert_eq!(be16(&data, leaf + 3), 3, "three rows");
    // Row 1's first overflow page, from its cell (local part as SQLite sizes it).
    let cell = leaf + be16(&data, leaf + 8);
    let (size, a) = sqlite_varint(&data, cell);
    let (_, b) = sqlite_varint(&data, cell + a);
    let (u, size) = (PAGE, size as usize);
    let m = ((u - 12) * 32 / 255) - 23;
    let k = m + ((size - m) % (u - 4));
    let local = if k <= u - 35 { k } else { m };
    let first_overflow = be32(&data, cell + a + b + local);
    let over = page_at(first_overflow);
    assert_ne!(be32(&data, over), 0, "a chain of two pages or more");
    data[over..over + 4].copy_from_slice(&first_overflow.to_be_bytes());
    // Row 2's cell pointer repeated after the three up to the cell content area.
    let row2 = data[leaf + 10..leaf + 12].to_vec();
    let content = be16(&data, leaf + 5);
    let count = (content - 8) / 2;
    for i in 3..count {
        data[leaf + 8 + 2 * i..leaf + 10 + 2 * i].copy_from_slice(&row2);
    }
    data[leaf + 3..leaf + 5].copy_from_slice(&(count as u16).to_be_bytes());
    std::fs::write(&db, data).unwrap();
    uri
}

/// A zstd frame that declares `declared` bytes of content (`Frame_Content_Size`, 8 bytes) and
/// holds the MCAP magic and 1000 zero bytes: decoded in a window of 1 KiB, or, when
/// `single_segment`, in one segment of the declared size (which zstd refuses past its window
/// limit).
pub fn zstd_frame_declaring(declared: u64, single_segment: bool) -> Vec<u8> {
    let mut frame = vec![0x28, 0xB5, 0x2F, 0xFD];
    // 8-byte content size, no dictionary, no checksum; a window descriptor (1 KiB) unless
    // single segment.
    match single_segment {
        true => frame.push(0xE0),
        false => frame.extend([0xC0, 0x00]),
    }
    frame.extend(declared.to_le_bytes());
    let raw = 8u32 << 3; // raw block of 8 bytes, not last
    frame.extend(&raw.to_le_bytes()[..3]);
    frame.extend(mcap::MAGIC);
    let rle = (1000u32 << 3) | (1 << 1) | 1; // RLE block of 1000 bytes, last
    frame.extend(&rle.to_le_bytes()[..3]);
    frame.push(0);
    frame
}

/// A file-mode `.zstd` bag (metadata.yaml and its one `.mcap.zstd` file) whose frame declares
/// 2^50 bytes (1 PiB) in 1 KB: it decompressed whole into the temporary directory. Refused
/// before anything is decompressed, naming the cap (`ROSBAG2_RS_MAX_FILE_MODE_BYTES`).
pub fn file_mode_zstd_bomb(dir: &Path) -> PathBuf {
    use rosbag2_rs_storage::{CompressionFormat, CompressionMode, CompressionOptions};
    let uri = string_bag(
        &dir.join("file_mode_zstd_bomb"),
        rosbag2_rs_storage::StorageId::Mcap,
        &[1_000, 2_000],
        4,
        CompressionOptions {
            mode: CompressionMode::File,
            format: CompressionFormat::Zstd,
            ..Default::default()
        },
    );
    let file = storage_file(&uri);
    assert!(file.to_string_lossy().ends_with(".mcap.zstd"), "{file:?}");
    std::fs::write(&file, zstd_frame_declaring(1 << 50, false)).unwrap();
    uri
}

/// A bag (MCAP) of messages received at -2, `i64::MAX` and `i64::MIN`, whose `metadata.yaml`
/// then says its file starts at 10 and lasts `i64::MAX`: sums that overflowed in the writer
/// (`convert`) and in `doctor`.
pub fn extreme_times(dir: &Path) -> PathBuf {
    use rosbag2_rs_storage::BagMetadata;
    let uri = string_bag(
        &dir.join("extreme_times"),
        rosbag2_rs_storage::StorageId::Mcap,
        &[-2, i64::MAX, i64::MIN],
        4,
        Default::default(),
    );
    let mut metadata = BagMetadata::read_from_dir(&uri).unwrap();
    assert_eq!(metadata.files[0].starting_time, i64::MIN);
    assert_eq!(metadata.files[0].duration, i64::MAX);
    metadata.files[0].starting_time = 10;
    metadata.write_to_dir(&uri).unwrap();
    uri
}

/// A bag directory of one MCAP file whose log times straddle 2^63 (its start, as i64, is
/// `i64::MAX - 9`, its duration 110): `reindex` and `doctor` added them.
pub fn straddling_times(dir: &Path) -> PathBuf {
    let uri = dir.join("straddling_times");
    std::fs::create_dir_all(&uri).unwrap();
    mcap_log_times(
        &uri.join("straddling_times_0.mcap"),
        &[(1 << 63) - 10, (1 << 63) + 100],
    );
    uri
}

/// A crafted input as [`write_all`] writes it.
#[derive(Debug, Clone)]
pub struct Crafted {
    /// Its name (the file's or the bag directory's).
    pub name: String,
    /// What the commands are given: a file, or a bag directory.
    pub path: PathBuf,
    /// The topic `export` is asked for.
    pub topic: &'static str,
    /// What a command that fails on it must name (an extended regular expression, matched
    /// against its error output), as `doctor` must when it reports it.
    pub problem: &'static str,
    /// How many messages `cat` must print, each once, when the input lists its chunks several
    /// times.
    pub messages: Option<usize>,
}

/// Writes every crafted file of issue 48 into `dir` (which must exist): the files the issue
/// names, and its SQLite, file-mode `.zstd` and arithmetic cases.
pub fn write_all(dir: &Path) -> Vec<Crafted> {
    let named = |path: PathBuf, topic, problem, messages| Crafted {
        name: path.file_name().unwrap().to_string_lossy().into_owned(),
        path,
        topic,
        problem,
        messages,
    };
    let mut out = Vec::new();
    for which in [
        LyingIndex::Metadata,
        LyingIndex::Attachment,
        LyingIndex::Chunk,
    ] {
        out.push(named(
            mcap_wrapping_index(dir, which),
            "/t",
            "outside the file",
            None,
        ));
    }
    out.push(named(
        mcap_big_chunk_listed_16_times(dir),
        "/big",
        "listed again|again",
        Some(1),
    ));
    out.push(named(
        mcap_zstd_chunks(dir, "chunks_listed_3_times.mcap", 2, 64, None, 3),
        "/big",
        "again",
        Some(2),
    ));
    out.push(named(
        mcap_zstd_chunks(dir, "overlap_over_budget.mcap", 2, 100, Some(600 << 20), 1),
        "/big",
        "ROSBAG2_RS_MAX_ALIVE_BYTES",
        None,
    ));
    out.push(named(
        ros1_empty_elements(dir),
        "/empties",
        "ROSBAG2_RS_MAX_EMPTY_ELEMENTS",
        None,
    ));
    out.push(named(
        ros1_chunk_listed_many_times(dir, 8001),
        "/chatter",
        "chunk-info",
        Some(10),
    ));
    out.push(named(sqlite_salvage_loops(dir), "/t", "malformed", None));
    out.push(named(
        file_mode_zstd_bomb(dir),
        "/t",
        "ROSBAG2_RS_MAX_FILE_MODE_BYTES",
        None,
    ));
    out.push(named(extreme_times(dir), "/t", "duration|time", None));
    out.push(named(straddling_times(dir), "/t", "time", None));
    out
}
