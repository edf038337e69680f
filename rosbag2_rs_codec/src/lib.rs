//! # rosbag2_rs_codec
//!
//! ROS message types as data: what a bag stores about a type and what it takes to read and write
//! its messages without generated code. It knows nothing of bag files or the middleware; the
//! storage, transport, tools and RealSense crates build on it.
//!
//! - **Definitions** ([`MessageDefinition`], [`MessageDefinitionCache`]): the full `.msg` text of
//!   a type with its dependencies appended, as MCAP schemas and SQLite `message_definitions`
//!   store it, from `AMENT_PREFIX_PATH` or a bundled set of common interfaces.
//! - **The codec** ([`msg`]): definitions parsed at run time (`ros2msg` `.msg` text and
//!   `ros2idl`, the `.idl` rosidl generates: [`msg::idl`]), CDR (XCDR1) and ROS 1
//!   serialization to and from one [`msg::Value`] tree, YAML/JSON rendering, ROS 1 ↔ ROS 2 type
//!   mapping and transcoding. Bad bytes give a [`msg::CodecError`] naming the type and field,
//!   never a panic.
//! - **Type hashes** ([`type_hash`]): RIHS01 (REP-2011), as ROS 2 Iron and later announce them
//!   and record them in bags.
//! - **Typestores** ([`Typestore`]): message definitions per ROS 2 distribution (Humble to
//!   Kilted) for bags recorded before Iron, which store none.
//! - **Length bounds** ([`limits`]): a count read from the input is checked against the bytes
//!   left before anything is allocated for it.
//!
//! ```
//! use rosbag2_rs_codec::msg::{decode_cdr, Dialect, Registry};
//! let mut reg = Registry::new();
//! reg.parse_concatenated("std_msgs/msg/String", "string data\n", Dialect::Ros2)?;
//! let (value, _) = decode_cdr(&reg, "std_msgs/msg/String", &[0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0])?;
//! assert_eq!(value.fields().unwrap()[0].as_str().unwrap(), "hi");
//! # Ok::<(), rosbag2_rs_codec::msg::CodecError>(())
//! ```

#![warn(missing_docs)]

mod definition_cache;
pub mod image;
pub mod limits;
mod message_definition;
pub mod msg;
pub mod type_hash;
mod typestore;

pub use definition_cache::MessageDefinitionCache;
pub use message_definition::MessageDefinition;
pub use typestore::{Typestore, UnknownTypestore, TYPESTORE_NAMES};
