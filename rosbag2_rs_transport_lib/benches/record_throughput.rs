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

/// How the disk baseline writes.
#[derive(Clone, Copy)]
enum DiskWrite {
    /// `write` of 1 MiB pieces, then `fdatasync` (`dd conv=fdatasync`).
    Plain,
    /// `O_DIRECT` writes of 1 MiB aligned pieces, then `fdatasync` (`dd oflag=direct`): the
    /// page cache left out, the device's own speed.
    Direct,
    /// The bag writer's sink (`storage::blockfile`), then `fdatasync`.
    BlockSink,
}

/// The disk's own sequential write bandwidth for `bytes` bytes (a multiple of 1 MiB), three ways
/// (see [`DiskWrite`]); returns the best, the anchor of the recording rows.
fn disk_bandwidth(dir: &Path, bytes: u64) -> f64 {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join("disk_baseline.bin");
    const PIECE: usize = 1 << 20;
    // O_DIRECT wants the buffer aligned to the device's block: a page-aligned allocation.
    let layout = std::alloc::Layout::from_size_align(PIECE, 4096).unwrap();
    // SAFETY: a non-zero size; the memory is written before it is read and freed below.
    let aligned = unsafe { std::alloc::alloc(layout) };
    assert!(!aligned.is_null());
    // SAFETY: `aligned` holds PIECE bytes.
    let piece = unsafe { std::slice::from_raw_parts_mut(aligned, PIECE) };
    piece.fill(0x5a);
    let run = |how: DiskWrite| {
        let _ = std::fs::remove_file(&path);
        let start = Instant::now();
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        if let DiskWrite::Direct = how {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = options.open(&path).unwrap();
        let pieces = bytes / PIECE as u64;
        match how {
            DiskWrite::BlockSink => {
                let mut sink = rosbag2_rs_storage::storage::blockfile::BlockFile::new(file);
                for _ in 0..pieces {
                    sink.write_all(piece).unwrap();
                }
                sink.flush().unwrap();
                sink.sync().unwrap();
            }
            DiskWrite::Plain | DiskWrite::Direct => {
                let mut file = file;
                for _ in 0..pieces {
                    file.write_all(piece).unwrap();
                }
                file.sync_data().unwrap();
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        let _ = std::fs::remove_file(&path);
        seconds
    };
    let mb = bytes / 1_000_000;
    let mut best = f64::INFINITY;
    for (how, what) in [
        (
            DiskWrite::Plain,
            "plain write + fdatasync (dd conv=fdatasync)",
        ),
        (DiskWrite::Direct, "O_DIRECT + fdatasync (dd oflag=direct)"),
        (DiskWrite::BlockSink, "the writer's block sink + fdatasync"),
    ] {
        let seconds = run(how);
        best = best.min(seconds);
        row(
            &format!("disk: {mb} MB, {what}"),
            seconds,
            bytes >> 20,
            bytes,
            "",
        );
    }
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(aligned, layout) };
    bytes as f64 / best
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
/// Records `n` messages of `size` bytes (at `rate` per second, or back to back) with a cache of
/// `cache` bytes; `disk` is the disk's best bandwidth in bytes/s, for the note.
fn record(
    dir: &Path,
    n: usize,
    size: usize,
    rate: Option<f64>,
    cache: u64,
    label: &str,
    disk: f64,
) {
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
    let bytes = summary.written() * size as u64;
    let note = format!(
        "written {}, dropped {}; publishing took {published:.3} s; {:.0} % of the disk's best",
        summary.written(),
        summary.dropped(),
        bytes as f64 / seconds / disk * 100.0
    );
    row(
        &format!("record {n} x {size} B{label}"),
        seconds,
        summary.written(),
        bytes,
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
    let disk = disk_bandwidth(&dir, (large as u64) << 20);
    const CACHE: u64 = rosbag2_rs_transport_lib::DEFAULT_MAX_CACHE_SIZE;
    // A cache bound no run reaches (a bound of 0, with no duration bound, is no cache at all, as
    // in rosbag2: each callback waits for its message to be written).
    const UNBOUNDED: u64 = 1 << 40;
    let mb = 1 << 20;
    record(
        &dir,
        large,
        mb,
        None,
        UNBOUNDED,
        ", unbounded cache: writer-bound",
        disk,
    );
    record(
        &dir,
        large,
        mb,
        Some(800e6 / mb as f64),
        CACHE,
        ", paced at 800 MB/s",
        disk,
    );
    record(
        &dir,
        large,
        mb,
        None,
        CACHE,
        ", back to back (drops expected)",
        disk,
    );
    record(
        &dir,
        small,
        100,
        None,
        UNBOUNDED,
        ", unbounded cache: writer-bound",
        disk,
    );
    record(
        &dir,
        small,
        100,
        Some(2.3e6),
        CACHE,
        ", paced at 2.3 M msgs/s",
        disk,
    );
    record(&dir, small, 100, None, CACHE, ", back to back", disk);
    snapshot(&dir, snap, 100);
    let _ = std::fs::remove_dir_all(&dir);
}
