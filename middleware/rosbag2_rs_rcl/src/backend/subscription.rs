//! Subscriptions of serialized messages: `rcl_take_serialized_message` into a byte array that
//! becomes the message's `Bytes` as it is (no copy), with the message info's source and
//! received timestamps. Gaps in each publisher's `publication_sequence_number` (where the rmw
//! gives it: rmw_fastrtps, rmw_cyclonedds, rmw_zenoh) count as messages lost on the way: a
//! keep-last writer that overwrote what the reader had not yet acknowledged, a reader cache that
//! overflowed.
//!
//! A take that rmw reports as taken but that holds no message (fewer bytes than a CDR
//! encapsulation header) is skipped and counted: rmw_fastrtps on Jazzy, reading a Cyclone DDS
//! writer's 1 MB samples, was seen to answer every take with such a sample, without end (see
//! docs/benchmarks.md). Each round of takes is bounded, so that such a reader (or a publisher faster than the
//! takes) never holds the wait thread: the node's services, its other topics and its exit go on.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rosbag2_rs_middleware::Bytes;
use rosbag2_rs_middleware::QosProfile;

use rosbag2_rs_middleware::loss::LossTracker;

use super::entity::NodeEntity;
use super::ffi::{self, SerializedBuffer};
use super::typesupport::MessageType;
use super::{exit, qos, sys, NodeHandle};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::{MessageCallback, ReceivedMessage};

/// What a take reserves before rmw grows the buffer to the message's size.
const INITIAL_CAPACITY: usize = 64;
/// The most takes of one round; the wait set wakes the thread again at once if more wait.
const TAKES_PER_ROUND: usize = 256;
/// How long a subscription that goes keeps handing on what its reader cache still holds.
const DRAIN_ON_DROP: Duration = Duration::from_secs(1);

/// What one take gave.
enum Take<M> {
    /// A message.
    Message(M),
    /// A sample rmw called taken that holds no message.
    Empty,
    /// Nothing (more) to take, or the take failed.
    Nothing,
}

/// Why a round of takes ended.
#[derive(Debug, PartialEq, Eq)]
enum RoundEnd {
    /// The reader had nothing more.
    Drained,
    /// [`TAKES_PER_ROUND`] takes: more may wait.
    Budget,
    /// `stop` said so.
    Stopped,
}

/// One round: hands the messages `take` gives to `deliver`, at most [`TAKES_PER_ROUND`] takes
/// (empty ones included), until `take` has nothing or `stop` is true.
fn round_of_takes<M>(
    mut take: impl FnMut() -> Take<M>,
    mut deliver: impl FnMut(M),
    stop: impl Fn() -> bool,
) -> RoundEnd {
    for _ in 0..TAKES_PER_ROUND {
        if stop() {
            return RoundEnd::Stopped;
        }
        match take() {
            Take::Message(m) => deliver(m),
            Take::Empty => {}
            Take::Nothing => return RoundEnd::Drained,
        }
    }
    RoundEnd::Budget
}

/// An rcl subscription with its callback.
pub(crate) struct Subscription {
    // Field order is drop order: finalised before its type support goes.
    entity: NodeEntity<sys::rcl_subscription_t>,
    topic: String,
    callback: Mutex<MessageCallback>,
    /// The receive time given to the last message taken (see [`Self::take_one`]).
    last_recv: AtomicI64,
    /// Takes that held no message (see the module's doc).
    empty_takes: AtomicU64,
    /// The sequence numbers seen per publisher.
    loss: Mutex<LossTracker>,
    /// Messages lost on the topic, shared with the node's other subscriptions of it.
    lost: Arc<AtomicU64>,
    _type_support: MessageType,
}

impl Subscription {
    pub fn new(
        node: Arc<NodeHandle>,
        type_support: MessageType,
        topic: &str,
        qos_profile: &QosProfile,
        callback: MessageCallback,
        lost: Arc<AtomicU64>,
    ) -> Result<Self> {
        let name = ffi::cstring(topic)?;
        // SAFETY: returns the default options by value.
        let mut options = unsafe { sys::rcl_subscription_get_default_options() };
        options.qos = qos::to_rmw(qos_profile);
        let what = format!("subscription of {topic}");
        let entity = NodeEntity::init(node, what, |handle, node| {
            // SAFETY: a zero-initialised subscription, the live node, a type support its library
            // keeps valid (held in `_type_support`), a name and options that outlive the call.
            unsafe {
                sys::rcl_subscription_init(
                    handle,
                    node,
                    type_support.handle,
                    name.as_ptr(),
                    &options,
                )
            }
        })?;
        Ok(Self {
            entity,
            topic: topic.to_string(),
            callback: Mutex::new(callback),
            last_recv: AtomicI64::new(i64::MIN),
            empty_takes: AtomicU64::new(0),
            loss: Mutex::new(LossTracker::default()),
            lost,
            _type_support: type_support,
        })
    }

    pub fn handle(&self) -> *const sys::rcl_subscription_t {
        self.entity.handle()
    }

    /// Takes the messages waiting and hands each to the callback, one round (bounded: the
    /// wait set wakes the thread again for the rest), or until the subscription is removed.
    pub fn take_round(&self, removed: &AtomicBool) {
        let callback = &self.callback;
        round_of_takes(
            || self.take_one(),
            |m| (callback.lock())(m),
            || removed.load(Ordering::Acquire),
        );
    }

    /// One take. The message's receive time is the rmw's (else now), made later than the
    /// previous message's when it is not.
    fn take_one(&self) -> Take<ReceivedMessage> {
        let mut buffer = match SerializedBuffer::new(INITIAL_CAPACITY) {
            Ok(b) => b,
            Err(e) => {
                log::warn!("{e}");
                return Take::Nothing;
            }
        };
        let mut info = sys::rmw_message_info_t::default();
        // SAFETY: the subscription is valid (registered, not finalised); rmw grows `buffer`
        // with its own allocator and fills `info`.
        let ret = unsafe {
            sys::rcl_take_serialized_message(
                self.entity.handle(),
                buffer.as_mut_ptr(),
                &mut info,
                std::ptr::null_mut(),
            )
        };
        match ret {
            ffi::RET_OK => {}
            ffi::RET_SUBSCRIPTION_TAKE_FAILED => return Take::Nothing,
            code => {
                log::warn!(
                    "{}",
                    ffi::error(code, format!("cannot take from {}", self.topic))
                );
                return Take::Nothing;
            }
        }
        log::trace!(
            "{}: took publication {} sent at {}, {} bytes",
            self.topic,
            info.publication_sequence_number,
            info.source_timestamp,
            buffer.as_ref().len()
        );
        let publisher_gid = super::service::gid16(&info.publisher_gid.data);
        self.count_lost(publisher_gid, info.publication_sequence_number);
        if rosbag2_rs_middleware::too_short_for_encapsulation(buffer.as_ref()) {
            if self.empty_takes.fetch_add(1, Ordering::Relaxed) == 0 {
                log::warn!(
                    "{}: the rmw handed a sample without a message ({} bytes, publication {}); \
                     skipped (such samples are counted and reported when the topic goes)",
                    self.topic,
                    buffer.as_ref().len(),
                    info.publication_sequence_number
                );
            }
            return Take::Empty;
        }
        let received = if info.received_timestamp > 0 {
            info.received_timestamp
        } else {
            super::now_nanos()
        };
        // Fast DDS 3 stamps a fragmented sample with its first fragment's arrival: a sample
        // whose fragments were sent again can carry an earlier time than the one delivered
        // before it. Receive times are kept increasing, so that a bag's time order is the order
        // the reader delivered (a reliable reader's order is the writer's).
        let recv_timestamp = received.max(self.last_recv.load(Ordering::Relaxed).saturating_add(1));
        self.last_recv.store(recv_timestamp, Ordering::Relaxed);
        Take::Message(ReceivedMessage {
            data: Bytes::from_owner(buffer),
            recv_timestamp,
            send_timestamp: (info.source_timestamp > 0).then_some(info.source_timestamp),
            publisher_gid: Some(publisher_gid),
        })
    }

    /// Counts the messages of `publisher` skipped before the one numbered `sequence_number` (0:
    /// the rmw gives no numbers), warning at the 1st, 2nd, 4th, ... gap.
    fn count_lost(&self, publisher: [u8; 16], sequence_number: u64) {
        if sequence_number == 0 {
            return;
        }
        let mut loss = self.loss.lock();
        let lost = loss.record(
            publisher,
            i64::try_from(sequence_number).unwrap_or(i64::MAX),
        );
        if lost == 0 {
            return;
        }
        let total = self
            .lost
            .fetch_add(lost, Ordering::Relaxed)
            .saturating_add(lost);
        if loss.warn_of_gap() {
            log::warn!(
                "topic '{}': {lost} messages lost on the way (a gap in a publisher's sequence \
                 numbers); {total} in {} gaps so far (warned at gaps 1, 2, 4, 8, ...)",
                self.topic,
                loss.gaps()
            );
        }
    }
}

impl Drop for Subscription {
    /// Hands the messages still in the rmw's reader cache to the callback (they were received,
    /// and acknowledged to reliable writers: a DDS listener would have delivered them already),
    /// for at most [`DRAIN_ON_DROP`], then finalises the subscription.
    fn drop(&mut self) {
        if !exit::exiting() {
            let deadline = Instant::now() + DRAIN_ON_DROP;
            let deliver = |m| (self.callback.lock())(m);
            let _ = exit::teardown(|| {
                while round_of_takes(|| self.take_one(), deliver, || Instant::now() >= deadline)
                    == RoundEnd::Budget
                {}
            });
        }
        let empty = self.empty_takes.load(Ordering::Relaxed);
        if empty > 0 {
            log::warn!(
                "{}: skipped {empty} samples without a message that the rmw handed out",
                self.topic
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that answers every take with an empty sample (as rmw_fastrtps did, without
    /// end) does not hold the round: it ends after its budget, having delivered nothing.
    #[test]
    fn a_round_of_empty_samples_ends_after_its_budget() {
        let mut takes = 0;
        let mut delivered = 0;
        let end = round_of_takes(
            || {
                takes += 1;
                if takes > 10 * TAKES_PER_ROUND {
                    Take::<()>::Nothing
                } else {
                    Take::Empty
                }
            },
            |_| delivered += 1,
            || false,
        );
        assert_eq!(end, RoundEnd::Budget);
        assert_eq!((takes, delivered), (TAKES_PER_ROUND, 0));
    }

    #[test]
    fn messages_between_empty_samples_are_delivered_in_order_until_the_reader_is_drained() {
        let mut reader =
            vec![Take::Message(1), Take::Empty, Take::Message(2), Take::Empty].into_iter();
        let mut delivered = Vec::new();
        let end = round_of_takes(
            || reader.next().unwrap_or(Take::Nothing),
            |m| delivered.push(m),
            || false,
        );
        assert_eq!(end, RoundEnd::Drained);
        assert_eq!(delivered, [1, 2]);
    }

    #[test]
    fn a_round_stops_when_told() {
        let stop = AtomicBool::new(false);
        let mut delivered = 0;
        let end = round_of_takes(
            || Take::Message(()),
            |_| {
                delivered += 1;
                if delivered == 3 {
                    stop.store(true, Ordering::Relaxed);
                }
            },
            || stop.load(Ordering::Relaxed),
        );
        assert_eq!((end, delivered), (RoundEnd::Stopped, 3));
    }
}
