//! Writing the rosbag2 SQLite3 layout SDK 2.58 and newer record (`.db3`): one file, CDR
//! messages, the description packed into `std_msgs/msg/String`s (`encoding=Z16;fps=30`) at time
//! 0, images as `sensor_msgs/msg/CompressedImage` (PNG, a `compressedDepth` PNG for depth, zstd
//! for the formats PNG has no layout for) with a per-frame `CameraInfo`, motion samples as
//! `sensor_msgs/msg/Imu`, frame metadata packed into a `String`, option changes as `String`s
//! on the option's value topic at their time. Topic names, types and texts are those of files
//! recorded by pyrealsense2 2.59.1.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rosbag2_rs_codec::msg::{encode_cdr_at, CdrHeader, Value};
use rosbag2_rs_storage::storage::{create_writer, StorageId, StorageWriter, WriterOptions};
use rosbag2_rs_storage::{SerializedMessage, TopicMetadata};

use crate::error::{ImageError, RealSenseError};
use crate::model::*;
use crate::ros2_types::Types;

const UINT32: &str = "std_msgs/msg/UInt32";
const STRING: &str = "std_msgs/msg/String";
const COMPRESSED: &str = "sensor_msgs/msg/CompressedImage";
const CAMERA_INFO: &str = "sensor_msgs/msg/CameraInfo";
const IMU: &str = "sensor_msgs/msg/Imu";
const TF: &str = "tf2_msgs/msg/TFMessage";
const TYPES: [&str; 6] = [UINT32, STRING, COMPRESSED, CAMERA_INFO, IMU, TF];

/// The QoS the SDK's recorder gives `/tf_static` (the only topic it gives one).
const TF_STATIC_QOS: &str = "- history: 1\n  depth: 1\n  reliability: 1\n  durability: 1\n  \
     deadline:\n    sec: 0\n    nsec: 0\n  lifespan:\n    sec: 0\n    nsec: 0\n  liveliness: 0\n  \
     liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  avoid_ros_namespace_conventions: false";

/// The SDK's description of the frame queue size option.
const FRAMES_QUEUE_SIZE: &str = "Max number of frames you can hold at a given time. Increasing \
     this number will reduce frame drops but increase latency, and vice versa";

/// The rosbag2 layout of a recording being written.
pub(crate) struct Db3Layout {
    path: PathBuf,
    out: Box<dyn StorageWriter>,
    types: Types,
    topics: HashMap<String, Arc<str>>,
    device: Device,
    /// Event kinds the layout has no topic for, warned about once.
    warned: HashSet<&'static str>,
}

/// A number as the SDK's recorder writes it (`%f`), with more digits when six decimals would
/// not give the same number back.
fn fixed6(v: f64) -> String {
    let six = format!("{v:.6}");
    if six.parse::<f64>().ok() == Some(v) {
        six
    } else {
        format!("{v}")
    }
}

/// A single-precision value as [`fixed6`] writes a double: six decimals when they read back as
/// the same `float`.
fn fixed6_f32(v: f32) -> String {
    let six = format!("{v:.6}");
    if six.parse::<f32>().ok() == Some(v) {
        six
    } else {
        format!("{v}")
    }
}

/// A single-precision value of the SDK, in the fewest digits that read back as it.
fn single(v: f64) -> String {
    format!("{}", v as f32)
}

fn list(values: &[f64]) -> String {
    values
        .iter()
        .map(|&v| single(v))
        .collect::<Vec<_>>()
        .join(",")
}

/// `a=1;b=2`, the layout's way of packing fields into a string.
fn pack(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The frame id the SDK gives a stream's messages: `Depth`, `Infrared1`, `Color`, `Accel`.
fn frame_id(stream: &str, index: u32) -> String {
    match index {
        0 => stream_name(stream),
        i => format!("{}{i}", stream_name(stream)),
    }
}

/// The `CompressedImage` of a video frame: its topic suffix, format text and data.
fn compress(
    width: u32,
    height: u32,
    stride: u32,
    format: &str,
    data: &[u8],
) -> Result<(&'static str, String, Vec<u8>), ImageError> {
    let png = |encoding: &str| {
        rosbag2_rs_codec::image::pixels_to_png(
            width,
            height,
            encoding,
            false,
            stride as usize,
            data,
        )
        .map_err(ImageError::Png)
    };
    // (PNG layout, the SDK's format text): rgb8 is compressed as image_transport's bgr8.
    let (encoding, text) = match format {
        "z16" => {
            // image_transport's compressedDepth header (zeros for 16-bit depth), then the PNG.
            let mut bytes = vec![0u8; 12];
            bytes.extend(png("16UC1")?);
            return Ok((
                "compressedDepth",
                "16UC1; compressedDepth png".into(),
                bytes,
            ));
        }
        "y8" => ("mono8", "mono8; png compressed mono8"),
        "y16" => ("mono16", "mono16; png compressed mono16"),
        "rgb8" => ("rgb8", "rgb8; png compressed bgr8"),
        "bgr8" => ("bgr8", "bgr8; png compressed bgr8"),
        "rgba8" => ("rgba8", "rgba8; png compressed bgra8"),
        "bgra8" => ("bgra8", "bgra8; png compressed bgra8"),
        other => {
            let bytes = rosbag2_rs_storage::compression::zstd::compress_message(data)
                .map_err(ImageError::Zstd)?;
            let text = format!(
                "{}; zstd; {width}x{height} step={stride}",
                other.to_ascii_uppercase()
            );
            return Ok(("compressed", text, bytes));
        }
    };
    Ok(("compressed", text.to_string(), png(encoding)?))
}

impl Db3Layout {
    /// Creates `path` (it must not exist) and writes the device description.
    pub(crate) fn create(path: &Path, device: &Device) -> Result<Self, RealSenseError> {
        if let Some(p) = device
            .sensors
            .iter()
            .flat_map(|s| &s.streams)
            .find(|p| p.stream == "pose")
        {
            return Err(RealSenseError::Unsupported {
                path: path.to_path_buf(),
                what: format!(
                    "pose stream {}: the SDK's .db3 layout records no pose frames; write a .bag",
                    p.index
                ),
            });
        }
        let types = Types::of(&TYPES).map_err(|e| crate::source::codec(path, "", e))?;
        let out = create_writer(
            path.to_path_buf(),
            &WriterOptions {
                storage: StorageId::Sqlite3,
                ..WriterOptions::default()
            },
        )?;
        let mut layout = Self {
            path: path.to_path_buf(),
            out,
            types,
            topics: HashMap::new(),
            device: device.clone(),
            warned: HashSet::new(),
        };
        layout.write_description()?;
        Ok(layout)
    }

    fn codec(&self, topic: &str, e: rosbag2_rs_codec::msg::CodecError) -> RealSenseError {
        crate::source::codec(&self.path, topic, e)
    }

    /// A message of `type_name` built by `fill` from the type's zero value.
    fn value(
        &self,
        topic: &str,
        type_name: &'static str,
        fill: &[(&str, Value)],
    ) -> Result<Value, RealSenseError> {
        let (reg, index, _) = &self.types.by_name[type_name];
        let mut value = reg.default_value(*index);
        for (path, v) in fill {
            reg.set(*index, &mut value, path, v.clone())
                .map_err(|e| self.codec(topic, e))?;
        }
        Ok(value)
    }

    /// Writes `value` of `type_name` on `topic` at `time_ns`.
    fn put_value(
        &mut self,
        topic: &str,
        type_name: &'static str,
        time_ns: i64,
        value: &Value,
    ) -> Result<(), RealSenseError> {
        let (reg, index, def) = &self.types.by_name[type_name];
        let data = encode_cdr_at(reg, *index, value, CdrHeader::default())
            .map_err(|e| self.codec(topic, e))?;
        let name = match self.topics.get(topic) {
            Some(t) => t.clone(),
            None => {
                let qos = if topic == "/tf_static" {
                    rosbag2_rs_storage::qos::parse_profiles(TF_STATIC_QOS).unwrap_or_default()
                } else {
                    Vec::new()
                };
                let meta = TopicMetadata {
                    name: topic.to_string(),
                    type_name: type_name.to_string(),
                    serialization_format: "cdr".into(),
                    offered_qos_profiles: qos,
                    type_description_hash: String::new(),
                };
                self.out.create_topic(&meta, def)?;
                let t: Arc<str> = topic.into();
                self.topics.insert(topic.to_string(), t.clone());
                t
            }
        };
        self.out
            .write(&SerializedMessage::new(name, time_ns, data))?;
        Ok(())
    }

    fn put(
        &mut self,
        topic: &str,
        type_name: &'static str,
        time_ns: i64,
        fill: &[(&str, Value)],
    ) -> Result<(), RealSenseError> {
        let value = self.value(topic, type_name, fill)?;
        self.put_value(topic, type_name, time_ns, &value)
    }

    fn text(&mut self, topic: &str, time_ns: i64, text: &str) -> Result<(), RealSenseError> {
        self.put(topic, STRING, time_ns, &[("data", Value::string(text))])
    }

    fn write_description(&mut self) -> Result<(), RealSenseError> {
        // The SDK writes the description at time 0, the frames after it.
        const T: i64 = 0;
        let device = self.device.clone();
        self.put("/file_version", UINT32, T, &[("data", Value::UInt32(4))])?;
        for s in &device.sensors {
            for p in &s.streams {
                let base = stream_base(s.index, &p.stream, p.index);
                self.text(
                    &format!("{base}/info"),
                    T,
                    &format!("encoding={};fps={}", p.format.to_ascii_uppercase(), p.fps),
                )?;
                if let Some(i) = &p.intrinsics {
                    let text = format!(
                        "width={};height={};fx={};ppx={};fy={};ppy={};model={};coeffs={}",
                        i.width,
                        i.height,
                        single(i.fx),
                        single(i.ppx),
                        single(i.fy),
                        single(i.ppy),
                        title_case(&i.model),
                        list(&i.coeffs)
                    );
                    self.text(&format!("{base}/camera_info"), T, &text)?;
                }
                if let Some(m) = &p.motion_intrinsics {
                    let text = format!(
                        "data={};bias_variances={};noise_variances={}",
                        list(&m.data),
                        list(&m.bias_variances),
                        list(&m.noise_variances)
                    );
                    self.text(&format!("{base}/imu_intrinsic"), T, &text)?;
                }
            }
        }
        self.text("/device_0/info", T, &pack(&device.info))?;
        if !device.additional_info.is_empty() {
            self.text("/additional_info", T, &pack(&device.additional_info))?;
        }
        for s in &device.sensors {
            let base = format!("/device_0/sensor_{}", s.index);
            self.text(&format!("{base}/info"), T, &pack(&s.info))?;
            // SDK 2.59 crashes loading a .db3 sensor without options; every sensor of the SDK
            // has a frame queue size, which such a sensor is given (at the SDK's default).
            let queue = SensorOption {
                name: "Frames Queue Size".into(),
                value: 16.0,
                description: FRAMES_QUEUE_SIZE.into(),
                history: Vec::new(),
            };
            let options = match s.options.is_empty() {
                true => std::slice::from_ref(&queue),
                false => &s.options[..],
            };
            for o in options {
                let name = o.name.replace(' ', "_");
                self.text(
                    &format!("{base}/option/{name}/value"),
                    T,
                    &fixed6_f32(o.value),
                )?;
                self.text(
                    &format!("{base}/option/{name}/description"),
                    T,
                    &o.description,
                )?;
            }
        }
        // Extrinsics: a packed reference → stream transform per stream, and the growing
        // `/tf_static` the SDK writes beside them (stream → reference, for ROS tools).
        let mut transforms = Vec::new();
        for s in &device.sensors {
            for p in &s.streams {
                let Some(e) = &p.extrinsics else { continue };
                let topic = format!(
                    "{}/tf/ref_{}",
                    stream_base(s.index, &p.stream, p.index),
                    e.reference
                );
                let t = &e.transform;
                let text = format!(
                    "rotation={};translation={}",
                    list(&t.rotation),
                    list(&t.translation)
                );
                self.text(&topic, T, &text)?;
                transforms.push(self.transform_stamped(
                    &format!("ref_{}", e.reference),
                    &frame_id(&p.stream, p.index),
                    &t.inverse(),
                )?);
                let mut value = self.value("/tf_static", TF, &[])?;
                let (reg, index, _) = &self.types.by_name[TF];
                reg.set(
                    *index,
                    &mut value,
                    "transforms",
                    Value::Array(transforms.clone()),
                )
                .map_err(|e| self.codec("/tf_static", e))?;
                self.put_value("/tf_static", TF, T, &value)?;
            }
        }
        Ok(())
    }

    fn transform_stamped(
        &self,
        parent: &str,
        child: &str,
        t: &Transform,
    ) -> Result<Value, RealSenseError> {
        let (reg, _, _) = &self.types.by_name[TF];
        let missing = || {
            self.codec(
                "/tf_static",
                rosbag2_rs_codec::msg::CodecError::Missing("geometry_msgs/TransformStamped".into()),
            )
        };
        let index = reg
            .index_of("geometry_msgs/msg/TransformStamped")
            .or_else(|| reg.index_of("geometry_msgs/TransformStamped"))
            .ok_or_else(missing)?;
        let mut item = reg.default_value(index);
        let q = quaternion(&t.rotation);
        let mut fill = vec![
            ("header.frame_id", Value::string(parent)),
            ("child_frame_id", Value::string(child)),
        ];
        let axes = ["x", "y", "z"];
        let translation: Vec<String> = axes
            .iter()
            .map(|a| format!("transform.translation.{a}"))
            .collect();
        let rotation: Vec<String> = ["x", "y", "z", "w"]
            .iter()
            .map(|a| format!("transform.rotation.{a}"))
            .collect();
        for (k, name) in translation.iter().enumerate() {
            fill.push((name.as_str(), Value::Float64(t.translation[k])));
        }
        for (k, name) in rotation.iter().enumerate() {
            fill.push((name.as_str(), Value::Float64(q[k])));
        }
        for (path, v) in fill {
            reg.set(index, &mut item, path, v)
                .map_err(|e| self.codec("/tf_static", e))?;
        }
        Ok(item)
    }

    fn depth_units(&self, sensor: u32) -> f32 {
        self.device
            .sensors
            .iter()
            .find(|s| s.index == sensor)
            .and_then(|s| s.options.iter().find(|o| o.name == "Depth Units"))
            .map_or(0.001, |o| o.value)
    }

    /// Appends a frame (its `recorded_ns` must be after the description, i.e. > 0).
    pub(crate) fn write_frame(&mut self, frame: &Frame) -> Result<(), RealSenseError> {
        let base = stream_base(frame.sensor, &frame.stream, frame.index);
        let t = frame.recorded_ns.max(1);
        let id = frame_id(&frame.stream, frame.index);
        let header = [
            (
                "header.stamp.sec",
                Value::Int32(t.div_euclid(1_000_000_000) as i32),
            ),
            (
                "header.stamp.nanosec",
                Value::UInt32(t.rem_euclid(1_000_000_000) as u32),
            ),
            ("header.frame_id", Value::string(&id)),
        ];
        let mut meta = vec![("Frame number".to_string(), frame.number.to_string())];
        meta.push(("timestamp_domain".into(), title_case(&frame.domain)));
        meta.push(("system_time".into(), "0.000000".into()));
        meta.push(("timestamp".into(), fixed6(frame.timestamp_ms)));
        let kind = match &frame.payload {
            Payload::Video {
                width,
                height,
                stride,
                format,
                data,
            } => {
                let topic = format!("{base}/image/data");
                let (suffix, text, bytes) = compress(*width, *height, *stride, format, data)
                    .map_err(|source| RealSenseError::Image {
                        path: self.path.clone(),
                        topic: topic.clone(),
                        source,
                    })?;
                let mut fields = header.to_vec();
                fields.push(("format", Value::string(&text)));
                fields.push(("data", Value::Bytes(bytes)));
                self.put(&format!("{topic}/{suffix}"), COMPRESSED, t, &fields)?;
                if format == "z16" {
                    meta.push((
                        "depth_units".into(),
                        fixed6_f32(self.depth_units(frame.sensor)),
                    ));
                }
                "image"
            }
            Payload::Motion { xyz } => {
                let field = imu_field(&frame.stream);
                let names = [
                    format!("{field}.x"),
                    format!("{field}.y"),
                    format!("{field}.z"),
                ];
                let mut fields = header.to_vec();
                fields.push(("orientation.w", Value::Float64(1.0)));
                let mut covariance = vec![Value::Float64(0.0); 9];
                covariance[0] = Value::Float64(-1.0);
                fields.push(("orientation_covariance", Value::Array(covariance)));
                for (name, v) in names.iter().zip(xyz) {
                    fields.push((name.as_str(), Value::Float64(*v)));
                }
                self.put(&format!("{base}/imu/data"), IMU, t, &fields)?;
                "imu"
            }
            Payload::Pose(_) => {
                return Err(RealSenseError::Unsupported {
                    path: self.path.clone(),
                    what: format!(
                        "{base}: the SDK's .db3 layout records no pose frames; write a .bag"
                    ),
                })
            }
        };
        for (k, v) in &frame.metadata {
            meta.push((title_case(k), v.to_string()));
        }
        // The SDK ends the metadata text with a separator.
        let text = pack(&meta) + ";";
        self.text(&format!("{base}/{kind}/metadata"), t, &text)?;
        let intrinsics = self
            .device
            .profile(&frame.stream, frame.index)
            .and_then(|p| p.intrinsics.clone())
            .filter(|_| kind == "image");
        if let Some(i) = intrinsics {
            let mut d = i.coeffs.clone();
            d.resize(5, 0.0);
            let f64s = |v: &[f64]| Value::Array(v.iter().map(|&x| Value::Float64(x)).collect());
            let mut fields = header.to_vec();
            fields.extend([
                ("height", Value::UInt32(i.height)),
                ("width", Value::UInt32(i.width)),
                ("distortion_model", Value::string("plumb_bob")),
                ("d", f64s(&d)),
                (
                    "k",
                    f64s(&[i.fx, 0.0, i.ppx, 0.0, i.fy, i.ppy, 0.0, 0.0, 1.0]),
                ),
                ("r", f64s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])),
                (
                    "p",
                    f64s(&[
                        i.fx, 0.0, i.ppx, 0.0, 0.0, i.fy, i.ppy, 0.0, 0.0, 0.0, 1.0, 0.0,
                    ]),
                ),
            ]);
            self.put(
                &format!("{base}/image/camera_info"),
                CAMERA_INFO,
                t,
                &fields,
            )?;
        }
        Ok(())
    }

    /// Records an option set while recording: its new value on the option's value topic.
    pub(crate) fn write_option(&mut self, change: &OptionChange) -> Result<(), RealSenseError> {
        let name = change.name.replace(' ', "_");
        let base = format!("/device_0/sensor_{}/option/{name}", change.sensor);
        let known =
            self.device.sensors.iter().any(|s| {
                s.index == change.sensor && s.options.iter().any(|o| o.name == change.name)
            });
        if !known {
            self.text(&format!("{base}/description"), 0, "")?;
        }
        self.text(
            &format!("{base}/value"),
            change.recorded_ns.max(1),
            &fixed6_f32(change.value),
        )
    }

    /// Records a notification, its fields packed as the SDK packs them.
    pub(crate) fn write_notification(&mut self, n: &Notification) -> Result<(), RealSenseError> {
        let text = pack(&[
            ("category".into(), n.category.clone()),
            ("severity".into(), n.severity.clone()),
            ("description".into(), n.description.clone()),
            (
                "timestamp".into(),
                format!("{}", n.timestamp_ns as f64 / 1e6),
            ),
            ("data".into(), n.serialized_data.clone()),
        ]);
        self.text(
            &format!(
                "/device_0/sensor_{}/notification/{}",
                n.sensor,
                n.category.replace(' ', "_")
            ),
            n.recorded_ns.max(1),
            &text,
        )
    }

    /// Records a frame, an option change or a notification; the SDK's `.db3` layout has no
    /// topic for log lines and time samples, which are left out with a warning.
    pub(crate) fn write_event(&mut self, event: &Event) -> Result<(), RealSenseError> {
        match event {
            Event::Frame(f) => self.write_frame(f),
            Event::Option(o) => self.write_option(o),
            Event::Notification(n) => self.write_notification(n),
            Event::Log(_) | Event::Time(_) => {
                let kind = if matches!(event, Event::Log(_)) {
                    "/log messages"
                } else {
                    "sensor time samples"
                };
                if self.warned.insert(kind) {
                    log::warn!(
                        "{}: the SDK's .db3 layout has no topic for {kind}: left out",
                        self.path.display()
                    );
                }
                Ok(())
            }
        }
    }

    /// Finishes the file.
    pub(crate) fn finish(self) -> Result<(), RealSenseError> {
        Ok(self.out.finish()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_the_sdk_writes_them_without_losing_digits() {
        assert_eq!(fixed6(8500.0), "8500.000000");
        assert_eq!(fixed6_f32(0.001), "0.001000");
        assert_eq!(fixed6_f32(1e-7), "0.0000001");
        assert_eq!(fixed6(1000.0), "1000.000000");
        assert_eq!(fixed6(1033.333333), "1033.333333");
        assert_eq!(single(40.0), "40");
        assert_eq!(single(32.25), "32.25");
        assert_eq!(frame_id("infrared", 1), "Infrared1");
        assert_eq!(frame_id("depth", 0), "Depth");
    }

    #[test]
    fn formats_as_the_sdk_compresses_them() {
        let data = vec![7u8; 4 * 2 * 2];
        let (suffix, text, bytes) = compress(4, 2, 8, "z16", &data).unwrap();
        assert_eq!(
            (suffix, text.as_str()),
            ("compressedDepth", "16UC1; compressedDepth png")
        );
        assert_eq!(&bytes[..12], &[0; 12]);
        assert_eq!(&bytes[12..16], b"\x89PNG");
        let (_, text, bytes) = compress(4, 2, 8, "yuyv", &data).unwrap();
        assert_eq!(text, "YUYV; zstd; 4x2 step=8");
        assert!(rosbag2_rs_storage::compression::zstd::is_zstd(&bytes));
        let (_, text, _) = compress(4, 2, 12, "rgb8", &[1u8; 24]).unwrap();
        assert_eq!(text, "rgb8; png compressed bgr8");
        assert!(compress(4, 2, 8, "rgb8", &data).is_err(), "rows too short");
    }
}
