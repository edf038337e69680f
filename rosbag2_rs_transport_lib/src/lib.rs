//! # rosbag2_rs_transport_lib
//!
//! Everything of rosbag2-rs that talks to a ROS 2 graph:
//!
//! - **The middleware**: one narrow [`Middleware`] interface over serialized messages (publish,
//!   subscribe, services, graph queries). Built in a sourced ROS 2 (`AMENT_PREFIX_PATH` naming
//!   rcl), the rcl backend (`RclMiddleware`: rcl and the rmw the user's ROS 2 selects) is the
//!   default. Otherwise `RMW_IMPLEMENTATION` picks a native backend, each on its middleware's own
//!   library and needing no ROS 2 installation: Fast DDS (feature `fastdds`, the default where
//!   built), Cyclone DDS ([`DdsMiddleware`]) and Zenoh as rmw_zenoh_cpp speaks it (feature
//!   `zenoh`); [`Layer`] and [`create_node`] say which. A deterministic in-process backend
//!   ([`InProcessBus`]) serves tests and benchmarks. Typed services ([`serve`], [`Client`]) sit
//!   on top.
//! - **The player** ([`Player`]): plays bags onto the graph under full time control (pause,
//!   rate, seek, play-next, burst, `/clock`, sim time), with rosbag2's services. All time logic
//!   is the [`PlayerClock`](rosbag2_rs_clock::PlayerClock)'s.
//! - **The recorder** ([`Recorder`]): records the selected topics as they appear, through a
//!   double-buffered cache that never makes a subscription wait on the disk, or keeps per-topic
//!   ring buffers and writes them to a new bag on a trigger (snapshot mode).
//!
//! Both take typed option structs ([`PlayOptions`], [`RecordOptions`]). The `player` and
//! `recorder` nodes (package `rosbag2_rs_transport`, where `ros2 run` finds them) and the
//! `ros2bag-rs` command line (`ros2bag_rs_cli`, which also holds the nodes' flags, `--ros-args`
//! and rosbag2's node parameters) are built on this library.

mod clock_topic;
mod clock_watch;
mod error_chain;
mod middleware;
mod parameters;
mod player;
mod qos_overrides;
mod recorder;
pub mod ros_arguments;
mod rosout;
mod type_description;

pub use clock_topic::{clock_qos, CLOCK_TOPIC, CLOCK_TYPE};
pub use middleware::cyclonedds::{
    DdsConfig, DdsMiddleware, DiscoveryRange, NodeEntities, ParticipantEntities,
};
pub use middleware::error::{Result, TransportError};
#[cfg(rosbag2_rs_fastdds)]
pub use middleware::fastdds::{FastDdsConfig, FastDdsMiddleware};
pub use middleware::inprocess::{InProcessBus, InProcessNode};
pub use middleware::names::NodeIdentity;
pub use middleware::on_graph::wait_for_nodes_to_leave;
#[cfg(rosbag2_rs_rcl)]
pub use middleware::rcl::RclMiddleware;
pub use middleware::select::{create_node, Layer, Rmw};
pub use middleware::services::{serve, serve_introspected, Client, ServiceIntrospection};
/// rmw_zenoh_cpp's wire formats; with the `zenoh` feature, the rmw_zenoh_cpp-compatible backend
/// and the `rmw_zenohd`-like router.
pub use middleware::zenoh;
pub use middleware::{
    EndpointInfo, GraphEvent, Handle, MessageCallback, Middleware, RawClient, RawPublisher,
    ReceivedMessage, RequestId, ServiceHandler, TopicInfo, MIN_RELIABLE_WRITER_DEPTH,
};
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
pub use rosout::{rosout_qos, LogOrigin, Rosout, ROSOUT_TOPIC};

/// The decoders of what a remote peer describes its types with, for the fuzz targets (`fuzz/`):
/// DDS-XTypes type objects and `GetTypeDescription` answers. Not an API.
#[doc(hidden)]
pub mod remote_types {
    pub use crate::middleware::cyclonedds::xtypes::decode_type_object;
    pub use crate::middleware::dds_common::xtypes::{
        describe, ros_type_name, StructType, TypeHash, TypeIdentifier, XTypesError,
    };
    pub use crate::type_description::{answer, definition_from_answer, AskError};
}

/// `package.xml` declares, by rosdep key, every ROS package the build links or reads and every one
/// the nodes load at run time (the build script's own list, `build/ros_dependencies.rs`).
#[cfg(test)]
#[path = "../build/ros_dependencies.rs"]
mod ros_dependencies;

/// The build script's search for rcl, whose refusals are checked here.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../build/rcl_probe.rs"]
mod rcl_probe;

#[cfg(test)]
mod package_manifest {
    use super::ros_dependencies;

    #[test]
    fn package_xml_declares_every_ros_dependency() {
        let xml = include_str!("../package.xml");
        let declared = |key: &str, kinds: &[&str]| {
            kinds
                .iter()
                .any(|kind| xml.contains(&format!(">{key}</{kind}>")))
        };
        let build = ["depend", "build_depend"];
        let run = ["depend", "exec_depend"];
        let linked = ros_dependencies::LINKED.iter().map(|(_, key)| *key);
        for key in linked.clone() {
            assert!(declared(key, &["depend"]), "{key}: linked, not a <depend>");
        }
        for key in ros_dependencies::FAST_DDS {
            assert!(declared(key, &["depend"]), "{key}: linked, not a <depend>");
        }
        for key in ros_dependencies::HEADERS_ONLY
            .iter()
            .chain(ros_dependencies::BUILD_TOOLS)
        {
            assert!(declared(key, &build), "{key}: built with, not declared");
        }
        for key in ros_dependencies::RUN {
            assert!(
                declared(key, &run),
                "{key}: loaded at run time, not declared"
            );
        }
    }
}
