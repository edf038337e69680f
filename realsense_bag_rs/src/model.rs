//! What a RealSense recording holds: the device description and its frames.

use bytes::Bytes;

/// The recorded device.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Device {
    /// The RealSense file format version (`/file_version`).
    pub file_version: u32,
    /// Device information (`Name`, `Serial Number`, `Firmware Version`, ...), in file order.
    pub info: Vec<(String, String)>,
    /// The sensors, by index.
    pub sensors: Vec<Sensor>,
    /// `/additional_info`: free key-value pairs about the file (program, version, ...).
    pub additional_info: Vec<(String, String)>,
}

/// One sensor of the device.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sensor {
    /// Its index in the topic names.
    pub index: u32,
    /// Sensor information (`Name`, ...).
    pub info: Vec<(String, String)>,
    /// Options with their recorded values.
    pub options: Vec<SensorOption>,
    /// Its stream profiles.
    pub streams: Vec<StreamProfile>,
}

impl Sensor {
    /// The sensor's name, if recorded.
    pub fn name(&self) -> Option<&str> {
        self.info
            .iter()
            .find(|(k, _)| k == "Name")
            .map(|(_, v)| v.as_str())
    }
}

/// One option of a sensor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SensorOption {
    /// Its name (`Exposure`, `Depth Units`, ...).
    pub name: String,
    /// Its value when recording started.
    pub value: f32,
    /// Its description.
    pub description: String,
    /// The values it took during the recording after the start, in time order: (file time in
    /// ns, value), as the SDK's recorder writes them when an option is set while recording.
    pub history: Vec<(i64, f32)>,
}

impl SensorOption {
    /// Its value at file time `time_ns`: the last change at or before it, or the start value.
    pub fn value_at(&self, time_ns: i64) -> f32 {
        self.history
            .iter()
            .take_while(|(t, _)| *t <= time_ns)
            .last()
            .map_or(self.value, |(_, v)| *v)
    }
}

/// An option set while recording.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionChange {
    /// Sensor index.
    pub sensor: u32,
    /// Option name (`Exposure`).
    pub name: String,
    /// Its new value.
    pub value: f32,
    /// File time of the change, ns.
    pub recorded_ns: i64,
}

/// A notification a sensor raised while recording (`realsense_msgs/Notification`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Notification {
    /// Sensor index.
    pub sensor: u32,
    /// Category as the SDK spells it (`Frame Corrupted`).
    pub category: String,
    /// Severity as the SDK spells it (`Warn`).
    pub severity: String,
    /// What happened.
    pub description: String,
    /// Its own timestamp (ROS time, ns).
    pub timestamp_ns: i64,
    /// The data the sensor attached.
    pub serialized_data: String,
    /// File time, ns.
    pub recorded_ns: i64,
}

/// A line of the recording's log (`/log`, `rosgraph_msgs/Log`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogMessage {
    /// Severity (`rosgraph_msgs/Log` levels: 1 debug, 2 info, 4 warn, 8 error, 16 fatal).
    pub level: u8,
    /// Who logged it.
    pub name: String,
    /// The text.
    pub msg: String,
    /// File time, ns.
    pub recorded_ns: i64,
}

/// A sample of a sensor's time stream (`/device_<d>/sensor_<s>/time`,
/// `sensor_msgs/TimeReference`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimeSample {
    /// Sensor index.
    pub sensor: u32,
    /// The sensor's time, ns.
    pub time_ref_ns: i64,
    /// The time source's name.
    pub source: String,
    /// File time, ns.
    pub recorded_ns: i64,
}

/// What a recording holds in time order: frames, and the option changes, notifications, log
/// lines and time samples between them.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A frame.
    Frame(Frame),
    /// An option set while recording.
    Option(OptionChange),
    /// A notification.
    Notification(Notification),
    /// A log line.
    Log(LogMessage),
    /// A sample of a sensor's time stream.
    Time(TimeSample),
}

impl Event {
    /// File time, ns.
    pub fn recorded_ns(&self) -> i64 {
        match self {
            Self::Frame(f) => f.recorded_ns,
            Self::Option(o) => o.recorded_ns,
            Self::Notification(n) => n.recorded_ns,
            Self::Log(l) => l.recorded_ns,
            Self::Time(t) => t.recorded_ns,
        }
    }
}

/// A stream the sensor recorded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamProfile {
    /// Stream type as the SDK names it, lower case (`depth`, `infrared`, `color`, `accel`, ...).
    pub stream: String,
    /// Stream index.
    pub index: u32,
    /// Pixel or sample format as the SDK's `rs2_format` names it, lower case (`z16`, `rgb8`,
    /// `motion_xyz32f`, ...).
    pub format: String,
    /// Frames per second.
    pub fps: u32,
    /// Video intrinsics, for video streams.
    pub intrinsics: Option<Intrinsics>,
    /// Motion intrinsics, for motion streams.
    pub motion_intrinsics: Option<MotionIntrinsics>,
    /// The transform from this stream to its reference, if recorded.
    pub extrinsics: Option<Extrinsics>,
}

/// Video intrinsics (`rs2_intrinsics`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Intrinsics {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Principal point, x.
    pub ppx: f64,
    /// Principal point, y.
    pub ppy: f64,
    /// Focal length in pixels, x.
    pub fx: f64,
    /// Focal length in pixels, y.
    pub fy: f64,
    /// Distortion model as the SDK's `rs2_distortion` names it, snake case (`brown_conrady`,
    /// `inverse_brown_conrady`, `none`, ...).
    pub model: String,
    /// Distortion coefficients.
    pub coeffs: Vec<f64>,
}

/// Motion intrinsics (`rs2_motion_device_intrinsic`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MotionIntrinsics {
    /// Scale, cross-axis and bias: a 3×4 row-major matrix.
    pub data: Vec<f64>,
    /// Noise variances, x y z.
    pub noise_variances: Vec<f64>,
    /// Bias variances, x y z.
    pub bias_variances: Vec<f64>,
}

/// A rigid transform `p' = R p + t` (`rs2_extrinsics`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Transform {
    /// Rotation R, 3×3 column-major.
    pub rotation: [f64; 9],
    /// Translation t in metres.
    pub translation: [f64; 3],
}

impl Transform {
    /// R at row `r`, column `c`.
    fn r(&self, row: usize, col: usize) -> f64 {
        self.rotation[col * 3 + row]
    }

    /// The inverse transform.
    pub fn inverse(&self) -> Transform {
        let mut rotation = [0.0; 9];
        for row in 0..3 {
            for col in 0..3 {
                rotation[col * 3 + row] = self.r(col, row);
            }
        }
        let inv = Transform {
            rotation,
            translation: [0.0; 3],
        };
        let t = inv.apply(self.translation);
        Transform {
            rotation,
            translation: [-t[0], -t[1], -t[2]],
        }
    }

    /// `self` after `first`: p ↦ self(first(p)).
    pub fn after(&self, first: &Transform) -> Transform {
        let mut rotation = [0.0; 9];
        for row in 0..3 {
            for col in 0..3 {
                rotation[col * 3 + row] = (0..3).map(|k| self.r(row, k) * first.r(k, col)).sum();
            }
        }
        let t = self.apply(first.translation);
        Transform {
            rotation,
            translation: t,
        }
    }

    /// R p + t.
    pub fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let mut out = self.translation;
        for (row, o) in out.iter_mut().enumerate() {
            *o += (0..3).map(|k| self.r(row, k) * p[k]).sum::<f64>();
        }
        out
    }
}

/// Where a stream sits: the transform from a reference point (indexed by group, from the topic
/// name) to the stream.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Extrinsics {
    /// The reference (group) index.
    pub reference: u32,
    /// Reference → stream.
    pub transform: Transform,
}

impl Device {
    /// The device as at file time `time_ns`: every option at its value then, with only the
    /// later changes left in its history (what a recording cut there starts with).
    pub fn at(&self, time_ns: i64) -> Device {
        let mut device = self.clone();
        for o in device.sensors.iter_mut().flat_map(|s| &mut s.options) {
            o.value = o.value_at(time_ns);
            o.history.retain(|(t, _)| *t > time_ns);
        }
        device
    }

    /// The profile of stream `stream` (lower case) with index `index`.
    pub fn profile(&self, stream: &str, index: u32) -> Option<&StreamProfile> {
        self.sensors
            .iter()
            .flat_map(|s| &s.streams)
            .find(|p| p.stream == stream && p.index == index)
    }

    /// The transform from one stream's coordinates to another's, as the SDK's
    /// `get_extrinsics_to` gives it, when both are placed relative to the same reference.
    pub fn extrinsics(&self, from: (&str, u32), to: (&str, u32)) -> Option<Transform> {
        let a = self.profile(from.0, from.1)?.extrinsics?;
        let b = self.profile(to.0, to.1)?.extrinsics?;
        (a.reference == b.reference).then(|| b.transform.after(&a.transform.inverse()))
    }
}

/// One recorded frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Sensor index.
    pub sensor: u32,
    /// Stream type, lower case.
    pub stream: String,
    /// Stream index.
    pub index: u32,
    /// Frame number.
    pub number: u64,
    /// Device timestamp in milliseconds.
    pub timestamp_ms: f64,
    /// Its domain as the SDK names it, snake case (`hardware_clock`, `system_time`, ...).
    pub domain: String,
    /// Time the recorder wrote it, ns from the start of the file.
    pub recorded_ns: i64,
    /// Frame metadata (`frame_counter`, `sensor_timestamp`, ...), in file order.
    pub metadata: Vec<(String, i64)>,
    /// The payload.
    pub payload: Payload,
}

/// What a frame carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// An image.
    Video {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// Bytes per row.
        stride: u32,
        /// Pixel format (`rs2_format` name).
        format: String,
        /// The pixels.
        data: Bytes,
    },
    /// An accelerometer or gyroscope sample.
    Motion {
        /// x, y, z (m/s² or rad/s).
        xyz: [f64; 3],
    },
    /// A 6DoF pose sample (`rs2_pose`).
    Pose(Pose),
}

/// A 6DoF pose frame: where the device is, how it moves, and how sure the tracker is. The SDK
/// records it as a `geometry_msgs/Transform`, `Twist` and `Accel` at the same time and the
/// confidences as metadata.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose {
    /// Position, metres.
    pub translation: [f64; 3],
    /// Orientation, a unit quaternion (x, y, z, w).
    pub rotation: [f64; 4],
    /// Velocity, m/s.
    pub velocity: [f64; 3],
    /// Angular velocity, rad/s.
    pub angular_velocity: [f64; 3],
    /// Acceleration, m/s².
    pub acceleration: [f64; 3],
    /// Angular acceleration, rad/s².
    pub angular_acceleration: [f64; 3],
    /// Tracker confidence (0 failed, 1 low, 2 medium, 3 high).
    pub tracker_confidence: u32,
    /// Mapper confidence (0 failed, 1 low, 2 medium, 3 high).
    pub mapper_confidence: u32,
}

/// The ROS image encodings the SDK writes, to `rs2_format` names, as the SDK maps them (16-bit
/// mono is depth, `8UC1`/`16UC1` are Y8/Y16, `mono8` is RAW8, ROS's `yuv422` is UYVY; other
/// formats, YUYV among them, by their name).
pub fn format_from_encoding(encoding: &str) -> String {
    match encoding {
        "mono16" => "z16".into(),
        "8UC1" => "y8".into(),
        "16UC1" => "y16".into(),
        "mono8" => "raw8".into(),
        "yuv422" => "uyvy".into(),
        other => other.to_ascii_lowercase(),
    }
}

/// The reverse of [`format_from_encoding`]: what the SDK's recorder writes for a format.
pub fn encoding_for_format(format: &str) -> String {
    match format {
        "z16" => "mono16".into(),
        "y8" => "8UC1".into(),
        "y16" => "16UC1".into(),
        "raw8" => "mono8".into(),
        "uyvy" => "yuv422".into(),
        "6dof" => "6DOF".into(),
        "rgb8" | "bgr8" | "rgba8" | "bgra8" => format.into(),
        other => other.to_ascii_uppercase(),
    }
}

/// The `sensor_msgs/Imu` field a motion stream's samples live in.
pub fn imu_field(stream: &str) -> &'static str {
    if stream == "gyro" {
        "angular_velocity"
    } else {
        "linear_acceleration"
    }
}

/// A motion sample from an `Imu` message of `stream`.
pub(crate) fn motion_payload(imu: &rosbag2_rs_codec::msg::MessageView, stream: &str) -> Payload {
    let xyz = imu.message(imu_field(stream));
    let get = |n| xyz.and_then(|x| x.number(n)).unwrap_or(0.0);
    Payload::Motion {
        xyz: [get("x"), get("y"), get("z")],
    }
}

/// `Frame Counter` → `frame_counter`, `Hardware Clock` → `hardware_clock`.
pub fn snake_case(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace([' ', '-'], "_")
}

/// A unit quaternion (x, y, z, w) as a column-major rotation matrix.
pub fn rotation_from_quaternion([x, y, z, w]: [f64; 4]) -> [f64; 9] {
    [
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y + z * w),
        2.0 * (x * z - y * w),
        2.0 * (x * y - z * w),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z + x * w),
        2.0 * (x * z + y * w),
        2.0 * (y * z - x * w),
        1.0 - 2.0 * (x * x + y * y),
    ]
}

/// The time the SDK writes the device description at (`TIME_MIN`, 1 ns): everything at or
/// before it is the description, everything after it happened during the recording.
pub const DESCRIPTION_TIME_NS: i64 = 1;

/// The SDK's spelling of a stream type in topic names (`depth` → `Depth`).
pub(crate) fn stream_name(stream: &str) -> String {
    let mut c = stream.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// `frame_counter` → `Frame Counter`, `hardware_clock` → `Hardware Clock`.
pub(crate) fn title_case(name: &str) -> String {
    name.split('_')
        .map(stream_name)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A column-major rotation matrix as a unit quaternion (x, y, z, w).
pub(crate) fn quaternion(r: &[f64; 9]) -> [f64; 4] {
    let m = |row: usize, col: usize| r[col * 3 + row];
    let trace = m(0, 0) + m(1, 1) + m(2, 2);
    if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        [
            (m(2, 1) - m(1, 2)) / s,
            (m(0, 2) - m(2, 0)) / s,
            (m(1, 0) - m(0, 1)) / s,
            s / 4.0,
        ]
    } else if m(0, 0) > m(1, 1) && m(0, 0) > m(2, 2) {
        let s = (1.0 + m(0, 0) - m(1, 1) - m(2, 2)).sqrt() * 2.0;
        [
            s / 4.0,
            (m(0, 1) + m(1, 0)) / s,
            (m(0, 2) + m(2, 0)) / s,
            (m(2, 1) - m(1, 2)) / s,
        ]
    } else if m(1, 1) > m(2, 2) {
        let s = (1.0 + m(1, 1) - m(0, 0) - m(2, 2)).sqrt() * 2.0;
        [
            (m(0, 1) + m(1, 0)) / s,
            s / 4.0,
            (m(1, 2) + m(2, 1)) / s,
            (m(0, 2) - m(2, 0)) / s,
        ]
    } else {
        let s = (1.0 + m(2, 2) - m(0, 0) - m(1, 1)).sqrt() * 2.0;
        [
            (m(0, 2) + m(2, 0)) / s,
            (m(1, 2) + m(2, 1)) / s,
            s / 4.0,
            (m(1, 0) - m(0, 1)) / s,
        ]
    }
}

/// A stream's topic prefix in a recording: `/device_0/sensor_<sensor>/<Stream>_<index>` (both
/// layouts, the `.bag` and the `.db3`).
pub(crate) fn stream_base(sensor: u32, stream: &str, index: u32) -> String {
    format!("/device_0/sensor_{sensor}/{}_{index}", stream_name(stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn transforms_invert_and_compose() {
        // 90° about z, then a shift.
        let t = Transform {
            rotation: rotation_from_quaternion([0.0, 0.0, 0.5f64.sqrt(), 0.5f64.sqrt()]),
            translation: [1.0, 2.0, 3.0],
        };
        assert!(close(&t.apply([1.0, 0.0, 0.0]), &[1.0, 3.0, 3.0]));
        let id = t.after(&t.inverse());
        assert!(close(
            &id.rotation,
            &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        ));
        assert!(close(&id.translation, &[0.0; 3]));
        assert!(close(
            &t.inverse().apply(t.apply([0.3, -0.2, 5.0])),
            &[0.3, -0.2, 5.0]
        ));
        // The SDK's identity quaternion is written as w = -1.
        assert!(close(
            &rotation_from_quaternion([0.0, 0.0, 0.0, -1.0]),
            &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        ));
    }

    #[test]
    fn names_as_the_sdk_spells_them() {
        for (encoding, format) in [
            ("mono16", "z16"),
            ("8UC1", "y8"),
            ("16UC1", "y16"),
            ("mono8", "raw8"),
            ("rgb8", "rgb8"),
            ("yuv422", "uyvy"),
            ("YUYV", "yuyv"),
            ("MOTION_XYZ32F", "motion_xyz32f"),
        ] {
            assert_eq!(format_from_encoding(encoding), format);
            assert_eq!(encoding_for_format(format), encoding);
        }
        assert_eq!(snake_case("Hardware Clock"), "hardware_clock");
        assert_eq!(snake_case("Frame Counter"), "frame_counter");
    }
}
