//! The QoS a played topic is offered with: an override if the user gave one, else a profile
//! adapted to what its publishers offered when it was recorded, so that late-joining
//! transient-local subscribers still get latched data and reliable subscribers still match.

use rosbag2_rs_storage::qos::{Durability, History, Reliability};
use rosbag2_rs_storage::QosProfile;

/// A profile that satisfies every subscription the recorded publishers could satisfy.
///
/// - Reliability and durability are kept when all recorded publishers agree; when they disagree
///   the weaker one is offered (best effort, volatile), which is what rosbag2 does, with a
///   warning: a stronger offer would mislead subscriptions that asked for the guarantee.
/// - History keeps the deepest recorded keep-last depth (so latched topics replay all they
///   latched), or keep-all when every publisher kept all.
/// - Deadline, lifespan and liveliness are kept when all agree.
pub fn adapt_to_recorded(topic: &str, offers: &[QosProfile]) -> QosProfile {
    let Some(first) = offers.first() else {
        return QosProfile::default();
    };
    let all = |f: &dyn Fn(&QosProfile) -> bool| offers.iter().all(f);
    let default = QosProfile::default();
    let reliability = if all(&|q| q.reliability == first.reliability) {
        first.reliability
    } else {
        log::warn!("{topic}: recorded publishers differ in reliability; offering best effort");
        Reliability::BestEffort
    };
    let durability = if all(&|q| q.durability == first.durability) {
        first.durability
    } else {
        log::warn!("{topic}: recorded publishers differ in durability; offering volatile");
        Durability::Volatile
    };
    let keep_all = all(&|q| q.history == History::KeepAll);
    let depth = offers
        .iter()
        .filter(|q| q.history != History::KeepAll)
        .map(|q| q.depth.max(1))
        .max()
        .unwrap_or(default.depth);
    let same_liveliness = all(&|q| {
        (q.liveliness, q.liveliness_lease_duration)
            == (first.liveliness, first.liveliness_lease_duration)
    });
    let (liveliness, liveliness_lease_duration) = if same_liveliness {
        (first.liveliness, first.liveliness_lease_duration)
    } else {
        (default.liveliness, default.liveliness_lease_duration)
    };
    QosProfile {
        history: if keep_all {
            History::KeepAll
        } else {
            History::KeepLast
        },
        depth,
        reliability,
        durability,
        deadline: if all(&|q| q.deadline == first.deadline) {
            first.deadline
        } else {
            default.deadline
        },
        lifespan: if all(&|q| q.lifespan == first.lifespan) {
            first.lifespan
        } else {
            default.lifespan
        },
        liveliness,
        liveliness_lease_duration,
        ..default
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(reliability: Reliability, durability: Durability, depth: u64) -> QosProfile {
        QosProfile {
            reliability,
            durability,
            depth,
            ..QosProfile::default()
        }
    }

    #[test]
    fn keeps_agreeing_policies_and_weakens_disagreeing_ones() {
        let latched = offer(Reliability::Reliable, Durability::TransientLocal, 1);
        let q = adapt_to_recorded("/map", &[latched, latched]);
        assert_eq!(q.reliability, Reliability::Reliable);
        assert_eq!(q.durability, Durability::TransientLocal);
        assert_eq!(q.depth, 1);

        let mixed = [
            offer(Reliability::Reliable, Durability::TransientLocal, 5),
            offer(Reliability::BestEffort, Durability::Volatile, 20),
        ];
        let q = adapt_to_recorded("/x", &mixed);
        assert_eq!(q.reliability, Reliability::BestEffort);
        assert_eq!(q.durability, Durability::Volatile);
        assert_eq!(q.depth, 20);

        assert_eq!(adapt_to_recorded("/none", &[]), QosProfile::default());
    }
}
