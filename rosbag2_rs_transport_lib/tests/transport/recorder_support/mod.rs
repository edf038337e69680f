//! Helpers shared by the recorder tests: a bus on virtual time, messages, reading bags back.
#![allow(dead_code)] // each test binary uses a subset

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use rosbag2_rs_storage::{BagMetadata, QosProfile, SequentialReader, SerializedMessage};
use rosbag2_rs_transport_lib::{InProcessBus, InProcessNode};
use rosbag2_rs_transport_lib::{Middleware, RawPublisher};
use rosbag2_rs_transport_lib::{RecordOptions, Recorder, TopicSelection};

pub const STRING: &str = "std_msgs/msg/String";
pub const INT32: &str = "std_msgs/msg/Int32";

/// Virtual time in ns, driving an in-process bus's receive timestamps.
pub struct VirtualClock(Arc<AtomicI64>);

impl VirtualClock {
    pub fn set(&self, ns: i64) {
        self.0.store(ns, Ordering::SeqCst);
    }
    pub fn advance(&self, ns: i64) {
        self.0.fetch_add(ns, Ordering::SeqCst);
    }
    pub fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A bus whose receive times are virtual, starting at 1 s.
pub fn virtual_bus() -> (InProcessBus, VirtualClock) {
    let now = Arc::new(AtomicI64::new(1_000_000_000));
    let clock = now.clone();
    (
        InProcessBus::with_clock(Arc::new(move || clock.load(Ordering::SeqCst))),
        VirtualClock(now),
    )
}

/// `std_msgs/msg/String` CDR (little endian).
pub fn string_msg(text: &str) -> Bytes {
    let mut out = vec![0u8, 1, 0, 0];
    out.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    out.into()
}

/// A CDR payload of exactly `len` bytes (header included), content from `seed`.
pub fn payload(len: usize, seed: u64) -> Bytes {
    let mut out = vec![0u8, 1, 0, 0];
    out.extend((0..len.saturating_sub(4)).map(|i| (seed as usize + i) as u8));
    out.into()
}

/// A `/clock` publisher (`rosgraph_msgs/msg/Clock`).
pub fn clock_publisher(node: &InProcessNode) -> Box<dyn RawPublisher> {
    publisher(node, "/clock", "rosgraph_msgs/msg/Clock")
}

/// `rosgraph_msgs/msg/Clock` CDR (little endian).
pub fn clock_msg(sec: i32, nanosec: u32) -> Bytes {
    let mut v = vec![0u8, 1, 0, 0];
    v.extend_from_slice(&sec.to_le_bytes());
    v.extend_from_slice(&nanosec.to_le_bytes());
    v.into()
}

pub fn publisher(node: &InProcessNode, topic: &str, type_name: &str) -> Box<dyn RawPublisher> {
    node.create_publisher(topic, type_name, &QosProfile::default())
        .unwrap()
}

pub fn options(uri: PathBuf, selection: TopicSelection) -> RecordOptions {
    RecordOptions {
        uri,
        selection,
        ..RecordOptions::default()
    }
}

pub fn start(bus: &InProcessBus, node_name: &str, options: RecordOptions) -> Recorder {
    Recorder::start(Arc::new(bus.node(node_name, "/").unwrap()), options).unwrap()
}

/// Every message of a bag (or several), in receive-time order.
pub fn read_all(bags: &[PathBuf]) -> Vec<SerializedMessage> {
    let mut reader = SequentialReader::open_many(bags).unwrap();
    let mut out = Vec::new();
    while let Some(m) = reader.read_next().unwrap() {
        out.push(m);
    }
    out
}

pub fn read_bag(bag: &Path) -> Vec<SerializedMessage> {
    read_all(&[bag.to_path_buf()])
}

pub fn metadata(bag: &Path) -> BagMetadata {
    BagMetadata::read_from_dir(bag).unwrap()
}

/// Payloads of the messages on `topic`.
pub fn payloads_on(messages: &[SerializedMessage], topic: &str) -> Vec<Bytes> {
    messages
        .iter()
        .filter(|m| &*m.topic == topic)
        .map(|m| m.data.clone())
        .collect()
}

/// Directories in `dir` whose name starts with `prefix`, sorted.
pub fn dirs_with_prefix(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    out.sort();
    out
}

/// Waits (bounded: 20 s) until the running recorder's summary satisfies `done` (a thread of the
/// recorder's acts on virtual time at its own pace); returns the last summary.
pub fn wait_for_summary(
    recorder: &Recorder,
    done: impl Fn(&rosbag2_rs_transport_lib::RecordSummary) -> bool,
) -> rosbag2_rs_transport_lib::RecordSummary {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let summary = recorder.summary();
        if done(&summary) || std::time::Instant::now() > deadline {
            return summary;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A recorder of `/t` under sim time on a virtual bus, with a publisher of `/t` and of `/clock`.
/// Bind `_dir`, `_bus` and `_talker` when destructuring: they must live as long as the
/// recorder.
pub struct SimTimeRecording {
    pub _dir: tempfile::TempDir,
    pub _bus: InProcessBus,
    pub _talker: InProcessNode,
    pub clock: VirtualClock,
    pub t: Box<dyn RawPublisher>,
    pub clock_pub: Box<dyn RawPublisher>,
    pub bag: PathBuf,
    pub recorder: Recorder,
}

/// See [`SimTimeRecording`]; `max_cache_size` also bounds what is held before the first
/// `/clock` (`None`: the default).
pub fn sim_time_recording(max_cache_size: Option<u64>) -> SimTimeRecording {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let t = publisher(&talker, "/t", STRING);
    let clock_pub = clock_publisher(&talker);
    let bag = dir.path().join("bag");
    let mut options = RecordOptions {
        use_sim_time: true,
        ..options(bag.clone(), TopicSelection::topics(["/t"]))
    };
    if let Some(bytes) = max_cache_size {
        options.max_cache_size = bytes;
    }
    let recorder = start(&bus, "rec", options);
    SimTimeRecording {
        _dir: dir,
        _bus: bus,
        _talker: talker,
        clock,
        t,
        clock_pub,
        bag,
        recorder,
    }
}
