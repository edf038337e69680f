//! Publishers of serialized messages: `rcl_publish_serialized_message` with the bag's CDR bytes
//! (encapsulation header included, as rmw expects them) as they are, without a copy.

use std::sync::Arc;
use std::time::Duration;

use rosbag2_rs_middleware::Bytes;
use rosbag2_rs_middleware::QosProfile;

use super::typesupport::MessageType;
use super::{exit, ffi, qos, sys, NodeHandle};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::{check_payload, RawPublisher, WRITER_LINGER};

/// An rcl publisher of one topic.
pub(crate) struct RclPublisher {
    handle: *mut sys::rcl_publisher_t,
    topic: String,
    _type_support: MessageType,
    node: Arc<NodeHandle>,
}

// SAFETY: rcl publishers may publish from any thread (rmw publishers are thread-safe); the
// publisher is finalised only in Drop.
unsafe impl Send for RclPublisher {}
// SAFETY: as above.
unsafe impl Sync for RclPublisher {}

impl RclPublisher {
    pub fn new(
        node: Arc<NodeHandle>,
        type_support: MessageType,
        topic: &str,
        qos_profile: &QosProfile,
    ) -> Result<Self> {
        let name = ffi::cstring(topic)?;
        // SAFETY: a zero-initialised publisher initialised on the live node with a type support
        // its library keeps valid (held in `_type_support`); freed if the init fails.
        unsafe {
            let handle = Box::into_raw(Box::new(sys::rcl_get_zero_initialized_publisher()));
            let mut options = sys::rcl_publisher_get_default_options();
            options.qos = qos::to_rmw(qos_profile);
            let ret = sys::rcl_publisher_init(
                handle,
                node.node(),
                type_support.handle,
                name.as_ptr(),
                &options,
            );
            if let Err(e) = ffi::check(ret, || format!("cannot create a publisher on {topic}")) {
                drop(Box::from_raw(handle));
                return Err(e);
            }
            Ok(Self {
                handle,
                topic: topic.to_string(),
                _type_support: type_support,
                node,
            })
        }
    }
}

impl RawPublisher for RclPublisher {
    fn publish(&self, data: &Bytes) -> Result<()> {
        check_payload(data)?;
        let message = ffi::borrowed_serialized(data);
        // SAFETY: the publisher is valid until Drop; rmw only reads the borrowed bytes during
        // the call.
        let ret = unsafe {
            sys::rcl_publish_serialized_message(self.handle, &message, std::ptr::null_mut())
        };
        ffi::check(ret, || format!("cannot publish on {}", self.topic))
    }

    fn subscription_count(&self) -> usize {
        let mut count = 0usize;
        // SAFETY: the publisher is valid until Drop; `count` outlives the call.
        let ret = unsafe { sys::rcl_publisher_get_subscription_count(self.handle, &mut count) };
        if ret != ffi::RET_OK {
            log::debug!(
                "{}",
                ffi::error(ret, format!("subscription count of {}", self.topic))
            );
            return 0;
        }
        count
    }

    fn wait_for_acks(&self, timeout: Duration) -> bool {
        let ns = i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX);
        // SAFETY: the publisher is valid until Drop.
        let ret = unsafe { sys::rcl_publisher_wait_for_all_acked(self.handle, ns) };
        match ret {
            ffi::RET_OK | ffi::RET_UNSUPPORTED => true,
            ffi::RET_TIMEOUT => false,
            code => {
                log::debug!(
                    "{}",
                    ffi::error(code, format!("waiting for acks on {}", self.topic))
                );
                false
            }
        }
    }
}

impl Drop for RclPublisher {
    fn drop(&mut self) {
        // What was published last (the end of a playback) still reaches the reliable
        // subscriptions: wait for their acknowledgements, boundedly, as the native backends'
        // writers linger.
        let linger = self.node.linger_left(WRITER_LINGER);
        let acked = exit::teardown(|| {
            linger.is_zero() || self.subscription_count() == 0 || self.wait_for_acks(linger)
        });
        if acked == Some(false) {
            log::debug!(
                "{}: not every message was acknowledged before it went",
                self.topic
            );
        }
        // SAFETY: initialised in `new` on `node`, which is still alive; finalised once.
        exit::teardown(|| unsafe {
            let ret = sys::rcl_publisher_fini(self.handle, self.node.node());
            if ret != ffi::RET_OK {
                log::debug!(
                    "{}",
                    ffi::error(ret, format!("publisher of {}", self.topic))
                );
            }
            drop(Box::from_raw(self.handle));
        });
    }
}
