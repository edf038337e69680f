//! The two containers the SDK writes, behind one message stream: ROS 1 bags read as stored (ROS 1
//! bytes, decoded leniently: the SDK appends bytes to some images) and rosbag2 SQLite3 files
//! read as CDR. Each message comes decoded, with its type for reading fields by name.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rosbag2_rs_codec::msg::{
    decode_cdr_at, decode_ros1_prefix_at, CodecError, Dialect, MessageView, Registry, Value,
};
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::rosbag1::{is_rosbag1, BagReader};
use rosbag2_rs_storage::{OpenMode, SequentialReader, TopicFilter};

use crate::error::RealSenseError;

/// A type's registry and the type's index in it.
type Decoder = (Arc<Registry>, usize);

/// One message, decoded when first looked at.
pub struct Decoded {
    /// Its topic.
    pub topic: Arc<str>,
    /// Bag time, ns.
    pub time: i64,
    decoder: Decoder,
    /// The serialized bytes: ROS 1 (`ros1`) or CDR.
    bytes: bytes::Bytes,
    ros1: bool,
    value: std::sync::OnceLock<Result<Value, CodecError>>,
}

impl Decoded {
    /// The message, for reading fields by name.
    pub fn view(&self) -> Result<MessageView<'_>, CodecError> {
        let value = self.value.get_or_init(|| {
            let (reg, index) = (&self.decoder.0, self.decoder.1);
            if self.ros1 {
                decode_ros1_prefix_at(reg, index, &self.bytes).map(|(v, _)| v)
            } else {
                decode_cdr_at(reg, index, &self.bytes).map(|(v, _)| v)
            }
        });
        match value {
            Ok(v) => Ok(MessageView::new(&self.decoder.0, self.decoder.1, v)),
            Err(e) => Err(e.clone()),
        }
    }

    /// The message type (`pkg/Type`).
    pub fn type_name(&self) -> &str {
        &self.decoder.0.by_index(self.decoder.1).name
    }

    /// The ROS 1 bytes, for messages read from a ROS 1 bag.
    pub fn ros1_bytes(&self) -> Option<&bytes::Bytes> {
        self.ros1.then_some(&self.bytes)
    }
}

/// Where the messages come from.
pub enum Source {
    /// A ROS 1 bag (SDK 2.57 and older).
    Ros1 {
        bag: Box<BagReader>,
        /// Per connection id: topic and decoder.
        connections: HashMap<u32, (Arc<str>, Decoder)>,
    },
    /// A rosbag2 SQLite3 file (SDK 2.58 and newer).
    Ros2 {
        reader: Box<SequentialReader>,
        /// Per topic: decoder, or why there is none.
        topics: HashMap<String, Result<Decoder, CodecError>>,
    },
}

fn decoder(type_name: &str, definition: &str, dialect: Dialect) -> Result<Decoder, CodecError> {
    let mut reg = Registry::new();
    reg.parse_concatenated(type_name, definition, dialect)?;
    let index = reg
        .index_of(type_name)
        .ok_or_else(|| CodecError::Missing(type_name.to_string()))?;
    Ok((Arc::new(reg), index))
}

/// A codec error on `topic` of `path`.
pub(crate) fn codec(path: &Path, topic: &str, source: CodecError) -> RealSenseError {
    RealSenseError::Codec {
        path: path.to_path_buf(),
        topic: topic.to_string(),
        source: Box::new(source),
    }
}

fn invalid(path: &Path, topic: &str, reason: impl Into<String>) -> RealSenseError {
    RealSenseError::Invalid {
        path: path.to_path_buf(),
        topic: topic.to_string(),
        reason: reason.into(),
    }
}

/// True when `path` is a ROS 1 bag (by its first bytes).
pub fn is_ros1(path: &Path) -> Result<bool, RealSenseError> {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| rosbag2_rs_storage::StorageError::io(path, e))?;
    Ok(is_rosbag1(&head[..n]))
}

impl Source {
    /// Opens a recording of either kind.
    pub fn open(path: &Path) -> Result<Self, RealSenseError> {
        if is_ros1(path)? {
            let bag = BagReader::open(path, OpenMode::Strict)?;
            let mut connections = HashMap::new();
            let mut by_type: HashMap<(String, String), Decoder> = HashMap::new();
            for c in bag.connections() {
                let key = (c.type_name.clone(), c.message_definition.clone());
                let d = match by_type.get(&key) {
                    Some(d) => d.clone(),
                    None => {
                        let d = decoder(&c.type_name, &c.message_definition, Dialect::Ros1)
                            .map_err(|e| codec(path, &c.topic, e))?;
                        by_type.insert(key, d.clone());
                        d
                    }
                };
                connections.insert(c.id, (Arc::from(c.topic.as_str()), d));
            }
            return Ok(Self::Ros1 {
                bag: Box::new(bag),
                connections,
            });
        }
        let reader = SequentialReader::open(path)?;
        let mut cache = MessageDefinitionCache::new();
        let mut topics = HashMap::new();
        for t in reader.topics() {
            let type_name = &t.topic_metadata.type_name;
            let def = reader.message_definition(type_name, &mut cache);
            topics.insert(
                t.topic_metadata.name.clone(),
                decoder(type_name, &def.encoded_message_definition, Dialect::Ros2),
            );
        }
        Ok(Self::Ros2 {
            reader: Box::new(reader),
            topics,
        })
    }

    /// File times of the first and the last message (ns).
    pub fn time_range(&self) -> (i64, i64) {
        match self {
            Self::Ros1 { bag, .. } => bag.time_range().unwrap_or((0, 0)),
            Self::Ros2 { reader, .. } => (reader.start_time(), reader.end_time()),
        }
    }

    /// Every topic name.
    pub fn topics(&self) -> Vec<String> {
        match self {
            Self::Ros1 { connections, .. } => {
                let mut v: Vec<String> = connections.values().map(|(t, _)| t.to_string()).collect();
                v.sort();
                v.dedup();
                v
            }
            Self::Ros2 { topics, .. } => topics.keys().cloned().collect(),
        }
    }

    /// Reads only the topics `keep` accepts, from the start.
    pub fn select(&mut self, keep: impl Fn(&str) -> bool) -> Result<(), RealSenseError> {
        match self {
            Self::Ros1 { bag, connections } => {
                bag.set_filter(|c| connections.get(&c.id).is_some_and(|(t, _)| keep(t)));
                bag.seek(i64::MIN);
            }
            Self::Ros2 { reader, topics } => {
                let wanted: Vec<String> = topics.keys().filter(|t| keep(t)).cloned().collect();
                reader.set_filter(&TopicFilter::topics(wanted))?;
                reader.seek(i64::MIN)?;
            }
        }
        Ok(())
    }

    /// Repositions so that the next message is the first at or after `time_ns`.
    pub fn seek(&mut self, time_ns: i64) -> Result<(), RealSenseError> {
        match self {
            Self::Ros1 { bag, .. } => bag.seek(time_ns),
            Self::Ros2 { reader, .. } => reader.seek(time_ns)?,
        }
        Ok(())
    }

    /// The next message in time order, decoded.
    pub fn next(&mut self, path: &Path) -> Result<Option<Decoded>, RealSenseError> {
        match self {
            Self::Ros1 { bag, connections } => {
                let Some(m) = bag.read_next()? else {
                    return Ok(None);
                };
                let Some((topic, d)) = connections.get(&m.connection) else {
                    return Err(invalid(
                        path,
                        "?",
                        format!("unknown connection {}", m.connection),
                    ));
                };
                Ok(Some(Decoded {
                    topic: topic.clone(),
                    time: m.time,
                    decoder: d.clone(),
                    bytes: m.data,
                    ros1: true,
                    value: Default::default(),
                }))
            }
            Self::Ros2 { reader, topics } => {
                let Some(m) = reader.read_next()? else {
                    return Ok(None);
                };
                let d = match topics.get(&*m.topic) {
                    Some(Ok(d)) => d.clone(),
                    Some(Err(e)) => return Err(codec(path, &m.topic, e.clone())),
                    None => return Err(invalid(path, &m.topic, "not listed in the file")),
                };
                Ok(Some(Decoded {
                    topic: m.topic,
                    time: m.recv_timestamp,
                    decoder: d,
                    bytes: m.data,
                    ros1: false,
                    value: Default::default(),
                }))
            }
        }
    }
}
