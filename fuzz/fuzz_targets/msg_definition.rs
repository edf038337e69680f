//! Message definitions: `.msg` text (ROS 2 and ROS 1 rules, concatenated with dependencies),
//! `.srv` text as rosbag2 stores it for service events, `.idl` text (alone, and as `ros2idl`
//! definitions: rosbag2's `IDL:`/`MSG:`/`SRV:` sections), and the RIHS01 type hash of what
//! parses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_codec::msg::idl::{idl_includes, parse_idl};
use rosbag2_rs_codec::msg::{Dialect, Registry, TopicDecoder};
use rosbag2_rs_codec::{type_hash, MessageDefinition};

const SEPARATOR: &str =
    "================================================================================";

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for type_name in ["fuzz_msgs/msg/Root", "fuzz_msgs/srv/Call_Event"] {
        for encoding in ["ros2msg", "ros2idl"] {
            let definition = MessageDefinition {
                topic_type: type_name.into(),
                encoding: encoding.into(),
                encoded_message_definition: text.into(),
                type_description_hash: String::new(),
            };
            let _ = TopicDecoder::new(type_name, &definition);
            let _ = type_hash::rihs01(type_name, &definition);
        }
    }
    let mut reg = Registry::new();
    let _ = reg.parse_concatenated("fuzz_msgs/Root", text, Dialect::Ros1);
    // One `.idl` file, and the same as the only section of a `ros2idl` definition.
    let _ = parse_idl("fuzz_msgs/msg/Root", text);
    let _ = idl_includes(text);
    let mut reg = Registry::new();
    let _ = reg.parse_concatenated_idl(
        "fuzz_msgs/msg/Root",
        &format!("{SEPARATOR}\nIDL: fuzz_msgs/msg/Root\n{text}"),
    );
});
