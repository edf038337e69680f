//! `convert`: merge bags and rewrite them in another storage, compression or selection.

use std::path::PathBuf;

use crate::error::Result;
use crate::filter::TopicFilter;
use crate::metadata::BagMetadata;
use crate::msgdefs::MessageDefinitionCache;
use crate::reader::SequentialReader;
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
}

/// Converts; returns the output bag's metadata. Topics keep their QoS and definitions; only
/// topics with at least one message in range are written.
pub fn convert(options: &ConvertOptions) -> Result<BagMetadata> {
    let mut reader = SequentialReader::open_many(&options.inputs)?;
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
    let mut writer = BagWriter::create(output)?;
    let mut cache = MessageDefinitionCache::new();
    let mut created = std::collections::HashSet::new();
    while let Some(message) = reader.read_next()? {
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
                writer.create_topic(&info.topic_metadata, Some(def))?;
            }
            created.insert(message.topic.to_string());
        }
        writer.write(&message)?;
    }
    writer.close()
}
