//! Golden CDR bytes of sample values, written out by hand from the CDR rules.
//!
//! Every byte string here is also the output of an independent encoder: the
//! `rosbags` Python package, via `rosbags_cdr_golden.py`, whose output is kept
//! in `rosbags_golden.txt` (section "named samples"; `all_types.rs` checks
//! that these literals and that file agree).

use rosbag2_rs_interfaces::builtin_interfaces::{Duration, Time};
use rosbag2_rs_interfaces::rosbag2_interfaces::msg::WriteSplitEvent;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::{
    BurstRequest, IsPausedResponse, PauseRequest, PlayRequest, SeekRequest, SetRateRequest,
};
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::{
    ClearBufferRequest, SetDurationResponse, SetMemoryRequest, TriggerSnapshotRequest,
};
use rosbag2_rs_interfaces::type_description_interfaces::msg::{
    Field, FieldType, IndividualTypeDescription, KeyValue, TypeDescription, TypeSource,
};
use rosbag2_rs_interfaces::type_description_interfaces::srv::{
    GetTypeDescriptionRequest, GetTypeDescriptionResponse,
};
use rosbag2_rs_interfaces::{from_cdr, to_cdr, MessageType};

/// A sample value with its expected little- and big-endian encodings.
struct Golden {
    /// Name of the sample in `rosbags_golden.txt`.
    name: &'static str,
    /// ROS 2 type name.
    type_name: &'static str,
    /// Little-endian CDR, header included.
    le: &'static [u8],
    /// Big-endian CDR, header included.
    be: &'static [u8],
}

/// Encodes `value`, compares with `golden`, and decodes both byte orders back.
fn check<T: MessageType>(value: T, golden: &Golden) {
    assert_eq!(T::TYPE_NAME, golden.type_name, "{}", golden.name);
    assert_eq!(
        to_cdr(&value),
        golden.le,
        "{}: little-endian bytes",
        golden.name
    );
    assert_eq!(
        from_cdr::<T>(golden.le).unwrap(),
        value,
        "{}: decode LE",
        golden.name
    );
    assert_eq!(
        from_cdr::<T>(golden.be).unwrap(),
        value,
        "{}: decode BE",
        golden.name
    );
}

const GOLDEN: &[Golden] = &[
    Golden {
        name: "set_rate_request",
        type_name: "rosbag2_interfaces/srv/SetRate_Request",
        // header, then f64 2.0 at offset 0 (already 8-aligned)
        le: &[0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40],
        be: &[0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0],
    },
    Golden {
        name: "is_paused_response",
        type_name: "rosbag2_interfaces/srv/IsPaused_Response",
        le: &[0, 1, 0, 0, 1],
        be: &[0, 0, 0, 0, 1],
    },
    Golden {
        name: "pause_request",
        type_name: "rosbag2_interfaces/srv/Pause_Request",
        // the one placeholder byte of an empty request
        le: &[0, 1, 0, 0, 0],
        be: &[0, 0, 0, 0, 0],
    },
    Golden {
        name: "seek_request",
        type_name: "rosbag2_interfaces/srv/Seek_Request",
        // Time { sec: i32 1, nanosec: u32 2 }
        le: &[0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0],
        be: &[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2],
    },
    Golden {
        name: "burst_request",
        type_name: "rosbag2_interfaces/srv/Burst_Request",
        le: &[0, 1, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0],
        be: &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7],
    },
    Golden {
        name: "play_request",
        type_name: "rosbag2_interfaces/srv/Play_Request",
        // Time {1, 2}, Duration {-3, 4}, Time {5, 6}
        le: &[
            0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0xfd, 0xff, 0xff, 0xff, 4, 0, 0, 0, 5, 0, 0, 0, 6,
            0, 0, 0,
        ],
        be: &[
            0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xfd, 0, 0, 0, 4, 0, 0, 0, 5, 0,
            0, 0, 6,
        ],
    },
    Golden {
        name: "write_split_event",
        type_name: "rosbag2_interfaces/msg/WriteSplitEvent",
        // u32 length with NUL, bytes, NUL, padding to 4 before the next length
        le: &[
            0, 1, 0, 0, //
            7, 0, 0, 0, b'a', b'.', b'm', b'c', b'a', b'p', 0, 0, //
            9, 0, 0, 0, b'b', b'_', b'1', b'.', b'm', b'c', b'a', b'p', 0, 0, 0, 0, //
            5, 0, 0, 0, b'/', b'r', b'e', b'c', 0,
        ],
        be: &[
            0, 0, 0, 0, //
            0, 0, 0, 7, b'a', b'.', b'm', b'c', b'a', b'p', 0, 0, //
            0, 0, 0, 9, b'b', b'_', b'1', b'.', b'm', b'c', b'a', b'p', 0, 0, 0, 0, //
            0, 0, 0, 5, b'/', b'r', b'e', b'c', 0,
        ],
    },
    Golden {
        name: "set_memory_request",
        type_name: "rosbag2_rs_interfaces/srv/SetMemory_Request",
        // float64 1e6
        le: &[0, 1, 0, 0, 0, 0, 0, 0, 0x80, 0x84, 0x2e, 0x41],
        be: &[0, 0, 0, 0, 0x41, 0x2e, 0x84, 0x80, 0, 0, 0, 0],
    },
    Golden {
        name: "set_duration_response",
        type_name: "rosbag2_rs_interfaces/srv/SetDuration_Response",
        le: &[0, 1, 0, 0, 1],
        be: &[0, 0, 0, 0, 1],
    },
    Golden {
        name: "trigger_snapshot_request",
        type_name: "rosbag2_rs_interfaces/srv/TriggerSnapshot_Request",
        // string, sequence<string> (u32 count, then each string aligned to 4), two Times,
        // float64 (at body offset 56, already aligned to 8)
        le: &[
            0, 1, 0, 0, //
            6, 0, 0, 0, b'c', b'r', b'a', b's', b'h', 0, 0, 0, //
            2, 0, 0, 0, //
            11, 0, 0, 0, b'/', b't', b'f', b'_', b's', b't', b'a', b't', b'i', b'c', 0, 0, //
            3, 0, 0, 0, b'/', b'a', 0, 0, //
            1, 0, 0, 0, 2, 0, 0, 0, //
            0, 0, 0, 0, 0, 0, 0, 0, //
            0, 0, 0, 0, 0, 0, 4, 0x40,
        ],
        be: &[
            0, 0, 0, 0, //
            0, 0, 0, 6, b'c', b'r', b'a', b's', b'h', 0, 0, 0, //
            0, 0, 0, 2, //
            0, 0, 0, 11, b'/', b't', b'f', b'_', b's', b't', b'a', b't', b'i', b'c', 0, 0, //
            0, 0, 0, 3, b'/', b'a', 0, 0, //
            0, 0, 0, 1, 0, 0, 0, 2, //
            0, 0, 0, 0, 0, 0, 0, 0, //
            0x40, 4, 0, 0, 0, 0, 0, 0,
        ],
    },
    Golden {
        name: "clear_buffer_request",
        type_name: "rosbag2_rs_interfaces/srv/ClearBuffer_Request",
        le: &[0, 1, 0, 0, 0],
        be: &[0, 0, 0, 0, 0],
    },
    Golden {
        name: "get_type_description_request",
        type_name: "type_description_interfaces/srv/GetTypeDescription_Request",
        // strings, then the bool
        le: &[
            0x00, 0x01, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73,
            0x67, 0x2f, 0x54, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x52, 0x49, 0x48, 0x53,
            0x30, 0x31, 0x5f, 0x61, 0x62, 0x00, 0x01,
        ],
        be: &[
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73,
            0x67, 0x2f, 0x54, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x52, 0x49, 0x48, 0x53,
            0x30, 0x31, 0x5f, 0x61, 0x62, 0x00, 0x01,
        ],
    },
    Golden {
        name: "get_type_description_response",
        type_name: "type_description_interfaces/srv/GetTypeDescription_Response",
        // nested sequences of structs: rosbags' bytes, too long to write out by hand
        le: &[
            0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73, 0x67, 0x2f,
            0x54, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x78, 0x00,
            0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
            0x00, 0x00, 0x37, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x75, 0x73, 0x00, 0x61,
            0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73, 0x67, 0x2f,
            0x55, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
            0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73, 0x67, 0x2f,
            0x55, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x73, 0x00,
            0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00,
            0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73, 0x67, 0x2f, 0x54, 0x00, 0x00, 0x00, 0x04, 0x00,
            0x00, 0x00, 0x6d, 0x73, 0x67, 0x00, 0x09, 0x00, 0x00, 0x00, 0x69, 0x6e, 0x74, 0x33,
            0x32, 0x20, 0x78, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00,
            0x00, 0x00, 0x6b, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x76, 0x00,
        ],
        be: &[
            0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73, 0x67, 0x2f,
            0x54, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x78, 0x00,
            0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x02, 0x37, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x75, 0x73, 0x00, 0x61,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73, 0x67, 0x2f,
            0x55, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x01, 0x00, 0x00, 0x00, 0x0a, 0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73, 0x67, 0x2f,
            0x55, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x73, 0x00,
            0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0a,
            0x70, 0x6b, 0x67, 0x2f, 0x6d, 0x73, 0x67, 0x2f, 0x54, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x04, 0x6d, 0x73, 0x67, 0x00, 0x00, 0x00, 0x00, 0x09, 0x69, 0x6e, 0x74, 0x33,
            0x32, 0x20, 0x78, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
            0x00, 0x02, 0x6b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x76, 0x00,
        ],
    },
];

fn golden(name: &str) -> &'static Golden {
    GOLDEN
        .iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("no golden sample {name}"))
}

#[test]
fn set_rate_request() {
    check(SetRateRequest { rate: 2.0 }, golden("set_rate_request"));
}

#[test]
fn is_paused_response() {
    check(
        IsPausedResponse { paused: true },
        golden("is_paused_response"),
    );
}

#[test]
fn empty_request_is_one_placeholder_byte() {
    check(PauseRequest::default(), golden("pause_request"));
    check(
        ClearBufferRequest::default(),
        golden("clear_buffer_request"),
    );
}

#[test]
fn seek_request() {
    let time = Time { sec: 1, nanosec: 2 };
    check(SeekRequest { time }, golden("seek_request"));
}

#[test]
fn burst_request() {
    check(BurstRequest { num_messages: 7 }, golden("burst_request"));
}

#[test]
fn play_request() {
    let value = PlayRequest {
        start_offset: Time { sec: 1, nanosec: 2 },
        playback_duration: Duration {
            sec: -3,
            nanosec: 4,
        },
        playback_until_timestamp: Time { sec: 5, nanosec: 6 },
    };
    check(value, golden("play_request"));
}

#[test]
fn write_split_event() {
    let value = WriteSplitEvent {
        closed_file: "a.mcap".into(),
        opened_file: "b_1.mcap".into(),
        node_name: "/rec".into(),
    };
    check(value, golden("write_split_event"));
}

#[test]
fn set_memory_request() {
    check(
        SetMemoryRequest { memory: 1e6 },
        golden("set_memory_request"),
    );
}

#[test]
fn set_duration_response() {
    check(
        SetDurationResponse { success: true },
        golden("set_duration_response"),
    );
}

#[test]
fn trigger_snapshot_request() {
    let value = TriggerSnapshotRequest {
        filename: "crash".into(),
        topics: vec!["/tf_static".into(), "/a".into()],
        start_time: Time { sec: 1, nanosec: 2 },
        stop_time: Time::default(),
        post_trigger_seconds: 2.5,
    };
    check(value, golden("trigger_snapshot_request"));
}

/// The literals above are the "named samples" section of `rosbags_golden.txt`.
#[test]
fn literals_match_rosbags_output() {
    let text = include_str!("../rosbags_golden.txt");
    let mut lines = text
        .lines()
        .skip_while(|line| line.starts_with('#'))
        .take_while(|line| !line.is_empty());
    let mut count = 0;
    while let Some(head) = lines.next() {
        let (name, type_name) = head.split_once(' ').unwrap();
        let le = parse_hex(lines.next().unwrap().trim().strip_prefix("le ").unwrap());
        let be = parse_hex(lines.next().unwrap().trim().strip_prefix("be ").unwrap());
        let g = golden(name);
        assert_eq!(g.type_name, type_name, "{name}");
        assert_eq!(g.le, le.as_slice(), "{name} LE");
        assert_eq!(g.be, be.as_slice(), "{name} BE");
        count += 1;
    }
    assert_eq!(count, GOLDEN.len());
}

fn parse_hex(text: &str) -> Vec<u8> {
    text.split(' ')
        .map(|byte| u8::from_str_radix(byte, 16).unwrap())
        .collect()
}

#[test]
fn get_type_description_request() {
    check(
        GetTypeDescriptionRequest {
            type_name: "pkg/msg/T".into(),
            type_hash: "RIHS01_ab".into(),
            include_type_sources: true,
        },
        golden("get_type_description_request"),
    );
}

#[test]
fn get_type_description_response() {
    let field =
        |name: &str, type_id, capacity, string_capacity, nested: &str, default: &str| Field {
            name: name.into(),
            field_type: FieldType {
                type_id,
                capacity,
                string_capacity,
                nested_type_name: nested.into(),
            },
            default_value: default.into(),
        };
    check(
        GetTypeDescriptionResponse {
            successful: true,
            failure_reason: String::new(),
            type_description: TypeDescription {
                type_description: IndividualTypeDescription {
                    type_name: "pkg/msg/T".into(),
                    fields: vec![
                        field("x", 6, 0, 0, "", "7"),
                        field("us", 97, 3, 0, "pkg/msg/U", ""),
                    ],
                },
                referenced_type_descriptions: vec![IndividualTypeDescription {
                    type_name: "pkg/msg/U".into(),
                    fields: vec![field("s", 21, 0, 10, "", "")],
                }],
            },
            type_sources: vec![TypeSource {
                type_name: "pkg/msg/T".into(),
                encoding: "msg".into(),
                raw_file_contents: "int32 x\n".into(),
            }],
            extra_information: vec![KeyValue {
                key: "k".into(),
                value: "v".into(),
            }],
        },
        golden("get_type_description_response"),
    );
}
