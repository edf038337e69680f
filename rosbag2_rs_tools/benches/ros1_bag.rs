//! ROS 1 bags: reading, conversion to MCAP and CDR decoding, against Python `rosbags`, the
//! original `rosbag` library (Debian's python3-rosbag) and `rosbags-convert`, same data, same
//! machine, same run. Prints Markdown tables.
//!
//! `cargo bench -p rosbag2_rs_tools --bench ros1_bag`
//! Environment: `BENCH_DIR` (default `target/bench-data/ros1`), `BENCH_SMALL` (default 1000000),
//! `BENCH_LARGE` (default 2000), `ROSBAGS_PYTHON` (default `.venv/bin/python`), `ROSBAG_PYTHON`
//! (default `/usr/bin/python3`); `none` skips a baseline.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use rosbag2_rs_codec::msg::transcode::{CdrToRos1, Ros1ToCdr};
use rosbag2_rs_codec::msg::{decode_cdr_at, Dialect, Registry};
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::rosbag1::{BagReader, BagWriter, Connection, WriterOptions};
use rosbag2_rs_storage::storage::StorageReader;
use rosbag2_rs_storage::*;
use rosbag2_rs_tools::convert;
use rosbag2_rs_tools::ConvertOptions;

const MB: f64 = 1e6;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn env_usize(name: &str, default: usize) -> usize {
    env_or(name, &default.to_string())
        .parse()
        .unwrap_or(default)
}

/// A ROS 1 connection of a bundled ROS 2 type, converted as `convert` does.
fn connection(topic: &str, ros2_type: &str) -> Connection {
    let def = MessageDefinitionCache::new().definition(ros2_type);
    let conv = CdrToRos1::new(ros2_type, &def.encoded_message_definition).unwrap();
    Connection {
        id: 0,
        topic: topic.into(),
        type_name: conv.ros1_type,
        md5sum: conv.md5sum,
        message_definition: conv.ros1_definition,
        callerid: None,
        latching: false,
    }
}

fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s);
}

fn header(out: &mut Vec<u8>, frame: &str) {
    out.extend_from_slice(&[0; 4]); // seq
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    put_string(out, frame.as_bytes());
}

fn ros1_image(bytes: usize) -> Vec<u8> {
    let mut m = Vec::with_capacity(bytes + 64);
    header(&mut m, "camera");
    m.extend_from_slice(&1u32.to_le_bytes());
    m.extend_from_slice(&(bytes as u32).to_le_bytes());
    put_string(&mut m, b"mono8");
    m.push(0);
    m.extend_from_slice(&(bytes as u32).to_le_bytes());
    put_string(&mut m, &vec![7u8; bytes]);
    m
}

fn ros1_imu() -> Vec<u8> {
    let mut m = Vec::new();
    header(&mut m, "imu");
    for i in 0..(4 + 9 + 3 + 9 + 3 + 9) {
        m.extend_from_slice(&(i as f64).to_le_bytes());
    }
    m
}

fn ros1_cloud(points: usize) -> Vec<u8> {
    let mut m = Vec::new();
    header(&mut m, "lidar");
    m.extend_from_slice(&1u32.to_le_bytes());
    m.extend_from_slice(&(points as u32).to_le_bytes());
    m.extend_from_slice(&4u32.to_le_bytes());
    for (i, name) in ["x", "y", "z", "i"].iter().enumerate() {
        put_string(&mut m, name.as_bytes());
        m.extend_from_slice(&(4 * i as u32).to_le_bytes());
        m.push(7);
        m.extend_from_slice(&1u32.to_le_bytes());
    }
    m.push(0);
    m.extend_from_slice(&16u32.to_le_bytes());
    m.extend_from_slice(&(16 * points as u32).to_le_bytes());
    put_string(&mut m, &vec![1u8; 16 * points]);
    m.push(1);
    m
}

fn write_bag(path: &Path, messages: &mut dyn FnMut(&mut BagWriter, &[u32])) {
    if path.exists() {
        return;
    }
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut w = BagWriter::create(&tmp, WriterOptions::default()).unwrap();
    let ids: Vec<u32> = [
        ("/chatter", "std_msgs/msg/String"),
        ("/camera/image", "sensor_msgs/msg/Image"),
        ("/imu", "sensor_msgs/msg/Imu"),
    ]
    .iter()
    .map(|(t, ty)| w.add_connection(connection(t, ty)))
    .collect();
    messages(&mut w, &ids);
    w.finish().unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

struct Row {
    what: String,
    seconds: f64,
    messages: usize,
    bytes: u64,
}

fn print_rows(title: &str, rows: &[Row]) {
    println!("\n### {title}\n");
    println!("| reader | messages/s | MB/s | seconds |");
    println!("|---|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {:.0} | {:.0} | {:.2} |",
            r.what,
            r.messages as f64 / r.seconds,
            r.bytes as f64 / MB / r.seconds,
            r.seconds
        );
    }
}

fn python(python: &str, args: &[&str]) -> Option<(f64, usize, u64)> {
    if python == "none" {
        return None;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/ros1_baseline.py");
    let out = Command::new(python).arg(script).args(args).output().ok()?;
    if !out.status.success() {
        eprintln!(
            "{python} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = text.split_whitespace().collect();
    Some((f[0].parse().ok()?, f[1].parse().ok()?, f[2].parse().ok()?))
}

fn read_raw(path: &Path) -> Row {
    let mut best = f64::MAX;
    let (mut n, mut bytes) = (0, 0);
    for _ in 0..2 {
        // The second run reads from the page cache.
        let start = Instant::now();
        let mut r = BagReader::open(path, OpenMode::Strict).unwrap();
        (n, bytes) = (0, 0);
        while let Some(m) = r.read_next().unwrap() {
            n += 1;
            bytes += m.data.len() as u64;
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    Row {
        what: "rosbag2-rs, ROS 1 bytes".into(),
        seconds: best,
        messages: n,
        bytes,
    }
}

fn read_converted(path: &Path) -> Row {
    let start = Instant::now();
    let mut r = rosbag2_rs_storage::rosbag1::Ros1Reader::open(path, OpenMode::Strict).unwrap();
    let (mut n, mut bytes) = (0, 0u64);
    while let Some(m) = r.read_next().unwrap() {
        n += 1;
        bytes += m.data.len() as u64;
    }
    Row {
        what: "rosbag2-rs, converted to CDR".into(),
        seconds: start.elapsed().as_secs_f64(),
        messages: n,
        bytes,
    }
}

fn read_rows(path: &Path, rosbags: &str, rosbag: &str) -> Vec<Row> {
    let mut rows = vec![read_raw(path), read_converted(path)];
    let p = path.to_str().unwrap();
    for (what, py, mode) in [
        ("Python rosbags 0.11, raw", rosbags, "rosbags-read"),
        ("python3-rosbag 1.15 (ROS 1), raw", rosbag, "rosbag-read"),
    ] {
        if let Some((seconds, messages, bytes)) = python(py, &[mode, p]) {
            rows.push(Row {
                what: what.into(),
                seconds,
                messages,
                bytes,
            });
        }
    }
    rows
}

fn decode_row(type_name: &str, ros1: &[u8], count: usize) -> (Row, usize) {
    let def = MessageDefinitionCache::new().definition(type_name);
    let to_ros1 = CdrToRos1::new(type_name, &def.encoded_message_definition).unwrap();
    let to_cdr = Ros1ToCdr::new(&to_ros1.ros1_type, &to_ros1.ros1_definition).unwrap();
    let cdr = to_cdr.convert(ros1).unwrap();
    let mut reg = Registry::new();
    reg.parse_concatenated(type_name, &def.encoded_message_definition, Dialect::Ros2)
        .unwrap();
    let index = reg.index_of(type_name).unwrap();
    let start = Instant::now();
    for _ in 0..count {
        std::hint::black_box(decode_cdr_at(&reg, index, std::hint::black_box(&cdr)).unwrap());
    }
    let row = Row {
        what: format!("rosbag2-rs `decode_cdr`, {type_name}"),
        seconds: start.elapsed().as_secs_f64(),
        messages: count,
        bytes: (count * cdr.len()) as u64,
    };
    (row, cdr.len())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = PathBuf::from(env_or(
        "BENCH_DIR",
        root.join("target/bench-data/ros1").to_str().unwrap(),
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let rosbags = env_or(
        "ROSBAGS_PYTHON",
        root.join(".venv/bin/python").to_str().unwrap(),
    );
    let rosbag = env_or("ROSBAG_PYTHON", "/usr/bin/python3");
    let small_n = env_usize("BENCH_SMALL", 1_000_000);
    let large_n = env_usize("BENCH_LARGE", 2000);

    println!("## ROS 1 bags: read, convert, decode (rosbag2-rs vs rosbags vs rosbag)");
    let small = dir.join(format!("small_{small_n}.bag"));
    write_bag(&small, &mut |w, ids| {
        let mut payload = Vec::new();
        put_string(&mut payload, &[b'x'; 96]);
        for i in 0..small_n {
            w.write(ids[0], 1_000_000_000 + i as i64 * 1000, &payload)
                .unwrap();
        }
    });
    print_rows(
        &format!(
            "Read {small_n} messages of 100 bytes (std_msgs/String), uncompressed, page cache"
        ),
        &read_rows(&small, &rosbags, &rosbag),
    );
    let large = dir.join(format!("large_{large_n}.bag"));
    let image = ros1_image(1 << 20);
    write_bag(&large, &mut |w, ids| {
        for i in 0..large_n {
            w.write(ids[1], 1_000_000_000 + i as i64 * 33_000_000, &image)
                .unwrap();
        }
    });
    print_rows(
        &format!("Read {large_n} messages of 1 MB (sensor_msgs/Image), uncompressed, page cache"),
        &read_rows(&large, &rosbags, &rosbag),
    );

    // Conversion of ~1 GB of a camera + IMU + chatter recording to MCAP.
    let mixed = dir.join("mixed_1gb.bag");
    let imu = ros1_imu();
    let mut chatter = Vec::new();
    put_string(&mut chatter, &[b'y'; 60]);
    write_bag(&mixed, &mut |w, ids| {
        for i in 0..900i64 {
            let t = 1_000_000_000 + i * 33_000_000;
            w.write(ids[1], t, &image).unwrap();
            for k in 0..100 {
                w.write(ids[2], t + k * 330_000, &imu).unwrap();
                w.write(ids[0], t + k * 330_000 + 1, &chatter).unwrap();
            }
        }
    });
    let size = std::fs::metadata(&mixed).unwrap().len();
    println!(
        "\n### Convert a ROS 1 bag of {:.2} GB (900 images, 90,000 IMU, 90,000 strings) to MCAP\n",
        size as f64 / 1e9
    );
    println!("| converter | seconds | MB/s | speed-up |");
    println!("|---|---:|---:|---:|");
    // Each converter starts with no dirty pages pending (`sync`), so neither pays for the
    // other's write-back; both write into the page cache of the same disk.
    let sync = || drop(Command::new("sync").status());
    let out = dir.join("converted_ours");
    sync();
    let _ = std::fs::remove_dir_all(&out);
    let start = Instant::now();
    convert(&ConvertOptions {
        inputs: vec![mixed.clone().into()],
        output: BagWriterOptions {
            uri: out.clone(),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let ours = start.elapsed().as_secs_f64();
    let theirs = if rosbags == "none" {
        None
    } else {
        let out = dir.join("converted_rosbags");
        let _ = std::fs::remove_dir_all(&out);
        sync();
        let exe = Path::new(&rosbags).with_file_name("rosbags-convert");
        let start = Instant::now();
        let ok = Command::new(exe)
            .args([
                "--src",
                mixed.to_str().unwrap(),
                "--dst",
                out.to_str().unwrap(),
            ])
            .args(["--dst-storage", "mcap"])
            .status()
            .is_ok_and(|s| s.success());
        let seconds = start.elapsed().as_secs_f64();
        let _ = std::fs::remove_dir_all(&out);
        ok.then_some(seconds)
    };
    let _ = std::fs::remove_dir_all(&out);
    println!(
        "| rosbag2-rs `convert` | {ours:.2} | {:.0} | {} |",
        size as f64 / MB / ours,
        theirs.map_or("-".into(), |t| format!("{:.1}×", t / ours))
    );
    if let Some(t) = theirs {
        println!(
            "| rosbags-convert 0.11 | {t:.2} | {:.0} | 1× |",
            size as f64 / MB / t
        );
    }

    let mut rows = Vec::new();
    for (type_name, ros1, count, kind) in [
        ("sensor_msgs/msg/Imu", ros1_imu(), 1_000_000, "imu"),
        (
            "sensor_msgs/msg/PointCloud2",
            ros1_cloud(10_000),
            20_000,
            "cloud",
        ),
    ] {
        let (row, len) = decode_row(type_name, &ros1, count);
        rows.push(row);
        if let Some((seconds, messages, bytes)) =
            python(&rosbags, &["rosbags-cdr", kind, &(count / 10).to_string()])
        {
            rows.push(Row {
                what: format!("rosbags `deserialize_cdr`, {type_name} ({len} B)"),
                seconds,
                messages,
                bytes,
            });
        }
    }
    print_rows(
        "CDR decode into a value tree (one message decoded repeatedly)",
        &rows,
    );
}
