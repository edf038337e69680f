//! Publishers of serialized messages: `rcl_publish_serialized_message` with the bag's CDR bytes
//! (encapsulation header included, as rmw expects them) as they are, without a copy.

use std::sync::Arc;
use std::time::Duration;

use rosbag2_rs_middleware::Bytes;
use rosbag2_rs_middleware::QosProfile;

use super::entity::NodeEntity;
use super::typesupport::MessageType;
use super::{exit, ffi, qos, sys, NodeHandle};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::{check_payload, RawPublisher, WRITER_LINGER};

/// An rcl publisher of one topic.
pub(crate) struct RclPublisher {
    // Field order is drop order: finalised before its type support goes.
    entity: NodeEntity<sys::rcl_publisher_t>,
    topic: String,
    _type_support: MessageType,
}

impl RclPublisher {
    pub fn new(
        node: Arc<NodeHandle>,
        type_support: MessageType,
        topic: &str,
        qos_profile: &QosProfile,
    ) -> Result<Self> {
        let name = ffi::cstring(topic)?;
        // SAFETY: returns the default options by value.
        let mut options = unsafe { sys::rcl_publisher_get_default_options() };
        options.qos = qos::to_rmw(qos_profile);
        let what = format!("publisher on {topic}");
        let entity = NodeEntity::init(node, what, |handle, node| {
            // SAFETY: a zero-initialised publisher, the live node, a type support its library
            // keeps valid (held in `_type_support`), a name and options that outlive the call.
            unsafe {
                sys::rcl_publisher_init(handle, node, type_support.handle, name.as_ptr(), &options)
            }
        })?;
        Ok(Self {
            entity,
            topic: topic.to_string(),
            _type_support: type_support,
        })
    }
}

impl RawPublisher for RclPublisher {
    fn publish(&self, data: &Bytes) -> Result<()> {
        check_payload(data)?;
        let message = ffi::borrowed_serialized(data);
        // SAFETY: the publisher is valid until Drop; rmw only reads the borrowed bytes during
        // the call.
        let ret = unsafe {
            sys::rcl_publish_serialized_message(
                self.entity.handle(),
                &message,
                std::ptr::null_mut(),
            )
        };
        ffi::check(ret, || format!("cannot publish on {}", self.topic))
    }

    fn subscription_count(&self) -> usize {
        let mut count = 0usize;
        // SAFETY: the publisher is valid until Drop; `count` outlives the call.
        let ret =
            unsafe { sys::rcl_publisher_get_subscription_count(self.entity.handle(), &mut count) };
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
        let ret = unsafe { sys::rcl_publisher_wait_for_all_acked(self.entity.handle(), ns) };
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
        let linger = self.entity.node().linger_left(WRITER_LINGER);
        let acked = exit::teardown(|| {
            linger.is_zero() || self.subscription_count() == 0 || self.wait_for_acks(linger)
        });
        if acked == Some(false) {
            log::debug!(
                "{}: not every message was acknowledged before it went",
                self.topic
            );
        }
    }
}
