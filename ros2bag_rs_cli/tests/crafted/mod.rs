//! Crafted hostile inputs of a few KB each (the RealSense one 19 KB: its description alone): valid files whose size fields lie.
//!
//! Every file is written by this crate's own writers, then patched:
//!
//! - `mcap_lz4_bomb`, `mcap_zstd_bomb`: an MCAP bag whose one compressed chunk claims 15 GiB
//!   once decompressed (CRC 0), in the chunk record and in the summary's chunk index.
//! - `sqlite_cell_bomb`: a `.db3` bag whose `messages` row claims a payload of 2^64 - 1 bytes.
//! - `ros1_lz4_bomb`, `ros1_bz2_bomb`: a ROS 1 bag whose chunk claims 4 GiB uncompressed.
//! - `realsense_bomb`: a RealSense SDK recording (ROS 1 layout) whose description chunk claims
//!   4 GiB.
//! - `metadata_laughs`: an intact MCAP bag whose `metadata.yaml` is a "billion laughs" of
//!   aliases (10^9 nodes once expanded).
//!
//! `CRAFTED_INPUTS_DIR=/some/dir cargo test -p ros2bag_rs_cli --test hostile_inputs` keeps them
//! there for trying by hand.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rosbag2_rs_storage::storage::{CompressionFormat, StorageId, WriterOptions};
use rosbag2_rs_storage::{BagWriter, BagWriterOptions, SerializedMessage, TopicMetadata};

/// A crafted input: its name and the path to hand to the command line.
pub struct Crafted {
    /// What it is (see the module documentation).
    pub name: &'static str,
    /// A bag directory or a single file.
    pub path: PathBuf,
}

/// Writes every crafted input under `dir`.
pub fn write_all(dir: &Path) -> Vec<Crafted> {
    vec![
        Crafted {
            name: "mcap_lz4_bomb",
            path: mcap_bomb(dir, "mcap_lz4_bomb", CompressionFormat::Lz4),
        },
        Crafted {
            name: "mcap_zstd_bomb",
            path: mcap_bomb(dir, "mcap_zstd_bomb", CompressionFormat::Zstd),
        },
        Crafted {
            name: "sqlite_cell_bomb",
            path: sqlite_bomb(dir),
        },
        Crafted {
            name: "ros1_lz4_bomb",
            path: ros1_bomb(
                dir,
                "ros1_lz4_bomb",
                rosbag2_rs_storage::CompressionFormat::Lz4,
            ),
        },
        Crafted {
            name: "ros1_bz2_bomb",
            path: ros1_bomb(
                dir,
                "ros1_bz2_bomb",
                rosbag2_rs_storage::CompressionFormat::Bz2,
            ),
        },
        Crafted {
            name: "realsense_bomb",
            path: realsense_bomb(dir),
        },
        Crafted {
            name: "metadata_laughs",
            path: metadata_laughs(dir),
        },
    ]
}

/// A small bag of one `std_msgs/msg/String` topic, 20 messages.
fn small_bag(uri: &Path, storage: StorageId, compression: Option<CompressionFormat>) -> PathBuf {
    let mut w = BagWriter::create(BagWriterOptions {
        uri: uri.to_path_buf(),
        storage: WriterOptions {
            storage,
            compression,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    w.create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
        .unwrap();
    let topic: Arc<str> = "/chatter".into();
    for i in 0..20i64 {
        let text = format!("hello {i:04}\0");
        let mut cdr = vec![0, 1, 0, 0];
        cdr.extend((text.len() as u32).to_le_bytes());
        cdr.extend(text.as_bytes());
        w.write(&SerializedMessage::new(topic.clone(), 1_000 + i, cdr))
            .unwrap();
    }
    w.close().unwrap();
    the_file(uri)
}

/// The one storage file of the bag directory `uri`.
fn the_file(uri: &Path) -> PathBuf {
    std::fs::read_dir(uri)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().is_some_and(|n| n != "metadata.yaml"))
        .unwrap()
}

/// Every offset of `needle` in `hay`.
fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

/// MCAP: every chunk record (opcode 0x06) and chunk index (0x08) says 15 GiB uncompressed,
/// CRC 0.
fn mcap_bomb(dir: &Path, name: &str, compression: CompressionFormat) -> PathBuf {
    let uri = dir.join(name);
    let file = small_bag(&uri, StorageId::Mcap, Some(compression));
    let mut data = std::fs::read(&file).unwrap();
    let claim = (15u64 << 30).to_le_bytes();
    let mut at = 8; // after the magic
    let mut patched = 0;
    while at + 9 <= data.len() {
        let op = data[at];
        let len = u64::from_le_bytes(data[at + 1..at + 9].try_into().unwrap()) as usize;
        let body = at + 9;
        if op == 0x06 {
            // start, end, uncompressed_size, uncompressed_crc
            data[body + 16..body + 24].copy_from_slice(&claim);
            data[body + 24..body + 28].fill(0);
            patched += 1;
        } else if op == 0x08 {
            // start, end, chunk offset, chunk length, offsets map (u32 length + entries),
            // message index length, compression (u32 + name), compressed size, uncompressed size
            let map_len =
                u32::from_le_bytes(data[body + 32..body + 36].try_into().unwrap()) as usize;
            let name_at = body + 36 + map_len + 8;
            let name_len = u32::from_le_bytes(data[name_at..name_at + 4].try_into().unwrap());
            let size_at = name_at + 4 + name_len as usize + 8;
            data[size_at..size_at + 8].copy_from_slice(&claim);
        } else if op == 0x02 {
            break; // footer
        }
        at = body + len;
    }
    assert!(patched > 0, "{name}: no chunk to patch");
    // The summary CRC in the footer (if any) now fails; zero it ("no CRC").
    let footer = data.len() - 8 - (1 + 8 + 20);
    assert_eq!(data[footer], 0x02);
    data[footer + 9 + 16..footer + 9 + 20].fill(0);
    std::fs::write(&file, &data).unwrap();
    uri
}

/// SQLite3: the cell of one `messages` row is rewritten in the page's free space with a
/// payload size of 2^64 - 1; the bag directory is returned.
fn sqlite_bomb(dir: &Path) -> PathBuf {
    let uri = dir.join("sqlite_cell_bomb");
    let file = small_bag(&uri, StorageId::Sqlite3, None);
    let mut data = std::fs::read(&file).unwrap();
    let page_size = match u16::from_be_bytes([data[16], data[17]]) {
        1 => 65536,
        n => n as usize,
    };
    let marker = find_all(&data, b"hello 0007")[0];
    let page_start = marker / page_size * page_size;
    let page = &mut data[page_start..page_start + page_size];
    assert_eq!(page[0], 0x0D, "the row is on a table leaf page");
    let cells = u16::from_be_bytes([page[3], page[4]]) as usize;
    let array_end = 8 + 2 * cells;
    let content_start = u16::from_be_bytes([page[5], page[6]]) as usize;
    assert!(content_start - array_end >= 12, "room for the forged cell");
    let forged = content_start - 12;
    page[forged..forged + 9].fill(0xff);
    page[forged + 9] = 0x7f; // rowid
    page[8..10].copy_from_slice(&(forged as u16).to_be_bytes());
    std::fs::write(&file, &data).unwrap();
    uri
}

/// The offsets of the `size=` values of the chunk records of a ROS 1 bag.
fn ros1_chunk_sizes(data: &[u8]) -> Vec<usize> {
    find_all(data, b"\x09\x00\x00\x00size=")
        .into_iter()
        .map(|at| at + 9)
        .collect()
}

/// ROS 1: a bag of one chunk, its `size` field set to 2^32 - 1.
fn ros1_bomb(
    dir: &Path,
    name: &str,
    compression: rosbag2_rs_storage::CompressionFormat,
) -> PathBuf {
    use rosbag2_rs_storage::rosbag1::{BagWriter, Connection, WriterOptions};
    let path = dir.join(format!("{name}.bag"));
    let mut w = BagWriter::create(
        &path,
        WriterOptions {
            compression,
            ..Default::default()
        },
    )
    .unwrap();
    let id = w.add_connection(Connection {
        id: 0,
        topic: "/chatter".into(),
        type_name: "std_msgs/String".into(),
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
        message_definition: "string data\n".into(),
        callerid: None,
        latching: false,
    });
    for i in 0..20i64 {
        let text = format!("hello {i:04}");
        let mut data = (text.len() as u32).to_le_bytes().to_vec();
        data.extend(text.as_bytes());
        w.write(id, 1_000_000_000 + i, &data).unwrap();
    }
    w.finish().unwrap();
    patch_ros1_chunks(&path);
    path
}

/// Sets every chunk's `size` to 2^32 - 1.
fn patch_ros1_chunks(path: &Path) {
    let mut data = std::fs::read(path).unwrap();
    let sizes = ros1_chunk_sizes(&data);
    assert!(!sizes.is_empty(), "{}: no chunk", path.display());
    for at in sizes {
        data[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    }
    std::fs::write(path, &data).unwrap();
}

/// RealSense: a recording of a depth stream (description only, lz4 chunks), every chunk
/// claiming 4 GiB.
fn realsense_bomb(dir: &Path) -> PathBuf {
    use realsense_bag_rs::{Device, Intrinsics, RecordingWriter, Sensor, StreamProfile};
    let path = dir.join("realsense_bomb.bag");
    let device = Device {
        file_version: 4,
        info: vec![("Name".into(), "crafted".into())],
        sensors: vec![Sensor {
            index: 0,
            info: vec![("Name".into(), "Stereo Module".into())],
            streams: vec![StreamProfile {
                stream: "depth".into(),
                format: "z16".into(),
                fps: 30,
                intrinsics: Some(Intrinsics {
                    width: 2,
                    height: 1,
                    model: "brown_conrady".into(),
                    coeffs: vec![0.0; 5],
                    ..Intrinsics::default()
                }),
                ..StreamProfile::default()
            }],
            ..Sensor::default()
        }],
        ..Device::default()
    };
    let w = RecordingWriter::create(&path, &device, rosbag2_rs_storage::CompressionFormat::Lz4)
        .unwrap();
    w.finish().unwrap();
    patch_ros1_chunks(&path);
    path
}

/// An intact MCAP bag whose `metadata.yaml` expands to 10^9 nodes through aliases.
fn metadata_laughs(dir: &Path) -> PathBuf {
    let uri = dir.join("metadata_laughs");
    small_bag(&uri, StorageId::Mcap, None);
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    text.push_str("rosbag2_bagfile_information: *a8\n");
    std::fs::write(uri.join("metadata.yaml"), text).unwrap();
    uri
}
