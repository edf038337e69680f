//! `metadata.yaml`: rosbag2's description of a bag, written as version 9 and read in every
//! version from 1 to 9.

use std::collections::BTreeMap;
use std::path::Path;

use yaml_rust2::Yaml;

use crate::error::{Result, StorageError};
use crate::message::TopicMetadata;
use crate::qos;
use crate::yaml::{self, Node};

/// File name of the metadata inside a bag directory.
pub const METADATA_FILENAME: &str = "metadata.yaml";
/// The metadata version this crate writes.
pub const METADATA_VERSION: i64 = 9;

/// A topic and how many messages the bag holds on it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopicInformation {
    /// The topic.
    pub topic_metadata: TopicMetadata,
    /// Messages recorded on the topic.
    pub message_count: u64,
}

/// One storage file of a bag.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileInformation {
    /// Path relative to the bag directory.
    pub path: String,
    /// Receive time of the earliest message, ns since the epoch.
    pub starting_time: i64,
    /// Latest minus earliest receive time, ns.
    pub duration: i64,
    /// Messages in the file.
    pub message_count: u64,
}

/// The `custom_data` key that names the file being written, while the bag is open.
pub const FILE_BEING_WRITTEN_KEY: &str = "rosbag2_rs.file_being_written";

/// The content of `metadata.yaml`.
#[derive(Debug, Clone, PartialEq)]
pub struct BagMetadata {
    /// Metadata version the bag was written with.
    pub version: i64,
    /// Sum of the storage files' sizes in bytes (not serialized).
    pub bag_size: u64,
    /// `mcap` or `sqlite3`.
    pub storage_identifier: String,
    /// Storage files relative to the bag directory, in order.
    pub relative_file_paths: Vec<String>,
    /// Per-file details (version 5 and later).
    pub files: Vec<FileInformation>,
    /// Latest minus earliest receive time, ns.
    pub duration: i64,
    /// Earliest receive time, ns since the epoch.
    pub starting_time: i64,
    /// Total number of messages.
    pub message_count: u64,
    /// Topics with their message counts.
    pub topics_with_message_count: Vec<TopicInformation>,
    /// rosbag2 file/message compression format (empty: none).
    pub compression_format: String,
    /// rosbag2 compression mode (empty: none).
    pub compression_mode: String,
    /// User key/value pairs (`--custom-data`).
    pub custom_data: BTreeMap<String, String>,
    /// ROS distribution the bag was recorded with.
    pub ros_distro: String,
}

impl Default for BagMetadata {
    fn default() -> Self {
        Self {
            version: METADATA_VERSION,
            bag_size: 0,
            storage_identifier: String::new(),
            relative_file_paths: Vec::new(),
            files: Vec::new(),
            duration: 0,
            starting_time: 0,
            message_count: 0,
            topics_with_message_count: Vec::new(),
            compression_format: String::new(),
            compression_mode: String::new(),
            custom_data: BTreeMap::new(),
            ros_distro: String::new(),
        }
    }
}

impl FileInformation {
    /// Receive time of the file's last message, ns: start plus duration, which a file may make
    /// overflow (saturates).
    pub fn end_time(&self) -> i64 {
        self.starting_time.saturating_add(self.duration)
    }
}

impl BagMetadata {
    /// Receive time of the last message, ns.
    pub fn end_time(&self) -> i64 {
        self.starting_time.saturating_add(self.duration)
    }

    /// Looks a topic up by name.
    pub fn topic(&self, name: &str) -> Option<&TopicInformation> {
        self.topics_with_message_count
            .iter()
            .find(|t| t.topic_metadata.name == name)
    }

    /// Recomputes the bag-level totals (start, duration, count) from `files`.
    pub fn recompute_totals_from_files(&mut self) {
        let non_empty: Vec<_> = self.files.iter().filter(|f| f.message_count > 0).collect();
        self.message_count = self.files.iter().map(|f| f.message_count).sum();
        if let (Some(start), Some(end)) = (
            non_empty.iter().map(|f| f.starting_time).min(),
            non_empty
                .iter()
                .map(|f| f.starting_time.saturating_add(f.duration))
                .max(),
        ) {
            self.starting_time = start;
            self.duration = end.saturating_sub(start);
        } else {
            self.starting_time = 0;
            self.duration = 0;
        }
    }

    /// Serializes as rosbag2 writes `metadata.yaml` (version 9).
    pub fn to_yaml_string(&self) -> String {
        let ns = |v: i64| Node::map([("nanoseconds", Node::Int(v.into()))]);
        let since_epoch = |v: i64| Node::map([("nanoseconds_since_epoch", Node::Int(v.into()))]);
        let topics = self
            .topics_with_message_count
            .iter()
            .map(|t| {
                let m = &t.topic_metadata;
                Node::map([
                    (
                        "topic_metadata",
                        Node::map([
                            ("name", Node::str(&m.name)),
                            ("type", Node::str(&m.type_name)),
                            ("serialization_format", Node::str(&m.serialization_format)),
                            (
                                "offered_qos_profiles",
                                qos::profiles_to_node(&m.offered_qos_profiles),
                            ),
                            ("type_description_hash", Node::str(&m.type_description_hash)),
                        ]),
                    ),
                    ("message_count", Node::Int(t.message_count.into())),
                ])
            })
            .collect();
        let file = |f: &FileInformation| {
            Node::map([
                ("path", Node::str(&f.path)),
                ("starting_time", since_epoch(f.starting_time)),
                ("duration", ns(f.duration)),
                ("message_count", Node::Int(f.message_count.into())),
            ])
        };
        let custom_data = if self.custom_data.is_empty() {
            Node::Null
        } else {
            Node::map(
                self.custom_data
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::str(v))),
            )
        };
        let head = Node::map([
            ("version", Node::Int(METADATA_VERSION.into())),
            ("storage_identifier", Node::str(&self.storage_identifier)),
            ("duration", ns(self.duration)),
            ("starting_time", since_epoch(self.starting_time)),
            ("message_count", Node::Int(self.message_count.into())),
            ("topics_with_message_count", Node::Seq(topics)),
            ("compression_format", Node::str(&self.compression_format)),
            ("compression_mode", Node::str(&self.compression_mode)),
        ]);
        let tail = Node::map([
            ("custom_data", custom_data),
            ("ros_distro", Node::str(&self.ros_distro)),
        ]);
        // The file lists are emitted entry by entry: a bag of thousands of files never has
        // them all as YAML nodes at once, and the text is sized once (about 200 bytes a file),
        // so the peak memory of a rewrite is that of the text.
        let mut out = String::with_capacity(4096 + 200 * self.files.len());
        out.push_str("rosbag2_bagfile_information:\n");
        yaml::emit_entries(&head, 2, &mut out);
        let paths = self.relative_file_paths.iter().map(Node::str);
        yaml::emit_key_seq("relative_file_paths", paths, 2, &mut out);
        yaml::emit_key_seq("files", self.files.iter().map(file), 2, &mut out);
        yaml::emit_entries(&tail, 2, &mut out);
        out
    }

    /// Parses `metadata.yaml` text of any version from 1 to 9. `origin` names the source in errors.
    pub fn from_yaml_str(text: &str, origin: &Path) -> Result<Self> {
        let err = |reason: String| StorageError::Metadata {
            path: origin.to_path_buf(),
            reason,
        };
        let docs = crate::limits::load_yaml(text).map_err(|e| err(format!("not YAML: {e}")))?;
        let doc = docs.first().ok_or_else(|| err("empty document".into()))?;
        let (info, version) = match &doc["rosbag2_bagfile_information"] {
            info @ Yaml::Hash(_) => (
                info,
                yaml::get_int(info, "version").ok_or_else(|| err("missing 'version'".into()))?,
            ),
            // What Python `rosbags` embeds in MCAP files: the information mapping itself, with
            // neither the outer key nor a version (it writes version 9's fields).
            _ if yaml::get_str(doc, "storage_identifier").is_some() => (
                doc,
                yaml::get_int(doc, "version").unwrap_or(METADATA_VERSION),
            ),
            _ => return Err(err("missing 'rosbag2_bagfile_information' mapping".into())),
        };
        if !(1..=METADATA_VERSION).contains(&version) {
            return Err(err(format!("unsupported metadata version {version} (this reader knows 1 to {METADATA_VERSION})")));
        }
        let req_str = |node: &Yaml, key: &str| {
            yaml::get_str(node, key).ok_or_else(|| err(format!("missing '{key}'")))
        };
        let nanos = |node: &Yaml, key: &str, inner: &str| {
            yaml::get_int(&node[key], inner).ok_or_else(|| err(format!("missing '{key}.{inner}'")))
        };
        let count = |node: &Yaml| {
            yaml::get_u64(node, "message_count")
                .ok_or_else(|| err("missing 'message_count'".into()))
        };

        let mut topics = Vec::new();
        for entry in info["topics_with_message_count"]
            .as_vec()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let t = &entry["topic_metadata"];
            let offered_qos_profiles = if version >= 4 {
                qos::profiles_from_yaml(&t["offered_qos_profiles"]).map_err(|source| {
                    StorageError::MetadataQos {
                        path: origin.to_path_buf(),
                        topic: yaml::get_str(t, "name").unwrap_or_default().to_string(),
                        source,
                    }
                })?
            } else {
                Vec::new()
            };
            topics.push(TopicInformation {
                topic_metadata: TopicMetadata {
                    name: req_str(t, "name")?,
                    type_name: req_str(t, "type")?,
                    serialization_format: req_str(t, "serialization_format")?,
                    offered_qos_profiles,
                    type_description_hash: yaml::get_str(t, "type_description_hash")
                        .unwrap_or_default(),
                },
                message_count: count(entry)?,
            });
        }
        let mut files = Vec::new();
        if version >= 5 {
            for f in info["files"]
                .as_vec()
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                files.push(FileInformation {
                    path: req_str(f, "path")?,
                    starting_time: nanos(f, "starting_time", "nanoseconds_since_epoch")?,
                    duration: nanos(f, "duration", "nanoseconds")?,
                    message_count: count(f)?,
                });
            }
        }
        let custom_data = info["custom_data"]
            .as_hash()
            .map(|h| {
                h.iter()
                    .filter_map(|(k, v)| {
                        Some((
                            yaml::scalar_string(k)?,
                            yaml::scalar_string(v).unwrap_or_default(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self {
            version,
            bag_size: 0,
            storage_identifier: yaml::get_str(info, "storage_identifier").unwrap_or_default(),
            relative_file_paths: info["relative_file_paths"]
                .as_vec()
                .map(|v| v.iter().filter_map(yaml::scalar_string).collect())
                .unwrap_or_default(),
            files,
            duration: nanos(info, "duration", "nanoseconds")?,
            starting_time: nanos(info, "starting_time", "nanoseconds_since_epoch")?,
            message_count: count(info)?,
            topics_with_message_count: topics,
            compression_format: yaml::get_str(info, "compression_format").unwrap_or_default(),
            compression_mode: yaml::get_str(info, "compression_mode").unwrap_or_default(),
            custom_data,
            ros_distro: yaml::get_str(info, "ros_distro").unwrap_or_default(),
        })
    }

    /// Reads `<bag_dir>/metadata.yaml`.
    pub fn read_from_dir(bag_dir: &Path) -> Result<Self> {
        let path = bag_dir.join(METADATA_FILENAME);
        let text = std::fs::read_to_string(&path).map_err(|e| StorageError::io(&path, e))?;
        Self::from_yaml_str(&text, &path)
    }

    /// Writes `<bag_dir>/metadata.yaml` atomically (temporary file, fsync, rename), so a crash
    /// leaves either the old or the new metadata, never half of one.
    pub fn write_to_dir(&self, bag_dir: &Path) -> Result<()> {
        let path = bag_dir.join(METADATA_FILENAME);
        let tmp = bag_dir.join(".metadata.yaml.tmp");
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(self.to_yaml_string().as_bytes())?;
            f.sync_data()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| StorageError::io(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::{Durability, QosProfile};

    fn sample() -> BagMetadata {
        let mut topic = TopicMetadata::new("/chatter", "std_msgs/msg/String");
        topic.offered_qos_profiles = vec![QosProfile {
            durability: Durability::TransientLocal,
            ..Default::default()
        }];
        topic.type_description_hash = "RIHS01_abc".into();
        BagMetadata {
            storage_identifier: "mcap".into(),
            relative_file_paths: vec!["bag_0.mcap".into()],
            files: vec![FileInformation {
                path: "bag_0.mcap".into(),
                starting_time: 5,
                duration: 10,
                message_count: 3,
            }],
            duration: 10,
            starting_time: 5,
            message_count: 3,
            topics_with_message_count: vec![TopicInformation {
                topic_metadata: topic,
                message_count: 3,
            }],
            custom_data: [("k".to_string(), "v: 1".to_string())].into(),
            ros_distro: "jazzy".into(),
            ..Default::default()
        }
    }

    #[test]
    fn v9_round_trip() {
        let m = sample();
        let text = m.to_yaml_string();
        assert!(
            text.starts_with("rosbag2_bagfile_information:\n  version: 9\n"),
            "{text}"
        );
        assert!(
            text.contains("        offered_qos_profiles:\n          - history: keep_last\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  compression_mode: \"\"\n  relative_file_paths:\n    - bag_0.mcap\n  files:\n    \
                 - path: bag_0.mcap\n      starting_time:\n        nanoseconds_since_epoch: 5\n      \
                 duration:\n        nanoseconds: 10\n      message_count: 3\n  custom_data:\n"
            ),
            "{text}"
        );
        assert_eq!(
            BagMetadata::from_yaml_str(&text, Path::new("m")).unwrap(),
            m
        );
        let empty = BagMetadata::default().to_yaml_string();
        assert!(
            empty.contains("\n  relative_file_paths: []\n  files: []\n  custom_data: ~\n"),
            "{empty}"
        );
    }

    #[test]
    fn reads_v4_with_qos_as_string() {
        let text = "rosbag2_bagfile_information:\n  version: 4\n  storage_identifier: sqlite3\n  relative_file_paths:\n    - b.db3\n  duration:\n    nanoseconds: 7\n  starting_time:\n    nanoseconds_since_epoch: 100\n  message_count: 2\n  topics_with_message_count:\n    - topic_metadata:\n        name: /t\n        type: std_msgs/msg/Int32\n        serialization_format: cdr\n        offered_qos_profiles: \"- history: 1\\n  depth: 5\\n  reliability: 2\\n  durability: 1\\n  deadline:\\n    sec: 0\\n    nsec: 0\\n  lifespan:\\n    sec: 0\\n    nsec: 0\\n  liveliness: 1\\n  liveliness_lease_duration:\\n    sec: 0\\n    nsec: 0\\n  avoid_ros_namespace_conventions: false\"\n      message_count: 2\n  compression_format: \"\"\n  compression_mode: \"\"\n";
        let m = BagMetadata::from_yaml_str(text, Path::new("m")).unwrap();
        assert_eq!(m.version, 4);
        let q = &m.topics_with_message_count[0]
            .topic_metadata
            .offered_qos_profiles[0];
        assert_eq!((q.depth, q.durability), (5, Durability::TransientLocal));
        assert!(m.files.is_empty());
    }

    #[test]
    fn reads_v1_without_qos() {
        let text = "rosbag2_bagfile_information:\n  version: 1\n  storage_identifier: sqlite3\n  relative_file_paths: [a.db3]\n  duration: {nanoseconds: 1}\n  starting_time: {nanoseconds_since_epoch: 2}\n  message_count: 0\n  topics_with_message_count: []\n";
        let m = BagMetadata::from_yaml_str(text, Path::new("m")).unwrap();
        assert_eq!(m.relative_file_paths, vec!["a.db3"]);
    }

    #[test]
    fn malformed_metadata_is_a_clear_error() {
        for (text, needle) in [
            ("{{{", "not YAML"),
            ("foo: 1", "rosbag2_bagfile_information"),
            (
                "rosbag2_bagfile_information:\n  version: 42\n",
                "unsupported metadata version 42",
            ),
            (
                "rosbag2_bagfile_information:\n  version: 9\n",
                "missing 'duration.nanoseconds'",
            ),
        ] {
            let e = BagMetadata::from_yaml_str(text, Path::new("/bag/metadata.yaml"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("/bag/metadata.yaml") && e.contains(needle),
                "{e}"
            );
        }
    }

    #[test]
    fn the_layout_rosbags_embeds_is_read() {
        let text = "compression_format: ''\ncompression_mode: ''\ncustom_data: null\nduration:\n  nanoseconds: 5\nfiles:\n- duration:\n    nanoseconds: 5\n  message_count: 1\n  path: b.mcap\n  starting_time:\n    nanoseconds_since_epoch: 1\nmessage_count: 1\nrelative_file_paths:\n- b.mcap\nros_distro: rosbags\nstarting_time:\n  nanoseconds_since_epoch: 1\nstorage_identifier: mcap\ntopics_with_message_count:\n- message_count: 1\n  topic_metadata:\n    name: /chatter\n    offered_qos_profiles: []\n    serialization_format: cdr\n    type: std_msgs/msg/String\n    type_description_hash: ''\n";
        let m = BagMetadata::from_yaml_str(text, Path::new("b.mcap")).unwrap();
        assert_eq!((m.message_count, m.duration, m.starting_time), (1, 5, 1));
        assert_eq!(
            m.topics_with_message_count[0].topic_metadata.name,
            "/chatter"
        );
        assert_eq!(m.ros_distro, "rosbags");
    }
}
