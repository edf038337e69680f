//! Receive timestamps: the middleware's receive time, or with `use_sim_time` the ROS time of a
//! [`RosClock`] fed by a `/clock` subscription.

use std::sync::Arc;

use rosbag2_rs_clock::{Clock, RosClock, Time};
use rosbag2_rs_storage::qos::Reliability;
use rosbag2_rs_storage::QosProfile;

use crate::middleware::error::Result;
use crate::middleware::{Handle, Middleware};

/// Where receive timestamps come from.
#[derive(Clone)]
pub(crate) enum RecordTime {
    /// The middleware's receive time.
    Receive,
    /// ROS time following `/clock`.
    Ros(Arc<RosClock>),
}

impl RecordTime {
    /// The timestamp to record for a message the middleware received at `recv_timestamp`.
    pub fn stamp(&self, recv_timestamp: i64) -> i64 {
        match self {
            Self::Receive => recv_timestamp,
            Self::Ros(clock) => clock.now().nanos(),
        }
    }
}

/// Decodes `rosgraph_msgs/msg/Clock` CDR (header, `int32 sec`, `uint32 nanosec`) to ns.
pub(crate) fn decode_clock(data: &[u8]) -> Option<i64> {
    let little = match data.get(..2)? {
        [0, 1] | [0, 3] => true,
        [0, 0] | [0, 2] => false,
        _ => return None,
    };
    let word = |at: usize| -> Option<[u8; 4]> { data.get(at..at + 4)?.try_into().ok() };
    let (sec, nanosec) = if little {
        (i32::from_le_bytes(word(4)?), u32::from_le_bytes(word(8)?))
    } else {
        (i32::from_be_bytes(word(4)?), u32::from_be_bytes(word(8)?))
    };
    (nanosec < 1_000_000_000).then(|| i64::from(sec) * 1_000_000_000 + i64::from(nanosec))
}

/// A ROS clock that follows `/clock` on `middleware`, and the subscription that feeds it.
pub(crate) fn sim_time(middleware: &dyn Middleware) -> Result<(Arc<RosClock>, Handle)> {
    let clock = Arc::new(RosClock::new());
    clock.set_ros_time_override(true);
    let feed = clock.clone();
    // Best effort receives from reliable and best-effort `/clock` publishers alike.
    let qos = QosProfile {
        reliability: Reliability::BestEffort,
        depth: 10,
        ..QosProfile::default()
    };
    let handle = middleware.create_subscription(
        "/clock",
        "rosgraph_msgs/msg/Clock",
        &qos,
        Box::new(move |m| match decode_clock(&m.data) {
            Some(ns) => feed.on_clock_message(Time::ros(ns)),
            None => log::warn!("ignoring a malformed /clock message"),
        }),
    )?;
    Ok((clock, handle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_messages_decode_in_both_byte_orders() {
        let le = [0, 1, 0, 0, 5, 0, 0, 0, 7, 0, 0, 0];
        assert_eq!(decode_clock(&le), Some(5_000_000_007));
        let be = [0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 7];
        assert_eq!(decode_clock(&be), Some(5_000_000_007));
        assert_eq!(decode_clock(&[0, 1, 0, 0, 1]), None);
        assert_eq!(decode_clock(&[9, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), None);
    }
}
