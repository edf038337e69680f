//! `rosbag2_rs_interfaces/srv`: configuring, clearing and triggering the
//! recorder's snapshot buffer, the player's `/clock` publishing at run time,
//! pausing either at a time, and the recorder's state and topics (`IsRecording`,
//! `GetUri`, `SubscribeToTopics`, `GetSubscribedTopics`), which rosbag2 does not have.
//!
//! Each service `X` is a marker type implementing [`crate::ServiceType`], with
//! its request `XRequest` and response `XResponse`.

use serde::{Deserialize, Serialize};

/// `rosbag2_rs_interfaces/srv/SetMemory`: set the per-topic size limit of the
/// snapshot buffer (fields as in rosbag2's snapshot design).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetMemory;

/// `rosbag2_rs_interfaces/srv/SetMemory_Request`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetMemoryRequest {
    /// Maximum bytes buffered per topic; non-positive disables the limit by size.
    pub memory: f64,
}

/// `rosbag2_rs_interfaces/srv/SetMemory_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetMemoryResponse {
    /// True if the memory is positive, or non-positive while the duration is positive.
    pub success: bool,
}

impl_service!(
    SetMemory,
    SetMemoryRequest,
    SetMemoryResponse,
    "rosbag2_rs_interfaces/srv/SetMemory"
);

/// `rosbag2_rs_interfaces/srv/SetDuration`: set the time window of the snapshot
/// buffer (fields as in rosbag2's snapshot design).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetDuration;

/// `rosbag2_rs_interfaces/srv/SetDuration_Request`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetDurationRequest {
    /// Seconds kept (messages received before now minus this are dropped);
    /// non-positive disables the limit by duration.
    pub duration: f64,
}

/// `rosbag2_rs_interfaces/srv/SetDuration_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetDurationResponse {
    /// True if the duration is positive, or non-positive while the memory is positive.
    pub success: bool,
}

impl_service!(
    SetDuration,
    SetDurationRequest,
    SetDurationResponse,
    "rosbag2_rs_interfaces/srv/SetDuration"
);

/// `rosbag2_rs_interfaces/srv/TriggerSnapshot`: write a snapshot with a file
/// name, a topic subset, a time window and a post-trigger tail (the request of
/// rosbag_snapshot's `TriggerSnapshot`, plus `post_trigger_seconds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TriggerSnapshot;

/// `rosbag2_rs_interfaces/srv/TriggerSnapshot_Request`; the default is the empty
/// request, which writes everything buffered.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TriggerSnapshotRequest {
    /// Bag directory to write; empty: the recorder's timestamped default.
    pub filename: String,
    /// Topics to write; empty: all.
    pub topics: Vec<String>,
    /// Earliest receive time written; zero: no limit.
    pub start_time: crate::builtin_interfaces::Time,
    /// Latest receive time written; zero: no limit.
    pub stop_time: crate::builtin_interfaces::Time,
    /// Seconds recorded after the trigger into the same snapshot; non-positive: none.
    pub post_trigger_seconds: f64,
}

/// `rosbag2_rs_interfaces/srv/TriggerSnapshot_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TriggerSnapshotResponse {
    /// True if the snapshot was queued for writing.
    pub success: bool,
    /// Where it is written, or why not.
    pub message: String,
}

impl_service!(
    TriggerSnapshot,
    TriggerSnapshotRequest,
    TriggerSnapshotResponse,
    "rosbag2_rs_interfaces/srv/TriggerSnapshot"
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

/// `rosbag2_rs_interfaces/srv/PauseAt`: pause a player or recorder when its
/// clock reaches a time (the counterpart of `Resume`'s `resume_time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PauseAt;

/// `rosbag2_rs_interfaces/srv/PauseAt_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PauseAtRequest {
    /// When to pause, by the node's clock (ROS time); zero or past: at once.
    pub pause_time: crate::builtin_interfaces::Time,
}

/// `rosbag2_rs_interfaces/srv/PauseAt_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PauseAtResponse {
    /// True if the pause is done or scheduled.
    pub success: bool,
    /// Why it was refused, if it was.
    pub message: String,
}

impl_service!(
    PauseAt,
    PauseAtRequest,
    PauseAtResponse,
    "rosbag2_rs_interfaces/srv/PauseAt"
);

query_service!(
    IsRecording,
    IsRecordingRequest,
    IsRecordingResponse,
    "rosbag2_rs_interfaces/srv/IsRecording",
    "`rosbag2_rs_interfaces/srv/IsRecording`: Whether the recorder is recording.",
    recording: bool,
    "True if recording (a bag is open, even while paused)."
);

query_service!(
    GetUri,
    GetUriRequest,
    GetUriResponse,
    "rosbag2_rs_interfaces/srv/GetUri",
    "`rosbag2_rs_interfaces/srv/GetUri`: The bag being recorded.",
    uri: String,
    "The bag's URI; empty when not recording."
);

/// `rosbag2_rs_interfaces/srv/SubscribeToTopics`: Record more topics from now on (recorder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubscribeToTopics;

/// `rosbag2_rs_interfaces/srv/SubscribeToTopics_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SubscribeToTopicsRequest {
    /// The topics to record.
    pub topics: Vec<String>,
    /// Their types, in the same order (empty, or empty entries: the one type on the graph).
    pub topic_types: Vec<String>,
}

/// `rosbag2_rs_interfaces/srv/SubscribeToTopics_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SubscribeToTopicsResponse {
    /// 0 when at least one topic is subscribed, else 1.
    pub return_code: i32,
    /// Empty on success, otherwise what went wrong.
    pub error_string: String,
    /// The requested topics subscribed now, also those subscribed before.
    pub subscribed_topics: Vec<String>,
    /// The requested topics not on the graph, of another type, or of several types.
    pub unavailable_topics: Vec<String>,
}

impl_service!(
    SubscribeToTopics,
    SubscribeToTopicsRequest,
    SubscribeToTopicsResponse,
    "rosbag2_rs_interfaces/srv/SubscribeToTopics"
);

/// `rosbag2_rs_interfaces/srv/GetSubscribedTopics`: The topics being recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetSubscribedTopics;

empty_request!(
    GetSubscribedTopicsRequest,
    "rosbag2_rs_interfaces/srv/GetSubscribedTopics"
);

/// `rosbag2_rs_interfaces/srv/GetSubscribedTopics_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetSubscribedTopicsResponse {
    /// The topics subscribed.
    pub topics: Vec<String>,
}

impl_service!(
    GetSubscribedTopics,
    GetSubscribedTopicsRequest,
    GetSubscribedTopicsResponse,
    "rosbag2_rs_interfaces/srv/GetSubscribedTopics"
);
