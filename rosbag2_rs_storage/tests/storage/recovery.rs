//! Crash recovery matrix: bags written by our writers, cut (or left by a killed writer) at
//! seeded-random offsets, recovered by `reindex`; every message that was whole on disk before
//! the cut must come back byte for byte, in order, and nothing else. The expected set is
//! computed here independently of the library, from the untruncated file: for MCAP and ROS 1,
//! by walking the file's records (for a compressed chunk: the records the decoder produces from
//! the bytes before the cut); for SQLite, from the pages that hold each row and from the
//! write-ahead log's size at each commit.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_storage::rosbag1::{self, BagReader, Connection};
use rosbag2_rs_storage::storage::{create_writer, open_reader};
use rosbag2_rs_storage::CompressionFormat;
use rosbag2_rs_storage::*;

/// Cuts per file.
const CUTS: usize = 20;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// `n` distinct sorted offsets in `[lo, hi)`.
    fn cuts(&mut self, lo: usize, hi: usize, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n)
            .map(|_| lo + self.below((hi - lo) as u64) as usize)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

const TOPICS: [&str; 2] = ["/chatter", "/points"];

/// `n` messages with strictly increasing times; payloads unique (index and random bytes),
/// half of them compressible, every 11th one large (it spans SQLite overflow pages).
fn messages(n: usize, seed: u64) -> Vec<SerializedMessage> {
    let mut rng = Rng(seed);
    let topics: Vec<Arc<str>> = TOPICS.iter().map(|t| Arc::from(*t)).collect();
    (0..n)
        .map(|i| {
            let len = if i % 11 == 5 {
                9000 + rng.below(3000) as usize
            } else {
                16 + rng.below(1500) as usize
            };
            let mut data = vec![0, 1, 0, 0];
            data.extend_from_slice(&(i as u32).to_le_bytes());
            data.extend((0..len).map(|j| {
                if i % 2 == 0 {
                    rng.next() as u8
                } else {
                    (j / 7) as u8
                }
            }));
            // Unique head and tail, whatever the pattern in between.
            data.extend_from_slice(&rng.next().to_le_bytes());
            data.extend_from_slice(&(i as u64).to_le_bytes());
            let mut m = SerializedMessage::new(
                topics[i % 2].clone(),
                1_700_000_000_000_000_000 + i as i64 * 1_000_000,
                data,
            );
            m.send_timestamp = m.recv_timestamp - 1000;
            m
        })
        .collect()
}

/// Writes `msgs` to a single storage file with `options`; `flush_every` commits or flushes
/// every so many messages and returns the file sizes seen after each flush with the number of
/// messages written by then. `kill` leaves the writer unfinished, as a killed process does.
fn write_file(
    path: &Path,
    options: &WriterOptions,
    msgs: &[SerializedMessage],
    flush_every: Option<(usize, PathBuf)>,
    kill: bool,
) -> Vec<(u64, usize)> {
    let mut w = create_writer(path.to_path_buf(), options).unwrap();
    for t in TOPICS {
        let topic = TopicMetadata::new(t, "std_msgs/msg/String");
        w.create_topic(&topic, &MessageDefinition::default())
            .unwrap();
    }
    let mut sizes = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        w.write(m).unwrap();
        if let Some((every, watched)) = &flush_every {
            if (i + 1) % every == 0 {
                w.flush().unwrap();
                sizes.push((std::fs::metadata(watched).unwrap().len(), i + 1));
            }
        }
    }
    if kill {
        std::mem::forget(w);
    } else {
        w.finish().unwrap();
    }
    sizes
}

/// Runs `reindex` on a bag directory holding `name` with `content` (and extra files), then
/// reads every message back strictly.
fn recover(dir: &Path, files: &[(&str, &[u8])]) -> (ReindexReport, Vec<SerializedMessage>) {
    let bag = dir.join(format!("bag{}", files[0].1.len()));
    let _ = std::fs::remove_dir_all(&bag);
    std::fs::create_dir_all(&bag).unwrap();
    for (name, content) in files {
        std::fs::write(bag.join(name), content).unwrap();
    }
    let report = reindex(&bag).unwrap_or_else(|e| panic!("reindex: {e}"));
    let file = bag.join(files[0].0);
    let mut reader = open_reader(&file, OpenMode::Strict).unwrap();
    let mut out = Vec::new();
    while let Some(m) = reader.read_next().unwrap() {
        out.push(m);
    }
    std::fs::remove_dir_all(&bag).unwrap();
    (report, out)
}

fn assert_prefix(what: &str, got: &[SerializedMessage], written: &[SerializedMessage], n: usize) {
    assert_eq!(
        got.len(),
        n,
        "{what}: recovered {} messages, expected {n}",
        got.len()
    );
    for (i, (a, b)) in got.iter().zip(written).enumerate() {
        assert!(
            a.topic == b.topic && a.recv_timestamp == b.recv_timestamp && a.data == b.data,
            "{what}: message {i} differs"
        );
    }
}

fn check_report(what: &str, report: &ReindexReport, got: &[SerializedMessage]) {
    let file = &report.files[0];
    assert_eq!(file.messages, got.len() as u64, "{what}: report count");
    assert_eq!(report.metadata.message_count, got.len() as u64, "{what}");
    if let (Some(first), Some(last)) = (got.first(), got.last()) {
        assert_eq!(
            file.time_range,
            Some((first.recv_timestamp, last.recv_timestamp)),
            "{what}"
        );
    }
    let _ = file.to_string();
}

// ---------------------------------------------------------------- MCAP

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Everything the test needs to know about where each message is in an MCAP file.
enum McapMessage {
    /// A top-level message record ending at this file offset.
    Loose { end: usize },
    /// A message record in chunk `chunk`, ending at this offset of the uncompressed records.
    Chunked { chunk: usize, end: usize },
}

struct McapChunk {
    end: usize,
    records_start: usize,
    compression: String,
    uncompressed: usize,
}

/// Walks an MCAP file's records (our own reading of the spec), message order = file order.
fn mcap_layout(file: &[u8]) -> (Vec<McapChunk>, Vec<McapMessage>) {
    let (mut chunks, mut msgs) = (Vec::new(), Vec::new());
    let mut pos = 8;
    while pos + 9 <= file.len() {
        let op = file[pos];
        let end = pos + 9 + le64(file, pos + 1) as usize;
        match op {
            0x05 => msgs.push(McapMessage::Loose { end }),
            0x06 => {
                let body = pos + 9;
                let name_len = u32::from_le_bytes(file[body + 28..body + 32].try_into().unwrap());
                let name_end = body + 32 + name_len as usize;
                let compression = String::from_utf8(file[body + 32..name_end].to_vec()).unwrap();
                let records_start = name_end + 8;
                let records = decode(&compression, &file[records_start..end]);
                assert_eq!(records.len() as u64, le64(file, body + 16));
                let mut at = 0;
                while at < records.len() {
                    let rec_end = at + 9 + le64(&records, at + 1) as usize;
                    if records[at] == 0x05 {
                        msgs.push(McapMessage::Chunked {
                            chunk: chunks.len(),
                            end: rec_end,
                        });
                    }
                    at = rec_end;
                }
                chunks.push(McapChunk {
                    end,
                    records_start,
                    compression,
                    uncompressed: records.len(),
                });
            }
            0x0F => break,
            _ => {}
        }
        pos = end;
    }
    (chunks, msgs)
}

/// What a streaming decoder produces from `bytes` (the start of a compressed stream).
fn decode(compression: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let mut reader: Box<dyn Read + '_> = match compression {
        "" => return bytes.to_vec(),
        "lz4" => match lz4::Decoder::new(bytes) {
            Ok(d) => Box::new(d),
            Err(_) => return out,
        },
        "zstd" => Box::new(zstd::stream::read::Decoder::with_buffer(bytes).unwrap()),
        "bz2" => Box::new(bzip2::read::BzDecoder::new(bytes)),
        other => panic!("{other}"),
    };
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

/// How many messages of the MCAP file were whole on disk (or decodable) before `cut`.
fn mcap_expected(file: &[u8], cut: usize) -> usize {
    let (chunks, msgs) = mcap_layout(file);
    let produced: Vec<usize> = chunks
        .iter()
        .map(|c| {
            if c.end <= cut {
                c.uncompressed
            } else if cut <= c.records_start {
                0
            } else {
                decode(&c.compression, &file[c.records_start..cut])
                    .len()
                    .min(c.uncompressed)
            }
        })
        .collect();
    msgs.iter()
        .take_while(|m| match m {
            McapMessage::Loose { end } => *end <= cut,
            McapMessage::Chunked { chunk, end } => *end <= produced[*chunk],
        })
        .count()
}

fn mcap_case(preset: &str, compression: Option<&str>, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.mcap");
    let options = WriterOptions {
        preset: StoragePreset::parse(preset).unwrap(),
        compression: compression.map(|c| CompressionFormat::parse(c).unwrap()),
        // Compressed chunks decode block by block (LZ4 64 KiB, zstd up to 128 KiB): a chunk of
        // several blocks has a readable prefix.
        chunk_size: if compression.is_some() { 256 } else { 48 } * 1024,
        ..WriterOptions::default()
    };
    let msgs = messages(500, seed);
    write_file(&path, &options, &msgs, None, false);
    let full = std::fs::read(&path).unwrap();
    let (chunks, layout) = mcap_layout(&full);
    assert_eq!(layout.len(), msgs.len());
    assert!(
        preset == "fastwrite" || chunks.len() >= 4,
        "{} chunks",
        chunks.len()
    );
    let mut rng = Rng(seed);
    let what = format!("mcap {preset}/{compression:?}");
    let mut partial_seen = 0;
    for cut in rng.cuts(16, full.len(), CUTS) {
        let expected = mcap_expected(&full, cut);
        let (report, got) = recover(dir.path(), &[("bag_0.mcap", &full[..cut])]);
        let what = format!("{what} cut at {cut} of {}", full.len());
        assert_prefix(&what, &got, &msgs, expected);
        check_report(&what, &report, &got);
        partial_seen += report.files[0].salvaged_messages;
        let lost = &report.files[0].lost;
        if expected < msgs.len() {
            assert!(
                lost.damaged_bytes > 0 || lost.missing_bytes > 0,
                "{what}: {lost:?}"
            );
        }
    }
    assert!(
        preset == "fastwrite" || partial_seen > 0,
        "{what}: no cut recovered anything from a cut chunk"
    );
}

#[test]
fn mcap_uncompressed_chunks_cut_at_random_offsets() {
    mcap_case("none", None, 11);
}

#[test]
fn mcap_lz4_chunks_cut_at_random_offsets() {
    mcap_case("none", Some("lz4"), 12);
}

#[test]
fn mcap_zstd_chunks_cut_at_random_offsets() {
    mcap_case("none", Some("zstd"), 13);
}

#[test]
fn mcap_unchunked_cut_at_random_offsets() {
    mcap_case("fastwrite", None, 14);
}

// ---------------------------------------------------------------- SQLite

const PAGE: usize = 4096;

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// For each message, the last page (0-based) holding a part of it.
fn sqlite_last_pages(file: &[u8], msgs: &[SerializedMessage]) -> Vec<usize> {
    msgs.iter()
        .map(|m| {
            let head = find(file, &m.data[..24]).expect("payload head on disk");
            let tail = find(file, &m.data[m.data.len() - 16..]).expect("payload tail on disk");
            head.max(tail) / PAGE
        })
        .collect()
}

#[test]
fn sqlite_truncated_database_cut_at_random_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.db3");
    let options = WriterOptions {
        storage: StorageId::Sqlite3,
        ..WriterOptions::default()
    };
    let msgs = messages(300, 21);
    write_file(&path, &options, &msgs, None, false);
    let full = std::fs::read(&path).unwrap();
    assert_eq!(full.len() % PAGE, 0);
    let pages = sqlite_last_pages(&full, &msgs);
    let mut rng = Rng(21);
    let mut salvaged = 0;
    // The first pages hold the schema and the topics table.
    for cut in rng.cuts(8 * PAGE, full.len(), CUTS) {
        let whole_pages = cut / PAGE;
        let expected: Vec<SerializedMessage> = msgs
            .iter()
            .zip(&pages)
            .filter(|(_, &p)| p < whole_pages)
            .map(|(m, _)| m.clone())
            .collect();
        let (report, got) = recover(dir.path(), &[("bag_0.db3", &full[..cut])]);
        let what = format!("sqlite cut at {cut} of {}", full.len());
        assert_prefix(&what, &got, &expected, expected.len());
        check_report(&what, &report, &got);
        salvaged += report.files[0].salvaged_messages;
        if cut < full.len() {
            assert!(report.files[0].lost.missing_bytes > 0, "{what}");
        }
    }
    assert!(salvaged == 0, "the b-tree reaches every whole leaf");
}

#[test]
fn sqlite_destroyed_btree_page_rows_recovered_from_its_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.db3");
    let options = WriterOptions {
        storage: StorageId::Sqlite3,
        ..WriterOptions::default()
    };
    let msgs = messages(300, 22);
    write_file(&path, &options, &msgs, None, false);
    let root: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name='messages'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let root = root as usize;
    let mut db = std::fs::read(&path).unwrap();
    // The table's root (an interior page: the table spans many leaves) is overwritten.
    db[(root - 1) * PAGE..root * PAGE].fill(0x33);
    let (report, got) = recover(dir.path(), &[("bag_0.db3", &db)]);
    assert_prefix("sqlite root destroyed", &got, &msgs, msgs.len());
    assert_eq!(report.files[0].salvaged_messages, msgs.len() as u64);
    assert_eq!(report.files[0].action, RecoveryAction::Rewritten);
}

#[test]
fn sqlite_killed_with_wal_and_wal_cut_at_random_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.db3");
    let wal = dir.path().join("killed.db3-wal");
    let options = WriterOptions {
        storage: StorageId::Sqlite3,
        preset: StoragePreset::Resilient,
        ..WriterOptions::default()
    };
    let msgs = messages(300, 31);
    // Killed after 290 messages: the last 10 were never committed.
    let commits = write_file(&path, &options, &msgs[..290], Some((20, wal.clone())), true);
    let db = std::fs::read(&path).unwrap();
    let log = std::fs::read(&wal).unwrap();
    assert!(log.len() as u64 >= commits.last().unwrap().0);
    // The whole log: every committed message.
    let (report, got) = recover(dir.path(), &[("bag_0.db3", &db), ("bag_0.db3-wal", &log)]);
    assert_eq!(report.files[0].action, RecoveryAction::WalApplied);
    assert_prefix("sqlite wal whole", &got, &msgs, 280);
    check_report("sqlite wal whole", &report, &got);
    // The log cut at random offsets: every transaction whose commit frame is whole.
    let mut rng = Rng(31);
    let first = commits[0].0 as usize;
    for cut in rng.cuts(first, log.len(), CUTS) {
        let expected = commits
            .iter()
            .filter(|(len, _)| *len as usize <= cut)
            .map(|(_, n)| *n)
            .max()
            .unwrap_or(0);
        let (report, got) = recover(
            dir.path(),
            &[("bag_0.db3", &db), ("bag_0.db3-wal", &log[..cut])],
        );
        let what = format!("sqlite wal cut at {cut} of {}", log.len());
        assert_prefix(&what, &got, &msgs, expected);
        check_report(&what, &report, &got);
    }
}

#[test]
fn sqlite_killed_without_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.db3");
    let options = WriterOptions {
        storage: StorageId::Sqlite3,
        ..WriterOptions::default()
    };
    let msgs = messages(400, 41);
    let commits = write_file(&path, &options, &msgs, Some((64, path.clone())), true);
    let committed = commits.last().unwrap().1;
    let db = std::fs::read(&path).unwrap();
    let (report, got) = recover(dir.path(), &[("bag_0.db3", &db)]);
    // Rows of the open transaction that reached the file are real messages too; nothing else.
    assert!(
        got.len() >= committed,
        "{} of {committed} committed",
        got.len()
    );
    assert_prefix("sqlite killed without wal", &got, &msgs, got.len());
    check_report("sqlite killed without wal", &report, &got);
    // Cut as well: the rows on whole pages.
    let pages = sqlite_last_pages(&db, &msgs[..committed]);
    let mut rng = Rng(41);
    for cut in rng.cuts(8 * PAGE, db.len(), CUTS / 2) {
        let (_, got) = recover(dir.path(), &[("bag_0.db3", &db[..cut])]);
        let whole = pages.iter().filter(|&&p| p < cut / PAGE).count();
        let what = format!("sqlite killed without wal, cut at {cut}");
        assert!(got.len() >= whole, "{what}: {} of {whole}", got.len());
        let expected: Vec<SerializedMessage> = msgs
            .iter()
            .filter(|m| got.iter().any(|g| g.recv_timestamp == m.recv_timestamp))
            .cloned()
            .collect();
        assert_prefix(&what, &got, &expected, expected.len());
    }
}

// ---------------------------------------------------------------- ROS 1

fn u32_at(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// The `op` and the value of `name` in a ROS 1 record header.
fn ros1_field<'a>(header: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let mut at = 0;
    while at < header.len() {
        let len = u32_at(header, at);
        let field = &header[at + 4..at + 4 + len];
        let eq = field.iter().position(|&b| b == b'=').unwrap();
        if &field[..eq] == name.as_bytes() {
            return Some(&field[eq + 1..]);
        }
        at += 4 + len;
    }
    None
}

/// How many messages of the ROS 1 bag were whole on disk (or decodable) before `cut`.
fn ros1_expected(file: &[u8], cut: usize) -> usize {
    let mut pos = 13;
    let mut n = 0;
    while pos < file.len() {
        let header_len = u32_at(file, pos);
        let header = &file[pos + 4..pos + 4 + header_len];
        let data_at = pos + 8 + header_len;
        let end = data_at + u32_at(file, data_at - 4);
        if ros1_field(header, "op") == Some(&[0x05]) {
            let compression =
                std::str::from_utf8(ros1_field(header, "compression").unwrap()).unwrap();
            let compression = if compression == "none" {
                ""
            } else {
                compression
            };
            let whole = decode(compression, &file[data_at..end]);
            let produced = if end <= cut {
                whole.len()
            } else if cut <= data_at {
                0
            } else {
                decode(compression, &file[data_at..cut]).len()
            };
            let mut at = 0;
            while at < whole.len() {
                let h = u32_at(&whole, at);
                let rec_end = at + 8 + h + u32_at(&whole, at + 4 + h);
                if ros1_field(&whole[at + 4..at + 4 + h], "op") == Some(&[0x02]) {
                    if rec_end > produced {
                        return n;
                    }
                    n += 1;
                }
                at = rec_end;
            }
        }
        pos = end;
    }
    n
}

fn ros1_case(compression: CompressionFormat, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.bag");
    let msgs = messages(
        if compression == CompressionFormat::None {
            500
        } else {
            1200
        },
        seed,
    );
    let mut w = rosbag1::BagWriter::create(
        &path,
        rosbag1::WriterOptions {
            compression,
            // bz2 and roslz4 blocks are 900 KB and 1 MB: a compressed chunk has a readable
            // prefix only when it spans several.
            chunk_threshold: if compression == CompressionFormat::None {
                48 * 1024
            } else {
                3 << 19
            },
        },
    )
    .unwrap();
    let ids: Vec<u32> = TOPICS
        .iter()
        .map(|t| {
            w.add_connection(Connection {
                id: 0,
                topic: t.to_string(),
                type_name: "std_msgs/String".into(),
                md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
                message_definition: "string data\n".into(),
                callerid: Some("/test".into()),
                latching: false,
            })
        })
        .collect();
    for (i, m) in msgs.iter().enumerate() {
        w.write(ids[i % 2], m.recv_timestamp, &m.data).unwrap();
    }
    w.finish().unwrap();
    let full = std::fs::read(&path).unwrap();
    assert_eq!(ros1_expected(&full, full.len()), msgs.len());
    let mut rng = Rng(seed);
    let mut salvaged = 0;
    for cut in rng.cuts(13 + 4100, full.len(), CUTS) {
        let expected = ros1_expected(&full, cut);
        let bag = dir.path().join("cut.bag");
        std::fs::write(&bag, &full[..cut]).unwrap();
        let report = reindex(&bag).unwrap();
        let mut reader = BagReader::open(&bag, OpenMode::Strict).unwrap();
        assert!(reader.is_indexed() || expected == 0, "{cut}");
        let mut got = Vec::new();
        while let Some(m) = reader.read_next().unwrap() {
            let topic = reader.connection(m.connection).unwrap().topic.clone();
            got.push(SerializedMessage::new(
                topic.as_str().into(),
                m.time,
                m.data,
            ));
        }
        let what = format!("ros1 {compression:?} cut at {cut} of {}", full.len());
        assert_prefix(&what, &got, &msgs, expected);
        assert_eq!(report.files[0].messages, got.len() as u64, "{what}");
        salvaged += report.files[0].salvaged_messages;
    }
    assert!(
        salvaged > 0,
        "{compression:?}: nothing recovered from a cut chunk"
    );
}

#[test]
fn ros1_killed_writer_leaves_a_bag_without_index_that_reindex_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.bag");
    let msgs = messages(400, 54);
    let mut w = rosbag1::BagWriter::create(
        &path,
        rosbag1::WriterOptions {
            compression: CompressionFormat::None,
            chunk_threshold: 48 * 1024,
        },
    )
    .unwrap();
    let id = w.add_connection(Connection {
        id: 0,
        topic: TOPICS[0].into(),
        type_name: "std_msgs/String".into(),
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
        message_definition: "string data\n".into(),
        callerid: None,
        latching: false,
    });
    for m in &msgs {
        w.write(id, m.recv_timestamp, &m.data).unwrap();
    }
    // A killed recorder: the open chunk and the index are never written.
    std::mem::forget(w);
    let file = std::fs::read(&path).unwrap();
    let expected = ros1_expected(&file, file.len());
    assert!(expected > 0 && expected < msgs.len(), "{expected}");
    let report = reindex(&path).unwrap();
    assert_eq!(report.files[0].action, RecoveryAction::Rewritten);
    assert_eq!(report.files[0].messages, expected as u64);
    let mut reader = BagReader::open(&path, OpenMode::Strict).unwrap();
    assert!(reader.is_indexed());
    let mut n = 0;
    while let Some(m) = reader.read_next().unwrap() {
        assert_eq!(
            (m.time, &m.data[..]),
            (msgs[n].recv_timestamp, &msgs[n].data[..])
        );
        n += 1;
    }
    assert_eq!(n, expected);
}

#[test]
fn ros1_uncompressed_bag_without_index_cut_at_random_offsets() {
    ros1_case(CompressionFormat::None, 51);
}

#[test]
fn ros1_lz4_bag_without_index_cut_at_random_offsets() {
    ros1_case(CompressionFormat::Lz4, 52);
}

#[test]
fn ros1_bz2_bag_without_index_cut_at_random_offsets() {
    ros1_case(CompressionFormat::Bz2, 53);
}

// ---------------------------------------------------------------- never panic

/// One small file of each kind, written once.
fn samples() -> &'static [(String, Vec<u8>)] {
    static SAMPLES: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
    SAMPLES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let msgs = messages(60, 7);
        let mut out = Vec::new();
        for (name, storage, preset, compression) in [
            ("a.mcap", StorageId::Mcap, "none", None),
            ("b.mcap", StorageId::Mcap, "none", Some("lz4")),
            ("c.mcap", StorageId::Mcap, "none", Some("zstd")),
            ("d.mcap", StorageId::Mcap, "fastwrite", None),
            ("e.db3", StorageId::Sqlite3, "none", None),
            ("f.bag", StorageId::Rosbag1, "none", Some("lz4")),
        ] {
            let path = dir.path().join(name);
            let options = WriterOptions {
                storage,
                preset: StoragePreset::parse(preset).unwrap(),
                compression: compression.map(|c| CompressionFormat::parse(c).unwrap()),
                chunk_size: 8 * 1024,
                ..Default::default()
            };
            if storage == StorageId::Rosbag1 {
                let mut w = rosbag1::BagWriter::create(
                    &path,
                    rosbag1::WriterOptions {
                        compression: CompressionFormat::Lz4,
                        chunk_threshold: 8 * 1024,
                    },
                )
                .unwrap();
                let id = w.add_connection(Connection {
                    id: 0,
                    topic: "/t".into(),
                    type_name: "std_msgs/String".into(),
                    md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
                    message_definition: "string data\n".into(),
                    callerid: None,
                    latching: false,
                });
                for m in &msgs {
                    w.write(id, m.recv_timestamp, &m.data).unwrap();
                }
                w.finish().unwrap();
            } else {
                write_file(&path, &options, &msgs, None, false);
            }
            out.push((name.to_string(), std::fs::read(&path).unwrap()));
        }
        out
    })
}

/// Opens, reads and reindexes a damaged file; any outcome but a panic is fine.
fn exercise(name: &str, bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    std::fs::create_dir(&bag).unwrap();
    let file = bag.join(format!("bag_0.{}", name.rsplit('.').next().unwrap()));
    std::fs::write(&file, bytes).unwrap();
    for mode in [OpenMode::Strict, OpenMode::Recover] {
        if let Ok(mut r) = open_reader(&file, mode) {
            while let Ok(Some(_)) = r.read_next() {}
        }
    }
    let target = if name.ends_with(".bag") { &file } else { &bag };
    if reindex(target).is_ok() {
        if let Ok(mut r) = open_reader(&file, OpenMode::Strict) {
            while let Ok(Some(_)) = r.read_next() {}
        }
    }
}

/// Reads every message a reader gives back, until the end or an error.
fn read_back(file: &Path, mode: OpenMode) -> Option<Vec<SerializedMessage>> {
    let mut r = open_reader(file, mode).ok()?;
    let mut out = Vec::new();
    while let Ok(Some(m)) = r.read_next() {
        out.push(m);
    }
    Some(out)
}

/// What comes back from sample `name` cut to `bytes`, read recovering and then strictly after
/// `reindex`: only messages of the sample (same time, and for rosbag2 files the same bytes:
/// nothing invented) and, for MCAP and ROS 1 files, whose damage is at the end, the messages
/// before the cut in order (a prefix of the sample).
fn check_truncated(name: &str, bytes: &[u8]) {
    let written = messages(60, 7);
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    std::fs::create_dir(&bag).unwrap();
    let file = bag.join(format!("bag_0.{}", name.rsplit('.').next().unwrap()));
    std::fs::write(&file, bytes).unwrap();
    let ros1 = name.ends_with(".bag");
    let check = |what: &str, got: &[SerializedMessage]| {
        for m in got {
            let Some(w) = written
                .iter()
                .find(|w| w.recv_timestamp == m.recv_timestamp)
            else {
                panic!(
                    "{name} ({what}, {} bytes): invented message at {}",
                    bytes.len(),
                    m.recv_timestamp
                );
            };
            assert!(
                ros1 || w.data == m.data,
                "{name} ({what}): message at {} altered",
                m.recv_timestamp
            );
        }
        if !name.ends_with(".db3") {
            let times: Vec<i64> = got.iter().map(|m| m.recv_timestamp).collect();
            let prefix: Vec<i64> = written
                .iter()
                .take(got.len())
                .map(|m| m.recv_timestamp)
                .collect();
            assert_eq!(
                times,
                prefix,
                "{name} ({what}, {} bytes): not a prefix",
                bytes.len()
            );
        }
    };
    if let Some(got) = read_back(&file, OpenMode::Recover) {
        check("recovering reader", &got);
    }
    let target = if ros1 { &file } else { &bag };
    if reindex(target).is_ok() {
        if let Some(got) = read_back(&file, OpenMode::Strict) {
            check("after reindex", &got);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Cut anywhere, every format gives back nothing invented (and MCAP and ROS 1 a prefix).
    #[test]
    fn random_truncation_recovers_only_what_was_written(
        which in 0usize..6,
        cut in 0.0f64..1.0,
    ) {
        let (name, full) = &samples()[which];
        check_truncated(name, &full[..(full.len() as f64 * cut) as usize]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_truncation_and_corruption_never_panic(
        which in 0usize..6,
        cut in 0.0f64..1.0,
        flips in proptest::collection::vec((0.0f64..1.0, 1u8..=255), 0..6),
    ) {
        let (name, full) = &samples()[which];
        let mut bytes = full[..(full.len() as f64 * cut) as usize].to_vec();
        if bytes.is_empty() {
            bytes = full.clone();
        }
        for (at, x) in flips {
            let i = ((bytes.len() - 1) as f64 * at) as usize;
            bytes[i] ^= x;
        }
        exercise(name, &bytes);
    }
}
