//! Every topic kind of the RealSense file format (the SDK's "Realsense Record and Playback"
//! document): a file-version 2 recording with `property` options, a 6DoF pose stream with its
//! metadata, an occupancy map, a sensor time stream, `/log` and `/additional_info`, built in the
//! document's layout; read into the model, and copied message for message.

use rosbag2_rs_codec::msg::{encode_ros1_at, Dialect, Registry, Value};
use rosbag2_rs_storage::rosbag1::{BagReader, BagWriter, Connection, WriterOptions};
use rosbag2_rs_storage::{CompressionFormat, OpenMode};

use realsense_bag_rs::*;

const MS: i64 = 1_000_000;

const VECTOR3: &str = "float64 x\nfloat64 y\nfloat64 z\n";

/// Type name, md5sum (as stored; not checked by readers) and full definition.
fn definition(type_name: &str) -> (&'static str, String) {
    let sep =
        "\n================================================================================\n";
    match type_name {
        "std_msgs/UInt32" => ("304a39449588c7f8ce2df6e8001c5fce", "uint32 data\n".into()),
        "diagnostic_msgs/KeyValue" => (
            "cf57fdc6617a881a88c16e768132149c",
            "string key\nstring value\n".into(),
        ),
        "realsense_msgs/StreamInfo" => (
            "311d7e24eac31bb87271d041bf70ff7d",
            "uint32 fps\nstring encoding\nbool is_recommended\n".into(),
        ),
        "geometry_msgs/Transform" => (
            "ac9eff44abf714214112b05d54a3cf9b",
            format!(
                "Vector3 translation\nQuaternion rotation\n{sep}MSG: geometry_msgs/Vector3\n{VECTOR3}{sep}MSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n"
            ),
        ),
        "geometry_msgs/Accel" | "geometry_msgs/Twist" => (
            "9f195f881246fdfa2798d1d3eebca84a",
            format!("Vector3 linear\nVector3 angular\n{sep}MSG: geometry_msgs/Vector3\n{VECTOR3}"),
        ),
        "sensor_msgs/TimeReference" => (
            "fded64a0265108ba86c3d38fb11c0c16",
            format!("Header header\ntime time_ref\nstring source\n{sep}MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n"),
        ),
        "rosgraph_msgs/Log" => (
            "acffd30cd6b6de30f120938c17c593fb",
            format!("byte INFO=2\nHeader header\nbyte level\nstring name\nstring msg\nstring file\nstring function\nuint32 line\nstring[] topics\n{sep}MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n"),
        ),
        "nav_msgs/OccupancyGrid" => (
            "3381f2d731d4076ec5c71b0759edbe4e",
            format!("Header header\nint8[] data\n{sep}MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n"),
        ),
        other => panic!("no definition for {other}"),
    }
}

struct Bag {
    writer: BagWriter,
    ids: std::collections::HashMap<String, u32>,
}

impl Bag {
    fn put(&mut self, topic: &str, type_name: &str, time: i64, fill: &[(&str, Value)]) {
        let (md5, text) = definition(type_name);
        let mut reg = Registry::new();
        reg.parse_concatenated(type_name, &text, Dialect::Ros1)
            .unwrap();
        let index = reg.index_of(type_name).unwrap();
        let mut value = reg.default_value(index);
        for (path, v) in fill {
            reg.set(index, &mut value, path, v.clone()).unwrap();
        }
        let data = encode_ros1_at(&reg, index, &value).unwrap();
        let writer = &mut self.writer;
        let id = *self.ids.entry(topic.to_string()).or_insert_with(|| {
            writer.add_connection(Connection {
                id: 0,
                topic: topic.into(),
                type_name: type_name.into(),
                md5sum: md5.into(),
                message_definition: text.clone(),
                callerid: None,
                latching: false,
            })
        });
        self.writer.write(id, time, &data).unwrap();
    }

    fn key_value(&mut self, topic: &str, time: i64, key: &str, value: &str) {
        self.put(
            topic,
            "diagnostic_msgs/KeyValue",
            time,
            &[("key", Value::string(key)), ("value", Value::string(value))],
        );
    }
}

/// A file-version 2 tracking camera: options as `property`, a pose stream at 200 Hz, a fisheye
/// occupancy map, the sensor's time stream, a log line and additional info.
fn record(path: &std::path::Path) {
    let mut bag = Bag {
        writer: BagWriter::create(path, WriterOptions::default()).unwrap(),
        ids: Default::default(),
    };
    let s = "/device_0/sensor_0";
    bag.put(
        "/file_version",
        "std_msgs/UInt32",
        1,
        &[("data", Value::UInt32(2))],
    );
    bag.key_value("/device_0/info", 1, "Name", "Intel RealSense T265");
    bag.key_value("/device_0/info", 1, "Serial Number", "905312110116");
    bag.key_value(&format!("{s}/info"), 1, "Name", "Tracking Module");
    bag.key_value(&format!("{s}/property"), 1, "Exposure", "8500");
    bag.key_value(&format!("{s}/property"), 1, "Gain", "16");
    bag.key_value("/additional_info", 1, "program", "rosbag2-rs test");
    bag.put(
        &format!("{s}/Pose_0/info"),
        "realsense_msgs/StreamInfo",
        1,
        &[
            ("fps", Value::UInt32(200)),
            ("encoding", Value::string("6DOF")),
        ],
    );
    for k in 0..10i64 {
        let t = 10 * MS + k * 5 * MS;
        if k == 4 {
            bag.key_value(&format!("{s}/property"), t - 1, "Exposure", "999");
        }
        let pose = format!("{s}/Pose_0/pose");
        let x = k as f64;
        bag.put(
            &format!("{pose}/transform/data"),
            "geometry_msgs/Transform",
            t,
            &[
                ("translation.x", Value::Float64(x)),
                ("translation.z", Value::Float64(0.5)),
                ("rotation.z", Value::Float64(0.6)),
                ("rotation.w", Value::Float64(0.8)),
            ],
        );
        bag.put(
            &format!("{pose}/accel/data"),
            "geometry_msgs/Accel",
            t,
            &[
                ("linear.y", Value::Float64(2.0 * x)),
                ("angular.x", Value::Float64(0.5)),
            ],
        );
        bag.put(
            &format!("{pose}/twist/data"),
            "geometry_msgs/Twist",
            t,
            &[
                ("linear.x", Value::Float64(-x)),
                ("angular.z", Value::Float64(0.25)),
            ],
        );
        let md = format!("{pose}/metadata");
        bag.key_value(&md, t, "Tracker Confidence", "3");
        bag.key_value(&md, t, "Mapper Confidence", &(k % 4).to_string());
        bag.key_value(
            &md,
            t,
            "frame_timestamp",
            &format!("{:.6}", 1000.0 + 5.0 * x),
        );
        bag.key_value(&md, t, "Frame number", &(k + 1).to_string());
        bag.key_value(&md, t, "system_time", "0.000000");
        bag.key_value(&md, t, "timestamp_domain", "Hardware Clock");
        bag.put(
            &format!("{s}/time"),
            "sensor_msgs/TimeReference",
            t,
            &[
                ("source", Value::string("tracking")),
                (
                    "time_ref",
                    Value::Time {
                        sec: 1_732_000_000,
                        nsec: 123_456_789 + k as u32,
                    },
                ),
            ],
        );
    }
    bag.put(
        &format!("{s}/Fisheye_1/occupancy_map/data"),
        "nav_msgs/OccupancyGrid",
        40 * MS,
        &[(
            "data",
            Value::Array(vec![Value::Int8(0), Value::Int8(100), Value::Int8(-1)]),
        )],
    );
    bag.put(
        "/log",
        "rosgraph_msgs/Log",
        41 * MS,
        &[
            ("level", Value::UInt8(2)),
            ("msg", Value::string("relocalized")),
        ],
    );
    bag.writer.finish().unwrap();
}

#[test]
fn topic_kinds_of_the_file_format_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.bag");
    record(&path);
    let mut rec = Recording::open(&path).unwrap();
    let device = rec.device().clone();
    assert_eq!(device.file_version, 2);
    assert_eq!(
        device.additional_info,
        vec![("program".to_string(), "rosbag2-rs test".to_string())]
    );
    let tracking = &device.sensors[0];
    assert_eq!(tracking.name(), Some("Tracking Module"));
    // Version 2 properties are options, with their history.
    let exposure = tracking
        .options
        .iter()
        .find(|o| o.name == "Exposure")
        .unwrap();
    assert_eq!(exposure.value, 8500.0);
    assert_eq!(exposure.history, vec![(30 * MS - 1, 999.0)]);
    assert_eq!(exposure.description, "Read only option of Exposure");
    let gain = tracking.options.iter().find(|o| o.name == "Gain").unwrap();
    assert_eq!((gain.value, gain.history.len()), (16.0, 0));
    let pose = device.profile("pose", 0).unwrap();
    assert_eq!((pose.format.as_str(), pose.fps), ("6dof", 200));
    // Pose frames with their metadata; the property change as an event at its time.
    let mut frames = Vec::new();
    let mut changes = Vec::new();
    let mut others = Vec::new();
    let mut events = Vec::new();
    while let Some(e) = rec.next_event().unwrap() {
        events.push(e.clone());
        match e {
            Event::Frame(f) => frames.push(f),
            Event::Option(o) => changes.push((o.name, o.value, frames.len())),
            other => others.push(other),
        }
    }
    assert_eq!(changes, vec![("Exposure".to_string(), 999.0, 4)]);
    // The sensor's time stream and the log.
    let times: Vec<&TimeSample> = others
        .iter()
        .filter_map(|e| match e {
            Event::Time(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(times.len(), 10);
    assert!(times
        .iter()
        .all(|t| t.source == "tracking" && t.sensor == 0));
    assert_eq!(
        others.iter().find(|e| matches!(e, Event::Log(_))),
        Some(&Event::Log(LogMessage {
            level: 2,
            name: String::new(),
            msg: "relocalized".into(),
            recorded_ns: 41 * MS,
        }))
    );
    // Written back through the model, read again: the same events.
    let again = dir.path().join("again.bag");
    let mut w = RecordingWriter::create(&again, &device, CompressionFormat::None).unwrap();
    for e in &events {
        w.write_event(e).unwrap();
    }
    w.finish().unwrap();
    let mut back = Recording::open(&again).unwrap();
    assert_eq!(back.device().additional_info, device.additional_info);
    let mut events_back = Vec::new();
    while let Some(e) = back.next_event().unwrap() {
        events_back.push(e);
    }
    assert_eq!(events_back, events);
    assert_eq!(frames.len(), 10);
    for (k, f) in frames.iter().enumerate() {
        let x = k as f64;
        assert_eq!((f.stream.as_str(), f.number), ("pose", k as u64 + 1));
        assert_eq!(f.timestamp_ms, 1000.0 + 5.0 * x);
        assert_eq!(f.domain, "hardware_clock");
        let Payload::Pose(p) = &f.payload else {
            panic!("not a pose: {f:?}")
        };
        assert_eq!(p.translation, [x, 0.0, 0.5]);
        assert_eq!(p.rotation, [0.0, 0.0, 0.6, 0.8]);
        assert_eq!(p.acceleration, [0.0, 2.0 * x, 0.0]);
        assert_eq!(p.angular_acceleration, [0.5, 0.0, 0.0]);
        assert_eq!(p.velocity, [-x, 0.0, 0.0]);
        assert_eq!(p.angular_velocity, [0.0, 0.0, 0.25]);
        assert_eq!(
            (p.tracker_confidence, p.mapper_confidence),
            (3, k as u32 % 4)
        );
    }
}

/// Every message of a bag: (topic, type, md5sum, definition, time, bytes).
fn messages(path: &std::path::Path) -> Vec<(String, String, String, String, i64, Vec<u8>)> {
    let mut bag = BagReader::open(path, OpenMode::Strict).unwrap();
    let connections = bag.connections().to_vec();
    let mut out = Vec::new();
    while let Some(m) = bag.read_next().unwrap() {
        let c = connections.iter().find(|c| c.id == m.connection).unwrap();
        out.push((
            c.topic.clone(),
            c.type_name.clone(),
            c.md5sum.clone(),
            c.message_definition.clone(),
            m.time,
            m.data.to_vec(),
        ));
    }
    out
}

#[test]
fn every_topic_kind_is_copied_identically_and_cut_with_its_properties() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.bag");
    record(&path);
    let out = dir.path().join("copy.bag");
    let report = copy_bag(&path, &out, &CopyOptions::default()).unwrap();
    let (a, b) = (messages(&path), messages(&out));
    assert_eq!(a, b);
    assert_eq!(report.frames, 31, "30 pose parts and an occupancy map");
    for kind in [
        "/property",
        "/time",
        "/log",
        "/additional_info",
        "occupancy_map/data",
    ] {
        assert!(b.iter().any(|m| m.0.ends_with(kind)), "{kind}");
    }
    // Cut after the change: the property at the start is the changed value, and the time
    // stream, the log and the pose frames before the cut are gone.
    let cut = dir.path().join("cut.bag");
    copy_bag(
        &path,
        &cut,
        &CopyOptions {
            start_ns: Some(30 * MS),
            ..CopyOptions::default()
        },
    )
    .unwrap();
    let rec = Recording::open(&cut).unwrap();
    let options = &rec.device().sensors[0].options;
    let exposure = options.iter().find(|o| o.name == "Exposure").unwrap();
    assert_eq!((exposure.value, exposure.history.len()), (999.0, 0));
    assert_eq!(
        options.iter().find(|o| o.name == "Gain").unwrap().value,
        16.0
    );
    let numbers: Vec<u64> = rec.map(|f| f.unwrap().number).collect();
    assert_eq!(numbers, vec![5, 6, 7, 8, 9, 10]);
    let kept = messages(&cut);
    assert_eq!(kept.iter().filter(|m| m.0.ends_with("/time")).count(), 6);
    assert_eq!(kept.iter().filter(|m| m.0 == "/log").count(), 1);
    // Streams left out by the topic selection lose all their topics; the description stays.
    let no_map = dir.path().join("no_map.bag");
    let report = copy_bag(
        &path,
        &no_map,
        &CopyOptions {
            topics: rosbag2_rs_storage::TopicFilter::from_parts(
                vec![],
                None,
                vec![],
                Some(".*Fisheye.*"),
            )
            .unwrap(),
            ..CopyOptions::default()
        },
    )
    .unwrap();
    assert_eq!(report.dropped_streams, vec!["/device_0/sensor_0/Fisheye_1"]);
    let kept = messages(&no_map);
    assert!(!kept.iter().any(|m| m.0.contains("Fisheye")));
    assert_eq!(kept.len(), a.len() - 1);
}
