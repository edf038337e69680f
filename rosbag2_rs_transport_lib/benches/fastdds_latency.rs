//! Transport benchmark of the Fast DDS backend, next to the Cyclone DDS backend in the same run:
//! one-way latency and throughput for 100 B, 1 MB and 6 MB messages, ours → ours, ours → a real
//! ROS 2 node and a real ROS 2 node → ours, where the ROS 2 node is rclpy on rmw_fastrtps_cpp
//! with default settings (`benches/fastdds_peer.py`, PyPI's Jazzy wheels, taking and publishing
//! serialized bytes). The Cyclone rows toward that node are the cross-vendor paths (our Cyclone
//! backend ↔ a default Fast DDS node). Runs in a private network namespace it creates (needs
//! root), so no packet leaves `lo`.
//!
//! `ROSBAG2_RS_FASTDDS_PREFIX=$PWD/.venv-ros2 cargo bench -p rosbag2_rs_transport_lib --features fastdds --bench fastdds_latency`
//! (`ROS2_VENV` overrides `.venv-ros2`, the venv tools/test.sh makes, with its colcon install
//! in `ws/`.)

mod common;

use common::{enter_private_network, now_ns};
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rosbag2_rs_storage::qos::History;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::{
    DdsConfig, DdsMiddleware, DiscoveryRange, FastDdsConfig, FastDdsMiddleware, Middleware,
    RawPublisher,
};

/// The rclpy peer's type: `UInt8MultiArray` with an empty layout; the send time is at byte 16.
const TYPE: &str = "std_msgs/msg/UInt8MultiArray";
const STAMP: std::ops::Range<usize> = 16..24;

/// A serialized `UInt8MultiArray` (no dimensions, offset 0) with `size` data bytes.
fn message(size: usize) -> Vec<u8> {
    let mut v = vec![0u8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    v.extend_from_slice(&(size as u32).to_le_bytes());
    v.resize(16 + size.max(8), 0xab);
    v
}

fn stamp(template: &mut [u8]) -> Bytes {
    template[STAMP].copy_from_slice(&now_ns().to_le_bytes());
    Bytes::copy_from_slice(template)
}

fn qos() -> QosProfile {
    QosProfile {
        history: History::KeepLast,
        depth: 100_000,
        ..QosProfile::default()
    }
}

/// A benchmark case: message size, paced messages and their period, back-to-back burst.
#[derive(Clone, Copy)]
struct Case {
    size: usize,
    paced: usize,
    period: Duration,
    burst: usize,
}

/// `(send, receive)` times in ns of each message received, in order.
type Inbox = Arc<Mutex<Vec<(i64, i64)>>>;

/// Prints one row: latency percentiles of the paced messages, throughput of the burst.
fn report(path: &str, case: Case, rows: &[(i64, i64)], burst_start: Option<i64>) {
    let mut l: Vec<f64> = rows
        .iter()
        .take(case.paced)
        .map(|(s, r)| (r - s) as f64 / 1e3)
        .collect();
    l.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        l.get(((l.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let burst = &rows[case.paced.min(rows.len())..];
    let start = burst_start.or_else(|| burst.first().map(|r| r.0));
    let tput = match (start, burst.last()) {
        (Some(start), Some((_, last))) if *last > start => {
            let t = burst.len() as f64 / ((last - start) as f64 / 1e9);
            format!("{t:.0} msg/s, {:.0} MB/s", t * case.size as f64 / 1e6)
        }
        _ => "-".into(),
    };
    println!(
        "| {path} | {} | {}/{} | {:.1} | {:.1} | {tput} |",
        case.size,
        rows.len(),
        case.paced + case.burst,
        pct(0.5),
        pct(0.99)
    );
}

/// Publishes the paced messages, calls `between`, then the burst; returns the burst's start.
fn publish(publisher: &dyn RawPublisher, case: Case, between: &dyn Fn()) -> i64 {
    let mut template = message(case.size);
    for _ in 0..case.paced {
        publisher.publish(&stamp(&mut template)).unwrap();
        std::thread::sleep(case.period);
    }
    between();
    let start = now_ns();
    for _ in 0..case.burst {
        publisher.publish(&stamp(&mut template)).unwrap();
    }
    start
}

fn wait_rows(inbox: &Inbox, count: usize, timeout: Duration) -> Vec<(i64, i64)> {
    let deadline = Instant::now() + timeout;
    while inbox.lock().unwrap().len() < count && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    inbox.lock().unwrap().clone()
}

fn wait_matched(p: &dyn RawPublisher) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.subscription_count() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(500));
}

fn collecting(inbox: &Inbox) -> rosbag2_rs_transport_lib::MessageCallback {
    let inbox = inbox.clone();
    Box::new(move |m| {
        let sent = i64::from_le_bytes(m.data[STAMP].try_into().unwrap());
        inbox.lock().unwrap().push((sent, now_ns()));
    })
}

/// Ours to ours on one backend.
fn ours_to_ours(path: &str, talker: &dyn Middleware, listener: &dyn Middleware, case: Case) {
    let inbox: Inbox = Arc::default();
    let topic = format!("/bench_{}_{}", path.len(), case.size);
    let _sub = listener
        .create_subscription(&topic, TYPE, &qos(), collecting(&inbox))
        .unwrap();
    let p = talker.create_publisher(&topic, TYPE, &qos()).unwrap();
    wait_matched(&*p);
    let start = publish(&*p, case, &|| {
        drop(wait_rows(&inbox, case.paced, Duration::from_secs(30)))
    });
    let rows = wait_rows(&inbox, case.paced + case.burst, Duration::from_secs(60));
    report(path, case, &rows, Some(start));
}

/// The rclpy peer, started and past its `ready` line.
struct Peer {
    python: String,
    venv: String,
}

impl Peer {
    fn start(&self, args: &[String]) -> (std::process::Child, impl Iterator<Item = String>) {
        let ws = format!("{}/ws", self.venv);
        let site = std::fs::read_dir(format!("{ws}/lib"))
            .ok()
            .and_then(|mut d| {
                d.find_map(|e| {
                    e.ok()
                        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
                })
            })
            .map(|e| format!("{}/site-packages", e.path().display()))
            .unwrap_or_default();
        let mut child = Command::new(&self.python)
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/benches/fastdds_peer.py"
            ))
            .args(args)
            .env("LD_LIBRARY_PATH", format!("{ws}/lib:{}/lib", self.venv))
            .env("AMENT_PREFIX_PATH", format!("{ws}:{}", self.venv))
            .env("PYTHONPATH", site)
            .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
            .stdout(Stdio::piped())
            .spawn()
            .expect("the ROS 2 venv's python");
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap())
            .lines()
            .map_while(|l| l.ok());
        assert_eq!(
            lines.next().as_deref(),
            Some("ready"),
            "the rclpy peer did not start"
        );
        (child, lines)
    }

    /// Ours → the rclpy reader.
    fn sink(&self, path: &str, talker: &dyn Middleware, case: Case) {
        let topic = format!("/bench_to_ros_{}_{}", path.len(), case.size);
        let (mut sink, lines) = self.start(&[
            "sink".into(),
            topic.clone(),
            (case.paced + case.burst).to_string(),
        ]);
        let p = talker.create_publisher(&topic, TYPE, &qos()).unwrap();
        wait_matched(&*p);
        let collector = std::thread::spawn(move || {
            lines
                .map(|l| {
                    let f: Vec<i64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                    (f[0], f[1])
                })
                .collect::<Vec<_>>()
        });
        let start = publish(&*p, case, &|| std::thread::sleep(Duration::from_secs(1)));
        sink.wait().unwrap();
        report(path, case, &collector.join().unwrap(), Some(start));
    }

    /// The rclpy writer → ours.
    fn source(&self, path: &str, listener: &dyn Middleware, case: Case) {
        let topic = format!("/bench_from_ros_{}_{}", path.len(), case.size);
        let inbox: Inbox = Arc::default();
        let _sub = listener
            .create_subscription(&topic, TYPE, &qos(), collecting(&inbox))
            .unwrap();
        let (mut source, _) = self.start(&[
            "source".into(),
            topic,
            case.size.to_string(),
            case.paced.to_string(),
            case.period.as_millis().max(1).to_string(),
            case.burst.to_string(),
        ]);
        let rows = wait_rows(&inbox, case.paced + case.burst, Duration::from_secs(120));
        source.wait().unwrap();
        report(path, case, &rows, None);
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    enter_private_network();
    let dds = DdsConfig {
        domain_id: 0,
        range: DiscoveryRange::Subnet,
        ..DdsConfig::default()
    };
    let fast = FastDdsConfig {
        dds: dds.clone(),
        ..FastDdsConfig::default()
    };
    let fast_talker = FastDdsMiddleware::with_config("bench_talker", "/", fast.clone()).unwrap();
    let fast_listener = FastDdsMiddleware::with_config("bench_listener", "/", fast).unwrap();
    let cyc_talker = DdsMiddleware::with_config("bench_talker_c", "/", dds.clone()).unwrap();
    let cyc_listener = DdsMiddleware::with_config("bench_listener_c", "/", dds).unwrap();
    let venv = std::env::var("ROS2_VENV")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../.venv-ros2").into());
    let peer = Peer {
        python: format!("{venv}/bin/python"),
        venv,
    };
    println!("## Transport: Fast DDS backend next to Cyclone DDS, and a real ROS 2 node (rclpy, rmw_fastrtps_cpp)\n");
    println!("| path | bytes | received | p50 µs | p99 µs | burst throughput |");
    println!("|---|---|---|---|---|---|");
    let cases = [
        Case {
            size: 100,
            paced: 1000,
            period: Duration::from_millis(1),
            burst: 20_000,
        },
        Case {
            size: 1 << 20,
            paced: 100,
            period: Duration::from_millis(33),
            burst: 200,
        },
        Case {
            size: 6_220_800,
            paced: 60,
            period: Duration::from_micros(33_333),
            burst: 60,
        },
    ];
    for case in cases {
        ours_to_ours(
            "Fast DDS: rosbag2-rs → rosbag2-rs",
            &fast_talker,
            &fast_listener,
            case,
        );
        peer.sink(
            "Fast DDS: rosbag2-rs → rclpy (rmw_fastrtps_cpp)",
            &fast_talker,
            case,
        );
        peer.source(
            "Fast DDS: rclpy (rmw_fastrtps_cpp) → rosbag2-rs",
            &fast_listener,
            case,
        );
        ours_to_ours(
            "Cyclone: rosbag2-rs → rosbag2-rs",
            &cyc_talker,
            &cyc_listener,
            case,
        );
        peer.sink(
            "Cyclone: rosbag2-rs → rclpy (rmw_fastrtps_cpp)",
            &cyc_talker,
            case,
        );
        peer.source(
            "Cyclone: rclpy (rmw_fastrtps_cpp) → rosbag2-rs",
            &cyc_listener,
            case,
        );
    }
}
