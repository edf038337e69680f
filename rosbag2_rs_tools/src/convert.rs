//! `convert`: merge bags and rewrite them in another storage, compression or selection, including
//! ROS 1 bags in (converted to CDR by the `rosbag_v2` reader) and out (a single `.bag` file).
//! Inputs compressed by rosbag2 (file or message mode) are decompressed as they are read; the
//! output is compressed as [`BagWriterOptions::compression`] says.

use std::collections::HashMap;
use std::sync::Arc;

use crate::expr::Expr;
use rosbag2_rs_codec::msg::TopicDecoder;
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::storage::{create_writer, StorageId, StorageWriter};
use rosbag2_rs_storage::BagMetadata;
use rosbag2_rs_storage::TopicFilter;
use rosbag2_rs_storage::{BagWriter, BagWriterOptions, Retention};
use rosbag2_rs_storage::{InputBag, SequentialReader};
use rosbag2_rs_storage::{Result, StorageError};
use rosbag2_rs_storage::{SerializedMessage, TopicMetadata};

/// What to convert.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// Input bags, merged in receive-time order, each read within its own window and storage
    /// configuration (`--input-options`; a path converts `into()` a bag read whole).
    pub inputs: Vec<InputBag>,
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
    /// Definitions for inputs that store none (`--typestore`, bags recorded before Iron).
    pub typestore: Option<rosbag2_rs_codec::Typestore>,
    /// The output's closed files kept as it is split (rosbag2's `max_bag_files` of an output
    /// bag: the oldest are deleted); none by default.
    pub retention: Retention,
}

/// Message-level selection and rewriting for [`convert_filtered`] (`convert --where`,
/// `--last-per-topic-before-start`, `--rename`).
#[derive(Debug, Clone, Default)]
pub struct ConvertFilters {
    /// `(topic, expression)`: a message of `topic` is kept only when the expression (see
    /// [`crate::expr`]) holds for it; topics without a clause are not filtered.
    pub where_clauses: Vec<(String, String)>,
    /// Topics whose latest message from before [`ConvertOptions::start`] is kept too, at its
    /// original time (the state a player needs at the start: a map, a calibration, a pose).
    pub last_before_start: Vec<String>,
    /// `(from, to)`: topics written under another name.
    pub rename: Vec<(String, String)>,
    /// `(from, to)`: types written under another name (`pkg/msg/Old` → `pkg/msg/New`), with
    /// the same definition text; their type hash is dropped (it covers the name).
    pub rename_types: Vec<(String, String)>,
}

/// The compiled `--where` clauses, per topic.
struct WhereFilter {
    by_topic: HashMap<String, (TopicDecoder, Vec<Expr>)>,
}

impl WhereFilter {
    fn compile(
        clauses: &[(String, String)],
        reader: &SequentialReader,
        cache: &mut MessageDefinitionCache,
    ) -> Result<Self> {
        let mut by_topic: HashMap<String, (TopicDecoder, Vec<Expr>)> = HashMap::new();
        for (topic, text) in clauses {
            let info = reader
                .topics()
                .iter()
                .find(|t| t.topic_metadata.name == *topic)
                .ok_or_else(|| {
                    StorageError::InvalidArgument(format!(
                        "--where: the input has no topic '{topic}'"
                    ))
                })?;
            let type_name = &info.topic_metadata.type_name;
            if !by_topic.contains_key(topic) {
                let def = reader.message_definition(type_name, cache);
                let decoder = TopicDecoder::new(type_name, &def).map_err(|e| {
                    StorageError::InvalidArgument(format!("--where on '{topic}': {e}"))
                })?;
                by_topic.insert(topic.clone(), (decoder, Vec::new()));
            }
            let entry = by_topic.get_mut(topic).expect("inserted above");
            let expr = Expr::compile(text, &entry.0).map_err(|e| {
                StorageError::InvalidArgument(format!("--where on '{topic}' ({type_name}): {e}"))
            })?;
            entry.1.push(expr);
        }
        Ok(Self { by_topic })
    }

    /// Whether `message` passes every clause of its topic; a payload that does not decode
    /// fails them (with a warning).
    fn keep(&self, message: &SerializedMessage) -> bool {
        let Some((decoder, exprs)) = self.by_topic.get(&*message.topic) else {
            return true;
        };
        match decoder.decode(&message.data) {
            Ok((value, _)) => exprs.iter().all(|e| e.matches(&value)),
            Err(e) => {
                log::warn!(
                    "--where: topic '{}', message at {} ns does not decode ({e}); left out",
                    message.topic,
                    message.recv_timestamp
                );
                false
            }
        }
    }
}

/// Converts; returns the output bag's metadata. Topics keep their QoS and definitions; only
/// topics with at least one message in range are written. With a start, each transient-local
/// topic's last message from before it is kept too, at its original time.
pub fn convert(options: &ConvertOptions) -> Result<BagMetadata> {
    convert_filtered(options, &ConvertFilters::default())
}

/// The latest message of each of `topics` received before `start`.
fn last_before(
    inputs: &[InputBag],
    topics: &[String],
    start: i64,
) -> Result<Vec<SerializedMessage>> {
    let mut reader = SequentialReader::open_inputs(inputs)?;
    reader.set_filter(&TopicFilter::topics(topics.iter().cloned()))?;
    let mut last: HashMap<String, SerializedMessage> = HashMap::new();
    while let Some(message) = reader.read_next()? {
        if message.recv_timestamp >= start {
            break;
        }
        last.insert(message.topic.to_string(), message);
    }
    let mut out: Vec<SerializedMessage> = last.into_values().collect();
    out.sort_by_key(|m| m.recv_timestamp);
    Ok(out)
}

/// [`convert`] with message-level selection and renaming.
pub fn convert_filtered(options: &ConvertOptions, filters: &ConvertFilters) -> Result<BagMetadata> {
    if let (Some(start), Some(end)) = (options.start, options.end) {
        if start > end {
            return Err(StorageError::InvalidArgument(format!(
                "the start ({start} ns) is after the end ({end} ns)"
            )));
        }
    }
    let mut reader = SequentialReader::open_inputs(&options.inputs)?;
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
    for topic in &filters.last_before_start {
        if !reader
            .topics()
            .iter()
            .any(|t| t.topic_metadata.name == *topic)
        {
            return Err(StorageError::InvalidArgument(format!(
                "--last-per-topic-before-start: the input has no topic '{topic}'"
            )));
        }
    }
    if !filters.last_before_start.is_empty() && options.start.is_none() {
        return Err(StorageError::InvalidArgument(
            "--last-per-topic-before-start needs --start".into(),
        ));
    }
    // Messages from before --start: the latest of each transient-local topic (latched state),
    // and of each topic asked for with --last-per-topic-before-start, in time order.
    let mut earlier = match options.start {
        Some(start) => {
            let mut earlier = latched_before(&mut reader, &options.filter, start)?;
            if !filters.last_before_start.is_empty() {
                for message in last_before(&options.inputs, &filters.last_before_start, start)? {
                    if !earlier.iter().any(|m| m.topic == message.topic) {
                        earlier.push(message);
                    }
                }
                earlier.sort_by_key(|m| m.recv_timestamp);
            }
            earlier
        }
        None => Vec::new(),
    }
    .into_iter();
    let mut cache = MessageDefinitionCache::new().with_typestore(options.typestore);
    let where_filter = WhereFilter::compile(&filters.where_clauses, &reader, &mut cache)?;
    let renamed: HashMap<&str, Arc<str>> = filters
        .rename
        .iter()
        .map(|(from, to)| (from.as_str(), Arc::from(to.as_str())))
        .collect();
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
    keep_extras(&options.inputs, &mut output)?;
    let mut writer = Output::create(output, options.retention)?;
    let mut created = std::collections::HashSet::new();
    loop {
        let message = match earlier.next() {
            Some(m) => m,
            None => match reader.read_next()? {
                Some(m) => m,
                None => break,
            },
        };
        if options.end.is_some_and(|end| message.recv_timestamp > end) {
            break;
        }
        if !where_filter.keep(&message) {
            continue;
        }
        if !created.contains(&*message.topic) {
            if let Some(info) = reader
                .topics()
                .iter()
                .find(|t| *t.topic_metadata.name == *message.topic)
            {
                let mut def = reader.message_definition(&info.topic_metadata.type_name, &mut cache);
                let mut topic = info.topic_metadata.clone();
                if let Some(to) = renamed.get(topic.name.as_str()) {
                    topic.name = to.to_string();
                }
                if let Some((_, to)) = filters
                    .rename_types
                    .iter()
                    .find(|(from, _)| *from == topic.type_name)
                {
                    topic.type_name = to.clone();
                    topic.type_description_hash.clear();
                    def.topic_type = to.clone();
                }
                // A type without a stored hash (renamed, a typestore's, a pre-Iron bag's) gets
                // that of its definition, as rosbag2 records one.
                if topic.type_description_hash.is_empty() {
                    if let Ok(hash) = rosbag2_rs_codec::type_hash::rihs01(&topic.type_name, &def) {
                        topic.type_description_hash = hash;
                    }
                }
                def.type_description_hash = topic.type_description_hash.clone();
                writer.create_topic(&topic, def)?;
            }
            created.insert(message.topic.to_string());
        }
        match renamed.get(&*message.topic) {
            Some(to) => {
                let mut message = message;
                message.topic = to.clone();
                writer.write(&message)?;
            }
            None => writer.write(&message)?,
        }
    }
    if created.is_empty() {
        log::warn!("no message lies in the selected time range: the output is empty");
    }
    writer.close()
}

/// Carries the inputs' MCAP attachments and metadata records (rosbag2's own left out: the
/// writer writes its own) into an MCAP output, before those the options add; duplicates (a
/// record repeated in every file of a split bag) are kept once. Another storage cannot hold
/// them: a warning says what is left out.
fn keep_extras(inputs: &[InputBag], output: &mut BagWriterOptions) -> Result<()> {
    let (mut attachments, mut records) = (Vec::new(), Vec::new());
    for input in inputs {
        for (_, extras) in rosbag2_rs_storage::storage::mcap_extras::bag_extras(&input.path, false)?
        {
            for a in &extras.attachments {
                if !attachments.contains(a) {
                    attachments.push(a.clone());
                }
            }
            for m in extras.user_metadata() {
                if !records.contains(m) {
                    records.push(m.clone());
                }
            }
        }
    }
    if attachments.is_empty() && records.is_empty() {
        return Ok(());
    }
    if output.storage.storage != StorageId::Mcap {
        log::warn!(
            "the input's {} attachments and {} metadata records are left out: only MCAP \
             storage holds them",
            attachments.len(),
            records.len()
        );
        return Ok(());
    }
    for m in std::mem::take(&mut output.storage.metadata) {
        if !records.contains(&m) {
            records.push(m);
        }
    }
    output.storage.metadata = records;
    attachments.append(&mut output.attachments);
    output.attachments = attachments;
    Ok(())
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
    fn create(options: BagWriterOptions, retention: Retention) -> Result<Self> {
        if options.storage.storage != StorageId::Rosbag1 {
            let mut writer = BagWriter::create(options)?;
            writer.set_retention(retention);
            return Ok(Self::Rosbag2(Box::new(writer)));
        }
        if options.compression.mode != rosbag2_rs_storage::compression::CompressionMode::None {
            return Err(StorageError::InvalidArgument(
                "a ROS 1 bag cannot be compressed in rosbag2's file or message mode".into(),
            ));
        }
        if options.max_bagfile_size != 0
            || options.max_bagfile_duration != 0
            || retention.is_active()
        {
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
