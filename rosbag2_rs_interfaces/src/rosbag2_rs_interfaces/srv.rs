//! `rosbag2_rs_interfaces/srv`: configuring and clearing the recorder's
//! snapshot ring buffer, whose limits apply per topic, and the player's `/clock`
//! publishing at run time.
//!
//! Each service `X` is a marker type implementing [`crate::ServiceType`], with
//! its request `XRequest` and response `XResponse`.

use serde::{Deserialize, Serialize};

/// `rosbag2_rs_interfaces/srv/SetMemory`: set the per-topic size limit of the
/// snapshot ring buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetMemory;

/// `rosbag2_rs_interfaces/srv/SetMemory_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetMemoryRequest {
    /// Maximum bytes buffered per topic; 0 means no limit by size.
    pub max_bytes_per_topic: u64,
}

/// `rosbag2_rs_interfaces/srv/SetMemory_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetMemoryResponse {
    /// True if the new limit was applied.
    pub success: bool,
    /// Human-readable detail, e.g. why the request was rejected.
    pub message: String,
}

impl_service!(
    SetMemory,
    SetMemoryRequest,
    SetMemoryResponse,
    "rosbag2_rs_interfaces/srv/SetMemory"
);

/// `rosbag2_rs_interfaces/srv/SetDuration`: set the per-topic time window of
/// the snapshot ring buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetDuration;

/// `rosbag2_rs_interfaces/srv/SetDuration_Request`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetDurationRequest {
    /// Time window kept per topic, in seconds; 0 means no limit by duration.
    pub max_duration_seconds: f64,
}

/// `rosbag2_rs_interfaces/srv/SetDuration_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetDurationResponse {
    /// True if the new limit was applied.
    pub success: bool,
    /// Human-readable detail, e.g. why the request was rejected.
    pub message: String,
}

impl_service!(
    SetDuration,
    SetDurationRequest,
    SetDurationResponse,
    "rosbag2_rs_interfaces/srv/SetDuration"
);

/// `rosbag2_rs_interfaces/srv/ClearBuffer`: drop every message held in the
/// snapshot ring buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClearBuffer;

/// `rosbag2_rs_interfaces/srv/ClearBuffer_Request`: no fields; rosidl gives it
/// a placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClearBufferRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_rs_interfaces/srv/ClearBuffer_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClearBufferResponse {
    /// True if the buffer was cleared.
    pub success: bool,
    /// Human-readable detail, e.g. why the request was rejected.
    pub message: String,
}

impl_service!(
    ClearBuffer,
    ClearBufferRequest,
    ClearBufferResponse,
    "rosbag2_rs_interfaces/srv/ClearBuffer"
);

/// `rosbag2_rs_interfaces/srv/SetClockPublishFrequency`: start, change or stop the
/// player's `/clock` publishing while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetClockPublishFrequency;

/// `rosbag2_rs_interfaces/srv/SetClockPublishFrequency_Request`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetClockPublishFrequencyRequest {
    /// Hz; a positive value starts or changes publishing, 0 stops it.
    pub frequency: f64,
}

/// `rosbag2_rs_interfaces/srv/SetClockPublishFrequency_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetClockPublishFrequencyResponse {
    /// True if the new frequency was applied.
    pub success: bool,
    /// Human-readable detail, e.g. why the request was rejected.
    pub message: String,
}

impl_service!(
    SetClockPublishFrequency,
    SetClockPublishFrequencyRequest,
    SetClockPublishFrequencyResponse,
    "rosbag2_rs_interfaces/srv/SetClockPublishFrequency"
);
