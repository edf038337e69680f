//! The endpoints Cyclone DDS describes (built-in topics, matched-endpoint queries), copied out of
//! C memory with their QoS as ROS profiles and what ROS 2 puts in their USER_DATA. Above the FFI
//! wrappers ([`crate::sys`]), the QoS mapping and the type objects, below the graph and the
//! services that use them.

use std::ffi::CStr;

use cyclors::*;
use rosbag2_rs_middleware::type_hash;

use crate::sys::{user_data_value, Guid};

/// An endpoint as Cyclone describes it in its built-in topics and matched-endpoint queries,
/// copied out of C memory.
#[derive(Debug, Clone)]
pub struct EndpointData {
    /// The endpoint's GUID.
    pub guid: Guid,
    /// Its participant's GUID.
    pub participant: Guid,
    /// DDS topic name.
    pub topic_name: String,
    /// DDS type name.
    pub type_name: String,
    /// Its QoS as a ROS profile.
    pub qos: rosbag2_rs_middleware::QosProfile,
    /// `clientid=` or `serviceid=` from USER_DATA (ROS 2 service endpoints of rmw_cyclonedds).
    pub service_id: Option<String>,
    /// `typehash=` from USER_DATA (RIHS01, Iron and later), if it holds one.
    pub type_hash: Option<String>,
    /// The hash of the XTypes complete type object it announces, if any.
    pub complete_type: Option<rosbag2_rs_dds_common::xtypes::TypeHash>,
}

impl EndpointData {
    /// Copies a built-in endpoint sample.
    ///
    /// # Safety
    /// `ep` must point to a valid `dds_builtintopic_endpoint_t`.
    pub unsafe fn from_builtin(ep: *const dds_builtintopic_endpoint_t) -> Self {
        let ep = &*ep;
        let text = |p: *const std::os::raw::c_char| {
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Self {
            guid: ep.key.v,
            participant: ep.participant_key.v,
            topic_name: text(ep.topic_name),
            type_name: text(ep.type_name),
            qos: crate::qos::from_dds(ep.qos),
            service_id: user_data_value(ep.qos, "clientid")
                .or_else(|| user_data_value(ep.qos, "serviceid")),
            type_hash: user_data_value(ep.qos, "typehash")
                .and_then(|h| type_hash::announced(Some(&h)).map(str::to_string)),
            complete_type: crate::xtypes::complete_type_hash(ep),
        }
    }

    /// The endpoint as the shared graph keeps it: a writer (`is_writer`) or a reader.
    pub fn endpoint(self, is_writer: bool) -> rosbag2_rs_dds_common::graph::Endpoint {
        rosbag2_rs_dds_common::graph::Endpoint {
            is_writer,
            guid: self.guid,
            participant: self.participant,
            topic: self.topic_name,
            type_name: self.type_name,
            qos: self.qos,
            type_hash: self.type_hash,
            complete_type: self.complete_type,
        }
    }

    /// Copies and frees what `dds_get_matched_*_data` returned (`None` for null).
    ///
    /// # Safety
    /// `ep` must be null or a pointer returned by `dds_get_matched_*_data`.
    pub unsafe fn take_matched(ep: *mut dds_builtintopic_endpoint_t) -> Option<Self> {
        if ep.is_null() {
            return None;
        }
        let data = Self::from_builtin(ep);
        dds_builtintopic_free_endpoint(ep);
        Some(data)
    }
}

/// Instance handles of the endpoints matched with `entity` (subscriptions of a writer, or
/// publications of a reader).
pub fn matched_handles(entity: dds_entity_t, of_writer: bool) -> Vec<dds_instance_handle_t> {
    let mut handles = vec![0; 64];
    loop {
        // SAFETY: the buffer holds `handles.len()` handles.
        let n = unsafe {
            if of_writer {
                dds_get_matched_subscriptions(entity, handles.as_mut_ptr(), handles.len())
            } else {
                dds_get_matched_publications(entity, handles.as_mut_ptr(), handles.len())
            }
        };
        if n < 0 {
            return Vec::new();
        }
        let n = n as usize;
        if n <= handles.len() {
            handles.truncate(n);
            return handles;
        }
        handles.resize(n, 0);
    }
}

/// The data of a subscription matched with `writer`.
pub fn matched_subscription(
    writer: dds_entity_t,
    handle: dds_instance_handle_t,
) -> Option<EndpointData> {
    // SAFETY: the returned pointer is null or owned by us, and freed by take_matched.
    unsafe { EndpointData::take_matched(dds_get_matched_subscription_data(writer, handle)) }
}

/// The data of a publication matched with `reader`.
pub fn matched_publication(
    reader: dds_entity_t,
    handle: dds_instance_handle_t,
) -> Option<EndpointData> {
    // SAFETY: as above.
    unsafe { EndpointData::take_matched(dds_get_matched_publication_data(reader, handle)) }
}
