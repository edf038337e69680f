//! How precisely the player publishes on the bag's schedule, next to a rosbag2-style player loop
//! (a condition-variable wait until each message's steady-time deadline) in the same run, and how
//! fast it bursts.
//!
//! Both players publish into the same in-process graph; a subscriber stamps every message with
//! the monotonic clock on arrival (delivery is synchronous, so that is the publish time). The
//! error of message k is its arrival minus (first arrival + (t_k − t_0) / rate).
//!
//! Sim time: the player follows a `/clock` the bench publishes at 10 or 100 Hz at real speed;
//! the lateness of message k is its arrival minus the instant simulated time reached its time
//! (at ticks: the first tick at or past it; extrapolated: the tick before it plus the offset).
//! The baseline in the same run is the player repositioning on every forward step (what it did
//! before: `sim_time_jump_threshold` of 1 ns), which drops the messages between ticks.
//!
//! Run: `cargo bench -p rosbag2_rs_transport_lib --bench playback_timing`
//! Env: `PLAYBACK_BENCH_SECONDS` (default 3) per row, `PLAYBACK_BENCH_BURST` (default 1000000).

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration as StdDuration, Instant};

use bytes::Bytes;
use rosbag2_rs_clock::{Duration, MonotonicSource, TimeSource};
use rosbag2_rs_storage::{
    BagWriter, BagWriterOptions, SequentialReader, SerializedMessage, TopicMetadata,
};
use rosbag2_rs_transport_lib::InProcessBus;
use rosbag2_rs_transport_lib::{Middleware, RawPublisher};
use rosbag2_rs_transport_lib::{PlayOptions, Player};

const T0: i64 = 1_700_000_000_000_000_000;
const TOPIC: &str = "/bench";
const TYPE: &str = "std_msgs/msg/String";

fn write_bag(
    dir: &std::path::Path,
    name: &str,
    count: usize,
    period_ns: i64,
    size: usize,
) -> std::path::PathBuf {
    let uri = dir.join(name);
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new(TOPIC, TYPE), None)
        .unwrap();
    let topic: Arc<str> = Arc::from(TOPIC);
    let payload = Bytes::from([&[0u8, 1, 0, 0][..], &vec![7u8; size.saturating_sub(4)]].concat());
    for i in 0..count {
        writer
            .write(&SerializedMessage::new(
                topic.clone(),
                T0 + i as i64 * period_ns,
                payload.clone(),
            ))
            .unwrap();
    }
    writer.close().unwrap();
    uri
}

/// Arrival times (monotonic ns) of every message on TOPIC.
fn arrivals(node: &dyn Middleware) -> (Arc<Mutex<Vec<i64>>>, rosbag2_rs_transport_lib::Handle) {
    let store = Arc::new(Mutex::new(Vec::with_capacity(1 << 20)));
    let sink = store.clone();
    let source = MonotonicSource::new();
    let handle = node
        .create_subscription(
            TOPIC,
            TYPE,
            &Default::default(),
            Box::new(move |_| sink.lock().unwrap().push(source.now())),
        )
        .unwrap();
    (store, handle)
}

struct Row {
    p50: i64,
    p99: i64,
    max: i64,
    n: usize,
    /// The median of the messages' signed offsets from the first one's schedule.
    offset: i64,
    /// The median distance from that median offset: the spacing's own error, whatever the
    /// first message did.
    spread_p50: i64,
}

fn errors(arrived: &[i64], times: &[i64], rate: f64) -> Row {
    let first = arrived[0];
    let mut offsets: Vec<i64> = arrived
        .iter()
        .zip(times)
        .map(|(a, t)| a - first - ((t - times[0]) as f64 / rate) as i64)
        .collect();
    let mut err: Vec<i64> = offsets.iter().map(|o| o.abs()).collect();
    err.sort_unstable();
    let q = |v: &[i64], p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    offsets.sort_unstable();
    let offset = q(&offsets, 0.5);
    let mut spread: Vec<i64> = offsets.iter().map(|o| (o - offset).abs()).collect();
    spread.sort_unstable();
    Row {
        p50: q(&err, 0.5),
        p99: q(&err, 0.99),
        max: *err.last().unwrap(),
        n: err.len(),
        offset,
        spread_p50: q(&spread, 0.5),
    }
}

fn bag_times(bag: &std::path::Path) -> Vec<i64> {
    let mut reader = SequentialReader::open(bag).unwrap();
    let mut times = Vec::new();
    while let Some(m) = reader.read_next().unwrap() {
        times.push(m.recv_timestamp);
    }
    times
}

fn ours(bag: &std::path::Path, rate: f64) -> Row {
    let bus = InProcessBus::new();
    let observer = bus.node("observer", "/").unwrap();
    let (arrived, _sub) = arrivals(&observer);
    let node = Arc::new(bus.node("rosbag2_player", "/").unwrap());
    let player = Player::new(
        node,
        PlayOptions {
            bags: vec![bag.to_path_buf()],
            rate: rosbag2_rs_clock::PlaybackRate::new(rate).unwrap(),
            ..Default::default()
        },
    )
    .unwrap();
    player.play().unwrap();
    let arrived = arrived.lock().unwrap().clone();
    errors(&arrived, &bag_times(bag), rate)
}

/// rosbag2's loop before precise sleeps: for each message, wait on a condition variable until
/// its steady-time deadline, then publish.
fn condvar_loop(bag: &std::path::Path, rate: f64) -> Row {
    let bus = InProcessBus::new();
    let observer = bus.node("observer", "/").unwrap();
    let (arrived, _sub) = arrivals(&observer);
    let node = bus.node("rosbag2_player", "/").unwrap();
    let publisher: Box<dyn RawPublisher> = node
        .create_publisher(TOPIC, TYPE, &Default::default())
        .unwrap();
    let mut reader = SequentialReader::open(bag).unwrap();
    let (lock, cv) = (Mutex::new(()), Condvar::new());
    let start = Instant::now();
    while let Some(m) = reader.read_next().unwrap() {
        let deadline =
            start + StdDuration::from_nanos(((m.recv_timestamp - T0) as f64 / rate) as u64);
        let mut guard = lock.lock().unwrap();
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            guard = cv.wait_timeout(guard, deadline - now).unwrap().0;
        }
        drop(guard);
        publisher.publish(&m.data).unwrap();
    }
    let arrived = arrived.lock().unwrap().clone();
    errors(&arrived, &bag_times(bag), rate)
}

fn burst(bag: &std::path::Path, count: usize) -> f64 {
    let bus = InProcessBus::new();
    let observer = bus.node("observer", "/").unwrap();
    let received = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sink = received.clone();
    let _sub = observer
        .create_subscription(
            TOPIC,
            TYPE,
            &Default::default(),
            Box::new(move |_| {
                sink.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }),
        )
        .unwrap();
    let node = Arc::new(bus.node("rosbag2_player", "/").unwrap());
    let options = PlayOptions {
        bags: vec![bag.to_path_buf()],
        start_paused: true,
        read_ahead_queue_size: 10_000,
        ..Default::default()
    };
    let player = Arc::new(Player::new(node, options).unwrap());
    let playing = player.clone();
    let thread = std::thread::spawn(move || playing.play().unwrap());
    while !player.is_playing() {
        std::thread::yield_now();
    }
    let started = Instant::now();
    let published = player.burst(u64::MAX).unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    player.stop();
    thread.join().unwrap();
    assert_eq!(published as usize, count);
    assert_eq!(received.load(std::sync::atomic::Ordering::Relaxed), count);
    count as f64 / elapsed
}

/// A 1 kHz bag of `count` messages whose payload is the message's index.
fn write_indexed_bag(dir: &std::path::Path, count: u32) -> std::path::PathBuf {
    let uri = dir.join("sim_time");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new(TOPIC, TYPE), None)
        .unwrap();
    let topic: Arc<str> = Arc::from(TOPIC);
    for i in 0..count {
        let payload = Bytes::from([&[0u8, 1, 0, 0][..], &i.to_le_bytes()].concat());
        let time = T0 + i64::from(i) * 1_000_000;
        writer
            .write(&SerializedMessage::new(topic.clone(), time, payload))
            .unwrap();
    }
    writer.close().unwrap();
    uri
}

/// Plays the indexed bag under sim time against a `/clock` published here at `clock_hz`, at
/// real speed. Returns the lateness of every message received and how many were.
fn sim_time(
    bag: &std::path::Path,
    count: u32,
    clock_hz: i64,
    extrapolate: bool,
    threshold: Option<Duration>,
) -> (Row, usize) {
    let bus = InProcessBus::new();
    let observer = bus.node("observer", "/").unwrap();
    let arrived = Arc::new(Mutex::new(Vec::with_capacity(count as usize)));
    let sink = arrived.clone();
    let source = Arc::new(MonotonicSource::new());
    let stamp = source.clone();
    let _sub = observer
        .create_subscription(
            TOPIC,
            TYPE,
            &Default::default(),
            Box::new(move |m| {
                let index = u32::from_le_bytes(m.data[4..8].try_into().unwrap());
                sink.lock().unwrap().push((index, stamp.now()));
            }),
        )
        .unwrap();
    let clock = observer
        .create_publisher(
            rosbag2_rs_transport_lib::CLOCK_TOPIC,
            rosbag2_rs_transport_lib::CLOCK_TYPE,
            &rosbag2_rs_transport_lib::clock_qos(),
        )
        .unwrap();
    let player = Arc::new(
        Player::new(
            Arc::new(bus.node("rosbag2_player", "/").unwrap()),
            PlayOptions {
                bags: vec![bag.to_path_buf()],
                use_sim_time: true,
                extrapolate_ros_time: extrapolate,
                sim_time_jump_threshold: threshold,
                ..Default::default()
            },
        )
        .unwrap(),
    );
    let playing = player.clone();
    let thread = std::thread::spawn(move || playing.play().unwrap());
    while !player.is_playing() {
        std::thread::yield_now();
    }
    // (simulated ns, monotonic ns) of each tick.
    let period = 1_000_000_000 / clock_hz;
    let end = T0 + i64::from(count) * 1_000_000;
    let start = Instant::now();
    let mut ticks = Vec::new();
    for k in -1i64.. {
        let due = start + StdDuration::from_nanos(((k + 1) * period) as u64);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let ros = T0 + k * period;
        ticks.push((ros, source.now()));
        let (sec, nsec) = (ros.div_euclid(1_000_000_000), ros.rem_euclid(1_000_000_000));
        let bytes = [
            &[0u8, 1, 0, 0][..],
            &(sec as i32).to_le_bytes(),
            &(nsec as u32).to_le_bytes(),
        ]
        .concat();
        clock.publish(&bytes.into()).unwrap();
        if ros >= end {
            break;
        }
    }
    std::thread::sleep(StdDuration::from_millis(100));
    player.stop();
    thread.join().unwrap();
    let arrived = arrived.lock().unwrap().clone();
    let mut late: Vec<i64> = arrived
        .iter()
        .map(|&(index, at)| {
            let t = T0 + i64::from(index) * 1_000_000;
            let reached = if extrapolate {
                let (ros, wall) = *ticks.iter().rev().find(|(ros, _)| *ros <= t).unwrap();
                wall + (t - ros)
            } else {
                ticks.iter().find(|(ros, _)| *ros >= t).unwrap().1
            };
            at - reached
        })
        .collect();
    late.sort_unstable();
    let q = |p: f64| late[((late.len() as f64 - 1.0) * p).round() as usize];
    let row = Row {
        p50: q(0.5),
        p99: q(0.99),
        max: *late.last().unwrap(),
        n: late.len(),
        offset: 0,
        spread_p50: 0,
    };
    (row, arrived.len())
}

fn us(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

fn main() {
    let seconds: f64 = std::env::var("PLAYBACK_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let burst_count: usize = std::env::var("PLAYBACK_BENCH_BURST")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    println!("publish-time error against the bag's schedule, in-process, {seconds} s per row (µs)");
    println!(
        "{:<8} {:<6} {:<22} {:>8} {:>8} {:>9} {:>7} {:>14} {:>14}",
        "rate", "bag", "player", "p50", "p99", "max", "msgs", "median offset", "p50 around it"
    );
    for hz in [1_000i64, 10_000] {
        let count = (seconds * hz as f64) as usize;
        let bag = write_bag(
            dir.path(),
            &format!("bag_{hz}"),
            count,
            1_000_000_000 / hz,
            100,
        );
        for rate in [1.0] {
            for (name, row) in [
                ("rosbag2-rs", ours(&bag, rate)),
                ("condvar loop (rosbag2)", condvar_loop(&bag, rate)),
            ] {
                println!(
                    "{:<8} {:<6} {:<22} {:>8} {:>8} {:>9} {:>7} {:>14} {:>14}",
                    rate,
                    format!("{}k", hz / 1000),
                    name,
                    us(row.p50),
                    us(row.p99),
                    us(row.max),
                    row.n,
                    us(row.offset),
                    us(row.spread_p50)
                );
            }
        }
    }
    let count = 2_000;
    let bag = write_indexed_bag(dir.path(), count);
    println!(
        "\nsim time: 1 kHz bag ({count} msgs) against a /clock at real speed; lateness of each message \
         after simulated time reached it (µs)"
    );
    println!(
        "{:<7} {:<13} {:<28} {:>9} {:>8} {:>8} {:>9}",
        "clock", "mode", "player", "received", "p50", "p99", "max"
    );
    for clock_hz in [10, 100] {
        for extrapolate in [false, true] {
            for (name, threshold) in [
                ("rosbag2-rs", None),
                ("repositioning every step", Some(Duration::from_nanos(1))),
            ] {
                let (row, received) = sim_time(&bag, count, clock_hz, extrapolate, threshold);
                println!(
                    "{:<7} {:<13} {:<28} {:>9} {:>8} {:>8} {:>9}",
                    format!("{clock_hz} Hz"),
                    if extrapolate {
                        "extrapolated"
                    } else {
                        "at ticks"
                    },
                    name,
                    format!("{received}/{count}"),
                    us(row.p50),
                    us(row.p99),
                    us(row.max),
                );
            }
        }
    }
    let bag = write_bag(dir.path(), "burst", burst_count, 1_000, 100);
    let rate = burst(&bag, burst_count);
    println!(
        "\nburst of {burst_count} × 100 B messages, in-process: {:.2} M msgs/s",
        rate / 1e6
    );
}
