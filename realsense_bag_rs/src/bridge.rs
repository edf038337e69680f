//! A recording as a ROS 2 bag in the topic layout of the `realsense2_camera` driver: per video
//! stream an `Image` (`image_rect_raw` for depth and infrared, `image_raw` for color) and its
//! `CameraInfo`, motion streams as `Imu` on `accel/sample` and `gyro/sample`, frame metadata as
//! `realsense2_camera_msgs/Metadata` (JSON), and the extrinsics on `/tf_static`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rosbag2_rs_codec::msg::{encode_cdr_at, CdrHeader, CodecError, Dialect, Registry, Value};
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::qos::{Durability, History, QosProfile};
use rosbag2_rs_storage::{
    BagMetadata, BagWriter, BagWriterOptions, SerializedMessage, TopicMetadata,
};

use crate::error::RealSenseError;
use crate::model::*;
use crate::reader::Recording;
use crate::ros2_types::{Types, METADATA_TYPE};

/// The driver's namespace (`realsense2_camera` 4.x: `/camera/camera`).
pub const NAMESPACE: &str = "/camera/camera";

/// The driver's name for a stream (`infra1`, `depth`, `color`, `accel`, ...).
pub fn stream_topic(stream: &str, index: u32) -> String {
    match stream {
        "infrared" => format!("infra{index}"),
        other => other.to_string(),
    }
}

fn optical_frame(stream: &str, index: u32) -> String {
    format!("camera_{}_optical_frame", stream_topic(stream, index))
}

/// The `sensor_msgs` encoding the driver publishes for a format.
fn ros2_encoding(format: &str) -> &str {
    match format {
        "z16" => "16UC1",
        "y8" | "raw8" => "mono8",
        "y16" => "mono16",
        "yuyv" => "yuv422_yuy2",
        other => other,
    }
}

fn stamp(ms: f64) -> [(String, Value); 2] {
    let ns = (ms * 1e6).round() as i64;
    [
        (
            "sec".into(),
            Value::Int32(ns.div_euclid(1_000_000_000) as i32),
        ),
        (
            "nanosec".into(),
            Value::UInt32(ns.rem_euclid(1_000_000_000) as u32),
        ),
    ]
}

fn header(prefix: &str, ms: f64, frame_id: &str) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = stamp(ms)
        .into_iter()
        .map(|(k, v)| (format!("{prefix}header.stamp.{k}"), v))
        .collect();
    out.push((format!("{prefix}header.frame_id"), Value::string(frame_id)));
    out
}

fn f64s(values: &[f64]) -> Value {
    Value::Array(values.iter().map(|&v| Value::Float64(v)).collect())
}

/// Converts `input` (a RealSense `.bag` or `.db3`) into a ROS 2 bag; returns its metadata.
pub fn convert(input: &Path, output: BagWriterOptions) -> Result<BagMetadata, RealSenseError> {
    let mut rec = Recording::open(input)?;
    let device = rec.device().clone();
    let fail = |topic: &str, e: CodecError| crate::source::codec(input, topic, e);
    let types = Types::new().map_err(|e| fail("", e))?;
    let mut writer = BagWriter::create(output)?;
    let mut created: HashMap<String, Arc<str>> = HashMap::new();
    let mut topic = |writer: &mut BagWriter,
                     name: String,
                     type_name: &str,
                     latched: bool|
     -> Result<Arc<str>, RealSenseError> {
        if let Some(t) = created.get(&name) {
            return Ok(t.clone());
        }
        let mut meta = TopicMetadata::new(name.clone(), type_name);
        if latched {
            meta.offered_qos_profiles.push(QosProfile {
                history: History::KeepLast,
                depth: 1,
                durability: Durability::TransientLocal,
                ..QosProfile::default()
            });
        }
        writer.create_topic(&meta, Some(types.by_name[type_name].2.clone()))?;
        let t: Arc<str> = name.as_str().into();
        created.insert(name, t.clone());
        Ok(t)
    };
    let start = rec.time_range().0;
    // Extrinsics: from each stream's reference (the first stream's group) to the stream.
    let mut transforms = Vec::new();
    let streams: Vec<&StreamProfile> = device.sensors.iter().flat_map(|s| &s.streams).collect();
    if let Some(base) = streams.iter().find(|p| p.extrinsics.is_some()) {
        for p in &streams {
            if std::ptr::eq(*p, *base) {
                continue;
            }
            let Some(t) = device.extrinsics((&base.stream, base.index), (&p.stream, p.index))
            else {
                continue;
            };
            transforms.push((
                optical_frame(&base.stream, base.index),
                optical_frame(&p.stream, p.index),
                t,
            ));
        }
    }
    if !transforms.is_empty() {
        let (reg, index, _) = &types.by_name["tf2_msgs/msg/TFMessage"];
        let mut value = reg.default_value(*index);
        let mut items = Vec::new();
        for (parent, child, t) in &transforms {
            let ts = reg
                .index_of("geometry_msgs/TransformStamped")
                .ok_or_else(|| {
                    fail(
                        "/tf_static",
                        CodecError::Missing("geometry_msgs/TransformStamped".into()),
                    )
                })?;
            let mut item = reg.default_value(ts);
            let q = quaternion(&t.rotation);
            let mut fill = header("", 0.0, parent);
            fill.push(("child_frame_id".into(), Value::string(child)));
            for (i, axis) in ["x", "y", "z"].iter().enumerate() {
                fill.push((
                    format!("transform.translation.{axis}"),
                    Value::Float64(t.translation[i]),
                ));
                fill.push((format!("transform.rotation.{axis}"), Value::Float64(q[i])));
            }
            fill.push(("transform.rotation.w".into(), Value::Float64(q[3])));
            for (path, v) in fill {
                reg.set(ts, &mut item, &path, v)
                    .map_err(|e| fail("/tf_static", e))?;
            }
            items.push(item);
        }
        reg.set(*index, &mut value, "transforms", Value::Array(items))
            .map_err(|e| fail("/tf_static", e))?;
        let data = encode_cdr_at(reg, *index, &value, CdrHeader::default())
            .map_err(|e| fail("/tf_static", e))?;
        let t = topic(
            &mut writer,
            "/tf_static".into(),
            "tf2_msgs/msg/TFMessage",
            true,
        )?;
        writer.write(&SerializedMessage::new(t, start, data))?;
    }
    while let Some(frame) = rec.next_frame()? {
        let name = stream_topic(&frame.stream, frame.index);
        let frame_id = optical_frame(&frame.stream, frame.index);
        let ns = format!("{NAMESPACE}/{name}");
        let mut out: Vec<(String, &str, Vec<u8>)> = Vec::new();
        match &frame.payload {
            Payload::Video {
                width,
                height,
                stride,
                format,
                data,
            } => {
                let image_topic = if frame.stream == "color" {
                    "image_raw"
                } else {
                    "image_rect_raw"
                };
                let mut fill = header("", frame.timestamp_ms, &frame_id);
                fill.extend([
                    ("height".into(), Value::UInt32(*height)),
                    ("width".into(), Value::UInt32(*width)),
                    ("encoding".into(), Value::string(ros2_encoding(format))),
                    ("step".into(), Value::UInt32(*stride)),
                    ("data".into(), Value::Bytes(data.to_vec())),
                ]);
                let fill: Vec<(&str, Value)> =
                    fill.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                out.push((
                    format!("{ns}/{image_topic}"),
                    "sensor_msgs/msg/Image",
                    types
                        .encode("sensor_msgs/msg/Image", &fill)
                        .map_err(|e| fail(&ns, e))?,
                ));
                if let Some(i) = device
                    .profile(&frame.stream, frame.index)
                    .and_then(|p| p.intrinsics.clone())
                {
                    let mut fill = header("", frame.timestamp_ms, &frame_id);
                    let mut d = i.coeffs.clone();
                    d.resize(5, 0.0);
                    fill.extend([
                        ("height".into(), Value::UInt32(i.height)),
                        ("width".into(), Value::UInt32(i.width)),
                        ("distortion_model".into(), Value::string("plumb_bob")),
                        ("d".into(), f64s(&d)),
                        (
                            "k".into(),
                            f64s(&[i.fx, 0.0, i.ppx, 0.0, i.fy, i.ppy, 0.0, 0.0, 1.0]),
                        ),
                        (
                            "r".into(),
                            f64s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]),
                        ),
                        (
                            "p".into(),
                            f64s(&[
                                i.fx, 0.0, i.ppx, 0.0, 0.0, i.fy, i.ppy, 0.0, 0.0, 0.0, 1.0, 0.0,
                            ]),
                        ),
                    ]);
                    let fill: Vec<(&str, Value)> =
                        fill.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                    out.push((
                        format!("{ns}/camera_info"),
                        "sensor_msgs/msg/CameraInfo",
                        types
                            .encode("sensor_msgs/msg/CameraInfo", &fill)
                            .map_err(|e| fail(&ns, e))?,
                    ));
                }
            }
            Payload::Motion { xyz } => {
                let field = imu_field(&frame.stream);
                let mut fill = header("", frame.timestamp_ms, &frame_id);
                for (axis, v) in ["x", "y", "z"].iter().zip(xyz) {
                    fill.push((format!("{field}.{axis}"), Value::Float64(*v)));
                }
                let fill: Vec<(&str, Value)> =
                    fill.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                out.push((
                    format!("{ns}/sample"),
                    "sensor_msgs/msg/Imu",
                    types
                        .encode("sensor_msgs/msg/Imu", &fill)
                        .map_err(|e| fail(&ns, e))?,
                ));
            }
            Payload::Pose(p) => {
                // As realsense2_camera publishes a tracking camera's pose: nav_msgs/Odometry on
                // `pose/sample`, from `odom_frame` to the pose frame.
                let mut fill = header("", frame.timestamp_ms, "odom_frame");
                fill.push(("child_frame_id".into(), Value::string("camera_pose_frame")));
                let parts: [(&str, &[f64]); 4] = [
                    ("pose.pose.position", &p.translation),
                    ("pose.pose.orientation", &p.rotation),
                    ("twist.twist.linear", &p.velocity),
                    ("twist.twist.angular", &p.angular_velocity),
                ];
                for (prefix, values) in parts {
                    for (axis, v) in ["x", "y", "z", "w"].iter().zip(values) {
                        fill.push((format!("{prefix}.{axis}"), Value::Float64(*v)));
                    }
                }
                let fill: Vec<(&str, Value)> =
                    fill.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                out.push((
                    format!("{ns}/sample"),
                    "nav_msgs/msg/Odometry",
                    types
                        .encode("nav_msgs/msg/Odometry", &fill)
                        .map_err(|e| fail(&ns, e))?,
                ));
            }
        }
        let mut json = format!(
            "{{\"frame_number\":{},\"clock_domain\":\"{}\",\"frame_timestamp\":{}",
            frame.number, frame.domain, frame.timestamp_ms
        );
        for (k, v) in &frame.metadata {
            json += &format!(",\"{k}\":{v}");
        }
        json.push('}');
        let mut fill = header("", frame.timestamp_ms, &frame_id);
        fill.push(("json_data".into(), Value::string(&json)));
        let fill: Vec<(&str, Value)> = fill.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        out.push((
            format!("{ns}/metadata"),
            METADATA_TYPE,
            types
                .encode(METADATA_TYPE, &fill)
                .map_err(|e| fail(&ns, e))?,
        ));
        for (name, type_name, data) in out {
            let t = topic(&mut writer, name, type_name, false)?;
            writer.write(&SerializedMessage::new(t, frame.recorded_ns, data))?;
        }
    }
    Ok(writer.close()?)
}

/// The RealSense stream a ROS 2 topic carries, from the driver's names (`.../depth/...`,
/// `.../infra1/...`, `.../color/...`, `.../accel/...`, `.../gyro/...`; an `Imu` topic with
/// neither `accel` nor `gyro` in its name feeds both).
fn stream_of(topic: &str, imu: bool) -> Vec<(&'static str, u32)> {
    let lower = topic.to_ascii_lowercase();
    if imu {
        return match (lower.contains("accel"), lower.contains("gyro")) {
            (true, _) => vec![("accel", 0)],
            (_, true) => vec![("gyro", 0)],
            _ => vec![("accel", 0), ("gyro", 0)],
        };
    }
    if lower.contains("depth") {
        vec![("depth", 0)]
    } else if let Some(i) = lower.find("infra") {
        let digits: String = lower[i + 5..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        vec![("infrared", digits.parse().unwrap_or(1))]
    } else {
        vec![("color", 0)]
    }
}

/// The `rs2_format` of a `sensor_msgs` image encoding on `stream`.
fn format_of(encoding: &str, stream: &str) -> String {
    match encoding {
        "16UC1" | "mono16" if stream == "depth" => "z16".into(),
        "16UC1" | "mono16" => "y16".into(),
        "mono8" | "8UC1" => "y8".into(),
        "yuv422" | "yuv422_yuy2" => "yuyv".into(),
        other => other.to_ascii_lowercase(),
    }
}

/// The sensor of the SDK's usual topology a stream belongs to: (index, name).
fn sensor_of(stream: &str) -> (u32, &'static str) {
    match stream {
        "depth" | "infrared" => (0, "Stereo Module"),
        "color" => (1, "RGB Camera"),
        _ => (2, "Motion Module"),
    }
}

/// What a camera topic of a ROS 2 bag carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CameraKind {
    Image,
    CameraInfo,
    Imu,
}

/// A camera topic: its decoder and the RealSense streams it feeds.
struct CameraTopic {
    reg: Registry,
    index: usize,
    kind: CameraKind,
    streams: Vec<(&'static str, u32)>,
}

/// One decoded camera message.
struct CameraMessage<'a> {
    view: rosbag2_rs_codec::msg::MessageView<'a>,
    stamp_ms: f64,
}

fn camera_topics(
    path: &Path,
    reader: &rosbag2_rs_storage::SequentialReader,
) -> Result<HashMap<String, CameraTopic>, RealSenseError> {
    let mut cache = MessageDefinitionCache::new();
    let mut topics = HashMap::new();
    for t in reader.topics() {
        let type_name = t.topic_metadata.type_name.as_str();
        let kind = match type_name {
            "sensor_msgs/msg/Image" => CameraKind::Image,
            "sensor_msgs/msg/CameraInfo" => CameraKind::CameraInfo,
            "sensor_msgs/msg/Imu" => CameraKind::Imu,
            _ => continue,
        };
        let def = reader.message_definition(type_name, &mut cache);
        let mut reg = Registry::new();
        reg.parse_concatenated(type_name, &def.encoded_message_definition, Dialect::Ros2)
            .map_err(|e| crate::source::codec(path, &t.topic_metadata.name, e))?;
        let index = reg.index_of(type_name).unwrap_or_default();
        let streams = stream_of(&t.topic_metadata.name, kind == CameraKind::Imu);
        topics.insert(
            t.topic_metadata.name.clone(),
            CameraTopic {
                reg,
                index,
                kind,
                streams,
            },
        );
    }
    Ok(topics)
}

fn decode<'a>(topic: &'a CameraTopic, value: &'a Value) -> CameraMessage<'a> {
    let view = rosbag2_rs_codec::msg::MessageView::new(&topic.reg, topic.index, value);
    let stamp_ms = view
        .message("header")
        .and_then(|h| h.message("stamp"))
        .map_or(0.0, |s| {
            s.number("sec").unwrap_or(0.0) * 1e3 + s.number("nanosec").unwrap_or(0.0) / 1e6
        });
    CameraMessage { view, stamp_ms }
}

/// The stream profile of `stream` in `device`, created in the SDK's usual topology if new.
fn profile_mut<'a>(device: &'a mut Device, stream: &str, index: u32) -> &'a mut StreamProfile {
    let (sensor_index, sensor_name) = sensor_of(stream);
    let at = match device.sensors.iter().position(|s| s.index == sensor_index) {
        Some(i) => i,
        None => {
            device.sensors.push(Sensor {
                index: sensor_index,
                info: vec![("Name".into(), sensor_name.into())],
                ..Sensor::default()
            });
            device.sensors.sort_by_key(|s| s.index);
            device
                .sensors
                .iter()
                .position(|s| s.index == sensor_index)
                .unwrap_or(0)
        }
    };
    let streams = &mut device.sensors[at].streams;
    let at = match streams
        .iter()
        .position(|p| p.stream == stream && p.index == index)
    {
        Some(i) => i,
        None => {
            streams.push(StreamProfile {
                stream: stream.into(),
                index,
                fps: 30,
                ..StreamProfile::default()
            });
            streams.len() - 1
        }
    };
    &mut streams[at]
}

/// The first pass: the device description (formats and sizes from the images, intrinsics from
/// the camera infos, fps from the device timestamps).
fn describe(m: &CameraMessage, kind: CameraKind, profile: &mut StreamProfile) {
    let v = &m.view;
    match kind {
        CameraKind::CameraInfo => {
            let k = v.field("k").and_then(|k| k.as_f64s()).unwrap_or_default();
            if k.len() == 9
                && profile
                    .intrinsics
                    .as_ref()
                    .is_none_or(|i| i.model == "none")
            {
                profile.intrinsics = Some(Intrinsics {
                    width: v.number("width").unwrap_or(0.0) as u32,
                    height: v.number("height").unwrap_or(0.0) as u32,
                    fx: k[0],
                    fy: k[4],
                    ppx: k[2],
                    ppy: k[5],
                    model: "brown_conrady".into(),
                    coeffs: v.field("d").and_then(|d| d.as_f64s()).unwrap_or_default(),
                });
            }
        }
        CameraKind::Image => {
            let (width, height) = (
                v.number("width").unwrap_or(0.0) as u32,
                v.number("height").unwrap_or(0.0) as u32,
            );
            if profile.format.is_empty() {
                profile.format =
                    format_of(&v.text("encoding").unwrap_or_default(), &profile.stream);
            }
            // Without a CameraInfo: a centred pinhole (replaced when one comes).
            profile.intrinsics.get_or_insert_with(|| Intrinsics {
                width,
                height,
                ppx: width as f64 / 2.0,
                ppy: height as f64 / 2.0,
                fx: width as f64,
                fy: width as f64,
                model: "none".into(),
                coeffs: vec![0.0; 5],
            });
        }
        CameraKind::Imu => {
            profile.format = "motion_xyz32f".into();
            profile
                .motion_intrinsics
                .get_or_insert_with(|| MotionIntrinsics {
                    data: vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                    noise_variances: vec![0.0; 3],
                    bias_variances: vec![0.0; 3],
                });
        }
    }
}

/// The second pass: one frame of `stream` from an image or IMU message.
fn frame_of(
    m: &CameraMessage,
    kind: CameraKind,
    profile: &StreamProfile,
    sensor: u32,
    number: u64,
    recorded_ns: i64,
) -> Option<Frame> {
    let v = &m.view;
    let payload = match kind {
        CameraKind::CameraInfo => return None,
        CameraKind::Image => Payload::Video {
            width: v.number("width").unwrap_or(0.0) as u32,
            height: v.number("height").unwrap_or(0.0) as u32,
            stride: v.number("step").unwrap_or(0.0) as u32,
            format: profile.format.clone(),
            data: match v.field("data") {
                Some(Value::Bytes(b)) => bytes::Bytes::from(b.clone()),
                _ => return None,
            },
        },
        CameraKind::Imu => motion_payload(v, &profile.stream),
    };
    Some(Frame {
        sensor,
        stream: profile.stream.clone(),
        index: profile.index,
        number,
        timestamp_ms: m.stamp_ms,
        domain: "system_time".into(),
        recorded_ns,
        metadata: Vec::new(),
        payload,
    })
}

/// Turns the camera topics of rosbag2 bags (`Image`, their `CameraInfo`, `Imu`; streams named
/// as the `realsense2_camera` driver names them) into a RealSense recording the SDK and the
/// RealSense Viewer open: a `.bag`, or SDK 2.58's `.db3` layout when `output` ends in `.db3`.
/// Returns the number of frames written.
pub fn from_ros2(
    inputs: &[std::path::PathBuf],
    output: &Path,
    compression: rosbag2_rs_storage::CompressionFormat,
) -> Result<u64, RealSenseError> {
    use rosbag2_rs_codec::msg::decode_cdr_at;
    let path = inputs.first().cloned().unwrap_or_default();
    let invalid = |topic: &str, reason: String| RealSenseError::Invalid {
        path: path.clone(),
        topic: topic.to_string(),
        reason,
    };
    let mut reader = rosbag2_rs_storage::SequentialReader::open_many(inputs)?;
    let topics = camera_topics(&path, &reader)?;
    if !topics.values().any(|t| t.kind != CameraKind::CameraInfo) {
        return Err(RealSenseError::Missing {
            path,
            what: "no sensor_msgs Image or Imu topic to convert".into(),
        });
    }
    let start = reader.start_time();
    let mut device = Device {
        file_version: 4,
        info: vec![
            ("Name".into(), "ROS 2 camera (rosbag2-rs)".into()),
            ("Serial Number".into(), "0".into()),
        ],
        sensors: Vec::new(),
        additional_info: Vec::new(),
    };
    // First pass: the description, and per stream the first and last device timestamp (ms)
    // and the frame count, for its fps.
    let mut span: HashMap<(&'static str, u32), (f64, f64, u64)> = HashMap::new();
    while let Some(msg) = reader.read_next()? {
        let Some(topic) = topics.get(&*msg.topic) else {
            continue;
        };
        let (value, _) = decode_cdr_at(&topic.reg, topic.index, &msg.data)
            .map_err(|e| crate::source::codec(&path, &msg.topic, e))?;
        let m = decode(topic, &value);
        for &(stream, index) in &topic.streams {
            describe(&m, topic.kind, profile_mut(&mut device, stream, index));
            if topic.kind != CameraKind::CameraInfo {
                let e = span
                    .entry((stream, index))
                    .or_insert((m.stamp_ms, m.stamp_ms, 0));
                e.1 = m.stamp_ms;
                e.2 += 1;
            }
        }
    }
    for p in device.sensors.iter_mut().flat_map(|s| &mut s.streams) {
        if let Some(&(first, last, n)) = span.get(&(p.stream.as_str(), p.index)) {
            if n > 1 && last > first {
                p.fps = ((n - 1) as f64 * 1e3 / (last - first)).round().max(1.0) as u32;
            }
        }
    }
    // Second pass: the frames, written as they are read.
    let mut writer = crate::RecordingWriter::create_for_path(output, &device, compression)?;
    reader.seek(i64::MIN)?;
    let mut numbers: HashMap<(&'static str, u32), u64> = HashMap::new();
    let mut written = 0;
    while let Some(msg) = reader.read_next()? {
        let Some(topic) = topics.get(&*msg.topic) else {
            continue;
        };
        if topic.kind == CameraKind::CameraInfo {
            continue;
        }
        let (value, _) = decode_cdr_at(&topic.reg, topic.index, &msg.data)
            .map_err(|e| crate::source::codec(&path, &msg.topic, e))?;
        let m = decode(topic, &value);
        for &(stream, index) in &topic.streams {
            let Some(profile) = device.profile(stream, index) else {
                continue;
            };
            let number = numbers.entry((stream, index)).or_insert(0);
            *number += 1;
            let sensor = sensor_of(stream).0;
            let frame = frame_of(
                &m,
                topic.kind,
                profile,
                sensor,
                *number,
                msg.recv_timestamp - start + 2,
            )
            .ok_or_else(|| invalid(&msg.topic, "image without data".into()))?;
            writer.write_frame(&frame)?;
            written += 1;
        }
    }
    writer.finish()?;
    Ok(written)
}
