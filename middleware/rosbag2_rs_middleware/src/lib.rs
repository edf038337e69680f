//! # rosbag2_rs_middleware
//!
//! The one interface the player and recorder use to reach the ROS 2 graph, [`Middleware`], as
//! rmw is ROS 2's. It works on serialized CDR bytes (with their 4-byte encapsulation header) so
//! that a bag's bytes go out as they are and received bytes go into a bag as they are; typed
//! services sit on top ([`services`]). With it, what every backend shares: the errors
//! ([`error`]), ROS names ([`names`]), payload checks, type hashes ([`type_hashes`]) and type
//! descriptions ([`type_description`]), the ROS arguments of a node ([`ros_arguments`]), and the
//! deterministic in-process backend ([`inprocess::InProcessBus`], for tests and benchmarks).
//!
//! Each backend is a crate of its own, named for its middleware: `rosbag2_rs_rcl` (rcl and the
//! rmw a sourced ROS 2 selects), `rosbag2_rs_fastdds`, `rosbag2_rs_cyclonedds` and
//! `rosbag2_rs_zenoh` (each on its middleware's own library), the two DDS ones sharing
//! `rosbag2_rs_dds_common`. The transport library (`rosbag2_rs_transport_lib`) chooses among
//! them as ROS 2 chooses its rmw.

// Its own name for itself, so that test code shared with the backends' crates reads the same.
extern crate self as rosbag2_rs_middleware;

use std::time::Duration;

// The types of the interface's signatures, for the backends and their users: the payload, the
// graph event channel, the QoS (rosbag2's model, as bags record it) and type descriptions.
pub use bytes::Bytes;
pub use crossbeam_channel;
pub use rosbag2_rs_codec::type_hash;
pub use rosbag2_rs_storage::{qos, QosProfile};

pub mod error;
pub mod guard;
pub mod inprocess;
pub mod loss;
pub mod names;
pub mod on_graph;
pub mod ros_arguments;
pub mod services;
pub mod type_description;
pub mod type_hashes;

#[cfg(test)]
mod ros_arguments_golden;

pub use error::{Result, TransportError};
pub use names::NodeIdentity;

/// A message received on a subscription.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedMessage {
    /// CDR bytes including the 4-byte encapsulation header.
    pub data: Bytes,
    /// When it was received, ns since the epoch (the backend's clock).
    pub recv_timestamp: i64,
    /// When its publisher sent it, ns since the epoch, if the middleware carries it.
    pub send_timestamp: Option<i64>,
    /// Its publisher's GID (the first 16 bytes, as rmw reports it), where the backend gives it
    /// (rcl: the message info; Zenoh: the attachment).
    pub publisher_gid: Option<[u8; 16]>,
}

/// Called for every message of a subscription, on a backend thread (DDS) or on the publishing
/// thread (in-process). It must not block for long.
pub type MessageCallback = Box<dyn FnMut(ReceivedMessage) + Send>;

/// Who sent a service request: the identity rmw layers hand to a server with each request (and
/// that service introspection events carry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestId {
    /// The client's GID (rmw_cyclonedds: its 8-byte client id, then zeros).
    pub client_gid: [u8; 16],
    /// The client's sequence number of the request.
    pub sequence_number: i64,
}

/// Handles one service request: who sent it and the request CDR bytes in, response CDR bytes out
/// (both with their encapsulation header), or a reason the request was refused (logged; no
/// response is sent).
pub type ServiceHandler = Box<dyn FnMut(&RequestId, &[u8]) -> Result<Vec<u8>> + Send>;

/// An endpoint seen on the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointInfo {
    /// ROS message type, `pkg/msg/Type`.
    pub type_name: String,
    /// The QoS it offers (publishers) or requests (subscriptions).
    pub qos: QosProfile,
    /// Its node (`/ns/name`), where the graph says (DDS: the participant's
    /// `ros_discovery_info`).
    pub node: Option<String>,
    /// The type hash the endpoint announces (`RIHS01_<64 hex>`, Jazzy and later), if any.
    pub type_hash: Option<String>,
}

/// A topic seen on the graph.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopicInfo {
    /// Fully qualified name.
    pub name: String,
    /// Publishers, with their types and offered QoS.
    pub publishers: Vec<EndpointInfo>,
    /// Subscriptions, with their types and requested QoS.
    pub subscriptions: Vec<EndpointInfo>,
}

impl TopicInfo {
    /// The types used on the topic, publishers first, without repeats.
    pub fn type_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for e in self.publishers.iter().chain(&self.subscriptions) {
            if !out.contains(&e.type_name) {
                out.push(e.type_name.clone());
            }
        }
        out
    }
}

/// Groups endpoints, given as `(topic, is_publisher, endpoint)`, into topics sorted by name.
pub fn group_by_topic(
    endpoints: impl IntoIterator<Item = (String, bool, EndpointInfo)>,
) -> Vec<TopicInfo> {
    let mut topics: std::collections::BTreeMap<String, TopicInfo> =
        std::collections::BTreeMap::new();
    for (name, is_publisher, endpoint) in endpoints {
        let info = topics.entry(name.clone()).or_insert_with(|| TopicInfo {
            name,
            ..Default::default()
        });
        if is_publisher {
            info.publishers.push(endpoint);
        } else {
            info.subscriptions.push(endpoint);
        }
    }
    topics.into_values().collect()
}

/// A change on the graph.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphEvent {
    /// A publisher appeared on a topic.
    PublisherAppeared {
        /// Fully qualified topic name.
        topic: String,
        /// Its message type.
        type_name: String,
    },
}

/// A publisher of serialized messages.
pub trait RawPublisher: Send + Sync {
    /// Publishes CDR bytes (with encapsulation header) as they are.
    fn publish(&self, data: &Bytes) -> Result<()>;
    /// Publishes with an explicit send time (ns since the epoch) where the middleware carries one.
    fn publish_at(&self, data: &Bytes, _send_timestamp: i64) -> Result<()> {
        self.publish(data)
    }
    /// Subscriptions currently matched.
    fn subscription_count(&self) -> usize;
    /// Waits until every reliable subscription acknowledged every message published so far, or
    /// `timeout`; true when all were. A middleware without acknowledgements returns at once.
    fn wait_for_acks(&self, _timeout: Duration) -> bool {
        true
    }
}

/// A client of one service, for serialized requests.
pub trait RawClient: Send + Sync {
    /// Whether a server is available, waiting up to `timeout`.
    fn wait_for_service(&self, timeout: Duration) -> bool;
    /// Sends a request (CDR with header) and waits for its response.
    fn call(&self, request: &[u8], timeout: Duration) -> Result<Vec<u8>>;
    /// Sends a request without waiting: its response, when it comes, is dropped.
    fn send(&self, request: &[u8]) -> Result<()>;
}

/// Keeps a subscription or service alive; dropping it removes it from the graph.
pub struct Handle(#[allow(dead_code)] Box<dyn Send + Sync>);

impl Handle {
    /// Wraps whatever keeps the entity alive.
    pub fn new(inner: impl Send + Sync + 'static) -> Self {
        Self(Box::new(inner))
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Handle")
    }
}

/// A node on the ROS 2 graph. Names may be absolute, relative or private (`~/x`) and are
/// expanded against the node's identity.
pub trait Middleware: Send + Sync {
    /// The node's name and namespace.
    fn node(&self) -> &NodeIdentity;
    /// Creates a publisher of `type_name` (`pkg/msg/Type`) on `topic`.
    fn create_publisher(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
    ) -> Result<Box<dyn RawPublisher>>;
    /// Subscribes to `topic`; `callback` receives every message.
    fn create_subscription(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
        callback: MessageCallback,
    ) -> Result<Handle>;
    /// The backend's clock now, ns since the epoch: the time base of
    /// [`ReceivedMessage::recv_timestamp`] (the system clock unless the backend has its own,
    /// e.g. a test's virtual time).
    fn now(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64)
    }
    /// Serves `service` of `type_name` (`pkg/srv/Type`).
    fn create_service(
        &self,
        service: &str,
        type_name: &str,
        handler: ServiceHandler,
    ) -> Result<Handle>;
    /// Creates a client of `service`.
    fn create_client(&self, service: &str, type_name: &str) -> Result<Box<dyn RawClient>>;
    /// All topics on the graph with their publishers and subscriptions.
    fn topics(&self) -> Vec<TopicInfo>;
    /// Graph changes from now on.
    fn graph_events(&self) -> crossbeam_channel::Receiver<GraphEvent>;
    /// Tells the node the type hash (`RIHS01_<64 hex>`, REP-2011) of `type_name`, from a bag or
    /// from definitions; endpoints of that type created from now on announce it where the
    /// middleware carries one (DDS: `typehash=` in USER_DATA; Zenoh: key expressions and
    /// liveliness tokens). A middleware that carries none ignores it.
    fn register_type_hash(&self, _type_name: &str, _hash: &str) {}
    /// Tells the node the description of `type_name` (from a bag or from the publishers'
    /// nodes), for a type that may not be installed: a middleware that builds type support at
    /// run time (rcl's dynamic type support) subscribes with it. Others ignore it (they move
    /// bytes whatever the type).
    fn register_type_description(
        &self,
        _type_name: &str,
        _description: &rosbag2_rs_codec::type_hash::TypeDescription,
    ) {
    }
    /// The description of `type_name` that a publisher of `topic` announces in the middleware's
    /// own type system (DDS: an XTypes complete type object, fetched through the type lookup
    /// service), for a type no node describes. `None` where there is none (reasons logged).
    fn announced_type_description(
        &self,
        _topic: &str,
        _type_name: &str,
    ) -> Option<rosbag2_rs_codec::type_hash::TypeDescription> {
        None
    }
    /// Messages the middleware knows were lost on `topic` before reaching this node's
    /// subscriptions (Zenoh: gaps in each publisher's sequence numbers). A middleware that cannot
    /// tell returns 0.
    fn lost_messages(&self, _topic: &str) -> u64 {
        0
    }
}

/// Keep-last depth a reliable volatile writer keeps at least (every backend), so that a reader
/// that falls behind on large samples is repaired from the writer's history rather than skipped:
/// a keep-last writer overwrites the oldest sample when its history is full, whether or not
/// every reader has acknowledged it. 64 is about 2 s of camera frames at 30 Hz: with 16, 6 MB
/// frames at 30 Hz went missing mid-stream while a reader was repairing fragments. Only
/// unacknowledged samples are held, so a reader that keeps up costs nothing. Transient local
/// writers keep their recorded depth (it decides what late joiners get).
pub const MIN_RELIABLE_WRITER_DEPTH: u64 = 64;

/// The least keep-last depth of a writer created with `qos` (see
/// [`MIN_RELIABLE_WRITER_DEPTH`]): 0 for best-effort and transient local writers.
pub fn min_writer_depth(qos: &QosProfile) -> u64 {
    use rosbag2_rs_storage::qos::{Durability, Reliability};
    match (qos.reliability, qos.durability) {
        (Reliability::BestEffort, _) | (_, Durability::TransientLocal) => 0,
        _ => MIN_RELIABLE_WRITER_DEPTH,
    }
}

/// How long a writer that is going away waits for its reliable readers to acknowledge what it
/// wrote, so that the last messages of a playback are not lost because the process ends right
/// after writing them (Cyclone DDS lingers so; the Fast DDS shim's `writer_linger` and the rcl
/// backend's publishers wait as long).
pub const WRITER_LINGER: Duration = Duration::from_secs(1);

/// How long a service that is going away (its node ending, often on the `stop` request it just
/// answered) keeps delivering what it owes: replies still waiting for their client's reader and
/// the acknowledgement of those sent. Every backend waits at most this long.
pub const REPLY_FLUSH_TIMEOUT: Duration = Duration::from_secs(1);

/// The fewest bytes a serialized message has: its CDR encapsulation header.
pub const MIN_MESSAGE_LEN: usize = 4;

/// Whether a received sample is too short for its CDR encapsulation header (fewer than
/// [`MIN_MESSAGE_LEN`] bytes): no message at all, whatever the backend delivered it. The
/// recorder counts such samples as malformed and never records them (every backend's samples
/// pass through it; the rcl backend also skips them at the take).
pub fn too_short_for_encapsulation(data: &[u8]) -> bool {
    data.len() < MIN_MESSAGE_LEN
}

/// Rejects bytes without a CDR encapsulation header.
pub fn check_payload(data: &[u8]) -> Result<()> {
    match data {
        [0, 0 | 1, _, _, ..] => Ok(()),
        _ => Err(TransportError::InvalidPayload(format!(
            "{} bytes without a CDR encapsulation header",
            data.len()
        ))),
    }
}
