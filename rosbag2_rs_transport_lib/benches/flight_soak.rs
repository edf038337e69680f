//! Flight-recorder soak, fast-forwarded: the recorder on the in-process backend and virtual time
//! records `BENCH_SIZE` bytes at `BENCH_HZ` for `BENCH_MINUTES` virtual minutes, split at
//! `BENCH_SPLIT` bytes with `--max-bag-files BENCH_FILES`, as fast as the disk takes it. Each
//! virtual minute it prints the files kept, the bag's disk use and the live heap; at the end,
//! what was received, what the bag holds, and whether anything but what retention deleted is
//! missing. Prints a Markdown table.
//!
//! `cargo bench -p rosbag2_rs_transport_lib --bench flight_soak`
//! Environment (defaults: the run): `BENCH_DIR` (default `target/bench-data`),
//! `BENCH_MINUTES` (30), `BENCH_HZ` (100), `BENCH_SIZE` (1000000), `BENCH_SPLIT` (100000000),
//! `BENCH_FILES` (5).

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use rosbag2_rs_storage::{BagMetadata, QosProfile, Retention, SequentialReader};
use rosbag2_rs_transport_lib::{InProcessBus, Middleware, RecordOptions, Recorder, TopicSelection};

#[path = "common/heap.rs"]
mod heap;
use heap::LIVE;

#[global_allocator]
static GLOBAL: heap::Counting = heap::Counting;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn disk_use(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".mcap"))
                .count()
        })
        .unwrap_or(0)
}

fn main() {
    let minutes = env("BENCH_MINUTES", 30);
    let hz = env("BENCH_HZ", 100);
    let size = env("BENCH_SIZE", 1_000_000) as usize;
    let split = env("BENCH_SPLIT", 100_000_000);
    let max_files = env("BENCH_FILES", 5);
    let root = std::env::var("BENCH_DIR").unwrap_or_else(|_| "target/bench-data".into());
    std::fs::create_dir_all(&root).unwrap();
    let dir = tempfile::tempdir_in(&root).unwrap();
    let bag = dir.path().join("soak");

    let now = Arc::new(AtomicI64::new(1_000_000_000));
    let clock = now.clone();
    let bus = InProcessBus::with_clock(Arc::new(move || clock.load(Ordering::SeqCst)));
    let talker = bus.node("talker", "/").unwrap();
    let publisher = talker
        .create_publisher("/camera", "sensor_msgs/msg/Image", &QosProfile::default())
        .unwrap();
    let recorder = Recorder::start(
        Arc::new(bus.node("rosbag2_recorder", "/").unwrap()),
        RecordOptions {
            uri: bag.clone(),
            selection: TopicSelection::all(),
            max_bagfile_size: split,
            retention: Retention {
                max_files,
                ..Default::default()
            },
            ..RecordOptions::default()
        },
    )
    .unwrap();
    let payloads: Vec<Bytes> = (0..16u8)
        .map(|i| Bytes::from([&[0u8, 1, 0, 0][..], &vec![i; size - 4]].concat()))
        .collect();
    println!(
        "{minutes} virtual minutes of {size} B at {hz} Hz, --max-bag-size {split}, \
         --max-bag-files {max_files}\n"
    );
    println!("| virtual minute | wall s | files | disk use MB | live heap MB |");
    println!("|---|---|---|---|---|");
    let period = 1_000_000_000 / hz as i64;
    let started = Instant::now();
    let mut sent = 0u64;
    let mut peak_heap = 0isize;
    for minute in 1..=minutes {
        for _second in 0..60 {
            for _ in 0..hz {
                now.fetch_add(period, Ordering::SeqCst);
                publisher
                    .publish(&payloads[sent as usize % payloads.len()])
                    .unwrap();
                sent += 1;
            }
            // The publisher waits for the disk once per virtual second, so the cache never
            // overflows: what is missing at the end is what retention deleted.
            recorder.flush().unwrap();
            peak_heap = peak_heap.max(LIVE.load(Ordering::Relaxed));
        }
        println!(
            "| {minute} | {:.1} | {} | {:.0} | {:.0} |",
            started.elapsed().as_secs_f64(),
            files(&bag),
            disk_use(&bag) as f64 / 1e6,
            LIVE.load(Ordering::Relaxed) as f64 / 1e6
        );
    }
    let summary = recorder.stop().unwrap();
    let wall = started.elapsed().as_secs_f64();
    let meta = BagMetadata::read_from_dir(&bag).unwrap();
    let mut reader = SequentialReader::open(&bag).unwrap();
    let mut read = 0u64;
    let mut last = 0;
    while let Some(m) = reader.read_next().unwrap() {
        read += 1;
        last = m.recv_timestamp;
    }
    let newest = now.load(Ordering::SeqCst);
    println!(
        "\nsent {sent}, received {}, dropped {}; the bag keeps {} files, {read} messages \
         (metadata: {}), the newest at the last virtual instant: {}; {:.1} GB written in {wall:.0} s \
         ({:.0} MB/s); live heap at most {:.0} MB after a flush",
        summary.received(),
        summary.dropped(),
        meta.relative_file_paths.len(),
        meta.message_count,
        last == newest,
        sent as f64 * size as f64 / 1e9,
        sent as f64 * size as f64 / 1e6 / wall,
        peak_heap as f64 / 1e6
    );
    assert_eq!(summary.dropped(), 0, "nothing dropped");
    assert_eq!(read, meta.message_count);
    assert_eq!(last, newest, "the newest message is kept");
}
