//! Decoding with the definition taken from the input: a message definition and a payload
//! fuzzed together (`<dialect byte><definition text>\0<payload>`), as a bag's stored
//! definition and its messages are. Even dialect bytes: a `ros2msg` definition, the payload
//! decoded as CDR (what decodes re-encodes to bytes that decode and re-encode identically) and
//! converted to ROS 1 (what converts decodes against the ROS 1 definition the converter gives).
//! Odd: a ROS 1 definition, the payload decoded as ROS 1 and converted to CDR (what converts
//! decodes against the ROS 2 definition the converter gives).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_codec::msg::transcode::{CdrToRos1, Ros1ToCdr};
use rosbag2_rs_codec::msg::{decode_cdr, decode_ros1, encode_cdr, Dialect, Registry, TopicDecoder};
use rosbag2_rs_codec::MessageDefinition;

/// The type the definition's first section defines (dependencies follow `MSG:` lines).
const ROS2_TYPE: &str = "fuzz_msgs/msg/Top";
/// The same, as ROS 1 names it.
const ROS1_TYPE: &str = "fuzz_msgs/Top";

fn definition(text: &str) -> MessageDefinition {
    MessageDefinition {
        topic_type: String::new(),
        encoding: "ros2msg".into(),
        encoded_message_definition: text.into(),
        type_description_hash: String::new(),
    }
}

fn ros2(text: &str, payload: &[u8]) {
    if let Ok(decoder) = TopicDecoder::new(ROS2_TYPE, &definition(text)) {
        if let Ok((value, header)) = decoder.decode(payload) {
            // Values are compared through their encoding: a NaN is not equal to itself.
            let encode = |value| encode_cdr(&decoder.registry, ROS2_TYPE, value, header);
            let bytes = encode(&value).expect("a decoded value encodes");
            let (again, _) = decoder.decode(&bytes).expect("an encoded value decodes");
            assert_eq!(encode(&again).expect("encodes again"), bytes);
        }
    }
    if let Ok(converter) = CdrToRos1::new(ROS2_TYPE, text) {
        if let Ok(ros1) = converter.convert(payload) {
            let mut registry = Registry::new();
            registry
                .parse_concatenated(
                    &converter.ros1_type,
                    &converter.ros1_definition,
                    Dialect::Ros1,
                )
                .expect("the ROS 1 definition the converter gives parses");
            decode_ros1(&registry, &converter.ros1_type, &ros1)
                .expect("what converts to ROS 1 decodes");
        }
    }
}

fn ros1(text: &str, payload: &[u8]) {
    let mut registry = Registry::new();
    if registry
        .parse_concatenated(ROS1_TYPE, text, Dialect::Ros1)
        .is_ok()
    {
        let _ = decode_ros1(&registry, ROS1_TYPE, payload);
    }
    if let Ok(converter) = Ros1ToCdr::new(ROS1_TYPE, text) {
        if let Ok(cdr) = converter.convert(payload) {
            // Parsed as a registry, not through `TopicDecoder`: an empty message's definition
            // is empty, which a bag's reader takes for "no definition stored" (rosbag2 stores
            // an empty text for both).
            let mut registry = Registry::new();
            registry
                .parse_concatenated(
                    &converter.ros2_type,
                    &converter.ros2_definition,
                    Dialect::Ros2,
                )
                .expect("the ROS 2 definition the converter gives parses");
            decode_cdr(&registry, &converter.ros2_type, &cdr)
                .expect("what converts to CDR decodes");
        }
    }
}

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Some((&dialect, rest)) = data.split_first() else {
        return;
    };
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let Ok(text) = std::str::from_utf8(&rest[..end]) else {
        return;
    };
    let payload = rest.get(end + 1..).unwrap_or_default();
    match dialect % 2 {
        0 => ros2(text, payload),
        _ => ros1(text, payload),
    }
});
