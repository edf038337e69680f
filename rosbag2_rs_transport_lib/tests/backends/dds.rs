//! What only the DDS backends do (the cases every backend shares are in `conformance.rs`): type
//! hashes in USER_DATA, the user's Cyclone configuration. Two nodes (two DDS participants) in
//! one private network namespace per test. Interop with real peers is in `tests/interop`.

use crate::common;

use common::{cdr, collector, eventually};

use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::*;
use rosbag2_rs_transport_lib::{DdsConfig, DdsMiddleware, DiscoveryRange};

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
        dds: config(domain_id + 100).discovery(),
        ..FastDdsConfig::default()
    };
    Box::new(FastDdsMiddleware::with_config(name, namespace, config).unwrap())
}

// Cyclone announces type hashes once the typehash work reads and writes them there too.
#[cfg(rosbag2_rs_fastdds)]
#[test]
fn fastdds_endpoints_announce_registered_type_hashes() {
    endpoints_announce_registered_type_hashes(fastdds);
}

fn config(domain_id: u16) -> DdsConfig {
    DdsConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        ..DdsConfig::default()
    }
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
