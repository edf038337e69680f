//! The CDR and ROS 1 decoders over a fixed set of definitions (the first byte picks one); what
//! decodes is encoded again, and that encoding must decode and encode to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_codec::msg::{decode_ros1, encode_cdr, Dialect, Registry, TopicDecoder};
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_fuzz::DEFINITIONS;

fn definition(text: &str) -> MessageDefinition {
    MessageDefinition {
        topic_type: String::new(),
        encoding: "ros2msg".into(),
        encoded_message_definition: text.into(),
        type_description_hash: String::new(),
    }
}

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Some((&pick, payload)) = data.split_first() else {
        return;
    };
    let (type_name, text) = DEFINITIONS[pick as usize % DEFINITIONS.len()];
    let decoder = TopicDecoder::new(type_name, &definition(text)).expect("valid definition");
    if let Ok((value, header)) = decoder.decode(payload) {
        // Values are compared through their encoding: a NaN is not equal to itself.
        let encode = |value| encode_cdr(&decoder.registry, type_name, value, header);
        let bytes = encode(&value).expect("a decoded value encodes");
        let (again, _) = decoder.decode(&bytes).expect("an encoded value decodes");
        assert_eq!(encode(&again).expect("encodes again"), bytes);
    }
    let mut ros1 = Registry::new();
    if ros1
        .parse_concatenated(type_name, text, Dialect::Ros1)
        .is_ok()
    {
        let _ = decode_ros1(&ros1, type_name, payload);
    }
});
