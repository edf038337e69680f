//! A recording as a ROS 2 bag in the topic layout of the `realsense2_camera` driver: per video
//! stream an `Image` (`image_rect_raw` for depth and infrared, `image_raw` for color) and its
//! `CameraInfo`, motion streams as `Imu` on `accel/sample` and `gyro/sample`, frame metadata as
//! `realsense2_camera_msgs/Metadata` (JSON), and the extrinsics on `/tf_static`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rosbag2_rs_storage::msg::{encode_cdr_at, CdrHeader, Dialect, Registry, Value};
use rosbag2_rs_storage::qos::{Durability, History, QosProfile};
use rosbag2_rs_storage::{
    BagMetadata, BagWriter, BagWriterOptions, MessageDefinition, MessageDefinitionCache,
    SerializedMessage, TopicMetadata,
};

use crate::error::RealSenseError;
use crate::model::*;
use crate::reader::Recording;

/// The driver's namespace (`realsense2_camera` 4.x: `/camera/camera`).
pub const NAMESPACE: &str = "/camera/camera";

const METADATA_TYPE: &str = "realsense2_camera_msgs/msg/Metadata";
const METADATA_DEF: &str = "std_msgs/Header header\nstring json_data\n";

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

struct Types {
    by_name: HashMap<String, (Registry, usize, MessageDefinition)>,
}

impl Types {
    fn new() -> Result<Self, String> {
        let mut cache = MessageDefinitionCache::new();
        let mut by_name = HashMap::new();
        for name in [
            "sensor_msgs/msg/Image",
            "sensor_msgs/msg/CameraInfo",
            "sensor_msgs/msg/Imu",
            "tf2_msgs/msg/TFMessage",
            METADATA_TYPE,
        ] {
            let def = if name == METADATA_TYPE {
                let header = cache.definition("std_msgs/msg/Header");
                MessageDefinition {
                    topic_type: name.into(),
                    encoding: "ros2msg".into(),
                    encoded_message_definition: format!(
                        "{METADATA_DEF}================================================================================\nMSG: std_msgs/Header\n{}",
                        header.encoded_message_definition
                    ),
                    type_description_hash: String::new(),
                }
            } else {
                cache.definition(name)
            };
            let mut reg = Registry::new();
            reg.parse_concatenated(name, &def.encoded_message_definition, Dialect::Ros2)
                .map_err(|e| e.to_string())?;
            let index = reg.index_of(name).ok_or("type missing")?;
            by_name.insert(name.to_string(), (reg, index, def));
        }
        Ok(Self { by_name })
    }

    fn encode(&self, name: &str, fill: &[(&str, Value)]) -> Result<Vec<u8>, String> {
        let (reg, index, _) = &self.by_name[name];
        let mut value = reg.default_value(*index);
        for (path, v) in fill {
            reg.set(*index, &mut value, path, v.clone())
                .map_err(|e| e.to_string())?;
        }
        encode_cdr_at(reg, *index, &value, CdrHeader::default()).map_err(|e| e.to_string())
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
    let types = Types::new().map_err(|e| RealSenseError::Missing {
        path: input.to_path_buf(),
        what: format!("the ROS 2 message definitions: {e}"),
    })?;
    let fail = |topic: &str, e: String| RealSenseError::Invalid {
        path: input.to_path_buf(),
        topic: topic.to_string(),
        reason: e,
    };
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
                .ok_or_else(|| fail("/tf_static", "no TransformStamped".into()))?;
            let mut item = reg.default_value(ts);
            let q = crate::writer::quaternion(&t.rotation);
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
                    .map_err(|e| fail("/tf_static", e.to_string()))?;
            }
            items.push(item);
        }
        reg.set(*index, &mut value, "transforms", Value::Array(items))
            .map_err(|e| fail("/tf_static", e.to_string()))?;
        let data = encode_cdr_at(reg, *index, &value, CdrHeader::default())
            .map_err(|e| fail("/tf_static", e.to_string()))?;
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
                let field = if frame.stream == "gyro" {
                    "angular_velocity"
                } else {
                    "linear_acceleration"
                };
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
