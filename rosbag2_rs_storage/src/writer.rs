//! The bag writer: creates a bag directory, writes topics and messages through a storage
//! plugin, splits files by size, duration or on demand, and keeps `metadata.yaml` correct after
//! every split and at close. Files are named as rosbag2 Lyrical names them,
//! `{index}_{prefix}_{YYYY_MM_DD-HH_MM_SS}` ([`crate::split_file_stem`]: `0_my_bag_2026_12_07-10_00_00.mcap`).
//!
//! With [`BagWriterOptions::compression`] it compresses the bag as rosbag2 does: in file mode
//! each closed file is compressed in the background (`0_bag_<time>.mcap` becomes `0_bag_<time>.mcap.zstd`;
//! the uncompressed file is removed once `metadata.yaml` names the compressed one, and close
//! waits for every file); in message mode every message's data is compressed before it is
//! stored, in write order. `metadata.yaml` then carries `compression_format` and
//! `compression_mode` (`FILE`/`MESSAGE`).
//!
//! For unattended recording it can also:
//! - keep a bounded history ([`Retention`]): after each split, delete the oldest closed files
//!   until the bag is within every bound, rewriting `metadata.yaml` before each deletion so
//!   that it never names a missing file;
//! - stop before the disk is full ([`BagWriter::set_min_free_space`]): under retention the
//!   oldest closed files go first; then the bag is closed cleanly and
//!   [`StorageError::LowDiskSpace`] returned;
//! - repeat the latched state ([`BagWriter::set_repeat_latched`], rosbag2 Lyrical's
//!   `--repeat-all-transient-local`): each new file starts with the latest messages of every
//!   transient-local topic, at their original times, so that any file alone holds `/tf_static`
//!   and the like; and ([`BagWriter::set_repeat_topics`], `--repeat-transient-local`) the
//!   latest messages of the topics named, as many as each one's depth.
//!
//! From the first split on, `metadata.yaml` lists the closed files only and names the file
//! being written in `custom_data` under [`FILE_BEING_WRITTEN_KEY`]; the key is gone once the
//! bag is closed. It is rewritten at a split once at least 1/[`METADATA_REWRITE_SHARE`] of the
//! closed files are new since it was last written: at every split in a bag of up to that many
//! files, and at a cost that does not grow with the bag in a longer one (hours of 1 s splits);
//! a reader of the open bag finds the newest files from their names
//! ([`Bag::locate`](crate::Bag::locate)). Each storage file embeds the metadata of itself alone
//! (rosbag2 embeds the whole bag's, which grows every file of a long recording).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::compression::file_mode::{CompressedFile, FileCompressor};
use crate::compression::message_mode::MessageCompressor;
use crate::compression::{CompressionMode, CompressionOptions};
use crate::error::{Result, StorageError};
use crate::message::{SerializedMessage, TopicMetadata};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation, FILE_BEING_WRITTEN_KEY};
use crate::storage::{create_writer, StorageId, StorageWriter, WriterOptions};
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_codec::MessageDefinitionCache;

/// How to write a bag.
#[derive(Debug, Clone, Default)]
pub struct BagWriterOptions {
    /// The bag directory to create; it must not exist.
    pub uri: PathBuf,
    /// Storage plugin options.
    pub storage: WriterOptions,
    /// Split when a file reaches this many bytes (0: never).
    pub max_bagfile_size: u64,
    /// Split when a file spans this many ns of receive time (0: never).
    pub max_bagfile_duration: i64,
    /// User key/value pairs stored in the metadata.
    pub custom_data: BTreeMap<String, String>,
    /// rosbag2 file or message compression (default: none).
    pub compression: CompressionOptions,
    /// Attachments written in the first file (MCAP only; `convert` keeps the inputs').
    pub attachments: Vec<crate::storage::mcap_extras::Attachment>,
}

/// Bounds on a bag's closed files, enforced after each split and at close by deleting the
/// oldest ones (the file being written is never deleted). Zero: no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retention {
    /// Files kept, the one being written included.
    pub max_files: u64,
    /// Bytes of closed files kept.
    pub max_total_size: u64,
    /// Receive-time span of the closed files kept, ns (first message of the oldest to last
    /// message of the newest).
    pub max_total_duration: i64,
}

impl Retention {
    /// True when any bound is set.
    pub fn is_active(&self) -> bool {
        self.max_files > 0 || self.max_total_size > 0 || self.max_total_duration > 0
    }
}

/// At a split, `metadata.yaml` is rewritten once `files / METADATA_REWRITE_SHARE` splits have
/// passed since it was last written (at every split while the bag has fewer files).
pub const METADATA_REWRITE_SHARE: usize = 64;

/// How often (in bytes written) free space is checked at most.
const FREE_SPACE_CHECK_BYTES: u64 = 1 << 20;

/// A file change: the writer closed one file and opened the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitEvent {
    /// The file that was closed. In file-mode compression, the compressed file it becomes
    /// (`bag_0.mcap.zstd`), as rosbag2 reports it; it appears once its compression finishes.
    pub closed_file: PathBuf,
    /// The file that was opened.
    pub opened_file: PathBuf,
}

type SplitCallback = Box<dyn FnMut(&SplitEvent) + Send>;
type CustomDataSource = Box<dyn FnMut() -> BTreeMap<String, String> + Send>;

/// Writes a bag; see the module documentation.
pub struct BagWriter {
    options: BagWriterOptions,
    storage: Option<Box<dyn StorageWriter>>,
    metadata: BagMetadata,
    topic_index: HashMap<Arc<str>, usize>,
    definitions: Vec<MessageDefinition>,
    definition_cache: MessageDefinitionCache,
    file: FileInformation,
    split_callback: Option<SplitCallback>,
    custom_data_source: Option<CustomDataSource>,
    message_compressor: Option<MessageCompressor>,
    file_compressor: Option<FileCompressor>,
    /// Messages per topic (by index) in the current file.
    file_topic_counts: Vec<u64>,
    /// Under retention, messages per topic in each closed file, oldest first (parallel to
    /// `metadata.files`; empty for files closed before retention was set): what deleting a file
    /// takes from the topics' counts. Not kept otherwise (a long bag of many topics would hold
    /// a count per topic per file for nothing).
    closed_topic_counts: VecDeque<Vec<u64>>,
    /// Earliest receive time of the current file's own messages (not the repeated ones).
    split_start: Option<i64>,
    retention: Retention,
    min_free_space: u64,
    /// Bytes written in the current file at the next free-space check.
    next_space_check: u64,
    /// How many of the latest messages of each transient-local topic each new file repeats.
    repeat_latched_depth: usize,
    /// Topics whose latest messages are repeated, with how many (instead of `repeat_latched_depth`
    /// when not empty).
    repeat_topics: BTreeMap<String, usize>,
    /// Per topic: how many of its latest messages each new file repeats.
    repeat_depth: Vec<usize>,
    /// Per topic: its latest messages, up to its repeat depth.
    latest: Vec<VecDeque<SerializedMessage>>,
    /// Files opened so far (the next file's number).
    files_opened: usize,
    /// Splits since `metadata.yaml` was last written.
    splits_since_metadata: usize,
}

impl BagWriter {
    /// Creates the bag directory and its first file.
    pub fn create(options: BagWriterOptions) -> Result<Self> {
        if options.max_bagfile_duration < 0 {
            return Err(StorageError::InvalidArgument(
                "max bag file duration must not be negative".into(),
            ));
        }
        let compression = options.compression;
        if compression.mode != CompressionMode::None
            && options.storage.storage == StorageId::Rosbag1
        {
            return Err(StorageError::InvalidArgument(
                "rosbag2 file or message compression needs an MCAP or SQLite3 bag, not a ROS 1 bag"
                    .into(),
            ));
        }
        if let (Some(a), false) = (
            options.attachments.first(),
            options.storage.storage == StorageId::Mcap,
        ) {
            return Err(StorageError::InvalidArgument(format!(
                "attachment '{}': attachments need MCAP storage (-s mcap)",
                a.name
            )));
        }
        let dir = &options.uri;
        if dir.exists() {
            return Err(StorageError::AlreadyExists(dir.clone()));
        }
        std::fs::create_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
        let mut metadata = BagMetadata {
            storage_identifier: options.storage.storage.as_str().to_string(),
            custom_data: options.custom_data.clone(),
            ros_distro: std::env::var("ROS_DISTRO").unwrap_or_default(),
            ..Default::default()
        };
        let threads_error = |e| StorageError::io(dir, e);
        let (mut message_compressor, mut file_compressor) = (None, None);
        match compression.mode {
            CompressionMode::None => {}
            CompressionMode::File => {
                file_compressor = Some(
                    FileCompressor::new(
                        compression.format,
                        compression.effective_threads(),
                        compression.threads_priority,
                    )
                    .map_err(threads_error)?,
                )
            }
            CompressionMode::Message => {
                message_compressor =
                    Some(MessageCompressor::new(&compression).map_err(threads_error)?)
            }
        }
        if compression.mode != CompressionMode::None {
            metadata.compression_format = compression.format.as_str().to_string();
            metadata.compression_mode = compression.mode.as_metadata_str().to_string();
        }
        let mut writer = Self {
            options,
            storage: None,
            metadata,
            topic_index: HashMap::new(),
            definitions: Vec::new(),
            definition_cache: MessageDefinitionCache::new(),
            file: FileInformation::default(),
            split_callback: None,
            custom_data_source: None,
            message_compressor,
            file_compressor,
            file_topic_counts: Vec::new(),
            closed_topic_counts: VecDeque::new(),
            split_start: None,
            retention: Retention::default(),
            min_free_space: 0,
            next_space_check: 0,
            repeat_latched_depth: 0,
            repeat_topics: BTreeMap::new(),
            repeat_depth: Vec::new(),
            latest: Vec::new(),
            files_opened: 0,
            splits_since_metadata: 0,
        };
        writer.open_next_file()?;
        Ok(writer)
    }

    /// Deletes the oldest closed files after each split to stay within `retention`. Set it
    /// before the first split: the topics' message counts keep the messages of files closed
    /// before it when those are deleted.
    pub fn set_retention(&mut self, retention: Retention) {
        self.retention = retention;
        if !retention.is_active() {
            self.closed_topic_counts.clear();
            return;
        }
        let untracked = self.metadata.files.len() - self.closed_topic_counts.len();
        for _ in 0..untracked {
            self.closed_topic_counts.push_front(Vec::new());
        }
    }

    /// Keeps at least `bytes` free on the bag's file system (0: no check): when less is free,
    /// the oldest closed files are deleted under retention, then the bag is closed.
    pub fn set_min_free_space(&mut self, bytes: u64) {
        self.min_free_space = bytes;
        self.next_space_check = 0;
    }

    /// Starts each new file with the latest `depth` messages of every transient-local topic (a
    /// topic whose offered QoS profiles are all transient local) not named by
    /// [`set_repeat_topics`](Self::set_repeat_topics); 0: none.
    pub fn set_repeat_latched(&mut self, depth: usize) {
        self.repeat_latched_depth = depth;
    }

    /// Starts each new file with the latest messages of the topics named, as many as each
    /// one's depth, whatever their durability (for topics created from now on).
    pub fn set_repeat_topics(&mut self, topics: BTreeMap<String, usize>) {
        self.repeat_topics = topics;
    }

    /// Calls `callback` on every split.
    pub fn on_split(&mut self, callback: impl FnMut(&SplitEvent) + Send + 'static) {
        self.split_callback = Some(Box::new(callback));
    }

    /// Asks `source` for entries to add to (or replace in) `custom_data` each time the
    /// metadata is written: at every split and at close (e.g. counts that grow while
    /// recording).
    pub fn set_custom_data_source(
        &mut self,
        source: impl FnMut() -> BTreeMap<String, String> + Send + 'static,
    ) {
        self.custom_data_source = Some(Box::new(source));
    }

    /// Adds the entries of the custom data source to the metadata.
    fn refresh_custom_data(&mut self) {
        if let Some(source) = &mut self.custom_data_source {
            self.metadata.custom_data.extend(source());
        }
    }

    /// The bag directory.
    pub fn dir(&self) -> &Path {
        &self.options.uri
    }

    /// The metadata as of now (totals cover closed files only until the next split or close).
    pub fn metadata(&self) -> &BagMetadata {
        &self.metadata
    }

    /// How long `write`, `flush` and `split` have spent on message-mode compression so far
    /// (compressing, or waiting for the compression threads); zero without it.
    pub fn compression_busy(&self) -> std::time::Duration {
        self.message_compressor
            .as_ref()
            .map_or(std::time::Duration::ZERO, MessageCompressor::busy)
    }

    /// The file being written.
    pub fn current_file(&self) -> Option<&Path> {
        self.storage.as_deref().map(|s| s.path())
    }

    fn open_next_file(&mut self) -> Result<()> {
        let dir = &self.options.uri;
        // Named as rosbag2 Lyrical names them, numbered by files opened, not files listed:
        // retention deletes the oldest.
        let relative = format!(
            "{}{}",
            crate::bag::split_file_stem(dir, self.files_opened as u64, &crate::bag::local_stamp()),
            self.options.storage.storage.extension()
        );
        self.files_opened += 1;
        let mut storage = create_writer(dir.join(&relative), &self.options.storage)?;
        for (info, def) in self
            .metadata
            .topics_with_message_count
            .iter()
            .zip(&self.definitions)
        {
            storage.create_topic(&info.topic_metadata, def)?;
        }
        if self.files_opened == 1 {
            for attachment in &self.options.attachments {
                storage.add_attachment(attachment)?;
            }
        }
        self.metadata.relative_file_paths.push(relative.clone());
        self.file = FileInformation {
            path: relative,
            ..Default::default()
        };
        self.storage = Some(storage);
        self.file_topic_counts = vec![0; self.definitions.len()];
        self.split_start = None;
        self.next_space_check = 0;
        Ok(())
    }

    /// The metadata as it is true on disk while the bag is open: closed files only, counts
    /// without the current file's messages, and the file being written named in `custom_data`.
    fn live_metadata(&self) -> BagMetadata {
        let mut live = self.metadata.clone();
        live.relative_file_paths.truncate(live.files.len());
        for (topic, current) in live
            .topics_with_message_count
            .iter_mut()
            .zip(&self.file_topic_counts)
        {
            topic.message_count -= current;
        }
        if self.storage.is_some() {
            live.custom_data
                .insert(FILE_BEING_WRITTEN_KEY.to_string(), self.file.path.clone());
        }
        live
    }

    fn write_live_metadata(&mut self) -> Result<()> {
        self.splits_since_metadata = 0;
        self.live_metadata().write_to_dir(&self.options.uri)
    }

    /// The current file as a bag of its own, for the metadata embedded in it: its own counts
    /// and time span, the bag's topics, compression and custom data.
    fn file_metadata(&self) -> BagMetadata {
        let m = &self.metadata;
        let mut own = BagMetadata {
            storage_identifier: m.storage_identifier.clone(),
            relative_file_paths: vec![self.file.path.clone()],
            files: vec![self.file.clone()],
            topics_with_message_count: m
                .topics_with_message_count
                .iter()
                .zip(&self.file_topic_counts)
                .map(|(t, &message_count)| TopicInformation {
                    topic_metadata: t.topic_metadata.clone(),
                    message_count,
                })
                .collect(),
            compression_format: m.compression_format.clone(),
            compression_mode: m.compression_mode.clone(),
            custom_data: m.custom_data.clone(),
            ros_distro: m.ros_distro.clone(),
            ..Default::default()
        };
        own.recompute_totals_from_files();
        own
    }

    /// Deletes the oldest closed file: `metadata.yaml` first stops naming it, then it goes.
    /// False when there is none that can go (none closed, or still being compressed).
    fn delete_oldest(&mut self) -> Result<bool> {
        if self.metadata.files.is_empty() {
            return Ok(false);
        }
        let dir = self.options.uri.clone();
        let relative = self.metadata.relative_file_paths[0].clone();
        let compressed_suffix = format!(".{}", self.options.compression.format.extension());
        if self.file_compressor.is_some() && !relative.ends_with(&compressed_suffix) {
            return Ok(false); // still being compressed: the metadata names it once done
        }
        self.metadata.files.remove(0);
        self.metadata.relative_file_paths.remove(0);
        if let Some(counts) = self.closed_topic_counts.pop_front() {
            for (topic, n) in self
                .metadata
                .topics_with_message_count
                .iter_mut()
                .zip(counts)
            {
                topic.message_count -= n;
            }
        }
        self.metadata.recompute_totals_from_files();
        self.update_bag_size();
        self.write_live_metadata()?;
        let path = dir.join(&relative);
        std::fs::remove_file(&path).map_err(|e| StorageError::io(&path, e))?;
        log::info!("retention: deleted {}", path.display());
        Ok(true)
    }

    /// Deletes the oldest closed files until the bag is within every retention bound.
    fn enforce_retention(&mut self) -> Result<()> {
        let r = self.retention;
        if !r.is_active() {
            return Ok(());
        }
        loop {
            let files = &self.metadata.files;
            let open = u64::from(self.storage.is_some());
            let over_files = r.max_files > 0 && files.len() as u64 + open > r.max_files;
            let over_size = r.max_total_size > 0 && self.metadata.bag_size > r.max_total_size;
            let span = match (files.first(), files.last()) {
                (Some(first), Some(last)) => last.end_time().saturating_sub(first.starting_time),
                _ => 0,
            };
            let over_time = r.max_total_duration > 0 && span > r.max_total_duration;
            if !(over_files || over_size || over_time) || !self.delete_oldest()? {
                return Ok(());
            }
        }
    }

    /// Every [`FREE_SPACE_CHECK_BYTES`] written (and at the start of each file): when less
    /// than the minimum is free, deletes the oldest closed files under retention, then closes
    /// the bag and fails.
    fn check_free_space(&mut self) -> Result<()> {
        if self.min_free_space == 0 {
            return Ok(());
        }
        let written = self.storage()?.bytes_written();
        if written < self.next_space_check {
            return Ok(());
        }
        self.next_space_check =
            written + FREE_SPACE_CHECK_BYTES.min((self.min_free_space / 4).max(4096));
        let dir = self.options.uri.clone();
        loop {
            let Some(free) = crate::disk::free_space(&dir) else {
                return Ok(());
            };
            if free >= self.min_free_space {
                return Ok(());
            }
            if self.retention.is_active() && self.delete_oldest()? {
                log::warn!(
                    "{}: {free} bytes free (minimum {}): deleted the oldest file",
                    dir.display(),
                    self.min_free_space
                );
                continue;
            }
            log::error!(
                "{}: only {free} bytes free (minimum {}, --min-free-space): closing the bag, \
                 recording stops",
                dir.display(),
                self.min_free_space
            );
            self.finish()?;
            return Err(StorageError::LowDiskSpace {
                path: dir,
                free,
                min: self.min_free_space,
            });
        }
    }

    fn storage(&mut self) -> Result<&mut Box<dyn StorageWriter>> {
        self.storage
            .as_mut()
            .ok_or_else(|| StorageError::InvalidArgument("bag writer is closed".into()))
    }

    /// Registers a topic. Without a definition, one is looked up (`AMENT_PREFIX_PATH`, then the
    /// bundled interfaces); an unknown type is recorded with an empty definition and a warning.
    pub fn create_topic(
        &mut self,
        topic: &TopicMetadata,
        definition: Option<MessageDefinition>,
    ) -> Result<()> {
        if self.topic_index.contains_key(topic.name.as_str()) {
            return Ok(());
        }
        let definition = definition
            .filter(|d| !d.encoded_message_definition.is_empty())
            .unwrap_or_else(|| self.definition_cache.definition(&topic.type_name));
        self.storage()?.create_topic(topic, &definition)?;
        self.topic_index.insert(
            topic.name.as_str().into(),
            self.metadata.topics_with_message_count.len(),
        );
        self.metadata
            .topics_with_message_count
            .push(TopicInformation {
                topic_metadata: topic.clone(),
                message_count: 0,
            });
        self.definitions.push(definition);
        self.file_topic_counts.push(0);
        let depth = match self.repeat_topics.get(&topic.name) {
            Some(depth) => *depth,
            None if topic.is_transient_local() => self.repeat_latched_depth,
            None => 0,
        };
        self.repeat_depth.push(depth);
        self.latest.push(VecDeque::new());
        Ok(())
    }

    /// Writes a message to a created topic, splitting first or after as the limits require. In
    /// message mode the message is stored once compressed (see the module documentation).
    pub fn write(&mut self, message: &SerializedMessage) -> Result<()> {
        if !self.topic_index.contains_key(&message.topic) {
            return Err(StorageError::InvalidArgument(format!(
                "topic '{}' was not created before writing to it",
                message.topic
            )));
        }
        let Some(compressor) = &mut self.message_compressor else {
            return self.store(message);
        };
        let ready = compressor.push(message.clone());
        self.store_compressed(ready)
    }

    /// Stores messages that came out of the message compressor, in order.
    fn store_compressed(
        &mut self,
        ready: Vec<(SerializedMessage, std::io::Result<SerializedMessage>)>,
    ) -> Result<()> {
        for (original, result) in ready {
            let compressed = result.map_err(|source| StorageError::Compress {
                path: self
                    .current_file()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                format: self.options.compression.format,
                source,
            })?;
            debug_assert_eq!(original.topic, compressed.topic);
            self.store(&compressed)?;
        }
        Ok(())
    }

    /// Stores every message still being compressed (message mode).
    fn drain_compressor(&mut self) -> Result<()> {
        match self
            .message_compressor
            .as_mut()
            .map(MessageCompressor::drain)
        {
            Some(ready) => self.store_compressed(ready),
            None => Ok(()),
        }
    }

    /// Writes a (compressed, in message mode) message to the storage and accounts for it.
    fn store(&mut self, message: &SerializedMessage) -> Result<()> {
        let Some(&index) = self.topic_index.get(&message.topic) else {
            return Err(StorageError::InvalidArgument(format!(
                "topic '{}' was not created before writing to it",
                message.topic
            )));
        };
        let limit = self.options.max_bagfile_duration;
        if limit > 0
            && self
                .split_start
                .is_some_and(|start| message.recv_timestamp - start >= limit)
        {
            self.split_file()?;
        }
        self.check_free_space()?;
        self.put(index, message)?;
        self.split_start = Some(
            self.split_start
                .map_or(message.recv_timestamp, |s| s.min(message.recv_timestamp)),
        );
        let depth = self.repeat_depth[index];
        if depth > 0 {
            let latest = &mut self.latest[index];
            if latest.len() == depth {
                latest.pop_front();
            }
            latest.push_back(message.clone());
        }
        let max_size = self.options.max_bagfile_size;
        if max_size > 0 && self.storage()?.bytes_written() >= max_size {
            self.split_file()?;
        }
        Ok(())
    }

    /// Writes a message to the storage and accounts for it in the file and the metadata.
    fn put(&mut self, index: usize, message: &SerializedMessage) -> Result<()> {
        self.storage()?.write(message)?;
        let file = &mut self.file;
        if file.message_count == 0 {
            file.starting_time = message.recv_timestamp;
        } else if message.recv_timestamp < file.starting_time {
            // Timestamps come from other bags (convert, reindex): any i64, so saturating.
            file.duration = file
                .duration
                .saturating_add(file.starting_time.saturating_sub(message.recv_timestamp));
            file.starting_time = message.recv_timestamp;
        }
        file.duration = file
            .duration
            .max(message.recv_timestamp.saturating_sub(file.starting_time));
        file.message_count += 1;
        self.metadata.topics_with_message_count[index].message_count += 1;
        self.file_topic_counts[index] += 1;
        Ok(())
    }

    /// Writes the latest messages of the repeated topics at the start of a new file, in
    /// receive-time order, at their original times.
    fn repeat_latest(&mut self) -> Result<()> {
        let mut latest: Vec<(usize, SerializedMessage)> = self
            .latest
            .iter()
            .enumerate()
            .flat_map(|(i, messages)| messages.iter().map(move |m| (i, m.clone())))
            .collect();
        latest.sort_by_key(|(_, m)| m.recv_timestamp);
        for (index, message) in latest {
            self.put(index, &message)?;
        }
        Ok(())
    }

    /// Makes everything written so far durable in the current file (see [`StorageWriter::flush`]);
    /// in message mode, waits for the messages being compressed first.
    pub fn flush(&mut self) -> Result<()> {
        self.drain_compressor()?;
        self.storage()?.flush()
    }

    /// Closes the current file; in file mode hands it to the compression threads. With `wait`,
    /// waits for every file being compressed. Writes `metadata.yaml`.
    fn close_current_file(&mut self, wait: bool) -> Result<Option<PathBuf>> {
        let Some(mut storage) = self.storage.take() else {
            return Ok(None);
        };
        self.refresh_custom_data();
        storage.update_metadata(&self.file_metadata())?;
        self.metadata.files.push(self.file.clone());
        let counts = std::mem::take(&mut self.file_topic_counts);
        if self.retention.is_active() {
            self.closed_topic_counts.push_back(counts);
        }
        self.metadata.recompute_totals_from_files();
        let path = storage.path().to_path_buf();
        storage.finish()?;
        let mut result = Ok(());
        if let Some(compressor) = &mut self.file_compressor {
            result = compressor.submit(path.clone());
        }
        let compressed = self.collect_compressed(wait);
        if wait || self.retention.max_total_size > 0 {
            self.update_bag_size();
        }
        // At a split, the caller writes the metadata when it is due; a compressed file's name
        // goes in at once, before the uncompressed file goes.
        if wait || !compressed.is_empty() {
            self.write_live_metadata()?;
        }
        // The metadata now names the compressed files: the uncompressed ones can go.
        let mut failed = Vec::new();
        for done in compressed {
            match done {
                Ok(CompressedFile { source, .. }) => {
                    if let Err(e) = std::fs::remove_file(&source) {
                        log::warn!(
                            "{}: compressed, but removing the uncompressed file failed: {e}",
                            source.display()
                        );
                    }
                }
                Err(e) => failed.push(e),
            }
        }
        result?;
        match failed.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(Some(path)),
        }
    }

    /// Renames the files compressed so far in the metadata; returns them (and failures).
    fn collect_compressed(&mut self, wait: bool) -> Vec<Result<CompressedFile>> {
        let Some(compressor) = &mut self.file_compressor else {
            return Vec::new();
        };
        let done = compressor.collect(wait);
        for file in done.iter().flatten() {
            let name = |p: &Path| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            let (source, target) = (name(&file.source), name(&file.target));
            match self
                .metadata
                .relative_file_paths
                .iter_mut()
                .find(|p| **p == source)
            {
                Some(entry) => *entry = target,
                None => log::error!("{source}: compressed, but not among the bag's files"),
            }
            log::info!("compressed {}", file.target.display());
        }
        done
    }

    /// The bag size: the closed files (compressed or not), as listed in the metadata.
    fn update_bag_size(&mut self) {
        let dir = &self.options.uri;
        self.metadata.bag_size = self
            .metadata
            .relative_file_paths
            .iter()
            .take(self.metadata.files.len())
            .filter_map(|p| std::fs::metadata(dir.join(p)).ok())
            .map(|m| m.len())
            .sum();
    }

    /// Closes the current file and continues in a new one (in file mode the closed file is
    /// compressed in the background). A file that holds no message of its own yet (none, or
    /// only the repeated latched state) is kept instead, so that no empty file is left
    /// behind; returns whether a new file was started.
    pub fn split(&mut self) -> Result<bool> {
        self.drain_compressor()?;
        // Only repeated latched messages (or none) in the file: nothing of its own to close.
        if self.split_start.is_none() {
            self.storage()?;
            log::info!("split requested while the current file holds no message: kept it");
            return Ok(false);
        }
        self.split_file()?;
        Ok(true)
    }

    /// Splits without first storing the messages being compressed (a split the limits asked
    /// for while storing one of them).
    fn split_file(&mut self) -> Result<()> {
        let Some(closed_file) = self.close_current_file(false)? else {
            return Err(StorageError::InvalidArgument("bag writer is closed".into()));
        };
        self.open_next_file()?;
        self.repeat_latest()?;
        self.enforce_retention()?;
        self.splits_since_metadata += 1;
        if self.splits_since_metadata * METADATA_REWRITE_SHARE >= self.metadata.files.len() {
            self.write_live_metadata()?;
        }
        let closed_file = match &self.file_compressor {
            Some(compressor) => compressor.target_of(&closed_file),
            None => closed_file,
        };
        let event = SplitEvent {
            closed_file,
            opened_file: self
                .current_file()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        };
        log::info!(
            "split bag: closed {}, writing {}",
            event.closed_file.display(),
            event.opened_file.display()
        );
        if let Some(callback) = &mut self.split_callback {
            callback(&event);
        }
        Ok(())
    }

    /// Finishes the last file (in file mode: waits until every file is compressed) and writes
    /// the final `metadata.yaml`; returns the metadata.
    pub fn close(mut self) -> Result<BagMetadata> {
        self.finish()?;
        Ok(std::mem::take(&mut self.metadata))
    }

    fn finish(&mut self) -> Result<()> {
        let drained = self.drain_compressor();
        let closed = self.close_current_file(true);
        self.message_compressor = None;
        self.file_compressor = None;
        // Every file is compressed by now: retention applies to all of them.
        let retained = self.enforce_retention();
        drained.and(closed).and(retained).map(|_| ())
    }
}

impl Drop for BagWriter {
    fn drop(&mut self) {
        if self.storage.is_some() {
            if let Err(e) = self.finish() {
                log::error!("closing bag {} failed: {e}", self.options.uri.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes one `/chatter` message per file into `files` files (the last one open).
    fn bag(dir: &Path, retention: Retention, files: i64) -> BagWriter {
        let mut w = BagWriter::create(BagWriterOptions {
            uri: dir.to_path_buf(),
            storage: WriterOptions {
                storage: StorageId::Mcap,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        w.set_retention(retention);
        w.create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
            .unwrap();
        let topic: Arc<str> = Arc::from("/chatter");
        for i in 0..files {
            if i > 0 {
                assert!(w.split().unwrap());
            }
            let m = SerializedMessage::new(topic.clone(), i * 1_000, vec![0, 1, 0, 0]);
            w.write(&m).unwrap();
        }
        w
    }

    #[test]
    fn per_file_topic_counts_are_kept_under_retention_only() {
        let dir = tempfile::tempdir().unwrap();
        let w = bag(&dir.path().join("all"), Retention::default(), 100);
        assert!(w.closed_topic_counts.is_empty());
        assert_eq!(
            w.close().unwrap().topics_with_message_count[0].message_count,
            100
        );

        let retention = Retention {
            max_files: 3,
            ..Default::default()
        };
        let w = bag(&dir.path().join("last"), retention, 100);
        assert_eq!(w.closed_topic_counts.len(), 2);
        let kept = w.close().unwrap();
        assert_eq!(kept.files.len(), 3);
        assert_eq!(kept.topics_with_message_count[0].message_count, 3);
    }
}
