//! QoS between rosbag2's profile (what bags store) and Fast DDS policies, mapped as
//! rmw_fastrtps_shared_cpp's `qos.cpp` maps them ("system default" keeps the ROS default).

use rosbag2_rs_middleware::qos::{Durability, History, Liveliness, QosDuration, Reliability};
use rosbag2_rs_middleware::QosProfile;

use super::sys::RawQos;

fn nanos(d: QosDuration) -> i64 {
    if d.is_unlimited() {
        -1
    } else {
        i64::try_from(d.as_nanos()).unwrap_or(-1)
    }
}

fn duration(ns: i64) -> QosDuration {
    if ns <= 0 {
        QosDuration::INFINITE
    } else {
        QosDuration {
            sec: (ns / 1_000_000_000) as u64,
            nsec: (ns % 1_000_000_000) as u64,
        }
    }
}

/// Fast DDS policies for a ROS QoS profile; `min_depth` raises a keep-last depth.
pub fn to_fastdds(qos: &QosProfile, min_depth: u64) -> RawQos {
    RawQos {
        reliable: i32::from(qos.reliability != Reliability::BestEffort),
        transient_local: i32::from(qos.durability == Durability::TransientLocal),
        keep_all: i32::from(qos.history == History::KeepAll),
        depth: qos.depth.max(min_depth).clamp(1, i32::MAX as u64) as i32,
        deadline_ns: nanos(qos.deadline),
        lifespan_ns: nanos(qos.lifespan),
        liveliness: match qos.liveliness {
            Liveliness::ManualByTopic => 2,
            Liveliness::ManualByNode => 1,
            _ => 0,
        },
        lease_ns: nanos(qos.liveliness_lease_duration),
    }
}

/// The ROS QoS profile of discovered policies (history is not part of discovery).
pub fn from_fastdds(raw: &RawQos) -> QosProfile {
    QosProfile {
        history: History::Unknown,
        depth: 0,
        reliability: if raw.reliable != 0 {
            Reliability::Reliable
        } else {
            Reliability::BestEffort
        },
        durability: if raw.transient_local != 0 {
            Durability::TransientLocal
        } else {
            Durability::Volatile
        },
        deadline: duration(raw.deadline_ns),
        lifespan: duration(raw.lifespan_ns),
        liveliness: match raw.liveliness {
            2 => Liveliness::ManualByTopic,
            1 => Liveliness::ManualByNode,
            _ => Liveliness::Automatic,
        },
        liveliness_lease_duration: duration(raw.lease_ns),
        ..QosProfile::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_of_the_policies_discovery_carries() {
        let qos = QosProfile {
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            deadline: QosDuration { sec: 1, nsec: 500 },
            liveliness: Liveliness::ManualByTopic,
            liveliness_lease_duration: QosDuration { sec: 2, nsec: 0 },
            ..QosProfile::default()
        };
        let raw = to_fastdds(&qos, 0);
        assert_eq!((raw.keep_all, raw.depth, raw.lifespan_ns), (0, 10, -1));
        let back = from_fastdds(&raw);
        assert_eq!(
            (back.reliability, back.durability, back.liveliness),
            (qos.reliability, qos.durability, qos.liveliness)
        );
        assert_eq!(back.deadline, qos.deadline);
        assert_eq!(
            back.liveliness_lease_duration,
            qos.liveliness_lease_duration
        );
        assert_eq!(back.lifespan, QosDuration::INFINITE);
        // A reliable volatile writer keeps 64 samples (about 2 s of 30 Hz camera frames), not the
        // profile's 10.
        let writer = to_fastdds(
            &QosProfile::default(),
            rosbag2_rs_middleware::MIN_RELIABLE_WRITER_DEPTH,
        );
        assert_eq!(writer.depth, 64);
        let all = QosProfile {
            history: History::KeepAll,
            ..QosProfile::default()
        };
        assert_eq!(to_fastdds(&all, 0).keep_all, 1);
    }
}
