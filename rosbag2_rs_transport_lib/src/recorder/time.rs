//! Receive timestamps: the middleware's receive time, or with `use_sim_time` the ROS time of a
//! [`RosClock`] fed by a `/clock` subscription.
//!
//! A sim-time bag never holds wall time. What arrives before the first `/clock` message is held
//! (up to a byte bound, the cache size) and stamped with the first `/clock` value when it
//! comes; what does not fit, or is still held when recording stops without any `/clock`, is
//! counted per topic as dropped before the first `/clock`. Send times are the ROS time too: a
//! publisher's source timestamp is wall time.

use std::sync::Arc;

use parking_lot::Mutex;
use rosbag2_rs_clock::{Clock, RosClock, Time};
use rosbag2_rs_storage::qos::Reliability;
use rosbag2_rs_storage::QosProfile;

use super::stats::TopicCounters;
use crate::clock_topic::{self, CLOCK_TOPIC, CLOCK_TYPE};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::{Handle, Middleware, ReceivedMessage};

/// Where one topic's messages go once stamped: the message and its receive and send times.
pub(crate) type Deliver = Box<dyn Fn(ReceivedMessage, i64, i64) + Send + Sync>;

/// A topic's destination and counters.
pub(crate) struct Target {
    /// Stores a stamped message (bag cache or snapshot ring).
    pub deliver: Deliver,
    /// The topic's counters (drops before the first `/clock` are counted here).
    pub counters: Arc<TopicCounters>,
}

impl Target {
    /// Notes the receive time (for the silence watch) and stores the message.
    fn store(&self, message: ReceivedMessage, recv: i64, send: i64) {
        use std::sync::atomic::Ordering::Relaxed;
        let c = &self.counters;
        let _ = c
            .first_received_ns
            .compare_exchange(0, recv, Relaxed, Relaxed);
        c.last_received_ns.store(recv, Relaxed);
        (self.deliver)(message, recv, send)
    }
}

/// Where receive timestamps come from.
#[derive(Clone)]
pub(crate) enum RecordTime {
    /// The middleware's receive time.
    Receive,
    /// ROS time following `/clock`.
    Ros(Arc<SimTime>),
}

impl RecordTime {
    /// Stamps `message` and hands it to `target` (at once, or when the first `/clock` comes).
    pub fn deliver(&self, message: ReceivedMessage, target: &Arc<Target>) {
        match self {
            Self::Receive => {
                let recv = message.recv_timestamp;
                let send = message.send_timestamp.unwrap_or(recv);
                target.store(message, recv, send)
            }
            Self::Ros(sim) => sim.deliver(message, target),
        }
    }

    /// Now, in the time base of the receive timestamps.
    pub fn now(&self, middleware: &dyn Middleware) -> i64 {
        match self {
            Self::Receive => middleware.now(),
            Self::Ros(sim) => sim.clock.now().nanos(),
        }
    }

    /// Counts what is still held (no `/clock` ever came) as dropped; nothing is held after.
    pub fn discard_held(&self) {
        if let Self::Ros(sim) = self {
            sim.discard_held();
        }
    }
}

/// Messages waiting for the first `/clock`.
#[derive(Default)]
struct Held {
    /// True once `/clock` time is active: nothing is held any more.
    released: bool,
    messages: Vec<(ReceivedMessage, Arc<Target>)>,
    bytes: u64,
}

/// ROS time following `/clock`, and what arrived before it.
pub(crate) struct SimTime {
    clock: RosClock,
    held: Mutex<Held>,
    /// Most bytes held before the first `/clock`.
    hold_limit: u64,
}

impl SimTime {
    fn new(hold_limit: u64) -> Self {
        let clock = RosClock::new();
        clock.set_ros_time_override(true);
        Self {
            clock,
            held: Mutex::new(Held::default()),
            hold_limit,
        }
    }

    fn deliver(&self, message: ReceivedMessage, target: &Arc<Target>) {
        let mut held = self.held.lock();
        if held.released {
            drop(held);
            let now = self.clock.now().nanos();
            target.store(message, now, now);
            return;
        }
        let size = message.data.len() as u64;
        if held.bytes.saturating_add(size) > self.hold_limit {
            TopicCounters::add(&target.counters.dropped_before_clock, 1);
            return;
        }
        held.bytes += size;
        held.messages.push((message, target.clone()));
    }

    /// Feeds a `/clock` sample; the first releases what was held, stamped with its time, in
    /// arrival order and before anything received later.
    fn on_clock_message(&self, time: i64) {
        self.clock.on_clock_message(Time::ros(time));
        let mut held = self.held.lock();
        if held.released {
            return;
        }
        held.released = true;
        let now = self.clock.now().nanos();
        if !held.messages.is_empty() {
            log::info!(
                "{} messages received before the first /clock recorded at its time",
                held.messages.len()
            );
        }
        for (message, target) in std::mem::take(&mut held.messages) {
            target.store(message, now, now);
        }
        held.bytes = 0;
    }

    /// Reports the number of `/clock` publishers on the graph (more than one: a warning).
    pub(crate) fn set_clock_publisher_count(&self, count: usize) {
        self.clock.set_clock_publisher_count(count);
    }

    fn discard_held(&self) {
        let mut held = self.held.lock();
        let messages = std::mem::take(&mut held.messages);
        if !messages.is_empty() {
            log::warn!(
                "{} messages received before any /clock were not recorded (use_sim_time)",
                messages.len()
            );
        }
        for (_, target) in messages {
            TopicCounters::add(&target.counters.dropped_before_clock, 1);
        }
        held.bytes = 0;
    }
}

/// Sim time that follows `/clock` on `middleware` (holding up to `hold_limit` bytes received
/// before the first sample), and the subscription that feeds it.
pub(crate) fn sim_time(
    middleware: &dyn Middleware,
    hold_limit: u64,
) -> Result<(Arc<SimTime>, Handle)> {
    let sim = Arc::new(SimTime::new(hold_limit));
    let feed = sim.clone();
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
            Some(ns) => feed.on_clock_message(ns),
            None => log::warn!("ignoring a malformed /clock message"),
        }),
    )?;
    Ok((sim, handle))
}
