//! ROS 2 names: validation and expansion of topic, service and node names, and their mapping to
//! DDS topic and type names (`rt/`, `rq/…Request`, `rr/…Reply`, `pkg::msg::dds_::Type_`).

use crate::error::{Result, TransportError};

/// A node's identity on the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeIdentity {
    /// Node name, e.g. `rosbag2_player`.
    pub name: String,
    /// Namespace, `/` or `/a/b`.
    pub namespace: String,
}

impl NodeIdentity {
    /// Validates a node name and namespace (`""` means `/`).
    pub fn new(name: &str, namespace: &str) -> Result<Self> {
        let valid_token = |t: &str| {
            !t.is_empty()
                && !t.starts_with(|c: char| c.is_ascii_digit())
                && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !valid_token(name) {
            return Err(TransportError::invalid_name(
                name,
                "a node name is letters, digits and '_', not starting with a digit",
            ));
        }
        let namespace = match namespace {
            "" | "/" => "/".to_string(),
            ns => {
                let ns = if ns.starts_with('/') {
                    ns.to_string()
                } else {
                    format!("/{ns}")
                };
                let ns = ns.trim_end_matches('/').to_string();
                if !ns[1..].split('/').all(valid_token) {
                    return Err(TransportError::invalid_name(&ns, "invalid namespace"));
                }
                ns
            }
        };
        Ok(Self {
            name: name.to_string(),
            namespace,
        })
    }

    /// `/namespace/name`.
    pub fn fully_qualified_name(&self) -> String {
        if self.namespace == "/" {
            format!("/{}", self.name)
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
}

/// The QoS of one of a node's own event topics (`events/write_split`, `events/read_split`,
/// `events/rosbag2_messages_lost`, ...): what `overrides` (`--qos-profile-overrides-path`, keyed
/// by fully qualified or given name) says for it, as rosbag2 Lyrical applies them, else
/// `default`.
pub fn event_qos(
    overrides: &std::collections::BTreeMap<String, rosbag2_rs_storage::QosProfile>,
    topic: &str,
    node: &NodeIdentity,
    default: rosbag2_rs_storage::QosProfile,
) -> rosbag2_rs_storage::QosProfile {
    expand_name(topic, node)
        .ok()
        .and_then(|name| overrides.get(&name))
        .or_else(|| overrides.get(topic))
        .copied()
        .unwrap_or(default)
}

/// Expands a topic or service name to its fully qualified form: absolute names stay, `~` is the
/// node's private namespace, relative names go under the node's namespace.
pub fn expand_name(name: &str, node: &NodeIdentity) -> Result<String> {
    let expanded = if name == "~" {
        node.fully_qualified_name()
    } else if let Some(rest) = name.strip_prefix("~/") {
        format!("{}/{rest}", node.fully_qualified_name())
    } else if name.starts_with('/') {
        name.to_string()
    } else if node.namespace == "/" {
        format!("/{name}")
    } else {
        format!("{}/{name}", node.namespace)
    };
    validate_fully_qualified(&expanded)
        .map_err(|reason| TransportError::invalid_name(name, reason))?;
    Ok(expanded)
}

fn validate_fully_qualified(name: &str) -> std::result::Result<(), &'static str> {
    if name.len() < 2 || !name.starts_with('/') {
        return Err("must not be empty");
    }
    if name.ends_with('/') {
        return Err("must not end with '/'");
    }
    if name.contains("//") {
        return Err("must not contain '//'");
    }
    if name.contains("__") {
        return Err("must not contain repeated underscores");
    }
    for token in name[1..].split('/') {
        if token.starts_with(|c: char| c.is_ascii_digit()) {
            return Err("a name token must not start with a digit");
        }
        if !token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err("only letters, digits, '_' and '/' are allowed");
        }
    }
    Ok(())
}

/// The DDS topic of a fully qualified ROS topic: `/chatter` → `rt/chatter`.
pub fn dds_topic_name(fq_topic: &str) -> String {
    format!("rt{fq_topic}")
}

/// The DDS request and reply topics of a fully qualified service.
pub fn dds_service_topics(fq_service: &str) -> (String, String) {
    (
        format!("rq{fq_service}Request"),
        format!("rr{fq_service}Reply"),
    )
}

fn invalid_type(type_name: &str) -> TransportError {
    TransportError::InvalidTypeName(type_name.to_string())
}

/// Checks that `type_name` is `pkg/msg/Type`, `pkg/srv/Type` or `pkg/action/Type`.
pub fn check_type_name(type_name: &str) -> Result<()> {
    rosbag2_rs_interfaces::parse_type_name(type_name)
        .map(drop)
        .map_err(|_| invalid_type(type_name))
}

/// The DDS type of a message type: `std_msgs/msg/String` → `std_msgs::msg::dds_::String_`.
pub fn dds_message_type(type_name: &str) -> Result<String> {
    rosbag2_rs_interfaces::dds_type_name(type_name).map_err(|_| invalid_type(type_name))
}

/// The DDS request and response types of a service type.
pub fn dds_service_types(type_name: &str) -> Result<(String, String)> {
    let request = rosbag2_rs_interfaces::dds_request_type_name(type_name)
        .map_err(|_| invalid_type(type_name))?;
    let response = rosbag2_rs_interfaces::dds_response_type_name(type_name)
        .map_err(|_| invalid_type(type_name))?;
    Ok((request, response))
}

/// The ROS topic and message type of a DDS topic, if it is a ROS topic (`rt/...`).
pub fn ros_topic_from_dds(dds_topic: &str, dds_type: &str) -> Option<(String, String)> {
    let topic = dds_topic.strip_prefix("rt")?;
    if !topic.starts_with('/') {
        return None;
    }
    let (pkg, rest) = dds_type.split_once("::")?;
    let (kind, rest) = rest.split_once("::dds_::")?;
    let ty = rest.strip_suffix('_')?;
    Some((topic.to_string(), format!("{pkg}/{kind}/{ty}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_follows_ros_rules() {
        let node = NodeIdentity::new("player", "/robot").unwrap();
        assert_eq!(expand_name("/chatter", &node).unwrap(), "/chatter");
        assert_eq!(expand_name("chatter", &node).unwrap(), "/robot/chatter");
        assert_eq!(
            expand_name("~/pause", &node).unwrap(),
            "/robot/player/pause"
        );
        let root = NodeIdentity::new("rosbag2_player", "").unwrap();
        assert_eq!(
            expand_name("~/set_rate", &root).unwrap(),
            "/rosbag2_player/set_rate"
        );
        for bad in ["", "/", "a//b", "/a/", "/1abc", "/a b", "/a__b", "/a-b"] {
            assert!(expand_name(bad, &root).is_err(), "{bad}");
        }
        assert!(NodeIdentity::new("9lives", "/").is_err());
        assert!(NodeIdentity::new("ok", "/bad ns").is_err());
    }

    #[test]
    fn dds_mapping() {
        assert_eq!(dds_topic_name("/chatter"), "rt/chatter");
        assert_eq!(
            dds_service_topics("/rosbag2_player/pause"),
            (
                "rq/rosbag2_player/pauseRequest".into(),
                "rr/rosbag2_player/pauseReply".into()
            )
        );
        assert_eq!(
            dds_message_type("std_msgs/msg/String").unwrap(),
            "std_msgs::msg::dds_::String_"
        );
        assert_eq!(
            dds_service_types("rosbag2_interfaces/srv/SetRate").unwrap(),
            (
                "rosbag2_interfaces::srv::dds_::SetRate_Request_".into(),
                "rosbag2_interfaces::srv::dds_::SetRate_Response_".into()
            )
        );
        assert!(dds_message_type("String").is_err());
        assert_eq!(
            ros_topic_from_dds("rt/a/b", "sensor_msgs::msg::dds_::Image_"),
            Some(("/a/b".into(), "sensor_msgs/msg/Image".into()))
        );
        assert_eq!(
            ros_topic_from_dds("rq/a/bRequest", "x::srv::dds_::Y_Request_"),
            None
        );
    }
}
