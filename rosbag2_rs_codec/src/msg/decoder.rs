//! A topic's decoder: the registry built from its type's stored definition, ready to decode its
//! CDR payloads (shared by `cat`, `doctor`, `convert --where` and `export`).

use super::{decode_cdr_at, CdrHeader, CodecError, Dialect, MessageView, Registry, Value};
use crate::MessageDefinition;

/// Decodes the CDR payloads of one message type from its `ros2msg` or `ros2idl` definition.
#[derive(Debug, Clone)]
pub struct TopicDecoder {
    /// The parsed definition with its dependencies.
    pub registry: Registry,
    /// The index of the topic's type in [`TopicDecoder::registry`].
    pub index: usize,
}

impl TopicDecoder {
    /// Parses `definition` of `type_name` as rosbag2 stores it: concatenated `ros2msg` text
    /// (the `.srv` text rosbag2 stores for service event topics is read too) or `ros2idl`
    /// (see [`Registry::parse_concatenated_idl`]).
    pub fn new(type_name: &str, definition: &MessageDefinition) -> Result<Self, CodecError> {
        let refuse = |reason: String| CodecError::Definition {
            type_name: type_name.to_string(),
            line: 0,
            reason,
        };
        if definition.encoded_message_definition.is_empty() {
            return Err(refuse("no definition stored or known".into()));
        }
        let text = &definition.encoded_message_definition;
        let mut registry = Registry::new();
        match definition.encoding.as_str() {
            "ros2msg" => {
                // rosbag2 stores a service event topic's definition as the `.srv` text.
                let srv = crate::type_hash::service_definition_as_messages(type_name, text);
                registry.parse_concatenated(
                    type_name,
                    srv.as_deref().unwrap_or(text),
                    Dialect::Ros2,
                )?;
            }
            "ros2idl" => registry.parse_concatenated_idl(type_name, text)?,
            other => {
                return Err(refuse(format!(
                    "encoding '{other}' is neither ros2msg nor ros2idl, which are all this \
                     decoder reads"
                )))
            }
        }
        let index = registry
            .index_of(type_name)
            .ok_or_else(|| CodecError::Missing(type_name.to_string()))?;
        Ok(Self { registry, index })
    }

    /// Decodes one payload (with its CDR encapsulation header).
    pub fn decode(&self, data: &[u8]) -> Result<(Value, CdrHeader), CodecError> {
        decode_cdr_at(&self.registry, self.index, data)
    }

    /// A view of a decoded message of this type, to read fields by name.
    pub fn view<'a>(&'a self, value: &'a Value) -> MessageView<'a> {
        MessageView::new(&self.registry, self.index, value)
    }
}
