//! Storage throughput: rosbag2-rs against the raw `mcap` crate and Python `rosbags`, same data,
//! same machine, same run. Prints a Markdown table.
//!
//! `cargo bench -p rosbag2_rs_storage --bench storage_throughput`
//! Environment: `BENCH_DIR` (default `target/bench-data`, must be on the disk under test),
//! `BENCH_SMALL` (default 1000000), `BENCH_LARGE` (default 2000), `ROSBAGS_PYTHON` (default
//! `.venv/bin/python`; set to `none` to skip the Python baseline).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use rosbag2_rs_storage::*;

const TOPICS: usize = 10;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn payloads(size: usize) -> Vec<bytes::Bytes> {
    (0..16u8)
        .map(|i| bytes::Bytes::from([&[0u8, 1, 0, 0][..], &vec![i; size - 4]].concat()))
        .collect()
}

struct Row {
    what: String,
    seconds: f64,
    messages: usize,
    bytes: u64,
}

impl Row {
    fn print(&self, baseline: Option<f64>) {
        let rate = self.messages as f64 / self.seconds;
        let mbps = self.bytes as f64 / self.seconds / 1e6;
        let vs = baseline
            .map(|b| format!("{:.2}x", b / self.seconds))
            .unwrap_or_default();
        let rate = if rate >= 1e5 {
            format!("{:.2} M", rate / 1e6)
        } else {
            format!("{rate:.0}")
        };
        println!(
            "| {} | {:.3} | {rate} | {mbps:.0} | {vs} |",
            self.what, self.seconds
        );
    }
}

fn ours_write(dir: &Path, n: usize, size: usize) -> Row {
    let _ = std::fs::remove_dir_all(dir);
    let data = payloads(size);
    let topics: Vec<Arc<str>> = (0..TOPICS)
        .map(|i| Arc::from(format!("/topic_{i}")))
        .collect();
    let start = Instant::now();
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: dir.to_path_buf(),
        ..Default::default()
    })
    .unwrap();
    for t in &topics {
        writer
            .create_topic(
                &TopicMetadata::new(&**t, "std_msgs/msg/ByteMultiArray"),
                None,
            )
            .unwrap();
    }
    for i in 0..n {
        let m = SerializedMessage::new(
            topics[i % TOPICS].clone(),
            1_000_000_000 + i as i64 * 1000,
            data[i % 16].clone(),
        );
        writer.write(&m).unwrap();
    }
    writer.close().unwrap();
    Row {
        what: format!("write {n} x {size} B: rosbag2-rs (incl. fsync)"),
        seconds: start.elapsed().as_secs_f64(),
        messages: n,
        bytes: (n * size) as u64,
    }
}

fn raw_mcap_write(path: &Path, n: usize, size: usize) -> Row {
    let _ = std::fs::remove_file(path);
    let data = payloads(size);
    let start = Instant::now();
    let file = BufWriter::new(File::create(path).unwrap());
    let mut writer = mcap::WriteOptions::new()
        .profile("ros2")
        .compression(None)
        .chunk_size(Some(768 * 1024))
        .create(file)
        .unwrap();
    let schema = writer
        .add_schema("std_msgs/msg/ByteMultiArray", "ros2msg", b"")
        .unwrap();
    let channels: Vec<u16> = (0..TOPICS)
        .map(|i| {
            writer
                .add_channel(schema, &format!("/topic_{i}"), "cdr", &Default::default())
                .unwrap()
        })
        .collect();
    for i in 0..n {
        let header = mcap::records::MessageHeader {
            channel_id: channels[i % TOPICS],
            sequence: i as u32,
            log_time: 1_000_000_000 + i as u64 * 1000,
            publish_time: 1_000_000_000 + i as u64 * 1000,
        };
        writer
            .write_to_known_channel(&header, &data[i % 16])
            .unwrap();
    }
    writer.finish().unwrap();
    let mut file = writer.into_inner();
    file.flush().unwrap();
    file.get_ref().sync_data().unwrap();
    Row {
        what: format!("write {n} x {size} B: raw mcap crate, BufWriter (incl. fsync)"),
        seconds: start.elapsed().as_secs_f64(),
        messages: n,
        bytes: (n * size) as u64,
    }
}

fn ours_read(dir: &Path, n: usize, size: usize) -> Row {
    let count = |dir: &Path| {
        let mut reader = SequentialReader::open(dir).unwrap();
        let (mut k, mut bytes) = (0usize, 0u64);
        while let Some(m) = reader.read_next().unwrap() {
            k += 1;
            bytes += m.data.len() as u64;
        }
        (k, bytes)
    };
    count(dir); // warm the page cache
    let start = Instant::now();
    let (k, bytes) = count(dir);
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(k, n);
    Row {
        what: format!("read {n} x {size} B: rosbag2-rs, time-ordered, from cache"),
        seconds,
        messages: k,
        bytes,
    }
}

/// The raw crate's `MessageStream` over a memory map, checking chunk CRCs with `crc` (it checks
/// none by default).
fn raw_mcap_read(path: &Path, n: usize, size: usize, crc: bool) -> Row {
    let file = File::open(path).unwrap();
    // SAFETY: the benchmark wrote this file and nothing changes it while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    let options = if crc {
        mcap::read::Options::ValidateChunkCrcs.into()
    } else {
        Default::default()
    };
    let count = || {
        let (mut k, mut bytes) = (0usize, 0u64);
        for m in mcap::MessageStream::new_with_options(&map, options).unwrap() {
            k += 1;
            bytes += m.unwrap().data.len() as u64;
        }
        (k, bytes)
    };
    count();
    let start = Instant::now();
    let (k, bytes) = count();
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(k, n);
    Row {
        what: format!(
            "read {n} x {size} B: raw mcap crate MessageStream (file order){}, from cache",
            if crc { ", chunk CRCs checked" } else { "" }
        ),
        seconds,
        messages: k,
        bytes,
    }
}

fn python(python: &str, mode: &str, path: &Path, n: usize, size: usize) -> Option<Row> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/rosbags_baseline.py");
    let out = Command::new(python)
        .arg(script)
        .arg(mode)
        .arg(path)
        .arg(n.to_string())
        .arg(size.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "rosbags baseline failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let seconds: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(Row {
        what: format!("{mode} {n} x {size} B: Python rosbags"),
        seconds,
        messages: n,
        bytes: (n * size) as u64,
    })
}

fn run_case(root: &Path, n: usize, size: usize, py: Option<&str>) {
    let ours = root.join(format!("ours_{size}"));
    let raw = root.join(format!("raw_{size}.mcap"));
    let theirs = root.join(format!("rosbags_{size}"));
    println!("\n### {n} messages of {size} bytes\n");
    println!("| case | seconds | messages/s | MB/s | speed vs raw mcap |");
    println!("|---|---|---|---|---|");
    let base_write = raw_mcap_write(&raw, n, size);
    base_write.print(None);
    ours_write(&ours, n, size).print(Some(base_write.seconds));
    let base_read = raw_mcap_read(&raw, n, size, false);
    base_read.print(None);
    raw_mcap_read(&raw, n, size, true).print(Some(base_read.seconds));
    ours_read(&ours, n, size).print(Some(base_read.seconds));
    if let Some(py) = py {
        let _ = std::fs::remove_dir_all(&theirs);
        if let Some(row) = python(py, "write", &theirs, n, size) {
            row.print(Some(base_write.seconds));
        }
        if let Some(row) = python(py, "read", &theirs, n, size) {
            row.print(Some(base_read.seconds));
        }
        let _ = std::fs::remove_dir_all(&theirs);
    }
    let _ = std::fs::remove_dir_all(&ours);
    let _ = std::fs::remove_file(&raw);
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = std::env::var_os("BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data"));
    std::fs::create_dir_all(&root).unwrap();
    let python_path = std::env::var("ROSBAGS_PYTHON").unwrap_or_else(|_| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../.venv/bin/python")
            .display()
            .to_string()
    });
    let py =
        (python_path != "none" && Path::new(&python_path).exists()).then_some(python_path.as_str());
    println!(
        "## Storage throughput (bench dir {}, {} cores)",
        root.display(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    run_case(&root, env_usize("BENCH_SMALL", 1_000_000), 100, py);
    run_case(&root, env_usize("BENCH_LARGE", 2_000), 1 << 20, py);
}
