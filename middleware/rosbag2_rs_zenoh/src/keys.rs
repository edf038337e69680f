//! rmw_zenoh's names on the wire: the key expression of a topic or service
//! (`<domain>/<name without its leading slash>/<DDS type>/<type hash>`), the DDS type names it
//! carries, and the `%` mangling of names inside liveliness tokens.

use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::names::{dds_message_type, dds_service_types};

/// What rmw_zenoh on Humble puts where a type hash goes (Humble has no type hashes).
pub const TYPE_HASH_NOT_SUPPORTED: &str = "TypeHashNotSupported";

/// The key expression chunk that matches any type hash (subscriptions and clients that do not
/// know the hash their peers announce).
pub const ANY_TYPE_HASH: &str = "*";

/// The key expression of a topic or service: `0/chatter/std_msgs::msg::dds_::String_/RIHS01_…`.
/// `fq_name` is the fully qualified ROS name; rmw_zenoh drops its leading and trailing slash.
pub fn topic_key(domain_id: u32, fq_name: &str, dds_type: &str, type_hash: &str) -> String {
    let name = fq_name.strip_prefix('/').unwrap_or(fq_name);
    let name = name.strip_suffix('/').unwrap_or(name);
    format!("{domain_id}/{name}/{dds_type}/{type_hash}")
}

/// A name inside a liveliness token: every `/` becomes `%` (so `/` is `%`).
pub fn mangle(name: &str) -> String {
    name.replace('/', "%")
}

/// The inverse of [`mangle`].
pub fn demangle(name: &str) -> String {
    name.replace('%', "/")
}

/// The DDS name of a message type, as rmw_zenoh puts it in keys and tokens
/// (`std_msgs/msg/String` → `std_msgs::msg::dds_::String_`).
pub fn message_type(type_name: &str) -> Result<String> {
    dds_message_type(type_name)
}

/// The DDS name of a service type as rmw_zenoh puts it in keys and tokens: the request type's
/// name without its `Request_` suffix (`rosbag2_interfaces/srv/Pause` →
/// `rosbag2_interfaces::srv::dds_::Pause_`).
pub fn service_type(type_name: &str) -> Result<String> {
    let (request, _) = dds_service_types(type_name)?;
    request
        .strip_suffix("Request_")
        .map(str::to_string)
        .ok_or_else(|| TransportError::InvalidTypeName(type_name.to_string()))
}

/// The ROS type of a DDS type name from a token: `pkg::msg::dds_::Type_` → `pkg/msg/Type`
/// (services: `pkg::srv::dds_::Type_` → `pkg/srv/Type`). `None` for anything else.
pub fn ros_type(dds_type: &str) -> Option<String> {
    let (pkg, rest) = dds_type.split_once("::")?;
    let (kind, rest) = rest.split_once("::dds_::")?;
    let name = rest.strip_suffix('_')?;
    if pkg.is_empty() || kind.is_empty() || name.is_empty() {
        return None;
    }
    Some(format!("{pkg}/{kind}/{name}"))
}

/// Whether `hash` is a real REP-2011 type hash (`RIHS01_` and 64 lowercase hex digits).
pub fn is_rihs01(hash: &str) -> bool {
    hash.strip_prefix("RIHS01_").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Golden values: rmw_zenoh's docs/design.md ("Topic and Service name mapping to Zenoh key
    // expressions") and liveliness_utils.cpp (TopicInfo, mangle_name).
    const STRING_HASH: &str =
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

    #[test]
    fn key_expressions_as_rmw_zenoh_builds_them() {
        assert_eq!(
            topic_key(0, "/chatter", "std_msgs::msg::dds_::String_", STRING_HASH),
            format!("0/chatter/std_msgs::msg::dds_::String_/{STRING_HASH}")
        );
        assert_eq!(
            topic_key(
                0,
                "/robot1/chatter",
                &message_type("std_msgs/msg/String").unwrap(),
                STRING_HASH
            ),
            format!("0/robot1/chatter/std_msgs::msg::dds_::String_/{STRING_HASH}")
        );
        assert_eq!(
            topic_key(
                2,
                "/add_two_ints",
                &service_type("example_interfaces/srv/AddTwoInts").unwrap(),
                "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
            ),
            "2/add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
        );
    }

    #[test]
    fn mangling_and_types() {
        assert_eq!(mangle("/"), "%");
        assert_eq!(mangle("/robot1/chatter"), "%robot1%chatter");
        assert_eq!(demangle("%robot1%chatter"), "/robot1/chatter");
        assert_eq!(
            ros_type("sensor_msgs::msg::dds_::Image_").as_deref(),
            Some("sensor_msgs/msg/Image")
        );
        assert_eq!(
            ros_type("rosbag2_interfaces::srv::dds_::Pause_").as_deref(),
            Some("rosbag2_interfaces/srv/Pause")
        );
        assert_eq!(ros_type("String"), None);
        assert!(service_type("std_msgs/msg/String").is_err());
        assert!(is_rihs01(STRING_HASH));
        assert!(!is_rihs01(TYPE_HASH_NOT_SUPPORTED));
        assert!(!is_rihs01("RIHS01_DF66"));
    }
}
