//! Transport benchmark over Zenoh (the rmw_zenoh_cpp backend, feature `zenoh`): one-way latency
//! (paced messages) and burst throughput of 100 B, 1 MB and 6 MB messages through a Zenoh router
//! on loopback (the crate's router, configured as rmw_zenohd): ours → ours (two nodes, two
//! sessions), ours → a Python `eclipse-zenoh` subscriber and a Python publisher → ours (another
//! process), with the in-process backend as the floor of the same run. Runs in a private network
//! namespace it creates (needs root).
//!
//! `cargo bench -p rosbag2_rs_transport_lib --features zenoh --bench zenoh_latency`
//! (`ZENOH_PYTHON` overrides `.venv/bin/python`; `none` skips the Python rows.)

mod common;

use common::{enter_private_network, now_ns};
use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rosbag2_rs_storage::qos::History;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::zenoh::router::Router;
use rosbag2_rs_transport_lib::zenoh::{Role, ZenohConfig, ZenohEnv, ZenohMiddleware};
use rosbag2_rs_transport_lib::{InProcessBus, Middleware, RawPublisher};

const TYPE: &str = "rosbag2_rs_bench/msg/Blob";
const HASH: &str = "RIHS01_0000000000000000000000000000000000000000000000000000000000000000";
const ENDPOINT: &str = "tcp/127.0.0.1:7447";

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
    // Reliable keep-all: congestion control BLOCK, as rmw_zenoh maps it; nothing is dropped.
    QosProfile {
        history: History::KeepAll,
        depth: 1000,
        ..QosProfile::default()
    }
}

struct Case {
    size: usize,
    paced: usize,
    period: Duration,
    burst: usize,
}

type Inbox = Arc<Mutex<Vec<(i64, i64)>>>;

fn report(path: &str, case: &Case, rows: &[(i64, i64)], burst_start: Option<i64>) {
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
    let tput = match (burst_start.or(burst.first().map(|r| r.0)), burst.last()) {
        (Some(start), Some((_, last))) if burst.len() > 1 => {
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

fn wait_rows(inbox: &Inbox, count: usize, timeout: Duration) -> Vec<(i64, i64)> {
    let deadline = Instant::now() + timeout;
    while inbox.lock().unwrap().len() < count && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    inbox.lock().unwrap().clone()
}

fn collecting(inbox: &Inbox) -> rosbag2_rs_transport_lib::MessageCallback {
    let inbox = inbox.clone();
    Box::new(move |m| {
        let sent = i64::from_le_bytes(m.data[8..16].try_into().unwrap());
        inbox.lock().unwrap().push((sent, now_ns()));
    })
}

/// Paced messages, then (once they arrived, via `between`) a back-to-back burst; returns the
/// burst's start.
fn publish(p: &dyn RawPublisher, case: &Case, between: &dyn Fn()) -> i64 {
    let mut template = blob(case.size);
    for _ in 0..case.paced {
        p.publish(&stamp(&mut template)).unwrap();
        std::thread::sleep(case.period);
    }
    between();
    let start = now_ns();
    for _ in 0..case.burst {
        p.publish(&stamp(&mut template)).unwrap();
    }
    start
}

fn node(name: &str) -> ZenohMiddleware {
    let env = ZenohEnv {
        config_override: Some(format!(
            r#"connect/endpoints=["{ENDPOINT}"];listen/endpoints=["tcp/127.0.0.1:0"]"#
        )),
        ..ZenohEnv::default()
    };
    let n = ZenohMiddleware::with_config(
        name,
        "/",
        ZenohConfig::from_vars(Role::Session, &env).unwrap(),
    )
    .unwrap();
    n.register_type_hash(TYPE, HASH);
    n
}

fn peer(python: &str, args: &[String]) -> (std::process::Child, impl Iterator<Item = String>) {
    let mut child = Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/zenoh_peer.py"
        ))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python with eclipse-zenoh");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(|l| l.ok());
    assert_eq!(
        lines.next().as_deref(),
        Some("ready"),
        "the Zenoh peer did not start"
    );
    (child, lines)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    enter_private_network();
    let mut router_config = ZenohConfig::from_vars(Role::Router, &ZenohEnv::default()).unwrap();
    router_config
        .zenoh
        .insert_json5("listen/endpoints", &format!(r#"["{ENDPOINT}"]"#))
        .unwrap();
    let _router = Router::start(router_config).unwrap();
    let talker = node("bench_talker");
    let listener = node("bench_listener");
    let python = std::env::var("ZENOH_PYTHON")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../.venv/bin/python").into());
    println!("## Transport: one-way latency and throughput (Zenoh backend, through a router on loopback)\n");
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
            period: Duration::from_millis(20),
            burst: 300,
        },
        Case {
            size: 6_220_800,
            paced: 60,
            period: Duration::from_micros(33_333),
            burst: 120,
        },
    ];
    for case in &cases {
        let total = case.paced + case.burst;
        // The floor: the in-process backend.
        let bus = InProcessBus::new();
        let (a, b) = (bus.node("a", "/").unwrap(), bus.node("b", "/").unwrap());
        let inbox: Inbox = Arc::default();
        let _sub = b
            .create_subscription("/bench", TYPE, &qos(), collecting(&inbox))
            .unwrap();
        let p = a.create_publisher("/bench", TYPE, &qos()).unwrap();
        let start = publish(&*p, case, &|| {
            drop(wait_rows(&inbox, case.paced, Duration::from_secs(30)))
        });
        report(
            "in-process backend",
            case,
            &wait_rows(&inbox, total, Duration::from_secs(60)),
            Some(start),
        );

        // Ours to ours through the router.
        let topic = format!("/bench_{}", case.size);
        let inbox: Inbox = Arc::default();
        let sub = listener
            .create_subscription(&topic, TYPE, &qos(), collecting(&inbox))
            .unwrap();
        let p = talker.create_publisher(&topic, TYPE, &qos()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while p.subscription_count() == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(500));
        let start = publish(&*p, case, &|| {
            drop(wait_rows(&inbox, case.paced, Duration::from_secs(30)))
        });
        report(
            "Zenoh: rosbag2-rs → rosbag2-rs",
            case,
            &wait_rows(&inbox, total, Duration::from_secs(120)),
            Some(start),
        );
        drop((sub, p));
        if python == "none" {
            continue;
        }

        // Ours to a Python subscriber.
        let topic = format!("/bench_to_python_{}", case.size);
        let key = format!(
            "0/{}/rosbag2_rs_bench::msg::dds_::Blob_/{HASH}",
            &topic[1..]
        );
        let (mut child, lines) = peer(
            &python,
            &["sink".into(), key, total.to_string(), "120".into()],
        );
        let p = talker.create_publisher(&topic, TYPE, &qos()).unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        let start = publish(&*p, case, &|| {
            std::thread::sleep(Duration::from_millis(200))
        });
        let rows: Vec<(i64, i64)> = lines
            .take_while(|l| l != "done")
            .map(|l| {
                let f: Vec<i64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                (f[0], f[1])
            })
            .collect();
        let _ = child.wait();
        report(
            "Zenoh: rosbag2-rs → Python eclipse-zenoh",
            case,
            &rows,
            Some(start),
        );
        drop(p);

        // A Python publisher to ours.
        let topic = format!("/bench_from_python_{}", case.size);
        let key = format!(
            "0/{}/rosbag2_rs_bench::msg::dds_::Blob_/{HASH}",
            &topic[1..]
        );
        let inbox: Inbox = Arc::default();
        let sub = listener
            .create_subscription(&topic, TYPE, &qos(), collecting(&inbox))
            .unwrap();
        let (mut child, mut lines) = peer(
            &python,
            &[
                "source".into(),
                key,
                case.size.to_string(),
                case.paced.to_string(),
                format!("{}", case.period.as_secs_f64()),
                case.burst.to_string(),
            ],
        );
        std::thread::sleep(Duration::from_millis(1000));
        writeln!(child.stdin.as_mut().unwrap(), "go").unwrap();
        let start = lines.find_map(|l| l.strip_prefix("burst ").map(|s| s.parse::<i64>().unwrap()));
        let rows = wait_rows(&inbox, total, Duration::from_secs(120));
        let _ = child.wait();
        report(
            "Zenoh: Python eclipse-zenoh → rosbag2-rs",
            case,
            &rows,
            start,
        );
        drop(sub);
    }
}
