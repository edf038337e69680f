//! A message type's definition as a bag stores it.

/// The definition of a message type as stored in a bag (MCAP schema, SQLite `message_definitions`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageDefinition {
    /// Message type, e.g. `std_msgs/msg/String`.
    pub topic_type: String,
    /// `ros2msg`, `ros2idl`, or empty when the definition is unknown.
    pub encoding: String,
    /// The full definition text, dependencies appended after `====` separators.
    pub encoded_message_definition: String,
    /// `RIHS01_...` type description hash, empty when unknown.
    pub type_description_hash: String,
}
