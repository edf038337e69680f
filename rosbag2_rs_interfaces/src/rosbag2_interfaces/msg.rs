//! `rosbag2_interfaces/msg`: events published by the recorder and the player.

use serde::{Deserialize, Serialize};

/// `rosbag2_interfaces/msg/ReadSplitEvent`: the player moved on to the next
/// file of a bag.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReadSplitEvent {
    /// The full path of the file that was finished and closed.
    pub closed_file: String,
    /// The full path of the new file that was opened to continue playback.
    pub opened_file: String,
    /// The fully qualified node name of the event sender.
    pub node_name: String,
}

/// `rosbag2_interfaces/msg/WriteSplitEvent`: the recorder split the bag and
/// continues in a new file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WriteSplitEvent {
    /// The full path of the file that was finished and closed.
    pub closed_file: String,
    /// The full path of the new file that was created to continue recording.
    pub opened_file: String,
    /// The fully qualified node name of the event sender.
    pub node_name: String,
}

impl_message!(ReadSplitEvent, "rosbag2_interfaces/msg/ReadSplitEvent");
impl_message!(WriteSplitEvent, "rosbag2_interfaces/msg/WriteSplitEvent");

/// `rosbag2_interfaces/msg/MessagesLostEventTopicStat`: one topic's losses since the last
/// [`MessagesLostEvent`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MessagesLostEventTopicStat {
    /// The topic.
    pub topic_name: String,
    /// Messages lost before reaching the recorder (the middleware's count).
    pub messages_lost_in_transport: u64,
    /// Messages the recorder received but dropped (a full cache, a failed writer).
    pub messages_lost_in_recorder: u64,
}

/// `rosbag2_interfaces/msg/MessagesLostEvent`: the recorder lost messages (rosbag2 Lyrical,
/// on `events/rosbag2_messages_lost`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MessagesLostEvent {
    /// The fully qualified node name of the event sender.
    pub node_name: String,
    /// The topics that lost messages since the last event, with their counts.
    pub messages_lost_statistics: Vec<MessagesLostEventTopicStat>,
}

impl_message!(
    MessagesLostEventTopicStat,
    "rosbag2_interfaces/msg/MessagesLostEventTopicStat"
);
impl_message!(
    MessagesLostEvent,
    "rosbag2_interfaces/msg/MessagesLostEvent"
);
