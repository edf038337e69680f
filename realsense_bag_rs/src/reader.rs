//! Reading a recording: the device description up front, then the frames in time order.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use rosbag2_rs_codec::msg::{MessageView, Value};

use crate::error::RealSenseError;
use crate::model::*;
use crate::source::{Decoded, Source};
use crate::topic::{self, TopicKind};

/// A RealSense recording opened for reading.
pub struct Recording {
    path: PathBuf,
    source: Source,
    device: Device,
    pending: Option<Frame>,
    /// Events read while a frame waited for its metadata: handed out after it.
    ready: std::collections::VecDeque<Event>,
}

/// `a=1;b=x,y` → [("a", "1"), ("b", "x,y")], the rosbag2 layout's way of packing fields.
fn pairs(text: &str) -> Vec<(String, String)> {
    text.split(';')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn floats(text: &str) -> Vec<f64> {
    text.split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect()
}

fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// True when `path` is a RealSense recording (a bag with a `/file_version` topic).
pub fn is_recording(path: &Path) -> bool {
    path.is_file()
        && Source::open(path).is_ok_and(|s| s.topics().iter().any(|t| t == "/file_version"))
}

impl Recording {
    /// Opens a `.bag` (ROS 1) or `.db3` (rosbag2) recording and reads its device description.
    pub fn open(path: &Path) -> Result<Self, RealSenseError> {
        let source = Source::open(path)?;
        if !source.topics().iter().any(|t| t == "/file_version") {
            return Err(RealSenseError::Missing {
                path: path.to_path_buf(),
                what: "no /file_version topic".into(),
            });
        }
        let mut recording = Self {
            path: path.to_path_buf(),
            source,
            device: Device::default(),
            pending: None,
            ready: Default::default(),
        };
        recording.read_description()?;
        recording.rewind()?;
        Ok(recording)
    }

    /// The recorded device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// File times of the first and the last message (ns).
    pub fn time_range(&self) -> (i64, i64) {
        self.source.time_range()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn codec(&self, topic: &str, source: rosbag2_rs_codec::msg::CodecError) -> RealSenseError {
        crate::source::codec(&self.path, topic, source)
    }

    fn invalid(&self, topic: &str, reason: impl Into<String>) -> RealSenseError {
        RealSenseError::Invalid {
            path: self.path.clone(),
            topic: topic.to_string(),
            reason: reason.into(),
        }
    }

    fn sensor(&mut self, index: u32) -> &mut Sensor {
        let sensors = &mut self.device.sensors;
        let at = match sensors.binary_search_by_key(&index, |s| s.index) {
            Ok(i) => i,
            Err(i) => {
                sensors.insert(
                    i,
                    Sensor {
                        index,
                        ..Sensor::default()
                    },
                );
                i
            }
        };
        &mut sensors[at]
    }

    fn stream(&mut self, sensor: u32, (name, index): &(String, u32)) -> &mut StreamProfile {
        let stream = name.to_ascii_lowercase();
        let streams = &mut self.sensor(sensor).streams;
        let at = match streams
            .iter()
            .position(|s| s.stream == stream && s.index == *index)
        {
            Some(i) => i,
            None => {
                streams.push(StreamProfile {
                    stream,
                    index: *index,
                    ..StreamProfile::default()
                });
                streams.len() - 1
            }
        };
        &mut streams[at]
    }

    fn read_description(&mut self) -> Result<(), RealSenseError> {
        let frame_topic = |t: &str| {
            let kind = topic::parse(t).kind;
            kind.is_frame_data()
                || kind.is_event()
                || matches!(kind, TopicKind::Metadata | TopicKind::ImageCameraInfo)
        };
        self.source.select(|t| !frame_topic(t))?;
        while let Some(m) = self.source.next(&self.path)? {
            self.describe(&m)?;
        }
        if self.device.sensors.is_empty() {
            return Err(RealSenseError::Missing {
                path: self.path.clone(),
                what: "no sensor is described".into(),
            });
        }
        for s in &self.device.sensors {
            for p in &s.streams {
                let sensor = format!("/device_0/sensor_{}", s.index);
                if p.format.is_empty() {
                    return Err(self.invalid(
                        &sensor,
                        format!("{} stream {} has no info (format, fps)", p.stream, p.index),
                    ));
                }
                let video = !p.stream.eq_ignore_ascii_case("accel")
                    && !p.stream.eq_ignore_ascii_case("gyro")
                    && !p.stream.eq_ignore_ascii_case("pose");
                if video && p.intrinsics.is_none() {
                    return Err(self.invalid(
                        &sensor,
                        format!(
                            "{} stream {} has no camera_info (video intrinsics)",
                            p.stream, p.index
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn describe(&mut self, m: &Decoded) -> Result<(), RealSenseError> {
        let t = topic::parse(&m.topic);
        if t.kind == TopicKind::Other {
            return Ok(());
        }
        let v = m.view().map_err(|e| self.codec(&m.topic, e))?;
        // The rosbag2 layout packs most descriptions into one std_msgs/String.
        let packed = v.text("data").map(|s| pairs(&s));
        match (&t.kind, t.sensor, &t.stream) {
            (TopicKind::FileVersion, ..) => {
                self.device.file_version = v.number("data").unwrap_or(0.0) as u32
            }
            (TopicKind::AdditionalInfo, ..) => {
                let kv = key_values(&v, packed);
                self.device.additional_info.extend(kv);
            }
            (TopicKind::DeviceInfo, ..) => {
                let kv = key_values(&v, packed);
                self.device.info.extend(kv);
            }
            (TopicKind::SensorInfo, Some(s), _) => {
                let kv = key_values(&v, packed);
                self.sensor(s).info.extend(kv);
            }
            (TopicKind::OptionValue(name), Some(s), _) => {
                let value = v
                    .number("data")
                    .or_else(|| v.text("data").and_then(|t| t.trim().parse().ok()))
                    .ok_or_else(|| self.invalid(&m.topic, "option value is not a number"))?;
                set_option(option(self.sensor(s), name), m.time, value as f32);
            }
            (TopicKind::Property, Some(s), _) => {
                // File version 2: one KeyValue per option, its value as text.
                let (Some(name), Some(value)) = (v.text("key"), v.text("value")) else {
                    return Err(self.invalid(&m.topic, "property without key and value"));
                };
                let value: f32 = value.trim().parse().map_err(|_| {
                    self.invalid(
                        &m.topic,
                        format!("property {name}: '{value}' is not a number"),
                    )
                })?;
                let o = option(self.sensor(s), &name);
                if o.description.is_empty() {
                    // What the SDK describes a v2 property as.
                    o.description = format!("Read only option of {name}");
                }
                set_option(o, m.time, value);
            }
            (TopicKind::OptionDescription(name), Some(s), _) => {
                option(self.sensor(s), name).description = v.text("data").unwrap_or_default();
            }
            (TopicKind::StreamInfo, Some(s), Some(st)) => {
                let (encoding, fps) = match &packed {
                    Some(p) => (
                        lookup(p, "encoding").unwrap_or_default().to_string(),
                        lookup(p, "fps").and_then(|f| f.parse().ok()).unwrap_or(0.0),
                    ),
                    None => (
                        v.text("encoding").unwrap_or_default(),
                        v.number("fps").unwrap_or(0.0),
                    ),
                };
                let stream = self.stream(s, st);
                stream.format = format_from_encoding(&encoding);
                stream.fps = fps as u32;
            }
            (TopicKind::CameraInfo, Some(s), Some(st)) => {
                let intrinsics = match &packed {
                    Some(p) => Intrinsics {
                        width: lookup(p, "width").and_then(|x| x.parse().ok()).unwrap_or(0),
                        height: lookup(p, "height")
                            .and_then(|x| x.parse().ok())
                            .unwrap_or(0),
                        fx: lookup(p, "fx").and_then(|x| x.parse().ok()).unwrap_or(0.0),
                        fy: lookup(p, "fy").and_then(|x| x.parse().ok()).unwrap_or(0.0),
                        ppx: lookup(p, "ppx").and_then(|x| x.parse().ok()).unwrap_or(0.0),
                        ppy: lookup(p, "ppy").and_then(|x| x.parse().ok()).unwrap_or(0.0),
                        model: snake_case(lookup(p, "model").unwrap_or_default()),
                        coeffs: floats(lookup(p, "coeffs").unwrap_or_default()),
                    },
                    None => {
                        let k = field_f64s(&v, "k").or_else(|| field_f64s(&v, "K"));
                        let k = k.filter(|k| k.len() == 9).ok_or_else(|| {
                            self.invalid(&m.topic, "camera_info without a 3×3 K matrix")
                        })?;
                        Intrinsics {
                            width: v.number("width").unwrap_or(0.0) as u32,
                            height: v.number("height").unwrap_or(0.0) as u32,
                            fx: k[0],
                            fy: k[4],
                            ppx: k[2],
                            ppy: k[5],
                            model: snake_case(&v.text("distortion_model").unwrap_or_default()),
                            coeffs: field_f64s(&v, "d")
                                .or_else(|| field_f64s(&v, "D"))
                                .unwrap_or_default(),
                        }
                    }
                };
                self.stream(s, st).intrinsics = Some(intrinsics);
            }
            (TopicKind::ImuIntrinsic, Some(s), Some(st)) => {
                let intrinsics = match &packed {
                    Some(p) => MotionIntrinsics {
                        data: floats(lookup(p, "data").unwrap_or_default()),
                        noise_variances: floats(lookup(p, "noise_variances").unwrap_or_default()),
                        bias_variances: floats(lookup(p, "bias_variances").unwrap_or_default()),
                    },
                    None => MotionIntrinsics {
                        data: field_f64s(&v, "data").unwrap_or_default(),
                        noise_variances: field_f64s(&v, "noise_variances").unwrap_or_default(),
                        bias_variances: field_f64s(&v, "bias_variances").unwrap_or_default(),
                    },
                };
                self.stream(s, st).motion_intrinsics = Some(intrinsics);
            }
            (TopicKind::Extrinsics(group), Some(s), Some(st)) => {
                let (rotation, translation) = match &packed {
                    Some(p) => {
                        let r = floats(lookup(p, "rotation").unwrap_or_default());
                        let t = floats(lookup(p, "translation").unwrap_or_default());
                        let (Ok(r), Ok(t)) = (r.try_into(), t.try_into()) else {
                            return Err(self.invalid(&m.topic, "extrinsics need 9 + 3 numbers"));
                        };
                        (r, t)
                    }
                    None => {
                        let xyz = |m: Option<MessageView>, names: &[&str]| -> Vec<f64> {
                            names
                                .iter()
                                .map(|n| m.and_then(|m| m.number(n)).unwrap_or(0.0))
                                .collect()
                        };
                        let t = xyz(v.message("translation"), &["x", "y", "z"]);
                        let q = xyz(v.message("rotation"), &["x", "y", "z", "w"]);
                        (
                            rotation_from_quaternion([q[0], q[1], q[2], q[3]]),
                            [t[0], t[1], t[2]],
                        )
                    }
                };
                self.stream(s, st).extrinsics = Some(Extrinsics {
                    reference: *group,
                    transform: Transform {
                        rotation,
                        translation,
                    },
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// Starts the frames over from the beginning.
    pub fn rewind(&mut self) -> Result<(), RealSenseError> {
        self.pending = None;
        self.ready.clear();
        self.source.select(|t| {
            matches!(
                topic::parse(t).kind,
                TopicKind::ImageData
                    | TopicKind::ImuData
                    | TopicKind::PoseTransform
                    | TopicKind::PoseAccel
                    | TopicKind::PoseTwist
                    | TopicKind::Metadata
                    | TopicKind::OptionValue(_)
                    | TopicKind::Property
                    | TopicKind::Notification(_)
                    | TopicKind::Log
                    | TopicKind::TimeStream
            )
        })
    }

    /// Repositions so that the next frame of each stream is its first recorded at or after
    /// `time_ns` (file time).
    pub fn seek(&mut self, time_ns: i64) -> Result<(), RealSenseError> {
        self.pending = None;
        self.ready.clear();
        self.source.seek(time_ns)
    }

    /// The next frame in recording order, with its metadata, or `None` at the end; option
    /// changes and notifications are passed over (see [`next_event`](Self::next_event)).
    pub fn next_frame(&mut self) -> Result<Option<Frame>, RealSenseError> {
        while let Some(event) = self.next_event()? {
            if let Event::Frame(frame) = event {
                return Ok(Some(frame));
            }
        }
        Ok(None)
    }

    /// Hands out `event`, after the frame waiting for its metadata if there is one.
    fn emit(&mut self, event: Event) -> Event {
        match self.pending.take() {
            Some(frame) => {
                self.ready.push_back(event);
                Event::Frame(frame)
            }
            None => event,
        }
    }

    /// The next frame, option change or notification in recording order, or `None` at the end.
    pub fn next_event(&mut self) -> Result<Option<Event>, RealSenseError> {
        if let Some(event) = self.ready.pop_front() {
            return Ok(Some(event));
        }
        while let Some(m) = self.source.next(&self.path)? {
            let t = topic::parse(&m.topic);
            if let Some(event) = self.state_event(&m, &t)? {
                return Ok(Some(self.emit(event)));
            }
            let (Some(sensor), Some(stream)) = (t.sensor, t.stream.clone()) else {
                continue;
            };
            match t.kind {
                TopicKind::Metadata => {
                    let Some(frame) = self.pending.as_mut().filter(|f| {
                        f.sensor == sensor
                            && f.stream.eq_ignore_ascii_case(&stream.0)
                            && f.index == stream.1
                            && f.recorded_ns == m.time
                    }) else {
                        log::debug!("{}: metadata without its frame at {} ns", m.topic, m.time);
                        continue;
                    };
                    let v = m
                        .view()
                        .map_err(|e| crate::source::codec(&self.path, &m.topic, e))?;
                    apply_metadata(frame, &v);
                }
                TopicKind::PoseAccel | TopicKind::PoseTwist => {
                    let v = m.view().map_err(|e| self.codec(&m.topic, e))?;
                    let Some(Payload::Pose(pose)) = self
                        .pending
                        .as_mut()
                        .filter(|f| {
                            f.sensor == sensor
                                && f.stream.eq_ignore_ascii_case(&stream.0)
                                && f.index == stream.1
                                && f.recorded_ns == m.time
                        })
                        .map(|f| &mut f.payload)
                    else {
                        log::debug!(
                            "{}: pose part without its transform at {} ns",
                            m.topic,
                            m.time
                        );
                        continue;
                    };
                    let linear = vector(&v, "linear");
                    let angular = vector(&v, "angular");
                    if t.kind == TopicKind::PoseAccel {
                        (pose.acceleration, pose.angular_acceleration) = (linear, angular);
                    } else {
                        (pose.velocity, pose.angular_velocity) = (linear, angular);
                    }
                }
                TopicKind::PoseTransform => {
                    let v = m.view().map_err(|e| self.codec(&m.topic, e))?;
                    let q = v.message("rotation");
                    let q = |n| q.and_then(|q| q.number(n)).unwrap_or(0.0);
                    let frame = Frame {
                        sensor,
                        stream: stream.0.to_ascii_lowercase(),
                        index: stream.1,
                        number: 0,
                        timestamp_ms: 0.0,
                        domain: String::new(),
                        recorded_ns: m.time,
                        metadata: Vec::new(),
                        payload: Payload::Pose(Pose {
                            translation: vector(&v, "translation"),
                            rotation: [q("x"), q("y"), q("z"), q("w")],
                            ..Pose::default()
                        }),
                    };
                    if let Some(done) = self.pending.replace(frame) {
                        return Ok(Some(Event::Frame(done)));
                    }
                }
                TopicKind::ImageData | TopicKind::ImuData => {
                    let frame = self.frame(&m, sensor, &stream, &t.kind)?;
                    if let Some(done) = self.pending.replace(frame) {
                        return Ok(Some(Event::Frame(done)));
                    }
                }
                _ => {}
            }
        }
        Ok(self.pending.take().map(Event::Frame))
    }

    /// An option change, a notification, a log line or a time sample, from a message after
    /// the description.
    fn state_event(&self, m: &Decoded, t: &topic::Topic) -> Result<Option<Event>, RealSenseError> {
        if t.kind == TopicKind::Log {
            let v = m.view().map_err(|e| self.codec(&m.topic, e))?;
            return Ok(Some(Event::Log(LogMessage {
                level: v.number("level").unwrap_or(0.0) as u8,
                name: v.text("name").unwrap_or_default(),
                msg: v.text("msg").unwrap_or_default(),
                recorded_ns: m.time,
            })));
        }
        let Some(sensor) = t.sensor else {
            return Ok(None);
        };
        if t.kind == TopicKind::TimeStream {
            let v = m.view().map_err(|e| self.codec(&m.topic, e))?;
            let time_ref_ns = match v.field("time_ref") {
                Some(Value::Time { sec, nsec }) => *sec as i64 * 1_000_000_000 + *nsec as i64,
                // Any i64 the file holds: saturating.
                _ => v.message("time_ref").map_or(0, |s| {
                    (s.number("sec").unwrap_or(0.0) as i64)
                        .saturating_mul(1_000_000_000)
                        .saturating_add(s.number("nanosec").unwrap_or(0.0) as i64)
                }),
            };
            return Ok(Some(Event::Time(TimeSample {
                sensor,
                time_ref_ns,
                source: v.text("source").unwrap_or_default(),
                recorded_ns: m.time,
            })));
        }
        if m.time <= DESCRIPTION_TIME_NS
            || !matches!(
                t.kind,
                TopicKind::OptionValue(_) | TopicKind::Property | TopicKind::Notification(_)
            )
        {
            return Ok(None);
        }
        let v = m.view().map_err(|e| self.codec(&m.topic, e))?;
        let change = |name: String, value: Option<f64>| match value {
            Some(value) => Ok(Some(Event::Option(OptionChange {
                sensor,
                name,
                value: value as f32,
                recorded_ns: m.time,
            }))),
            None => Err(self.invalid(&m.topic, "option value is not a number")),
        };
        match &t.kind {
            TopicKind::OptionValue(name) => change(
                name.clone(),
                v.number("data")
                    .or_else(|| v.text("data").and_then(|t| t.trim().parse().ok())),
            ),
            TopicKind::Property => change(
                v.text("key").unwrap_or_default(),
                v.text("value").and_then(|t| t.trim().parse().ok()),
            ),
            TopicKind::Notification(category) => Ok(Some(Event::Notification(notification(
                &v, sensor, category, m.time,
            )))),
            _ => Ok(None),
        }
    }

    fn frame(
        &self,
        m: &Decoded,
        sensor: u32,
        (name, index): &(String, u32),
        kind: &TopicKind,
    ) -> Result<Frame, RealSenseError> {
        let stream = name.to_ascii_lowercase();
        let profile = self
            .device
            .sensors
            .iter()
            .find(|s| s.index == sensor)
            .and_then(|s| {
                s.streams
                    .iter()
                    .find(|p| p.stream == stream && p.index == *index)
            });
        // The hot path: a ROS 1 image is cut out of the chunk without copying its pixels.
        if let (TopicKind::ImageData, Some(bytes), "sensor_msgs/Image") =
            (kind, m.ros1_bytes(), m.type_name())
        {
            let image = Ros1Image::parse(bytes)
                .ok_or_else(|| self.invalid(&m.topic, "sensor_msgs/Image cut short"))?;
            return Ok(Frame {
                sensor,
                index: *index,
                number: image.seq as u64,
                timestamp_ms: image.stamp_ms,
                domain: String::new(),
                recorded_ns: m.time,
                metadata: Vec::new(),
                payload: Payload::Video {
                    width: image.width,
                    height: image.height,
                    stride: image.step,
                    format: profile
                        .map(|p| p.format.clone())
                        .unwrap_or_else(|| format_from_encoding(&image.encoding)),
                    data: image.data,
                },
                stream,
            });
        }
        let v = m.view().map_err(|e| self.codec(&m.topic, e))?;
        let header = v.message("header");
        // ROS 1 `time` or builtin_interfaces/Time: the device timestamp.
        let timestamp_ms = match header.and_then(|h| h.field("stamp")) {
            Some(Value::Time { sec, nsec }) => *sec as f64 * 1e3 + *nsec as f64 / 1e6,
            _ => header.and_then(|h| h.message("stamp")).map_or(0.0, |s| {
                s.number("sec").unwrap_or(0.0) * 1e3 + s.number("nanosec").unwrap_or(0.0) / 1e6
            }),
        };
        let payload = match kind {
            TopicKind::ImuData => motion_payload(&v, &stream),
            _ => self.image(m, &v, profile)?,
        };
        Ok(Frame {
            sensor,
            stream,
            index: *index,
            number: header.and_then(|h| h.number("seq")).unwrap_or(0.0) as u64,
            timestamp_ms,
            domain: String::new(),
            recorded_ns: m.time,
            metadata: Vec::new(),
            payload,
        })
    }

    fn image(
        &self,
        m: &Decoded,
        v: &MessageView,
        profile: Option<&StreamProfile>,
    ) -> Result<Payload, RealSenseError> {
        let data = match v.field("data") {
            Some(Value::Bytes(b)) => b,
            _ => return Err(self.invalid(&m.topic, "image without data")),
        };
        if let Some(format) = v.text("format") {
            // rosbag2 layout: a CompressedImage holding a PNG.
            return crate::png::decode(&format, data, profile).map_err(|source| {
                RealSenseError::Image {
                    path: self.path.clone(),
                    topic: m.topic.to_string(),
                    source,
                }
            });
        }
        let encoding = v.text("encoding").unwrap_or_default();
        Ok(Payload::Video {
            width: v.number("width").unwrap_or(0.0) as u32,
            height: v.number("height").unwrap_or(0.0) as u32,
            stride: v.number("step").unwrap_or(0.0) as u32,
            format: profile
                .map(|p| p.format.clone())
                .unwrap_or_else(|| format_from_encoding(&encoding)),
            data: Bytes::copy_from_slice(data),
        })
    }
}

/// A ROS 1 `sensor_msgs/Image`, its pixels a slice of the buffer it was read from.
struct Ros1Image {
    seq: u32,
    stamp_ms: f64,
    height: u32,
    width: u32,
    encoding: String,
    step: u32,
    data: Bytes,
}

/// A bounds-checked reader over ROS 1 bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn word(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

impl Ros1Image {
    fn parse(bytes: &Bytes) -> Option<Self> {
        let mut c = Cursor { bytes, at: 0 };
        let (seq, sec, nsec) = (c.word()?, c.word()?, c.word()?);
        let frame_id = c.word()? as usize;
        c.take(frame_id)?;
        let (height, width) = (c.word()?, c.word()?);
        let len = c.word()? as usize;
        let encoding = String::from_utf8_lossy(c.take(len)?).into_owned();
        c.take(1)?; // is_bigendian
        let step = c.word()?;
        let n = c.word()? as usize;
        c.take(n)?;
        Some(Self {
            seq,
            stamp_ms: sec as f64 * 1e3 + nsec as f64 / 1e6,
            height,
            width,
            encoding,
            step,
            data: bytes.slice(c.at - n..c.at),
        })
    }
}

/// A value of an option: at the description time its start value, later a change.
fn set_option(o: &mut SensorOption, time: i64, value: f32) {
    if time <= DESCRIPTION_TIME_NS {
        o.value = value;
    } else {
        o.history.push((time, value));
    }
}

/// A `realsense_msgs/Notification` (ROS 1) or its fields packed in a `String` (rosbag2).
fn notification(v: &MessageView, sensor: u32, category: &str, recorded_ns: i64) -> Notification {
    let text = |k: &str| v.text(k).unwrap_or_default();
    match v.text("data").map(|d| pairs(&d)) {
        Some(p) => {
            let get = |k: &str| lookup(&p, k).unwrap_or_default().to_string();
            Notification {
                sensor,
                category: lookup(&p, "category").unwrap_or(category).to_string(),
                severity: get("severity"),
                description: get("description"),
                timestamp_ns: lookup(&p, "timestamp")
                    .and_then(|t| t.parse::<f64>().ok())
                    .map_or(0, |ms| (ms * 1e6) as i64),
                serialized_data: get("data"),
                recorded_ns,
            }
        }
        None => Notification {
            sensor,
            category: text("category"),
            severity: text("severity"),
            description: text("description"),
            timestamp_ns: match v.field("timestamp") {
                Some(Value::Time { sec, nsec }) => *sec as i64 * 1_000_000_000 + *nsec as i64,
                _ => 0,
            },
            serialized_data: text("serialized_data"),
            recorded_ns,
        },
    }
}

fn option<'a>(sensor: &'a mut Sensor, name: &str) -> &'a mut SensorOption {
    let at = match sensor.options.iter().position(|o| o.name == name) {
        Some(i) => i,
        None => {
            sensor.options.push(SensorOption {
                name: name.to_string(),
                ..SensorOption::default()
            });
            sensor.options.len() - 1
        }
    };
    &mut sensor.options[at]
}

/// A `geometry_msgs/Vector3` field, zero where missing.
fn vector(v: &MessageView, name: &str) -> [f64; 3] {
    let m = v.message(name);
    let get = |n| m.and_then(|m| m.number(n)).unwrap_or(0.0);
    [get("x"), get("y"), get("z")]
}

fn field_f64s(v: &MessageView, name: &str) -> Option<Vec<f64>> {
    v.field(name)?.as_f64s()
}

/// A `KeyValue` message, or the pairs packed in a `String`.
fn key_values(v: &MessageView, packed: Option<Vec<(String, String)>>) -> Vec<(String, String)> {
    packed.unwrap_or_else(|| match (v.text("key"), v.text("value")) {
        (Some(k), Some(val)) => vec![(k, val)],
        _ => Vec::new(),
    })
}

/// One `KeyValue` (ROS 1 layout) or a packed `String` (rosbag2 layout) of frame metadata.
fn apply_metadata(frame: &mut Frame, v: &MessageView) {
    let pairs = match (v.text("key"), v.text("value")) {
        (Some(k), Some(val)) => vec![(k, val)],
        _ => v.text("data").map(|d| pairs(&d)).unwrap_or_default(),
    };
    for (key, value) in pairs {
        match key.as_str() {
            "timestamp_domain" => frame.domain = snake_case(&value),
            "Frame number" => frame.number = value.parse().unwrap_or(frame.number),
            "timestamp" | "frame_timestamp" => {
                frame.timestamp_ms = value.parse().unwrap_or(frame.timestamp_ms)
            }
            "Tracker Confidence" | "Mapper Confidence" => {
                if let (Payload::Pose(p), Ok(n)) = (&mut frame.payload, value.parse()) {
                    if key.starts_with("Tracker") {
                        p.tracker_confidence = n;
                    } else {
                        p.mapper_confidence = n;
                    }
                }
            }
            "system_time" | "depth_units" => {}
            _ => {
                if let Ok(n) = value.parse::<i64>() {
                    frame.metadata.push((snake_case(&key), n));
                }
            }
        }
    }
}

impl Iterator for Recording {
    type Item = Result<Frame, RealSenseError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_frame().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_storage::rosbag1::{BagWriter, Connection, WriterOptions};

    #[test]
    fn packed_pairs() {
        let p = pairs("encoding=Z16;fps=30;coeffs=0.1,0.2;");
        assert_eq!(lookup(&p, "fps"), Some("30"));
        assert_eq!(floats(lookup(&p, "coeffs").unwrap()), [0.1, 0.2]);
        assert_eq!(lookup(&p, "none"), None);
    }

    #[test]
    fn a_message_that_does_not_decode_is_a_codec_error_with_its_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("short.bag");
        let mut w = BagWriter::create(&path, WriterOptions::default()).unwrap();
        let id = w.add_connection(Connection {
            id: 0,
            topic: "/file_version".into(),
            type_name: "std_msgs/UInt32".into(),
            md5sum: "304a39449588c7f8ce2df6e8001c5fce".into(),
            message_definition: "uint32 data\n".into(),
            callerid: None,
            latching: false,
        });
        w.write(id, 1, &[4, 0]).unwrap(); // two bytes of a four-byte number
        w.finish().unwrap();
        let e = Recording::open(&path).err().unwrap();
        assert!(
            matches!(&e, RealSenseError::Codec { topic, .. } if topic == "/file_version"),
            "{e:?}"
        );
        let source = std::error::Error::source(&e).unwrap();
        assert!(
            matches!(
                source
                    .downcast_ref::<Box<rosbag2_rs_codec::msg::CodecError>>()
                    .map(|b| &**b),
                Some(rosbag2_rs_codec::msg::CodecError::Decode { .. })
            ),
            "{source:?}"
        );
        assert!(e.to_string().contains("short.bag"), "{e}");
    }

    #[test]
    fn a_bag_that_is_no_recording_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.bag");
        let mut w = BagWriter::create(&path, WriterOptions::default()).unwrap();
        let id = w.add_connection(Connection {
            id: 0,
            topic: "/chatter".into(),
            type_name: "std_msgs/String".into(),
            md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
            message_definition: "string data\n".into(),
            callerid: None,
            latching: false,
        });
        w.write(id, 1, &[1, 0, 0, 0, b'x']).unwrap();
        w.finish().unwrap();
        let e = Recording::open(&path).err().unwrap().to_string();
        assert!(
            e.contains("plain.bag") && e.contains("no /file_version"),
            "{e}"
        );
        std::fs::write(&path, b"neither").unwrap();
        assert!(Recording::open(&path).is_err());
    }
}
