//! The DDS backend against itself: two nodes (two DDS participants) in one private network
//! namespace per test. Interop with a real DDS implementation is tested in `tests/interop`.

mod common;

use common::{cdr, collector};

use std::time::{Duration, Instant};

use rosbag2_rs_storage::qos::Durability;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport::dds::{DdsConfig, DdsMiddleware, DiscoveryRange, ServiceMapping};
use rosbag2_rs_transport::*;

/// Waits for a condition that depends on discovery (which takes real time on a network).
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn node(name: &str, config: DdsConfig) -> DdsMiddleware {
    DdsMiddleware::with_config(name, "/", config).unwrap()
}

/// RTPS pads payloads to 4 bytes and RustDDS does not carry the XCDR padding count, so a
/// received payload is the sent one plus at most 3 zero bytes (which CDR readers ignore).
fn assert_same_cdr(received: &[u8], sent: &[u8]) {
    assert!(received.starts_with(sent), "payload changed");
    let tail = &received[sent.len()..];
    assert!(
        tail.len() < 4 && tail.iter().all(|b| *b == 0),
        "unexpected trailing bytes {tail:?}"
    );
}

fn config(domain_id: u16, service_mapping: ServiceMapping) -> DdsConfig {
    DdsConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        service_mapping,
    }
}

#[test]
fn messages_small_and_large_arrive_byte_for_byte() {
    common::enter_private_network();
    let talker = node("talker", config(11, ServiceMapping::Cyclone));
    let listener = node("listener", config(11, ServiceMapping::Cyclone));
    let (got, cb) = collector();
    let _sub = listener
        .create_subscription(
            "/chatter",
            "std_msgs/msg/String",
            &QosProfile::default(),
            cb,
        )
        .unwrap();
    let publisher = talker
        .create_publisher("/chatter", "std_msgs/msg/String", &QosProfile::default())
        .unwrap();
    eventually("the subscription to be matched", || {
        publisher.subscription_count() > 0
    });
    std::thread::sleep(Duration::from_millis(300));
    let big: Vec<u8> = (0..(1 << 20)).map(|i| (i % 251) as u8).collect();
    let sent = [cdr(b"\x06\0\0\0hello\0"), cdr(&big)];
    for m in &sent {
        publisher.publish_at(m, 1_700_000_000_123_456_789).unwrap();
    }
    eventually("both messages", || got.lock().unwrap().len() == 2);
    let got = got.lock().unwrap();
    assert_same_cdr(&got[0].data, &sent[0]);
    assert_same_cdr(&got[1].data, &sent[1]);
    let send = got[0].send_timestamp.unwrap();
    assert!((send - 1_700_000_000_123_456_789).abs() <= 1, "{send}");
}

#[test]
fn transient_local_reaches_a_late_joiner() {
    common::enter_private_network();
    let talker = node("talker", config(12, ServiceMapping::Cyclone));
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        depth: 1,
        ..QosProfile::default()
    };
    let publisher = talker
        .create_publisher("/map", "nav_msgs/msg/OccupancyGrid", &latched)
        .unwrap();
    publisher.publish(&cdr(b"old")).unwrap();
    publisher.publish(&cdr(b"latest")).unwrap();
    let listener = node("listener", config(12, ServiceMapping::Cyclone));
    let (got, cb) = collector();
    let _sub = listener
        .create_subscription("/map", "nav_msgs/msg/OccupancyGrid", &latched, cb)
        .unwrap();
    // RustDDS may also replay history beyond `depth`; the latest message must arrive, last.
    let latest = cdr(b"latest");
    eventually("the latched message", || {
        got.lock()
            .unwrap()
            .last()
            .is_some_and(|m| m.data.starts_with(&latest))
    });
    assert_same_cdr(&got.lock().unwrap().last().unwrap().data, &latest);
}

fn echo_service(server: &DdsMiddleware) -> Handle {
    server
        .create_service(
            "~/double",
            "example_interfaces/srv/AddTwoInts",
            Box::new(|req: &[u8]| {
                let a =
                    i64::from_le_bytes(req.get(4..12).ok_or("short request")?.try_into().unwrap());
                Ok([&[0u8, 1, 0, 0][..], &(2 * a).to_le_bytes()].concat())
            }),
        )
        .unwrap()
}

#[test]
fn services_in_both_request_id_mappings() {
    common::enter_private_network();
    for (domain, mapping) in [
        (13, ServiceMapping::Cyclone),
        (14, ServiceMapping::FastRtps),
    ] {
        let server = node("server", config(domain, mapping));
        let _service = echo_service(&server);
        let client_node = node("client", config(domain, mapping));
        let client = client_node
            .create_client("/server/double", "example_interfaces/srv/AddTwoInts")
            .unwrap();
        assert!(
            client.wait_for_service(Duration::from_secs(20)),
            "{mapping:?}: service not discovered"
        );
        std::thread::sleep(Duration::from_millis(300));
        for a in [1i64, 21, -5] {
            let request = [&[0u8, 1, 0, 0][..], &a.to_le_bytes()].concat();
            let response = client.call(&request, Duration::from_secs(5)).unwrap();
            assert_eq!(
                response,
                [&[0u8, 1, 0, 0][..], &(2 * a).to_le_bytes()].concat(),
                "{mapping:?}"
            );
        }
        // A malformed request is refused (no answer) and the server keeps serving.
        assert!(matches!(
            client.call(&[0, 1, 0, 0, 1], Duration::from_millis(300)),
            Err(TransportError::Timeout(_))
        ));
        let request = [&[0u8, 1, 0, 0][..], &7i64.to_le_bytes()].concat();
        assert_eq!(
            client.call(&request, Duration::from_secs(5)).unwrap()[4..],
            14i64.to_le_bytes()
        );
    }
}

#[test]
fn graph_shows_remote_publishers_with_type_and_qos() {
    common::enter_private_network();
    let talker = node("talker", config(15, ServiceMapping::Cyclone));
    let observer = node("observer", config(15, ServiceMapping::Cyclone));
    let events = observer.graph_events();
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        ..QosProfile::default()
    };
    let _p = talker
        .create_publisher("/tf_static", "tf2_msgs/msg/TFMessage", &latched)
        .unwrap();
    eventually("the publisher in the graph", || {
        observer.topics().iter().any(|t| t.name == "/tf_static")
    });
    let topic = observer
        .topics()
        .into_iter()
        .find(|t| t.name == "/tf_static")
        .unwrap();
    assert_eq!(topic.type_names(), vec!["tf2_msgs/msg/TFMessage"]);
    assert_eq!(
        topic.publishers[0].qos.durability,
        Durability::TransientLocal
    );
    let expected = GraphEvent::PublisherAppeared {
        topic: "/tf_static".into(),
        type_name: "tf2_msgs/msg/TFMessage".into(),
    };
    // Other publishers (the nodes' own /parameter_events) are announced too.
    let found = events.iter().take(50).any(|e| e == expected);
    assert!(found, "no event for /tf_static");
}
