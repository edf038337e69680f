//! The type hashes (RIHS01, REP-2011) a node announces with its endpoints, for every backend
//! whose middleware carries them: hashes registered through
//! [`Middleware::register_type_hash`](crate::Middleware::register_type_hash) (the
//! player registers each bag's recorded hash, the recorder what the graph announced) win;
//! otherwise the hash is computed once from the message definitions (`AMENT_PREFIX_PATH`, then
//! the bundled set), as a ROS 2 node announces the hash of the type it was built with.

use std::collections::HashMap;

use parking_lot::Mutex;
use rosbag2_rs_codec::msg::definition::ros2_name;
use rosbag2_rs_codec::{type_hash, MessageDefinitionCache};

/// Type hashes by ROS 2 type name (`pkg/msg/Type`, `pkg/srv/Service_Request`).
#[derive(Debug, Default)]
pub struct TypeHashes {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    registered: HashMap<String, String>,
    /// Computed from definitions; `None` when the type's definition is unknown.
    computed: HashMap<String, Option<String>>,
    definitions: Option<MessageDefinitionCache>,
}

impl TypeHashes {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `hash` as the hash of `type_name`; a malformed hash (or Humble's
    /// `TypeHashNotSupported`) is ignored.
    pub fn register(&self, type_name: &str, hash: &str) {
        let Some(hash) = type_hash::announced(Some(hash)) else {
            log::debug!("ignoring type hash '{hash}' of {type_name}: not RIHS01");
            return;
        };
        self.state
            .lock()
            .registered
            .insert(ros2_name(type_name), hash.to_string());
    }

    /// The hash registered for `type_name`, if any (the Zenoh backend's question).
    pub fn registered(&self, type_name: &str) -> Option<String> {
        self.state
            .lock()
            .registered
            .get(&ros2_name(type_name))
            .cloned()
    }

    /// The hash to announce for `type_name`: the registered one, else one computed from its
    /// definition, else none.
    pub fn get(&self, type_name: &str) -> Option<String> {
        let name = ros2_name(type_name);
        let mut state = self.state.lock();
        if let Some(hash) = state.registered.get(&name) {
            return Some(hash.clone());
        }
        if let Some(computed) = state.computed.get(&name) {
            return computed.clone();
        }
        let computed = match state
            .definitions
            .get_or_insert_with(MessageDefinitionCache::new)
            .type_hash(&name)
        {
            Ok(hash) => Some(hash),
            Err(e) => {
                log::debug!("no type hash to announce for {name}: {e}");
                None
            }
        };
        state.computed.insert(name, computed.clone());
        computed
    }

    /// The hashes of a service's request and response messages (`pkg/srv/Service`).
    pub fn service(&self, service_type: &str) -> (Option<String>, Option<String>) {
        (
            self.get(&format!("{service_type}_Request")),
            self.get(&format!("{service_type}_Response")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRING: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
    const OTHER: &str = "RIHS01_0000000000000000000000000000000000000000000000000000000000000001";

    #[test]
    fn registered_hashes_win_over_computed_ones() {
        let hashes = TypeHashes::new();
        assert_eq!(hashes.get("std_msgs/msg/String").as_deref(), Some(STRING));
        hashes.register("std_msgs/String", OTHER);
        assert_eq!(hashes.get("std_msgs/msg/String").as_deref(), Some(OTHER));
        hashes.register("std_msgs/msg/String", "TypeHashNotSupported");
        assert_eq!(hashes.get("std_msgs/msg/String").as_deref(), Some(OTHER));
        assert_eq!(hashes.get("unknown_msgs/msg/Nothing"), None);
    }

    #[test]
    fn services_announce_their_request_and_response_hashes() {
        // std_srvs/srv/Trigger_Request and _Response of ROS 2 Jazzy.
        let (request, response) = TypeHashes::new().service("std_srvs/srv/Trigger");
        assert_eq!(
            request.as_deref(),
            Some("RIHS01_d010825374ce8918e72bfd826c82603e60f45419e932ea976f807b74a863a199")
        );
        assert_eq!(
            response.as_deref(),
            Some("RIHS01_2d946c21e2fc3f1e9ca6986a8191d85fcc70097a8bb7771a053564bc47009cdf")
        );
    }
}
