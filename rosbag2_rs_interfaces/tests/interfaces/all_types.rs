//! Every message, request and response of the crate: CDR bytes as encoded by
//! `rosbags` (section "every type" of `rosbags_golden.txt`), round trips, and
//! the type names the middleware sees.
//!
//! Sample values follow the rule of `rosbags_cdr_golden.py`: for field number
//! i (from 1), bool = true, the uint8 placeholder of empty types = 0, other
//! integers = i, float64 = i + 0.5, string = "s<i>", Time / Duration =
//! { sec: i, nanosec: 10 i }.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use rosbag2_rs_interfaces::builtin_interfaces::{Duration, Time};
use rosbag2_rs_interfaces::rosbag2_interfaces::{msg, srv};
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::{msg as rs_msg, srv as rs_srv};
use rosbag2_rs_interfaces::{
    dds_request_type_name, dds_response_type_name, from_cdr, to_cdr, MessageType, ServiceType,
};

const GOLDEN_FILE: &str = include_str!("../rosbags_golden.txt");

/// Type name to little-endian bytes, from the "every type" section.
fn rosbags_table() -> BTreeMap<String, Vec<u8>> {
    GOLDEN_FILE
        .lines()
        .skip_while(|line| !line.starts_with("# every type"))
        .skip(1)
        .map(|line| {
            let (type_name, hex) = line.split_once(' ').unwrap();
            let bytes = hex
                .split(' ')
                .map(|b| u8::from_str_radix(b, 16).unwrap())
                .collect();
            (type_name.to_owned(), bytes)
        })
        .collect()
}

struct Checker {
    table: BTreeMap<String, Vec<u8>>,
    seen: Vec<&'static str>,
}

impl Checker {
    fn message<T: MessageType>(&mut self, value: T) {
        let name = T::TYPE_NAME;
        let expected = self
            .table
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in rosbags_golden.txt"));
        let bytes = to_cdr(&value);
        assert_eq!(&bytes, expected, "{name}: bytes differ from rosbags");
        assert_eq!(from_cdr::<T>(&bytes).unwrap(), value, "{name}: round trip");
        // A default value round-trips too.
        assert_eq!(from_cdr::<T>(&to_cdr(&T::default())).unwrap(), T::default());
        // DDS pads payloads to 4 bytes and may say so in the option bytes.
        let mut padded = bytes.clone();
        padded[3] = ((4 - (bytes.len() % 4)) % 4) as u8;
        padded.resize(bytes.len().div_ceil(4) * 4, 0);
        assert_eq!(from_cdr::<T>(&padded).unwrap(), value, "{name}: padded");
        self.seen.push(name);
    }

    fn service<S: ServiceType>(&mut self, request: S::Request, response: S::Response) {
        let name = S::TYPE_NAME;
        assert_eq!(
            <S::Request as MessageType>::TYPE_NAME,
            format!("{name}_Request")
        );
        assert_eq!(
            <S::Response as MessageType>::TYPE_NAME,
            format!("{name}_Response")
        );
        assert_eq!(
            S::dds_request_type_name(),
            dds_request_type_name(name).unwrap()
        );
        assert_eq!(
            S::dds_response_type_name(),
            dds_response_type_name(name).unwrap()
        );
        assert_eq!(
            S::dds_request_type_name(),
            <S::Request as MessageType>::dds_type_name()
        );
        assert_eq!(
            S::dds_response_type_name(),
            <S::Response as MessageType>::dds_type_name()
        );
        self.message(request);
        self.message(response);
    }
}

fn s(i: usize) -> String {
    format!("s{i}")
}

#[test]
fn every_type_matches_rosbags_and_round_trips() {
    let mut c = Checker {
        table: rosbags_table(),
        seen: Vec::new(),
    };
    let empty = 0u8;
    c.message(msg::ReadSplitEvent {
        closed_file: s(1),
        opened_file: s(2),
        node_name: s(3),
    });
    c.message(msg::WriteSplitEvent {
        closed_file: s(1),
        opened_file: s(2),
        node_name: s(3),
    });
    let stat = |i: usize| msg::MessagesLostEventTopicStat {
        topic_name: s(i),
        messages_lost_in_transport: i as u64 + 1,
        messages_lost_in_recorder: i as u64 + 2,
    };
    c.message(stat(1));
    c.message(msg::MessagesLostEvent {
        node_name: s(1),
        messages_lost_statistics: vec![stat(2), stat(3)],
    });
    let topic_stat = |i: u64| rs_msg::TopicRecordStatistics {
        topic_name: s(i as usize),
        received: i + 1,
        written: i + 2,
        dropped: i + 3,
        lost_in_transport: i + 4,
        throttled: i + 5,
        malformed: i + 6,
        silences: i + 7,
    };
    c.message(topic_stat(1));
    c.message(rs_msg::RecordStatistics {
        stamp: Time {
            sec: 1,
            nanosec: 10,
        },
        node_name: s(2),
        uri: s(3),
        writer_lag: Duration {
            sec: 4,
            nanosec: 40,
        },
        bytes_waiting: 5,
        writer_stalls: 6,
        topics: vec![topic_stat(7), topic_stat(8)],
    });
    c.service::<srv::Burst>(
        srv::BurstRequest { num_messages: 1 },
        srv::BurstResponse { actually_burst: 1 },
    );
    c.service::<srv::GetRate>(
        srv::GetRateRequest {
            structure_needs_at_least_one_member: empty,
        },
        srv::GetRateResponse { rate: 1.5 },
    );
    c.service::<srv::IsPaused>(
        srv::IsPausedRequest::default(),
        srv::IsPausedResponse { paused: true },
    );
    c.service::<srv::Pause>(srv::PauseRequest::default(), srv::PauseResponse::default());
    c.service::<srv::Play>(
        srv::PlayRequest {
            start_offset: Time {
                sec: 1,
                nanosec: 10,
            },
            playback_duration: Duration {
                sec: 2,
                nanosec: 20,
            },
            playback_until_timestamp: Time {
                sec: 3,
                nanosec: 30,
            },
        },
        srv::PlayResponse { success: true },
    );
    c.service::<srv::PlayNext>(
        srv::PlayNextRequest::default(),
        srv::PlayNextResponse { success: true },
    );
    c.service::<srv::Resume>(
        srv::ResumeRequest {
            resume_time: Time {
                sec: 1,
                nanosec: 10,
            },
            resume_mode: 2,
            tracking_topic_name: s(3),
        },
        srv::ResumeResponse::new(1, s(2)),
    );
    c.service::<srv::Record>(
        srv::RecordRequest {
            uri: s(1),
            start_time: Time {
                sec: 2,
                nanosec: 20,
            },
        },
        srv::RecordResponse::new(1, s(2)),
    );
    c.service::<srv::StartDiscovery>(
        srv::StartDiscoveryRequest::default(),
        srv::StartDiscoveryResponse::new(1, s(2)),
    );
    c.service::<srv::StopDiscovery>(
        srv::StopDiscoveryRequest::default(),
        srv::StopDiscoveryResponse::new(1, s(2)),
    );
    c.service::<srv::IsDiscoveryRunning>(
        srv::IsDiscoveryRunningRequest::default(),
        srv::IsDiscoveryRunningResponse { running: true },
    );
    c.service::<rs_srv::IsRecording>(
        rs_srv::IsRecordingRequest::default(),
        rs_srv::IsRecordingResponse { recording: true },
    );
    c.service::<rs_srv::SubscribeToTopics>(
        rs_srv::SubscribeToTopicsRequest {
            topics: vec![s(1), s(2)],
            topic_types: vec![s(2), s(3)],
        },
        rs_srv::SubscribeToTopicsResponse {
            return_code: 1,
            error_string: s(2),
            subscribed_topics: vec![s(3), s(4)],
            unavailable_topics: vec![s(4), s(5)],
        },
    );
    c.service::<rs_srv::GetSubscribedTopics>(
        rs_srv::GetSubscribedTopicsRequest::default(),
        rs_srv::GetSubscribedTopicsResponse {
            topics: vec![s(1), s(2)],
        },
    );
    c.service::<rs_srv::GetUri>(
        rs_srv::GetUriRequest::default(),
        rs_srv::GetUriResponse { uri: s(1) },
    );
    c.service::<srv::Seek>(
        srv::SeekRequest {
            time: Time {
                sec: 1,
                nanosec: 10,
            },
        },
        srv::SeekResponse { success: true },
    );
    c.service::<srv::SetRate>(
        srv::SetRateRequest { rate: 1.5 },
        srv::SetRateResponse { success: true },
    );
    c.service::<srv::Snapshot>(
        srv::SnapshotRequest::default(),
        srv::SnapshotResponse { success: true },
    );
    c.service::<srv::SplitBagfile>(
        srv::SplitBagfileRequest {
            split_time: Time {
                sec: 1,
                nanosec: 10,
            },
            split_mode: 2,
            tracking_topic_name: s(3),
        },
        srv::SplitBagfileResponse::new(1, s(2)),
    );
    c.service::<srv::Stop>(srv::StopRequest::default(), srv::StopResponse::new(1, s(2)));
    c.service::<srv::TogglePaused>(
        srv::TogglePausedRequest::default(),
        srv::TogglePausedResponse::default(),
    );
    c.service::<rs_srv::ClearBuffer>(
        rs_srv::ClearBufferRequest::default(),
        rs_srv::ClearBufferResponse {
            success: true,
            message: s(2),
        },
    );
    c.service::<rs_srv::SetDuration>(
        rs_srv::SetDurationRequest { duration: 1.5 },
        rs_srv::SetDurationResponse { success: true },
    );
    c.service::<rs_srv::SetMemory>(
        rs_srv::SetMemoryRequest { memory: 1.5 },
        rs_srv::SetMemoryResponse { success: true },
    );
    c.service::<rs_srv::TriggerSnapshot>(
        rs_srv::TriggerSnapshotRequest {
            filename: s(1),
            topics: vec![s(2), s(3)],
            start_time: Time {
                sec: 3,
                nanosec: 30,
            },
            stop_time: Time {
                sec: 4,
                nanosec: 40,
            },
            post_trigger_seconds: 5.5,
        },
        rs_srv::TriggerSnapshotResponse {
            success: true,
            message: s(2),
        },
    );
    c.service::<rs_srv::SetClockPublishFrequency>(
        rs_srv::SetClockPublishFrequencyRequest { frequency: 1.5 },
        rs_srv::SetClockPublishFrequencyResponse {
            success: true,
            message: s(2),
        },
    );

    c.service::<rs_srv::PauseAt>(
        rs_srv::PauseAtRequest {
            pause_time: Time {
                sec: 1,
                nanosec: 10,
            },
        },
        rs_srv::PauseAtResponse {
            success: true,
            message: s(2),
        },
    );

    rcl_interfaces_types(&mut c);

    let mut seen = c.seen.clone();
    seen.sort_unstable();
    let all: Vec<&str> = c.table.keys().map(String::as_str).collect();
    assert_eq!(seen, all, "every type in the rosbags table is checked once");
    assert_eq!(seen.len(), 80);
}

/// `rcl_interfaces`' parameter services and log line. `b` is the rule's index of a nested
/// message's first field.
fn rcl_interfaces_types(c: &mut Checker) {
    use rosbag2_rs_interfaces::rcl_interfaces::{msg as rcl, srv as rcl_srv};
    let value = |b: usize| rcl::ParameterValue {
        value_type: 0,
        bool_value: true,
        integer_value: b as i64 + 2,
        double_value: b as f64 + 3.5,
        string_value: s(b + 4),
        byte_array_value: vec![b as u8 + 5, b as u8 + 6],
        bool_array_value: vec![true, true],
        integer_array_value: vec![b as i64 + 7, b as i64 + 8],
        double_array_value: vec![b as f64 + 8.5, b as f64 + 9.5],
        string_array_value: vec![s(b + 9), s(b + 10)],
    };
    let parameter = |b: usize| rcl::Parameter {
        name: s(b),
        value: value(b + 1),
    };
    let float_range = |b: usize| rcl::FloatingPointRange {
        from_value: b as f64 + 0.5,
        to_value: b as f64 + 1.5,
        step: b as f64 + 2.5,
    };
    let integer_range = |b: usize| rcl::IntegerRange {
        from_value: b as i64,
        to_value: b as i64 + 1,
        step: b as u64 + 2,
    };
    let descriptor = |b: usize| rcl::ParameterDescriptor {
        name: s(b),
        value_type: 0,
        description: s(b + 2),
        additional_constraints: s(b + 3),
        read_only: true,
        dynamic_typing: true,
        floating_point_range: vec![float_range(b + 6), float_range(b + 7)],
        integer_range: vec![integer_range(b + 7), integer_range(b + 8)],
    };
    let list = |b: usize| rcl::ListParametersResult {
        names: vec![s(b), s(b + 1)],
        prefixes: vec![s(b + 1), s(b + 2)],
    };
    let set_result = |b: usize| rcl::SetParametersResult {
        successful: true,
        reason: s(b + 1),
    };
    c.message(float_range(1));
    c.message(integer_range(1));
    c.message(list(1));
    c.message(rcl::Log {
        stamp: Time {
            sec: 1,
            nanosec: 10,
        },
        level: 0,
        name: s(3),
        msg: s(4),
        file: s(5),
        function: s(6),
        line: 7,
    });
    c.message(parameter(1));
    c.message(descriptor(1));
    c.message(value(1));
    c.message(set_result(1));
    let names = || vec![s(1), s(2)];
    c.service::<rcl_srv::DescribeParameters>(
        rcl_srv::DescribeParametersRequest { names: names() },
        rcl_srv::DescribeParametersResponse {
            descriptors: vec![descriptor(1), descriptor(2)],
        },
    );
    c.service::<rcl_srv::GetParameterTypes>(
        rcl_srv::GetParameterTypesRequest { names: names() },
        rcl_srv::GetParameterTypesResponse { types: vec![0, 0] },
    );
    c.service::<rcl_srv::GetParameters>(
        rcl_srv::GetParametersRequest { names: names() },
        rcl_srv::GetParametersResponse {
            values: vec![value(1), value(2)],
        },
    );
    c.service::<rcl_srv::ListParameters>(
        rcl_srv::ListParametersRequest {
            prefixes: names(),
            depth: 2,
        },
        rcl_srv::ListParametersResponse { result: list(1) },
    );
    c.service::<rcl_srv::SetParameters>(
        rcl_srv::SetParametersRequest {
            parameters: vec![parameter(1), parameter(2)],
        },
        rcl_srv::SetParametersResponse {
            results: vec![set_result(1), set_result(2)],
        },
    );
    c.service::<rcl_srv::SetParametersAtomically>(
        rcl_srv::SetParametersAtomicallyRequest {
            parameters: vec![parameter(1), parameter(2)],
        },
        rcl_srv::SetParametersAtomicallyResponse {
            result: set_result(1),
        },
    );
}

/// Requests and responses that grew since Jazzy still read the Jazzy (and Lyrical) layouts, as
/// older clients and servers send them: one placeholder byte (padded or not), `Resume`'s early
/// Lyrical time alone, or `Record`'s Jazzy URI alone.
#[test]
fn grown_types_read_their_older_layouts() {
    let jazzy = [&[0u8, 1, 0, 0, 0][..], &[0, 1, 0, 3, 0, 0, 0, 0]];
    for bytes in jazzy {
        assert_eq!(
            srv::ResumeRequest::from_wire(bytes).unwrap(),
            srv::ResumeRequest::default()
        );
        assert_eq!(
            srv::SplitBagfileRequest::from_wire(bytes).unwrap(),
            srv::SplitBagfileRequest::default()
        );
        for response in [
            srv::StopResponse::from_wire(bytes).unwrap(),
            srv::ResumeResponse::from_wire(bytes)
                .map(|r| srv::StopResponse::new(r.return_code, r.error_string))
                .unwrap(),
            srv::SplitBagfileResponse::from_wire(bytes)
                .map(|r| srv::StopResponse::new(r.return_code, r.error_string))
                .unwrap(),
        ] {
            assert_eq!(response, srv::StopResponse::default());
        }
        // A type that did not grow reads only its own layout.
        assert!(srv::SeekRequest::from_wire(bytes).is_err());
    }
    let lyrical_resume = [0u8, 1, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0];
    assert_eq!(
        srv::ResumeRequest::from_wire(&lyrical_resume).unwrap(),
        srv::ResumeRequest {
            resume_time: Time { sec: 7, nanosec: 9 },
            ..Default::default()
        }
    );
    // The newest layout is read as itself.
    let newest = srv::ResumeRequest {
        resume_time: Time { sec: 7, nanosec: 9 },
        resume_mode: 1,
        tracking_topic_name: "/a".into(),
    };
    assert_eq!(
        srv::ResumeRequest::from_wire(&to_cdr(&newest)).unwrap(),
        newest
    );
    // Garbage is still an error, naming the newest layout's failure.
    assert!(srv::ResumeRequest::from_wire(&[0, 1]).is_err());
    // Jazzy's `Record` request: a URI alone (`/b`, padded to 4 bytes as Fast DDS sends it).
    for jazzy_record in [
        &[0u8, 1, 0, 0, 3, 0, 0, 0, b'/', b'b', 0][..],
        &[0, 1, 0, 0, 3, 0, 0, 0, b'/', b'b', 0, 0],
    ] {
        assert_eq!(
            srv::RecordRequest::from_wire(jazzy_record).unwrap(),
            srv::RecordRequest {
                uri: "/b".into(),
                ..Default::default()
            }
        );
    }
}

#[test]
fn type_names_and_dds_names() {
    assert_eq!(srv::SetRate::TYPE_NAME, "rosbag2_interfaces/srv/SetRate");
    assert_eq!(
        srv::SetRate::dds_request_type_name(),
        "rosbag2_interfaces::srv::dds_::SetRate_Request_"
    );
    assert_eq!(
        srv::SetRate::dds_response_type_name(),
        "rosbag2_interfaces::srv::dds_::SetRate_Response_"
    );
    assert_eq!(
        msg::WriteSplitEvent::TYPE_NAME,
        "rosbag2_interfaces/msg/WriteSplitEvent"
    );
    assert_eq!(
        msg::WriteSplitEvent::dds_type_name(),
        "rosbag2_interfaces::msg::dds_::WriteSplitEvent_"
    );
    assert_eq!(
        rs_srv::SetMemory::dds_request_type_name(),
        "rosbag2_rs_interfaces::srv::dds_::SetMemory_Request_"
    );
    assert_eq!(
        Time::dds_type_name(),
        "builtin_interfaces::msg::dds_::Time_"
    );
    assert_eq!(
        Duration::dds_type_name(),
        "builtin_interfaces::msg::dds_::Duration_"
    );
}

/// Every `.srv`/`.msg` file of the crate has a Rust type, and the other way round.
#[test]
fn interface_files_and_rust_types_agree() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut from_files = Vec::new();
    for (package, dir) in [
        ("rosbag2_interfaces", crate_dir.join("rosbag2_interfaces")),
        ("rosbag2_rs_interfaces", crate_dir.to_path_buf()),
    ] {
        for kind in ["msg", "srv"] {
            let Ok(entries) = std::fs::read_dir(dir.join(kind)) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
                if kind == "srv" {
                    from_files.push(format!("{package}/srv/{stem}_Request"));
                    from_files.push(format!("{package}/srv/{stem}_Response"));
                } else {
                    from_files.push(format!("{package}/msg/{stem}"));
                }
            }
        }
    }
    from_files.sort();
    // rcl_interfaces' files are ROS 2's own, kept with the codec's bundled definitions.
    let table: Vec<String> = rosbags_table()
        .into_keys()
        .filter(|name| !name.starts_with("rcl_interfaces/"))
        .collect();
    assert_eq!(from_files, table);
}

/// Re-runs the rosbags script, when a Python with rosbags is at hand, and
/// compares its output with the committed `rosbags_golden.txt`.
#[test]
fn rosbags_script_still_agrees() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var_os("ROSBAGS_PYTHON")
        .map(Into::into)
        .unwrap_or_else(|| crate_dir.join("../.venv/bin/python"));
    let script = crate_dir.join("tests/rosbags_cdr_golden.py");
    let output = match Command::new(&python).arg(&script).output() {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains("No module named 'rosbags'"),
                "rosbags script failed: {stderr}"
            );
            eprintln!("skipped: {} has no rosbags", python.display());
            return;
        }
        Err(err) => {
            eprintln!("skipped: cannot run {}: {err}", python.display());
            return;
        }
    };
    assert_eq!(String::from_utf8(output.stdout).unwrap(), GOLDEN_FILE);
}

/// `rosbag2_interfaces` holds rosbag2's interfaces and nothing else: the names of rosbag2 Lyrical's
/// (0.33.3, the same in Rolling's 0.34) `msg/` and `srv/`, whose files are copied verbatim from
/// its release (so `interface_files_and_rust_types_agree` and the rosbags table check the fields).
/// Interfaces of ours live in `rosbag2_rs_interfaces`, where a stock `rosbag2_interfaces` cannot
/// lack them or clash with them.
#[test]
fn rosbag2_interfaces_holds_only_rosbag2s_own() {
    const LYRICAL: &[&str] = &[
        "msg/MessagesLostEvent",
        "msg/MessagesLostEventTopicStat",
        "msg/ReadSplitEvent",
        "msg/WriteSplitEvent",
        "srv/Burst",
        "srv/GetRate",
        "srv/IsDiscoveryRunning",
        "srv/IsPaused",
        "srv/Pause",
        "srv/Play",
        "srv/PlayNext",
        "srv/Record",
        "srv/Resume",
        "srv/Seek",
        "srv/SetRate",
        "srv/Snapshot",
        "srv/SplitBagfile",
        "srv/StartDiscovery",
        "srv/Stop",
        "srv/StopDiscovery",
        "srv/TogglePaused",
    ];
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bundled = crate_dir.join("../rosbag2_rs_codec/msgs/rosbag2_interfaces");
    let mut names = Vec::new();
    for kind in ["msg", "srv"] {
        for entry in std::fs::read_dir(crate_dir.join("rosbag2_interfaces").join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("{kind}/{}", path.file_stem().unwrap().to_str().unwrap());
            let file = path.file_name().unwrap();
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                std::fs::read_to_string(bundled.join(kind).join(file)).unwrap(),
                "{name}: the codec's bundled copy differs"
            );
            names.push(name);
        }
    }
    names.sort_unstable();
    assert_eq!(names, LYRICAL);
}

/// The codec bundles every interface of ours, as this package installs it: a recorder records
/// its own statistics (and a service's events) with their definitions where no ROS 2 is sourced.
#[test]
fn the_codec_bundles_every_interface_of_ours() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bundled = crate_dir.join("../rosbag2_rs_codec/msgs/rosbag2_rs_interfaces");
    for kind in ["msg", "srv"] {
        let names = |dir: &Path| {
            let mut names: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort_unstable();
            names
        };
        let ours = names(&crate_dir.join(kind));
        assert_eq!(
            ours,
            names(&bundled.join(kind)),
            "{kind}/: the codec's bundled files"
        );
        for file in ours {
            assert_eq!(
                std::fs::read_to_string(crate_dir.join(kind).join(&file)).unwrap(),
                std::fs::read_to_string(bundled.join(kind).join(&file)).unwrap(),
                "{kind}/{file:?}: the codec's bundled copy differs"
            );
        }
    }
}
