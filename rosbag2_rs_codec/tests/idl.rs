//! `ros2idl` against rosidl: every `.idl` of a share directory (the committed golden set in
//! `tests/data/idl`, or a whole ROS 2 installation's `share` when `ROS2_SHARE` names it) parses
//! into the types its `.msg` / `.srv` / `.action` parses into, and hashes (RIHS01, from the
//! definition rosbag2 would store) to what rosidl's `.json` type description records.

mod idl_share;

use std::path::Path;

use rosbag2_rs_codec::msg::{decode_cdr, Dialect, Registry, TopicDecoder, Value};
use rosbag2_rs_codec::{type_hash, MessageDefinition};

use idl_share::{check_share, rosbag2_idl_definition, Share};

fn golden() -> Share {
    Share::new(vec![
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/idl")
    ])
}

#[test]
fn golden_idl_files_match_their_msg_and_rosidl_hashes() {
    let report = check_share(&golden());
    assert!(report.failures.is_empty(), "{:#?}", report.failures);
    assert_eq!(report.files, 25, "{report:?}");
    // Every file but the hand-written one has its .msg, .srv or .action.
    assert_eq!(report.compared_with_source, 24, "{report:?}");
    // One per message, three per service (request, response, event), three per action (goal,
    // result, feedback).
    assert_eq!(report.hashes_checked, 31, "{report:?}");
}

/// On demand: `ROS2_SHARE=/opt/ros/jazzy/share cargo test -p rosbag2_rs_codec --test idl -- \
/// --nocapture whole` (several directories separated by `:`).
#[test]
fn whole_share_when_asked() {
    let Ok(dirs) = std::env::var("ROS2_SHARE") else {
        eprintln!("ROS2_SHARE not set: skipped");
        return;
    };
    let share = Share::new(std::env::split_paths(&dirs).collect());
    let report = check_share(&share);
    eprintln!(
        "{} of {} .idl files matched ({} compared with their .msg/.srv/.action, {} type hashes \
         checked against rosidl's .json)",
        report.files - report.failures.len(),
        report.files,
        report.compared_with_source,
        report.hashes_checked
    );
    assert!(report.failures.is_empty(), "{:#?}", report.failures);
    assert!(report.files > 0, "no .idl files under {dirs}");
}

fn idl(text: String) -> MessageDefinition {
    MessageDefinition {
        topic_type: String::new(),
        encoding: "ros2idl".into(),
        encoded_message_definition: text,
        type_description_hash: String::new(),
    }
}

/// A `std_msgs/msg/Header` payload decoded through the definition rosbag2 stores when only
/// `.idl` files exist: the Header's IDL, then `builtin_interfaces/msg/Time`'s.
#[test]
fn concatenated_idl_decodes_a_type_with_a_dependency() {
    let text = rosbag2_idl_definition(&golden(), "std_msgs/msg/Header").unwrap();
    let sep = "=".repeat(80);
    assert!(text.starts_with(&format!(
        "{sep}\nIDL: std_msgs/msg/Header\n// generated from"
    )));
    assert!(text.contains(&format!(
        "}};\n\n{sep}\nIDL: builtin_interfaces/msg/Time\n// generated from"
    )));
    let decoder = TopicDecoder::new("std_msgs/msg/Header", &idl(text.clone())).unwrap();
    let mut cdr = vec![0, 1, 0, 0];
    cdr.extend(7i32.to_le_bytes());
    cdr.extend(500u32.to_le_bytes());
    cdr.extend(4u32.to_le_bytes());
    cdr.extend(b"map\0");
    let (value, _) = decoder.decode(&cdr).unwrap();
    let view = decoder.view(&value);
    assert_eq!(view.message("stamp").unwrap().number("sec"), Some(7.0));
    assert_eq!(
        view.message("stamp").unwrap().number("nanosec"),
        Some(500.0)
    );
    assert_eq!(view.text("frame_id").as_deref(), Some("map"));
    // The same bytes through the `.msg` definition.
    let mut reg = Registry::new();
    reg.parse_concatenated(
        "std_msgs/msg/Header",
        &format!(
            "builtin_interfaces/Time stamp\nstring frame_id\n{sep}\nMSG: builtin_interfaces/Time\n\
             int32 sec\nuint32 nanosec\n"
        ),
        Dialect::Ros2,
    )
    .unwrap();
    let (from_msg, _) = decode_cdr(&reg, "std_msgs/msg/Header", &cdr).unwrap();
    assert_eq!(value, from_msg);
    // And the hash rosidl records.
    assert_eq!(
        type_hash::rihs01("std_msgs/msg/Header", &idl(text)).unwrap(),
        "RIHS01_f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01"
    );
}

/// A service event topic recorded where the service's dependency exists only as `.idl`:
/// rosbag2 stores `SRV:` with the `.srv` text, an empty `MSG:` section for the dependency and
/// then its `IDL:` section (the layout of rosbag2's `can_find_srv_deps_in_idl` test).
#[test]
fn a_service_definition_with_idl_dependencies_decodes_its_events() {
    let sep = "=".repeat(80);
    let text = format!(
        "{sep}\nSRV: rosbag2_test_msgdefs/srv/ComplexSrvIdl\n\
         rosbag2_test_msgdefs/BasicIdl req\n---\nrosbag2_test_msgdefs/BasicIdl resp\n\n\
         {sep}\nMSG: rosbag2_test_msgdefs/BasicIdl\n\n\
         {sep}\nIDL: rosbag2_test_msgdefs/BasicIdl\n\
         module rosbag2_test_msgdefs {{\n  module msg {{\n    struct BasicIdl {{\n        float x;\n    }};\n  }};\n}};\n"
    );
    let event = "rosbag2_test_msgdefs/srv/ComplexSrvIdl_Event";
    let decoder = TopicDecoder::new(event, &idl(text.clone())).unwrap();
    let names: Vec<&str> = decoder
        .registry
        .types()
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert!(names.contains(&"rosbag2_test_msgdefs/srv/ComplexSrvIdl_Request"));
    // An event with its info, one request, no response.
    let mut cdr = vec![0, 1, 0, 0];
    cdr.push(0); // info.event_type: REQUEST_SENT
    cdr.extend([0; 3]);
    cdr.extend(1i32.to_le_bytes()); // info.stamp.sec
    cdr.extend(2u32.to_le_bytes()); // info.stamp.nanosec
    cdr.extend([9; 16]); // info.client_gid
    cdr.extend([0; 4]); // alignment of the int64
    cdr.extend(5i64.to_le_bytes()); // info.sequence_number
    cdr.extend(1u32.to_le_bytes()); // request: one element
    cdr.extend(1.5f32.to_le_bytes()); // request[0].req.x
    cdr.extend(0u32.to_le_bytes()); // response: none
    let (value, _) = decoder.decode(&cdr).unwrap();
    let view = decoder.view(&value);
    let request = view.messages("request");
    assert_eq!(request.len(), 1);
    assert_eq!(request[0].message("req").unwrap().number("x"), Some(1.5));
    assert_eq!(
        view.message("info").unwrap().number("sequence_number"),
        Some(5.0)
    );
    // The request's hash is the one of the same service written as .msg.
    let as_msg = MessageDefinition {
        encoding: "ros2msg".into(),
        encoded_message_definition: format!(
            "rosbag2_test_msgdefs/BasicIdl req\n{sep}\nMSG: rosbag2_test_msgdefs/BasicIdl\nfloat32 x\n"
        ),
        ..idl(String::new())
    };
    let request_type = "rosbag2_test_msgdefs/srv/ComplexSrvIdl_Request";
    assert_eq!(
        type_hash::rihs01(request_type, &idl(text)).unwrap(),
        type_hash::rihs01(request_type, &as_msg).unwrap()
    );
}

/// rosbag2's `can_find_idl_deps` and `can_resolve_msg_with_idl_deps` texts, verbatim.
#[test]
fn rosbag2_idl_layouts_parse() {
    let sep = "=".repeat(80);
    let basic = "module rosbag2_test_msgdefs {\n  module msg {\n    struct BasicIdl {\n        float x;\n    };\n  };\n};\n";
    for (root, own) in [
        (
            "rosbag2_test_msgdefs/msg/ComplexIdl",
            "#include \"rosbag2_test_msgdefs/msg/BasicIdl.idl\"\n\nmodule rosbag2_test_msgdefs {\n  module msg {\n    struct ComplexIdl {\n      rosbag2_test_msgdefs::msg::BasicIdl a;\n    };\n  };\n};\n",
        ),
        (
            "rosbag2_test_msgdefs/msg/ComplexMsgDependsOnIdl",
            "// generated from rosidl_adapter/resource/msg.idl.em\n// with input from rosbag2_test_msgdefs/msg/ComplexMsgDependsOnIdl.msg\n// generated code does not contain a copyright notice\n\n#include \"rosbag2_test_msgdefs/msg/BasicIdl.idl\"\n\nmodule rosbag2_test_msgdefs {\n  module msg {\n    struct ComplexMsgDependsOnIdl {\n      rosbag2_test_msgdefs::msg::BasicIdl a;\n    };\n  };\n};\n",
        ),
    ] {
        let text = format!(
            "{sep}\nIDL: {root}\n{own}\n{sep}\nIDL: rosbag2_test_msgdefs/msg/BasicIdl\n{basic}"
        );
        let mut reg = Registry::new();
        reg.parse_concatenated_idl(root, &text).unwrap();
        let ty = reg.get(root).unwrap();
        assert_eq!(ty.fields[0].name, "a");
        let mut cdr = vec![0, 1, 0, 0];
        cdr.extend(2.5f32.to_le_bytes());
        let (value, _) = decode_cdr(&reg, root, &cdr).unwrap();
        assert_eq!(
            value,
            Value::Struct(vec![Value::Struct(vec![Value::Float32(2.5)])])
        );
    }
}
