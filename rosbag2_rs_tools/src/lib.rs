//! # rosbag2_rs_tools
//!
//! Tools over bags, built on `rosbag2_rs_storage` (bag I/O) and `rosbag2_rs_codec` (decoding):
//! what the `ros2bag-rs` verbs `doctor`, `export` and `convert` do, and the RealSense crate
//! reuses.
//!
//! - [`doctor()`]: a read-only structural check of a bag that reports every problem found.
//! - [`export`]: a topic's messages as files other programs open (PNG frames, video, CSV).
//! - [`expr`]: the `--where` expression language over decoded message fields.
//! - [`convert()`]: merge bags and rewrite them in another storage, compression or selection,
//!   ROS 1 bags in and out.
//! - [`flags`]: the flag groups of the verbs that read and write bags (inputs, topic selection,
//!   output storage), shared by `ros2bag-rs` and the player and recorder nodes; [`console`]:
//!   their log lines, progress line and error reports.

pub mod console;
pub mod convert;
pub mod doctor;
pub mod export;
pub mod expr;
pub mod flags;

pub use convert::{convert, convert_filtered, ConvertFilters, ConvertOptions};
pub use doctor::{doctor, DoctorOptions, DoctorReport, Problem, ProblemKind, Severity};
