//! `rosbag2_interfaces/srv`: the services of the rosbag2 player and recorder
//! (rosbag2 Lyrical's definitions, 0.33.3, field for field; the requests and responses that grew
//! since Jazzy also decode from their Jazzy layouts).
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

/// The layout rosidl gives a request or response without fields, as `Stop`, `Resume` and
/// `SplitBagfile` had them before Lyrical: one placeholder byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NoFields {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

/// Responses that report how a request went: `return_code` 0 and an empty `error_string` on
/// success.
macro_rules! outcome_response {
    ($ty:ident, $doc:expr) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub struct $ty {
            /// 0 on success, otherwise an error code of the service.
            pub return_code: i32,
            /// Empty on success, otherwise what went wrong.
            pub error_string: String,
        }

        impl $ty {
            /// A response with `return_code` and `error_string`.
            pub fn new(return_code: i32, error_string: impl Into<String>) -> Self {
                Self {
                    return_code,
                    error_string: error_string.into(),
                }
            }
        }

        impl From<NoFields> for $ty {
            /// The pre-Lyrical empty response: nothing reported, success assumed.
            fn from(_: NoFields) -> Self {
                Self::default()
            }
        }
    };
}

/// How a scheduled `Resume` or `SplitBagfile` reads its time: the recorder's clock (node time),
/// or the publish or receive time of the messages (of the tracking topic, else of any topic).
pub mod time_mode {
    /// The recorder's clock (ROS time under sim time).
    pub const NODE_TIME: i32 = 0;
    /// The messages' publish (source) time.
    pub const PUBLISH_TIME: i32 = 1;
    /// The messages' receive time.
    pub const RECEIVE_TIME: i32 = 2;
}

/// `rosbag2_interfaces/srv/Resume`: Resume playback or recording; the recorder also at a given
/// time (Lyrical: `resume_time`, its mode and tracking topic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resume;

/// `rosbag2_interfaces/srv/Resume_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResumeRequest {
    /// When to resume (zero or past: at once); the player takes only zero.
    pub resume_time: Time,
    /// How `resume_time` is read: a [`time_mode`] constant.
    pub resume_mode: i32,
    /// The topic whose messages' times count (empty: any topic's).
    pub tracking_topic_name: String,
}

/// `Resume_Request` with a time only, as an earlier rosbag2 release defined it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResumeRequestLyrical {
    /// When to resume (zero or past: at once).
    pub resume_time: Time,
}

impl From<ResumeRequestLyrical> for ResumeRequest {
    fn from(old: ResumeRequestLyrical) -> Self {
        Self {
            resume_time: old.resume_time,
            ..Self::default()
        }
    }
}

impl From<NoFields> for ResumeRequest {
    fn from(_: NoFields) -> Self {
        Self::default()
    }
}

impl ResumeResponse {
    /// `return_code`: resumed (or scheduled).
    pub const RETURN_CODE_SUCCESS: i32 = 0;
    /// `return_code`: `resume_mode` is not a [`time_mode`].
    pub const RETURN_CODE_INVALID_RESUME_MODE: i32 = 1;
    /// `return_code`: `tracking_topic_name` is not recorded.
    pub const RETURN_CODE_INVALID_TRACKING_TOPIC: i32 = 2;
    /// `return_code`: anything else.
    pub const RETURN_CODE_RESUME_FAILED: i32 = 3;
}

outcome_response!(ResumeResponse, "`rosbag2_interfaces/srv/Resume_Response`.");

impl_service!(
    Resume,
    ResumeRequest,
    ResumeResponse,
    "rosbag2_interfaces/srv/Resume",
    older: [ResumeRequestLyrical, NoFields], [NoFields]
);

/// `rosbag2_interfaces/srv/SplitBagfile`: Close the current bag file and continue in a new one
/// (recorder), at once or at a given time (Lyrical).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SplitBagfile;

/// `rosbag2_interfaces/srv/SplitBagfile_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SplitBagfileRequest {
    /// When to split (zero or past: at once).
    pub split_time: Time,
    /// How `split_time` is read: a [`time_mode`] constant.
    pub split_mode: i32,
    /// The topic whose messages' times count (empty: any topic's).
    pub tracking_topic_name: String,
}

impl From<NoFields> for SplitBagfileRequest {
    fn from(_: NoFields) -> Self {
        Self::default()
    }
}

impl SplitBagfileResponse {
    /// `return_code`: split (or scheduled).
    pub const RETURN_CODE_SUCCESS: i32 = 0;
    /// `return_code`: the recorder is not recording to a bag.
    pub const RETURN_CODE_NOT_RECORDING: i32 = 1;
    /// `return_code`: `split_mode` is not a [`time_mode`].
    pub const RETURN_CODE_INVALID_SPLIT_MODE: i32 = 2;
    /// `return_code`: `tracking_topic_name` is not recorded.
    pub const RETURN_CODE_INVALID_TRACKING_TOPIC: i32 = 3;
    /// `return_code`: the split failed.
    pub const RETURN_CODE_SPLIT_FAILED: i32 = 4;
}

outcome_response!(
    SplitBagfileResponse,
    "`rosbag2_interfaces/srv/SplitBagfile_Response`."
);

impl_service!(
    SplitBagfile,
    SplitBagfileRequest,
    SplitBagfileResponse,
    "rosbag2_interfaces/srv/SplitBagfile",
    older: [NoFields], [NoFields]
);

/// `rosbag2_interfaces/srv/Stop`: Stop playback, or recording (Lyrical: the recorder closes its
/// bag and can `Record` again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stop;

/// `rosbag2_interfaces/srv/Stop_Request`: no fields; rosidl gives it a
/// placeholder byte, so it is one byte on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StopRequest {
    /// Placeholder rosidl generates for types without fields; always 0.
    pub structure_needs_at_least_one_member: u8,
}

outcome_response!(StopResponse, "`rosbag2_interfaces/srv/Stop_Response`.");

impl_service!(
    Stop,
    StopRequest,
    StopResponse,
    "rosbag2_interfaces/srv/Stop",
    older: [], [NoFields]
);

/// `rosbag2_interfaces/srv/Record`: Start recording again after a `Stop` (recorder; Jazzy
/// 0.26.10 and Lyrical; Lyrical also at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Record;

/// `rosbag2_interfaces/srv/Record_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RecordRequest {
    /// The new bag's URI; empty: the one given at start.
    pub uri: String,
    /// When to start, by the node's clock (zero or past: at once; Lyrical).
    pub start_time: Time,
}

/// `Record_Request` as Jazzy defines it: a URI only.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RecordRequestJazzy {
    /// The new bag's URI; empty: the one given at start.
    pub uri: String,
}

impl From<RecordRequestJazzy> for RecordRequest {
    fn from(old: RecordRequestJazzy) -> Self {
        Self {
            uri: old.uri,
            ..Self::default()
        }
    }
}

outcome_response!(RecordResponse, "`rosbag2_interfaces/srv/Record_Response`.");

impl_service!(
    Record,
    RecordRequest,
    RecordResponse,
    "rosbag2_interfaces/srv/Record",
    older: [RecordRequestJazzy], []
);

/// A service without request fields whose response reports an outcome.
macro_rules! outcome_service {
    ($service:ident, $request:ident, $response:ident, $type_name:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $service;

        empty_request!($request, $type_name);

        outcome_response!($response, concat!("`", $type_name, "_Response`."));

        impl_service!($service, $request, $response, $type_name);
    };
}

outcome_service!(
    StartDiscovery,
    StartDiscoveryRequest,
    StartDiscoveryResponse,
    "rosbag2_interfaces/srv/StartDiscovery",
    "`rosbag2_interfaces/srv/StartDiscovery`: Look for new topics to record again (recorder, Lyrical)."
);

outcome_service!(
    StopDiscovery,
    StopDiscoveryRequest,
    StopDiscoveryResponse,
    "rosbag2_interfaces/srv/StopDiscovery",
    "`rosbag2_interfaces/srv/StopDiscovery`: Record only the topics subscribed so far (recorder, Lyrical)."
);

query_service!(
    IsDiscoveryRunning,
    IsDiscoveryRunningRequest,
    IsDiscoveryRunningResponse,
    "rosbag2_interfaces/srv/IsDiscoveryRunning",
    "`rosbag2_interfaces/srv/IsDiscoveryRunning`: Whether the recorder looks for new topics (Lyrical).",
    running: bool,
    "True if discovery is running."
);
