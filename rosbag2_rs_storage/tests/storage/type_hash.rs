//! RIHS01 type hashes against what ROS 2 itself produced: the hashes ROS 2 Jazzy's code
//! generator wrote for every bundled interface, and the hashes rosbag2 recorded in its own test
//! bags, recomputed from the definitions those bags store.

use std::collections::BTreeMap;
use std::path::Path;

use rosbag2_rs_codec::{type_hash, MessageDefinitionCache};
use rosbag2_rs_storage::storage::{open_reader, OpenMode};

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// `type hash` lines of `tests/data/jazzy_type_hashes.txt`.
fn jazzy_hashes() -> BTreeMap<String, String> {
    std::fs::read_to_string(data("jazzy_type_hashes.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (name, hash) = l.split_once(' ').unwrap();
            (name.to_string(), hash.to_string())
        })
        .collect()
}

#[test]
fn every_bundled_type_hashes_as_ros2_jazzy_generated_it() {
    let golden = jazzy_hashes();
    let mut cache = MessageDefinitionCache::with_prefixes(Vec::new());
    let mut compared = 0;
    let mut wrong = Vec::new();
    for name in MessageDefinitionCache::bundled_types() {
        let Some(expected) = golden.get(&name) else {
            continue;
        };
        compared += 1;
        match cache.type_hash(&name) {
            Ok(hash) if &hash == expected => {}
            other => wrong.push(format!("{name}: {other:?}, Jazzy: {expected}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every bundled message of std_msgs, geometry_msgs, sensor_msgs, ... and the services'
    // request, response and event messages.
    assert!(compared >= 140, "only {compared} bundled types compared");
}

#[test]
fn hashes_recorded_by_rosbag2_are_recomputed_from_its_stored_definitions() {
    let mut checked = BTreeMap::new();
    for bag in [
        "rosbag2/topics_and_services.mcap",
        "rosbag2/bag_with_topics_and_service_events.mcap",
    ] {
        let reader = open_reader(&data(bag), OpenMode::Strict).unwrap();
        for topic in reader.topics() {
            let meta = &topic.topic_metadata;
            let definition = reader
                .message_definitions()
                .iter()
                .find(|d| d.topic_type == meta.type_name)
                .unwrap_or_else(|| panic!("{bag}: no definition for {}", meta.type_name));
            assert!(
                type_hash::is_rihs01(&meta.type_description_hash),
                "{meta:?}"
            );
            assert_eq!(
                type_hash::rihs01(&meta.type_name, definition).as_deref(),
                Ok(meta.type_description_hash.as_str()),
                "{bag}: {}",
                meta.name
            );
            checked.insert(meta.type_name.clone(), ());
        }
    }
    // Messages with constants, defaults and bounded strings (test_msgs/msg/Strings), and
    // service events stored as `.srv` text, with `char` fields (test_msgs/srv/BasicTypes).
    assert_eq!(
        checked.into_keys().collect::<Vec<_>>(),
        [
            "example_interfaces/srv/AddTwoInts_Event",
            "rcl_interfaces/msg/Log",
            "rcl_interfaces/msg/ParameterEvent",
            "rosbag2_interfaces/msg/WriteSplitEvent",
            "test_msgs/msg/Strings",
            "test_msgs/srv/BasicTypes_Event",
        ]
    );
}

#[test]
fn definitions_from_an_install_prefix_are_hashed() {
    let dir = tempfile::tempdir().unwrap();
    let msg = dir.path().join("share/my_pkg/msg");
    std::fs::create_dir_all(&msg).unwrap();
    std::fs::write(msg.join("Text.msg"), "# mine\nstring data\n").unwrap();
    let mut cache = MessageDefinitionCache::with_prefixes(vec![dir.path().into()]);
    let mine = cache.type_hash("my_pkg/msg/Text").unwrap();
    let mut bundled = MessageDefinitionCache::with_prefixes(Vec::new());
    let string = bundled.type_hash("std_msgs/msg/String").unwrap();
    // Same fields, another name: another hash.
    assert_ne!(mine, string);
    assert!(type_hash::is_rihs01(&mine));
    // Cached: the file is no longer read.
    std::fs::remove_file(msg.join("Text.msg")).unwrap();
    assert_eq!(cache.type_hash("my_pkg/msg/Text").unwrap(), mine);
}
