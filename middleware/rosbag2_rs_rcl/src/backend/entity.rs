//! The rcl entities of a node (publishers, subscriptions, clients, services), each a
//! zero-initialised struct on the heap (rcl keeps pointers to it), initialised on the node and
//! finalised on it when dropped, while the node lives: written once for the four.

use std::sync::Arc;

use super::{exit, ffi, sys, NodeHandle};
use rosbag2_rs_middleware::error::Result;

/// An rcl entity type: its zero-initialised value and its finalisation.
pub(crate) trait Kind {
    /// `rcl_get_zero_initialized_*`.
    fn zero() -> Self;
    /// `rcl_*_fini`.
    ///
    /// # Safety
    /// `entity` was initialised on `node`, which is alive; called once.
    unsafe fn fini(entity: *mut Self, node: *mut sys::rcl_node_t) -> sys::rcl_ret_t;
}

macro_rules! kind {
    ($($entity:ty: $zero:ident, $fini:ident;)*) => {$(
        impl Kind for $entity {
            fn zero() -> Self {
                // SAFETY: returns a zero-initialised struct by value.
                unsafe { sys::$zero() }
            }
            unsafe fn fini(entity: *mut Self, node: *mut sys::rcl_node_t) -> sys::rcl_ret_t {
                // SAFETY: as the caller guarantees.
                unsafe { sys::$fini(entity, node) }
            }
        }
    )*};
}

kind! {
    sys::rcl_publisher_t: rcl_get_zero_initialized_publisher, rcl_publisher_fini;
    sys::rcl_subscription_t: rcl_get_zero_initialized_subscription, rcl_subscription_fini;
    sys::rcl_client_t: rcl_get_zero_initialized_client, rcl_client_fini;
    sys::rcl_service_t: rcl_get_zero_initialized_service, rcl_service_fini;
}

/// One entity of a node, finalised on it when dropped. Its owner drops it only once no wait set
/// holds it (the wait thread let go of the owner).
pub(crate) struct NodeEntity<T: Kind> {
    handle: *mut T,
    node: Arc<NodeHandle>,
    /// What it is, for messages: `publisher of /chatter`.
    what: String,
}

// SAFETY: rcl entities are used from several threads as rclcpp uses them (published to from any
// thread, taken from on the wait thread, services answered on their workers); each is finalised
// only here, once, when its last owner lets go.
unsafe impl<T: Kind> Send for NodeEntity<T> {}
// SAFETY: as above.
unsafe impl<T: Kind> Sync for NodeEntity<T> {}

impl<T: Kind> NodeEntity<T> {
    /// A zero-initialised `T` initialised on `node` by `init` (the `rcl_*_init` call with its
    /// options, given the entity and the node); `what` names it in the error when `init` fails
    /// and in the log when finalising does.
    pub fn init(
        node: Arc<NodeHandle>,
        what: String,
        init: impl FnOnce(*mut T, *mut sys::rcl_node_t) -> sys::rcl_ret_t,
    ) -> Result<Self> {
        let handle = Box::into_raw(Box::new(T::zero()));
        if let Err(e) = ffi::check(init(handle, node.node()), || {
            format!("cannot create the {what}")
        }) {
            // SAFETY: allocated above and not initialised; nothing else holds it.
            drop(unsafe { Box::from_raw(handle) });
            return Err(e);
        }
        Ok(Self { handle, node, what })
    }

    /// The entity, for rcl calls.
    pub fn handle(&self) -> *mut T {
        self.handle
    }

    /// The node it belongs to.
    pub fn node(&self) -> &Arc<NodeHandle> {
        &self.node
    }
}

impl<T: Kind> Drop for NodeEntity<T> {
    fn drop(&mut self) {
        // SAFETY: initialised in `init` on `node`, which is still alive (held here); no wait set
        // holds it any more; finalised once, then freed.
        exit::teardown(|| unsafe {
            let ret = T::fini(self.handle, self.node.node());
            if ret != ffi::RET_OK {
                log::debug!("{}", ffi::error(ret, self.what.clone()));
            }
            drop(Box::from_raw(self.handle));
        });
    }
}
