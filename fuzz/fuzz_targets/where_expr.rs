//! `--where` expressions: compiled against a message type, then evaluated on a default message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_codec::msg::TopicDecoder;
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_fuzz::DEFINITIONS;
use rosbag2_rs_tools::expr::{split_clause, Expr};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = split_clause(text);
    let (type_name, definition) = DEFINITIONS[1];
    let decoder = TopicDecoder::new(
        type_name,
        &MessageDefinition {
            topic_type: type_name.into(),
            encoding: "ros2msg".into(),
            encoded_message_definition: definition.into(),
            type_description_hash: String::new(),
        },
    )
    .expect("valid definition");
    if let Ok(expr) = Expr::compile(text, &decoder) {
        let value = decoder.registry.default_value(decoder.index);
        let _ = expr.matches(&value);
    }
});
