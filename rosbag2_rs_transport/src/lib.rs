//! # rosbag2_rs_transport
//!
//! The link between rosbag2-rs and a ROS 2 graph: one narrow [`Middleware`] interface over
//! serialized messages, with a Cyclone DDS backend ([`dds::DdsMiddleware`], the default; no ROS 2
//! installation needed) and a deterministic in-process backend ([`inprocess::InProcessBus`]) for
//! tests and benchmarks.

pub mod dds;
pub mod error;
pub mod inprocess;
pub mod keyboard;
pub mod logging;
pub mod middleware;
pub mod names;
pub mod player;
pub mod qos_overrides;
pub mod recorder;
pub mod ros_args;
pub mod services;
pub mod shutdown;

pub use error::{Result, TransportError};
pub use middleware::{
    EndpointInfo, GraphEvent, Handle, MessageCallback, Middleware, RawClient, RawPublisher,
    ReceivedMessage, ServiceHandler, TopicInfo,
};
pub use names::NodeIdentity;
pub use services::{serve, Client};
