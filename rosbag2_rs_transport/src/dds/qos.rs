//! QoS between rosbag2's profile (what bags store) and RustDDS policies.

use rosbag2_rs_storage::qos::{Durability, History, Liveliness, QosDuration, Reliability};
use rosbag2_rs_storage::QosProfile;
use rustdds::policy;
use rustdds::{QosPolicies, QosPolicyBuilder};

fn dds_duration(d: QosDuration) -> Option<rustdds::Duration> {
    (!d.is_unlimited()).then(|| rustdds::Duration::from_nanos(d.as_nanos() as i64))
}

fn qos_duration(d: rustdds::Duration) -> QosDuration {
    let ns = d.to_nanoseconds();
    if ns <= 0 || ns >= i64::MAX / 2 {
        QosDuration::INFINITE
    } else {
        QosDuration {
            sec: (ns / 1_000_000_000) as u64,
            nsec: (ns % 1_000_000_000) as u64,
        }
    }
}

/// DDS policies for a ROS QoS profile ("system default" means the ROS default).
pub fn to_dds(qos: &QosProfile) -> QosPolicies {
    let mut b = QosPolicyBuilder::new()
        .history(match qos.history {
            History::KeepAll => policy::History::KeepAll,
            _ => policy::History::KeepLast {
                depth: qos.depth.clamp(1, i32::MAX as u64) as i32,
            },
        })
        .reliability(match qos.reliability {
            Reliability::BestEffort => policy::Reliability::BestEffort,
            _ => policy::Reliability::Reliable {
                max_blocking_time: rustdds::Duration::from_millis(100),
            },
        })
        .durability(match qos.durability {
            Durability::TransientLocal => policy::Durability::TransientLocal,
            _ => policy::Durability::Volatile,
        });
    if let Some(period) = dds_duration(qos.deadline) {
        b = b.deadline(policy::Deadline(period));
    }
    if let Some(duration) = dds_duration(qos.lifespan) {
        b = b.lifespan(policy::Lifespan { duration });
    }
    let lease_duration =
        dds_duration(qos.liveliness_lease_duration).unwrap_or(rustdds::Duration::INFINITE);
    b = b.liveliness(match qos.liveliness {
        Liveliness::ManualByTopic => policy::Liveliness::ManualByTopic { lease_duration },
        Liveliness::ManualByNode => policy::Liveliness::ManualByParticipant { lease_duration },
        _ => policy::Liveliness::Automatic { lease_duration },
    });
    b.build()
}

/// A ROS QoS profile for discovered DDS policies.
pub fn from_dds(policies: &QosPolicies) -> QosProfile {
    let mut qos = QosProfile {
        history: History::Unknown,
        depth: 0,
        reliability: match policies.reliability() {
            Some(policy::Reliability::BestEffort) => Reliability::BestEffort,
            _ => Reliability::Reliable,
        },
        durability: match policies.durability() {
            Some(policy::Durability::TransientLocal) => Durability::TransientLocal,
            _ => Durability::Volatile,
        },
        ..QosProfile::default()
    };
    if let Some(d) = policies.deadline() {
        qos.deadline = qos_duration(d.0);
    }
    if let Some(l) = policies.lifespan() {
        qos.lifespan = qos_duration(l.duration);
    }
    if let Some(l) = policies.liveliness() {
        let (kind, lease) = match l {
            policy::Liveliness::Automatic { lease_duration } => {
                (Liveliness::Automatic, lease_duration)
            }
            policy::Liveliness::ManualByParticipant { lease_duration } => {
                (Liveliness::ManualByNode, lease_duration)
            }
            policy::Liveliness::ManualByTopic { lease_duration } => {
                (Liveliness::ManualByTopic, lease_duration)
            }
        };
        qos.liveliness = kind;
        qos.liveliness_lease_duration = qos_duration(lease);
    }
    qos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_of_the_policies_ros_cares_about() {
        let qos = QosProfile {
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            deadline: QosDuration { sec: 1, nsec: 500 },
            ..QosProfile::default()
        };
        let back = from_dds(&to_dds(&qos));
        assert_eq!(
            (back.reliability, back.durability),
            (qos.reliability, qos.durability)
        );
        // RTPS durations are 32.32 fixed point: a nanosecond may be lost.
        assert!(
            back.deadline.as_nanos().abs_diff(qos.deadline.as_nanos()) <= 1,
            "{:?}",
            back.deadline
        );
        assert_eq!(back.lifespan, QosDuration::INFINITE);
        assert_eq!(
            from_dds(&to_dds(&QosProfile::default())).reliability,
            Reliability::Reliable
        );
    }
}
