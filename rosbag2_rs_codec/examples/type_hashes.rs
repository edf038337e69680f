//! Prints the RIHS01 type hash (REP-2011) of message types, from `AMENT_PREFIX_PATH` or the
//! bundled definitions, one JSON object a line: `{"type": …, "hash": …, "definition": …}` (the
//! full `ros2msg` text hashed), or `{"type": …, "error": …}`.
//!
//! `cargo run --example type_hashes -- [--bundled] [TYPE...]` (`--bundled`: every bundled type,
//! services as their `_Request`, `_Response` and `_Event` messages).

use rosbag2_rs_codec::MessageDefinitionCache;

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() {
    let mut types: Vec<String> = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--bundled" {
            types.extend(MessageDefinitionCache::bundled_types());
        } else {
            types.push(arg);
        }
    }
    let mut cache = MessageDefinitionCache::new();
    let mut failed = false;
    for name in types {
        match cache.type_hash(&name) {
            Ok(hash) => {
                let definition = cache.definition(&name).encoded_message_definition;
                println!(
                    "{{\"type\": {}, \"hash\": {}, \"definition\": {}}}",
                    json_string(&name),
                    json_string(&hash),
                    json_string(&definition)
                );
            }
            Err(e) => {
                failed = true;
                println!(
                    "{{\"type\": {}, \"error\": {}}}",
                    json_string(&name),
                    json_string(&e.to_string())
                );
            }
        }
    }
    std::process::exit(i32::from(failed));
}
