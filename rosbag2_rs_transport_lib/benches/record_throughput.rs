//! Recorder throughput on the in-process backend, against the disk's own bandwidth measured in
//! the same run, plus the snapshot buffer's ingestion rate and memory overhead per message.
//! Prints Markdown tables.
//!
//! `cargo bench -p rosbag2_rs_transport_lib --bench record_throughput`
//! Environment: `BENCH_DIR` (default `target/bench-data`, on the disk under test), `BENCH_LARGE`
//! (1 MB messages, default 2000), `BENCH_SMALL` (100 B messages, default 5000000),
//! `BENCH_SNAPSHOT` (messages into the snapshot buffer, default 2000000).
//!
//! Each recording runs from the first publish until `Recorder::stop` returns, which includes
//! writing the cache out, closing the bag and `fdatasync`. Messages are published back to back
//! from one thread (delivery is synchronous on it), so the publisher is as fast as the bus
//! allows; "paced" runs publish at a fixed rate instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::InProcessBus;
use rosbag2_rs_transport_lib::{Middleware, RawPublisher};
use rosbag2_rs_transport_lib::{RecordOptions, Recorder, SnapshotLimits, TopicSelection};

#[path = "common/heap.rs"]
mod heap;
use heap::LIVE;

#[global_allocator]
static GLOBAL: heap::Counting = heap::Counting;

const TOPICS: usize = 10;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn payloads(size: usize) -> Vec<Bytes> {
    (0..16u8)
        .map(|i| Bytes::from([&[0u8, 1, 0, 0][..], &vec![i; size - 4]].concat()))
        .collect()
}

fn row(what: &str, seconds: f64, messages: u64, bytes: u64, note: &str) {
    let rate = messages as f64 / seconds;
    let rate = if rate >= 1e5 {
        format!("{:.2} M", rate / 1e6)
    } else {
        format!("{rate:.0}")
    };
    println!(
        "| {what} | {seconds:.3} | {rate} | {:.0} | {note} |",
        bytes as f64 / seconds / 1e6
    );
}

/// The disk's own sequential write bandwidth for `bytes` bytes, written in 1 MiB pieces through
/// the same sink the bag writer uses (`storage::blockfile`: large blocks, early writeback, so the
/// kernel's dirty-page throttling does not hide the disk), then `fdatasync`. A plain
/// `write` + `fdatasync` of the same bytes is shown for comparison.
fn disk_bandwidth(dir: &Path, bytes: u64) {
    let path = dir.join("disk_baseline.bin");
    let piece = vec![0x5au8; 1 << 20];
    let run = |blockfile: bool| {
        let _ = std::fs::remove_file(&path);
        let start = Instant::now();
        let file = std::fs::File::create(&path).unwrap();
        let mut left = bytes;
        if blockfile {
            let mut sink = rosbag2_rs_storage::storage::blockfile::BlockFile::new(file);
            while left > 0 {
                let n = left.min(piece.len() as u64) as usize;
                sink.write_all(&piece[..n]).unwrap();
                left -= n as u64;
            }
            sink.flush().unwrap();
            sink.sync().unwrap();
        } else {
            let mut file = file;
            while left > 0 {
                let n = left.min(piece.len() as u64) as usize;
                file.write_all(&piece[..n]).unwrap();
                left -= n as u64;
            }
            file.sync_data().unwrap();
        }
        let seconds = start.elapsed().as_secs_f64();
        let _ = std::fs::remove_file(&path);
        seconds
    };
    let plain = run(false);
    let sink = run(true);
    let mb = bytes / 1_000_000;
    row(
        &format!("disk: {mb} MB, plain write + fdatasync"),
        plain,
        bytes >> 20,
        bytes,
        "dirty-page throttled",
    );
    row(
        &format!("disk: {mb} MB, the writer's block sink + fdatasync"),
        sink,
        bytes >> 20,
        bytes,
        "the baseline",
    );
}

/// One publisher on each of the `TOPICS` topics.
fn talker(bus: &InProcessBus) -> Vec<Box<dyn RawPublisher>> {
    let node = bus.node("talker", "/").unwrap();
    (0..TOPICS)
        .map(|i| {
            node.create_publisher(
                &format!("/topic_{i}"),
                "std_msgs/msg/ByteMultiArray",
                &QosProfile::default(),
            )
            .unwrap()
        })
        .collect()
}

/// Records `n` messages of `size` bytes on `TOPICS` topics; `rate` paces the publisher
/// (messages/s, checked every `batch` messages), `None` publishes back to back. `cache` is the
/// recorder's `max_cache_size` (0: unlimited, so the run measures the writer).
fn record(dir: &Path, n: usize, size: usize, rate: Option<f64>, cache: u64, label: &str) {
    let bag = dir.join("record");
    let _ = std::fs::remove_dir_all(&bag);
    let bus = InProcessBus::new();
    let publishers = talker(&bus);
    let recorder = Recorder::start(
        Arc::new(bus.node("rosbag2_recorder", "/").unwrap()),
        RecordOptions {
            uri: bag.clone(),
            selection: TopicSelection::all(),
            discovery: false,
            max_cache_size: cache,
            ..RecordOptions::default()
        },
    )
    .unwrap();
    let data = payloads(size);
    let batch = if size >= 100_000 { 1 } else { 1000 };
    let start = Instant::now();
    for i in 0..n {
        if let (Some(rate), 0) = (rate, i % batch) {
            let due = start + Duration::from_secs_f64(i as f64 / rate);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        publishers[i % TOPICS].publish(&data[i % 16]).unwrap();
    }
    let published = start.elapsed().as_secs_f64();
    let summary = recorder.stop().unwrap();
    let seconds = start.elapsed().as_secs_f64();
    let note = format!(
        "written {}, dropped {}; publishing took {published:.3} s",
        summary.written(),
        summary.dropped()
    );
    row(
        &format!("record {n} x {size} B{label}"),
        seconds,
        summary.written(),
        summary.written() * size as u64,
        &note,
    );
    let _ = std::fs::remove_dir_all(&bag);
}

/// Ingestion into the snapshot ring buffers through the bus (eviction active), and the heap the
/// buffers add per message above the payload buffers themselves.
fn snapshot(dir: &Path, n: usize, size: usize) {
    let prefix = dir.join("snap");
    let bus = InProcessBus::new();
    let publishers = talker(&bus);
    // Rate: a small window, so every push also evicts.
    let recorder = Recorder::start(
        Arc::new(bus.node("rosbag2_recorder", "/").unwrap()),
        RecordOptions {
            uri: prefix.clone(),
            selection: TopicSelection::all(),
            discovery: false,
            snapshot: Some(SnapshotLimits {
                max_bytes_per_topic: 1000 * size as u64,
                max_duration_ns: 0,
            }),
            ..RecordOptions::default()
        },
    )
    .unwrap();
    let data = payloads(size);
    let start = Instant::now();
    for i in 0..n {
        publishers[i % TOPICS].publish(&data[i % 16]).unwrap();
    }
    let seconds = start.elapsed().as_secs_f64();
    row(
        &format!("snapshot buffer: ingest {n} x {size} B (evicting)"),
        seconds,
        n as u64,
        (n * size) as u64,
        "",
    );
    recorder.clear_snapshot_buffer().unwrap();

    // Memory: every message its own payload buffer, shared before the measurement starts (so
    // the buffer and its share header count as payload), then buffered without limits.
    let m = n.min(1_000_000);
    recorder
        .set_snapshot_limits(SnapshotLimits {
            max_bytes_per_topic: u64::MAX / 2,
            max_duration_ns: 0,
        })
        .unwrap();
    let own: Vec<Bytes> = (0..m)
        .map(|i| {
            let b = Bytes::from([&[0u8, 1, 0, 0][..], &vec![i as u8; size - 4]].concat());
            drop(b.clone()); // promote to a shared buffer now
            b
        })
        .collect();
    let before = LIVE.load(Ordering::SeqCst);
    for (i, b) in own.iter().enumerate() {
        publishers[i % TOPICS].publish(b).unwrap();
    }
    let after = LIVE.load(Ordering::SeqCst);
    let (count, payload) = recorder.snapshot_occupancy().unwrap();
    assert_eq!(count, m);
    println!(
        "| snapshot buffer: heap added per buffered message above its payload ({m} x {size} B, {} topics) | | | | {:.1} bytes (payload {payload} B) |",
        TOPICS,
        (after - before) as f64 / m as f64
    );
    drop(own);
    recorder.clear_snapshot_buffer().unwrap();
    recorder.stop().unwrap();
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = std::env::var("BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data"));
    let dir = root.join("record_throughput");
    std::fs::create_dir_all(&dir).unwrap();
    let large = env_usize("BENCH_LARGE", 2000);
    let small = env_usize("BENCH_SMALL", 5_000_000);
    let snap = env_usize("BENCH_SNAPSHOT", 2_000_000);
    println!("| case | seconds | messages/s | MB/s | notes |");
    println!("|---|---|---|---|---|");
    disk_bandwidth(&dir, (large as u64) << 20);
    const CACHE: u64 = rosbag2_rs_transport_lib::DEFAULT_MAX_CACHE_SIZE;
    let mb = 1 << 20;
    record(&dir, large, mb, None, 0, ", unlimited cache: writer-bound");
    record(
        &dir,
        large,
        mb,
        Some(800e6 / mb as f64),
        CACHE,
        ", paced at 800 MB/s",
    );
    record(
        &dir,
        large,
        mb,
        None,
        CACHE,
        ", back to back (drops expected)",
    );
    record(&dir, small, 100, None, 0, ", unlimited cache: writer-bound");
    record(
        &dir,
        small,
        100,
        Some(2.3e6),
        CACHE,
        ", paced at 2.3 M msgs/s",
    );
    record(&dir, small, 100, None, CACHE, ", back to back");
    snapshot(&dir, snap, 100);
    let _ = std::fs::remove_dir_all(&dir);
}
