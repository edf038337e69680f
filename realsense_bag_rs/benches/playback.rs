//! Non-real-time playback of a 1280×720 depth + color recording made by the RealSense SDK:
//! rosbag2-rs's `Playback` against the SDK's own playback (pyrealsense2 2.59), same file, same
//! run. Prints a Markdown table.
//!
//! `cargo bench -p realsense_bag_rs --bench playback`
//! Environment: `RS_BENCH_FRAMES` (default 150 per stream), `RS257_PYTHON` / `RS259_PYTHON`
//! (default `.venv-rs257/bin/python`, `.venv-rs259/bin/python`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use realsense_bag_rs::{Payload, Playback, Recording};
use rosbag2_rs_clock::{Time, TimeControllerClock, TimeControllerConfig};

fn python(var: &str, venv: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(venv)
            .join("bin/python")
    })
}

fn peer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/realsense/sdk_peer.py")
}

/// (seconds, frames, bytes) of our non-real-time playback.
fn ours(path: &Path) -> (f64, u64, u64) {
    let start = Instant::now();
    let rec = Recording::open(path).unwrap();
    let clock = Arc::new(
        TimeControllerClock::new(
            Time::ros(rec.time_range().0),
            TimeControllerConfig {
                start_paused: false,
                ..TimeControllerConfig::default()
            },
        )
        .unwrap(),
    );
    let mut playback = Playback::new(rec, clock);
    playback.set_real_time(false);
    let (mut frames, mut bytes) = (0, 0);
    while let Some(f) = playback.next_frame().unwrap() {
        frames += 1;
        if let Payload::Video { data, .. } = &f.payload {
            bytes += data.len() as u64;
            std::hint::black_box(data[data.len() / 2]);
        }
    }
    (start.elapsed().as_secs_f64(), frames, bytes)
}

fn sdk(path: &Path) -> Option<(f64, u64, u64)> {
    let out = Command::new(python("RS259_PYTHON", ".venv-rs259"))
        .arg(peer())
        .args(["play-speed", path.to_str()?])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = text.split_whitespace().collect();
    Some((
        f.first()?.parse().ok()?,
        f.get(1)?.parse().ok()?,
        f.get(2)?.parse().ok()?,
    ))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let frames: usize = std::env::var("RS_BENCH_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data/realsense");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("hd_{frames}.bag"));
    if !path.exists() {
        let ok = Command::new(python("RS257_PYTHON", ".venv-rs257"))
            .arg(peer())
            .args(["record-hd", path.to_str().unwrap(), &frames.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "recording with pyrealsense2 2.57 failed (tools/test.sh installs it)"
        );
    }
    let size = std::fs::metadata(&path).unwrap().len();
    println!("## RealSense: non-real-time playback of {frames} × (1280×720 Z16 + RGB8), {:.0} MB (LZ4, SDK 2.57)\n", size as f64 / 1e6);
    println!("| player | frames | seconds | frames/s | MB/s | speed-up |");
    println!("|---|---:|---:|---:|---:|---:|");
    let best = |f: &dyn Fn() -> Option<(f64, u64, u64)>| {
        (0..3)
            .filter_map(|_| f())
            .min_by(|a, b| a.0.total_cmp(&b.0))
    };
    let o = best(&|| Some(ours(&path))).unwrap();
    let s = best(&|| sdk(&path));
    let row = |name: &str, r: (f64, u64, u64), speedup: String| {
        println!(
            "| {name} | {} | {:.3} | {:.0} | {:.0} | {speedup} |",
            r.1,
            r.0,
            r.1 as f64 / r.0,
            r.2 as f64 / 1e6 / r.0
        );
    };
    row(
        "rosbag2-rs `Playback` (non-real time)",
        o,
        s.map_or("-".into(), |s| format!("{:.1}×", s.0 / o.0)),
    );
    if let Some(s) = s {
        row("pyrealsense2 2.59 playback (non-real time)", s, "1×".into());
    }
}
