//! The sequential reader: one or more bags, each of one or more files, read as a single stream
//! in receive-time order, with topic filters and index-based seeking. Bags rosbag2 compressed
//! are read transparently: file-mode files are decompressed when opened (see
//! [`crate::compression::file_mode`]), message-mode messages as they are read.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use crate::bag::Bag;
use crate::compression::message_mode::DecompressingReader;
use crate::compression::CompressionMode;
use crate::error::{Result, StorageError};
use crate::filter::TopicFilter;
use crate::message::SerializedMessage;
use crate::metadata::TopicInformation;
use crate::storage::{open_reader_with, OpenMode, StorageConfig, StorageReader, UnreadableTopic};
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_codec::MessageDefinitionCache;

/// One bag to read, and how: what rosbag2's storage options of an input bag say about reading
/// it (`convert --input-options`).
#[derive(Debug, Clone, Default)]
pub struct InputBag {
    /// The bag: a directory or a single file.
    pub path: PathBuf,
    /// What its storage configuration file sets for reading (`storage_config_uri`).
    pub config: StorageConfig,
    /// Only its messages received at or after this time (ns; `start_time_ns`).
    pub start: Option<i64>,
    /// Only its messages received at or before this time (ns; `end_time_ns`).
    pub end: Option<i64>,
}

impl From<PathBuf> for InputBag {
    fn from(path: PathBuf) -> Self {
        Self {
            path,
            ..Self::default()
        }
    }
}

/// Reads bags message by message in receive-time order. Ties are broken by the order the bags
/// were given and, within a bag, by file order.
pub struct SequentialReader {
    bags: Vec<Bag>,
    sources: Vec<Box<dyn StorageReader>>,
    /// Per source: the receive-time window of its bag (inclusive), and whether a message past
    /// its end was read (the source is done until the next seek).
    windows: Vec<(i64, i64, bool)>,
    heads: Vec<Option<SerializedMessage>>,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    primed: bool,
    topics: Vec<TopicInformation>,
    definitions: Vec<MessageDefinition>,
    current_source: Option<usize>,
}

impl SequentialReader {
    /// Opens one bag (directory or single file).
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_many(&[path.to_path_buf()])
    }

    /// Opens several bags to be read merged in time order.
    pub fn open_many(paths: &[PathBuf]) -> Result<Self> {
        Self::open_many_with(paths, &StorageConfig::default())
    }

    /// [`open_many`](Self::open_many) with what a storage configuration file sets for reading
    /// (`--storage-config-file`: SQLite3's `read: pragmas`).
    pub fn open_many_with(paths: &[PathBuf], config: &StorageConfig) -> Result<Self> {
        let inputs: Vec<InputBag> = paths
            .iter()
            .map(|path| InputBag {
                path: path.clone(),
                config: config.clone(),
                ..InputBag::default()
            })
            .collect();
        Self::open_inputs(&inputs)
    }

    /// Opens several bags, each read as its [`InputBag`] says, to be read merged in time order.
    pub fn open_inputs(inputs: &[InputBag]) -> Result<Self> {
        if inputs.is_empty() {
            return Err(StorageError::InvalidArgument("no bag given".into()));
        }
        let mut bags = Vec::new();
        let mut sources: Vec<Box<dyn StorageReader>> = Vec::new();
        let mut windows = Vec::new();
        let mut topics: Vec<TopicInformation> = Vec::new();
        let mut definitions: Vec<MessageDefinition> = Vec::new();
        for input in inputs {
            let path = &input.path;
            let mut bag = Bag::locate(path)?;
            let first = sources.len();
            let window = (
                input.start.unwrap_or(i64::MIN),
                input.end.unwrap_or(i64::MAX),
                false,
            );
            for file in &bag.files {
                let mut source = open_reader_with(file, OpenMode::Strict, &input.config)?;
                if let Some(start) = input.start {
                    source.seek(start)?;
                }
                sources.push(match bag.compression {
                    Some(c) if c.mode == CompressionMode::Message => {
                        Box::new(DecompressingReader::new(source, c.format))
                    }
                    _ => source,
                });
                windows.push(window);
            }
            bag.metadata_from_files(&sources[first..]);
            let file_topics = sources[first..].iter().flat_map(|s| s.topics().iter());
            let conflict = |earlier: &TopicInformation, topic: &TopicInformation| {
                StorageError::InvalidArgument(format!(
                    "topic '{}' has type '{}' in one bag and '{}' in {}",
                    topic.topic_metadata.name,
                    earlier.topic_metadata.type_name,
                    topic.topic_metadata.type_name,
                    path.display()
                ))
            };
            // This bag's topics, each once (from its metadata, else from its first file).
            let mut own: Vec<&TopicInformation> = Vec::new();
            for topic in bag
                .metadata
                .topics_with_message_count
                .iter()
                .chain(file_topics)
            {
                match own
                    .iter()
                    .find(|t| t.topic_metadata.name == topic.topic_metadata.name)
                {
                    None => own.push(topic),
                    Some(t) if t.topic_metadata.type_name != topic.topic_metadata.type_name => {
                        return Err(conflict(t, topic));
                    }
                    Some(_) => {}
                }
            }
            for topic in own {
                let name = &topic.topic_metadata.name;
                match topics.iter_mut().find(|t| t.topic_metadata.name == *name) {
                    None => topics.push(topic.clone()),
                    Some(t) if t.topic_metadata.type_name != topic.topic_metadata.type_name => {
                        return Err(conflict(t, topic));
                    }
                    // In several bags: their offered QoS profiles concatenated, as rosbag2's
                    // rewriter gathers them.
                    Some(t) => t
                        .topic_metadata
                        .offered_qos_profiles
                        .extend(topic.topic_metadata.offered_qos_profiles.iter().cloned()),
                }
            }
            for source in &sources[first..] {
                for def in source.message_definitions() {
                    if !definitions.iter().any(|d| d.topic_type == def.topic_type) {
                        definitions.push(def.clone());
                    }
                }
            }
            bags.push(bag);
        }
        // Message counts: per bag from its metadata; summed over bags.
        for topic in &mut topics {
            topic.message_count = bags
                .iter()
                .filter_map(|b| b.metadata.topic(&topic.topic_metadata.name))
                .map(|t| t.message_count)
                .sum();
        }
        let heads = vec![None; sources.len()];
        Ok(Self {
            bags,
            sources,
            windows,
            heads,
            heap: BinaryHeap::new(),
            primed: false,
            topics,
            definitions,
            current_source: None,
        })
    }

    /// Topics left out because their messages cannot be converted (ROS 1 types without a ROS 2
    /// equivalent), over all files.
    pub fn unreadable_topics(&self) -> Vec<&UnreadableTopic> {
        let mut out: Vec<&UnreadableTopic> = Vec::new();
        for u in self.sources.iter().flat_map(|s| s.unreadable_topics()) {
            if !out.iter().any(|o| o.topic == u.topic) {
                out.push(u);
            }
        }
        out
    }

    /// The bags being read.
    pub fn bags(&self) -> &[Bag] {
        &self.bags
    }

    /// All topics of all bags, with message counts summed.
    pub fn topics(&self) -> &[TopicInformation] {
        &self.topics
    }

    /// Receive time of the earliest message of all bags, ns.
    pub fn start_time(&self) -> i64 {
        self.bags
            .iter()
            .filter(|b| b.metadata.message_count > 0)
            .map(|b| b.metadata.starting_time)
            .min()
            .unwrap_or(0)
    }

    /// Receive time of the latest message of all bags, ns.
    pub fn end_time(&self) -> i64 {
        self.bags
            .iter()
            .filter(|b| b.metadata.message_count > 0)
            .map(|b| b.metadata.end_time())
            .max()
            .unwrap_or(0)
    }

    /// The definition of `type_name` the bag stores, if it stores one.
    pub fn stored_definition(&self, type_name: &str) -> Option<&MessageDefinition> {
        self.definitions
            .iter()
            .find(|d| d.topic_type == type_name && !d.encoded_message_definition.is_empty())
    }

    /// The stored definition of `type_name`, or one looked up in `cache` when the bag has none
    /// (see [`MessageDefinitionCache::definition_for_bag`]: `--typestore`).
    pub fn message_definition(
        &self,
        type_name: &str,
        cache: &mut MessageDefinitionCache,
    ) -> MessageDefinition {
        self.definitions
            .iter()
            .find(|d| d.topic_type == type_name && !d.encoded_message_definition.is_empty())
            .cloned()
            .unwrap_or_else(|| cache.definition_for_bag(type_name))
    }

    /// The file the last message came from.
    pub fn current_file(&self) -> Option<&Path> {
        self.current_source.map(|i| self.sources[i].path())
    }

    /// Restricts reading to the topics `filter` selects, from the next message on.
    pub fn set_filter(&mut self, filter: &TopicFilter) -> Result<()> {
        for source in &mut self.sources {
            source.set_filter(filter);
        }
        for i in 0..self.heads.len() {
            if self.heads[i]
                .as_ref()
                .is_some_and(|m| !filter.matches(&m.topic))
            {
                self.heads[i] = None;
                self.heap.retain(|Reverse((_, s))| *s != i);
                self.pull(i)?;
            }
        }
        Ok(())
    }

    /// Repositions every file so that the next message is the first with receive time `>= time_ns`
    /// (and within its bag's window).
    pub fn seek(&mut self, time_ns: i64) -> Result<()> {
        for (source, (start, _, ended)) in self.sources.iter_mut().zip(&mut self.windows) {
            source.seek(time_ns.max(*start))?;
            *ended = false;
        }
        self.heap.clear();
        self.heads.iter_mut().for_each(|h| *h = None);
        self.primed = false;
        Ok(())
    }

    /// Source `i`'s next message within its bag's window.
    fn next_of(&mut self, i: usize) -> Result<Option<SerializedMessage>> {
        let (start, end, ended) = &mut self.windows[i];
        if *ended {
            return Ok(None);
        }
        while let Some(m) = self.sources[i].read_next()? {
            if m.recv_timestamp > *end {
                // As rosbag2's rewriter closes an input at its first message past the end.
                *ended = true;
                break;
            }
            if m.recv_timestamp >= *start {
                return Ok(Some(m));
            }
        }
        Ok(None)
    }

    fn pull(&mut self, i: usize) -> Result<()> {
        if let Some(m) = self.next_of(i)? {
            self.heap.push(Reverse((m.recv_timestamp, i)));
            self.heads[i] = Some(m);
        }
        Ok(())
    }

    /// The next message in receive-time order, or `None` at the end.
    pub fn read_next(&mut self) -> Result<Option<SerializedMessage>> {
        if self.sources.len() == 1 {
            let m = self.next_of(0)?;
            self.current_source = Some(0);
            return Ok(m);
        }
        if !self.primed {
            for i in 0..self.sources.len() {
                if self.heads[i].is_none() {
                    self.pull(i)?;
                }
            }
            self.primed = true;
        }
        let Some(Reverse((_, i))) = self.heap.pop() else {
            return Ok(None);
        };
        let message = self.heads[i].take();
        self.current_source = Some(i);
        self.pull(i)?;
        Ok(message)
    }
}

impl Iterator for SequentialReader {
    type Item = Result<SerializedMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_next().transpose()
    }
}
