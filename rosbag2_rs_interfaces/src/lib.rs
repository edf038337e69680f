//! ROS 2 interface types of rosbag2 for this project's native middleware backends.
//!
//! This crate has two faces (see the README next to `Cargo.toml`):
//!
//! * a rosidl interface package (`package.xml`, `CMakeLists.txt`, `srv/`) that
//!   generates this project's own services for ROS 2 environments, and
//! * the Rust types in this library, which mirror those services and the ones
//!   of ROS 2's `rosbag2_interfaces` package (Lyrical's definitions, kept for
//!   reference under `rosbag2_interfaces/`), so
//!   that this project's native backends serve and call them without any ROS 2
//!   installation.
//!
//! Every message, request and response derives `serde::Serialize` and
//! `serde::Deserialize` with its fields in IDL order, so the serde data model
//! maps 1:1 onto the CDR wire format ROS 2 uses. Types with no fields carry the
//! `structure_needs_at_least_one_member: u8` field that rosidl generates for
//! them, so that they occupy the same single byte on the wire.
//!
//! ```
//! use rosbag2_rs_interfaces::rosbag2_interfaces::srv::{SetRate, SetRateRequest};
//! use rosbag2_rs_interfaces::{dds_request_type_name, from_cdr, to_cdr, ServiceType};
//!
//! let bytes = to_cdr(&SetRateRequest { rate: 2.0 });
//! assert_eq!(bytes, [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40]);
//! let back: SetRateRequest = from_cdr(&bytes).unwrap();
//! assert_eq!(back.rate, 2.0);
//! assert_eq!(
//!     dds_request_type_name(SetRate::TYPE_NAME).unwrap(),
//!     "rosbag2_interfaces::srv::dds_::SetRate_Request_"
//! );
//! ```

#![forbid(unsafe_code)]

#[macro_use]
mod macros;

pub mod action_msgs;
pub mod builtin_interfaces;
mod cdr;
mod error;
mod names;
pub mod rcl_interfaces;
pub mod rosbag2_interfaces;
pub mod rosbag2_rs_interfaces;
pub mod service_msgs;
mod traits;
pub mod type_description_interfaces;

pub use cdr::{
    from_cdr, to_cdr, try_to_cdr, ENCAPSULATION_CDR_BE, ENCAPSULATION_CDR_LE,
    ENCAPSULATION_HEADER_LEN,
};
pub use error::InterfaceError;
pub use names::{
    dds_request_type_name, dds_response_type_name, dds_type_name, parse_type_name, TypeKind,
    TypeName,
};
pub use traits::{MessageType, ServiceType};
