//! # rosbag2_rs_storage
//!
//! The storage layer of rosbag2-rs: the bag model, `metadata.yaml`, the MCAP and SQLite3
//! storage plugins, message definitions, and bag-level reading, writing, conversion and
//! reindexing. It knows nothing of the middleware or of time control.
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

pub mod bag;
pub mod compression;
pub mod convert;
pub mod error;
pub mod filter;
pub mod message;
pub mod metadata;
pub mod msg;
pub mod msgdefs;
pub mod qos;
pub mod reader;
pub mod recover;
pub mod reindex;
pub mod rosbag1;
pub mod storage;
pub mod writer;
mod yaml;

pub use bag::Bag;
pub use compression::{BagCompression, CompressionFormat, CompressionMode, CompressionOptions};
pub use convert::{convert, ConvertOptions};
pub use error::{Result, StorageError};
pub use filter::TopicFilter;
pub use message::{MessageDefinition, SerializedMessage, TopicMetadata};
pub use metadata::{BagMetadata, FileInformation, TopicInformation};
pub use msgdefs::MessageDefinitionCache;
pub use qos::QosProfile;
pub use reader::SequentialReader;
pub use recover::{FileRecovery, Loss, RecoveryAction};
pub use reindex::{reindex, ReindexReport};
pub use storage::{
    ChunkCompression, OpenMode, StorageId, StoragePreset, StorageReader, StorageWriter,
    UnreadableTopic, WriterOptions,
};
pub use writer::{BagWriter, BagWriterOptions, SplitEvent};
