//! Transport benchmark: one-way latency and throughput of our DDS backend for 100 B and 1 MB
//! messages, to our own subscriber (another DDS participant in this process) and to a Cyclone
//! DDS reader (the Python binding, another process), plus the in-process backend as a floor.
//! Runs in a private network namespace it creates (needs root), so no packet leaves `lo`.
//!
//! `cargo bench -p rosbag2_rs_transport --bench dds_latency`
//! (`CYCLONE_PYTHON` overrides `.venv/bin/python`; `none` skips the Cyclone rows.)

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rosbag2_rs_storage::qos::History;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport::dds::{DdsConfig, DdsMiddleware, DiscoveryRange};
use rosbag2_rs_transport::inprocess::InProcessBus;
use rosbag2_rs_transport::Middleware;

const TYPE: &str = "rosbag2_rs_bench/msg/Blob";

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

fn enter_private_network() {
    assert_eq!(
        unsafe { libc::unshare(libc::CLONE_NEWNET) },
        0,
        "needs root: {}",
        std::io::Error::last_os_error()
    );
    for args in [
        &["link", "set", "lo", "up"][..],
        &["link", "set", "lo", "multicast", "on"],
        &["route", "add", "224.0.0.0/4", "dev", "lo"],
    ] {
        assert!(Command::new("ip").args(args).status().unwrap().success());
    }
}

/// A `Blob` (sequence<uint8>) whose first 8 bytes are the send time.
fn blob(size: usize) -> Vec<u8> {
    let mut v = vec![0u8, 1, 0, 0];
    v.extend_from_slice(&(size as u32).to_le_bytes());
    v.resize(8 + size, 0xab);
    v
}

fn stamp(template: &mut [u8]) -> Bytes {
    template[8..16].copy_from_slice(&now_ns().to_le_bytes());
    Bytes::copy_from_slice(template)
}

fn qos() -> QosProfile {
    QosProfile {
        history: History::KeepLast,
        depth: 10_000,
        ..QosProfile::default()
    }
}

struct Result {
    latencies_us: Vec<f64>,
    throughput: Option<f64>,
}

fn report(target: &str, size: usize, r: &Result) {
    let mut l = r.latencies_us.clone();
    l.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        l.get(((l.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let tput = r.throughput.map_or("-".into(), |t| {
        format!("{:.0} msg/s, {:.0} MB/s", t, t * size as f64 / 1e6)
    });
    println!(
        "| {target} | {size} | {} | {:.1} | {:.1} | {tput} |",
        l.len(),
        pct(0.5),
        pct(0.99)
    );
}

type Inbox = Arc<Mutex<Vec<(i64, i64)>>>;

/// Publishes `paced` messages at `period`, calls `between`, then publishes `burst` back to back;
/// `collect` returns the `(send, receive)` rows of all messages received, in order.
fn run(
    publisher: &dyn rosbag2_rs_transport::RawPublisher,
    (size, paced, period, burst): (usize, usize, Duration, usize),
    between: &dyn Fn(),
    collect: &mut dyn FnMut() -> Vec<(i64, i64)>,
) -> Result {
    let mut template = blob(size);
    for _ in 0..paced {
        publisher.publish(&stamp(&mut template)).unwrap();
        std::thread::sleep(period);
    }
    between();
    let start = now_ns();
    for _ in 0..burst {
        publisher.publish(&stamp(&mut template)).unwrap();
    }
    let got = collect();
    let latencies_us = got
        .iter()
        .take(paced)
        .map(|(s, r)| (r - s) as f64 / 1e3)
        .collect();
    let burst_rows = &got[paced.min(got.len())..];
    let throughput = burst_rows
        .last()
        .map(|(_, last)| burst_rows.len() as f64 / ((last - start) as f64 / 1e9));
    Result {
        latencies_us,
        throughput,
    }
}

/// Waits until `inbox` holds `count` rows (or `timeout` passes) and returns them.
fn wait_rows(inbox: &Inbox, count: usize, timeout: Duration) -> Vec<(i64, i64)> {
    let deadline = Instant::now() + timeout;
    while inbox.lock().unwrap().len() < count && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    inbox.lock().unwrap().clone()
}

/// Runs one case into an in-process inbox: waits for the paced messages before the burst.
fn run_into(
    publisher: &dyn rosbag2_rs_transport::RawPublisher,
    case: (usize, usize, Duration, usize),
    inbox: &Inbox,
) -> Result {
    let (_, paced, _, burst) = case;
    run(
        publisher,
        case,
        &|| drop(wait_rows(inbox, paced, Duration::from_secs(30))),
        &mut || wait_rows(inbox, paced + burst, Duration::from_secs(60)),
    )
}

fn wait_matched(p: &dyn rosbag2_rs_transport::RawPublisher) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.subscription_count() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(500));
}

fn collecting(inbox: &Inbox) -> rosbag2_rs_transport::MessageCallback {
    let inbox = inbox.clone();
    Box::new(move |m| {
        let sent = i64::from_le_bytes(m.data[8..16].try_into().unwrap());
        inbox.lock().unwrap().push((sent, now_ns()));
    })
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    enter_private_network();
    let config = DdsConfig {
        domain_id: 0,
        range: DiscoveryRange::Localhost,
        ..DdsConfig::default()
    };
    let talker = DdsMiddleware::with_config("bench_talker", "/", config.clone()).unwrap();
    println!("## Transport: one-way latency and throughput\n");
    println!("| path | bytes | latency samples | p50 µs | p99 µs | burst throughput |");
    println!("|---|---|---|---|---|---|");
    let python = std::env::var("CYCLONE_PYTHON")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../.venv/bin/python").into());
    for case @ (size, paced, _, burst) in [
        (100, 1000, Duration::from_millis(1), 20_000),
        (1 << 20, 100, Duration::from_millis(20), 200),
    ] {
        // In-process backend: the floor.
        let bus = InProcessBus::new();
        let (a, b) = (bus.node("a", "/").unwrap(), bus.node("b", "/").unwrap());
        let inbox: Inbox = Arc::default();
        let _sub = b
            .create_subscription("/bench", TYPE, &qos(), collecting(&inbox))
            .unwrap();
        let p = a.create_publisher("/bench", TYPE, &qos()).unwrap();
        report("in-process backend", size, &run_into(&*p, case, &inbox));

        // DDS, ours to ours.
        let listener = DdsMiddleware::with_config("bench_listener", "/", config.clone()).unwrap();
        let inbox: Inbox = Arc::default();
        let topic = format!("/bench_dds_{size}");
        let _sub = listener
            .create_subscription(&topic, TYPE, &qos(), collecting(&inbox))
            .unwrap();
        let p = talker.create_publisher(&topic, TYPE, &qos()).unwrap();
        wait_matched(&*p);
        report(
            "DDS: rosbag2-rs → rosbag2-rs",
            size,
            &run_into(&*p, case, &inbox),
        );

        // DDS, ours to a Cyclone DDS reader (Python binding, listener callback).
        if python != "none" {
            let topic = format!("/bench_cyclone_{size}");
            let mut sink = Command::new(&python)
                .arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/benches/cyclone_sink.py"
                ))
                .args([&topic, &(paced + burst).to_string()])
                .stdout(Stdio::piped())
                .spawn()
                .expect("python with cyclonedds");
            let mut lines = std::io::BufReader::new(sink.stdout.take().unwrap()).lines();
            assert_eq!(lines.next().unwrap().unwrap(), "ready");
            let p = talker.create_publisher(&topic, TYPE, &qos()).unwrap();
            wait_matched(&*p);
            let rows: Inbox = Arc::default();
            let reader_rows = rows.clone();
            let collector = std::thread::spawn(move || {
                for line in lines.map_while(|l| l.ok()) {
                    let f: Vec<i64> = line
                        .split_whitespace()
                        .map(|x| x.parse().unwrap())
                        .collect();
                    reader_rows.lock().unwrap().push((f[0], f[1]));
                }
            });
            // The sink prints its rows once it has them all: collect after it exits.
            let result = run(&*p, case, &|| {}, &mut || {
                sink.wait().unwrap();
                rows.lock().unwrap().clone()
            });
            collector.join().unwrap();
            report(
                "DDS: rosbag2-rs → Cyclone DDS (Python reader)",
                size,
                &result,
            );
        }
    }
}
