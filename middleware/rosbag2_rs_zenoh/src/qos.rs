//! QoS the way rmw_zenoh handles it: the defaults it fills in (`QoS::best_available_qos`), the
//! compact string in liveliness tokens (`qos_to_keyexpr` / `keyexpr_to_qos`), and what a QoS
//! means for a Zenoh publisher (reliability, congestion control).

use rosbag2_rs_middleware::qos::{Durability, History, Liveliness, QosDuration, Reliability};
use rosbag2_rs_middleware::QosProfile;

/// rmw_zenoh's depth when a profile asks for 0 (its `RMW_ZENOH_DEFAULT_HISTORY_DEPTH`).
pub const DEFAULT_DEPTH: u64 = 42;

/// A token's QoS field that does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid rmw_zenoh QoS string '{0}'")]
pub struct QosStringError(pub String);

/// rmw_zenoh's default profile: keep last 42, reliable, volatile, automatic liveliness,
/// infinite durations.
pub fn default_qos() -> QosProfile {
    QosProfile {
        history: History::KeepLast,
        depth: DEFAULT_DEPTH,
        reliability: Reliability::Reliable,
        durability: Durability::Volatile,
        deadline: QosDuration::INFINITE,
        lifespan: QosDuration::INFINITE,
        liveliness: Liveliness::Automatic,
        liveliness_lease_duration: QosDuration::INFINITE,
        avoid_ros_namespace_conventions: false,
    }
}

/// The profile rmw_zenoh actually uses for `qos`: system defaults (and unknown or best-available
/// policies) become its defaults, depth 0 becomes 42, zero durations become infinite.
pub fn adapt(qos: &QosProfile) -> QosProfile {
    let d = default_qos();
    let duration = |x: QosDuration| {
        if x == QosDuration::ZERO {
            d.deadline
        } else {
            x
        }
    };
    QosProfile {
        history: match qos.history {
            History::KeepLast | History::KeepAll => qos.history,
            _ => d.history,
        },
        depth: if qos.depth == 0 { d.depth } else { qos.depth },
        reliability: match qos.reliability {
            Reliability::Reliable | Reliability::BestEffort => qos.reliability,
            _ => d.reliability,
        },
        durability: match qos.durability {
            Durability::TransientLocal | Durability::Volatile => qos.durability,
            _ => d.durability,
        },
        deadline: duration(qos.deadline),
        lifespan: duration(qos.lifespan),
        liveliness: match qos.liveliness {
            Liveliness::Automatic | Liveliness::ManualByNode | Liveliness::ManualByTopic => {
                qos.liveliness
            }
            _ => d.liveliness,
        },
        liveliness_lease_duration: duration(qos.liveliness_lease_duration),
        avoid_ros_namespace_conventions: qos.avoid_ros_namespace_conventions,
    }
}

/// The QoS field of a liveliness token, as `qos_to_keyexpr` writes it: each value that differs
/// from rmw_zenoh's default, as its rmw integer, in
/// `reliability:durability:history,depth:deadline_s,deadline_ns:lifespan_s,lifespan_ns:liveliness,lease_s,lease_ns`.
pub fn to_token_string(qos: &QosProfile) -> String {
    let q = adapt(qos);
    let d = default_qos();
    fn field<T: PartialEq + ToString>(value: T, default: T) -> String {
        if value == default {
            String::new()
        } else {
            value.to_string()
        }
    }
    format!(
        "{}:{}:{},{}:{},{}:{},{}:{},{},{}",
        field(q.reliability.as_int(), d.reliability.as_int()),
        field(q.durability.as_int(), d.durability.as_int()),
        field(q.history.as_int(), d.history.as_int()),
        field(q.depth, d.depth),
        field(q.deadline.sec, d.deadline.sec),
        field(q.deadline.nsec, d.deadline.nsec),
        field(q.lifespan.sec, d.lifespan.sec),
        field(q.lifespan.nsec, d.lifespan.nsec),
        field(q.liveliness.as_int(), d.liveliness.as_int()),
        field(
            q.liveliness_lease_duration.sec,
            d.liveliness_lease_duration.sec
        ),
        field(
            q.liveliness_lease_duration.nsec,
            d.liveliness_lease_duration.nsec
        ),
    )
}

/// Parses a token's QoS field (the inverse of [`to_token_string`]; empty values are defaults).
pub fn from_token_string(text: &str) -> Result<QosProfile, QosStringError> {
    let bad = || QosStringError(text.to_string());
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() < 6 {
        return Err(bad());
    }
    let sub = |i: usize, n: usize| -> Result<Vec<&str>, QosStringError> {
        let v: Vec<&str> = parts[i].split(',').collect();
        if v.len() < n {
            Err(bad())
        } else {
            Ok(v)
        }
    };
    let (history, deadline, lifespan, liveliness) =
        (sub(2, 2)?, sub(3, 2)?, sub(4, 2)?, sub(5, 3)?);
    let d = default_qos();
    let num = |s: &str, default: u64| -> Result<u64, QosStringError> {
        if s.is_empty() {
            Ok(default)
        } else {
            s.parse().map_err(|_| bad())
        }
    };
    fn policy<T>(s: &str, default: T, parse: impl Fn(i64) -> Option<T>) -> Option<T> {
        if s.is_empty() {
            Some(default)
        } else {
            s.parse::<i64>().ok().and_then(parse)
        }
    }
    use rmw_ints::*;
    Ok(QosProfile {
        reliability: policy(parts[0], d.reliability, reliability).ok_or_else(bad)?,
        durability: policy(parts[1], d.durability, durability).ok_or_else(bad)?,
        history: policy(history[0], d.history, history_policy).ok_or_else(bad)?,
        depth: num(history[1], d.depth)?,
        deadline: QosDuration {
            sec: num(deadline[0], d.deadline.sec)?,
            nsec: num(deadline[1], d.deadline.nsec)?,
        },
        lifespan: QosDuration {
            sec: num(lifespan[0], d.lifespan.sec)?,
            nsec: num(lifespan[1], d.lifespan.nsec)?,
        },
        liveliness: policy(liveliness[0], d.liveliness, liveliness_policy).ok_or_else(bad)?,
        liveliness_lease_duration: QosDuration {
            sec: num(liveliness[1], d.liveliness_lease_duration.sec)?,
            nsec: num(liveliness[2], d.liveliness_lease_duration.nsec)?,
        },
        avoid_ros_namespace_conventions: false,
    })
}

/// rmw integers back to policies.
mod rmw_ints {
    use super::*;

    pub fn reliability(i: i64) -> Option<Reliability> {
        [
            Reliability::SystemDefault,
            Reliability::Reliable,
            Reliability::BestEffort,
            Reliability::Unknown,
            Reliability::BestAvailable,
        ]
        .into_iter()
        .find(|p| p.as_int() == i)
    }

    pub fn durability(i: i64) -> Option<Durability> {
        [
            Durability::SystemDefault,
            Durability::TransientLocal,
            Durability::Volatile,
            Durability::Unknown,
            Durability::BestAvailable,
        ]
        .into_iter()
        .find(|p| p.as_int() == i)
    }

    pub fn history_policy(i: i64) -> Option<History> {
        [
            History::SystemDefault,
            History::KeepLast,
            History::KeepAll,
            History::Unknown,
        ]
        .into_iter()
        .find(|p| p.as_int() == i)
    }

    pub fn liveliness_policy(i: i64) -> Option<Liveliness> {
        [
            Liveliness::SystemDefault,
            Liveliness::Automatic,
            Liveliness::ManualByNode,
            Liveliness::ManualByTopic,
            Liveliness::Unknown,
            Liveliness::BestAvailable,
        ]
        .into_iter()
        .find(|p| p.as_int() == i)
    }
}

/// Whether a publisher of `qos` blocks instead of dropping when the network is congested:
/// rmw_zenoh uses congestion control BLOCK for reliable keep-all publishers, DROP otherwise.
pub fn blocks_on_congestion(qos: &QosProfile) -> bool {
    let q = adapt(qos);
    q.reliability == Reliability::Reliable && q.history == History::KeepAll
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_strings_match_rmw_zenoh() {
        // docs/design.md: the listener's subscription (rclcpp's default QoS, depth 10) and the
        // talker's publisher (depth 7).
        let depth = |depth| QosProfile {
            depth,
            ..QosProfile::default()
        };
        assert_eq!(to_token_string(&depth(10)), "::,10:,:,:,,");
        assert_eq!(to_token_string(&depth(7)), "::,7:,:,:,,");
        // rmw_zenoh's own defaults are all empty; depth 0 means 42.
        assert_eq!(to_token_string(&default_qos()), "::,:,:,:,,");
        assert_eq!(to_token_string(&depth(0)), "::,:,:,:,,");
        // Latched, best effort, keep all (rmw integers: best effort 2, transient local 1,
        // keep all 2).
        let latched = QosProfile {
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            history: History::KeepAll,
            depth: 1,
            deadline: QosDuration { sec: 1, nsec: 5 },
            ..QosProfile::default()
        };
        assert_eq!(to_token_string(&latched), "2:1:2,1:1,5:,:,,");
    }

    #[test]
    fn token_strings_round_trip_and_bad_ones_are_errors() {
        let q = QosProfile {
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            depth: 3,
            liveliness: Liveliness::ManualByTopic,
            liveliness_lease_duration: QosDuration { sec: 2, nsec: 0 },
            ..QosProfile::default()
        };
        assert_eq!(from_token_string(&to_token_string(&q)).unwrap(), adapt(&q));
        assert_eq!(from_token_string("::,:,:,:,,").unwrap(), default_qos());
        for bad in [
            "",
            "::,10:,:,:,",
            "x::,10:,:,:,,",
            "::,ten:,:,:,,",
            "9::,:,:,:,,",
        ] {
            assert!(from_token_string(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn keep_all_reliable_blocks() {
        let keep_all = QosProfile {
            history: History::KeepAll,
            ..QosProfile::default()
        };
        assert!(blocks_on_congestion(&keep_all));
        assert!(!blocks_on_congestion(&QosProfile::default()));
        assert!(!blocks_on_congestion(&QosProfile {
            reliability: Reliability::BestEffort,
            ..keep_all
        }));
    }
}
