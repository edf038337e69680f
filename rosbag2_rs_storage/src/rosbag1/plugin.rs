//! The `rosbag_v2` storage plugin: a ROS 1 bag seen as a rosbag2 storage file. Reading converts
//! every message to CDR and its type to the ROS 2 one (as `rosbags-convert` maps them), so the
//! player, `info`, `cat` and `convert` work on ROS 1 bags unchanged; writing converts the other
//! way.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::reader::{BagReader, Connection};
use super::writer::{BagWriter, WriterOptions};
use crate::error::{Result, StorageError};
use crate::filter::TopicFilter;
use crate::formats::CompressionFormat;
use crate::formats::StorageId;
use crate::message::{SerializedMessage, TopicMetadata};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use crate::qos::{Durability, History, QosProfile};
use crate::storage::plugin::{OpenMode, StorageReader, StorageWriter, UnreadableTopic};
use rosbag2_rs_codec::msg::transcode::{CdrToRos1, Ros1ToCdr};
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_codec::MessageDefinitionCache;

/// The QoS a latched ROS 1 topic is given (and recognised by): transient local, keep last 1.
fn latched_qos() -> QosProfile {
    QosProfile {
        history: History::KeepLast,
        depth: 1,
        durability: Durability::TransientLocal,
        ..QosProfile::default()
    }
}

struct Topic {
    name: Arc<str>,
    converter: Arc<Ros1ToCdr>,
    selected: bool,
}

/// Reads a ROS 1 bag as CDR messages of ROS 2 types.
pub struct Ros1Reader {
    bag: BagReader,
    /// Per connection id.
    by_connection: HashMap<u32, Topic>,
    topics: Vec<TopicInformation>,
    definitions: Vec<MessageDefinition>,
    unreadable: Vec<UnreadableTopic>,
    info: FileInformation,
}

impl Ros1Reader {
    /// Opens a ROS 1 bag. Connections whose type cannot be converted are left out and listed by
    /// [`StorageReader::unreadable_topics`].
    pub fn open(path: &Path, mode: OpenMode) -> Result<Self> {
        let bag = BagReader::open(path, mode)?;
        let counts = bag.message_counts();
        let mut converters: HashMap<(String, String), Arc<Ros1ToCdr>> = HashMap::new();
        let mut by_connection = HashMap::new();
        let mut topics: Vec<TopicInformation> = Vec::new();
        let mut definitions: Vec<MessageDefinition> = Vec::new();
        let mut unreadable: Vec<UnreadableTopic> = Vec::new();
        for c in bag.connections() {
            let key = (c.type_name.clone(), c.message_definition.clone());
            let converter = match converters.get(&key) {
                Some(conv) => conv.clone(),
                None => match Ros1ToCdr::new(&c.type_name, &c.message_definition) {
                    Ok(conv) => {
                        let conv = Arc::new(conv);
                        converters.insert(key, conv.clone());
                        conv
                    }
                    Err(e) => {
                        if !unreadable.iter().any(|u| u.topic == c.topic) {
                            unreadable.push(UnreadableTopic {
                                topic: c.topic.clone(),
                                type_name: c.type_name.clone(),
                                reason: e.to_string(),
                            });
                        }
                        continue;
                    }
                },
            };
            let count = counts.get(&c.id).copied().unwrap_or(0);
            let index = match topics.iter().position(|t| t.topic_metadata.name == c.topic) {
                Some(i) if topics[i].topic_metadata.type_name != converter.ros2_type => {
                    log::warn!(
                        "{}: topic '{}' has connections of types '{}' and '{}'; reading only the first",
                        path.display(),
                        c.topic,
                        topics[i].topic_metadata.type_name,
                        converter.ros2_type
                    );
                    continue;
                }
                Some(i) => i,
                None => {
                    let metadata = TopicMetadata::new(c.topic.clone(), converter.ros2_type.clone());
                    topics.push(TopicInformation {
                        topic_metadata: metadata.clone(),
                        message_count: 0,
                    });
                    if !definitions
                        .iter()
                        .any(|d| d.topic_type == converter.ros2_type)
                    {
                        definitions.push(MessageDefinition {
                            topic_type: converter.ros2_type.clone(),
                            encoding: "ros2msg".into(),
                            encoded_message_definition: converter.ros2_definition.clone(),
                            type_description_hash: String::new(),
                        });
                    }
                    topics.len() - 1
                }
            };
            let topic = &mut topics[index];
            topic.message_count += count;
            if c.latching && topic.topic_metadata.offered_qos_profiles.is_empty() {
                topic
                    .topic_metadata
                    .offered_qos_profiles
                    .push(latched_qos());
            }
            by_connection.insert(
                c.id,
                Topic {
                    name: c.topic.as_str().into(),
                    converter,
                    selected: true,
                },
            );
        }
        let (first, last) = bag.time_range().unwrap_or((0, 0));
        let info = FileInformation {
            path: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            starting_time: first,
            duration: last.saturating_sub(first),
            message_count: topics.iter().map(|t| t.message_count).sum(),
        };
        let mut reader = Self {
            bag,
            by_connection,
            topics,
            definitions,
            unreadable,
            info,
        };
        reader.apply_selection();
        Ok(reader)
    }

    /// The underlying ROS 1 bag.
    pub fn bag(&self) -> &BagReader {
        &self.bag
    }

    fn apply_selection(&mut self) {
        let selected: HashMap<u32, bool> = self
            .by_connection
            .iter()
            .map(|(&id, t)| (id, t.selected))
            .collect();
        self.bag
            .set_filter(|c: &Connection| selected.get(&c.id).copied().unwrap_or(false));
    }
}

impl StorageReader for Ros1Reader {
    fn path(&self) -> &Path {
        self.bag.path()
    }

    fn storage_id(&self) -> StorageId {
        StorageId::Rosbag1
    }

    fn topics(&self) -> &[TopicInformation] {
        &self.topics
    }

    fn message_definitions(&self) -> &[MessageDefinition] {
        &self.definitions
    }

    fn unreadable_topics(&self) -> &[UnreadableTopic] {
        &self.unreadable
    }

    fn set_filter(&mut self, filter: &TopicFilter) {
        for topic in self.by_connection.values_mut() {
            topic.selected = filter.matches(&topic.name);
        }
        self.apply_selection();
    }

    fn seek(&mut self, time_ns: i64) -> Result<()> {
        self.bag.seek(time_ns);
        Ok(())
    }

    fn read_next(&mut self) -> Result<Option<SerializedMessage>> {
        let Some(raw) = self.bag.read_next()? else {
            return Ok(None);
        };
        let Some(topic) = self.by_connection.get(&raw.connection) else {
            return Err(StorageError::corrupt(
                self.bag.path(),
                format!("message of unknown connection {}", raw.connection),
            ));
        };
        let data = topic.converter.convert(&raw.data).map_err(|e| {
            StorageError::corrupt(
                self.bag.path(),
                format!("topic '{}', message at {} ns: {e}", topic.name, raw.time),
            )
        })?;
        Ok(Some(SerializedMessage::new(
            topic.name.clone(),
            raw.time,
            data,
        )))
    }

    fn file_information(&self) -> FileInformation {
        self.info.clone()
    }

    fn embedded_metadata(&self) -> Option<BagMetadata> {
        None
    }
}

/// Writes CDR messages of ROS 2 types into a ROS 1 bag.
pub struct Ros1Writer {
    bag: Option<BagWriter>,
    path: PathBuf,
    /// Per topic: connection id and converter.
    topics: HashMap<String, (u32, CdrToRos1)>,
    definitions: MessageDefinitionCache,
}

impl Ros1Writer {
    /// Creates the bag; `path` must not exist.
    pub fn create(
        path: PathBuf,
        compression: CompressionFormat,
        chunk_threshold: usize,
    ) -> Result<Self> {
        let bag = BagWriter::create(
            &path,
            WriterOptions {
                compression,
                chunk_threshold,
            },
        )?;
        Ok(Self {
            bag: Some(bag),
            path,
            topics: HashMap::new(),
            definitions: MessageDefinitionCache::new(),
        })
    }

    fn bag(&mut self) -> Result<&mut BagWriter> {
        self.bag.as_mut().ok_or_else(|| {
            StorageError::InvalidArgument(format!("{}: already finished", self.path.display()))
        })
    }
}

impl StorageWriter for Ros1Writer {
    fn path(&self) -> &Path {
        &self.path
    }

    fn create_topic(
        &mut self,
        topic: &TopicMetadata,
        definition: &MessageDefinition,
    ) -> Result<()> {
        if self.topics.contains_key(&topic.name) {
            return Ok(());
        }
        let unmappable = |reason: String| {
            StorageError::InvalidArgument(format!(
                "{}: topic '{}' ({}) cannot be written to a ROS 1 bag: {reason}",
                self.path.display(),
                topic.name,
                topic.type_name
            ))
        };
        if topic.serialization_format != "cdr" {
            return Err(unmappable(format!(
                "serialization '{}'",
                topic.serialization_format
            )));
        }
        let definition = if definition.encoded_message_definition.is_empty() {
            self.definitions.definition(&topic.type_name)
        } else {
            definition.clone()
        };
        if definition.encoding != "ros2msg" {
            return Err(unmappable(format!(
                "no ros2msg definition (encoding '{}')",
                definition.encoding
            )));
        }
        let converter = CdrToRos1::new(&topic.type_name, &definition.encoded_message_definition)
            .map_err(|e| unmappable(e.to_string()))?;
        let latching = topic
            .offered_qos_profiles
            .iter()
            .any(|q| q.durability == Durability::TransientLocal);
        let id = self.bag()?.add_connection(Connection {
            id: 0,
            topic: topic.name.clone(),
            type_name: converter.ros1_type.clone(),
            md5sum: converter.md5sum.clone(),
            message_definition: converter.ros1_definition.clone(),
            callerid: None,
            latching,
        });
        self.topics.insert(topic.name.clone(), (id, converter));
        Ok(())
    }

    fn write(&mut self, message: &SerializedMessage) -> Result<()> {
        let Some((id, converter)) = self.topics.get(&*message.topic) else {
            return Err(StorageError::InvalidArgument(format!(
                "{}: message on topic '{}', which was not created",
                self.path.display(),
                message.topic
            )));
        };
        let data = converter.convert(&message.data).map_err(|e| {
            StorageError::InvalidArgument(format!(
                "{}: topic '{}', message at {} ns: {e}",
                self.path.display(),
                message.topic,
                message.recv_timestamp
            ))
        })?;
        let id = *id;
        self.bag()?.write(id, message.recv_timestamp, &data)
    }

    fn bytes_written(&self) -> u64 {
        self.bag.as_ref().map_or(0, BagWriter::bytes_written)
    }

    fn flush(&mut self) -> Result<()> {
        self.bag()?.flush()
    }

    fn update_metadata(&mut self, _metadata: &BagMetadata) -> Result<()> {
        // ROS 1 bags have no place for rosbag2 metadata.
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        match self.bag.take() {
            Some(bag) => bag.finish(),
            None => Ok(()),
        }
    }
}
