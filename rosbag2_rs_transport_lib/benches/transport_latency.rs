//! Transport benchmark over every backend this build has: one-way latency (paced messages) and
//! burst throughput for 100 B, 1 MB and 6 MB messages. For each backend, ours → ours and, where
//! its real peer is at hand, ours → the peer and the peer → ours: Python `cyclonedds` for Cyclone
//! DDS, Python `eclipse-zenoh` (through the crate's router) for Zenoh, and rclpy on the ROS 2
//! venv's default rmw (rmw_fastrtps_cpp, default settings) for the native Fast DDS and the rcl
//! backends, and for Cyclone DDS too (the cross-vendor path). rclpy → rclpy is the ROS 2 baseline and the in-process backend the floor. The peers
//! handle serialized bytes, so Python decoding does not slow them.
//!
//! Runs in a private network namespace it creates (needs root), so no packet leaves `lo`, and
//! raises `net.core.rmem_max` to 16 MiB for its run (the Cyclone reader asks for 8 MB, the tuned
//! reader of ROS 2's DDS tuning guide).
//!
//! `cargo bench -p rosbag2_rs_transport_lib --bench transport_latency` measures in-process,
//! Cyclone DDS and Zenoh; with `--features fastdds` (and `ROSBAG2_RS_FASTDDS_PREFIX=$PWD/.venv-ros2`)
//! also the native Fast DDS backend; built in a sourced ROS 2 (`tools/test_rcl.sh` sets one up)
//! also rcl. `BENCH_BACKENDS=rcl,fastdds,rclpy` picks backends (`inprocess`, `cyclone`,
//! `fastdds`, `zenoh`, `rcl`, and `rclpy` for the baseline); `BENCH_PEERS=none` leaves the Python
//! peers out; `PEER_PYTHON` (default `.venv/bin/python`) runs the Cyclone and Zenoh peers,
//! `ROS2_VENV` (default `.venv-ros2`, with its colcon install in `ws/`) the rclpy one.

mod common;

use common::{enter_private_network, now_ns};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rosbag2_rs_storage::qos::History;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::*;

/// The DDS domain of every node and peer.
const ROS_DOMAIN: &str = "0";

/// A benchmark case: message size, paced messages and their period, back-to-back burst.
#[derive(Clone, Copy)]
struct Case {
    size: usize,
    paced: usize,
    period: Duration,
    burst: usize,
}

const CASES: [Case; 3] = [
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

/// How a backend's messages look: a `sequence<uint8>` after `prefix` (the encapsulation header
/// and any fields before it), whose first 8 bytes are the send time.
struct Wire {
    type_name: &'static str,
    prefix: &'static [u8],
}

/// `rosbag2_rs_bench/msg/Blob` (one `sequence<uint8>`): the Cyclone and Zenoh peers' type.
const BLOB: Wire = Wire {
    type_name: "rosbag2_rs_bench/msg/Blob",
    prefix: &[0, 1, 0, 0],
};

/// `std_msgs/msg/UInt8MultiArray` with an empty layout: a type every ROS 2 has, for rcl and rclpy.
const UINT8_ARRAY: Wire = Wire {
    type_name: "std_msgs/msg/UInt8MultiArray",
    prefix: &[0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
};

impl Wire {
    fn stamp_at(&self) -> usize {
        self.prefix.len() + 4
    }

    fn message(&self, size: usize) -> Vec<u8> {
        let mut v = self.prefix.to_vec();
        v.extend_from_slice(&(size as u32).to_le_bytes());
        v.resize(self.stamp_at() + size.max(8), 0xab);
        v
    }

    fn sent_at(&self, data: &[u8]) -> i64 {
        let at = self.stamp_at();
        i64::from_le_bytes(data[at..at + 8].try_into().unwrap())
    }
}

/// Reliable, keep last 100,000: nothing is overwritten in a burst. On Zenoh keep-all instead
/// (rmw_zenoh maps keep-last to congestion control DROP, keep-all to BLOCK).
fn qos(history: History) -> QosProfile {
    QosProfile {
        history,
        depth: 100_000,
        ..QosProfile::default()
    }
}

/// `(send, receive)` times in ns of each message received, in order.
type Rows = Vec<(i64, i64)>;
type Inbox = Arc<Mutex<Rows>>;

/// Prints one row: latency percentiles of the paced messages, throughput of the burst (from
/// `burst_start`, or the first burst message's send time).
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
fn publish(publisher: &dyn RawPublisher, wire: &Wire, case: Case, between: &dyn Fn()) -> i64 {
    let mut template = wire.message(case.size);
    let at = wire.stamp_at();
    let mut send = || {
        template[at..at + 8].copy_from_slice(&now_ns().to_le_bytes());
        publisher
            .publish(&Bytes::copy_from_slice(&template))
            .unwrap();
    };
    for _ in 0..case.paced {
        send();
        std::thread::sleep(case.period);
    }
    between();
    let start = now_ns();
    for _ in 0..case.burst {
        send();
    }
    start
}

fn wait_rows(inbox: &Inbox, count: usize, timeout: Duration) -> Rows {
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

fn collecting(wire: &'static Wire, inbox: &Inbox) -> MessageCallback {
    let inbox = inbox.clone();
    Box::new(move |m| {
        let received = now_ns();
        inbox
            .lock()
            .unwrap()
            .push((wire.sent_at(&m.data), received));
    })
}

/// A Python peer (`benches/<script>`): `sink TOPIC COUNT` prints `ready`, then `send_ns recv_ns`
/// per sample once it has them all; `source TOPIC SIZE PACED PERIOD_MS BURST` prints `ready` once
/// its reader is there, publishes the paced samples, waits 1 s, publishes the burst.
#[derive(Clone)]
struct Peer {
    name: &'static str,
    python: String,
    script: &'static str,
    env: Vec<(&'static str, String)>,
}

impl Peer {
    fn start(&self, args: &[String]) -> (Child, impl Iterator<Item = String>) {
        let mut child = Command::new(&self.python)
            .arg(format!(
                "{}/benches/{}",
                env!("CARGO_MANIFEST_DIR"),
                self.script
            ))
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", self.python));
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap())
            .lines()
            .map_while(|l| l.ok());
        assert_eq!(
            lines.next().as_deref(),
            Some("ready"),
            "the {} peer did not start",
            self.name
        );
        (child, lines)
    }

    /// A sink for `case` on `topic`: its rows, once it has exited.
    fn sink(&self, topic: &str, case: Case) -> (Child, std::thread::JoinHandle<Rows>) {
        let (child, lines) = self.start(&[
            "sink".into(),
            topic.into(),
            (case.paced + case.burst).to_string(),
        ]);
        let rows = std::thread::spawn(move || {
            lines
                .map(|l| {
                    let f: Vec<i64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                    (f[0], f[1])
                })
                .collect()
        });
        (child, rows)
    }

    fn source(&self, topic: &str, case: Case) -> Child {
        self.start(&[
            "source".into(),
            topic.into(),
            case.size.to_string(),
            case.paced.to_string(),
            case.period.as_millis().max(1).to_string(),
            case.burst.to_string(),
        ])
        .0
    }
}

/// The rclpy peer on the ROS 2 venv's default rmw.
fn rclpy_peer(venv: &str) -> Peer {
    let ws = format!("{venv}/ws");
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
    Peer {
        name: "rclpy",
        python: format!("{venv}/bin/python"),
        script: "rclpy_peer.py",
        env: vec![
            ("LD_LIBRARY_PATH", format!("{ws}/lib:{venv}/lib")),
            ("AMENT_PREFIX_PATH", format!("{ws}:{venv}")),
            ("PYTHONPATH", site),
            ("ROS_DOMAIN_ID", ROS_DOMAIN.into()),
        ],
    }
}

/// One backend: two nodes of it, the type they carry, and its real peers.
struct Backend {
    key: &'static str,
    name: &'static str,
    history: History,
    wire: &'static Wire,
    talker: Box<dyn Middleware>,
    listener: Box<dyn Middleware>,
    peers: Vec<(Peer, &'static Wire)>,
}

impl Backend {
    fn run(&self, case: Case) {
        self.ours_to_ours(case);
        for (peer, wire) in &self.peers {
            self.ours_to_peer(peer, wire, case);
            self.peer_to_ours(peer, wire, case);
        }
    }

    fn qos(&self) -> QosProfile {
        qos(self.history)
    }

    fn topic(&self, path: &str, case: Case) -> String {
        format!("/bench_{}_{path}_{}", self.key, case.size)
    }

    fn ours_to_ours(&self, case: Case) {
        let inbox: Inbox = Arc::default();
        let topic = self.topic("ours", case);
        let _sub = self
            .listener
            .create_subscription(
                &topic,
                self.wire.type_name,
                &self.qos(),
                collecting(self.wire, &inbox),
            )
            .unwrap();
        let p = self
            .talker
            .create_publisher(&topic, self.wire.type_name, &self.qos())
            .unwrap();
        wait_matched(&*p);
        let start = publish(&*p, self.wire, case, &|| {
            drop(wait_rows(&inbox, case.paced, Duration::from_secs(30)))
        });
        let rows = wait_rows(&inbox, case.paced + case.burst, Duration::from_secs(120));
        report(
            &format!("{}: rosbag2-rs → rosbag2-rs", self.name),
            case,
            &rows,
            Some(start),
        );
    }

    fn ours_to_peer(&self, peer: &Peer, wire: &Wire, case: Case) {
        let topic = self.topic(&format!("to_{}", peer.script.trim_end_matches(".py")), case);
        let (mut sink, rows) = peer.sink(&topic, case);
        let p = self
            .talker
            .create_publisher(&topic, wire.type_name, &self.qos())
            .unwrap();
        wait_matched(&*p);
        let start = publish(&*p, wire, case, &|| {
            std::thread::sleep(Duration::from_secs(1))
        });
        sink.wait().unwrap();
        report(
            &format!("{}: rosbag2-rs → {}", self.name, peer.name),
            case,
            &rows.join().unwrap(),
            Some(start),
        );
    }

    fn peer_to_ours(&self, peer: &Peer, wire: &'static Wire, case: Case) {
        let topic = self.topic(
            &format!("from_{}", peer.script.trim_end_matches(".py")),
            case,
        );
        let inbox: Inbox = Arc::default();
        let _sub = self
            .listener
            .create_subscription(
                &topic,
                wire.type_name,
                &self.qos(),
                collecting(wire, &inbox),
            )
            .unwrap();
        let mut source = peer.source(&topic, case);
        let rows = wait_rows(&inbox, case.paced + case.burst, Duration::from_secs(120));
        source.wait().unwrap();
        report(
            &format!("{}: {} → rosbag2-rs", self.name, peer.name),
            case,
            &rows,
            None,
        );
    }
}

/// rclpy → rclpy: the ROS 2 baseline.
fn peer_to_peer(peer: &Peer, case: Case) {
    let topic = format!("/bench_baseline_{}", case.size);
    let (mut sink, rows) = peer.sink(&topic, case);
    let mut source = peer.source(&topic, case);
    sink.wait().unwrap();
    source.wait().unwrap();
    let path = format!("{} → {} (baseline)", peer.name, peer.name);
    report(&path, case, &rows.join().unwrap(), None);
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

fn dds_config(domain_id: u16) -> DdsConfig {
    // The private namespace has only `lo`: discover as a default-configured peer does
    // (multicast SPDP).
    DdsConfig {
        domain_id,
        range: DiscoveryRange::Subnet,
        ..DdsConfig::default()
    }
}

/// The backends this build has that are `wanted`, with their peers when `peers`.
fn backends(wanted: &dyn Fn(&str) -> bool, peers: bool, rclpy: Option<&Peer>) -> Vec<Backend> {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let python =
        std::env::var("PEER_PYTHON").unwrap_or_else(|_| format!("{manifest}/../.venv/bin/python"));
    // The rclpy peer carries a type every ROS 2 has.
    let rclpy = rclpy.filter(|_| peers).map(|p| (p.clone(), &UINT8_ARRAY));
    // The Python peers of Cyclone DDS and Zenoh carry `Blob`.
    let python_peer = |name, script, env| {
        let peer = Peer {
            name,
            python: python.clone(),
            script,
            env,
        };
        peers.then_some((peer, &BLOB))
    };
    let mut all = Vec::new();
    if wanted("inprocess") {
        let bus = InProcessBus::new();
        all.push(Backend {
            key: "inprocess",
            name: "in-process",
            history: History::KeepLast,
            wire: &BLOB,
            talker: Box::new(bus.node("bench_talker", "/").unwrap()),
            listener: Box::new(bus.node("bench_listener", "/").unwrap()),
            peers: Vec::new(),
        });
    }
    if wanted("cyclone") {
        let node = |name| Box::new(DdsMiddleware::with_config(name, "/", dds_config(0)).unwrap());
        all.push(Backend {
            key: "cyclone",
            name: "Cyclone DDS",
            history: History::KeepLast,
            wire: &BLOB,
            talker: node("bench_talker"),
            listener: node("bench_listener"),
            peers: python_peer(
                "Python cyclonedds (8 MB rcvbuf)",
                "cyclone_peer.py",
                vec![(
                    "CYCLONEDDS_URI",
                    r#"<CycloneDDS><Domain Id="any"><Internal><SocketReceiveBufferSize min="8MB"/></Internal></Domain></CycloneDDS>"#.into(),
                )],
            )
            .into_iter()
            .chain(rclpy.clone())
            .collect(),
        });
    }
    #[cfg(rosbag2_rs_fastdds)]
    if wanted("fastdds") {
        let node = |name| {
            let config = FastDdsConfig {
                dds: dds_config(ROS_DOMAIN.parse().unwrap()).discovery(),
                ..FastDdsConfig::default()
            };
            Box::new(FastDdsMiddleware::with_config(name, "/", config).unwrap())
        };
        all.push(Backend {
            key: "fastdds",
            name: "native Fast DDS",
            history: History::KeepLast,
            wire: &UINT8_ARRAY,
            talker: node("bench_talker"),
            listener: node("bench_listener"),
            peers: rclpy.clone().into_iter().collect(),
        });
    }
    #[cfg(feature = "zenoh")]
    if wanted("zenoh") {
        use rosbag2_rs_transport_lib::zenoh::{Role, ZenohConfig, ZenohEnv, ZenohMiddleware};
        let node = |name| {
            let env = ZenohEnv {
                config_override: Some(format!(
                    r#"connect/endpoints=["{ZENOH_ROUTER}"];listen/endpoints=["tcp/127.0.0.1:0"]"#
                )),
                ..ZenohEnv::default()
            };
            let config = ZenohConfig::from_vars(Role::Session, &env).unwrap();
            let node = ZenohMiddleware::with_config(name, "/", config).unwrap();
            node.register_type_hash(BLOB.type_name, ZERO_HASH);
            Box::new(node)
        };
        all.push(Backend {
            key: "zenoh",
            name: "Zenoh",
            history: History::KeepAll,
            wire: &BLOB,
            talker: node("bench_talker"),
            listener: node("bench_listener"),
            peers: python_peer("Python eclipse-zenoh", "zenoh_peer.py", Vec::new())
                .into_iter()
                .collect(),
        });
    }
    #[cfg(rosbag2_rs_rcl)]
    if wanted("rcl") {
        let node = |name| Box::new(RclMiddleware::new(name, "/").unwrap());
        all.push(Backend {
            key: "rcl",
            name: "rcl",
            history: History::KeepLast,
            wire: &UINT8_ARRAY,
            talker: node("bench_talker"),
            listener: node("bench_listener"),
            peers: rclpy.clone().into_iter().collect(),
        });
    }
    all
}

#[cfg(feature = "zenoh")]
const ZENOH_ROUTER: &str = "tcp/127.0.0.1:7447";
#[cfg(feature = "zenoh")]
const ZERO_HASH: &str = "RIHS01_0000000000000000000000000000000000000000000000000000000000000000";

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let _rmem = RmemMax::at_least(16 << 20);
    enter_private_network();
    // rcl nodes and the rclpy peer take their domain from the environment.
    std::env::set_var("ROS_DOMAIN_ID", ROS_DOMAIN);
    std::env::remove_var("RMW_IMPLEMENTATION");
    let wanted = std::env::var("BENCH_BACKENDS").ok();
    let wanted = |key: &str| {
        wanted
            .as_deref()
            .is_none_or(|w| w.split(',').any(|k| k == key))
    };
    let peers = std::env::var("BENCH_PEERS").as_deref() != Ok("none");
    let venv = std::env::var("ROS2_VENV")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../.venv-ros2").into());
    let rclpy = std::path::Path::new(&format!("{venv}/bin/python"))
        .exists()
        .then(|| rclpy_peer(&venv));
    #[cfg(feature = "zenoh")]
    let _router = wanted("zenoh").then(|| {
        use rosbag2_rs_transport_lib::zenoh::{router::Router, Role, ZenohConfig, ZenohEnv};
        let mut config = ZenohConfig::from_vars(Role::Router, &ZenohEnv::default()).unwrap();
        config
            .zenoh
            .insert_json5("listen/endpoints", &format!(r#"["{ZENOH_ROUTER}"]"#))
            .unwrap();
        Router::start(config).unwrap()
    });
    let backends = backends(&wanted, peers, rclpy.as_ref());
    println!("| path | bytes | received | p50 µs | p99 µs | burst throughput |");
    println!("|---|---|---|---|---|---|");
    for case in CASES {
        if let Some(rclpy) = rclpy.as_ref().filter(|_| peers && wanted("rclpy")) {
            peer_to_peer(rclpy, case);
        }
        for backend in &backends {
            backend.run(case);
        }
    }
}
