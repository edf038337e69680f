//! Writing recordings the RealSense SDK plays: the ROS 1 `.bag` layout of SDK 2.57 (file
//! version 4), with the SDK's own message definitions and md5sums, chunked and LZ4-compressed
//! like the SDK's or uncompressed; or the rosbag2 `.db3` layout of SDK 2.58 and newer
//! ([`crate::db3`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rosbag2_rs_codec::msg::{encode_ros1_at, Dialect, Registry, Value};
use rosbag2_rs_storage::rosbag1::{BagWriter, Connection, WriterOptions};
use rosbag2_rs_storage::CompressionFormat;

use crate::db3::Db3Layout;
use crate::error::RealSenseError;
use crate::model::*;

/// The SDK's definitions, as its recorder writes them: (type, md5sum, text).
const TYPES: &[(&str, &str, &str)] = &[
    (
        "std_msgs/UInt32",
        "304a39449588c7f8ce2df6e8001c5fce",
        include_str!("../msgs/std_msgs__UInt32.msg"),
    ),
    (
        "std_msgs/Float32",
        "73fcbf46b49191e672908e50842a83d4",
        include_str!("../msgs/std_msgs__Float32.msg"),
    ),
    (
        "std_msgs/String",
        "992ce8a1687cec8c8bd883ec73ca41d1",
        include_str!("../msgs/std_msgs__String.msg"),
    ),
    (
        "diagnostic_msgs/KeyValue",
        "cf57fdc6617a881a88c16e768132149c",
        include_str!("../msgs/diagnostic_msgs__KeyValue.msg"),
    ),
    (
        "realsense_msgs/StreamInfo",
        "311d7e24eac31bb87271d041bf70ff7d",
        include_str!("../msgs/realsense_msgs__StreamInfo.msg"),
    ),
    (
        "realsense_msgs/ImuIntrinsic",
        "aebdc2f8f9726f1c3ca823ab56e47429",
        include_str!("../msgs/realsense_msgs__ImuIntrinsic.msg"),
    ),
    (
        "sensor_msgs/CameraInfo",
        "c9a58c1b0b154e0e6da7578cb991d214",
        include_str!("../msgs/sensor_msgs__CameraInfo.msg"),
    ),
    (
        "sensor_msgs/Image",
        "060021388200f6f0f447d0fcd9c64743",
        include_str!("../msgs/sensor_msgs__Image.msg"),
    ),
    (
        "sensor_msgs/Imu",
        "6a62c6daae103f4ff57a132d6f95cec2",
        include_str!("../msgs/sensor_msgs__Imu.msg"),
    ),
    (
        "realsense_msgs/Notification",
        "cdb7a97a510446301f8e6fb67d8cccb0",
        include_str!("../msgs/realsense_msgs__Notification.msg"),
    ),
    (
        "rosgraph_msgs/Log",
        "acffd30cd6b6de30f120938c17c593fb",
        include_str!("../msgs/rosgraph_msgs__Log.msg"),
    ),
    (
        "sensor_msgs/TimeReference",
        "fded64a0265108ba86c3d38fb11c0c16",
        include_str!("../msgs/sensor_msgs__TimeReference.msg"),
    ),
    (
        "geometry_msgs/Accel",
        "9f195f881246fdfa2798d1d3eebca84a",
        include_str!("../msgs/geometry_msgs__Accel.msg"),
    ),
    (
        "geometry_msgs/Twist",
        "9f195f881246fdfa2798d1d3eebca84a",
        include_str!("../msgs/geometry_msgs__Twist.msg"),
    ),
    (
        "geometry_msgs/Transform",
        "ac9eff44abf714214112b05d54a3cf9b",
        include_str!("../msgs/geometry_msgs__Transform.msg"),
    ),
];

fn floats(values: &[f64], f32s: bool) -> Value {
    Value::Array(
        values
            .iter()
            .map(|&v| {
                if f32s {
                    Value::Float32(v as f32)
                } else {
                    Value::Float64(v)
                }
            })
            .collect(),
    )
}

fn time(ms: f64) -> Value {
    let ns = (ms * 1e6).round().max(0.0) as i64;
    Value::Time {
        sec: (ns / 1_000_000_000) as u32,
        nsec: (ns % 1_000_000_000) as u32,
    }
}

/// A recording being written, in either of the SDK's layouts.
pub struct RecordingWriter(Layout);

enum Layout {
    Bag(Box<BagLayout>),
    Db3(Box<Db3Layout>),
}

impl RecordingWriter {
    /// Creates `path` (a `.bag`; it must not exist) in the ROS 1 layout of SDK 2.57 and writes
    /// the device description.
    pub fn create(
        path: &Path,
        device: &Device,
        compression: CompressionFormat,
    ) -> Result<Self, RealSenseError> {
        Ok(Self(Layout::Bag(Box::new(BagLayout::create(
            path,
            device,
            compression,
        )?))))
    }

    /// Creates `path` (a `.db3`; it must not exist) in the rosbag2 SQLite3 layout SDK 2.58 and
    /// newer record and play, and writes the device description. The layout has no pose
    /// frames ([`RealSenseError::Unsupported`]), `/log` or time stream (left out).
    pub fn create_db3(path: &Path, device: &Device) -> Result<Self, RealSenseError> {
        Ok(Self(Layout::Db3(Box::new(Db3Layout::create(
            path, device,
        )?))))
    }

    /// [`create_db3`](Self::create_db3) when `path` ends in `.db3`, else
    /// [`create`](Self::create) with `compression`.
    pub fn create_for_path(
        path: &Path,
        device: &Device,
        compression: CompressionFormat,
    ) -> Result<Self, RealSenseError> {
        if is_db3_path(path) {
            Self::create_db3(path, device)
        } else {
            Self::create(path, device, compression)
        }
    }

    /// Appends a frame (recorded after the description: `recorded_ns` > 1).
    pub fn write_frame(&mut self, frame: &Frame) -> Result<(), RealSenseError> {
        match &mut self.0 {
            Layout::Bag(w) => w.write_frame(frame),
            Layout::Db3(w) => w.write_frame(frame),
        }
    }

    /// Records an option set while recording, as the SDK's recorder does (`write_snapshot` of
    /// the options): its new value at `recorded_ns` (after the description, i.e. > 1).
    pub fn write_option(&mut self, change: &OptionChange) -> Result<(), RealSenseError> {
        match &mut self.0 {
            Layout::Bag(w) => w.write_option(change),
            Layout::Db3(w) => w.write_option(change),
        }
    }

    /// Records a notification (`/device_0/sensor_<s>/notification/<category>`).
    pub fn write_notification(&mut self, n: &Notification) -> Result<(), RealSenseError> {
        match &mut self.0 {
            Layout::Bag(w) => w.write_notification(n),
            Layout::Db3(w) => w.write_notification(n),
        }
    }

    /// Records a frame, an option change, a notification, a log line or a time sample.
    pub fn write_event(&mut self, event: &Event) -> Result<(), RealSenseError> {
        match &mut self.0 {
            Layout::Bag(w) => w.write_event(event),
            Layout::Db3(w) => w.write_event(event),
        }
    }

    /// Finishes the file (the `.bag`'s index and chunk infos; the `.db3`'s last transaction).
    pub fn finish(self) -> Result<(), RealSenseError> {
        match self.0 {
            Layout::Bag(w) => w.finish(),
            Layout::Db3(w) => w.finish(),
        }
    }
}

/// True when `path` names a rosbag2 SQLite3 file (`*.db3`).
pub fn is_db3_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("db3"))
}

/// The ROS 1 layout of a recording being written.
struct BagLayout {
    path: PathBuf,
    bag: BagWriter,
    types: HashMap<&'static str, (Registry, usize)>,
    connections: HashMap<String, u32>,
    device: Device,
}

impl BagLayout {
    /// Creates `path` (a `.bag`; it must not exist) and writes the device description.
    fn create(
        path: &Path,
        device: &Device,
        compression: CompressionFormat,
    ) -> Result<Self, RealSenseError> {
        let bag = BagWriter::create(
            path,
            WriterOptions {
                compression,
                ..WriterOptions::default()
            },
        )?;
        let mut types = HashMap::new();
        for (name, _, text) in TYPES {
            let mut reg = Registry::new();
            reg.parse_concatenated(name, text, Dialect::Ros1)
                .map_err(|e| crate::source::codec(path, name, e))?;
            let index = reg.index_of(name).unwrap_or_default();
            types.insert(*name, (reg, index));
        }
        let mut writer = Self {
            path: path.to_path_buf(),
            bag,
            types,
            connections: HashMap::new(),
            device: device.clone(),
        };
        writer.write_description()?;
        Ok(writer)
    }

    /// Writes one message of `type_name`, built by `fill` from the type's zero value.
    fn put(
        &mut self,
        topic: &str,
        type_name: &'static str,
        time_ns: i64,
        fill: &[(&str, Value)],
    ) -> Result<(), RealSenseError> {
        self.put_with_tail(topic, type_name, time_ns, fill, &[])
    }

    /// [`put`](Self::put), with bytes after the message (the SDK appends a float to images).
    fn put_with_tail(
        &mut self,
        topic: &str,
        type_name: &'static str,
        time_ns: i64,
        fill: &[(&str, Value)],
        tail: &[u8],
    ) -> Result<(), RealSenseError> {
        let (reg, index) = &self.types[type_name];
        let mut value = reg.default_value(*index);
        for (path, v) in fill {
            reg.set(*index, &mut value, path, v.clone())
                .map_err(|e| crate::source::codec(&self.path, topic, e))?;
        }
        let mut bytes = encode_ros1_at(reg, *index, &value)
            .map_err(|e| crate::source::codec(&self.path, topic, e))?;
        bytes.extend_from_slice(tail);
        let id = match self.connections.get(topic) {
            Some(&id) => id,
            None => {
                let (_, md5, text) = TYPES
                    .iter()
                    .find(|(n, ..)| *n == type_name)
                    .copied()
                    .unwrap_or_default();
                let id = self.bag.add_connection(Connection {
                    id: 0,
                    topic: topic.to_string(),
                    type_name: type_name.to_string(),
                    md5sum: md5.to_string(),
                    message_definition: text.to_string(),
                    callerid: None,
                    latching: false,
                });
                self.connections.insert(topic.to_string(), id);
                id
            }
        };
        Ok(self.bag.write(id, time_ns, &bytes)?)
    }

    fn key_value(
        &mut self,
        topic: &str,
        time: i64,
        key: &str,
        value: &str,
    ) -> Result<(), RealSenseError> {
        self.put(
            topic,
            "diagnostic_msgs/KeyValue",
            time,
            &[("key", Value::string(key)), ("value", Value::string(value))],
        )
    }

    fn write_description(&mut self) -> Result<(), RealSenseError> {
        // The SDK writes the description at 1 ns, before any frame.
        const T: i64 = 1;
        let device = self.device.clone();
        self.put(
            "/file_version",
            "std_msgs/UInt32",
            T,
            &[("data", Value::UInt32(4))],
        )?;
        for (k, v) in &device.info {
            self.key_value("/device_0/info", T, k, v)?;
        }
        for (k, v) in &device.additional_info {
            self.key_value("/additional_info", T, k, v)?;
        }
        for s in &device.sensors {
            let base = format!("/device_0/sensor_{}", s.index);
            for (k, v) in &s.info {
                self.key_value(&format!("{base}/info"), T, k, v)?;
            }
            for o in &s.options {
                let name = o.name.replace(' ', "_");
                self.put(
                    &format!("{base}/option/{name}/value"),
                    "std_msgs/Float32",
                    T,
                    &[("data", Value::Float32(o.value))],
                )?;
                self.put(
                    &format!("{base}/option/{name}/description"),
                    "std_msgs/String",
                    T,
                    &[("data", Value::string(&o.description))],
                )?;
            }
            for p in &s.streams {
                let stream = format!("{base}/{}_{}", stream_name(&p.stream), p.index);
                self.put(
                    &format!("{stream}/info"),
                    "realsense_msgs/StreamInfo",
                    T,
                    &[
                        ("fps", Value::UInt32(p.fps)),
                        ("encoding", Value::string(&encoding_for_format(&p.format))),
                    ],
                )?;
                if let Some(i) = &p.intrinsics {
                    let mut coeffs = i.coeffs.clone();
                    coeffs.resize(5, 0.0);
                    self.put(
                        &format!("{stream}/info/camera_info"),
                        "sensor_msgs/CameraInfo",
                        T,
                        &[
                            ("width", Value::UInt32(i.width)),
                            ("height", Value::UInt32(i.height)),
                            ("distortion_model", Value::string(&title_case(&i.model))),
                            ("D", floats(&coeffs, false)),
                            (
                                "K",
                                floats(&[i.fx, 0.0, i.ppx, 0.0, i.fy, i.ppy, 0.0, 0.0, 1.0], false),
                            ),
                        ],
                    )?;
                }
                if let Some(m) = &p.motion_intrinsics {
                    // Fixed-size arrays in the SDK's message: missing values are zero.
                    let sized = |v: &[f64], n: usize| {
                        let mut v = v.to_vec();
                        v.resize(n, 0.0);
                        v
                    };
                    self.put(
                        &format!("{stream}/imu_intrinsic"),
                        "realsense_msgs/ImuIntrinsic",
                        T,
                        &[
                            ("data", floats(&sized(&m.data, 12), true)),
                            (
                                "noise_variances",
                                floats(&sized(&m.noise_variances, 3), true),
                            ),
                            ("bias_variances", floats(&sized(&m.bias_variances, 3), true)),
                        ],
                    )?;
                }
            }
        }
        for s in &device.sensors {
            for p in &s.streams {
                let Some(e) = &p.extrinsics else { continue };
                let topic = format!(
                    "{}/tf/{}",
                    stream_base(s.index, &p.stream, p.index),
                    e.reference
                );
                let q = quaternion(&e.transform.rotation);
                let t = e.transform.translation;
                self.put(
                    &topic,
                    "geometry_msgs/Transform",
                    T,
                    &[
                        ("translation.x", Value::Float64(t[0])),
                        ("translation.y", Value::Float64(t[1])),
                        ("translation.z", Value::Float64(t[2])),
                        ("rotation.x", Value::Float64(q[0])),
                        ("rotation.y", Value::Float64(q[1])),
                        ("rotation.z", Value::Float64(q[2])),
                        ("rotation.w", Value::Float64(q[3])),
                    ],
                )?;
            }
        }
        Ok(())
    }

    /// Appends a frame (its `recorded_ns` must be after the description, i.e. > 1).
    fn write_frame(&mut self, frame: &Frame) -> Result<(), RealSenseError> {
        let base = stream_base(frame.sensor, &frame.stream, frame.index);
        let t = frame.recorded_ns.max(2);
        let header = [
            ("header.seq", Value::UInt32(frame.number as u32)),
            ("header.stamp", time(frame.timestamp_ms)),
            ("header.frame_id", Value::string("1")),
        ];
        let kind = match &frame.payload {
            Payload::Video {
                width,
                height,
                stride,
                format,
                data,
            } => {
                let mut fields = header.to_vec();
                fields.extend([
                    ("width", Value::UInt32(*width)),
                    ("height", Value::UInt32(*height)),
                    ("step", Value::UInt32(*stride)),
                    ("encoding", Value::string(&encoding_for_format(format))),
                    ("data", Value::Bytes(data.to_vec())),
                ]);
                // The SDK's images end with the depth units (a float; 0 for other formats).
                let depth_units = if format == "z16" {
                    self.depth_units(frame.sensor)
                } else {
                    0.0
                };
                self.put_with_tail(
                    &format!("{base}/image/data"),
                    "sensor_msgs/Image",
                    t,
                    &fields,
                    &depth_units.to_le_bytes(),
                )?;
                "image"
            }
            Payload::Motion { xyz } => {
                let field = imu_field(&frame.stream);
                let mut fields = header.to_vec();
                let names = [
                    format!("{field}.x"),
                    format!("{field}.y"),
                    format!("{field}.z"),
                ];
                for (name, v) in names.iter().zip(xyz) {
                    fields.push((name.as_str(), Value::Float64(*v)));
                }
                self.put(&format!("{base}/imu/data"), "sensor_msgs/Imu", t, &fields)?;
                "imu"
            }
            Payload::Pose(p) => {
                let xyz = |prefix: &str, v: [f64; 3]| -> Vec<(String, Value)> {
                    ["x", "y", "z"]
                        .iter()
                        .zip(v)
                        .map(|(axis, x)| (format!("{prefix}.{axis}"), Value::Float64(x)))
                        .collect()
                };
                let mut transform = xyz("translation", p.translation);
                for (axis, q) in ["x", "y", "z", "w"].iter().zip(p.rotation) {
                    transform.push((format!("rotation.{axis}"), Value::Float64(q)));
                }
                let mut accel = xyz("linear", p.acceleration);
                accel.extend(xyz("angular", p.angular_acceleration));
                let mut twist = xyz("linear", p.velocity);
                twist.extend(xyz("angular", p.angular_velocity));
                for (part, type_name, fields) in [
                    ("transform", "geometry_msgs/Transform", transform),
                    ("accel", "geometry_msgs/Accel", accel),
                    ("twist", "geometry_msgs/Twist", twist),
                ] {
                    let fields: Vec<(&str, Value)> = fields
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.clone()))
                        .collect();
                    self.put(&format!("{base}/pose/{part}/data"), type_name, t, &fields)?;
                }
                // The SDK's pose metadata: confidences, timestamp and number first.
                let meta = format!("{base}/pose/metadata");
                self.key_value(
                    &meta,
                    t,
                    "Tracker Confidence",
                    &p.tracker_confidence.to_string(),
                )?;
                self.key_value(
                    &meta,
                    t,
                    "Mapper Confidence",
                    &p.mapper_confidence.to_string(),
                )?;
                self.key_value(
                    &meta,
                    t,
                    "frame_timestamp",
                    &format!("{:.6}", frame.timestamp_ms),
                )?;
                self.key_value(&meta, t, "Frame number", &frame.number.to_string())?;
                "pose"
            }
        };
        let meta = format!("{base}/{kind}/metadata");
        self.key_value(&meta, t, "system_time", "0.000000")?;
        self.key_value(&meta, t, "timestamp_domain", &title_case(&frame.domain))?;
        for (k, v) in &frame.metadata {
            self.key_value(&meta, t, &title_case(k), &v.to_string())?;
        }
        Ok(())
    }

    /// Records an option set while recording, as the SDK's recorder does (`write_snapshot` of
    /// the options): its new value at `recorded_ns` (after the description, i.e. > 1).
    fn write_option(&mut self, change: &OptionChange) -> Result<(), RealSenseError> {
        let name = change.name.replace(' ', "_");
        let base = format!("/device_0/sensor_{}/option/{name}", change.sensor);
        let known = self
            .device
            .sensors
            .iter()
            .find(|s| s.index == change.sensor)
            .and_then(|s| s.options.iter().find(|o| o.name == change.name))
            .is_some();
        if !known {
            // An option the description lacks: described now, as the SDK does on first write.
            self.put(
                &format!("{base}/description"),
                "std_msgs/String",
                DESCRIPTION_TIME_NS,
                &[("data", Value::string(""))],
            )?;
        }
        self.put(
            &format!("{base}/value"),
            "std_msgs/Float32",
            change.recorded_ns.max(DESCRIPTION_TIME_NS + 1),
            &[("data", Value::Float32(change.value))],
        )
    }

    /// Records a notification (`/device_0/sensor_<s>/notification/<category>`).
    fn write_notification(&mut self, n: &Notification) -> Result<(), RealSenseError> {
        let stamp = Value::Time {
            sec: (n.timestamp_ns.max(0) / 1_000_000_000) as u32,
            nsec: (n.timestamp_ns.max(0) % 1_000_000_000) as u32,
        };
        self.put(
            &format!("/device_0/sensor_{}/notification/{}", n.sensor, n.category),
            "realsense_msgs/Notification",
            n.recorded_ns.max(DESCRIPTION_TIME_NS + 1),
            &[
                ("timestamp", stamp),
                ("category", Value::string(&n.category)),
                ("severity", Value::string(&n.severity)),
                ("description", Value::string(&n.description)),
                ("serialized_data", Value::string(&n.serialized_data)),
            ],
        )
    }

    /// Records a frame, an option change or a notification.
    fn write_event(&mut self, event: &Event) -> Result<(), RealSenseError> {
        match event {
            Event::Frame(f) => self.write_frame(f),
            Event::Option(o) => self.write_option(o),
            Event::Notification(n) => self.write_notification(n),
            Event::Log(l) => self.put(
                "/log",
                "rosgraph_msgs/Log",
                l.recorded_ns.max(DESCRIPTION_TIME_NS + 1),
                &[
                    ("level", Value::UInt8(l.level)),
                    ("name", Value::string(&l.name)),
                    ("msg", Value::string(&l.msg)),
                ],
            ),
            Event::Time(t) => self.put(
                &format!("/device_0/sensor_{}/time", t.sensor),
                "sensor_msgs/TimeReference",
                t.recorded_ns.max(DESCRIPTION_TIME_NS + 1),
                &[
                    (
                        "time_ref",
                        Value::Time {
                            sec: t.time_ref_ns.div_euclid(1_000_000_000) as u32,
                            nsec: t.time_ref_ns.rem_euclid(1_000_000_000) as u32,
                        },
                    ),
                    ("source", Value::string(&t.source)),
                ],
            ),
        }
    }

    fn depth_units(&self, sensor: u32) -> f32 {
        self.device
            .sensors
            .iter()
            .find(|s| s.index == sensor)
            .and_then(|s| s.options.iter().find(|o| o.name == "Depth Units"))
            .map_or(0.001, |o| o.value)
    }

    /// Finishes the file (index, chunk infos).
    fn finish(self) -> Result<(), RealSenseError> {
        Ok(self.bag.finish()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quaternions_round_trip_through_matrices() {
        for q in [
            [0.0, 0.0, 0.0, 1.0],
            [0.5f64.sqrt(), 0.0, 0.0, 0.5f64.sqrt()],
            [0.5, -0.5, 0.5, 0.5],
            [0.0, 1.0, 0.0, 0.0],
        ] {
            let back = quaternion(&rotation_from_quaternion(q));
            // q and -q are the same rotation.
            let sign = if back[3] * q[3] + back[0] * q[0] + back[1] * q[1] + back[2] * q[2] < 0.0 {
                -1.0
            } else {
                1.0
            };
            for k in 0..4 {
                assert!((back[k] * sign - q[k]).abs() < 1e-12, "{q:?} -> {back:?}");
            }
        }
    }

    #[test]
    fn names_as_the_sdk_writes_them() {
        assert_eq!(stream_name("depth"), "Depth");
        assert_eq!(title_case("frame_counter"), "Frame Counter");
        assert_eq!(title_case("hardware_clock"), "Hardware Clock");
    }
}
