//! QoS between rosbag2's profile (what bags store) and Fast DDS policies: the shim's encoding of
//! the policies both DDS backends set ([`Policies`]).

use rosbag2_rs_dds_common::qos::Policies;
use rosbag2_rs_middleware::qos::Liveliness;
use rosbag2_rs_middleware::QosProfile;

use super::sys::RawQos;

/// Fast DDS policies for a ROS QoS profile; `min_depth` raises a keep-last depth.
pub fn to_fastdds(qos: &QosProfile, min_depth: u64) -> RawQos {
    let p = Policies::of(qos, min_depth);
    RawQos {
        reliable: i32::from(p.reliable),
        transient_local: i32::from(p.transient_local),
        keep_all: i32::from(p.keep_all),
        depth: p.depth,
        deadline_ns: p.deadline.unwrap_or(-1),
        lifespan_ns: p.lifespan.unwrap_or(-1),
        liveliness: match p.liveliness {
            Liveliness::ManualByTopic => 2,
            Liveliness::ManualByNode => 1,
            _ => 0,
        },
        lease_ns: p.lease.unwrap_or(-1),
    }
}

/// The ROS QoS profile of discovered policies.
pub fn from_fastdds(raw: &RawQos) -> QosProfile {
    Policies {
        reliable: raw.reliable != 0,
        transient_local: raw.transient_local != 0,
        keep_all: raw.keep_all != 0,
        depth: raw.depth,
        deadline: Some(raw.deadline_ns),
        lifespan: Some(raw.lifespan_ns),
        liveliness: match raw.liveliness {
            2 => Liveliness::ManualByTopic,
            1 => Liveliness::ManualByNode,
            _ => Liveliness::Automatic,
        },
        lease: Some(raw.lease_ns),
    }
    .profile()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_middleware::qos::{History, QosDuration};

    /// The shim's encoding: -1 for infinite, 2/1/0 for the liveliness kinds, flags as 0/1.
    #[test]
    fn the_shim_encoding_of_the_policies() {
        let qos = QosProfile {
            history: History::KeepAll,
            deadline: QosDuration { sec: 1, nsec: 500 },
            liveliness: Liveliness::ManualByTopic,
            ..QosProfile::default()
        };
        let raw = to_fastdds(&qos, 0);
        assert_eq!((raw.keep_all, raw.reliable, raw.transient_local), (1, 1, 0));
        assert_eq!(
            (raw.deadline_ns, raw.lifespan_ns, raw.liveliness),
            (1_000_000_500, -1, 2)
        );
        let back = from_fastdds(&raw);
        assert_eq!(
            (back.deadline, back.liveliness),
            (qos.deadline, qos.liveliness)
        );
        assert_eq!(back.lifespan, QosDuration::INFINITE);
    }
}
