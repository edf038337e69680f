//! What other nodes on the graph send, as it arrives: a `ros_discovery_info` sample (DDS), and
//! rmw_zenoh's sample attachments, liveliness tokens, the QoS strings in them and the type names
//! in key expressions. The first byte picks the parser. What parses must come out of its writer
//! in a form that parses and writes back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_dds_common::discovery_info::ParticipantEntities;
use rosbag2_rs_zenoh::{attachment::Attachment, keys, liveliness::Entity, qos};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    match pick % 5 {
        0 => {
            if let Ok(info) = ParticipantEntities::decode(bytes) {
                assert_eq!(ParticipantEntities::decode(&info.encode()), Ok(info));
            }
        }
        1 => {
            if let Ok(attachment) = Attachment::decode(bytes) {
                assert_eq!(Attachment::decode(&attachment.encode()), Ok(attachment));
                assert_eq!(
                    Attachment::decode(&attachment.encode_jazzy()),
                    Ok(attachment)
                );
            }
        }
        _ => {
            let Ok(text) = std::str::from_utf8(bytes) else {
                return;
            };
            match pick % 5 {
                2 => {
                    // The token written for what parsed is rmw_zenoh's canonical form of it
                    // (a QoS value it never writes, such as "system default", is written as
                    // what rmw_zenoh adapts it to): it must parse and write back unchanged.
                    if let Ok(entity) = Entity::parse(text) {
                        let token = entity.token();
                        let again = Entity::parse(&token).expect("a written token parses");
                        assert_eq!(again.token(), token);
                    }
                }
                3 => {
                    if let Ok(profile) = qos::from_token_string(text) {
                        let written = qos::to_token_string(&profile);
                        let again = qos::from_token_string(&written).expect("written QoS parses");
                        assert_eq!(qos::to_token_string(&again), written);
                    }
                }
                _ => {
                    let _ = keys::ros_type(text);
                    let _ = keys::is_rihs01(text);
                    if !text.contains('%') {
                        // ROS names have no `%`: the mangling is reversible on them.
                        assert_eq!(keys::demangle(&keys::mangle(text)), text);
                    }
                }
            }
        }
    }
});
