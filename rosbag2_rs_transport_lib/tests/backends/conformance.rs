//! One suite of what every middleware backend must do, run over each of them: in-process,
//! Cyclone DDS, Fast DDS (where built), Zenoh (through the crate's router configured as
//! rmw_zenohd; feature `zenoh`) and rcl (built in a sourced ROS 2; `tools/test_rcl.sh` runs it
//! there). Two or more nodes of the backend talk to each other: bytes small and large unchanged,
//! transient local history for late joiners, services that answer fresh clients, the graph with
//! types, QoS and nodes. The networked backends run each case in a private network namespace of
//! its own (Zenoh: all its cases in one, see `zenoh_suite`). What only one middleware does is
//! tested beside it (`dds.rs`, `../zenoh.rs`, `../transport/inprocess.rs`); interop with real peers of each
//! middleware is in `tests/interop`. The types are ones a ROS 2 install has (std_msgs,
//! sensor_msgs, rosbag2_interfaces), since the rcl backend needs their type supports.

use crate::common;

use common::{cdr, collector, eventually};

use std::time::Duration;

use rosbag2_rs_storage::qos::Durability;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::*;
use rosbag2_rs_transport_lib::{DdsConfig, DdsMiddleware, DiscoveryRange};

/// A backend under test.
struct Backend {
    /// Makes a node: name, namespace, DDS domain (ignored where there are no domains).
    node: fn(&str, &str, u16) -> Box<dyn Middleware>,
    /// Whether the send time a publisher gives reaches the subscriber (rcl has no call to set
    /// it: the rmw stamps the publication itself).
    sets_send_time: bool,
    /// Whether it counts messages lost on the way ([`Middleware::lost_messages`]: rcl from the
    /// rmw's publication sequence numbers, Zenoh from rmw_zenoh's attachments).
    counts_losses: bool,
}

const INPROCESS: Backend = Backend {
    node: inprocess,
    sets_send_time: true,
    counts_losses: false,
};

thread_local! {
    /// One bus per test (each test runs on a thread of its own).
    static BUS: InProcessBus = InProcessBus::new();
}

fn inprocess(name: &str, namespace: &str, _domain: u16) -> Box<dyn Middleware> {
    BUS.with(|bus| Box::new(bus.node(name, namespace).unwrap()))
}

const CYCLONE: Backend = Backend {
    node: cyclone,
    sets_send_time: true,
    counts_losses: false,
};

fn dds_config(domain_id: u16) -> DdsConfig {
    DdsConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        ..DdsConfig::default()
    }
}

fn cyclone(name: &str, namespace: &str, domain_id: u16) -> Box<dyn Middleware> {
    Box::new(DdsMiddleware::with_config(name, namespace, dds_config(domain_id)).unwrap())
}

/// Fast DDS nodes use other domains than Cyclone's: Fast DDS's shared-memory ports are
/// host-wide, not per network namespace.
#[cfg(rosbag2_rs_fastdds)]
const FASTDDS: Backend = Backend {
    node: |name, namespace, domain_id| {
        let config = FastDdsConfig {
            dds: dds_config(domain_id + 100).discovery(),
            ..FastDdsConfig::default()
        };
        Box::new(FastDdsMiddleware::with_config(name, namespace, config).unwrap())
    },
    sets_send_time: true,
    counts_losses: false,
};

#[cfg(feature = "zenoh")]
const ZENOH: Backend = Backend {
    node: |name, namespace, _domain| {
        let config = common::zenoh_session_config();
        Box::new(zenoh::ZenohMiddleware::with_config(name, namespace, config).unwrap())
    },
    sets_send_time: true,
    counts_losses: true,
};

/// rcl nodes take their domain from `ROS_DOMAIN_ID`, and the rmw's shared-memory ports are
/// host-wide: one rcl case at a time (`RCL_CASE`), each in its own network namespace.
#[cfg(rosbag2_rs_rcl)]
const RCL: Backend = Backend {
    node: |name, namespace, _domain| Box::new(RclMiddleware::new(name, namespace).unwrap()),
    sets_send_time: false,
    counts_losses: true,
};

#[cfg(rosbag2_rs_rcl)]
static RCL_CASE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The cases, as one test per backend and case. `$setup` runs first in the test's thread.
macro_rules! suite {
    ($module:ident, $backend:expr, $setup:expr) => {
        mod $module {
            use super::*;
            #[test]
            fn messages_small_and_large_arrive_byte_for_byte() {
                let _setup = $setup;
                super::messages_small_and_large_arrive_byte_for_byte(&$backend);
            }
            #[test]
            fn transient_local_reaches_a_late_joiner() {
                let _setup = $setup;
                super::transient_local_reaches_a_late_joiner(&$backend);
            }
            #[test]
            fn services_answer_every_client_even_fresh_ones() {
                let _setup = $setup;
                super::services_answer_every_client_even_fresh_ones(&$backend);
            }
            #[test]
            fn the_graph_names_an_endpoints_node() {
                let _setup = $setup;
                super::the_graph_names_an_endpoints_node(&$backend);
            }
            #[test]
            fn graph_shows_remote_publishers_with_type_and_qos() {
                let _setup = $setup;
                super::graph_shows_remote_publishers_with_type_and_qos(&$backend);
            }
            #[test]
            fn what_a_shallow_reader_misses_is_counted_lost() {
                let _setup = $setup;
                super::what_a_shallow_reader_misses_is_counted_lost(&$backend);
            }
        }
    };
}

suite!(inprocess, INPROCESS, ());
suite!(cyclone, CYCLONE, common::enter_private_network());
#[cfg(rosbag2_rs_fastdds)]
suite!(fastdds, FASTDDS, common::enter_private_network());
#[cfg(rosbag2_rs_rcl)]
suite!(
    rcl,
    RCL,
    (
        RCL_CASE.lock().unwrap_or_else(|e| e.into_inner()),
        common::enter_private_network()
    )
);

/// Zenoh's runtime threads are process-wide and stay in the network namespace of the thread
/// that started them: its cases run one after the other in one test, one namespace, one router.
#[cfg(feature = "zenoh")]
#[test]
fn zenoh_suite() {
    common::enter_private_network();
    let _router = common::start_zenoh_router();
    messages_small_and_large_arrive_byte_for_byte(&ZENOH);
    transient_local_reaches_a_late_joiner(&ZENOH);
    services_answer_every_client_even_fresh_ones(&ZENOH);
    the_graph_names_an_endpoints_node(&ZENOH);
    graph_shows_remote_publishers_with_type_and_qos(&ZENOH);
    what_a_shallow_reader_misses_is_counted_lost(&ZENOH);
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

fn messages_small_and_large_arrive_byte_for_byte(backend: &Backend) {
    let talker = (backend.node)("talker", "/", 11);
    let listener = (backend.node)("listener", "/", 11);
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
    if backend.sets_send_time {
        let send = got[0].send_timestamp.unwrap();
        assert!((send - 1_700_000_000_123_456_789).abs() <= 1, "{send}");
    }
}

/// A burst to a reader that keeps one message: every message is delivered or, on a backend that
/// counts losses, counted lost (issue 51: nothing lost without a word); the last one arrives.
/// Losses count from the first message of a publisher the reader received (what a publisher
/// sent before may predate the subscription), so one goes first.
fn what_a_shallow_reader_misses_is_counted_lost(backend: &Backend) {
    const BURST: u32 = 2000;
    let talker = (backend.node)("talker", "/", 16);
    let listener = (backend.node)("listener", "/", 16);
    let (got, cb) = collector();
    let shallow = QosProfile {
        depth: 1,
        ..QosProfile::default()
    };
    let _sub = listener
        .create_subscription("/burst", "std_msgs/msg/String", &shallow, cb)
        .unwrap();
    let publisher = talker
        .create_publisher("/burst", "std_msgs/msg/String", &QosProfile::default())
        .unwrap();
    eventually("the subscription to be matched", || {
        publisher.subscription_count() > 0
    });
    eventually("the listener to discover the publisher", || {
        publishes(listener.as_ref(), "/burst")
    });
    let last = cdr(&[4, 0, 0, 0, b'e', b'n', b'd', 0]);
    publisher.publish_at(&last, 0).unwrap();
    eventually("the first message", || !got.lock().unwrap().is_empty());
    for i in 0..BURST - 2 {
        let text = format!("{i:07}\0");
        let mut payload = (text.len() as u32).to_le_bytes().to_vec();
        payload.extend_from_slice(text.as_bytes());
        publisher.publish_at(&cdr(&payload), 0).unwrap();
    }
    publisher.publish_at(&last, 0).unwrap();
    let received = || got.lock().unwrap().len() as u64;
    eventually("the last message", || {
        got.lock()
            .unwrap()
            .last()
            .is_some_and(|m| m.data[..last.len()] == last[..])
    });
    let lost = listener.lost_messages("/burst");
    if backend.counts_losses {
        assert_eq!(received() + lost, u64::from(BURST), "{lost} lost");
    } else {
        assert_eq!(lost, 0);
    }
}

fn transient_local_reaches_a_late_joiner(backend: &Backend) {
    let talker = (backend.node)("talker", "/", 12);
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        depth: 1,
        ..QosProfile::default()
    };
    let publisher = talker
        .create_publisher("/map", "std_msgs/msg/String", &latched)
        .unwrap();
    publisher.publish(&cdr(b"old")).unwrap();
    publisher.publish(&cdr(b"latest")).unwrap();
    let listener = (backend.node)("listener", "/", 12);
    let (got, cb) = collector();
    // The reader keeps more than the writer's depth: what it gets is what the writer replays.
    let deep = QosProfile {
        depth: 10,
        ..latched
    };
    let _sub = listener
        .create_subscription("/map", "std_msgs/msg/String", &deep, cb)
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

/// `~/double`: a `Burst` service (two unsigned 64-bit numbers, a type every ROS 2 with
/// rosbag2_interfaces has, for the rcl backend) answering twice the number asked.
fn echo_service(server: &dyn Middleware) -> Handle {
    server
        .create_service(
            "~/double",
            "rosbag2_interfaces/srv/Burst",
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

/// A `Burst` request or response of `a`.
fn burst(a: i64) -> Vec<u8> {
    [&[0u8, 1, 0, 0][..], &a.to_le_bytes()].concat()
}

fn services_answer_every_client_even_fresh_ones(backend: &Backend) {
    let server = (backend.node)("server", "/", 13);
    let _service = echo_service(server.as_ref());
    let client_node = (backend.node)("client", "/", 13);
    let client = client_node
        .create_client("/server/double", "rosbag2_interfaces/srv/Burst")
        .unwrap();
    assert!(
        client.wait_for_service(Duration::from_secs(20)),
        "service not discovered"
    );
    for a in [1i64, 21, 5] {
        let response = client.call(&burst(a), Duration::from_secs(5)).unwrap();
        assert_eq!(response, burst(2 * a));
    }
    // A malformed request is refused (networked: no answer; in-process: the reason) and the
    // server keeps serving.
    assert!(client
        .call(&[0, 1, 0, 0, 1], Duration::from_millis(300))
        .is_err());
    assert_eq!(
        client.call(&burst(7), Duration::from_secs(5)).unwrap(),
        burst(14)
    );
    // Fresh participants calling at once, as `ros2 service call` does: the reply waits until
    // the new client's reply reader is matched, so none is lost to discovery.
    for i in 0..20i64 {
        let fresh = (backend.node)("fresh_client", "/", 13);
        let client = fresh
            .create_client("/server/double", "rosbag2_interfaces/srv/Burst")
            .unwrap();
        assert!(client.wait_for_service(Duration::from_secs(20)));
        assert_eq!(
            client.call(&burst(i), Duration::from_secs(2)).unwrap(),
            burst(2 * i),
            "call {i}"
        );
    }
}

fn the_graph_names_an_endpoints_node(backend: &Backend) {
    let talker = (backend.node)("camera_driver", "/robot1", 16);
    let observer = (backend.node)("observer", "/", 16);
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

fn graph_shows_remote_publishers_with_type_and_qos(backend: &Backend) {
    let talker = (backend.node)("talker", "/", 15);
    let observer = (backend.node)("observer", "/", 15);
    let events = observer.graph_events();
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        ..QosProfile::default()
    };
    let _p = talker
        .create_publisher("/tf_static", "std_msgs/msg/Header", &latched)
        .unwrap();
    eventually("the publisher in the graph", || {
        observer.topics().iter().any(|t| t.name == "/tf_static")
    });
    let topic = observer
        .topics()
        .into_iter()
        .find(|t| t.name == "/tf_static")
        .unwrap();
    assert_eq!(topic.type_names(), vec!["std_msgs/msg/Header"]);
    assert_eq!(
        topic.publishers[0].qos.durability,
        Durability::TransientLocal
    );
    let expected = GraphEvent::PublisherAppeared {
        topic: "/tf_static".into(),
        type_name: "std_msgs/msg/Header".into(),
    };
    // Other publishers (the nodes' own /parameter_events) are announced too.
    let found = events.iter().take(50).any(|e| e == expected);
    assert!(found, "no event for /tf_static");
}
