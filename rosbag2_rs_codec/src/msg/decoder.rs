//! A topic's decoder: the registry built from its type's stored definition, ready to decode its
//! CDR payloads (shared by `cat`, `doctor`, `convert --where` and `export`).

use super::{decode_cdr_at, CdrHeader, CodecError, Dialect, MessageView, Registry, Value};
use crate::MessageDefinition;

/// Decodes the CDR payloads of one message type from its `ros2msg` definition.
#[derive(Debug, Clone)]
pub struct TopicDecoder {
    /// The parsed definition with its dependencies.
    pub registry: Registry,
    /// The index of the topic's type in [`TopicDecoder::registry`].
    pub index: usize,
}

impl TopicDecoder {
    /// Parses `definition` (the concatenated `ros2msg` text rosbag2 stores) of `type_name`; the
    /// `.srv` text rosbag2 stores for service event topics is read too.
    pub fn new(type_name: &str, definition: &MessageDefinition) -> Result<Self, CodecError> {
        if definition.encoding != "ros2msg" || definition.encoded_message_definition.is_empty() {
            return Err(CodecError::Definition {
                type_name: type_name.to_string(),
                line: 0,
                reason: if definition.encoded_message_definition.is_empty() {
                    "no definition stored or known".into()
                } else {
                    format!(
                        "encoding '{}' is not ros2msg, which is all this decoder reads",
                        definition.encoding
                    )
                },
            });
        }
        // rosbag2 stores a service event topic's definition as the `.srv` text.
        let text = crate::type_hash::service_definition_as_messages(
            type_name,
            &definition.encoded_message_definition,
        )
        .unwrap_or_else(|| definition.encoded_message_definition.clone());
        let mut registry = Registry::new();
        registry.parse_concatenated(type_name, &text, Dialect::Ros2)?;
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
