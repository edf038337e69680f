//! Type hashes (RIHS01) through the player and the recorder, on the in-process backend (whose
//! endpoints announce exactly the hashes their node registered): the player announces what a
//! bag records, or computes it for bags that record none; the recorder stores what the graph
//! announces, as rosbag2 does.

use crate::recorder_support;

use std::sync::Arc;

use recorder_support::*;
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_storage::{BagWriter, BagWriterOptions, SerializedMessage, TopicMetadata};
use rosbag2_rs_transport_lib::*;

/// std_msgs/msg/String and sensor_msgs/msg/Imu as ROS 2 Jazzy's generator hashes them.
const STRING_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
const IMU_HASH: &str = "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b";
const OTHER: &str = "RIHS01_0000000000000000000000000000000000000000000000000000000000000001";

/// A bag with one message on each `(topic, type, recorded hash, stored definition)`; a
/// definition is `(encoding, text)`, and none means the writer's own (bundled, or empty).
type TopicSpec<'a> = (&'a str, &'a str, &'a str, Option<(&'a str, &'a str)>);

fn bag(dir: &std::path::Path, topics: &[TopicSpec]) -> std::path::PathBuf {
    let uri = dir.join("bag");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    for (i, (topic, type_name, hash, definition)) in topics.iter().enumerate() {
        let meta = TopicMetadata {
            type_description_hash: hash.to_string(),
            ..TopicMetadata::new(*topic, *type_name)
        };
        let definition = definition.map(|(encoding, text)| MessageDefinition {
            topic_type: type_name.to_string(),
            encoding: encoding.into(),
            encoded_message_definition: text.into(),
            type_description_hash: String::new(),
        });
        writer.create_topic(&meta, definition).unwrap();
        writer
            .write(&SerializedMessage::new(
                Arc::from(*topic),
                1_000 + i as i64,
                string_msg("x"),
            ))
            .unwrap();
    }
    writer.close().unwrap();
    uri
}

/// The hash each publisher of `topic` announces.
fn announced(node: &dyn Middleware, topic: &str) -> Vec<Option<String>> {
    node.topics()
        .into_iter()
        .filter(|t| t.name == topic)
        .flat_map(|t| t.publishers)
        .map(|p| p.type_hash)
        .collect()
}

#[test]
fn the_player_announces_the_recorded_hash_or_computes_one() {
    let dir = tempfile::tempdir().unwrap();
    let bag = bag(
        dir.path(),
        &[
            // Recorded, and matching its definition.
            (
                "/recorded",
                STRING,
                STRING_HASH,
                Some(("ros2msg", "string data\n")),
            ),
            // Recorded, but its definition hashes otherwise: the recorded one is announced.
            ("/mismatch", INT32, OTHER, Some(("ros2msg", "int32 data\n"))),
            // Not recorded (Humble, ROS 1, RealSense): computed from the bag's definition.
            (
                "/humble",
                STRING,
                "",
                Some(("ros2msg", "# comment\nstring data\n")),
            ),
            // A definition that cannot be hashed: computed from the local (bundled) one.
            (
                "/imu",
                "sensor_msgs/msg/Imu",
                "",
                Some(("ros2idl", "module sensor_msgs {};")),
            ),
            // Nothing to compute from: no hash.
            ("/unknown", "unknown_msgs/msg/Thing", "", None),
        ],
    );
    let (bus, _clock) = virtual_bus();
    let observer = bus.node("observer", "/").unwrap();
    let player = Player::new(
        Arc::new(bus.node("rosbag2_player", "/").unwrap()),
        PlayOptions {
            bags: vec![bag],
            ..Default::default()
        },
    )
    .unwrap();
    let hash = |topic| announced(&observer, topic);
    assert_eq!(hash("/recorded"), [Some(STRING_HASH.to_string())]);
    assert_eq!(hash("/mismatch"), [Some(OTHER.to_string())]);
    assert_eq!(hash("/humble"), [Some(STRING_HASH.to_string())]);
    assert_eq!(hash("/imu"), [Some(IMU_HASH.to_string())]);
    assert_eq!(hash("/unknown"), [None]);
    drop(player);
}

#[test]
fn the_recorder_stores_the_hash_publishers_announce() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, _clock) = virtual_bus();
    let jazzy = bus.node("jazzy_talker", "/").unwrap();
    jazzy.register_type_hash(STRING, STRING_HASH);
    let jazzy_publisher = publisher(&jazzy, "/jazzy", STRING);
    // A Humble node announces no hash (rmw_zenoh: `TypeHashNotSupported`).
    let humble = bus.node("humble_talker", "/").unwrap();
    humble.register_type_hash(INT32, "TypeHashNotSupported");
    let humble_publisher = publisher(&humble, "/humble", INT32);
    let out = dir.path().join("out");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        options(out.clone(), TopicSelection::all()),
    );
    // The recorder's own subscription announces the publishers' hash.
    let subscriptions: Vec<Option<String>> = jazzy
        .topics()
        .into_iter()
        .filter(|t| t.name == "/jazzy")
        .flat_map(|t| t.subscriptions)
        .map(|s| s.type_hash)
        .collect();
    assert_eq!(subscriptions, [Some(STRING_HASH.to_string())]);
    jazzy_publisher.publish(&string_msg("hi")).unwrap();
    humble_publisher.publish(&payload(8, 1)).unwrap();
    recorder.stop().unwrap();
    let meta = metadata(&out);
    let recorded = |topic| {
        meta.topic(topic)
            .unwrap()
            .topic_metadata
            .type_description_hash
            .clone()
    };
    assert_eq!(recorded("/jazzy"), STRING_HASH);
    assert_eq!(recorded("/humble"), "");
}

#[test]
fn played_hashes_reach_a_recorder() {
    // Humble bag (no hash) → our player (computes) → our recorder (stores what it saw).
    let dir = tempfile::tempdir().unwrap();
    let input = bag(
        dir.path(),
        &[("/chatter", STRING, "", Some(("ros2msg", "string data\n")))],
    );
    let (bus, _clock) = virtual_bus();
    let out = dir.path().join("out");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        options(out.clone(), TopicSelection::all()),
    );
    let player = Player::new(
        Arc::new(bus.node("rosbag2_player", "/").unwrap()),
        PlayOptions {
            bags: vec![input],
            ..Default::default()
        },
    )
    .unwrap();
    recorder.discover_now();
    assert!(recorder.topics().contains(&"/chatter".to_string()));
    assert_eq!(player.play().unwrap().published, 1);
    drop(player);
    recorder.stop().unwrap();
    let meta = metadata(&out);
    assert_eq!(
        meta.topic("/chatter")
            .unwrap()
            .topic_metadata
            .type_description_hash,
        STRING_HASH
    );
}
