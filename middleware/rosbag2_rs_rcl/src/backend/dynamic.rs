//! Type supports that rcl builds at run time from a type description
//! (`rcl_dynamic_message_type_support_handle_init`, REP-2011's dynamic type support), for a type
//! whose package is not installed: the recorder learns the description from the publishers'
//! nodes and subscribes with it, where the rmw takes such a type support (rmw_fastrtps_cpp does
//! for subscriptions; not for publishers).
//!
//! It is used only with the rmw and distribution where it was verified ([`VERIFIED`]): Kilted's
//! `rosidl_dynamic_typesupport_fastdds` fails to build Fast DDS 3 types of ordinary messages
//! (Fast DDS logs "Bounds contains a zero and it is not a valid value"), then dereferences the
//! type it did not build: the process ends with SIGSEGV inside
//! `rcl_dynamic_message_type_support_handle_init` (found with `lifecycle_msgs/msg/State`
//! and `rmw_dds_common/msg/Gid`). A recorder must not go down for one topic.
//!
//! The description goes from our type to rcl's C struct through the installed
//! `type_description_interfaces` type support (`rmw_deserialize`) and rcl's own conversion, so
//! no C layout is written by hand.

use parking_lot::Mutex;
use std::sync::Arc;

use rosbag2_rs_codec::limits::RUNTIME_TYPES;
use rosbag2_rs_interfaces::{try_to_cdr, MessageType as _};
use rosbag2_rs_middleware::type_hash::TypeDescription;

use super::ffi;
use super::service::from_cdr;
use super::sys;
use super::typesupport::{CMessage, MessageType, TypeSupports};
use rosbag2_rs_middleware::error::{Result, TransportError};

/// The (distribution, rmw) pairs whose run-time type support was tested to subscribe and take
/// (`test_our_recorder_takes_an_unknown_types_definition_from_its_rclpy_publisher`).
const VERIFIED: &[(&str, &str)] = &[("jazzy", "rmw_fastrtps_cpp")];

/// Why run-time type support is not tried with `rmw` on this build's distribution, if it is not.
pub(crate) fn unverified(rmw: &str) -> Option<TransportError> {
    let distro = super::ROS_DISTRO;
    (!VERIFIED.contains(&(distro, rmw))).then(|| {
        TransportError::Middleware(format!(
            "run-time type support is used only where it was verified (Jazzy with \
             rmw_fastrtps_cpp), not with {rmw} on ROS 2 {distro}"
        ))
    })
}

/// The message rcl converts descriptions from.
const DESCRIPTION_TYPE: &str = "type_description_interfaces/msg/TypeDescription";

/// Type supports built so far, by type: kept for the process's life (see [`message_type`]), at
/// most [`RUNTIME_TYPES`].
static BUILT: Mutex<Vec<(String, TypeDescription, Built)>> = Mutex::new(Vec::new());

/// The type support of `type_name` that rcl builds from `description`, with the serialization
/// library of the rmw in use. Built once per type and description, and never finalised: Fast DDS
/// 2.14's (Jazzy's) `rcl_dynamic_message_type_support_handle_fini` deletes a `DynamicData` that
/// the subscription already deleted ("Error deleting DynamicData. It isn't registered in the
/// factory"), and with two such types the process ends with SIGSEGV in
/// `DynamicDataFactory::delete_data`, before the recording is closed. A recorder that stops and
/// records again reuses what it built.
pub(crate) fn message_type(
    types: &TypeSupports,
    type_name: &str,
    description: &TypeDescription,
) -> Result<MessageType> {
    let mut built = BUILT.lock();
    let found = built
        .iter()
        .find(|(t, d, _)| t == type_name && d == description);
    let handle = match found {
        Some((_, _, ts)) => ts.handle(),
        None => {
            // Another node's description: bounded before rcl builds (and keeps) anything of it.
            description
                .check_bounds()
                .map_err(|e| TransportError::Middleware(e.to_string()))?;
            let budget = RUNTIME_TYPES.get();
            if built.len() as u64 >= budget {
                return Err(TransportError::Middleware(format!(
                    "cannot build a type support of '{type_name}': {budget} types were built \
                     at run time already, the most allowed (set {} to raise it)",
                    RUNTIME_TYPES.env
                )));
            }
            type Wire = rosbag2_rs_interfaces::type_description_interfaces::msg::TypeDescription;
            let wire = rosbag2_rs_middleware::type_description::to_wire(description);
            let cdr = try_to_cdr(&wire).map_err(|e| TransportError::codec(Wire::TYPE_NAME, e))?;
            let message = from_cdr(&cdr, &types.introspected_message(DESCRIPTION_TYPE)?)?;
            let ts = Built::new(type_name, &message)?;
            let handle = ts.handle();
            built.push((type_name.to_string(), description.clone(), ts));
            handle
        }
    };
    // Nothing to keep alive: the type support lives as long as the process.
    Ok(MessageType::new(handle, Arc::new(())))
}

/// A type support rcl built (in a box that never moves, so its address stays valid).
struct Built(Box<sys::rosidl_message_type_support_t>);

// SAFETY: rcl and rmw only read the type support once built, from any thread; it is never
// finalised.
unsafe impl Send for Built {}

impl Built {
    fn handle(&self) -> *const sys::rosidl_message_type_support_t {
        &*self.0
    }

    fn new(type_name: &str, description: &CMessage) -> Result<Self> {
        let what = || format!("cannot build a type support of '{type_name}' from its description");
        // SAFETY: `description` is an initialised `type_description_interfaces` TypeDescription
        // (its introspection allocated it); rcl copies it into a runtime struct of its own,
        // which rcl's init copies again and which is destroyed here; the type support is a
        // zeroed struct rcl fills.
        unsafe {
            let runtime =
                sys::rcl_convert_type_description_msg_to_runtime(description.as_ptr().cast());
            if runtime.is_null() {
                return Err(ffi::error(sys::RCL_RET_ERROR, what()));
            }
            let mut ts = Box::new(sys::rosidl_message_type_support_t::default());
            let mut allocator = ffi::allocator();
            let ret = sys::rcl_dynamic_message_type_support_handle_init(
                std::ptr::null(),
                runtime,
                &mut allocator,
                &mut *ts,
            );
            sys::rosidl_runtime_c__type_description__TypeDescription__destroy(runtime);
            ffi::check(ret, what)?;
            Ok(Self(ts))
        }
    }
}
