//! What only the Zenoh backend does, against itself through the crate's router configured as
//! rmw_zenohd, in one private network namespace (one test: Zenoh's runtime threads are
//! process-wide and stay in the namespace of the thread that started them): payloads without
//! DDS padding, the send time and type hash it carries, no sequence gaps counted as lost. The
//! cases every backend shares (transient local, services, the graph) are in `conformance.rs`.
//! Interop with Python eclipse-zenoh peers in rmw_zenoh's format is in
//! `tests/interop/test_zenoh_interop.py`.
#![cfg(feature = "zenoh")]

mod common;

use common::{cdr, collector, eventually};
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::zenoh::ZenohMiddleware;
use rosbag2_rs_transport_lib::*;

const HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

fn node(name: &str) -> ZenohMiddleware {
    let n = ZenohMiddleware::with_config(name, "/", common::zenoh_session_config()).unwrap();
    n.register_type_hash("std_msgs/msg/String", HASH);
    n
}

#[test]
fn zenoh_backend_end_to_end() {
    common::enter_private_network();
    let _router = common::start_zenoh_router();
    let talker = node("talker");
    let listener = node("listener");

    // Bytes untouched, small and large; the graph lists the publisher with its hash and QoS.
    let (got, cb) = collector();
    let _sub = listener
        .create_subscription(
            "/chatter",
            "std_msgs/msg/String",
            &QosProfile::default(),
            cb,
        )
        .unwrap();
    let qos = QosProfile {
        depth: 7,
        ..QosProfile::default()
    };
    let publisher = talker
        .create_publisher("chatter", "std_msgs/msg/String", &qos)
        .unwrap();
    eventually("the subscription", || publisher.subscription_count() == 1);
    let sent: Vec<_> = [vec![1u8; 3], vec![7u8; 3 << 20]]
        .iter()
        .map(|p| cdr(p))
        .collect();
    for m in &sent {
        publisher.publish_at(m, 42).unwrap();
    }
    eventually("both messages", || got.lock().unwrap().len() == 2);
    for (r, s) in got.lock().unwrap().iter().zip(&sent) {
        assert_eq!(&r.data, s);
        assert_eq!(r.send_timestamp, Some(42));
    }
    assert_eq!(listener.lost_messages("/chatter"), 0);
    let topic = listener
        .topics()
        .into_iter()
        .find(|t| t.name == "/chatter")
        .unwrap();
    let p = &topic.publishers[0];
    assert_eq!(p.type_name, "std_msgs/msg/String");
    assert_eq!(p.node.as_deref(), Some("/talker"));
    assert_eq!(p.qos.depth, 7);
    assert_eq!(p.type_hash.as_deref(), Some(HASH));
}
