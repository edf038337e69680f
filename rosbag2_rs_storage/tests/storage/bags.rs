//! Bags of known content for the tests that write and read them: four topics (one latched, one
//! best-effort, one of a type no one knows), messages 1 ms apart whose payloads encode their
//! index. Shared with `rosbag2_rs_tools`' `convert` tests, which include this file.

use std::path::Path;
use std::sync::Arc;

use rosbag2_rs_storage::qos::{Durability, Reliability};
use rosbag2_rs_storage::*;

/// The four topics: `/chatter`, `/map` (transient local, depth 1), `/scan` (best effort) and
/// `/odd` (an unknown type).
pub fn topics() -> Vec<TopicMetadata> {
    let mut latched = TopicMetadata::new("/map", "nav_msgs/msg/OccupancyGrid");
    latched.offered_qos_profiles = vec![QosProfile {
        durability: Durability::TransientLocal,
        depth: 1,
        ..Default::default()
    }];
    let mut scan = TopicMetadata::new("/scan", "sensor_msgs/msg/LaserScan");
    scan.offered_qos_profiles = vec![QosProfile {
        reliability: Reliability::BestEffort,
        ..Default::default()
    }];
    vec![
        TopicMetadata::new("/chatter", "std_msgs/msg/String"),
        latched,
        scan,
        TopicMetadata::new("/odd", "unknown_msgs/msg/Thing"),
    ]
}

/// A CDR-looking payload that encodes its index so order and content can be checked.
pub fn payload(i: usize, len: usize) -> Vec<u8> {
    let mut v = vec![0, 1, 0, 0];
    v.extend_from_slice(&(i as u32).to_le_bytes());
    v.extend((0..len).map(|j| (i * 31 + j) as u8));
    v
}

/// Messages at 1 ms spacing cycling over the topics, times starting at `t0`.
pub fn messages(n: usize, t0: i64) -> Vec<SerializedMessage> {
    let names: Vec<Arc<str>> = topics()
        .iter()
        .map(|t| Arc::from(t.name.as_str()))
        .collect();
    (0..n)
        .map(|i| {
            let mut m = SerializedMessage::new(
                names[i % names.len()].clone(),
                t0 + i as i64 * 1_000_000,
                payload(i, i % 300),
            );
            m.send_timestamp = (m.recv_timestamp - 500).max(0);
            m
        })
        .collect()
}

/// Writer options for a bag at `dir` in `storage`: 4 KiB chunks, one custom-data pair.
pub fn options(dir: &Path, storage: StorageId) -> BagWriterOptions {
    BagWriterOptions {
        uri: dir.to_path_buf(),
        storage: WriterOptions {
            storage,
            chunk_size: 4096,
            ..Default::default()
        },
        custom_data: [("owner".to_string(), "tests".to_string())].into(),
        ..Default::default()
    }
}

/// Writes `msgs` into a new bag with [`topics`]; returns its metadata.
pub fn write_bag(opts: BagWriterOptions, msgs: &[SerializedMessage]) -> BagMetadata {
    let mut w = BagWriter::create(opts).unwrap();
    for t in topics() {
        w.create_topic(&t, None).unwrap();
    }
    for m in msgs {
        w.write(m).unwrap();
    }
    w.close().unwrap()
}

/// The `index`-th storage file of the bag in `dir`, as its `metadata.yaml` names it (files are
/// named with the local time they were opened, as rosbag2 Lyrical names them).
pub fn bag_file(dir: &Path, index: usize) -> std::path::PathBuf {
    let metadata = rosbag2_rs_storage::BagMetadata::read_from_dir(dir).unwrap();
    dir.join(&metadata.relative_file_paths[index])
}

/// Every message of the bag at `path`, in order.
pub fn read_all(path: &Path) -> Vec<SerializedMessage> {
    SequentialReader::open(path)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Compression in `mode` on `threads` threads (0: one per CPU), the rest rosbag2's defaults.
pub fn compression(mode: CompressionMode, threads: usize) -> CompressionOptions {
    CompressionOptions {
        mode,
        threads,
        ..Default::default()
    }
}
