//! The graph as rcl reports it: topic names and types, each endpoint's node, QoS and (Jazzy and
//! later) type hash from `rcl_get_publishers_info_by_topic` /
//! `rcl_get_subscriptions_info_by_topic`, node names with enclaves; and graph events, computed
//! when the node's graph guard condition wakes the wait thread.

use std::collections::HashSet;

use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Sender;

use super::{ffi, qos, sys, NodeHandle};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::{group_by_topic, EndpointInfo, GraphEvent, TopicInfo};

/// Graph listeners, and the (topic, type) pairs with publishers seen last.
#[derive(Default)]
pub(crate) struct Graph {
    listeners: Mutex<Vec<Sender<GraphEvent>>>,
    published: Mutex<HashSet<(String, String)>>,
}

impl Graph {
    /// Sends the graph's changes from now on to `tx`.
    pub fn listen(&self, tx: Sender<GraphEvent>) {
        self.listeners.lock().push(tx);
    }

    /// Reads the graph again and tells the listeners which topics gained a publisher of a type.
    pub fn refresh(&self, node: &NodeHandle) {
        let topics = match topics(node) {
            Ok(t) => t,
            Err(e) => {
                log::debug!("{e}");
                return;
            }
        };
        let now: HashSet<(String, String)> = topics
            .iter()
            .flat_map(|t| {
                t.publishers
                    .iter()
                    .map(|p| (t.name.clone(), p.type_name.clone()))
            })
            .collect();
        let mut published = self.published.lock();
        let mut appeared: Vec<&(String, String)> = now.difference(&published).collect();
        appeared.sort();
        if !appeared.is_empty() {
            let mut listeners = self.listeners.lock();
            for (topic, type_name) in appeared {
                let event = GraphEvent::PublisherAppeared {
                    topic: topic.clone(),
                    type_name: type_name.clone(),
                };
                listeners.retain(|l| l.send(event.clone()).is_ok());
            }
        }
        *published = now;
    }
}

/// What rmw_dds_common reports for an endpoint whose node is not known (yet).
const UNKNOWN_NAME: &str = "_NODE_NAME_UNKNOWN_";
/// The same for the namespace.
const UNKNOWN_NAMESPACE: &str = "_NODE_NAMESPACE_UNKNOWN_";

/// `/namespace/name`, or none while the graph does not know the endpoint's node.
fn node_name(namespace: &str, name: &str) -> Option<String> {
    if name.is_empty() || name == UNKNOWN_NAME || namespace == UNKNOWN_NAMESPACE {
        None
    } else if namespace.is_empty() || namespace == "/" {
        Some(format!("/{name}"))
    } else {
        Some(format!("{}/{name}", namespace.trim_end_matches('/')))
    }
}

/// `RIHS01_<hex>` for a version-1 hash, none for an unset one.
#[cfg(rosbag2_rs_rcl_type_hash)]
fn type_hash(info: &sys::rmw_topic_endpoint_info_t) -> Option<String> {
    let hash = &info.topic_type_hash;
    if hash.version != 1 {
        return None;
    }
    let hex: String = hash.value.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("RIHS01_{hex}"))
}

/// Humble's rmw reports no type hash.
#[cfg(not(rosbag2_rs_rcl_type_hash))]
fn type_hash(_info: &sys::rmw_topic_endpoint_info_t) -> Option<String> {
    None
}

/// The publishers (or subscriptions) of `topic`.
fn endpoints(node: &NodeHandle, topic: &str, publishers: bool) -> Result<Vec<EndpointInfo>> {
    let name = ffi::cstring(topic)?;
    let mut allocator = ffi::allocator();
    // SAFETY: a zero-initialised array that rcl fills with the allocator and that is finalised
    // with it; the node is valid; the strings are copied before the fini.
    unsafe {
        let mut array = sys::rmw_get_zero_initialized_topic_endpoint_info_array();
        let ret = if publishers {
            sys::rcl_get_publishers_info_by_topic(
                node.node(),
                &mut allocator,
                name.as_ptr(),
                false,
                &mut array,
            )
        } else {
            sys::rcl_get_subscriptions_info_by_topic(
                node.node(),
                &mut allocator,
                name.as_ptr(),
                false,
                &mut array,
            )
        };
        ffi::check(ret, || format!("cannot read the endpoints of {topic}"))?;
        let infos: &[sys::rmw_topic_endpoint_info_t] = if array.info_array.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(array.info_array, array.size)
        };
        let out = infos
            .iter()
            .map(|info| EndpointInfo {
                type_name: ffi::string(info.topic_type),
                qos: qos::from_rmw(&info.qos_profile),
                node: node_name(
                    &ffi::string(info.node_namespace),
                    &ffi::string(info.node_name),
                ),
                type_hash: type_hash(info),
            })
            .collect();
        let _ = sys::rmw_topic_endpoint_info_array_fini(&mut array, &mut allocator);
        Ok(out)
    }
}

/// Every topic with its publishers and subscriptions.
pub(crate) fn topics(node: &NodeHandle) -> Result<Vec<TopicInfo>> {
    let mut allocator = ffi::allocator();
    let mut names: Vec<String> = Vec::new();
    // SAFETY: a zero-initialised names-and-types that rcl fills and that is finalised once;
    // the names are copied before.
    unsafe {
        let mut nat = sys::rmw_get_zero_initialized_names_and_types();
        let ret = sys::rcl_get_topic_names_and_types(node.node(), &mut allocator, false, &mut nat);
        ffi::check(ret, || "cannot read the topics".into())?;
        if !nat.names.data.is_null() {
            for i in 0..nat.names.size {
                names.push(ffi::string(*nat.names.data.add(i)));
            }
        }
        let _ = sys::rcl_names_and_types_fini(&mut nat);
    }
    let mut all = Vec::new();
    for name in names {
        for (is_publisher, list) in [
            (true, endpoints(node, &name, true)?),
            (false, endpoints(node, &name, false)?),
        ] {
            all.extend(list.into_iter().map(|e| (name.clone(), is_publisher, e)));
        }
    }
    Ok(group_by_topic(all))
}

/// Every node on the graph: `(namespace, name, enclave)`.
pub(crate) fn node_names(node: &NodeHandle) -> Result<Vec<(String, String, String)>> {
    // SAFETY: zero-initialised string arrays that rcl fills with the default allocator and that
    // are finalised once; the strings are copied before.
    unsafe {
        let mut names = sys::rcutils_get_zero_initialized_string_array();
        let mut namespaces = sys::rcutils_get_zero_initialized_string_array();
        let mut enclaves = sys::rcutils_get_zero_initialized_string_array();
        let ret = sys::rcl_get_node_names_with_enclaves(
            node.node(),
            ffi::allocator(),
            &mut names,
            &mut namespaces,
            &mut enclaves,
        );
        ffi::check(ret, || "cannot read the node names".into())?;
        let read = |a: &sys::rcutils_string_array_t, i: usize| {
            if a.data.is_null() || i >= a.size {
                String::new()
            } else {
                ffi::string(*a.data.add(i))
            }
        };
        let out = (0..names.size)
            .map(|i| (read(&namespaces, i), read(&names, i), read(&enclaves, i)))
            .collect();
        let _ = sys::rcutils_string_array_fini(&mut names);
        let _ = sys::rcutils_string_array_fini(&mut namespaces);
        let _ = sys::rcutils_string_array_fini(&mut enclaves);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_are_fully_qualified_and_unknown_ones_none() {
        assert_eq!(node_name("/", "talker").as_deref(), Some("/talker"));
        assert_eq!(node_name("/a/b", "talker").as_deref(), Some("/a/b/talker"));
        assert_eq!(node_name(UNKNOWN_NAMESPACE, UNKNOWN_NAME), None);
    }
}
