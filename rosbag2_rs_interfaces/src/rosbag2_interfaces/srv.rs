//! `rosbag2_interfaces/srv`: the services of the rosbag2 player and recorder
//! (ROS 2 Jazzy definitions).
//!
//! Each service `X` is a marker type implementing [`crate::ServiceType`], with
//! its request `XRequest` and response `XResponse`.

use serde::{Deserialize, Serialize};

use crate::builtin_interfaces::{Duration, Time};

/// `rosbag2_interfaces/srv/Burst`: Play the next `num_messages` messages at once, without waiting (player).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Burst;

/// `rosbag2_interfaces/srv/Burst_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BurstRequest {
    /// Number of messages to burst; zero to burst the whole bag.
    pub num_messages: u64,
}

/// `rosbag2_interfaces/srv/Burst_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BurstResponse {
    /// Number of messages actually burst.
    pub actually_burst: u64,
}

impl_service!(
    Burst,
    BurstRequest,
    BurstResponse,
    "rosbag2_interfaces/srv/Burst"
);

/// `rosbag2_interfaces/srv/GetRate`: Get the playback rate (player).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetRate;

/// `rosbag2_interfaces/srv/GetRate_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetRateRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/GetRate_Response`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetRateResponse {
    /// The current playback rate.
    pub rate: f64,
}

impl_service!(
    GetRate,
    GetRateRequest,
    GetRateResponse,
    "rosbag2_interfaces/srv/GetRate"
);

/// `rosbag2_interfaces/srv/IsPaused`: Ask whether playback or recording is paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IsPaused;

/// `rosbag2_interfaces/srv/IsPaused_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IsPausedRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/IsPaused_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IsPausedResponse {
    /// True if paused.
    pub paused: bool,
}

impl_service!(
    IsPaused,
    IsPausedRequest,
    IsPausedResponse,
    "rosbag2_interfaces/srv/IsPaused"
);

/// `rosbag2_interfaces/srv/Pause`: Pause playback or recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pause;

/// `rosbag2_interfaces/srv/Pause_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PauseRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/Pause_Response`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PauseResponse {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

impl_service!(
    Pause,
    PauseRequest,
    PauseResponse,
    "rosbag2_interfaces/srv/Pause"
);

/// `rosbag2_interfaces/srv/Play`: Start a playback (player started with the play service enabled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Play;

/// `rosbag2_interfaces/srv/Play_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlayRequest {
    /// See rosbag2_transport::PlayOptions::start_offset.
    pub start_offset: Time,
    /// See rosbag2_transport::PlayOptions::playback_duration.
    pub playback_duration: Duration,
    /// See rosbag2_transport::PlayOptions::playback_until_timestamp.
    pub playback_until_timestamp: Time,
}

/// `rosbag2_interfaces/srv/Play_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlayResponse {
    /// Returns false when another playback execution is running, otherwise true.
    pub success: bool,
}

impl_service!(
    Play,
    PlayRequest,
    PlayResponse,
    "rosbag2_interfaces/srv/Play"
);

/// `rosbag2_interfaces/srv/PlayNext`: Publish the next message while paused (player).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlayNext;

/// `rosbag2_interfaces/srv/PlayNext_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlayNextRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/PlayNext_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlayNextResponse {
    /// Can only play-next while playback is paused.
    pub success: bool,
}

impl_service!(
    PlayNext,
    PlayNextRequest,
    PlayNextResponse,
    "rosbag2_interfaces/srv/PlayNext"
);

/// `rosbag2_interfaces/srv/Resume`: Resume playback or recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resume;

/// `rosbag2_interfaces/srv/Resume_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResumeRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/Resume_Response`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResumeResponse {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

impl_service!(
    Resume,
    ResumeRequest,
    ResumeResponse,
    "rosbag2_interfaces/srv/Resume"
);

/// `rosbag2_interfaces/srv/Seek`: Jump to a point in the bag (player).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seek;

/// `rosbag2_interfaces/srv/Seek_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SeekRequest {
    /// Bag time to continue playback from.
    pub time: Time,
}

/// `rosbag2_interfaces/srv/Seek_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SeekResponse {
    /// Return true if valid time in bag duration, and successful seek.
    pub success: bool,
}

impl_service!(
    Seek,
    SeekRequest,
    SeekResponse,
    "rosbag2_interfaces/srv/Seek"
);

/// `rosbag2_interfaces/srv/SetRate`: Set the playback rate (player).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetRate;

/// `rosbag2_interfaces/srv/SetRate_Request`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetRateRequest {
    /// New playback rate.
    pub rate: f64,
}

/// `rosbag2_interfaces/srv/SetRate_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetRateResponse {
    /// True if valid rate (> 0) was set.
    pub success: bool,
}

impl_service!(
    SetRate,
    SetRateRequest,
    SetRateResponse,
    "rosbag2_interfaces/srv/SetRate"
);

/// `rosbag2_interfaces/srv/Snapshot`: Write the snapshot buffer to the bag (recorder in snapshot mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Snapshot;

/// `rosbag2_interfaces/srv/Snapshot_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SnapshotRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/Snapshot_Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SnapshotResponse {
    /// True if the snapshot was written.
    pub success: bool,
}

impl_service!(
    Snapshot,
    SnapshotRequest,
    SnapshotResponse,
    "rosbag2_interfaces/srv/Snapshot"
);

/// `rosbag2_interfaces/srv/SplitBagfile`: Close the current bag file and continue in a new one (recorder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SplitBagfile;

/// `rosbag2_interfaces/srv/SplitBagfile_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SplitBagfileRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/SplitBagfile_Response`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SplitBagfileResponse {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

impl_service!(
    SplitBagfile,
    SplitBagfileRequest,
    SplitBagfileResponse,
    "rosbag2_interfaces/srv/SplitBagfile"
);

/// `rosbag2_interfaces/srv/Stop`: Stop playback or recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stop;

/// `rosbag2_interfaces/srv/Stop_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StopRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/Stop_Response`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StopResponse {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

impl_service!(
    Stop,
    StopRequest,
    StopResponse,
    "rosbag2_interfaces/srv/Stop"
);

/// `rosbag2_interfaces/srv/TogglePaused`: Pause if running, resume if paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TogglePaused;

/// `rosbag2_interfaces/srv/TogglePaused_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TogglePausedRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// `rosbag2_interfaces/srv/TogglePaused_Response`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TogglePausedResponse {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

impl_service!(
    TogglePaused,
    TogglePausedRequest,
    TogglePausedResponse,
    "rosbag2_interfaces/srv/TogglePaused"
);
