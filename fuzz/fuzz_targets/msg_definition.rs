//! Message definitions: `.msg` text (ROS 2 and ROS 1 rules, concatenated with dependencies),
//! `.srv` text as rosbag2 stores it for service events, and the RIHS01 type hash of what
//! parses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_codec::msg::{Dialect, Registry, TopicDecoder};
use rosbag2_rs_codec::{type_hash, MessageDefinition};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for type_name in ["fuzz_msgs/msg/Root", "fuzz_msgs/srv/Call_Event"] {
        let definition = MessageDefinition {
            topic_type: type_name.into(),
            encoding: "ros2msg".into(),
            encoded_message_definition: text.into(),
            type_description_hash: String::new(),
        };
        let _ = TopicDecoder::new(type_name, &definition);
        let _ = type_hash::rihs01(type_name, &definition);
    }
    let mut reg = Registry::new();
    let _ = reg.parse_concatenated("fuzz_msgs/Root", text, Dialect::Ros1);
});
