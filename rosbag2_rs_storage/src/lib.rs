//! # rosbag2_rs_storage
//!
//! Bag files: everything that reads, writes or repairs them, and nothing that touches the
//! middleware or time control (those live in `rosbag2_rs_transport_lib`). Messages are decoded by
//! `rosbag2_rs_codec`; the tools over bags (doctor, export, convert) live in `rosbag2_rs_tools`.
//! Its implementation modules are private and their types re-exported here; [`qos`],
//! [`storage`] (the plugins), [`rosbag1`] and [`compression`] are namespaces of their own.
//!
//! - **The bag model** ([`Bag`], [`BagMetadata`], [`TopicMetadata`], [`qos`]): locating a bag (a
//!   directory with or without `metadata.yaml`, or a single storage file), reading
//!   `metadata.yaml` in every version from 1 to 9 and writing it exactly as rosbag2 does
//!   (version 9), topics with their QoS profiles and type hashes.
//! - **Storage plugins** ([`storage`]): MCAP (`.mcap`, rosbag2's `ros2` profile, chunk
//!   compression none/lz4/zstd and rosbag2's storage presets) and SQLite3 (`.db3`, schema
//!   versions 1 to 4) read and written, and ROS 1 bags (`.bag`, [`rosbag1`]) read and written
//!   with CDR conversion on the fly. Finished MCAP and ROS 1 files are memory-mapped and read
//!   without copying; a file truncated under the reader gives an error, not a crash
//!   ([`storage::mapped_file`]).
//! - **Compression** ([`compression`]): rosbag2's file mode (`*.mcap.zstd`, `*.db3.zstd`) and
//!   message mode (one zstd frame per message), read transparently and written on background
//!   threads.
//! - **Reading** ([`SequentialReader`]): several bags of several files merged into one stream in
//!   receive-time order, with topic filters ([`TopicFilter`]) and index-based seeking.
//! - **Writing** ([`BagWriter`]): a bag directory with splitting by size, duration or on demand and
//!   `metadata.yaml` kept correct after every split.
//! - **Repair**: [`reindex()`] rebuilds `metadata.yaml`, recovering what a killed writer or a
//!   damaged disk left ([`FileRecovery`]).
//! - **MCAP attachments and metadata records** ([`storage::mcap_extras`]): read, written, and
//!   added to a finished file without touching its messages ([`append_attachments`]).
//! - **Bounded allocation** ([`limits`]): no size read from a file reserves memory before it is
//!   checked.
//!
//! Errors are typed ([`StorageError`]) and name the file they concern; bad input is an error,
//! never a panic.
//!
//! The crate reads bottom-up: the names of its formats ([`StorageId`], [`StoragePreset`],
//! [`CompressionMode`], [`CompressionFormat`], each parsed once from its spelling) at the bottom,
//! then errors, the bag model, the plugin traits ([`storage::plugin`]), the plugins, compression
//! and recovery, and at the top opening a file ([`storage::open_reader`]), reading, writing and
//! reindexing bags; no module imports one above it (`tools/house_shape.py` checks).
//!
//! ```no_run
//! use rosbag2_rs_storage::{SequentialReader, TopicFilter};
//! let mut reader = SequentialReader::open("my_bag".as_ref())?;
//! reader.set_filter(&TopicFilter::topics(["/chatter"]))?;
//! while let Some(msg) = reader.read_next()? {
//!     println!("{} {} {} bytes", msg.recv_timestamp, msg.topic, msg.data.len());
//! }
//! # Ok::<(), rosbag2_rs_storage::StorageError>(())
//! ```
//!
//! Writing a bag compressed as `ros2 bag record --compression-mode file --compression-format
//! zstd` does:
//!
//! ```no_run
//! use rosbag2_rs_storage::*;
//! let mut writer = BagWriter::create(BagWriterOptions {
//!     uri: "compressed_bag".into(),
//!     compression: CompressionOptions {
//!         mode: CompressionMode::File,
//!         format: CompressionFormat::Zstd,
//!         threads: 2,
//!         ..Default::default()
//!     },
//!     ..Default::default()
//! })?;
//! writer.create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)?;
//! writer.close()?;
//! # Ok::<(), rosbag2_rs_storage::StorageError>(())
//! ```

mod bag;
pub mod compression;
mod disk;
mod error;
mod filter;
mod formats;
pub mod limits;
mod message;
mod metadata;
pub mod qos;
mod reader;
pub mod recover;
mod reindex;
pub mod rosbag1;
pub mod storage;
pub mod timing;
mod writer;
mod yaml;

pub use bag::{local_stamp, split_file_stem, split_index_key, storage_files_in, Bag};
pub use compression::{BagCompression, CompressionFormat, CompressionMode, CompressionOptions};
pub use disk::free_space;
pub use error::{Result, StorageError};
pub use filter::{is_hidden, NameRegex, TopicFilter};
pub use formats::{uncompressed_name, UnknownName};
pub use message::{SerializedMessage, TopicMetadata};
pub use metadata::{
    BagMetadata, FileInformation, TopicInformation, FILE_BEING_WRITTEN_KEY, METADATA_FILENAME,
};
pub use qos::QosProfile;
pub use reader::{InputBag, SequentialReader};
pub use recover::{FileRecovery, Loss, RecoveryAction};
pub use reindex::{reindex, reindex_to, ReindexReport};
pub use storage::mcap_extras::{
    append_attachments, attach_to_bag, bag_extras, files_extras, read_extras, Attachment,
    McapExtras, MetadataRecord,
};
pub use storage::{
    OpenMode, StorageConfig, StorageId, StoragePreset, StorageReader, StorageWriter,
    UnreadableTopic, WriterOptions,
};
pub use writer::{BagWriter, BagWriterOptions, Retention, SplitEvent, METADATA_REWRITE_SHARE};
