//! Subscriptions of serialized messages: `rcl_take_serialized_message` into a byte array that
//! becomes the message's `Bytes` as it is (no copy), with the message info's source and
//! received timestamps.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use rosbag2_rs_storage::QosProfile;

use super::ffi::{self, SerializedBuffer};
use super::typesupport::MessageType;
use super::{exit, qos, sys, NodeHandle};
use crate::middleware::error::Result;
use crate::middleware::{MessageCallback, ReceivedMessage};

/// What a take reserves before rmw grows the buffer to the message's size.
const INITIAL_CAPACITY: usize = 64;

/// An rcl subscription with its callback.
pub(crate) struct Subscription {
    handle: *mut sys::rcl_subscription_t,
    topic: String,
    callback: Mutex<MessageCallback>,
    /// The receive time given to the last message taken (see [`Self::take_all`]).
    last_recv: AtomicI64,
    _type_support: MessageType,
    node: Arc<NodeHandle>,
}

// SAFETY: the subscription is taken from only on the wait thread and finalised only in Drop
// (after the wait thread let go of it); the callback is Send and behind a mutex.
unsafe impl Send for Subscription {}
// SAFETY: as above.
unsafe impl Sync for Subscription {}

impl Subscription {
    pub fn new(
        node: Arc<NodeHandle>,
        type_support: MessageType,
        topic: &str,
        qos_profile: &QosProfile,
        callback: MessageCallback,
    ) -> Result<Self> {
        let name = ffi::cstring(topic)?;
        // SAFETY: a zero-initialised subscription initialised on the live node with a type
        // support its library keeps valid; freed if the init fails.
        unsafe {
            let handle = Box::into_raw(Box::new(sys::rcl_get_zero_initialized_subscription()));
            let mut options = sys::rcl_subscription_get_default_options();
            options.qos = qos::to_rmw(qos_profile);
            let ret = sys::rcl_subscription_init(
                handle,
                node.node(),
                type_support.handle,
                name.as_ptr(),
                &options,
            );
            if let Err(e) = ffi::check(ret, || format!("cannot subscribe to {topic}")) {
                drop(Box::from_raw(handle));
                return Err(e);
            }
            Ok(Self {
                handle,
                topic: topic.to_string(),
                callback: Mutex::new(callback),
                last_recv: AtomicI64::new(i64::MIN),
                _type_support: type_support,
                node,
            })
        }
    }

    pub fn handle(&self) -> *const sys::rcl_subscription_t {
        self.handle
    }

    /// Takes every message waiting and hands each to the callback, until the subscription is
    /// removed. Each message's receive time is the rmw's (else now), made later than the
    /// previous message's when it is not.
    pub fn take_all(&self, removed: &AtomicBool) {
        while !removed.load(Ordering::Acquire) {
            let mut buffer = match SerializedBuffer::new(INITIAL_CAPACITY) {
                Ok(b) => b,
                Err(e) => {
                    log::warn!("{e}");
                    return;
                }
            };
            let mut info = sys::rmw_message_info_t::default();
            // SAFETY: the subscription is valid (registered, not finalised); rmw grows
            // `buffer` with its own allocator and fills `info`.
            let ret = unsafe {
                sys::rcl_take_serialized_message(
                    self.handle,
                    buffer.as_mut_ptr(),
                    &mut info,
                    std::ptr::null_mut(),
                )
            };
            match ret {
                ffi::RET_OK => {}
                ffi::RET_SUBSCRIPTION_TAKE_FAILED => return,
                code => {
                    log::warn!(
                        "{}",
                        ffi::error(code, format!("cannot take from {}", self.topic))
                    );
                    return;
                }
            }
            log::trace!(
                "{}: took publication {} sent at {}, {} bytes",
                self.topic,
                info.publication_sequence_number,
                info.source_timestamp,
                buffer.as_ref().len()
            );
            let received = if info.received_timestamp > 0 {
                info.received_timestamp
            } else {
                super::now_nanos()
            };
            // Fast DDS 3 stamps a fragmented sample with its first fragment's arrival: a sample
            // whose fragments were sent again can carry an earlier time than the one delivered
            // before it. Receive times are kept increasing, so that a bag's time order is the
            // order the reader delivered (a reliable reader's order is the writer's).
            let recv_timestamp =
                received.max(self.last_recv.load(Ordering::Relaxed).saturating_add(1));
            self.last_recv.store(recv_timestamp, Ordering::Relaxed);
            let message = ReceivedMessage {
                data: Bytes::from_owner(buffer),
                recv_timestamp,
                send_timestamp: (info.source_timestamp > 0).then_some(info.source_timestamp),
                publisher_gid: Some(super::service::gid16(&info.publisher_gid.data)),
            };
            (self.callback.lock())(message);
        }
    }
}

impl Drop for Subscription {
    /// Hands the messages still in the rmw's reader cache to the callback (they were received,
    /// and acknowledged to reliable writers: a DDS listener would have delivered them already),
    /// then finalises the subscription.
    fn drop(&mut self) {
        if !exit::exiting() {
            let _ = exit::teardown(|| self.take_all(&AtomicBool::new(false)));
        }
        // SAFETY: initialised in `new` on `node`, which is still alive; no wait set holds it
        // any more (the wait thread dropped its last reference); finalised once.
        exit::teardown(|| unsafe {
            let ret = sys::rcl_subscription_fini(self.handle, self.node.node());
            if ret != ffi::RET_OK {
                log::debug!(
                    "{}",
                    ffi::error(ret, format!("subscription of {}", self.topic))
                );
            }
            drop(Box::from_raw(self.handle));
        });
    }
}
