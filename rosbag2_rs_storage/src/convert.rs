//! `convert`: merge bags and rewrite them in another storage, compression or selection, including
//! ROS 1 bags in (converted to CDR by the `rosbag_v2` reader) and out (a single `.bag` file).
//! Inputs compressed by rosbag2 (file or message mode) are decompressed as they are read; the
//! output is compressed as [`BagWriterOptions::compression`] says.

use std::path::PathBuf;

use crate::error::{Result, StorageError};
use crate::filter::TopicFilter;
use crate::message::{MessageDefinition, SerializedMessage, TopicMetadata};
use crate::metadata::BagMetadata;
use crate::msgdefs::MessageDefinitionCache;
use crate::reader::SequentialReader;
use crate::storage::{create_writer, StorageId, StorageWriter};
use crate::writer::{BagWriter, BagWriterOptions};

/// What to convert.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// Input bags, merged in receive-time order.
    pub inputs: Vec<PathBuf>,
    /// The output bag.
    pub output: BagWriterOptions,
    /// Topics to keep.
    pub filter: TopicFilter,
    /// Keep messages received at or after this time (ns).
    pub start: Option<i64>,
    /// Keep messages received at or before this time (ns).
    pub end: Option<i64>,
    /// Leave out (with a warning) topics whose type cannot be converted, instead of failing.
    pub skip_unknown: bool,
}

/// Converts; returns the output bag's metadata. Topics keep their QoS and definitions; only
/// topics with at least one message in range are written. With a start, each transient-local
/// topic's last message from before it is kept too, at its original time.
pub fn convert(options: &ConvertOptions) -> Result<BagMetadata> {
    if let (Some(start), Some(end)) = (options.start, options.end) {
        if start > end {
            return Err(StorageError::InvalidArgument(format!(
                "the start ({start} ns) is after the end ({end} ns)"
            )));
        }
    }
    let mut reader = SequentialReader::open_many(&options.inputs)?;
    if !reader
        .topics()
        .iter()
        .any(|t| options.filter.matches(&t.topic_metadata.name))
    {
        let names: Vec<&str> = reader
            .topics()
            .iter()
            .map(|t| t.topic_metadata.name.as_str())
            .collect();
        return Err(StorageError::InvalidArgument(format!(
            "no topic of the input matches the selection (the input has {})",
            names.join(", ")
        )));
    }
    if options.start.is_some_and(|s| s > reader.end_time()) {
        return Err(StorageError::InvalidArgument(format!(
            "the start is after the input's last message ({} ns)",
            reader.end_time()
        )));
    }
    let unreadable = reader.unreadable_topics();
    if !unreadable.is_empty() {
        let list: Vec<String> = unreadable
            .iter()
            .map(|u| format!("'{}' ({}): {}", u.topic, u.type_name, u.reason))
            .collect();
        if !options.skip_unknown {
            return Err(StorageError::InvalidArgument(format!(
                "cannot convert {} (use --skip-unknown to leave them out)",
                list.join("; ")
            )));
        }
        for line in list {
            log::warn!("skipping topic {line}");
        }
    }
    let latched = match options.start {
        Some(start) => latched_before(&mut reader, &options.filter, start)?,
        None => Vec::new(),
    };
    reader.set_filter(&options.filter)?;
    if let Some(start) = options.start {
        reader.seek(start)?;
    }
    let mut output = options.output.clone();
    for bag in reader.bags() {
        for (k, v) in &bag.metadata.custom_data {
            output
                .custom_data
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
    }
    let mut writer = Output::create(output)?;
    let mut cache = MessageDefinitionCache::new();
    let mut created = std::collections::HashSet::new();
    let mut latched = latched.into_iter();
    while let Some(message) = latched
        .next()
        .map_or_else(|| reader.read_next(), |m| Ok(Some(m)))?
    {
        if options.end.is_some_and(|end| message.recv_timestamp > end) {
            break;
        }
        if !created.contains(&*message.topic) {
            if let Some(info) = reader
                .topics()
                .iter()
                .find(|t| *t.topic_metadata.name == *message.topic)
            {
                let def = reader.message_definition(&info.topic_metadata.type_name, &mut cache);
                writer.create_topic(&info.topic_metadata, def)?;
            }
            created.insert(message.topic.to_string());
        }
        writer.write(&message)?;
    }
    if created.is_empty() {
        log::warn!("no message lies in the selected time range: the output is empty");
    }
    writer.close()
}

/// The last message before `start` of every selected transient-local topic, in receive-time
/// order: a cut keeps the latched state (`/tf_static`, `/robot_description`) at its original
/// time, so that the output alone can be played or visualised.
fn latched_before(
    reader: &mut SequentialReader,
    filter: &TopicFilter,
    start: i64,
) -> Result<Vec<SerializedMessage>> {
    let topics: Vec<String> = reader
        .topics()
        .iter()
        .map(|t| &t.topic_metadata)
        .filter(|t| t.is_transient_local() && filter.matches(&t.name))
        .map(|t| t.name.clone())
        .collect();
    if topics.is_empty() || start <= reader.start_time() {
        return Ok(Vec::new());
    }
    reader.set_filter(&TopicFilter::topics(topics))?;
    let mut last: std::collections::HashMap<std::sync::Arc<str>, SerializedMessage> =
        std::collections::HashMap::new();
    while let Some(message) = reader.read_next()? {
        if message.recv_timestamp >= start {
            break;
        }
        last.insert(message.topic.clone(), message);
    }
    reader.seek(reader.start_time())?;
    let mut latched: Vec<SerializedMessage> = last.into_values().collect();
    latched.sort_by_key(|m| m.recv_timestamp);
    Ok(latched)
}

/// A rosbag2 bag directory, or a single ROS 1 bag file.
enum Output {
    Rosbag2(Box<BagWriter>),
    Ros1(Box<dyn StorageWriter>),
}

impl Output {
    fn create(options: BagWriterOptions) -> Result<Self> {
        if options.storage.storage != StorageId::Rosbag1 {
            return BagWriter::create(options).map(|w| Self::Rosbag2(Box::new(w)));
        }
        if options.compression.mode != crate::compression::CompressionMode::None {
            return Err(StorageError::InvalidArgument(
                "a ROS 1 bag cannot be compressed in rosbag2's file or message mode".into(),
            ));
        }
        if options.max_bagfile_size != 0 || options.max_bagfile_duration != 0 {
            return Err(StorageError::InvalidArgument(
                "a ROS 1 bag is one file: splitting is not supported".into(),
            ));
        }
        create_writer(options.uri, &options.storage).map(Self::Ros1)
    }

    fn create_topic(&mut self, topic: &TopicMetadata, definition: MessageDefinition) -> Result<()> {
        match self {
            Self::Rosbag2(w) => w.create_topic(topic, Some(definition)),
            Self::Ros1(w) => w.create_topic(topic, &definition),
        }
    }

    fn write(&mut self, message: &SerializedMessage) -> Result<()> {
        match self {
            Self::Rosbag2(w) => w.write(message),
            Self::Ros1(w) => w.write(message),
        }
    }

    fn close(self) -> Result<BagMetadata> {
        match self {
            Self::Rosbag2(w) => w.close(),
            Self::Ros1(w) => {
                let path = w.path().to_path_buf();
                w.finish()?;
                let reader = SequentialReader::open(&path)?;
                Ok(reader.bags()[0].metadata.clone())
            }
        }
    }
}
