//! The bag writer: creates a bag directory, writes topics and messages through a storage
//! plugin, splits files by size, duration or on demand, and keeps `metadata.yaml` correct after
//! every split and at close.
//!
//! With [`BagWriterOptions::compression`] it compresses the bag as rosbag2 does: in file mode
//! each closed file is compressed in the background (`bag_0.mcap` becomes `bag_0.mcap.zstd`;
//! the uncompressed file is removed once `metadata.yaml` names the compressed one, and close
//! waits for every file); in message mode every message's data is compressed before it is
//! stored, in write order. `metadata.yaml` then carries `compression_format` and
//! `compression_mode` (`FILE`/`MESSAGE`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::compression::file_mode::{CompressedFile, FileCompressor};
use crate::compression::message_mode::MessageCompressor;
use crate::compression::{CompressionMode, CompressionOptions};
use crate::error::{Result, StorageError};
use crate::message::{MessageDefinition, SerializedMessage, TopicMetadata};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use crate::msgdefs::MessageDefinitionCache;
use crate::storage::{create_writer, StorageId, StorageWriter, WriterOptions};

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
}

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
    message_compressor: Option<MessageCompressor>,
    file_compressor: Option<FileCompressor>,
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
            message_compressor,
            file_compressor,
        };
        writer.open_next_file()?;
        Ok(writer)
    }

    /// Calls `callback` on every split.
    pub fn on_split(&mut self, callback: impl FnMut(&SplitEvent) + Send + 'static) {
        self.split_callback = Some(Box::new(callback));
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
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "bag".into());
        let relative = format!(
            "{name}_{}{}",
            self.metadata.relative_file_paths.len(),
            self.options.storage.storage.extension()
        );
        let mut storage = create_writer(dir.join(&relative), &self.options.storage)?;
        for (info, def) in self
            .metadata
            .topics_with_message_count
            .iter()
            .zip(&self.definitions)
        {
            storage.create_topic(&info.topic_metadata, def)?;
        }
        self.metadata.relative_file_paths.push(relative.clone());
        self.file = FileInformation {
            path: relative,
            ..Default::default()
        };
        self.storage = Some(storage);
        Ok(())
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
            && self.file.message_count > 0
            && message.recv_timestamp - self.file.starting_time >= limit
        {
            self.split_file()?;
        }
        self.storage()?.write(message)?;
        let file = &mut self.file;
        if file.message_count == 0 {
            file.starting_time = message.recv_timestamp;
        } else if message.recv_timestamp < file.starting_time {
            file.duration += file.starting_time - message.recv_timestamp;
            file.starting_time = message.recv_timestamp;
        }
        file.duration = file
            .duration
            .max(message.recv_timestamp - file.starting_time);
        file.message_count += 1;
        self.metadata.topics_with_message_count[index].message_count += 1;
        let max_size = self.options.max_bagfile_size;
        if max_size > 0 && self.storage()?.bytes_written() >= max_size {
            self.split_file()?;
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
        self.metadata.files.push(self.file.clone());
        self.metadata.recompute_totals_from_files();
        storage.update_metadata(&self.metadata)?;
        let path = storage.path().to_path_buf();
        storage.finish()?;
        let mut result = Ok(());
        if let Some(compressor) = &mut self.file_compressor {
            result = compressor.submit(path.clone());
        }
        let compressed = self.collect_compressed(wait);
        self.update_bag_size();
        self.metadata.write_to_dir(&self.options.uri)?;
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
    /// compressed in the background). A file that holds no message yet is kept instead (no
    /// empty file is left behind); returns whether a new file was started.
    pub fn split(&mut self) -> Result<bool> {
        self.drain_compressor()?;
        if self.file.message_count == 0 {
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
        drained.and(closed).map(|_| ())
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
