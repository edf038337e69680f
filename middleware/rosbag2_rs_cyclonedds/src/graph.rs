//! The ROS 2 graph as a Cyclone DDS node sees it ([`Graph`], the DDS backends' shared one): every
//! reader and writer from Cyclone's built-in publication and subscription topics, and node names
//! from other participants' `ros_discovery_info`.

use std::sync::Arc;

use cyclors::*;

use super::dispatcher::Drain;
use super::endpoint::EndpointData;
use super::raw;
use super::sys::Entity;
use rosbag2_rs_dds_common::discovery_info::ParticipantEntities;

/// What the node knows of the graph, its endpoints keyed by their built-in topic instance.
pub type Graph = rosbag2_rs_dds_common::graph::Graph<dds_instance_handle_t>;

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
                if alive {
                    // SAFETY: a valid loaned endpoint sample.
                    let data = unsafe { EndpointData::from_builtin(samples[i] as *const _) };
                    self.graph
                        .endpoint_alive(info.instance_handle, data.endpoint(self.is_writer));
                } else {
                    self.graph.endpoint_gone(&info.instance_handle);
                }
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
