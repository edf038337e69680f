//! The bag model: topics and serialized messages.

use std::sync::Arc;

use bytes::Bytes;

use crate::qos::QosProfile;

/// Everything a bag records about one topic.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopicMetadata {
    /// Fully qualified topic name, e.g. `/chatter`.
    pub name: String,
    /// Message type, e.g. `std_msgs/msg/String`.
    pub type_name: String,
    /// Serialization format of the payloads, `cdr` for ROS 2.
    pub serialization_format: String,
    /// QoS profiles offered by the publishers seen while recording.
    pub offered_qos_profiles: Vec<QosProfile>,
    /// `RIHS01_...` type description hash, empty when unknown.
    pub type_description_hash: String,
}

impl TopicMetadata {
    /// True when the topic's publishers all offered transient-local durability (latched
    /// state such as `/tf_static`): its latest message describes the present, so cuts keep it.
    pub fn is_transient_local(&self) -> bool {
        !self.offered_qos_profiles.is_empty()
            && self
                .offered_qos_profiles
                .iter()
                .all(|q| q.durability == crate::qos::Durability::TransientLocal)
    }

    /// A CDR topic with no recorded QoS and no type hash.
    pub fn new(name: impl Into<String>, type_name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            type_name: type_name.into(),
            serialization_format: "cdr".into(),
            ..Self::default()
        }
    }
}

/// One recorded message: its topic, timestamps and CDR bytes.
///
/// The payload is a [`Bytes`] so that readers can hand out slices of a memory-mapped file or a
/// decompressed chunk without copying, and writers and caches can share it.
#[derive(Debug, Clone, PartialEq)]
pub struct SerializedMessage {
    /// Topic name, shared between all messages of the topic.
    pub topic: Arc<str>,
    /// Time the message was received by the recorder, in ns (ROS time).
    pub recv_timestamp: i64,
    /// Time the message was sent by its publisher, in ns; equals `recv_timestamp` when unknown.
    pub send_timestamp: i64,
    /// Serialized payload including the 4-byte CDR encapsulation header.
    pub data: Bytes,
}

impl SerializedMessage {
    /// A message whose send time is unknown (set to the receive time).
    pub fn new(topic: Arc<str>, recv_timestamp: i64, data: impl Into<Bytes>) -> Self {
        Self {
            topic,
            recv_timestamp,
            send_timestamp: recv_timestamp,
            data: data.into(),
        }
    }
}
