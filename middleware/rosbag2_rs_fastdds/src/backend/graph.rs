//! The ROS 2 graph as a Fast DDS node sees it: every reader and writer from the participant's
//! discovery callbacks (with the `typehash=` their USER_DATA announces), node names from other
//! participants' `ros_discovery_info`, and this node's own announcement on it.

use std::collections::HashMap;

use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Sender;
use rosbag2_rs_middleware::QosProfile;

use super::qos::from_fastdds;
use super::sys::{text, DiscoveryListener, RawEndpointEvent};
use rosbag2_rs_dds_common::discovery_info::{NodeEntities, ParticipantEntities};
use rosbag2_rs_dds_common::{user_data, Guid};
use rosbag2_rs_middleware::names::ros_topic_from_dds;
use rosbag2_rs_middleware::{group_by_topic, EndpointInfo, GraphEvent, TopicInfo};

/// An endpoint as discovery describes it.
struct Endpoint {
    is_writer: bool,
    participant: Guid,
    topic: String,
    type_name: String,
    qos: QosProfile,
    type_hash: Option<String>,
}

#[derive(Default)]
struct State {
    endpoints: HashMap<Guid, Endpoint>,
    /// Nodes of participants, by participant GID.
    nodes: HashMap<Guid, Vec<NodeEntities>>,
    listeners: Vec<Sender<GraphEvent>>,
}

/// What the node knows of the graph.
#[derive(Default)]
pub struct Graph {
    state: Mutex<State>,
}

impl Graph {
    /// Subscribes to graph changes.
    pub fn listen(&self, tx: Sender<GraphEvent>) {
        self.state.lock().listeners.push(tx);
    }

    /// All ROS topics with their endpoints, each with its node's name and type hash where
    /// known.
    pub fn topics(&self) -> Vec<TopicInfo> {
        let state = self.state.lock();
        let node_of = |guid: &Guid, ep: &Endpoint| {
            state.nodes.get(&ep.participant).and_then(|nodes| {
                nodes
                    .iter()
                    .find(|n| if ep.is_writer { &n.writers } else { &n.readers }.contains(guid))
                    .map(NodeEntities::fully_qualified_name)
            })
        };
        group_by_topic(state.endpoints.iter().filter_map(|(guid, ep)| {
            let (topic, type_name) = ros_topic_from_dds(&ep.topic, &ep.type_name)?;
            Some((
                topic,
                ep.is_writer,
                EndpointInfo {
                    type_name,
                    qos: ep.qos,
                    node: node_of(guid, ep),
                    type_hash: ep.type_hash.clone(),
                },
            ))
        }))
    }

    /// Records another participant's `ros_discovery_info`.
    pub fn participant_info(&self, info: ParticipantEntities) {
        self.state.lock().nodes.insert(info.gid, info.nodes);
    }
}

impl DiscoveryListener for Graph {
    fn endpoint(&self, event: &RawEndpointEvent) {
        let mut state = self.state.lock();
        if event.alive == 0 {
            state.endpoints.remove(&event.guid);
            return;
        }
        // SAFETY: the shim passes valid strings and a user data buffer for the call.
        let (topic, type_name, data) = unsafe {
            (
                text(event.topic),
                text(event.type_name),
                if event.user_data.is_null() {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(event.user_data, event.user_data_len)
                },
            )
        };
        let is_writer = event.is_writer != 0;
        if is_writer && !state.endpoints.contains_key(&event.guid) {
            if let Some((topic, type_name)) = ros_topic_from_dds(&topic, &type_name) {
                let event = GraphEvent::PublisherAppeared { topic, type_name };
                state.listeners.retain(|tx| tx.send(event.clone()).is_ok());
            }
        }
        state.endpoints.insert(
            event.guid,
            Endpoint {
                is_writer,
                participant: event.participant,
                topic,
                type_name,
                qos: from_fastdds(&event.qos),
                type_hash: user_data::type_hash(data),
            },
        );
    }

    fn participant_gone(&self, guid: Guid) {
        let mut state = self.state.lock();
        state.endpoints.retain(|_, ep| ep.participant != guid);
        state.nodes.remove(&guid);
    }
}
