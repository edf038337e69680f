//! The ROS 2 graph as a node sees it: every reader and writer from Cyclone's built-in
//! publication and subscription topics, node names from other participants'
//! `ros_discovery_info`, and this node's own announcement on `ros_discovery_info`.

use std::collections::HashMap;
use std::sync::Arc;

use cyclors::*;
use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Sender;

use super::dispatcher::Drain;
use super::raw;
use super::sys::{EndpointData, Entity, Guid};
use rosbag2_rs_dds_common::discovery_info::{NodeEntities, ParticipantEntities};
use rosbag2_rs_dds_common::xtypes::TypeHash;
use rosbag2_rs_middleware::names::ros_topic_from_dds;
use rosbag2_rs_middleware::{group_by_topic, EndpointInfo, GraphEvent, TopicInfo};

#[derive(Default)]
struct State {
    /// Endpoints by their instance handle: (is a writer, data).
    endpoints: HashMap<dds_instance_handle_t, (bool, EndpointData)>,
    /// Nodes of other participants, by participant GID.
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

    /// All ROS topics with their endpoints, each with its node's name where known.
    pub fn topics(&self) -> Vec<TopicInfo> {
        let state = self.state.lock();
        let node_of = |ep: &EndpointData, is_writer: bool| {
            state.nodes.get(&ep.participant).and_then(|nodes| {
                nodes
                    .iter()
                    .find(|n| {
                        let gids = if is_writer { &n.writers } else { &n.readers };
                        gids.contains(&ep.guid)
                    })
                    .map(NodeEntities::fully_qualified_name)
            })
        };
        group_by_topic(state.endpoints.values().filter_map(|(is_writer, ep)| {
            let (topic, type_name) = ros_topic_from_dds(&ep.topic_name, &ep.type_name)?;
            Some((
                topic,
                *is_writer,
                EndpointInfo {
                    type_name,
                    qos: ep.qos,
                    node: node_of(ep, *is_writer),
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
            .filter(|(is_writer, _)| *is_writer)
            .filter_map(|(_, ep)| {
                let (t, ty) = ros_topic_from_dds(&ep.topic_name, &ep.type_name)?;
                (t == topic && ty == type_name).then_some(ep.complete_type?)
            })
            .collect();
        hashes.dedup();
        hashes
    }

    fn endpoint_sample(
        &self,
        handle: dds_instance_handle_t,
        is_writer: bool,
        data: Option<EndpointData>,
    ) {
        let mut state = self.state.lock();
        let Some(data) = data else {
            state.endpoints.remove(&handle);
            return;
        };
        if is_writer && !state.endpoints.contains_key(&handle) {
            if let Some((topic, type_name)) = ros_topic_from_dds(&data.topic_name, &data.type_name)
            {
                let event = GraphEvent::PublisherAppeared { topic, type_name };
                state.listeners.retain(|tx| tx.send(event.clone()).is_ok());
            }
        }
        state.endpoints.insert(handle, (is_writer, data));
    }

    fn participant_info(&self, info: ParticipantEntities) {
        self.state.lock().nodes.insert(info.gid, info.nodes);
    }
}

/// Reads one of Cyclone's built-in endpoint topics into the graph.
pub struct BuiltinDrain {
    reader: Entity,
    is_writer: bool,
    graph: Arc<Graph>,
}

impl BuiltinDrain {
    /// A reader of the built-in publications (`is_writer`) or subscriptions topic.
    pub fn new(
        participant: dds_entity_t,
        is_writer: bool,
        graph: Arc<Graph>,
    ) -> rosbag2_rs_middleware::Result<Self> {
        let topic = if is_writer {
            DDS_BUILTIN_TOPIC_DCPSPUBLICATION
        } else {
            DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION
        };
        // SAFETY: a valid participant and built-in topic.
        let reader = Entity::new(
            unsafe { dds_create_reader(participant, topic, std::ptr::null(), std::ptr::null()) },
            "cannot read DDS discovery data",
        )?;
        Ok(Self {
            reader,
            is_writer,
            graph,
        })
    }

    /// The reader handle.
    pub fn reader(&self) -> dds_entity_t {
        self.reader.handle()
    }
}

impl Drain for BuiltinDrain {
    fn drain(&mut self) {
        const BATCH: usize = 64;
        for _ in 0..super::dispatcher::TAKES_PER_ROUND / BATCH {
            let mut samples: [*mut std::os::raw::c_void; BATCH] = [std::ptr::null_mut(); BATCH];
            // SAFETY: plain data.
            let mut infos: [dds_sample_info_t; BATCH] = unsafe { std::mem::zeroed() };
            // SAFETY: Cyclone loans up to BATCH samples into `samples`; they are returned below.
            let n = unsafe {
                dds_take(
                    self.reader.handle(),
                    samples.as_mut_ptr(),
                    infos.as_mut_ptr(),
                    BATCH,
                    BATCH as u32,
                )
            };
            if n <= 0 {
                return;
            }
            for i in 0..n as usize {
                let info = &infos[i];
                let alive =
                    info.valid_data && info.instance_state == dds_instance_state_DDS_IST_ALIVE;
                let data = alive.then(|| {
                    // SAFETY: a valid loaned endpoint sample.
                    unsafe { EndpointData::from_builtin(samples[i] as *const _) }
                });
                self.graph
                    .endpoint_sample(info.instance_handle, self.is_writer, data);
            }
            // SAFETY: returns the loan taken above.
            unsafe { dds_return_loan(self.reader.handle(), samples.as_mut_ptr(), n) };
        }
    }
}

/// Reads other participants' `ros_discovery_info` into the graph.
pub struct DiscoveryInfoDrain {
    /// The reader (a blob reader of `ros_discovery_info`).
    pub reader: Entity,
    /// Where node names go.
    pub graph: Arc<Graph>,
}

impl Drain for DiscoveryInfoDrain {
    fn drain(&mut self) {
        let graph = &self.graph;
        raw::take_round(
            self.reader.handle(),
            32,
            |sample| match ParticipantEntities::decode(&sample.data) {
                Ok(info) => graph.participant_info(info),
                Err(e) => log::debug!("ignoring a malformed ros_discovery_info sample: {e}"),
            },
        );
    }
}
