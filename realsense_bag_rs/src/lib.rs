//! # realsense_bag_rs
//!
//! RealSense SDK recordings read with rosbag2-rs's storage and message codec: the ROS 1 `.bag`
//! files SDK 2.57 and older record (file versions 2 to 4) and the rosbag2 SQLite3 `.db3` files
//! SDK 2.58 and newer record, and writes both ([`RecordingWriter`], [`copy_recording`]). A [`Recording`] gives the device description (device and sensor
//! information, options, stream profiles with intrinsics and extrinsics) and then every frame in
//! recording order, with its number, device timestamp and domain, metadata and payload.
//!
//! ```no_run
//! use realsense_bag_rs::Recording;
//! let mut rec = Recording::open("capture.bag".as_ref())?;
//! for sensor in &rec.device().sensors {
//!     println!("{:?}: {} streams", sensor.name(), sensor.streams.len());
//! }
//! while let Some(frame) = rec.next_frame()? {
//!     println!("{} #{} at {} ms", frame.stream, frame.number, frame.timestamp_ms);
//! }
//! # Ok::<(), realsense_bag_rs::RealSenseError>(())
//! ```

#![forbid(unsafe_code)]

pub mod bridge;
mod copy;
mod db3;
mod error;
mod model;
mod playback;
mod png;
mod reader;
mod ros2_types;
mod source;
pub mod topic;
mod writer;

pub use copy::{copy_bag, copy_recording, CopyOptions, CopyReport};
pub use error::RealSenseError;
pub use model::*;
pub use playback::{Playback, PlaybackHandle, Status};
pub use reader::{is_recording, Recording};
pub use writer::{is_db3_path, RecordingWriter};

/// The chunk compressions of a `.bag` recording the RealSense SDK reads (librealsense's ROS 1
/// reader knows none and lz4, not bz2).
pub const CHUNK_COMPRESSIONS: &[rosbag2_rs_storage::CompressionFormat] = &[
    rosbag2_rs_storage::CompressionFormat::None,
    rosbag2_rs_storage::CompressionFormat::Lz4,
];
