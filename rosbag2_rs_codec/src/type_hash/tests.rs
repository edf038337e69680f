//! Golden values: ROS 2 Jazzy's generated type hashes (rosidl_generator_type_description output
//! installed by the Jazzy wheels, also in `tests/data/jazzy_type_hashes.txt`) and hashes that
//! rosbag2 recorded in its own test bags.

use super::*;

fn msg(text: &str) -> MessageDefinition {
    MessageDefinition {
        topic_type: String::new(),
        encoding: "ros2msg".into(),
        encoded_message_definition: text.into(),
        type_description_hash: String::new(),
    }
}

const STRING_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

#[test]
fn string_hashes_its_canonical_json() {
    let description =
        TypeDescription::from_definition("std_msgs/msg/String", &msg("string data\n")).unwrap();
    assert_eq!(
        description.hashable_json(),
        "{\"type_description\": {\"type_name\": \"std_msgs/msg/String\", \"fields\": \
         [{\"name\": \"data\", \"type\": {\"type_id\": 17, \"capacity\": 0, \
         \"string_capacity\": 0, \"nested_type_name\": \"\"}}]}, \
         \"referenced_type_descriptions\": []}"
    );
    assert_eq!(description.rihs01(), STRING_HASH);
    // Both spellings of the name, comments and blank lines.
    let commented = msg("# a comment\n\nstring data # the text\n");
    assert_eq!(rihs01("std_msgs/String", &commented).unwrap(), STRING_HASH);
}

#[test]
fn constants_and_default_values_are_not_hashed() {
    let with_extras = msg("string FOO=\"bar\"\nint32 LIMIT = 3\nstring data \"hello\"\n");
    assert_eq!(
        rihs01("std_msgs/msg/String", &with_extras).unwrap(),
        STRING_HASH
    );
    // But a field's name, type and order are.
    for changed in [
        "string text\n",
        "wstring data\n",
        "string<=5 data\n",
        "string[] data\n",
    ] {
        assert_ne!(
            rihs01("std_msgs/msg/String", &msg(changed)).unwrap(),
            STRING_HASH,
            "{changed}"
        );
    }
}

#[test]
fn char_is_uint8_and_empty_messages_get_rosidl_member() {
    // std_msgs/msg/Char.json and Empty.json of ROS 2 Jazzy.
    assert_eq!(
        rihs01("std_msgs/msg/Char", &msg("char data\n")).unwrap(),
        "RIHS01_3ad2d04dd29ba19d04b16659afa3ccaedd691914b02a64e82e252f2fa6a586a9"
    );
    assert_eq!(
        rihs01("std_msgs/msg/Char", &msg("uint8 data\n")).unwrap(),
        "RIHS01_3ad2d04dd29ba19d04b16659afa3ccaedd691914b02a64e82e252f2fa6a586a9"
    );
    let empty = TypeDescription::from_definition("std_msgs/msg/Empty", &msg("")).unwrap();
    assert_eq!(
        empty.type_description.fields[0].name,
        "structure_needs_at_least_one_member"
    );
    assert_eq!(
        empty.rihs01(),
        "RIHS01_20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312"
    );
}

#[test]
fn field_type_ids_and_capacities() {
    let text = "bool a\nbyte b\nfloat32[3] c\nint64[<=4] d\nstring<=10[] e\nwstring<=2 f\n\
                pkg/Inner[2] g\nInner[] h\n\
                ===\nMSG: pkg/Inner\nfloat64 x\n";
    let d = TypeDescription::from_definition("pkg/msg/Outer", &msg(text)).unwrap();
    let ids: Vec<(u8, u64, u64, &str)> = d
        .type_description
        .fields
        .iter()
        .map(|f| {
            let t = &f.field_type;
            (
                t.type_id,
                t.capacity,
                t.string_capacity,
                t.nested_type_name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            (15, 0, 0, ""),
            (16, 0, 0, ""),
            (58, 3, 0, ""),
            (104, 4, 0, ""),
            (165, 0, 10, ""),
            (22, 0, 2, ""),
            (49, 2, 0, "pkg/msg/Inner"),
            (145, 0, 0, "pkg/msg/Inner"),
        ]
    );
    assert_eq!(
        d.type_names().collect::<Vec<_>>(),
        ["pkg/msg/Outer", "pkg/msg/Inner"]
    );
}

#[test]
fn referenced_types_are_sorted_and_listed_once() {
    // geometry_msgs/msg/PoseStamped of ROS 2 Jazzy.
    let text = "std_msgs/Header header\nPose pose\n\
        ===\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\
        ===\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n\
        ===\nMSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n\
        ===\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n\
        ===\nMSG: geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n";
    let d = TypeDescription::from_definition("geometry_msgs/msg/PoseStamped", &msg(text)).unwrap();
    assert_eq!(
        d.type_names().collect::<Vec<_>>(),
        [
            "geometry_msgs/msg/PoseStamped",
            "builtin_interfaces/msg/Time",
            "geometry_msgs/msg/Point",
            "geometry_msgs/msg/Pose",
            "geometry_msgs/msg/Quaternion",
            "std_msgs/msg/Header",
        ]
    );
    assert_eq!(
        d.rihs01(),
        "RIHS01_10f3786d7d40fd2b54367835614bff85d4ad3b5dab62bf8bca0cc232d73b4cd8"
    );
}

#[test]
fn service_messages_keep_their_srv_names() {
    // std_srvs/srv/Trigger_Event of ROS 2 Jazzy, from the messages our cache describes.
    let mut cache = crate::MessageDefinitionCache::with_prefixes(Vec::new());
    let event = cache.definition("std_srvs/srv/Trigger_Event");
    let d = TypeDescription::from_definition("std_srvs/srv/Trigger_Event", &event).unwrap();
    assert_eq!(
        d.type_names().collect::<Vec<_>>(),
        [
            "std_srvs/srv/Trigger_Event",
            "builtin_interfaces/msg/Time",
            "service_msgs/msg/ServiceEventInfo",
            "std_srvs/srv/Trigger_Request",
            "std_srvs/srv/Trigger_Response",
        ]
    );
    assert_eq!(
        d.rihs01(),
        "RIHS01_ec4a1d26b0575e61906890342aba9523a2360e9845857c5590fa6e23bc39e1c2"
    );
    assert_eq!(
        cache.type_hash("std_srvs/srv/Trigger_Event"),
        Ok(d.rihs01())
    );
}

#[test]
fn rosbag2_srv_text_of_service_events() {
    // rosbag2 stores the `.srv` text for `_service_event` topics; this hash is what its test bag
    // `topics_and_services.mcap` recorded for example_interfaces/srv/AddTwoInts_Event.
    let srv = msg("int64 a\nint64 b\n---\nint64 sum\n");
    assert_eq!(
        rihs01("example_interfaces/srv/AddTwoInts_Event", &srv).unwrap(),
        "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8"
    );
    let request = rihs01("example_interfaces/srv/AddTwoInts_Request", &srv).unwrap();
    assert_eq!(
        request,
        rihs01(
            "example_interfaces/srv/AddTwoInts_Request",
            &msg("int64 a\nint64 b\n")
        )
        .unwrap()
    );
    assert_ne!(
        request,
        rihs01("example_interfaces/msg/AddTwoInts_Request", &srv).unwrap_or_default()
    );
}

#[test]
fn bad_input_is_a_typed_error() {
    let other = MessageDefinition {
        encoding: "ros2fancy".into(),
        ..msg("module x {};")
    };
    assert!(matches!(
        rihs01("pkg/msg/T", &other),
        Err(TypeHashError::UnsupportedEncoding { encoding, .. }) if encoding == "ros2fancy"
    ));
    // IDL that declares no `pkg/msg/T`.
    let idl = MessageDefinition {
        encoding: "ros2idl".into(),
        ..msg("module x {};")
    };
    assert_eq!(
        rihs01("pkg/msg/T", &idl),
        Err(TypeHashError::NoDefinition("pkg/msg/T".into()))
    );
    assert_eq!(
        rihs01("pkg/msg/T", &MessageDefinition::default()),
        Err(TypeHashError::NoDefinition("pkg/msg/T".into()))
    );
    assert_eq!(
        rihs01("pkg/msg/T", &msg("Missing m\n")),
        Err(TypeHashError::UnknownType {
            type_name: "pkg/msg/T".into(),
            missing: "pkg/Missing".into()
        })
    );
    assert!(matches!(
        rihs01("pkg/msg/T", &msg("time stamp\n")),
        Err(TypeHashError::UnsupportedField { field, .. }) if field == "stamp"
    ));
    assert!(matches!(
        rihs01("pkg/msg/T", &msg("int32[x bad\n")),
        Err(TypeHashError::Definition { .. })
    ));
    for name in ["", "pkg", "a/b/c/d", "pkg/idl/T", "pkg/msg/", "1pkg/T"] {
        assert_eq!(
            rihs01(name, &msg("int32 x\n")),
            Err(TypeHashError::InvalidTypeName(name.into())),
            "{name}"
        );
    }
    let mut cache = crate::MessageDefinitionCache::with_prefixes(Vec::new());
    assert_eq!(
        cache.type_hash("nope_msgs/msg/Nothing"),
        Err(TypeHashError::NoDefinition("nope_msgs/msg/Nothing".into()))
    );
}

#[test]
fn announced_hashes_are_normalised() {
    assert_eq!(announced(Some(STRING_HASH)), Some(STRING_HASH));
    assert_eq!(announced(Some("TypeHashNotSupported")), None);
    assert_eq!(announced(Some("RIHS01_abc")), None);
    assert_eq!(announced(Some(&STRING_HASH.to_uppercase())), None);
    assert_eq!(announced(None), None);
    assert!(is_rihs01(STRING_HASH));
}

#[test]
fn json_strings_escape_as_python_does() {
    let mut out = String::new();
    write_json_string(&mut out, "a\"b\\c\n\u{1}é😀\u{7f}");
    assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001\\u00e9\\ud83d\\ude00\u{7f}\"");
}

#[test]
fn a_description_becomes_a_definition_with_the_same_hash() {
    let mut cache = crate::definition_cache::MessageDefinitionCache::with_prefixes(Vec::new());
    for name in [
        "geometry_msgs/msg/PoseStamped",
        "sensor_msgs/msg/Image",
        "diagnostic_msgs/msg/DiagnosticArray",
        "std_msgs/msg/Empty",
        "sensor_msgs/msg/JointState",
    ] {
        let stored = cache.definition(name);
        let hash = rihs01(name, &stored).unwrap();
        let description = TypeDescription::from_definition(name, &stored).unwrap();
        // From the fields alone (a node that sends no sources).
        let rebuilt = description.definition(&|_| None, Some(&hash)).unwrap();
        assert_eq!(rebuilt.type_description_hash, hash, "{name}");
        assert_eq!(rebuilt.encoding, "ros2msg");
        // From the sources, which keep constants and comments.
        let sources: std::collections::HashMap<String, String> = description
            .type_names()
            .map(|t| (t.to_string(), cache.own_text(t).unwrap()))
            .collect();
        let rebuilt = description
            .definition(&|t| sources.get(t).cloned(), Some(&hash))
            .unwrap();
        assert_eq!(rebuilt.type_description_hash, hash, "{name}");
    }
}

#[test]
fn sources_keep_constants_and_a_wrong_hash_is_refused() {
    let mut cache = crate::definition_cache::MessageDefinitionCache::with_prefixes(Vec::new());
    let name = "sensor_msgs/msg/NavSatStatus";
    let stored = cache.definition(name);
    let description = TypeDescription::from_definition(name, &stored).unwrap();
    let source = cache.own_text(name).unwrap();
    assert!(source.contains("STATUS_FIX"), "{source}");
    let rebuilt = description
        .definition(&|t| (t == name).then(|| source.clone()), None)
        .unwrap();
    assert!(rebuilt.encoded_message_definition.contains("STATUS_FIX"));
    let wrong = format!("RIHS01_{}", "0".repeat(64));
    assert!(matches!(
        description.definition(&|_| None, Some(&wrong)),
        Err(TypeHashError::Mismatch { .. })
    ));
}

/// Names a remote peer's description holds that `.msg` text cannot spell (found by the
/// `xtypes` fuzz target: a member named `\t\t\ta` became field `a`, a definition of another
/// RIHS01 hash than the type's): a field name with a line break wrote a field of its own into
/// the text, a nested or referenced type name one of its own. Each is refused.
#[test]
fn names_text_cannot_spell_are_refused() {
    let field = |name: &str, type_id: u8, nested: &str| FieldDescription {
        name: name.into(),
        field_type: FieldType {
            type_id,
            capacity: 0,
            string_capacity: 0,
            nested_type_name: nested.into(),
        },
    };
    let description = |fields: Vec<FieldDescription>, referenced: &str| TypeDescription {
        type_description: IndividualTypeDescription {
            type_name: "pkg/msg/T".into(),
            fields,
        },
        referenced_type_descriptions: (!referenced.is_empty())
            .then(|| IndividualTypeDescription {
                type_name: referenced.into(),
                fields: vec![field("x", 6, "")],
            })
            .into_iter()
            .collect(),
    };
    for (what, bad) in [
        ("tabs", description(vec![field("\t\ta", 6, "")], "")),
        (
            "line break",
            description(vec![field("a\nint64 b", 6, "")], ""),
        ),
        (
            "not ASCII",
            description(vec![field("f\u{de}_id", 7, "")], ""),
        ),
        (
            "nested",
            description(vec![field("n", 1, "pkg/msg/U\nint8 z")], "pkg/msg/U"),
        ),
        (
            "referenced",
            description(vec![field("n", 1, "pkg/msg/U")], "pkg/msg/U\nint8 z"),
        ),
        ("root", {
            let mut d = description(vec![field("a", 6, "")], "");
            d.type_description.type_name = "pkg/msg/T ".into();
            d
        }),
    ] {
        let err = bad.definition(&|_| None, None).expect_err(what);
        assert!(
            matches!(
                err,
                TypeHashError::Unspellable { .. } | TypeHashError::InvalidTypeName(_)
            ),
            "{what}: {err}"
        );
    }
    let good = description(vec![field("n", 1, "pkg/msg/U")], "pkg/msg/U");
    let definition = good.definition(&|_| None, None).unwrap();
    assert_eq!(definition.type_description_hash, good.rihs01());
}
