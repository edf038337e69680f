//! The snapshot mode on the in-process backend: per-topic limits by bytes and by
//! duration, new bag per trigger, no loss while messages keep arriving, runtime
//! reconfiguration, pause/resume, save on shutdown, empty buffers.

use crate::recorder_support;

use std::path::PathBuf;
use std::time::Duration;

use recorder_support::*;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::*;
use rosbag2_rs_storage::Retention;
use rosbag2_rs_transport_lib::Client;
use rosbag2_rs_transport_lib::*;
use rosbag2_rs_transport_lib::{InProcessBus, InProcessNode, RawPublisher};

const T: Duration = Duration::from_secs(5);

fn snapshot_recorder(bus: &InProcessBus, prefix: PathBuf, limits: SnapshotLimits) -> Recorder {
    start(
        bus,
        "rosbag2_recorder",
        RecordOptions {
            snapshot: Some(limits),
            ..options(prefix, TopicSelection::all())
        },
    )
}

fn limits(max_bytes_per_topic: u64, max_duration_ns: i64) -> SnapshotLimits {
    SnapshotLimits {
        max_bytes_per_topic,
        max_duration_ns,
    }
}

#[test]
fn buffers_keep_the_newest_bytes_per_topic() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", INT32);
    let b = publisher(&talker, "/b", INT32);
    // Room for three 100-byte messages at what each costs in memory.
    let limit = 3 * message_cost(100) + 50;
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(limit, 0));
    let mut sent_a = Vec::new();
    for i in 0..10 {
        clock.advance(1_000);
        let data = payload(100, i);
        a.publish(&data).unwrap();
        sent_a.push(data);
    }
    b.publish(&payload(300, 99)).unwrap();
    b.publish(&payload(1000, 98)).unwrap(); // alone over the limit: evicted too
    assert_eq!(recorder.snapshot_occupancy().unwrap(), (3, 300));
    let bag = recorder.snapshot().unwrap().unwrap();
    let messages = read_bag(&bag);
    assert_eq!(payloads_on(&messages, "/a"), sent_a[7..]);
    assert!(payloads_on(&messages, "/b").is_empty());
    let summary = recorder.stop().unwrap();
    assert_eq!(
        summary.snapshots.len(),
        1,
        "empty at shutdown: no second bag"
    );
    assert_eq!(summary.snapshots[0], bag);
    let a = summary.topics.iter().find(|t| t.topic == "/a").unwrap();
    assert_eq!((a.received, a.written, a.evicted, a.dropped), (10, 3, 7, 0));
    let meta = metadata(&bag);
    assert_eq!(meta.message_count, 3);
    assert_eq!(meta.starting_time, messages[0].recv_timestamp);
    assert!(
        meta.topic("/b").is_some(),
        "every recorded topic is in the bag"
    );
}

/// Eviction by `now() - max_duration` on every topic, so that a topic gone quiet
/// does not leave its old messages in every later snapshot.
#[test]
fn the_time_window_is_now_minus_duration_on_every_topic() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", STRING);
    let b = publisher(&talker, "/b", STRING);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(0, 2_500_000_000));
    for i in 0..10 {
        clock.set(i * 1_000_000_000);
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
        if i < 2 {
            b.publish(&string_msg(&format!("b{i}"))).unwrap();
        }
    }
    let bag = recorder.snapshot().unwrap().unwrap();
    let messages = read_bag(&bag);
    let times = |topic: &str| -> Vec<i64> {
        messages
            .iter()
            .filter(|m| &*m.topic == topic)
            .map(|m| m.recv_timestamp / 1_000_000_000)
            .collect()
    };
    // now = 9 s: everything received before 6.5 s is gone, quiet /b included.
    assert_eq!(times("/a"), [7, 8, 9]);
    assert!(times("/b").is_empty(), "{:?}", times("/b"));
    assert_eq!(metadata(&bag).duration, 2_000_000_000);
    // Messages older than the window at the trigger are not written, even if nothing newer
    // arrived on any topic since.
    a.publish(&string_msg("a9b")).unwrap();
    clock.set(20_000_000_000);
    assert_eq!(recorder.snapshot().unwrap(), None);
    let summary = recorder.stop().unwrap();
    let b = summary.topics.iter().find(|t| t.topic == "/b").unwrap();
    assert_eq!((b.received, b.written, b.evicted), (2, 0, 2));
}

#[test]
fn each_trigger_writes_a_new_bag_and_an_empty_buffer_writes_none() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", STRING);
    let prefix = dir.path().join("snap");
    let recorder = snapshot_recorder(&bus, prefix.clone(), limits(1 << 20, 0));
    let cli = bus.node("cli", "/").unwrap();
    let service = Client::<Snapshot>::new(&cli, "/rosbag2_recorder/snapshot").unwrap();
    assert!(
        !service
            .call(&SnapshotRequest::default(), T)
            .unwrap()
            .success
    );
    assert_eq!(recorder.snapshot().unwrap(), None);
    assert!(dirs_with_prefix(dir.path(), "snap").is_empty());
    p.publish(&string_msg("one")).unwrap();
    assert!(
        service
            .call(&SnapshotRequest::default(), T)
            .unwrap()
            .success
    );
    p.publish(&string_msg("two")).unwrap();
    let second = recorder.snapshot().unwrap().unwrap();
    p.publish(&string_msg("three")).unwrap();
    let summary = recorder.stop().unwrap();
    assert_eq!(summary.snapshots.len(), 3, "{:?}", summary.snapshots);
    assert_eq!(summary.snapshots[1], second);
    assert_eq!(dirs_with_prefix(dir.path(), "snap"), {
        let mut s = summary.snapshots.clone();
        s.sort();
        s
    });
    let contents: Vec<Vec<bytes::Bytes>> = summary
        .snapshots
        .iter()
        .map(|b| payloads_on(&read_bag(b), "/t"))
        .collect();
    assert_eq!(
        contents,
        [
            vec![string_msg("one")],
            vec![string_msg("two")],
            vec![string_msg("three")]
        ]
    );
    for bag in &summary.snapshots {
        let name = bag.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("snap_") && name.len() >= "snap_YYYYMMDD-HHMMSS".len(),
            "{name}"
        );
    }
}

#[test]
fn snapshots_while_messages_keep_arriving_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bus = InProcessBus::new();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", INT32);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(1 << 30, 0));
    const N: u64 = 20_000;
    let publishing = std::thread::spawn(move || {
        for i in 0..N {
            let mut v = vec![0u8, 1, 0, 0];
            v.extend_from_slice(&i.to_le_bytes());
            p.publish(&v.into()).unwrap();
        }
    });
    let mut taken = 0;
    while !publishing.is_finished() {
        if recorder.snapshot().unwrap().is_some() {
            taken += 1;
        }
    }
    publishing.join().unwrap();
    let summary = recorder.stop().unwrap();
    assert!(taken >= 1);
    let numbers: Vec<u64> = read_all(&summary.snapshots)
        .iter()
        .map(|m| u64::from_le_bytes(m.data[4..12].try_into().unwrap()))
        .collect();
    assert_eq!(
        numbers,
        (0..N).collect::<Vec<_>>(),
        "every message exactly once, in order"
    );
    assert_eq!(summary.written(), N);
}

#[test]
fn limits_change_at_runtime_and_clear_empties_the_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", INT32);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(0, 100_000_000_000));
    let cli = bus.node("cli", "/").unwrap();
    let memory_srv = Client::<SetMemory>::new(&cli, "/rosbag2_recorder/snapshot/memory").unwrap();
    let duration = Client::<SetDuration>::new(&cli, "/rosbag2_recorder/snapshot/duration").unwrap();
    let clear =
        Client::<ClearBuffer>::new(&cli, "/rosbag2_recorder/snapshot/clear_buffer").unwrap();
    for i in 0..10 {
        clock.set(i * 1_000_000_000);
        p.publish(&payload(100, i as u64)).unwrap();
    }
    assert_eq!(recorder.snapshot_occupancy().unwrap().0, 10);
    // Shrinking the window trims at once (now = 9 s: 5..=9 stay).
    let set_duration = |seconds: f64| {
        duration
            .call(&SetDurationRequest { duration: seconds }, T)
            .unwrap()
            .success
    };
    let set_memory = |memory: f64| memory_client(&memory_srv, memory);
    // What two 100-byte messages cost in memory.
    let two = 2 * message_cost(100);
    assert!(set_duration(4.0));
    assert_eq!(recorder.snapshot_occupancy().unwrap(), (5, 500));
    assert!(set_memory(two as f64));
    assert_eq!(recorder.snapshot_occupancy().unwrap(), (2, 200));
    // A non-positive limit disables its axis, as long as the other one limits.
    assert!(set_duration(-1.0), "memory still limits");
    assert_eq!(recorder.snapshot_limits().unwrap(), limits(two, 0));
    assert!(!set_memory(0.0), "both off: refused");
    assert!(!set_memory(-5.0), "both off: refused");
    assert_eq!(recorder.snapshot_limits().unwrap(), limits(two, 0));
    assert!(set_duration(3.0));
    assert!(set_memory(-5.0), "duration limits: memory off");
    assert_eq!(
        recorder.snapshot_limits().unwrap(),
        limits(0, 3_000_000_000)
    );
    assert!(!set_duration(0.0), "both off: refused");
    // Absurd values are refused (services answer any peer) and change nothing.
    assert!(!set_memory(1e18), "more than the physical memory");
    assert!(!set_duration(1e12), "more than a day");
    assert_eq!(
        recorder.snapshot_limits().unwrap(),
        limits(0, 3_000_000_000)
    );
    assert!(!set_duration(f64::NAN));
    assert!(set_memory(two as f64));
    assert!(set_duration(0.0));
    assert_eq!(recorder.snapshot_limits().unwrap(), limits(two, 0));
    let r = clear.call(&ClearBufferRequest::default(), T).unwrap();
    assert!(r.success);
    assert_eq!(recorder.snapshot_occupancy().unwrap(), (0, 0));
    assert_eq!(recorder.snapshot().unwrap(), None);
    recorder.set_snapshot_limits(limits(0, 1)).unwrap();
    assert!(recorder.set_snapshot_limits(limits(0, 0)).is_err());
    let summary = recorder.stop().unwrap();
    assert!(summary.snapshots.is_empty());
}

#[test]
fn pause_stops_buffering_and_resume_clears_the_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", STRING);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(1 << 20, 0));
    let cli = bus.node("cli", "/").unwrap();
    let pause = Client::<Pause>::new(&cli, "/rosbag2_recorder/snapshot/pause").unwrap();
    let resume = Client::<Resume>::new(&cli, "/rosbag2_recorder/snapshot/resume").unwrap();
    p.publish(&string_msg("before pause")).unwrap();
    pause.call(&PauseRequest::default(), T).unwrap();
    assert!(recorder.is_paused());
    p.publish(&string_msg("while paused")).unwrap();
    assert_eq!(recorder.snapshot_occupancy().unwrap().0, 1);
    resume.call(&ResumeRequest::default(), T).unwrap();
    assert_eq!(recorder.snapshot_occupancy().unwrap().0, 0, "resume clears");
    p.publish(&string_msg("after resume")).unwrap();
    let summary = recorder.stop().unwrap();
    assert_eq!(summary.snapshots.len(), 1, "saved at shutdown");
    assert_eq!(
        payloads_on(&read_bag(&summary.snapshots[0]), "/t"),
        [string_msg("after resume")]
    );
}

fn memory_client(client: &Client<SetMemory>, memory: f64) -> bool {
    client
        .call(&SetMemoryRequest { memory }, T)
        .unwrap()
        .success
}

#[test]
fn a_snapshot_that_cannot_be_written_says_so_and_keeps_the_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    // A prefix in a directory that does not exist is refused at start.
    let err = Recorder::start(
        std::sync::Arc::new(bus.node("early", "/").unwrap()),
        RecordOptions {
            snapshot: Some(limits(1 << 20, 0)),
            ..options(dir.path().join("missing/snap"), TopicSelection::all())
        },
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("not a directory"), "{err}");

    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", STRING);
    let recorder = snapshot_recorder(&bus, out.join("snap"), limits(1 << 20, 0));
    let cli = bus.node("cli", "/").unwrap();
    let service = Client::<Snapshot>::new(&cli, "/rosbag2_recorder/snapshot").unwrap();
    for text in ["one", "two"] {
        p.publish(&string_msg(text)).unwrap();
    }
    // The output directory goes away (an unmounted disk, a removed folder): refused, kept.
    std::fs::remove_dir(&out).unwrap();
    let response = service.call(&SnapshotRequest::default(), T).unwrap();
    assert!(!response.success);
    assert_eq!(recorder.snapshot_occupancy().unwrap().0, 2);
    assert!(recorder.snapshot().is_err());
    // Back: the snapshot holds everything buffered meanwhile.
    std::fs::create_dir(&out).unwrap();
    p.publish(&string_msg("three")).unwrap();
    let bag = recorder.snapshot().unwrap().unwrap();
    assert_eq!(
        payloads_on(&read_bag(&bag), "/t"),
        ["one", "two", "three"].map(string_msg)
    );
    let summary = recorder.stop().unwrap();
    assert!(summary.failed_snapshots.is_empty());
}

fn latched_publisher(node: &InProcessNode, topic: &str) -> Box<dyn RawPublisher> {
    let qos = rosbag2_rs_storage::QosProfile {
        durability: rosbag2_rs_storage::qos::Durability::TransientLocal,
        depth: 1,
        ..Default::default()
    };
    node.create_publisher(topic, STRING, &qos).unwrap()
}

fn wait_for_bag(dir: &std::path::Path) {
    let deadline = std::time::Instant::now() + T;
    while !dir.join("metadata.yaml").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "no bag at {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The writer renames nothing after metadata.yaml: the bag is complete once it is there.
}

const S: i64 = 1_000_000_000;

/// rosbag_snapshot's TriggerSnapshot through the service: a file name, a topic subset (the
/// other topics stay buffered), a window start, and a post-trigger tail (messages up to the
/// tail's end are in the same snapshot, none after).
#[test]
fn trigger_with_file_name_topics_window_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", STRING);
    let b = publisher(&talker, "/b", STRING);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(0, 100 * S));
    let cli = bus.node("cli", "/").unwrap();
    let trigger =
        Client::<TriggerSnapshot>::new(&cli, "/rosbag2_recorder/snapshot/trigger").unwrap();
    for i in 1..=5 {
        clock.set(i * S);
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
        b.publish(&string_msg(&format!("b{i}"))).unwrap();
    }
    let request = TriggerSnapshotRequest {
        filename: "crash".into(),
        topics: vec!["a".into()], // relative: expanded against the recorder's node
        start_time: rosbag2_rs_interfaces::builtin_interfaces::Time::from_nanos(2 * S),
        post_trigger_seconds: 2.0,
        ..Default::default()
    };
    let r = trigger.call(&request, T).unwrap();
    assert!(r.success, "{}", r.message);
    assert!(r.message.contains("crash"), "{}", r.message);
    // The same name again is refused while the first is pending or written.
    let again = trigger.call(&request, T).unwrap();
    assert!(again.success, "not created yet: {}", again.message);
    for i in 6..=8 {
        clock.set(i * S);
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
        b.publish(&string_msg(&format!("b{i}"))).unwrap();
    }
    let bag = dir.path().join("crash");
    wait_for_bag(&bag);
    let messages = read_bag(&bag);
    assert_eq!(
        payloads_on(&messages, "/a"),
        ["a2", "a3", "a4", "a5", "a6", "a7"].map(string_msg),
        "window from 2 s, tail to 7 s"
    );
    assert!(
        metadata(&bag).topic("/b").is_none(),
        "only the topics asked for"
    );
    // /b stayed buffered; /a keeps what came after the tail.
    let rest = read_bag(&recorder.snapshot().unwrap().unwrap());
    assert_eq!(
        payloads_on(&rest, "/b"),
        (1..=8)
            .map(|i| string_msg(&format!("b{i}")))
            .collect::<Vec<_>>()
    );
    // The second "crash" request found the directory taken by the first one when its tail
    // ended: it failed, and said so in the summary.
    let summary = recorder.stop().unwrap();
    assert_eq!(
        summary.failed_snapshots.len(),
        1,
        "{:?}",
        summary.failed_snapshots
    );
    assert_eq!(payloads_on(&rest, "/a"), [string_msg("a8")]);
    let r = trigger.call(&TriggerSnapshotRequest::default(), T);
    assert!(r.is_err(), "services are gone after stop");
}

/// A post-trigger tail longer than the buffers' duration keeps all its messages: they are held
/// from time eviction until the tail ends (the messages before the trigger follow the window).
#[test]
fn a_tail_longer_than_the_buffer_duration_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", STRING);
    let b = publisher(&talker, "/b", STRING);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(0, S));
    let publish = |i: i64| {
        clock.set(i * S);
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
        b.publish(&string_msg(&format!("b{i}"))).unwrap();
    };
    for i in 1..=3 {
        publish(i);
    }
    let request = SnapshotTrigger {
        filename: Some("long".into()),
        topics: vec!["/a".into()],
        post_trigger_ns: 3 * S,
        ..Default::default()
    };
    recorder.trigger_snapshot(&request).unwrap();
    for i in 4..=7 {
        publish(i);
    }
    let bag = dir.path().join("long");
    wait_for_bag(&bag);
    assert_eq!(
        payloads_on(&read_bag(&bag), "/a"),
        ["a2", "a3", "a4", "a5", "a6"].map(string_msg),
        "the window's 1 s before the trigger at 3 s, then the whole 3 s tail"
    );
    // Once the tail is over, time eviction applies again to every topic.
    publish(9);
    let rest = read_bag(&recorder.snapshot().unwrap().unwrap());
    assert_eq!(payloads_on(&rest, "/a"), [string_msg("a9")]);
    assert_eq!(payloads_on(&rest, "/b"), [string_msg("b9")]);
    recorder.stop().unwrap();
}

/// A snapshot's metadata carries the recording's counts at the trigger: here a silence.
#[test]
fn a_snapshot_carries_the_silences_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", STRING);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(0, 100 * S));
    for i in 0..20 {
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
        clock.advance(S / 10);
    }
    clock.advance(5 * S);
    let summary = wait_for_summary(&recorder, |s| s.topics[0].silences > 0);
    assert_eq!(summary.topics[0].silences, 1);
    let bag = recorder.snapshot().unwrap().unwrap();
    let key = format!("{SILENCES_KEY}/a");
    assert_eq!(
        metadata(&bag).custom_data.get(&key).map(String::as_str),
        Some("1")
    );
    recorder.stop().unwrap();
}

/// A window with a stop time, and a trigger refused for an existing file name.
#[test]
fn trigger_window_stop_and_existing_name() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", STRING);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(0, 100 * S));
    for i in 1..=5 {
        clock.set(i * S);
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
    }
    std::fs::create_dir(dir.path().join("taken")).unwrap();
    let refused = recorder.trigger_snapshot(&SnapshotTrigger {
        filename: Some("taken".into()),
        ..Default::default()
    });
    assert!(refused
        .err()
        .unwrap()
        .to_string()
        .contains("already exists"));
    assert_eq!(recorder.snapshot_occupancy().unwrap().0, 5, "kept");
    let done = recorder
        .trigger_snapshot(&SnapshotTrigger {
            filename: Some(dir.path().join("window")),
            start_time: Some(2 * S),
            stop_time: Some(3 * S),
            ..Default::default()
        })
        .unwrap()
        .unwrap();
    let bag = done.recv().unwrap().unwrap();
    assert_eq!(
        payloads_on(&read_bag(&bag), "/a"),
        ["a2", "a3"].map(string_msg)
    );
    let bad = recorder.trigger_snapshot(&SnapshotTrigger {
        start_time: Some(3 * S),
        stop_time: Some(2 * S),
        ..Default::default()
    });
    assert!(bad.is_err());
    recorder.stop().unwrap();
}

/// Pausing stops buffering until resume or a trigger.
#[test]
fn pause_lasts_until_a_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", STRING);
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(1 << 20, 0));
    let cli = bus.node("cli", "/").unwrap();
    let pause = Client::<Pause>::new(&cli, "/rosbag2_recorder/snapshot/pause").unwrap();
    let snapshot = Client::<Snapshot>::new(&cli, "/rosbag2_recorder/snapshot").unwrap();
    p.publish(&string_msg("before")).unwrap();
    pause.call(&PauseRequest::default(), T).unwrap();
    p.publish(&string_msg("paused")).unwrap();
    assert!(
        snapshot
            .call(&SnapshotRequest::default(), T)
            .unwrap()
            .success
    );
    assert!(!recorder.is_paused(), "the trigger ended the pause");
    p.publish(&string_msg("after")).unwrap();
    // Paused with empty buffers: a trigger writes nothing but still ends the pause.
    recorder.clear_snapshot_buffer().unwrap();
    recorder.pause();
    assert!(
        !snapshot
            .call(&SnapshotRequest::default(), T)
            .unwrap()
            .success
    );
    assert!(!recorder.is_paused());
    p.publish(&string_msg("last")).unwrap();
    let summary = recorder.stop().unwrap();
    let all = read_all(&summary.snapshots);
    assert_eq!(payloads_on(&all, "/t"), ["before", "last"].map(string_msg));
}

/// A transient-local topic's latest message is in every snapshot, at its original time, even
/// once older than the window or written by an earlier snapshot.
#[test]
fn snapshots_keep_the_latched_state() {
    for repeat in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (bus, clock) = virtual_bus();
        let talker = bus.node("talker", "/").unwrap();
        let tf = latched_publisher(&talker, "/tf_static");
        let a = publisher(&talker, "/a", STRING);
        clock.set(S);
        tf.publish(&string_msg("tf")).unwrap();
        let recorder = start(
            &bus,
            "rosbag2_recorder",
            RecordOptions {
                snapshot: Some(limits(0, 2 * S)),
                repeat_latched: repeat,
                ..options(dir.path().join("snap"), TopicSelection::all())
            },
        );
        let mut bags = Vec::new();
        for round in 0..2 {
            for i in 1..=10 {
                clock.set((round * 10 + i) * S);
                a.publish(&string_msg(&format!("a{i}"))).unwrap();
            }
            bags.push(recorder.snapshot().unwrap().unwrap());
        }
        recorder.stop().unwrap();
        for bag in &bags {
            let messages = read_bag(bag);
            let tf: Vec<i64> = messages
                .iter()
                .filter(|m| &*m.topic == "/tf_static")
                .map(|m| m.recv_timestamp)
                .collect();
            if repeat {
                assert_eq!(tf, [S], "{}", bag.display());
                assert_eq!(&*messages[0].topic, "/tf_static", "first in the bag");
            } else {
                assert!(tf.is_empty());
            }
            assert_eq!(payloads_on(&messages, "/a").len(), 3);
        }
    }
}

/// A recorder of every topic in rosbag2's snapshot mode: a ring of `max_cache_size` bytes and
/// `max_cache_duration` ns (0: no bound), at most `max_files` files kept (0: all).
fn ring_recorder(
    bus: &InProcessBus,
    bag: &std::path::Path,
    max_cache_size: u64,
    max_cache_duration: i64,
    max_files: u64,
) -> Recorder {
    let options = RecordOptions {
        snapshot_files: true,
        max_cache_size,
        max_cache_duration,
        retention: Retention {
            max_files,
            ..Default::default()
        },
        ..options(bag.to_path_buf(), TopicSelection::all())
    };
    start(bus, "rosbag2_recorder", options)
}

/// The closed files of `bag`, in order (the one being written left out).
fn closed_files(bag: &std::path::Path) -> Vec<PathBuf> {
    let meta = metadata(bag);
    meta.files.iter().map(|f| bag.join(&f.path)).collect()
}

/// rosbag2's snapshot mode: one ring of every topic's messages bounded by the cache's bytes,
/// each snapshot written into the bag's current file before the next one starts, the last
/// `max_bag_files` kept; a transient-local message evicted unwritten heads the next snapshot,
/// and what is buffered at the stop is written too.
#[test]
fn rosbag2_snapshot_mode_writes_each_snapshot_into_the_next_file_of_one_bag() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let tf = latched_publisher(&talker, "/tf_static");
    let a = publisher(&talker, "/a", INT32);
    let b = publisher(&talker, "/b", INT32);
    clock.set(S);
    tf.publish(&string_msg("tf")).unwrap();
    let bag = dir.path().join("bag");
    // Room for three 100-byte messages, whatever their topics; two files kept.
    let recorder = ring_recorder(&bus, &bag, 3 * message_cost(100) + 50, 0, 2);
    let mut sent_a = Vec::new();
    for i in 0..5 {
        clock.set((2 + i) * S);
        sent_a.push(payload(100, i as u64));
        a.publish(sent_a.last().unwrap()).unwrap();
    }
    clock.set(7 * S);
    b.publish(&payload(100, 99)).unwrap();
    assert_eq!(recorder.snapshot().unwrap(), Some(bag.clone()));
    let first_file = closed_files(&bag)[0].clone();
    let first = read_all(std::slice::from_ref(&first_file));
    assert_eq!(
        &*first[0].topic, "/tf_static",
        "the evicted latched state first"
    );
    assert_eq!(first[0].recv_timestamp, S, "at its own time");
    assert_eq!(
        payloads_on(&first, "/a"),
        sent_a[3..],
        "the newest, whatever the topic"
    );
    assert_eq!(payloads_on(&first, "/b").len(), 1);
    assert_eq!(first.len(), 4);
    // Nothing buffered since: no new file.
    assert_eq!(recorder.snapshot().unwrap(), None);
    clock.set(8 * S);
    a.publish(&payload(100, 5)).unwrap();
    assert!(recorder.snapshot().unwrap().is_some());
    clock.set(9 * S);
    a.publish(&payload(100, 6)).unwrap();
    let summary = recorder.stop().unwrap();
    let files = closed_files(&bag);
    assert_eq!(
        files.len(),
        2,
        "--max-bag-files 2: the first snapshot deleted"
    );
    assert!(!first_file.exists() && !files.contains(&first_file));
    for (file, (seed, at)) in files.iter().zip([(5, 8 * S), (6, 9 * S)]) {
        let messages = read_all(std::slice::from_ref(file));
        assert_eq!(&*messages[0].topic, "/tf_static", "{}", file.display());
        assert_eq!(payloads_on(&messages, "/a"), [payload(100, seed)]);
        assert_eq!(messages.last().unwrap().recv_timestamp, at);
    }
    let a = summary.topics.iter().find(|t| t.topic == "/a").unwrap();
    // Written: what the bag keeps (not the deleted first snapshot's two).
    assert_eq!((a.received, a.written, a.evicted, a.dropped), (7, 2, 3, 0));
}

/// rosbag2's snapshot mode bounded by time: the ring spans at most `max_cache_duration` of
/// receive time back from its newest message, over every topic.
#[test]
fn rosbag2_snapshot_mode_keeps_the_last_cache_duration_of_every_topic() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", STRING);
    let b = publisher(&talker, "/b", STRING);
    let bag = dir.path().join("bag");
    let recorder = ring_recorder(&bus, &bag, 0, 2 * S, 0);
    for i in 1..=10 {
        clock.set(i * S);
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
        if i == 1 {
            b.publish(&string_msg("b1")).unwrap();
        }
    }
    recorder.snapshot().unwrap().unwrap();
    let times: Vec<i64> = read_all(&closed_files(&bag)[..1])
        .iter()
        .map(|m| m.recv_timestamp / S)
        .collect();
    assert_eq!(times, [8, 9, 10], "the quiet /b evicted with the old /a");
    recorder.stop().unwrap();
}
