//! The recorder on the in-process backend: what it records, selection rules, QoS matching,
//! splitting, pause/resume, services, sim time and errors. Time is virtual; synchronisation with
//! the writer thread is by `flush`/`stop`.

use crate::recorder_support;

use std::sync::Arc;
use std::time::Duration;

use recorder_support::*;
use rosbag2_rs_interfaces::rosbag2_interfaces::msg::WriteSplitEvent;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::{from_cdr, MessageType};
use rosbag2_rs_storage::qos::{Durability, History, Reliability};
use rosbag2_rs_storage::{QosProfile, StorageError};
use rosbag2_rs_transport_lib::*;
use rosbag2_rs_transport_lib::{Client, Middleware};

const T: Duration = Duration::from_secs(5);

#[test]
fn records_every_message_with_its_bytes_times_qos_and_definition() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let chatter = publisher(&talker, "/chatter", STRING);
    let numbers = publisher(&talker, "/numbers", INT32);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            custom_data: [("who".to_string(), "test".to_string())].into(),
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    assert_eq!(recorder.topics(), ["/chatter", "/numbers"]);
    let mut sent = Vec::new();
    for i in 0..100i64 {
        clock.set(2_000_000_000 + i * 1_000);
        let data = string_msg(&format!("hello {i}"));
        chatter.publish_at(&data, 1_500_000_000 + i).unwrap();
        sent.push(data);
        numbers.publish(&payload(8, i as u64)).unwrap();
    }
    let summary = recorder.stop().unwrap();
    assert_eq!(summary.bag.as_deref(), Some(bag.as_path()));
    assert_eq!(summary.received(), 200);
    assert_eq!(summary.written(), 200);
    assert_eq!(summary.dropped(), 0);

    let messages = read_bag(&bag);
    assert_eq!(payloads_on(&messages, "/chatter"), sent);
    let first = messages.iter().find(|m| &*m.topic == "/chatter").unwrap();
    assert_eq!(
        (first.recv_timestamp, first.send_timestamp),
        (2_000_000_000, 1_500_000_000)
    );
    assert_eq!(payloads_on(&messages, "/numbers").len(), 100);

    let meta = metadata(&bag);
    assert_eq!(meta.message_count, 200);
    assert_eq!(meta.custom_data["who"], "test");
    let topic = &meta.topic("/chatter").unwrap().topic_metadata;
    assert_eq!(topic.type_name, STRING);
    assert_eq!(topic.offered_qos_profiles, vec![QosProfile::default()]);
    let file = rosbag2_rs_storage::storage::open_reader(
        &bag.join(&meta.relative_file_paths[0]),
        rosbag2_rs_storage::OpenMode::Strict,
    )
    .unwrap();
    let definition = file
        .message_definitions()
        .iter()
        .find(|d| d.topic_type == STRING)
        .unwrap();
    assert_eq!(definition.encoding, "ros2msg");
    assert!(definition
        .encoded_message_definition
        .contains("string data"));
}

#[test]
fn selection_follows_ros2_bag_record_rules() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let _a = publisher(&talker, "/a", STRING);
    let _b = publisher(&talker, "/cam/image", INT32);
    let _c = publisher(&talker, "/cam/debug", INT32);
    let _hidden = publisher(&talker, "/_hidden", STRING);
    let _nested = publisher(&talker, "/ns/_private/x", STRING);
    let _multi1 = publisher(&talker, "/multi", STRING);
    let _multi2 = publisher(&talker, "/multi", INT32);
    let (_store, cb) = (
        (),
        Box::new(|_| {}) as rosbag2_rs_transport_lib::MessageCallback,
    );
    let _unpublished = talker
        .create_subscription("/wanted", STRING, &QosProfile::default(), cb)
        .unwrap();

    let mut n = 0;
    let mut topics = |selection: TopicSelection| {
        n += 1;
        let recorder = Recorder::start(
            Arc::new(bus.node(&format!("rec{n}"), "/").unwrap()),
            RecordOptions {
                discovery: false,
                ..options(dir.path().join(format!("bag{n}")), selection)
            },
        )
        .unwrap();
        let topics = recorder.topics();
        recorder.stop().unwrap();
        topics
    };
    // --all: no hidden, no unpublished, no topic with several types.
    assert_eq!(
        topics(TopicSelection::all()),
        ["/a", "/cam/debug", "/cam/image"]
    );
    assert_eq!(
        topics(TopicSelection {
            include_hidden_topics: true,
            include_unpublished_topics: true,
            ..TopicSelection::all()
        }),
        [
            "/_hidden",
            "/a",
            "/cam/debug",
            "/cam/image",
            "/ns/_private/x",
            "/wanted"
        ]
    );
    // A listed hidden topic too needs --include-hidden-topics, as in rosbag2; relative names
    // are expanded.
    assert_eq!(
        topics(TopicSelection::topics(["a", "/_hidden", "/missing"])),
        ["/a"]
    );
    assert_eq!(
        topics(TopicSelection {
            include_hidden_topics: true,
            ..TopicSelection::topics(["a", "/_hidden", "/missing"])
        }),
        ["/_hidden", "/a"]
    );
    // Regexes search the name, as `ros2 bag record -e`; exclusion wins.
    assert_eq!(
        topics(TopicSelection {
            regex: Some("/cam/.*".into()),
            exclude_topics: vec!["/cam/debug".into()],
            ..TopicSelection::default()
        }),
        ["/cam/image"]
    );
    assert_eq!(
        topics(TopicSelection {
            regex: Some("cam".into()),
            exclude_regex: Some("debug".into()),
            ..TopicSelection::default()
        }),
        ["/cam/image"]
    );
    assert_eq!(
        topics(TopicSelection {
            topic_types: vec![INT32.into()],
            exclude_regex: Some(".*debug".into()),
            ..TopicSelection::default()
        }),
        ["/cam/image"]
    );
    // Nothing selected, or a bad regex: a clear error.
    let bad = |selection: TopicSelection| {
        Recorder::start(
            Arc::new(bus.node("bad", "/").unwrap()),
            options(dir.path().join("bad"), selection),
        )
        .err()
        .unwrap()
        .to_string()
    };
    assert!(bad(TopicSelection::default()).contains("nothing to record"));
    assert!(bad(TopicSelection {
        regex: Some("(".into()),
        ..TopicSelection::default()
    })
    .contains("regex"));
    assert!(!dir.path().join("bad").exists());
}

#[test]
fn qos_request_adapts_to_the_offers() {
    let reliable = QosProfile::default();
    let best_effort = QosProfile {
        reliability: Reliability::BestEffort,
        ..reliable
    };
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        depth: 500,
        ..reliable
    };
    let adapt = |offers: &[QosProfile]| adapt_request_to_offers("/t", offers);
    let r = adapt(&[reliable, reliable]);
    assert_eq!(
        (r.reliability, r.durability, r.history),
        (
            Reliability::Reliable,
            Durability::Volatile,
            History::KeepAll
        )
    );
    assert_eq!(adapt(&[best_effort]).history, History::KeepLast);
    assert!(adapt(&[best_effort]).depth >= 100);
    assert_eq!(
        adapt(&[reliable, best_effort]).reliability,
        Reliability::BestEffort
    );
    assert_eq!(adapt(&[best_effort]).reliability, Reliability::BestEffort);
    let l = adapt(&[latched]);
    assert_eq!((l.durability, l.depth), (Durability::TransientLocal, 500));
    assert_eq!(adapt(&[latched, reliable]).durability, Durability::Volatile);
}

#[test]
fn recorder_receives_best_effort_and_latched_topics_and_honours_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let best_effort = QosProfile {
        reliability: Reliability::BestEffort,
        ..QosProfile::default()
    };
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        depth: 2,
        ..QosProfile::default()
    };
    let be = talker
        .create_publisher("/be", STRING, &best_effort)
        .unwrap();
    let tl = talker
        .create_publisher("/latched", STRING, &latched)
        .unwrap();
    let forced = talker
        .create_publisher("/forced", STRING, &best_effort)
        .unwrap();
    for i in 0..3 {
        tl.publish(&string_msg(&format!("latched {i}"))).unwrap();
    }
    let bag = dir.path().join("bag");
    // The override requests reliable on a best-effort topic: DDS matching then fails.
    let recorder = start(
        &bus,
        "rec",
        RecordOptions {
            qos_overrides: [("/forced".to_string(), QosProfile::default())].into(),
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    be.publish(&string_msg("be")).unwrap();
    forced.publish(&string_msg("lost")).unwrap();
    let summary = recorder.stop().unwrap();
    let messages = read_bag(&bag);
    assert_eq!(payloads_on(&messages, "/be"), [string_msg("be")]);
    assert_eq!(
        payloads_on(&messages, "/latched"),
        [string_msg("latched 1"), string_msg("latched 2")],
        "the last `depth` latched messages reach the late recorder"
    );
    assert!(payloads_on(&messages, "/forced").is_empty());
    assert_eq!(summary.written(), 3);
    let meta = metadata(&bag);
    assert_eq!(
        meta.topic("/latched")
            .unwrap()
            .topic_metadata
            .offered_qos_profiles,
        [latched]
    );
}

#[test]
fn topics_appearing_later_are_discovered_unless_discovery_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let with = start(
        &bus,
        "with",
        options(dir.path().join("with"), TopicSelection::all()),
    );
    let without = start(
        &bus,
        "without",
        RecordOptions {
            discovery: false,
            ..options(dir.path().join("without"), TopicSelection::all())
        },
    );
    let late = publisher(&talker, "/late", STRING);
    // The graph event wakes the discovery thread; wait for its subscription (bounded).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while with.topics().is_empty() {
        assert!(std::time::Instant::now() < deadline, "not discovered");
        std::thread::sleep(Duration::from_millis(5));
    }
    late.publish(&string_msg("x")).unwrap();
    assert!(without.topics().is_empty());
    assert_eq!(with.stop().unwrap().written(), 1);
    assert_eq!(without.stop().unwrap().written(), 0);
    assert!(read_bag(&dir.path().join("without")).is_empty());
}

#[test]
fn splits_by_size_with_correct_metadata_for_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/big", INT32);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rec",
        RecordOptions {
            max_bagfile_size: 1_000_000,
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    let mut sent = Vec::new();
    for i in 0..40 {
        clock.advance(10_000_000);
        let data = payload(100_000, i);
        p.publish(&data).unwrap();
        sent.push(data);
    }
    recorder.stop().unwrap();
    let meta = metadata(&bag);
    assert!(meta.files.len() >= 3, "{} files", meta.files.len());
    check_files(&bag, &meta);
    assert_eq!(payloads_on(&read_bag(&bag), "/big"), sent);
}

/// Every file's metadata matches its content, and the totals add up.
fn check_files(bag: &std::path::Path, meta: &rosbag2_rs_storage::BagMetadata) {
    assert_eq!(meta.relative_file_paths.len(), meta.files.len());
    let mut total = 0;
    for file in &meta.files {
        let messages = read_all(&[bag.join(&file.path)]);
        assert_eq!(messages.len() as u64, file.message_count, "{}", file.path);
        if messages.is_empty() {
            continue; // a file opened by a split just before the bag was closed
        }
        let first = messages.first().unwrap().recv_timestamp;
        let last = messages.last().unwrap().recv_timestamp;
        assert_eq!(file.starting_time, first, "{}", file.path);
        assert_eq!(file.duration, last - first, "{}", file.path);
        total += file.message_count;
    }
    assert_eq!(total, meta.message_count);
    assert_eq!(meta.starting_time, meta.files[0].starting_time);
}

#[test]
fn splits_by_duration_and_on_the_service_and_announces_each_split() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", STRING);
    let (events, cb) = {
        let store = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = store.clone();
        let cb: rosbag2_rs_transport_lib::MessageCallback =
            Box::new(move |m| sink.lock().unwrap().push(m.data));
        (store, cb)
    };
    let _events = talker
        .create_subscription(
            "/events/write_split",
            WriteSplitEvent::TYPE_NAME,
            &QosProfile::default(),
            cb,
        )
        .unwrap();
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            max_bagfile_duration: 2_500_000_000,
            ..options(bag.clone(), TopicSelection::topics(["/t"]))
        },
    );
    // 0..=9 s: files [0,1,2], [3,4,5], [6,7,8], then the service splits before 9.
    for i in 0..9 {
        clock.set(10_000_000_000 + i * 1_000_000_000);
        p.publish(&string_msg(&i.to_string())).unwrap();
    }
    let split = Client::<SplitBagfile>::new(
        &bus.node("cli", "/").unwrap(),
        "/rosbag2_recorder/split_bagfile",
    )
    .unwrap();
    split.call(&SplitBagfileRequest::default(), T).unwrap();
    recorder.flush().unwrap(); // commands run in order: the split is done
    clock.set(19_000_000_000);
    p.publish(&string_msg("9")).unwrap();
    recorder.split().unwrap();
    recorder.stop().unwrap();

    let meta = metadata(&bag);
    let counts: Vec<u64> = meta.files.iter().map(|f| f.message_count).collect();
    assert_eq!(counts, [3, 3, 3, 1, 0]);
    check_files(&bag, &meta);
    let events: Vec<WriteSplitEvent> = events
        .lock()
        .unwrap()
        .iter()
        .map(|d| from_cdr(d).unwrap())
        .collect();
    assert_eq!(events.len(), 4);
    // Files named as rosbag2 Lyrical names them: `{index}_{prefix}_{local time}.mcap`.
    let named = |path: &str, index: usize| {
        let name = std::path::Path::new(path)
            .file_name()
            .unwrap()
            .to_string_lossy();
        name.starts_with(&format!("{index}_bag_")) && name.ends_with(".mcap")
    };
    for (i, e) in events.iter().enumerate() {
        assert!(named(&e.closed_file, i), "{e:?}");
        assert!(named(&e.opened_file, i + 1), "{e:?}");
        assert_eq!(e.node_name, "/rosbag2_recorder");
    }
}

#[test]
fn pause_and_resume_by_method_service_and_start_paused() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", STRING);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            start_paused: true,
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    let cli = bus.node("cli", "/").unwrap();
    let is_paused = Client::<IsPaused>::new(&cli, "/rosbag2_recorder/is_paused").unwrap();
    let pause = Client::<Pause>::new(&cli, "/rosbag2_recorder/pause").unwrap();
    let resume = Client::<Resume>::new(&cli, "/rosbag2_recorder/resume").unwrap();
    assert!(
        is_paused
            .call(&IsPausedRequest::default(), T)
            .unwrap()
            .paused
    );
    p.publish(&string_msg("paused 1")).unwrap();
    resume.call(&ResumeRequest::default(), T).unwrap();
    assert!(!recorder.is_paused());
    p.publish(&string_msg("kept 1")).unwrap();
    pause.call(&PauseRequest::default(), T).unwrap();
    p.publish(&string_msg("paused 2")).unwrap();
    recorder.resume();
    assert!(
        !is_paused
            .call(&IsPausedRequest::default(), T)
            .unwrap()
            .paused
    );
    p.publish(&string_msg("kept 2")).unwrap();
    recorder.pause();
    p.publish(&string_msg("paused 3")).unwrap();
    let summary = recorder.stop().unwrap();
    assert_eq!(
        payloads_on(&read_bag(&bag), "/t"),
        [string_msg("kept 1"), string_msg("kept 2")]
    );
    assert_eq!((summary.received(), summary.written()), (2, 2));
}

#[test]
fn sim_time_stamps_messages_with_the_clock_topic() {
    let SimTimeRecording {
        clock,
        t: p,
        clock_pub,
        bag,
        recorder,
        _dir,
        _bus,
        _talker,
        ..
    } = sim_time_recording(None);
    clock.set(555); // the receive time is not used
                    // Before the first /clock: held, then recorded at its time, in order.
    p.publish(&string_msg("early 1")).unwrap();
    p.publish(&string_msg("early 2")).unwrap();
    clock_pub.publish(&clock_msg(100, 5)).unwrap();
    p.publish(&string_msg("a")).unwrap();
    clock_pub.publish(&clock_msg(200, 0)).unwrap();
    p.publish(&string_msg("b")).unwrap();
    let summary = recorder.stop().unwrap();
    let bag = read_bag(&bag);
    let times: Vec<(i64, i64)> = bag
        .iter()
        .map(|m| (m.recv_timestamp, m.send_timestamp))
        .collect();
    let (t1, t2) = (100_000_000_005, 200_000_000_000);
    assert_eq!(times, [(t1, t1), (t1, t1), (t1, t1), (t2, t2)]);
    assert_eq!(
        payloads_on(&bag, "/t"),
        ["early 1", "early 2", "a", "b"].map(string_msg)
    );
    assert_eq!(summary.topics[0].dropped_before_clock, 0);
}

#[test]
fn sim_time_never_records_wall_time_what_no_clock_stamped_is_counted() {
    // Room for two of the three messages held before /clock.
    let SimTimeRecording {
        t: p,
        bag,
        recorder,
        _dir,
        _bus,
        _talker,
        ..
    } = sim_time_recording(Some(2 * string_msg("12345678").len() as u64));
    for _ in 0..3 {
        p.publish(&string_msg("12345678")).unwrap();
    }
    let summary = recorder.stop().unwrap();
    assert!(read_bag(&bag).is_empty());
    let t = &summary.topics[0];
    assert_eq!((t.received, t.written, t.dropped_before_clock), (0, 0, 3));
    assert!(
        summary
            .to_text()
            .contains("not recorded before the first /clock 3"),
        "{}",
        summary.to_text()
    );
}

#[test]
fn existing_or_unwritable_output_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let existing = dir.path().join("existing");
    std::fs::create_dir(&existing).unwrap();
    std::fs::write(existing.join("keep"), "data").unwrap();
    let err = Recorder::start(
        Arc::new(bus.node("a", "/").unwrap()),
        options(existing.clone(), TopicSelection::all()),
    )
    .err()
    .unwrap();
    assert!(
        matches!(err, RecorderError::Storage(StorageError::AlreadyExists(_))),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(existing.join("keep")).unwrap(),
        "data"
    );
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let err = Recorder::start(
        Arc::new(bus.node("b", "/").unwrap()),
        options(file.join("bag"), TopicSelection::all()),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("file"), "{err}");
    let err = Recorder::start(
        Arc::new(bus.node("c", "/").unwrap()),
        RecordOptions {
            max_bagfile_duration: -1,
            ..options(dir.path().join("neg"), TopicSelection::all())
        },
    )
    .err()
    .unwrap();
    assert!(matches!(err, RecorderError::InvalidOptions(_)), "{err}");
}

#[test]
fn snapshot_operations_are_refused_in_normal_mode_and_split_in_snapshot_mode() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let recorder = start(
        &bus,
        "n",
        options(dir.path().join("n"), TopicSelection::all()),
    );
    assert!(matches!(
        recorder.snapshot(),
        Err(RecorderError::NotAvailable(_))
    ));
    assert!(recorder.clear_snapshot_buffer().is_err());
    let cli = bus.node("cli", "/").unwrap();
    let snapshot = Client::<Snapshot>::new(&cli, "/n/snapshot").unwrap();
    assert!(
        !snapshot
            .call(&SnapshotRequest::default(), T)
            .unwrap()
            .success
    );
    recorder.stop().unwrap();
    let recorder = start(
        &bus,
        "s",
        RecordOptions {
            snapshot: Some(SnapshotLimits::default()),
            ..options(dir.path().join("s"), TopicSelection::all())
        },
    );
    assert!(matches!(
        recorder.split(),
        Err(RecorderError::NotAvailable(_))
    ));
    recorder.stop().unwrap();
}

/// QoS overrides reach the recorder's own event topics too, as in rosbag2 Lyrical
/// (`events/write_split`, `events/rosbag2_messages_lost`; ros2/rosbag2#2286).
#[test]
fn qos_overrides_apply_to_the_recorders_event_topics() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let _a = publisher(&talker, "/a", STRING);
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        depth: 5,
        ..QosProfile::default()
    };
    let recorder = start(
        &bus,
        "rec",
        RecordOptions {
            qos_overrides: [
                ("/events/write_split".to_string(), latched),
                ("events/rosbag2_messages_lost".to_string(), latched),
            ]
            .into(),
            ..options(dir.path().join("bag"), TopicSelection::all())
        },
    );
    let offered = |topic: &str| {
        talker
            .topics()
            .into_iter()
            .find(|t| t.name == topic)
            .map(|t| t.publishers.iter().map(|p| p.qos).collect::<Vec<_>>())
    };
    assert_eq!(offered("/events/write_split"), Some(vec![latched]));
    assert_eq!(
        offered("/events/rosbag2_messages_lost"),
        Some(vec![latched])
    );
    recorder.stop().unwrap();
}

/// rosbag2's `storage.start_time_ns` / `storage.end_time_ns` (the writer leaves out what was
/// received outside them): recorded are the messages received from the start to the end,
/// both included, and the others are not counted as received.
#[test]
fn only_messages_received_within_the_time_window_are_recorded() {
    const SEC: i64 = 1_000_000_000;
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", STRING);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rec",
        RecordOptions {
            start_time_ns: Some(12 * SEC),
            end_time_ns: Some(14 * SEC),
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    for s in 10..17 {
        clock.set(s * SEC);
        a.publish(&string_msg(&format!("{s}"))).unwrap();
    }
    let summary = recorder.stop().unwrap();
    let messages = read_bag(&bag);
    let times: Vec<i64> = messages.iter().map(|m| m.recv_timestamp / SEC).collect();
    assert_eq!(times, [12, 13, 14]);
    assert_eq!(summary.written(), 3);
}
