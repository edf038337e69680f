//! The snapshot mode on the in-process backend: per-topic limits by bytes and by
//! duration, new bag per trigger, no loss while messages keep arriving, runtime
//! reconfiguration, pause/resume, save on shutdown, empty buffers.

mod recorder_support;

use std::path::PathBuf;
use std::time::Duration;

use recorder_support::*;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::*;
use rosbag2_rs_transport::cli::RecordArgs;
use rosbag2_rs_transport::Client;
use rosbag2_rs_transport::InProcessBus;
use rosbag2_rs_transport::*;

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
    let recorder = snapshot_recorder(&bus, dir.path().join("snap"), limits(350, 0));
    let mut sent_a = Vec::new();
    for i in 0..10 {
        clock.advance(1_000);
        let data = payload(100, i);
        a.publish(&data).unwrap();
        sent_a.push(data);
    }
    b.publish(&payload(300, 99)).unwrap();
    b.publish(&payload(500, 98)).unwrap(); // alone over the limit: evicted too
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

#[test]
fn buffers_keep_the_newest_duration_per_topic() {
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
    // Newest minus oldest per topic: /a keeps 7, 8, 9; /b's window is its own.
    assert_eq!(times("/a"), [7, 8, 9]);
    assert_eq!(times("/b"), [0, 1]);
    assert_eq!(metadata(&bag).duration, 9_000_000_000);
    recorder.stop().unwrap();
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
    let memory = Client::<SetMemory>::new(&cli, "/rosbag2_recorder/snapshot/memory").unwrap();
    let duration = Client::<SetDuration>::new(&cli, "/rosbag2_recorder/snapshot/duration").unwrap();
    let clear =
        Client::<ClearBuffer>::new(&cli, "/rosbag2_recorder/snapshot/clear_buffer").unwrap();
    for i in 0..10 {
        clock.set(i * 1_000_000_000);
        p.publish(&payload(100, i as u64)).unwrap();
    }
    assert_eq!(recorder.snapshot_occupancy().unwrap().0, 10);
    // Shrinking the window trims at once.
    let r = duration
        .call(
            &SetDurationRequest {
                max_duration_seconds: 4.0,
            },
            T,
        )
        .unwrap();
    assert!(r.success, "{}", r.message);
    assert_eq!(recorder.snapshot_occupancy().unwrap(), (5, 500));
    let r = memory
        .call(
            &SetMemoryRequest {
                max_bytes_per_topic: 200,
            },
            T,
        )
        .unwrap();
    assert!(r.success, "{}", r.message);
    assert_eq!(recorder.snapshot_occupancy().unwrap(), (2, 200));
    // Both limits off: refused, nothing changes.
    let r = duration
        .call(
            &SetDurationRequest {
                max_duration_seconds: 0.0,
            },
            T,
        )
        .unwrap();
    assert!(r.success, "memory still limits: {}", r.message);
    let r = memory
        .call(
            &SetMemoryRequest {
                max_bytes_per_topic: 0,
            },
            T,
        )
        .unwrap();
    assert!(!r.success);
    assert!(!r.message.is_empty());
    let r = duration
        .call(
            &SetDurationRequest {
                max_duration_seconds: -1.0,
            },
            T,
        )
        .unwrap();
    assert!(!r.success);
    assert_eq!(recorder.snapshot_limits().unwrap(), limits(200, 0));
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

#[derive(clap::Parser)]
struct Args {
    #[command(flatten)]
    args: RecordArgs,
}

fn parse(args: &[&str]) -> anyhow::Result<RecordOptions> {
    use clap::Parser;
    let args = Args::try_parse_from(std::iter::once("record").chain(args.iter().copied()))?;
    args.args.to_options()
}

#[test]
fn command_line_limits_are_validated() {
    let o = parse(&["--snapshot", "-a", "-o", "x"]).unwrap();
    assert_eq!(
        o.snapshot,
        Some(limits(0, 10_000_000_000)),
        "seed default: 10 s"
    );
    let o = parse(&["--snapshot", "-a", "--max-buffer-size", "5000000"]).unwrap();
    assert_eq!(o.snapshot, Some(limits(5_000_000, 0)));
    let o = parse(&[
        "--snapshot-mode",
        "/a",
        "--max-buffer-size",
        "10",
        "--max-buffer-duration",
        "1.5",
    ])
    .unwrap();
    assert_eq!(o.snapshot, Some(limits(10, 1_500_000_000)));
    assert_eq!(o.selection.topics, ["/a"]);
    let err = |args: &[&str]| parse(args).err().unwrap().to_string();
    assert!(err(&[
        "--snapshot",
        "-a",
        "--max-buffer-size",
        "0",
        "--max-buffer-duration",
        "0"
    ])
    .contains("--max-buffer-size or --max-buffer-duration"));
    assert!(err(&["--snapshot", "-a", "--max-buffer-duration", "-1"]).contains("non-negative"));
    assert!(err(&["--snapshot", "-a", "--max-buffer-size", "-5"]).contains("-5"));
    assert!(err(&["-a", "--max-buffer-size", "5"]).contains("need --snapshot"));
    assert!(err(&["-o", "x"]).contains("nothing to record"));
    assert!(err(&["-a", "--custom-data", "novalue"]).contains("KEY=VALUE"));
    let o = parse(&[
        "-a",
        "--custom-data",
        "k=v",
        "-d",
        "2.5",
        "-b",
        "1000",
        "-s",
        "sqlite3",
    ])
    .unwrap();
    assert_eq!(o.custom_data["k"], "v");
    assert_eq!(
        (o.max_bagfile_duration, o.max_bagfile_size),
        (2_500_000_000, 1000)
    );
    assert_eq!(o.storage.storage, rosbag2_rs_storage::StorageId::Sqlite3);
    assert!(o.uri.to_str().unwrap().starts_with("rosbag2_"));
    assert!(err(&["-a", "-s", "nope"]).contains("nope"));
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().to_str().unwrap();
    assert!(err(&["-a", "-o", existing]).contains("already exists"));
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
