//! ROS 1 bags (format v2.0, `#ROSBAG V2.0`): reading with chunk compression none, bz2 and lz4,
//! using the index for time-ordered reads and seeks, recovering what an unindexed bag holds;
//! writing with index records and chunk infos as `rosbag` writes them; and the `rosbag_v2`
//! storage plugin that converts between ROS 1 serialization and CDR on the fly.
//!
//! ```no_run
//! use rosbag2_rs_storage::rosbag1::BagReader;
//! use rosbag2_rs_storage::OpenMode;
//! let mut bag = BagReader::open("old.bag".as_ref(), OpenMode::Strict)?;
//! while let Some(m) = bag.read_next()? {
//!     let topic = &bag.connection(m.connection).unwrap().topic;
//!     println!("{} {topic} {} bytes", m.time, m.data.len());
//! }
//! # Ok::<(), rosbag2_rs_storage::StorageError>(())
//! ```

mod compression;
mod error;
mod plugin;
mod reader;
pub(crate) mod record;
mod writer;

pub use error::Ros1FormatError;
pub use plugin::{Ros1Reader, Ros1Writer};
pub use reader::{is_rosbag1, BagReader, Connection, RawMessage};
pub use writer::{BagWriter, WriterOptions};

#[cfg(test)]
mod tests;
