//! Each DDS backend against itself (Cyclone DDS always; Fast DDS with the `fastdds` feature):
//! one suite, run once per backend, with two nodes (two DDS participants) in one private network
//! namespace per test. Interop with real peers of each middleware is tested in `tests/interop`.

mod common;

use common::{cdr, collector};

use std::time::{Duration, Instant};

use rosbag2_rs_storage::qos::Durability;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::*;
use rosbag2_rs_transport_lib::{DdsConfig, DdsMiddleware, DiscoveryRange};

/// Waits for a condition that depends on discovery (which takes real time on a network).
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Makes a node of the backend under test: name, namespace, DDS domain (discovery on loopback).
type MakeNode = fn(&str, &str, u16) -> Box<dyn Middleware>;

fn cyclone(name: &str, namespace: &str, domain_id: u16) -> Box<dyn Middleware> {
    Box::new(DdsMiddleware::with_config(name, namespace, config(domain_id)).unwrap())
}

/// Fast DDS nodes use other domains than Cyclone's: Fast DDS's shared-memory ports are
/// host-wide, not per network namespace.
#[cfg(rosbag2_rs_fastdds)]
fn fastdds(name: &str, namespace: &str, domain_id: u16) -> Box<dyn Middleware> {
    let config = FastDdsConfig {
        dds: config(domain_id + 100),
        ..FastDdsConfig::default()
    };
    Box::new(FastDdsMiddleware::with_config(name, namespace, config).unwrap())
}

/// The suite, as one test per backend and case.
macro_rules! suite {
    ($backend:ident) => {
        mod $backend {
            #[test]
            fn messages_small_and_large_arrive_byte_for_byte() {
                super::messages_small_and_large_arrive_byte_for_byte(super::$backend);
            }
            #[test]
            fn transient_local_reaches_a_late_joiner() {
                super::transient_local_reaches_a_late_joiner(super::$backend);
            }
            #[test]
            fn services_answer_every_client_even_fresh_ones() {
                super::services_answer_every_client_even_fresh_ones(super::$backend);
            }
            #[test]
            fn the_node_lists_itself_on_ros_discovery_info() {
                super::the_node_lists_itself_on_ros_discovery_info(super::$backend);
            }
            #[test]
            fn graph_shows_remote_publishers_with_type_and_qos() {
                super::graph_shows_remote_publishers_with_type_and_qos(super::$backend);
            }
        }
    };
}

suite!(cyclone);
#[cfg(rosbag2_rs_fastdds)]
suite!(fastdds);

// Cyclone announces type hashes once the typehash work reads and writes them there too.
#[cfg(rosbag2_rs_fastdds)]
#[test]
fn fastdds_endpoints_announce_registered_type_hashes() {
    endpoints_announce_registered_type_hashes(fastdds);
}

/// DDS pads payloads to 4 bytes and counts the padding in the header's options, so a received
/// payload is the sent one (options aside) plus at most 3 zero bytes.
fn assert_same_cdr(received: &[u8], sent: &[u8]) {
    assert_eq!(received[..2], sent[..2], "representation changed");
    assert!(received[4..].starts_with(&sent[4..]), "payload changed");
    assert_eq!(
        usize::from(received[3] & 3),
        received.len() - sent.len(),
        "the options count the padding"
    );
    let tail = &received[sent.len()..];
    assert!(
        tail.len() < 4 && tail.iter().all(|b| *b == 0),
        "unexpected trailing bytes {tail:?}"
    );
}

fn config(domain_id: u16) -> DdsConfig {
    DdsConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        ..DdsConfig::default()
    }
}

fn messages_small_and_large_arrive_byte_for_byte(node: MakeNode) {
    common::enter_private_network();
    let talker = node("talker", "/", 11);
    let listener = node("listener", "/", 11);
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
    // Matched both ways: the writer knows the reader, and the reader's node has discovered the
    // writer (a reader that has not yet discovered a writer may not take its first samples).
    eventually("the subscription to be matched", || {
        publisher.subscription_count() > 0
    });
    eventually("the listener to discover the publisher", || {
        publishes(listener.as_ref(), "/chatter")
    });
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

fn transient_local_reaches_a_late_joiner(node: MakeNode) {
    common::enter_private_network();
    let talker = node("talker", "/", 12);
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
    let listener = node("listener", "/", 12);
    let (got, cb) = collector();
    // The reader keeps more than the writer's depth: what it gets is what the writer replays.
    let deep = QosProfile {
        depth: 10,
        ..latched
    };
    let _sub = listener
        .create_subscription("/map", "nav_msgs/msg/OccupancyGrid", &deep, cb)
        .unwrap();
    eventually("the latched message", || !got.lock().unwrap().is_empty());
    // A writer's samples arrive in order, its history before anything published later: once a
    // message published now has arrived, whatever history was replayed is there too.
    publisher.publish(&cdr(b"live")).unwrap();
    eventually("the live message", || {
        got.lock()
            .unwrap()
            .last()
            .is_some_and(|m| m.data[4..].starts_with(b"live"))
    });
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 2, "only the last `depth` messages are replayed");
    assert_same_cdr(&got[0].data, &cdr(b"latest"));
    assert_same_cdr(&got[1].data, &cdr(b"live"));
}

/// Whether `observer` has discovered a publisher on `topic`.
fn publishes(observer: &dyn Middleware, topic: &str) -> bool {
    observer
        .topics()
        .iter()
        .any(|t| t.name == topic && !t.publishers.is_empty())
}

fn echo_service(server: &dyn Middleware) -> Handle {
    server
        .create_service(
            "~/double",
            "example_interfaces/srv/AddTwoInts",
            Box::new(|_: &RequestId, req: &[u8]| {
                let a = i64::from_le_bytes(
                    req.get(4..12)
                        .ok_or_else(|| TransportError::InvalidPayload("short request".into()))?
                        .try_into()
                        .unwrap(),
                );
                Ok([&[0u8, 1, 0, 0][..], &(2 * a).to_le_bytes()].concat())
            }),
        )
        .unwrap()
}

fn add_two_ints(a: i64) -> Vec<u8> {
    [&[0u8, 1, 0, 0][..], &a.to_le_bytes()].concat()
}

fn services_answer_every_client_even_fresh_ones(node: MakeNode) {
    common::enter_private_network();
    let server = node("server", "/", 13);
    let _service = echo_service(server.as_ref());
    let client_node = node("client", "/", 13);
    let client = client_node
        .create_client("/server/double", "example_interfaces/srv/AddTwoInts")
        .unwrap();
    assert!(
        client.wait_for_service(Duration::from_secs(20)),
        "service not discovered"
    );
    for a in [1i64, 21, -5] {
        let response = client
            .call(&add_two_ints(a), Duration::from_secs(5))
            .unwrap();
        assert_eq!(response, add_two_ints(2 * a));
    }
    // A malformed request is refused (no answer) and the server keeps serving.
    assert!(matches!(
        client.call(&[0, 1, 0, 0, 1], Duration::from_millis(300)),
        Err(TransportError::Timeout(_))
    ));
    assert_eq!(
        client
            .call(&add_two_ints(7), Duration::from_secs(5))
            .unwrap(),
        add_two_ints(14)
    );
    // Fresh participants calling at once, as `ros2 service call` does: the reply waits until
    // the new client's reply reader is matched, so none is lost to discovery.
    for i in 0..20i64 {
        let fresh = node("fresh_client", "/", 13);
        let client = fresh
            .create_client("/server/double", "example_interfaces/srv/AddTwoInts")
            .unwrap();
        assert!(client.wait_for_service(Duration::from_secs(20)));
        assert_eq!(
            client
                .call(&add_two_ints(i), Duration::from_secs(2))
                .unwrap(),
            add_two_ints(2 * i),
            "call {i}"
        );
    }
}

fn the_node_lists_itself_on_ros_discovery_info(node: MakeNode) {
    common::enter_private_network();
    let talker = node("camera_driver", "/robot1", 16);
    let observer = node("observer", "/", 16);
    let _p = talker
        .create_publisher("image", "sensor_msgs/msg/Image", &QosProfile::default())
        .unwrap();
    let node_of_image = || {
        observer
            .topics()
            .into_iter()
            .find(|t| t.name == "/robot1/image")
            .and_then(|t| t.publishers.first().and_then(|p| p.node.clone()))
    };
    eventually("the publisher's node name", || node_of_image().is_some());
    assert_eq!(node_of_image().as_deref(), Some("/robot1/camera_driver"));
}

fn graph_shows_remote_publishers_with_type_and_qos(node: MakeNode) {
    common::enter_private_network();
    let talker = node("talker", "/", 15);
    let observer = node("observer", "/", 15);
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

#[test]
fn endpoints_announce_registered_or_computed_type_hashes() {
    common::enter_private_network();
    // tf2_msgs/msg/TFMessage and std_msgs/msg/String as ROS 2's generator hashes them.
    const TF: &str = "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087";
    const RECORDED: &str =
        "RIHS01_00000000000000000000000000000000000000000000000000000000000000aa";
    let talker = cyclone("talker", "/", 17);
    let observer = cyclone("observer", "/", 17);
    talker.register_type_hash("std_msgs/msg/String", RECORDED);
    let _tf = talker
        .create_publisher("/tf", "tf2_msgs/msg/TFMessage", &QosProfile::default())
        .unwrap();
    let _chatter = talker
        .create_publisher("/chatter", "std_msgs/msg/String", &QosProfile::default())
        .unwrap();
    let (_, cb) = collector();
    let _unknown = talker
        .create_subscription(
            "/thing",
            "unknown_msgs/msg/Thing",
            &QosProfile::default(),
            cb,
        )
        .unwrap();
    let hashes = || -> Vec<(String, Option<String>)> {
        observer
            .topics()
            .into_iter()
            .filter(|t| ["/tf", "/chatter", "/thing"].contains(&t.name.as_str()))
            .flat_map(|t| {
                let name = t.name.clone();
                t.publishers
                    .into_iter()
                    .chain(t.subscriptions)
                    .map(move |e| (name.clone(), e.type_hash))
            })
            .collect()
    };
    eventually("three endpoints in the graph", || hashes().len() == 3);
    assert_eq!(
        hashes(),
        [
            ("/chatter".to_string(), Some(RECORDED.to_string())),
            ("/tf".to_string(), Some(TF.to_string())),
            ("/thing".to_string(), None),
        ]
    );
}

#[test]
fn localhost_discovery_leaves_the_interface_to_the_users_cyclone_configuration() {
    common::enter_private_network();
    // ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST with a CYCLONEDDS_URI that names an interface:
    // rmw_cyclonedds selects none of its own, so the two never collide.
    let user = DdsConfig {
        user_config: Some(
            r#"<CycloneDDS><Domain><General><Interfaces><NetworkInterface name="lo"/></Interfaces></General></Domain></CycloneDDS>"#.into(),
        ),
        ..config(19)
    };
    let talker = DdsMiddleware::with_config("talker", "/", user.clone()).unwrap();
    let listener = DdsMiddleware::with_config("listener", "/", user).unwrap();
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
        publisher.subscription_count() == 1
    });
    publisher.publish(&cdr(b"\x03\0\0\0hi\0")).unwrap();
    eventually("the message", || !got.lock().unwrap().is_empty());
}

#[cfg_attr(not(rosbag2_rs_fastdds), allow(dead_code))]
fn endpoints_announce_registered_type_hashes(node: MakeNode) {
    common::enter_private_network();
    let talker = node("talker", "/", 17);
    let observer = node("observer", "/", 17);
    let hash = format!("RIHS01_{}", "df".repeat(32));
    talker.register_type_hash("std_msgs/msg/String", &hash);
    let _hashed = talker
        .create_publisher("/chatter", "std_msgs/msg/String", &QosProfile::default())
        .unwrap();
    let _plain = talker
        .create_publisher("/other", "std_msgs/msg/Header", &QosProfile::default())
        .unwrap();
    let hash_of = |topic: &str| {
        observer
            .topics()
            .into_iter()
            .find(|t| t.name == topic)
            .and_then(|t| t.publishers.first().map(|p| p.type_hash.clone()))
    };
    eventually("both publishers", || {
        hash_of("/chatter").is_some() && hash_of("/other").is_some()
    });
    assert_eq!(hash_of("/chatter"), Some(Some(hash)));
    // None registered: the one computed from the type's definition, as ROS 2 nodes announce.
    let header = rosbag2_rs_codec::MessageDefinitionCache::new()
        .type_hash("std_msgs/msg/Header")
        .unwrap();
    assert_eq!(hash_of("/other"), Some(Some(header)));
}
