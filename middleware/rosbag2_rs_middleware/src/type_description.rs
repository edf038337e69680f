//! ROS 2's type description service (`~/get_type_description`,
//! `type_description_interfaces/srv/GetTypeDescription`, Jazzy and later), both ways:
//!
//! * the recorder asks the nodes publishing a type it has no definition for (no
//!   `AMENT_PREFIX_PATH` package, not bundled) and records the definition they describe: their
//!   `.msg` sources where they send them (constants and comments kept), else text built from
//!   the field descriptions, checked against the RIHS01 hash the publisher announces;
//!   A type whose publishers serve no description (plain DDS applications, pre-Jazzy nodes) is
//!   built from the XTypes type object they announce, where the middleware has one
//!   ([`from_type_object`]);
//! * the player serves the types it plays from the bag's definitions, so that a ROS 2 tool can
//!   learn a type it has no package for.

use std::collections::HashMap;
use std::time::Duration;

use rosbag2_rs_codec::msg::definition::{concatenated_sections, ros2_name};
use rosbag2_rs_codec::type_hash::{self, TypeHashError};
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_interfaces::type_description_interfaces::msg::{
    Field, FieldType, IndividualTypeDescription, TypeDescription, TypeSource,
};
use rosbag2_rs_interfaces::type_description_interfaces::srv::{
    GetTypeDescription, GetTypeDescriptionRequest, GetTypeDescriptionResponse,
};

use crate::error::{Result, TransportError};
use crate::services::{serve, Client};
use crate::{Handle, Middleware, TopicInfo};

/// The service every node serves, relative to the node.
pub const SERVICE: &str = "get_type_description";

/// How long to wait for a publisher's node to serve its type description, and for its answer.
const WAIT: Duration = Duration::from_secs(2);

/// Asks the nodes publishing `type_name` on `topic` for its description, in turn, and returns
/// the first definition that matches the hash they announce (or any, when they announce none).
pub fn ask_publishers(
    middleware: &dyn Middleware,
    topic: &TopicInfo,
    type_name: &str,
) -> Option<MessageDefinition> {
    let Some(topic) = with_publisher_nodes(middleware, topic, type_name) else {
        log::warn!(
            "'{type_name}': no node is known for the publishers of '{}'",
            topic.name
        );
        return None;
    };
    let mut asked = Vec::new();
    for publisher in topic.publishers.iter().filter(|p| p.type_name == type_name) {
        let Some(node) = publisher.node.as_deref() else {
            continue;
        };
        if asked.contains(&node) {
            continue;
        }
        asked.push(node);
        let hash = type_hash::announced(publisher.type_hash.as_deref());
        match ask(middleware, node, type_name, hash) {
            Ok(definition) => {
                log::info!(
                    "'{type_name}': definition received from node '{node}' ({})",
                    definition.type_description_hash
                );
                return Some(definition);
            }
            Err(reason) => log::warn!("'{type_name}': node '{node}' gave no definition: {reason}"),
        }
    }
    None
}

/// The definition of `type_name` from the type object a publisher of `topic` announces in the
/// middleware's type system (DDS XTypes), checked against the RIHS01 hash a publisher announces,
/// if any: for publishers that serve no type description (plain DDS applications, pre-Jazzy
/// nodes).
pub fn from_type_object(
    middleware: &dyn Middleware,
    topic: &TopicInfo,
    type_name: &str,
) -> Option<MessageDefinition> {
    let description = middleware.announced_type_description(&topic.name, type_name)?;
    let hash = topic
        .publishers
        .iter()
        .filter(|p| p.type_name == type_name)
        .find_map(|p| type_hash::announced(p.type_hash.as_deref()));
    match description.definition(&|_| None, hash) {
        Ok(definition) => {
            log::info!(
                "'{type_name}': definition built from the type object its publisher announces ({})",
                definition.type_description_hash
            );
            Some(definition)
        }
        Err(e) => {
            log::warn!(
                "'{type_name}': the type object its publisher announces gives no definition: {e}"
            );
            None
        }
    }
}

/// `topic` once the graph names a node for at least one of its publishers of `type_name` (a
/// DDS graph learns endpoints before their nodes, from `ros_discovery_info`), waiting up to
/// [`WAIT`].
fn with_publisher_nodes(
    middleware: &dyn Middleware,
    topic: &TopicInfo,
    type_name: &str,
) -> Option<TopicInfo> {
    let named = |t: &TopicInfo| {
        t.publishers
            .iter()
            .any(|p| p.type_name == type_name && p.node.is_some())
    };
    let deadline = std::time::Instant::now() + WAIT;
    let mut current = topic.clone();
    while !named(&current) {
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
        current = middleware
            .topics()
            .into_iter()
            .find(|t| t.name == topic.name)?;
    }
    Some(current)
}

/// Why a node's answer gave no definition.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The node serves no type description service.
    #[error("{SERVICE} is not served")]
    NotServed,
    /// The call failed.
    #[error(transparent)]
    Call(#[from] TransportError),
    /// The node answered that it has no description: its reason.
    #[error("it answered: {0}")]
    Refused(String),
    /// The description answered gives no definition (or one of another hash).
    #[error(transparent)]
    Description(#[from] TypeHashError),
}

fn ask(
    middleware: &dyn Middleware,
    node: &str,
    type_name: &str,
    hash: Option<&str>,
) -> std::result::Result<MessageDefinition, AskError> {
    let service = format!("{}/{SERVICE}", node.trim_end_matches('/'));
    let client = Client::<GetTypeDescription>::new(middleware, &service)?;
    if !client.wait_for_service(WAIT) {
        return Err(AskError::NotServed);
    }
    let response = client.call(
        &GetTypeDescriptionRequest {
            type_name: type_name.to_string(),
            type_hash: hash.unwrap_or_default().to_string(),
            include_type_sources: true,
        },
        WAIT,
    )?;
    definition_from_answer(&response, hash)
}

/// The definition a node's answer to `GetTypeDescription` gives: its `.msg` sources where it
/// sends them, else text built from the field descriptions, checked against `hash` (the hash
/// its publishers announce) when given. What a remote node sends is decoded here (public for
/// the fuzz targets, `fuzz/`).
#[doc(hidden)]
pub fn definition_from_answer(
    response: &GetTypeDescriptionResponse,
    hash: Option<&str>,
) -> std::result::Result<MessageDefinition, AskError> {
    if !response.successful {
        return Err(AskError::Refused(response.failure_reason.clone()));
    }
    let sources: HashMap<&str, &str> = response
        .type_sources
        .iter()
        .filter(|s| s.encoding == "msg")
        .map(|s| (s.type_name.as_str(), s.raw_file_contents.as_str()))
        .collect();
    let description = from_wire(&response.type_description);
    Ok(description.definition(&|t| sources.get(t).map(|s| s.to_string()), hash)?)
}

/// Serves `~/get_type_description` for the types of `definitions` (as a bag stores them).
pub fn serve_definitions(
    middleware: &dyn Middleware,
    definitions: Vec<MessageDefinition>,
) -> Result<Handle> {
    let by_type: HashMap<String, MessageDefinition> = definitions
        .into_iter()
        .filter(|d| !d.encoded_message_definition.is_empty())
        .map(|d| (d.topic_type.clone(), d))
        .collect();
    serve::<GetTypeDescription>(middleware, &format!("~/{SERVICE}"), move |request| {
        answer(&by_type, &request)
    })
}

/// This node's answer to `request`, from the definitions it knows by type name: the
/// description (and the `.msg` sources if asked), or why there is none.
pub fn answer(
    definitions: &HashMap<String, MessageDefinition>,
    request: &GetTypeDescriptionRequest,
) -> GetTypeDescriptionResponse {
    describe(definitions, request).unwrap_or_else(|reason| GetTypeDescriptionResponse {
        successful: false,
        failure_reason: reason.to_string(),
        ..Default::default()
    })
}

/// Why the player does not describe a type.
#[derive(Debug, thiserror::Error)]
enum DescribeError {
    #[error("type '{0}' is not used by this node")]
    Unknown(String),
    #[error("type '{type_name}' is known here with hash {known}, not {asked}")]
    OtherHash {
        type_name: String,
        known: String,
        asked: String,
    },
    #[error(transparent)]
    Description(#[from] TypeHashError),
    #[error(transparent)]
    Sources(#[from] rosbag2_rs_codec::msg::CodecError),
}

/// The answer to `request` from the known definitions, or why there is none.
fn describe(
    definitions: &HashMap<String, MessageDefinition>,
    request: &GetTypeDescriptionRequest,
) -> std::result::Result<GetTypeDescriptionResponse, DescribeError> {
    let definition = definitions
        .get(&request.type_name)
        .ok_or_else(|| DescribeError::Unknown(request.type_name.clone()))?;
    let description = type_hash::TypeDescription::from_definition(&request.type_name, definition)?;
    let hash = description.rihs01();
    if !request.type_hash.is_empty() && request.type_hash != hash {
        return Err(DescribeError::OtherHash {
            type_name: request.type_name.clone(),
            known: hash,
            asked: request.type_hash.clone(),
        });
    }
    let type_sources = if request.include_type_sources {
        sources(definition)?
    } else {
        Vec::new()
    };
    Ok(GetTypeDescriptionResponse {
        successful: true,
        failure_reason: String::new(),
        type_description: to_wire(&description),
        type_sources,
        extra_information: Vec::new(),
    })
}

/// The `.msg` text of each type in a stored definition, as type sources.
fn sources(
    definition: &MessageDefinition,
) -> std::result::Result<Vec<TypeSource>, rosbag2_rs_codec::msg::CodecError> {
    Ok(concatenated_sections(
        &definition.topic_type,
        &definition.encoded_message_definition,
    )?
    .into_iter()
    .filter(|(name, _)| !name.is_empty())
    .map(|(name, text)| TypeSource {
        type_name: ros2_name(&name),
        encoding: "msg".into(),
        raw_file_contents: text,
    })
    .collect())
}

/// A type description as `type_description_interfaces/msg/TypeDescription` carries it.
pub fn to_wire(description: &type_hash::TypeDescription) -> TypeDescription {
    let individual = |t: &type_hash::IndividualTypeDescription| IndividualTypeDescription {
        type_name: t.type_name.clone(),
        fields: t
            .fields
            .iter()
            .map(|f| Field {
                name: f.name.clone(),
                field_type: FieldType {
                    type_id: f.field_type.type_id,
                    capacity: f.field_type.capacity,
                    string_capacity: f.field_type.string_capacity,
                    nested_type_name: f.field_type.nested_type_name.clone(),
                },
                default_value: String::new(),
            })
            .collect(),
    };
    TypeDescription {
        type_description: individual(&description.type_description),
        referenced_type_descriptions: description
            .referenced_type_descriptions
            .iter()
            .map(individual)
            .collect(),
    }
}

fn from_wire(description: &TypeDescription) -> type_hash::TypeDescription {
    let individual = |t: &IndividualTypeDescription| type_hash::IndividualTypeDescription {
        type_name: t.type_name.clone(),
        fields: t
            .fields
            .iter()
            .map(|f| type_hash::FieldDescription {
                name: f.name.clone(),
                field_type: type_hash::FieldType {
                    type_id: f.field_type.type_id,
                    capacity: f.field_type.capacity,
                    string_capacity: f.field_type.string_capacity,
                    nested_type_name: f.field_type.nested_type_name.clone(),
                },
            })
            .collect(),
    };
    type_hash::TypeDescription {
        type_description: individual(&description.type_description),
        referenced_type_descriptions: description
            .referenced_type_descriptions
            .iter()
            .map(individual)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_codec::MessageDefinitionCache;

    fn bag_definitions() -> HashMap<String, MessageDefinition> {
        let mut cache = MessageDefinitionCache::with_prefixes(Vec::new());
        ["sensor_msgs/msg/NavSatFix", "std_msgs/msg/String"]
            .into_iter()
            .map(|t| (t.to_string(), cache.definition(t)))
            .collect()
    }

    #[test]
    fn what_the_player_serves_gives_the_recorder_the_same_definition_back() {
        let definitions = bag_definitions();
        let stored = &definitions["sensor_msgs/msg/NavSatFix"];
        let hash = type_hash::rihs01("sensor_msgs/msg/NavSatFix", stored).unwrap();
        let response = describe(
            &definitions,
            &GetTypeDescriptionRequest {
                type_name: "sensor_msgs/msg/NavSatFix".into(),
                type_hash: hash.clone(),
                include_type_sources: true,
            },
        )
        .unwrap();
        assert!(response.successful);
        let names: Vec<&str> = response
            .type_sources
            .iter()
            .map(|s| s.type_name.as_str())
            .collect();
        assert!(names.contains(&"sensor_msgs/msg/NavSatStatus"), "{names:?}");
        let sources: HashMap<&str, &str> = response
            .type_sources
            .iter()
            .map(|s| (s.type_name.as_str(), s.raw_file_contents.as_str()))
            .collect();
        let rebuilt = from_wire(&response.type_description)
            .definition(&|t| sources.get(t).map(|s| s.to_string()), Some(&hash))
            .unwrap();
        assert_eq!(rebuilt.type_description_hash, hash);
        assert!(rebuilt.encoded_message_definition.contains("STATUS_FIX"));
    }

    #[test]
    fn unknown_types_and_wrong_hashes_are_refused_with_a_reason() {
        let definitions = bag_definitions();
        let ask = |type_name: &str, type_hash: &str| {
            describe(
                &definitions,
                &GetTypeDescriptionRequest {
                    type_name: type_name.into(),
                    type_hash: type_hash.into(),
                    include_type_sources: false,
                },
            )
        };
        let reason = |e: DescribeError| e.to_string();
        assert!(reason(ask("my_pkg/msg/Nope", "").unwrap_err()).contains("not used"));
        let wrong = format!("RIHS01_{}", "1".repeat(64));
        assert!(reason(ask("std_msgs/msg/String", &wrong).unwrap_err()).contains("not RIHS01_1111"));
        let any_hash = ask("std_msgs/msg/String", "").unwrap();
        assert!(any_hash.successful && any_hash.type_sources.is_empty());
    }
}
