//! The ROS 2 graph as a DDS node sees it, the same for every DDS backend: the readers and writers
//! discovery reports (each backend feeds them in under its own key: Cyclone DDS's instance
//! handle, Fast DDS's GUID), node names from other participants' `ros_discovery_info`, and a
//! [`GraphEvent`] for each writer that appears.

use std::collections::HashMap;
use std::hash::Hash;

use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Sender;
use rosbag2_rs_middleware::names::ros_topic_from_dds;
use rosbag2_rs_middleware::{group_by_topic, EndpointInfo, GraphEvent, QosProfile, TopicInfo};

use crate::discovery_info::{NodeEntities, ParticipantEntities};
use crate::xtypes::TypeHash;
use crate::Guid;

/// A reader or writer as discovery describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// A writer (else a reader).
    pub is_writer: bool,
    /// Its GUID.
    pub guid: Guid,
    /// Its participant's GUID.
    pub participant: Guid,
    /// DDS topic name.
    pub topic: String,
    /// DDS type name.
    pub type_name: String,
    /// Its QoS as a ROS profile.
    pub qos: QosProfile,
    /// `typehash=` from its USER_DATA (RIHS01), if it holds one.
    pub type_hash: Option<String>,
    /// The hash of the XTypes complete type object it announces, if the middleware reports one.
    pub complete_type: Option<TypeHash>,
}

struct State<K> {
    endpoints: HashMap<K, Endpoint>,
    /// Nodes of other participants, by participant GID.
    nodes: HashMap<Guid, Vec<NodeEntities>>,
    listeners: Vec<Sender<GraphEvent>>,
}

/// What a node knows of the graph, its endpoints keyed by `K`.
pub struct Graph<K> {
    state: Mutex<State<K>>,
}

impl<K> Default for Graph<K> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                endpoints: HashMap::new(),
                nodes: HashMap::new(),
                listeners: Vec::new(),
            }),
        }
    }
}

impl<K: Eq + Hash> Graph<K> {
    /// Subscribes to graph changes.
    pub fn listen(&self, tx: Sender<GraphEvent>) {
        self.state.lock().listeners.push(tx);
    }

    /// All ROS topics with their endpoints, each with its node's name and type hash where known.
    pub fn topics(&self) -> Vec<TopicInfo> {
        let state = self.state.lock();
        let node_of = |ep: &Endpoint| {
            state.nodes.get(&ep.participant).and_then(|nodes| {
                nodes
                    .iter()
                    .find(|n| if ep.is_writer { &n.writers } else { &n.readers }.contains(&ep.guid))
                    .map(NodeEntities::fully_qualified_name)
            })
        };
        group_by_topic(state.endpoints.values().filter_map(|ep| {
            let (topic, type_name) = ros_topic_from_dds(&ep.topic, &ep.type_name)?;
            Some((
                topic,
                ep.is_writer,
                EndpointInfo {
                    type_name,
                    qos: ep.qos,
                    node: node_of(ep),
                    type_hash: ep.type_hash.clone(),
                },
            ))
        }))
    }

    /// The complete type object hashes the writers of `topic` (a ROS name) announce for
    /// `type_name`.
    pub fn announced_type_hashes(&self, topic: &str, type_name: &str) -> Vec<TypeHash> {
        let state = self.state.lock();
        let mut hashes: Vec<TypeHash> = state
            .endpoints
            .values()
            .filter(|ep| ep.is_writer)
            .filter_map(|ep| {
                let (t, ty) = ros_topic_from_dds(&ep.topic, &ep.type_name)?;
                (t == topic && ty == type_name).then_some(ep.complete_type?)
            })
            .collect();
        hashes.dedup();
        hashes
    }

    /// An endpoint discovered (or rediscovered with other data); a writer new to the graph is
    /// announced to the listeners.
    pub fn endpoint_alive(&self, key: K, endpoint: Endpoint) {
        let mut state = self.state.lock();
        if endpoint.is_writer && !state.endpoints.contains_key(&key) {
            if let Some((topic, type_name)) =
                ros_topic_from_dds(&endpoint.topic, &endpoint.type_name)
            {
                let event = GraphEvent::PublisherAppeared { topic, type_name };
                state.listeners.retain(|tx| tx.send(event.clone()).is_ok());
            }
        }
        state.endpoints.insert(key, endpoint);
    }

    /// An endpoint gone.
    pub fn endpoint_gone(&self, key: &K) {
        self.state.lock().endpoints.remove(key);
    }

    /// Records another participant's `ros_discovery_info`.
    pub fn participant_info(&self, info: ParticipantEntities) {
        self.state.lock().nodes.insert(info.gid, info.nodes);
    }

    /// A participant gone, with its endpoints and nodes.
    pub fn participant_gone(&self, guid: Guid) {
        let mut state = self.state.lock();
        state.endpoints.retain(|_, ep| ep.participant != guid);
        state.nodes.remove(&guid);
    }
}
