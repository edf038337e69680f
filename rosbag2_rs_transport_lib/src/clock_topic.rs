//! The `/clock` topic, the player's and the recorder's one home for it: its name, type and QoS,
//! and `rosgraph_msgs/msg/Clock` on the wire (a `builtin_interfaces/Time` after the CDR header).

use bytes::Bytes;
use rosbag2_rs_clock::ClockType;
use rosbag2_rs_interfaces::builtin_interfaces::Time;
use rosbag2_rs_storage::QosProfile;

/// The `/clock` message type.
pub const CLOCK_TYPE: &str = "rosgraph_msgs/msg/Clock";
/// The `/clock` topic.
pub const CLOCK_TOPIC: &str = "/clock";

/// rclcpp's `ClockQoS`: keep last 1, best effort, volatile.
pub fn clock_qos() -> QosProfile {
    QosProfile {
        depth: 1,
        reliability: rosbag2_rs_storage::qos::Reliability::BestEffort,
        ..QosProfile::default()
    }
}

/// Encodes a time (ns) as a little-endian CDR `Clock` message.
pub(crate) fn encode(nanos: i64) -> Bytes {
    let Time { sec, nanosec } = Time::from_nanos(nanos);
    let mut out = Vec::with_capacity(12);
    out.extend_from_slice(&[0, 1, 0, 0]);
    out.extend_from_slice(&sec.to_le_bytes());
    out.extend_from_slice(&nanosec.to_le_bytes());
    out.into()
}

/// Decodes a CDR `Clock` message (either byte order) to ns, or `None` if it is malformed.
pub(crate) fn decode(data: &[u8]) -> Option<i64> {
    let little = match data.get(..2)? {
        [0, 1] | [0, 3] => true,
        [0, 0] | [0, 2] => false,
        _ => return None,
    };
    let field =
        |range: std::ops::Range<usize>| -> Option<[u8; 4]> { data.get(range)?.try_into().ok() };
    let (sec, nanosec) = if little {
        (
            i32::from_le_bytes(field(4..8)?),
            u32::from_le_bytes(field(8..12)?),
        )
    } else {
        (
            i32::from_be_bytes(field(4..8)?),
            u32::from_be_bytes(field(8..12)?),
        )
    };
    rosbag2_rs_clock::Time::from_sec_nanosec(sec, nanosec, ClockType::Ros)
        .ok()
        .map(rosbag2_rs_clock::Time::nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        for t in [0, 1, 1_700_000_000_123_456_789, -1_500_000_000] {
            assert_eq!(decode(&encode(t)), Some(t));
        }
        // Big-endian: 5 s, 7 ns.
        assert_eq!(
            decode(&[0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 7]),
            Some(5_000_000_007)
        );
        assert_eq!(decode(&[0, 1, 0, 0, 1]), None);
        assert_eq!(decode(&[9, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), None);
        assert_eq!(
            decode(&[0, 1, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]),
            None
        );
    }
}
