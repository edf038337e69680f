//! Transport benchmark: one-way latency and throughput of our Cyclone DDS backend for 100 B,
//! 1 MB and 6 MB messages: to our own subscriber (another participant in this process), to a
//! Cyclone DDS reader and from a Cyclone DDS writer (the Python binding in another process,
//! handling serialized bytes), with the in-process backend as the floor. Runs in a private
//! network namespace it creates (needs root), so no packet leaves `lo`. The Cyclone reader asks
//! for an 8 MB socket receive buffer (the tuned reader of ROS 2's DDS tuning guide); the bench
//! raises `net.core.rmem_max` to 16 MiB for its run if it is lower, and restores it.
//!
//! `cargo bench -p rosbag2_rs_transport_lib --bench dds_latency`
//! (`CYCLONE_PYTHON` overrides `.venv/bin/python`; `none` skips the Cyclone rows.)

mod common;

use common::{enter_private_network, now_ns};
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rosbag2_rs_storage::qos::History;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::InProcessBus;
use rosbag2_rs_transport_lib::Middleware;
use rosbag2_rs_transport_lib::{DdsConfig, DdsMiddleware, DiscoveryRange};

const TYPE: &str = "rosbag2_rs_bench/msg/Blob";

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

/// One measured path.
struct Result {
    latencies_us: Vec<f64>,
    throughput: Option<f64>,
    received: usize,
    sent: usize,
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
        "| {target} | {size} | {}/{} | {:.1} | {:.1} | {tput} |",
        r.received,
        r.sent,
        pct(0.5),
        pct(0.99)
    );
}

/// `(send, receive)` times in ns of each message received, in order.
type Inbox = Arc<Mutex<Vec<(i64, i64)>>>;

/// A benchmark case: message size, paced messages and their period, back-to-back burst.
#[derive(Clone, Copy)]
struct Case {
    size: usize,
    paced: usize,
    period: Duration,
    burst: usize,
}

/// Latency from the paced rows, throughput from the burst rows (from the first burst send).
fn evaluate(case: Case, rows: &[(i64, i64)], burst_start: Option<i64>) -> Result {
    let latencies_us = rows
        .iter()
        .take(case.paced)
        .map(|(s, r)| (r - s) as f64 / 1e3)
        .collect();
    let burst_rows = &rows[case.paced.min(rows.len())..];
    let start = burst_start.or_else(|| burst_rows.first().map(|r| r.0));
    let throughput = match (start, burst_rows.last()) {
        (Some(start), Some((_, last))) => {
            Some(burst_rows.len() as f64 / ((last - start) as f64 / 1e9))
        }
        _ => None,
    };
    Result {
        latencies_us,
        throughput,
        received: rows.len(),
        sent: case.paced + case.burst,
    }
}

/// Publishes the paced messages, calls `between`, publishes the burst; `collect` returns the
/// rows received.
fn run(
    publisher: &dyn rosbag2_rs_transport_lib::RawPublisher,
    case: Case,
    between: &dyn Fn(),
    collect: &mut dyn FnMut() -> Vec<(i64, i64)>,
) -> Result {
    let mut template = blob(case.size);
    for _ in 0..case.paced {
        publisher.publish(&stamp(&mut template)).unwrap();
        std::thread::sleep(case.period);
    }
    between();
    let start = now_ns();
    for _ in 0..case.burst {
        publisher.publish(&stamp(&mut template)).unwrap();
    }
    evaluate(case, &collect(), Some(start))
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
    publisher: &dyn rosbag2_rs_transport_lib::RawPublisher,
    case: Case,
    inbox: &Inbox,
) -> Result {
    run(
        publisher,
        case,
        &|| drop(wait_rows(inbox, case.paced, Duration::from_secs(30))),
        &mut || wait_rows(inbox, case.paced + case.burst, Duration::from_secs(60)),
    )
}

fn wait_matched(p: &dyn rosbag2_rs_transport_lib::RawPublisher) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.subscription_count() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(500));
}

fn collecting(inbox: &Inbox) -> rosbag2_rs_transport_lib::MessageCallback {
    let inbox = inbox.clone();
    Box::new(move |m| {
        let sent = i64::from_le_bytes(m.data[8..16].try_into().unwrap());
        inbox.lock().unwrap().push((sent, now_ns()));
    })
}

/// The Python Cyclone DDS peer (`benches/cyclone_peer.py`), started and past its `ready` line.
fn cyclone_peer(
    python: &str,
    args: &[String],
) -> (std::process::Child, impl Iterator<Item = String>) {
    let mut child = Command::new(python)
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/benches/cyclone_peer.py"))
        .args(args)
        .env(
            "CYCLONEDDS_URI",
            r#"<CycloneDDS><Domain Id="any"><Internal><SocketReceiveBufferSize min="8MB"/></Internal></Domain></CycloneDDS>"#,
        )
        .stdout(Stdio::piped())
        .spawn()
        .expect("python with cyclonedds");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(|l| l.ok());
    assert_eq!(
        lines.next().as_deref(),
        Some("ready"),
        "the Cyclone peer did not start"
    );
    (child, lines)
}

fn parse_row(line: &str) -> (i64, i64) {
    let f: Vec<i64> = line
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    (f[0], f[1])
}

/// Raises `net.core.rmem_max` to at least `bytes` until dropped.
struct RmemMax(Option<String>);

impl RmemMax {
    fn at_least(bytes: u64) -> Self {
        const PATH: &str = "/proc/sys/net/core/rmem_max";
        let old = std::fs::read_to_string(PATH).unwrap_or_default();
        if old.trim().parse::<u64>().is_ok_and(|v| v < bytes)
            && std::fs::write(PATH, bytes.to_string()).is_ok()
        {
            return Self(Some(old));
        }
        Self(None)
    }
}

impl Drop for RmemMax {
    fn drop(&mut self) {
        if let Some(old) = &self.0 {
            let _ = std::fs::write("/proc/sys/net/core/rmem_max", old.trim());
        }
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let _rmem = RmemMax::at_least(16 << 20);
    enter_private_network();
    // The private namespace has only `lo`: discover as a default-configured Cyclone DDS peer
    // does (multicast SPDP), which the Python peer also uses.
    let config = DdsConfig {
        domain_id: 0,
        range: DiscoveryRange::Subnet,
        ..DdsConfig::default()
    };
    let talker = DdsMiddleware::with_config("bench_talker", "/", config.clone()).unwrap();
    let listener = DdsMiddleware::with_config("bench_listener", "/", config.clone()).unwrap();
    println!("## Transport: one-way latency and throughput (Cyclone DDS backend)\n");
    println!("| path | bytes | received | p50 µs | p99 µs | burst throughput |");
    println!("|---|---|---|---|---|---|");
    let python = std::env::var("CYCLONE_PYTHON")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../.venv/bin/python").into());
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
            period: Duration::from_millis(20),
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
        let size = case.size;
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
        let inbox: Inbox = Arc::default();
        let topic = format!("/bench_dds_{size}");
        let sub = listener
            .create_subscription(&topic, TYPE, &qos(), collecting(&inbox))
            .unwrap();
        let p = talker.create_publisher(&topic, TYPE, &qos()).unwrap();
        wait_matched(&*p);
        report(
            "DDS: rosbag2-rs → rosbag2-rs",
            size,
            &run_into(&*p, case, &inbox),
        );
        drop((sub, p));
        if python == "none" {
            continue;
        }

        // DDS, ours to a Cyclone DDS reader (8 MB receive buffer).
        let topic = format!("/bench_to_cyclone_{size}");
        let (mut sink, lines) = cyclone_peer(
            &python,
            &[
                "sink".into(),
                topic.clone(),
                (case.paced + case.burst).to_string(),
            ],
        );
        let p = talker.create_publisher(&topic, TYPE, &qos()).unwrap();
        wait_matched(&*p);
        let rows: Inbox = Arc::default();
        let reader_rows = rows.clone();
        let mut collector = Some(std::thread::spawn(move || {
            reader_rows
                .lock()
                .unwrap()
                .extend(lines.map(|l| parse_row(&l)));
        }));
        // The sink prints its rows once it has them all: collect after it exits.
        let result = run(
            &*p,
            case,
            &|| std::thread::sleep(Duration::from_secs(1)),
            &mut || {
                sink.wait().unwrap();
                if let Some(c) = collector.take() {
                    c.join().unwrap();
                }
                rows.lock().unwrap().clone()
            },
        );
        report(
            "DDS: rosbag2-rs → Cyclone DDS (Python, 8 MB rcvbuf)",
            size,
            &result,
        );
        drop(p);

        // DDS, a Cyclone DDS writer to ours.
        let topic = format!("/bench_from_cyclone_{size}");
        let inbox: Inbox = Arc::default();
        let sub = listener
            .create_subscription(&topic, TYPE, &qos(), collecting(&inbox))
            .unwrap();
        let (mut source, _) = cyclone_peer(
            &python,
            &[
                "source".into(),
                topic,
                size.to_string(),
                case.paced.to_string(),
                case.period.as_millis().max(1).to_string(),
                case.burst.to_string(),
            ],
        );
        let rows = wait_rows(&inbox, case.paced + case.burst, Duration::from_secs(120));
        source.wait().unwrap();
        report(
            "DDS: Cyclone DDS (Python writer) → rosbag2-rs",
            size,
            &evaluate(case, &rows, None),
        );
        drop(sub);
    }
}
