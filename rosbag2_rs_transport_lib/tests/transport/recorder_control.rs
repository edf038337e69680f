//! rosbag2 Lyrical's and Rolling's recorder control on the in-process backend: `stop` and
//! `record` again, discovery on and off, `is_recording` and `get_uri`, and splits and resumes
//! scheduled for a time. Time is virtual; messages carry their publish times.

use crate::recorder_support;

use std::path::Path;
use std::time::Duration;

use recorder_support::*;
use rosbag2_rs_interfaces::builtin_interfaces::Time;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::{
    GetSubscribedTopics, GetUri, IsRecording, SubscribeToTopics, SubscribeToTopicsRequest,
};
use rosbag2_rs_interfaces::ServiceType;
use rosbag2_rs_transport_lib::*;

const T: Duration = Duration::from_secs(5);
const SEC: i64 = 1_000_000_000;

/// Calls `service` of the recorder `/rosbag2_recorder` (or `node`).
fn call<S: ServiceType>(bus: &InProcessBus, service: &str, request: S::Request) -> S::Response {
    let cli = bus.node("cli", "/").unwrap();
    Client::<S>::new(&cli, &format!("/rosbag2_recorder/{service}"))
        .unwrap()
        .call(&request, T)
        .unwrap()
}

/// The text of every `/t` message of each file of `bag`, file by file.
fn texts_by_file(bag: &Path) -> Vec<Vec<String>> {
    metadata(bag)
        .files
        .iter()
        .map(|f| {
            read_all(&[bag.join(&f.path)])
                .iter()
                .filter(|m| &*m.topic == "/t")
                .map(|m| String::from_utf8_lossy(&m.data[8..m.data.len() - 1]).into_owned())
                .collect()
        })
        .collect()
}

#[test]
fn stop_closes_the_bag_and_record_starts_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let p = publisher(&talker, "/t", STRING);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        options(bag.clone(), TopicSelection::all()),
    );
    let uri = |bus| call::<GetUri>(bus, "get_uri", Default::default()).uri;
    assert_eq!(uri(&bus), bag.display().to_string());
    p.publish(&string_msg("a")).unwrap();
    p.publish(&string_msg("b")).unwrap();

    assert_eq!(
        call::<Stop>(&bus, "stop", Default::default()),
        StopResponse::default()
    );
    // The bag is closed and complete while the recorder stays up.
    assert_eq!(texts_by_file(&bag), [["a", "b"]]);
    assert!(!call::<IsRecording>(&bus, "is_recording", Default::default()).recording);
    assert_eq!(uri(&bus), "");
    assert!(!recorder.is_discovery_running());
    p.publish(&string_msg("not recorded")).unwrap();
    let again = call::<Stop>(&bus, "stop", Default::default());
    assert_eq!(again.return_code, 1, "{again:?}");
    let split = call::<SplitBagfile>(&bus, "split_bagfile", Default::default());
    assert_eq!(
        split.return_code,
        SplitBagfileResponse::RETURN_CODE_NOT_RECORDING
    );

    // The same URI again: numbered, as rosbag2 does.
    let r = call::<Record>(&bus, "record", RecordRequest::default());
    assert_eq!(r, RecordResponse::default());
    let second = dir.path().join("bag(1)");
    assert_eq!(uri(&bus), second.display().to_string());
    assert!(recorder.is_discovery_running());
    assert_eq!(recorder.topics(), ["/t"]);
    p.publish(&string_msg("c")).unwrap();
    let busy = call::<Record>(&bus, "record", RecordRequest::default());
    assert_eq!(busy.return_code, 1, "{busy:?}");
    recorder.stop_recording().unwrap();

    // A URI of the caller's.
    let third = dir.path().join("third");
    recorder.record(third.to_str().unwrap()).unwrap();
    p.publish(&string_msg("d")).unwrap();
    let summary = recorder.stop().unwrap();
    assert_eq!(summary.bag.as_deref(), Some(third.as_path()));
    assert_eq!(summary.written(), 1);
    assert_eq!(texts_by_file(&second), [["c"]]);
    assert_eq!(texts_by_file(&third), [["d"]]);
    assert_eq!(
        texts_by_file(&bag),
        [["a", "b"]],
        "the first bag is untouched"
    );
}

#[test]
fn discovery_is_started_and_stopped_through_the_services() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        options(dir.path().join("bag"), TopicSelection::all()),
    );
    let running = |bus| call::<IsDiscoveryRunning>(bus, "is_discovery_running", Default::default());
    assert!(running(&bus).running);
    let already = call::<StartDiscovery>(&bus, "start_discovery", Default::default());
    assert_eq!(already.return_code, 1, "{already:?}");
    let stopped = call::<StopDiscovery>(&bus, "stop_discovery", Default::default());
    assert_eq!(stopped, StopDiscoveryResponse::default());
    assert!(!running(&bus).running);
    assert_eq!(
        call::<StopDiscovery>(&bus, "stop_discovery", Default::default()).return_code,
        1
    );
    let started = call::<StartDiscovery>(&bus, "start_discovery", Default::default());
    assert_eq!(started, StartDiscoveryResponse::default());
    assert!(recorder.is_discovery_running());

    // --no-discovery: off until asked; not while stopped.
    let (bus, _clock) = virtual_bus();
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            discovery: false,
            ..options(dir.path().join("quiet"), TopicSelection::all())
        },
    );
    assert!(!running(&bus).running);
    recorder.stop_recording().unwrap();
    let refused = call::<StartDiscovery>(&bus, "start_discovery", Default::default());
    assert_eq!(refused.return_code, 1, "not recording: {refused:?}");
    recorder.record("").unwrap();
    assert!(
        !recorder.is_discovery_running(),
        "record keeps --no-discovery"
    );
    recorder.set_discovery(true).unwrap();
    assert!(running(&bus).running);
}

#[test]
fn a_split_at_a_publish_time_falls_between_the_same_two_messages_in_every_recorder() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let t = publisher(&talker, "/t", STRING);
    let other = publisher(&talker, "/other", STRING);
    let bags: Vec<_> = (0..3)
        .map(|i| dir.path().join(format!("robot{i}")))
        .collect();
    let recorders: Vec<_> = bags
        .iter()
        .enumerate()
        .map(|(i, bag)| {
            start(
                &bus,
                &format!("recorder{i}"),
                options(bag.clone(), TopicSelection::all()),
            )
        })
        .collect();
    // The first through its service, the others through the library: at 5.5 s by publish
    // time, tracked on /t.
    let cli = bus.node("cli", "/").unwrap();
    let request = SplitBagfileRequest {
        split_time: Time::from_nanos(5 * SEC + SEC / 2),
        split_mode: time_mode::PUBLISH_TIME,
        tracking_topic_name: "t".into(),
    };
    let reply = Client::<SplitBagfile>::new(&cli, "/recorder0/split_bagfile")
        .unwrap()
        .call(&request, T)
        .unwrap();
    assert_eq!(reply, SplitBagfileResponse::default());
    for r in &recorders[1..] {
        r.schedule_split(Schedule {
            time_ns: 5 * SEC + SEC / 2,
            mode: TimeMode::Publish,
            topic: Some("/t".into()),
        })
        .unwrap();
    }
    // Receive times run ahead of publish times, and another topic reaches 5.5 s first: only
    // /t's publish time counts.
    other.publish_at(&string_msg("early"), 9 * SEC).unwrap();
    for i in 1..=9 {
        clock.set(100 * SEC + i * SEC);
        t.publish_at(&string_msg(&i.to_string()), i * SEC).unwrap();
    }
    for r in recorders {
        r.stop().unwrap();
    }
    for bag in &bags {
        assert_eq!(
            texts_by_file(bag),
            [vec!["1", "2", "3", "4", "5"], vec!["6", "7", "8", "9"]],
            "{}",
            bag.display()
        );
    }
}

#[test]
fn a_split_at_a_node_time_comes_before_the_first_message_received_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let t = publisher(&bus.node("talker", "/").unwrap(), "/t", STRING);
    let bag = dir.path().join("bag");
    clock.set(10 * SEC);
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        options(bag.clone(), TopicSelection::all()),
    );
    let invalid = call::<SplitBagfile>(
        &bus,
        "split_bagfile",
        SplitBagfileRequest {
            split_time: Time::from_nanos(12 * SEC),
            split_mode: 7,
            ..Default::default()
        },
    );
    assert_eq!(
        invalid.return_code,
        SplitBagfileResponse::RETURN_CODE_INVALID_SPLIT_MODE
    );
    let scheduled = call::<SplitBagfile>(
        &bus,
        "split_bagfile",
        SplitBagfileRequest {
            split_time: Time::from_nanos(12 * SEC),
            ..Default::default()
        },
    );
    assert_eq!(scheduled, SplitBagfileResponse::default());
    for i in 0..4 {
        clock.set(10 * SEC + i * SEC);
        t.publish(&string_msg(&i.to_string())).unwrap();
    }
    recorder.stop().unwrap();
    assert_eq!(texts_by_file(&bag), [vec!["0", "1"], vec!["2", "3"]]);
}

#[test]
fn a_resume_at_a_time_records_from_the_first_message_that_reaches_it() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let t = publisher(&talker, "/t", STRING);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            start_paused: true,
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    let invalid = call::<Resume>(
        &bus,
        "resume",
        ResumeRequest {
            resume_time: Time::from_nanos(3 * SEC),
            resume_mode: -1,
            ..Default::default()
        },
    );
    assert_eq!(
        invalid.return_code,
        ResumeResponse::RETURN_CODE_INVALID_RESUME_MODE
    );
    let scheduled = call::<Resume>(
        &bus,
        "resume",
        ResumeRequest {
            resume_time: Time::from_nanos(3 * SEC),
            resume_mode: time_mode::PUBLISH_TIME,
            tracking_topic_name: String::new(),
        },
    );
    assert_eq!(scheduled, ResumeResponse::default());
    assert!(recorder.is_paused());
    for i in 1..=5 {
        clock.set(50 * SEC + i * SEC);
        t.publish_at(&string_msg(&i.to_string()), i * SEC).unwrap();
    }
    assert!(!recorder.is_paused());

    // By the recorder's clock: a time already past resumes at once.
    recorder.pause();
    recorder
        .schedule_resume(Schedule {
            time_ns: 10 * SEC,
            mode: TimeMode::Node,
            topic: None,
        })
        .unwrap();
    assert!(!recorder.is_paused());
    recorder.stop().unwrap();
    assert_eq!(texts_by_file(&bag), [vec!["3", "4", "5"]]);
}

#[test]
fn a_record_from_a_time_starts_every_recorder_with_the_same_message() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    clock.set(10 * SEC);
    let talker = bus.node("talker", "/").unwrap();
    let t = publisher(&talker, "/t", STRING);
    let recorders: Vec<_> = (0..2)
        .map(|i| {
            let bag = dir.path().join(format!("first{i}"));
            start(
                &bus,
                &format!("recorder{i}"),
                options(bag, TopicSelection::all()),
            )
        })
        .collect();
    for r in &recorders {
        r.stop_recording().unwrap();
    }
    let bags: Vec<_> = (0..2)
        .map(|i| dir.path().join(format!("second{i}")))
        .collect();
    // The first through its service (rosbag2 Lyrical's `start_time`), the other through the
    // library: from 13 s by the recorders' clock.
    let cli = bus.node("cli", "/").unwrap();
    let request = RecordRequest {
        uri: bags[0].display().to_string(),
        start_time: Time::from_nanos(13 * SEC),
    };
    let reply = Client::<Record>::new(&cli, "/recorder0/record")
        .unwrap()
        .call(&request, T)
        .unwrap();
    assert_eq!(reply, RecordResponse::default());
    recorders[1]
        .record_from(&bags[1].display().to_string(), 13 * SEC)
        .unwrap();
    // Open, subscribed and waiting.
    for r in &recorders {
        assert!(r.is_recording() && r.is_paused());
        assert_eq!(r.topics(), ["/t"]);
    }
    for i in 1..=5 {
        clock.set(10 * SEC + i * SEC - SEC / 2);
        t.publish(&string_msg(&i.to_string())).unwrap();
    }
    for r in recorders {
        assert!(!r.is_paused());
        r.stop().unwrap();
    }
    for bag in &bags {
        assert_eq!(texts_by_file(bag), [vec!["4", "5"]], "{}", bag.display());
    }
}

#[test]
fn topics_are_added_at_run_time_whatever_the_selection() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let t = publisher(&talker, "/t", STRING);
    let other = publisher(&talker, "/other", STRING);
    let _a = publisher(&talker, "/two_types", STRING);
    let _b = publisher(&talker, "/two_types", INT32);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        options(bag.clone(), TopicSelection::topics(["/t"])),
    );
    other.publish(&string_msg("before")).unwrap();
    let reply = call::<SubscribeToTopics>(
        &bus,
        "subscribe_to_topics",
        SubscribeToTopicsRequest {
            topics: vec!["other".into(), "/missing".into(), "/two_types".into()],
            topic_types: Vec::new(),
        },
    );
    assert_eq!(reply.return_code, 0, "{reply:?}");
    assert_eq!(reply.subscribed_topics, ["/other"]);
    assert_eq!(reply.unavailable_topics, ["/missing", "/two_types"]);
    let listed = call::<GetSubscribedTopics>(&bus, "get_subscribed_topics", Default::default());
    assert_eq!(listed.topics, ["/other", "/t"]);
    // A type named picks one of several; a wrong one is refused.
    let (subscribed, _) = recorder
        .subscribe_to(&["/two_types".into()], &[INT32.into()])
        .unwrap();
    assert_eq!(subscribed, ["/two_types"]);
    let none = call::<SubscribeToTopics>(
        &bus,
        "subscribe_to_topics",
        SubscribeToTopicsRequest {
            topics: vec!["/missing".into()],
            topic_types: vec![STRING.into()],
        },
    );
    assert_eq!(none.return_code, 1, "{none:?}");
    let mismatched = call::<SubscribeToTopics>(
        &bus,
        "subscribe_to_topics",
        SubscribeToTopicsRequest {
            topics: vec!["/a".into(), "/b".into()],
            topic_types: vec![STRING.into()],
        },
    );
    assert_eq!(mismatched.return_code, 1, "{mismatched:?}");
    other.publish(&string_msg("after")).unwrap();
    t.publish(&string_msg("t")).unwrap();
    recorder.stop().unwrap();
    let messages = read_bag(&bag);
    assert_eq!(payloads_on(&messages, "/other"), [string_msg("after")]);
    assert_eq!(payloads_on(&messages, "/t"), [string_msg("t")]);
}

#[test]
fn what_a_starved_recorder_drops_is_published_on_the_lost_messages_topic() {
    use rosbag2_rs_interfaces::rosbag2_interfaces::msg::MessagesLostEvent;
    use rosbag2_rs_interfaces::{from_cdr, MessageType};
    // Sim time with no /clock yet: what does not fit the hold (room for two) is dropped.
    let SimTimeRecording {
        t,
        recorder,
        _dir,
        _bus: bus,
        _talker,
        ..
    } = sim_time_recording(Some(2 * string_msg("12345678").len() as u64));
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = events.clone();
    let listener = bus.node("listener", "/").unwrap();
    let _sub = listener
        .create_subscription(
            "/events/rosbag2_messages_lost",
            MessagesLostEvent::TYPE_NAME,
            &rosbag2_rs_storage::QosProfile::default(),
            Box::new(move |m| {
                sink.lock()
                    .unwrap()
                    .push(from_cdr::<MessagesLostEvent>(&m.data).unwrap())
            }),
        )
        .unwrap();
    let lost_in_events = || -> Vec<(String, u64, u64)> {
        let events = events.lock().unwrap();
        events
            .iter()
            .flat_map(|e| {
                assert_eq!(e.node_name, "/rec");
                e.messages_lost_statistics.iter().map(|s| {
                    (
                        s.topic_name.clone(),
                        s.messages_lost_in_transport,
                        s.messages_lost_in_recorder,
                    )
                })
            })
            .collect()
    };
    let wait_for = |n: usize| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while lost_in_events().len() < n && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    for _ in 0..3 {
        t.publish(&string_msg("12345678")).unwrap();
    }
    wait_for(1);
    assert_eq!(lost_in_events(), [("/t".to_string(), 0, 1)]);
    for _ in 0..2 {
        t.publish(&string_msg("12345678")).unwrap();
    }
    wait_for(2);
    assert_eq!(
        lost_in_events(),
        [("/t".to_string(), 0, 1), ("/t".to_string(), 0, 2)],
        "each event counts what was lost since the last"
    );
    drop(recorder);
}

#[test]
fn a_static_topic_is_recorded_before_it_is_on_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            discovery: false,
            selection: TopicSelection {
                static_topics: vec![("later".into(), STRING.into())],
                ..TopicSelection::default()
            },
            ..options(bag.clone(), TopicSelection::default())
        },
    );
    assert_eq!(
        recorder.topics(),
        ["/later"],
        "subscribed with no publisher"
    );
    let p = publisher(&bus.node("talker", "/").unwrap(), "/later", STRING);
    p.publish(&string_msg("hello")).unwrap();
    recorder.stop().unwrap();
    assert_eq!(texts_by_file(&bag.clone()).len(), 1);
    assert_eq!(
        payloads_on(&read_bag(&bag), "/later"),
        [string_msg("hello")]
    );
    assert_eq!(
        metadata(&bag)
            .topic("/later")
            .unwrap()
            .topic_metadata
            .type_name,
        STRING
    );
}

#[test]
fn recorders_told_one_resume_and_one_pause_time_record_the_same_messages() {
    use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::{PauseAt, PauseAtRequest};
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let t = publisher(&bus.node("talker", "/").unwrap(), "/t", STRING);
    clock.set(10 * SEC);
    let bags: Vec<_> = ["a", "b"].iter().map(|n| dir.path().join(n)).collect();
    let recorders: Vec<_> = ["rec_a", "rec_b"]
        .iter()
        .zip(&bags)
        .map(|(name, bag)| {
            start(
                &bus,
                name,
                RecordOptions {
                    start_paused: true,
                    ..options(bag.clone(), TopicSelection::all())
                },
            )
        })
        .collect();
    let cli = bus.node("cli", "/").unwrap();
    for name in ["rec_a", "rec_b"] {
        let resumed = Client::<Resume>::new(&cli, &format!("/{name}/resume"))
            .unwrap()
            .call(
                &ResumeRequest {
                    resume_time: Time::from_nanos(12 * SEC + SEC / 2),
                    ..Default::default()
                },
                T,
            )
            .unwrap();
        assert_eq!(resumed, ResumeResponse::default());
        let paused = Client::<PauseAt>::new(&cli, &format!("/{name}/pause_at"))
            .unwrap()
            .call(
                &PauseAtRequest {
                    pause_time: Time::from_nanos(16 * SEC + SEC / 2),
                },
                T,
            )
            .unwrap();
        assert!(paused.success);
    }
    for i in 10..20 {
        clock.set(i * SEC);
        t.publish(&string_msg(&i.to_string())).unwrap();
    }
    for recorder in recorders {
        assert!(recorder.is_paused());
        recorder.stop().unwrap();
    }
    for bag in &bags {
        assert_eq!(texts_by_file(bag), [["13", "14", "15", "16"]]);
    }
}

#[test]
fn a_pause_then_a_resume_at_times_leave_out_what_lies_between() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let t = publisher(&bus.node("talker", "/").unwrap(), "/t", STRING);
    clock.set(10 * SEC);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        options(bag.clone(), TopicSelection::all()),
    );
    recorder.pause_at(12 * SEC + SEC / 2);
    recorder
        .schedule_resume(Schedule {
            time_ns: 15 * SEC + SEC / 2,
            mode: TimeMode::Node,
            topic: None,
        })
        .unwrap();
    for i in 10..20 {
        clock.set(i * SEC);
        t.publish(&string_msg(&i.to_string())).unwrap();
    }
    assert!(!recorder.is_paused());
    recorder.stop().unwrap();
    assert_eq!(
        texts_by_file(&bag),
        [["10", "11", "12", "16", "17", "18", "19"]]
    );
}
