//! A publisher of one of the recorder's event topics, at most a given number of times a second
//! (wall time): what `events/rosbag2_messages_lost` and `events/rosbag2_rs_statistics` share.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rosbag2_rs_interfaces::{try_to_cdr, MessageType};
use rosbag2_rs_storage::QosProfile;

use super::error::{RecorderError, Result};
use rosbag2_rs_middleware::names::event_qos;
use rosbag2_rs_middleware::{Middleware, RawPublisher};

/// rosbag2's bound on `--stats-max-publishing-rate` (and ours on `--statistics-rate`).
pub const MAX_STATS_RATE: f64 = 1000.0;

/// Publishes messages of `M` on one topic, at most `rate` times a second.
pub(super) struct RatedPublisher<M> {
    publisher: Box<dyn RawPublisher>,
    topic: &'static str,
    period: Duration,
    last: Option<Instant>,
    message: std::marker::PhantomData<M>,
}

impl<M: MessageType> RatedPublisher<M> {
    /// A publisher on `topic` (relative to the node) at most `rate` times a second; `None` for
    /// a rate of 0. `what` names the rate in the error for one outside 0 to [`MAX_STATS_RATE`];
    /// `overrides` may give the topic's QoS.
    pub fn new(
        middleware: &dyn Middleware,
        topic: &'static str,
        rate: f64,
        what: &str,
        overrides: &BTreeMap<String, QosProfile>,
    ) -> Result<Option<Self>> {
        if !(0.0..=MAX_STATS_RATE).contains(&rate) {
            return Err(RecorderError::InvalidOptions(format!(
                "{what} must be within 0 and {MAX_STATS_RATE} Hz, got {rate}"
            )));
        }
        if rate == 0.0 {
            return Ok(None);
        }
        let qos = event_qos(
            overrides,
            topic,
            middleware.node(),
            QosProfile {
                depth: 10,
                ..QosProfile::default()
            },
        );
        let publisher = middleware.create_publisher(topic, M::TYPE_NAME, &qos)?;
        Ok(Some(Self {
            publisher,
            topic,
            period: Duration::from_secs_f64(1.0 / rate),
            last: None,
            message: std::marker::PhantomData,
        }))
    }

    /// The time between two messages at the rate.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Whether a period has passed since the last message.
    pub fn is_due(&self) -> bool {
        self.last.is_none_or(|t| t.elapsed() >= self.period)
    }

    /// Publishes `message` (a failure is logged: events never stop the recorder).
    pub fn publish(&mut self, message: &M) {
        let bytes = match try_to_cdr(message) {
            Ok(bytes) => bytes,
            Err(e) => {
                log::warn!("cannot encode a message of {}: {e}", self.topic);
                return;
            }
        };
        match self.publisher.publish(&bytes.into()) {
            Ok(()) => self.last = Some(Instant::now()),
            Err(e) => log::warn!("cannot publish on {}: {e}", self.topic),
        }
    }
}
