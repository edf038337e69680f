//! QoS profiles between rosbag2's form and rmw's `rmw_qos_profile_t` (the enum values are the
//! same numbers: rosbag2 writes rmw's).

use rosbag2_rs_middleware::qos::{Durability, History, Liveliness, QosDuration, Reliability};
use rosbag2_rs_middleware::QosProfile;

use super::sys;

fn time(d: QosDuration) -> sys::rmw_time_t {
    sys::rmw_time_t {
        sec: d.sec,
        nsec: d.nsec,
    }
}

fn duration(t: sys::rmw_time_t) -> QosDuration {
    QosDuration {
        sec: t.sec,
        nsec: t.nsec,
    }
}

/// rmw's profile for ours.
pub(crate) fn to_rmw(qos: &QosProfile) -> sys::rmw_qos_profile_t {
    sys::rmw_qos_profile_t {
        history: qos.history.as_int() as _,
        depth: usize::try_from(qos.depth).unwrap_or(usize::MAX),
        reliability: qos.reliability.as_int() as _,
        durability: qos.durability.as_int() as _,
        deadline: time(qos.deadline),
        lifespan: time(qos.lifespan),
        liveliness: qos.liveliness.as_int() as _,
        liveliness_lease_duration: time(qos.liveliness_lease_duration),
        avoid_ros_namespace_conventions: qos.avoid_ros_namespace_conventions,
    }
}

/// Ours for rmw's (values rmw does not define become `Unknown`).
pub(crate) fn from_rmw(q: &sys::rmw_qos_profile_t) -> QosProfile {
    let history = match q.history as i64 {
        0 => History::SystemDefault,
        1 => History::KeepLast,
        2 => History::KeepAll,
        _ => History::Unknown,
    };
    let reliability = match q.reliability as i64 {
        0 => Reliability::SystemDefault,
        1 => Reliability::Reliable,
        2 => Reliability::BestEffort,
        4 => Reliability::BestAvailable,
        _ => Reliability::Unknown,
    };
    let durability = match q.durability as i64 {
        0 => Durability::SystemDefault,
        1 => Durability::TransientLocal,
        2 => Durability::Volatile,
        4 => Durability::BestAvailable,
        _ => Durability::Unknown,
    };
    let liveliness = match q.liveliness as i64 {
        0 => Liveliness::SystemDefault,
        1 => Liveliness::Automatic,
        2 => Liveliness::ManualByNode,
        3 => Liveliness::ManualByTopic,
        5 => Liveliness::BestAvailable,
        _ => Liveliness::Unknown,
    };
    QosProfile {
        history,
        depth: q.depth as u64,
        reliability,
        durability,
        deadline: duration(q.deadline),
        lifespan: duration(q.lifespan),
        liveliness,
        liveliness_lease_duration: duration(q.liveliness_lease_duration),
        avoid_ros_namespace_conventions: q.avoid_ros_namespace_conventions,
    }
}
