//! Receive timestamps: the middleware's receive time, or with `use_sim_time` the ROS time of a
//! [`RosClock`] fed by a `/clock` subscription.

use std::sync::Arc;

use rosbag2_rs_clock::{Clock, RosClock, Time};
use rosbag2_rs_storage::qos::Reliability;
use rosbag2_rs_storage::QosProfile;

use crate::clock_topic::{self, CLOCK_TOPIC, CLOCK_TYPE};
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
        CLOCK_TOPIC,
        CLOCK_TYPE,
        &qos,
        Box::new(move |m| match clock_topic::decode(&m.data) {
            Some(ns) => feed.on_clock_message(Time::ros(ns)),
            None => log::warn!("ignoring a malformed /clock message"),
        }),
    )?;
    Ok((clock, handle))
}
