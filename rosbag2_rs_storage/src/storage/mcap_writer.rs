//! MCAP storage writer in rosbag2's layout: profile `ros2`, `ros2msg` schemas, `cdr` channels
//! with `offered_qos_profiles` and `topic_type_hash` metadata, log time = receive time, publish
//! time = send time, and a `rosbag2` metadata record.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcap::records::{MessageHeader, Metadata};
use mcap::write::NoSeek;

use super::blockfile::SharedBlockFile;
use crate::error::{Result, StorageError};
use crate::formats::{CompressionFormat, StorageId, StoragePreset};
use crate::message::{SerializedMessage, TopicMetadata};
use crate::metadata::BagMetadata;
use crate::qos;
use crate::storage::plugin::{StorageWriter, WriterOptions};
use rosbag2_rs_codec::MessageDefinition;

type Sink = mcap::Writer<NoSeek<SharedBlockFile>>;

/// Bytes an MCAP message record adds to its payload (opcode, length, header).
const MESSAGE_RECORD_OVERHEAD: u64 = 1 + 8 + 2 + 4 + 8 + 8;

/// Writes one `.mcap` file.
pub struct McapWriter {
    path: PathBuf,
    writer: Option<Sink>,
    /// topic name -> (channel id, next sequence number)
    channels: HashMap<Arc<str>, (u16, u32)>,
    schemas: HashMap<String, u16>,
    file: SharedBlockFile,
    chunked: bool,
    /// Record bytes written since the file position last moved: the part still in the chunk buffer.
    pending: u64,
    last_position: u64,
    metadata: Option<String>,
}

/// The zstd level of the `zstd_fast` preset: mcap C++'s `Fastest`, as rosbag2 sets it.
const FASTEST: i32 = -5;

/// A zstd level as the mcap crate takes it: a `u32` that its zstd encoder reads back as the
/// `i32` level (`as i32`), so that the negative (fast) levels rosbag2's presets use get through.
fn zstd_level(level: i32) -> u32 {
    level as u32
}

/// Translates a rosbag2 preset and compression override into MCAP write options.
fn write_options(options: &WriterOptions) -> Result<mcap::WriteOptions> {
    let base = mcap::WriteOptions::new()
        .profile("ros2")
        .library(format!(
            "rosbag2-rs {}; {}",
            env!("CARGO_PKG_VERSION"),
            mcap::LIBRARY_IDENTIFIER
        ))
        .disable_seeking(true)
        .compression_threads(0);
    options.preset.check_for(StorageId::Mcap)?;
    let (mut opts, mut compression) = match options.preset {
        StoragePreset::Fastwrite => (
            base.use_chunks(false).calculate_summary_section_crc(false),
            None,
        ),
        StoragePreset::ZstdFast => (
            base.chunk_size(Some(options.chunk_size))
                .compression_level(zstd_level(FASTEST))
                .calculate_chunk_crcs(false),
            Some(mcap::Compression::Zstd),
        ),
        StoragePreset::ZstdSmall => (
            base.chunk_size(Some(4 << 20)).compression_level(19),
            Some(mcap::Compression::Zstd),
        ),
        StoragePreset::None | StoragePreset::Resilient => {
            (base.chunk_size(Some(options.chunk_size)), None)
        }
    };
    let config = &options.config;
    if let Some(size) = config.chunk_size {
        opts = opts.chunk_size(Some(size));
    }
    if let Some(level) = config.compression_level {
        opts = opts.compression_level(zstd_level(level));
    }
    if let Some(on) = config.data_crc {
        opts = opts.calculate_data_section_crc(on);
    }
    let records = config.records;
    opts = opts
        .emit_message_indexes(records.message_index)
        .repeat_schemas(records.summary && records.repeated_schemas)
        .repeat_channels(records.summary && records.repeated_channels)
        .emit_attachment_indexes(records.summary && records.attachment_index)
        .emit_metadata_indexes(records.summary && records.metadata_index)
        .emit_chunk_indexes(records.summary && records.chunk_index)
        .emit_statistics(records.summary && records.statistics)
        .emit_summary_offsets(records.summary && records.summary_offsets);
    let no_crc = config.no_crc;
    if no_crc.chunk {
        opts = opts.calculate_chunk_crcs(false);
    }
    if no_crc.attachment {
        opts = opts.calculate_attachment_crcs(false);
    }
    if no_crc.summary {
        opts = opts.calculate_summary_section_crc(false);
    }
    if no_crc.data {
        opts = opts.calculate_data_section_crc(false);
    }
    let chunked = !config
        .no_chunking
        .unwrap_or(options.preset == StoragePreset::Fastwrite);
    opts = opts.use_chunks(chunked);
    if let Some(c) = config.compression.or(options.compression) {
        c.check_chunks_of(StorageId::Mcap)?;
        compression = match c {
            CompressionFormat::Zstd => Some(mcap::Compression::Zstd),
            CompressionFormat::Lz4 => Some(mcap::Compression::Lz4),
            CompressionFormat::None | CompressionFormat::Bz2 => None,
        };
    }
    if compression.is_some() && !chunked {
        return Err(StorageError::InvalidArgument(
            "the 'fastwrite' preset (or noChunking) writes no chunks and cannot compress".into(),
        ));
    }
    if matches!(compression, Some(mcap::Compression::Lz4)) {
        // The level names are zstd levels; lz4 chunks use lz4's default (see StorageConfig).
        opts = opts.compression_level(0);
    }
    opts = opts.compression(compression);
    Ok(opts)
}

impl McapWriter {
    /// Creates `path` (which must not exist) and writes the MCAP header.
    pub fn create(path: PathBuf, options: &WriterOptions) -> Result<Self> {
        let opts = write_options(options)?;
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| StorageError::io(&path, e))?;
        let file = SharedBlockFile::new(file);
        let writer = opts
            .create(NoSeek::new(file.clone()))
            .map_err(|e| StorageError::Mcap {
                path: path.clone(),
                source: e,
            })?;
        let mut mcap = Self {
            path,
            writer: Some(writer),
            channels: HashMap::new(),
            schemas: HashMap::new(),
            file,
            chunked: !options
                .config
                .no_chunking
                .unwrap_or(options.preset == StoragePreset::Fastwrite),
            pending: 0,
            last_position: 0,
            metadata: None,
        };
        for record in &options.metadata {
            mcap.add_metadata(record)?;
        }
        Ok(mcap)
    }

    fn mcap_err(&self, source: mcap::McapError) -> StorageError {
        match source {
            mcap::McapError::Io(e) => StorageError::io(&self.path, e),
            source => StorageError::Mcap {
                path: self.path.clone(),
                source,
            },
        }
    }

    fn sink(&mut self) -> Result<&mut Sink> {
        self.writer.as_mut().ok_or_else(|| {
            StorageError::InvalidArgument(format!("{}: already finished", self.path.display()))
        })
    }
}

impl StorageWriter for McapWriter {
    fn path(&self) -> &Path {
        &self.path
    }

    fn create_topic(
        &mut self,
        topic: &TopicMetadata,
        definition: &MessageDefinition,
    ) -> Result<()> {
        if self.channels.contains_key(topic.name.as_str()) {
            return Ok(());
        }
        let schema_id = match self.schemas.get(&topic.type_name) {
            Some(id) => *id,
            None => {
                let (encoding, text) = (
                    definition.encoding.as_str(),
                    definition.encoded_message_definition.as_bytes(),
                );
                let id = self
                    .sink()?
                    .add_schema(&topic.type_name, encoding, text)
                    .map_err(|e| self.mcap_err(e))?;
                self.schemas.insert(topic.type_name.clone(), id);
                id
            }
        };
        let metadata = [
            (
                "offered_qos_profiles".to_string(),
                qos::serialize_profiles(&topic.offered_qos_profiles),
            ),
            (
                "topic_type_hash".to_string(),
                topic.type_description_hash.clone(),
            ),
        ]
        .into();
        let id = self
            .sink()?
            .add_channel(
                schema_id,
                &topic.name,
                &topic.serialization_format,
                &metadata,
            )
            .map_err(|e| self.mcap_err(e))?;
        self.channels.insert(topic.name.as_str().into(), (id, 0));
        Ok(())
    }

    fn write(&mut self, message: &SerializedMessage) -> Result<()> {
        let Some((channel_id, sequence)) = self.channels.get_mut(&message.topic) else {
            return Err(StorageError::InvalidArgument(format!(
                "{}: topic '{}' was not created before writing to it",
                self.path.display(),
                message.topic
            )));
        };
        let header = MessageHeader {
            channel_id: *channel_id,
            sequence: *sequence,
            log_time: message.recv_timestamp.max(0) as u64,
            publish_time: message.send_timestamp.max(0) as u64,
        };
        *sequence = sequence.wrapping_add(1);
        let result = self.sink()?.write_to_known_channel(&header, &message.data);
        result.map_err(|e| self.mcap_err(e))?;
        let position = self.file.position();
        if position != self.last_position {
            // A chunk was emitted: hand it to the kernel now, so that a crash keeps it.
            if self.chunked {
                self.file
                    .drain_buffer()
                    .map_err(|e| StorageError::io(&self.path, e))?;
            }
            self.last_position = position;
            self.pending = 0;
        }
        self.pending += message.data.len() as u64 + MESSAGE_RECORD_OVERHEAD;
        Ok(())
    }

    fn bytes_written(&self) -> u64 {
        self.last_position + self.pending
    }

    fn flush(&mut self) -> Result<()> {
        self.file
            .drain_buffer()
            .map_err(|e| StorageError::io(&self.path, e))
    }

    fn update_metadata(&mut self, metadata: &BagMetadata) -> Result<()> {
        self.metadata = Some(metadata.to_yaml_string());
        Ok(())
    }

    fn add_attachment(&mut self, attachment: &super::mcap_extras::Attachment) -> Result<()> {
        let record = mcap::Attachment {
            log_time: attachment.log_time,
            create_time: attachment.create_time,
            name: attachment.name.clone(),
            media_type: attachment.media_type.clone(),
            data: std::borrow::Cow::Borrowed(&attachment.data),
        };
        let result = self.sink()?.attach(&record);
        result.map_err(|e| self.mcap_err(e))?;
        self.last_position = self.file.position();
        self.pending = 0;
        Ok(())
    }

    fn add_metadata(&mut self, record: &super::mcap_extras::MetadataRecord) -> Result<()> {
        let record = Metadata {
            name: record.name.clone(),
            metadata: record.metadata.clone(),
        };
        let result = self.sink()?.write_metadata(&record);
        result.map_err(|e| self.mcap_err(e))?;
        self.last_position = self.file.position();
        self.pending = 0;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        let Some(mut writer) = self.writer.take() else {
            return Ok(());
        };
        if let Some(serialized) = self.metadata.take() {
            let record = Metadata {
                name: "rosbag2".into(),
                metadata: [("serialized_metadata".to_string(), serialized)].into(),
            };
            writer
                .write_metadata(&record)
                .map_err(|e| self.mcap_err(e))?;
        }
        writer.finish().map_err(|e| self.mcap_err(e))?;
        writer
            .into_inner()
            .into_inner()
            .sync()
            .map_err(|e| StorageError::io(&self.path, e))
    }
}
