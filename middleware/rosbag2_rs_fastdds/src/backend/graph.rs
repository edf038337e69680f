//! The ROS 2 graph as a Fast DDS node sees it ([`Graph`], the DDS backends' shared one): every
//! reader and writer from the participant's discovery callbacks (with the `typehash=` their
//! USER_DATA announces), and node names from other participants' `ros_discovery_info`.

use super::qos::from_fastdds;
use super::sys::{text, DiscoveryListener, RawEndpointEvent};
use rosbag2_rs_dds_common::graph::Endpoint;
use rosbag2_rs_dds_common::{user_data, Guid};

/// What the node knows of the graph (the DDS backends' shared one), its endpoints keyed by GUID.
pub type Graph = rosbag2_rs_dds_common::graph::Graph<Guid>;

impl DiscoveryListener for Graph {
    fn endpoint(&self, event: &RawEndpointEvent) {
        if event.alive == 0 {
            self.endpoint_gone(&event.guid);
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
        self.endpoint_alive(
            event.guid,
            Endpoint {
                is_writer: event.is_writer != 0,
                guid: event.guid,
                participant: event.participant,
                topic,
                type_name,
                qos: from_fastdds(&event.qos),
                type_hash: user_data::type_hash(data),
                complete_type: None,
            },
        );
    }

    fn participant_gone(&self, guid: Guid) {
        rosbag2_rs_dds_common::graph::Graph::participant_gone(self, guid);
    }
}
