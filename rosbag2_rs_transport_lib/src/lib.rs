//! # rosbag2_rs_transport_lib
//!
//! The player and the recorder of rosbag2-rs, and the choice of middleware under them:
//!
//! - **The middleware**: one narrow [`Middleware`] interface over serialized messages (publish,
//!   subscribe, services, graph queries), from `rosbag2_rs_middleware`, with a backend crate per
//!   middleware. Built in a sourced ROS 2 (`AMENT_PREFIX_PATH` naming rcl), the rcl backend
//!   (`RclMiddleware`, crate `rosbag2_rs_rcl`: rcl and the rmw the user's ROS 2 selects) is the
//!   default. Otherwise `RMW_IMPLEMENTATION` picks a native backend, each on its middleware's own
//!   library and needing no ROS 2 installation: Fast DDS (`rosbag2_rs_fastdds`, feature
//!   `fastdds`, the default where built), Cyclone DDS ([`DdsMiddleware`], `rosbag2_rs_cyclonedds`)
//!   and Zenoh as rmw_zenoh_cpp speaks it (`rosbag2_rs_zenoh`, feature `zenoh`); [`Layer`] and
//!   [`create_node`] say which. A deterministic in-process backend ([`InProcessBus`]) serves
//!   tests and benchmarks. Typed services ([`serve`], [`Client`]) sit on top.
//! - **The player** ([`Player`]): plays bags onto the graph under full time control (pause,
//!   rate, seek, play-next, burst, `/clock`, sim time), with rosbag2's services. All time logic
//!   is the [`PlayerClock`](rosbag2_rs_clock::PlayerClock)'s.
//! - **The recorder** ([`Recorder`]): records the selected topics as they appear, through a
//!   double-buffered cache that never makes a subscription wait on the disk, or keeps per-topic
//!   ring buffers and writes them to a new bag on a trigger (snapshot mode).
//!
//! Both take typed option structs ([`PlayOptions`], [`RecordOptions`]). The `player` and
//! `recorder` nodes and their node front (flags, `--ros-args`, rosbag2's node parameters) are
//! package `rosbag2_rs_transport`, on this library; the `ros2bag-rs` command line
//! (`ros2bag_rs_cli`) is on top of both.

mod clock_topic;
mod clock_watch;
mod error_chain;
mod parameters;
mod player;
mod qos_overrides;
mod recorder;
pub mod ros_arguments;
mod rosout;
mod select;

pub use clock_topic::{clock_qos, CLOCK_TOPIC, CLOCK_TYPE};
pub use parameters::{parse_value, serve_parameters, DeclaredParameter, ParameterServices};
pub use player::{
    adapt_to_recorded, MessageOrder, PlayOptions, PlaySpan, PlaybackEnd, PlaybackSummary, Player,
    PlayerError, ServiceRequestsSource, StopHandle,
};
pub use qos_overrides::load_qos_overrides;
pub use recorder::{
    adapt_request_to_offers, is_hidden, is_service_event_topic, max_service_buffer_bytes,
    message_cost, service_event_topic, DropCause, RecordOptions, RecordSummary, Recorder,
    RecorderControl, RecorderError, Schedule, SnapshotLimits, SnapshotTrigger, Throttle,
    ThrottleLimit, ThrottleLimitError, TimeMode, TopicCounters, TopicPlan, TopicSelection,
    TopicSummary, DEFAULT_MAX_CACHE_SIZE, DEFAULT_MIN_FREE_SPACE, DEFAULT_SNAPSHOT_DURATION_NS,
    DROPPED_BEFORE_CLOCK_KEY, DROPPED_MESSAGES_KEY, LOST_MESSAGES_KEY, MALFORMED_MESSAGES_KEY,
    MAX_POST_TRIGGER_NS, MAX_SERVICE_BUFFER_DURATION_NS, MAX_STATS_RATE, MESSAGES_LOST_TOPIC,
    MESSAGE_OVERHEAD, MIN_SUBSCRIPTION_DEPTH, SILENCES_KEY, THROTTLED_MESSAGES_KEY,
    WRITE_SPLIT_TOPIC,
};
pub use rosbag2_rs_cyclonedds::{
    DdsConfig, DdsMiddleware, DiscoveryRange, NodeEntities, ParticipantEntities,
};
#[cfg(rosbag2_rs_fastdds)]
pub use rosbag2_rs_fastdds::{FastDdsConfig, FastDdsMiddleware};
pub use rosbag2_rs_middleware::inprocess::{InProcessBus, InProcessNode};
pub use rosbag2_rs_middleware::names::NodeIdentity;
pub use rosbag2_rs_middleware::on_graph::wait_for_nodes_to_leave;
pub use rosbag2_rs_middleware::services::{
    serve, serve_introspected, Client, ServiceIntrospection,
};
pub use rosbag2_rs_middleware::{
    EndpointInfo, GraphEvent, Handle, MessageCallback, Middleware, RawClient, RawPublisher,
    ReceivedMessage, RequestId, Result, ServiceHandler, TopicInfo, TransportError,
    MIN_RELIABLE_WRITER_DEPTH,
};
#[cfg(rosbag2_rs_rcl)]
pub use rosbag2_rs_rcl::RclMiddleware;
/// rmw_zenoh_cpp's wire formats; with the `zenoh` feature, the rmw_zenoh_cpp-compatible backend
/// and the `rmw_zenohd`-like router.
pub use rosbag2_rs_zenoh as zenoh;
pub use rosout::{rosout_qos, LogOrigin, Rosout, ROSOUT_TOPIC};
pub use select::{create_node, Layer, Rmw};
