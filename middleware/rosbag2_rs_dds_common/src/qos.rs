//! A ROS QoS profile as the DDS policies both DDS rmw layers set from it (rmw_cyclonedds'
//! `qos.cpp`, rmw_fastrtps_shared_cpp's `qos.cpp`: "system default" is the ROS default), and the
//! profile of policies seen in discovery. Each backend maps [`Policies`] to its own API.

use rosbag2_rs_middleware::qos::{Durability, History, Liveliness, QosDuration, Reliability};
use rosbag2_rs_middleware::QosProfile;

/// The DDS policies of a ROS QoS profile. Durations are nanoseconds, `None` for infinite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policies {
    /// RELIABLE, else BEST_EFFORT.
    pub reliable: bool,
    /// TRANSIENT_LOCAL, else VOLATILE.
    pub transient_local: bool,
    /// KEEP_ALL, else KEEP_LAST of [`Policies::depth`].
    pub keep_all: bool,
    /// The keep-last depth: the profile's, raised to the backend's minimum, at least 1.
    pub depth: i32,
    /// DEADLINE period.
    pub deadline: Option<i64>,
    /// LIFESPAN duration.
    pub lifespan: Option<i64>,
    /// LIVELINESS kind.
    pub liveliness: Liveliness,
    /// LIVELINESS lease duration.
    pub lease: Option<i64>,
}

impl Policies {
    /// The policies for `qos`; `min_depth` raises a keep-last depth (writers of volatile
    /// topics keep a few samples for the repair of slow readers).
    pub fn of(qos: &QosProfile, min_depth: u64) -> Self {
        Self {
            reliable: qos.reliability != Reliability::BestEffort,
            transient_local: qos.durability == Durability::TransientLocal,
            keep_all: qos.history == History::KeepAll,
            depth: qos.depth.max(min_depth).clamp(1, i32::MAX as u64) as i32,
            deadline: nanos(qos.deadline),
            lifespan: nanos(qos.lifespan),
            liveliness: match qos.liveliness {
                Liveliness::ManualByTopic | Liveliness::ManualByNode => qos.liveliness,
                _ => Liveliness::Automatic,
            },
            lease: nanos(qos.liveliness_lease_duration),
        }
    }

    /// The ROS profile of policies a remote endpoint announced (history is not part of
    /// discovery: unknown, depth 0).
    pub fn profile(&self) -> QosProfile {
        QosProfile {
            history: History::Unknown,
            depth: 0,
            reliability: match self.reliable {
                true => Reliability::Reliable,
                false => Reliability::BestEffort,
            },
            durability: match self.transient_local {
                true => Durability::TransientLocal,
                false => Durability::Volatile,
            },
            deadline: duration(self.deadline),
            lifespan: duration(self.lifespan),
            liveliness: self.liveliness,
            liveliness_lease_duration: duration(self.lease),
            ..QosProfile::default()
        }
    }
}

/// A duration in nanoseconds, `None` for infinite (saturating at `i64::MAX`).
pub fn nanos(d: QosDuration) -> Option<i64> {
    (!d.is_unlimited()).then(|| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The duration of a DDS time in nanoseconds: infinite for `None`, for zero or less (unset) and
/// from half of `i64::MAX` on (the vendors' infinities).
pub fn duration(ns: Option<i64>) -> QosDuration {
    match ns {
        Some(ns) if ns > 0 && ns < i64::MAX / 2 => QosDuration {
            sec: (ns / 1_000_000_000) as u64,
            nsec: (ns % 1_000_000_000) as u64,
        },
        _ => QosDuration::INFINITE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policies_discovery_carries_come_back_as_they_went() {
        let qos = QosProfile {
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            deadline: QosDuration { sec: 1, nsec: 500 },
            liveliness: Liveliness::ManualByTopic,
            liveliness_lease_duration: QosDuration { sec: 2, nsec: 0 },
            ..QosProfile::default()
        };
        let policies = Policies::of(&qos, 0);
        assert_eq!(
            (policies.keep_all, policies.depth, policies.lifespan),
            (false, 10, None)
        );
        assert_eq!(policies.deadline, Some(1_000_000_500));
        let back = policies.profile();
        assert_eq!(
            (back.reliability, back.durability, back.liveliness),
            (qos.reliability, qos.durability, qos.liveliness)
        );
        assert_eq!(back.deadline, qos.deadline, "nanoseconds are exact");
        assert_eq!(
            back.liveliness_lease_duration,
            qos.liveliness_lease_duration
        );
        assert_eq!(back.lifespan, QosDuration::INFINITE);
        // A reliable volatile writer keeps 64 samples (about 2 s of 30 Hz camera frames), not the
        // profile's 10.
        let min = rosbag2_rs_middleware::MIN_RELIABLE_WRITER_DEPTH;
        assert_eq!(Policies::of(&QosProfile::default(), min).depth, 64);
        let all = QosProfile {
            history: History::KeepAll,
            ..QosProfile::default()
        };
        assert!(Policies::of(&all, 0).keep_all);
        assert_eq!(duration(Some(i64::MAX)), QosDuration::INFINITE);
        assert_eq!(duration(Some(-1)), QosDuration::INFINITE);
    }
}
