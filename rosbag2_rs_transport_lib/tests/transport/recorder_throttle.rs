//! `--throttle` and `--statistics-rate` through the recorder on the in-process backend: a
//! jittery 30 Hz topic recorded at 10 Hz and another at a bytes limit, in virtual time, the bag
//! read back; and the totals on `events/rosbag2_rs_statistics`.

use crate::recorder_support;

use std::collections::BTreeMap;

use recorder_support::*;
use rosbag2_rs_transport_lib::*;

const SEC: i64 = 1_000_000_000;

/// The most messages (`bytes`: payload bytes) of `times` within any second that starts at one
/// of them (the fullest seconds do).
fn fullest_second(times: &[(i64, usize)], bytes: bool) -> usize {
    times
        .iter()
        .map(|&(start, _)| {
            times
                .iter()
                .filter(|&&(t, _)| t >= start && t - start < SEC)
                .map(|&(_, len)| if bytes { len } else { 1 })
                .sum()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn a_throttled_topic_never_exceeds_its_limit_in_any_second_of_the_bag() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let camera = publisher(&talker, "/camera", STRING);
    let points = publisher(&talker, "/points", STRING);
    let free = publisher(&talker, "/free", STRING);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            throttle: BTreeMap::from([
                ("camera".to_string(), ThrottleLimit::MessagesPerSecond(10.0)),
                ("/points".to_string(), ThrottleLimit::BytesPerSecond(4_000)),
            ]),
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    // 20 s at 30 Hz, each message up to 12 ms early or late; payloads of 200 to 400 bytes.
    let published = 600;
    for i in 0..published {
        let jitter = ((i * 7919) % 25 - 12) * 1_000_000;
        clock.set(10 * SEC + i * SEC / 30 + jitter);
        let text = "x".repeat(200 + (i as usize * 37) % 200);
        for p in [&camera, &points, &free] {
            p.publish(&string_msg(&text)).unwrap();
        }
    }
    let summary = recorder.stop().unwrap();

    let messages = read_bag(&bag);
    let on = |topic: &str| -> Vec<(i64, usize)> {
        messages
            .iter()
            .filter(|m| &*m.topic == topic)
            .map(|m| (m.recv_timestamp, m.data.len()))
            .collect()
    };
    let (camera, points) = (on("/camera"), on("/points"));
    assert!(fullest_second(&camera, false) <= 10);
    assert!(fullest_second(&points, true) <= 4_000);
    assert!(
        camera.len() >= 190,
        "{} camera messages in 20 s",
        camera.len()
    );
    let point_bytes: usize = points.iter().map(|&(_, len)| len).sum();
    assert!(
        point_bytes >= 72_000,
        "{point_bytes} bytes of points in 20 s"
    );
    assert_eq!(on("/free").len(), 600, "an unthrottled topic is whole");

    // Counted: in the summary and in the bag's metadata.
    let by_topic: BTreeMap<_, _> = summary
        .topics
        .iter()
        .map(|t| (t.topic.as_str(), t))
        .collect();
    let camera_summary = by_topic["/camera"];
    assert_eq!(camera_summary.written, camera.len() as u64);
    assert_eq!(
        camera_summary.throttled,
        published as u64 - camera.len() as u64
    );
    assert_eq!(
        camera_summary.received + camera_summary.throttled,
        published as u64
    );
    assert_eq!(by_topic["/free"].throttled, 0);
    let custom = metadata(&bag).custom_data;
    assert_eq!(
        custom[&format!("{THROTTLED_MESSAGES_KEY}/points")],
        (published as u64 - points.len() as u64).to_string()
    );
    assert!(!custom.contains_key(&format!("{THROTTLED_MESSAGES_KEY}/free")));
}

#[test]
fn the_statistics_topic_reports_each_topics_totals() {
    use rosbag2_rs_interfaces::rosbag2_rs_interfaces::msg::RecordStatistics;
    use rosbag2_rs_interfaces::{from_cdr, MessageType};
    use std::sync::{Arc, Mutex};

    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let camera = publisher(&talker, "/camera", STRING);
    let bag = dir.path().join("bag");
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let _sub = bus
        .node("monitor", "/")
        .unwrap()
        .create_subscription(
            "/events/rosbag2_rs_statistics",
            RecordStatistics::TYPE_NAME,
            &rosbag2_rs_storage::QosProfile::default(),
            Box::new(move |m| {
                sink.lock()
                    .unwrap()
                    .push(from_cdr::<RecordStatistics>(&m.data).unwrap())
            }),
        )
        .unwrap();
    let recorder = start(
        &bus,
        "rec",
        RecordOptions {
            throttle: BTreeMap::from([(
                "/camera".to_string(),
                ThrottleLimit::MessagesPerSecond(1.0),
            )]),
            statistics_rate: 100.0,
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    // Four seconds at 4 Hz: one message a second is recorded, three are throttled.
    for i in 0..16 {
        clock.set(10 * SEC + i * SEC / 4);
        camera.publish(&string_msg("frame")).unwrap();
    }
    recorder.flush().unwrap();
    let expected = (4, 4, 0, 0, 12, 0);
    let latest = || {
        let stats = received.lock().unwrap();
        stats.last().and_then(|s| {
            let t = s.topics.iter().find(|t| t.topic_name == "/camera")?;
            Some((
                s.node_name.clone(),
                s.uri.clone(),
                (
                    t.received,
                    t.written,
                    t.dropped,
                    t.lost_in_transport,
                    t.throttled,
                    t.malformed,
                ),
            ))
        })
    };
    // Published every 10 ms of wall time; a bound, not a window: the first with every count.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while latest().is_none_or(|(_, _, counts)| counts != expected)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        latest(),
        Some(("/rec".to_string(), bag.display().to_string(), expected))
    );
    assert!(recorder.topics().iter().all(|t| !t.contains("statistics")));
    drop(recorder);
}
