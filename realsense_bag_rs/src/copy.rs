//! Copying a RealSense ROS 1 recording as it is: every message of every topic kind (the device
//! description, options and their changes, v2 properties, frames of every stream with their
//! metadata, pose, notifications, the log, the time stream, additional info), with the
//! recorder's own connections (type, md5sum, definition), cut to a time window and a selection
//! of streams, in another chunk compression.
//!
//! A cut keeps the whole description and, for each option (and v2 property and processing
//! block list), its latest value from before the cut as the value at the start, as if the
//! recording had begun there; the kept messages move back by the cut so that the copy starts
//! where the SDK's recordings start.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use rosbag2_rs_storage::rosbag1::{BagReader, BagWriter, Connection, WriterOptions};
use rosbag2_rs_storage::CompressionFormat;
use rosbag2_rs_storage::{OpenMode, TopicFilter};

use crate::error::RealSenseError;
use crate::model::{stream_name, Event, DESCRIPTION_TIME_NS};
use crate::reader::Recording;
use crate::topic::{self, TopicKind};
use crate::writer::RecordingWriter;

/// What to copy.
#[derive(Debug, Clone)]
pub struct CopyOptions {
    /// Keep what happened from this bag time on (ns); the description is always kept.
    pub start_ns: Option<i64>,
    /// Keep what happened up to this bag time (ns).
    pub end_ns: Option<i64>,
    /// The streams to keep, by their data topics (`.../Depth_0/image/data`): a stream is kept,
    /// with all its topics, when the filter accepts one of its data topics. Events outside the
    /// streams (notifications, `/log`, time streams) are kept when the filter accepts them; the
    /// device and sensor description always is.
    pub topics: TopicFilter,
    /// Chunk compression of a `.bag` copy (a `.db3` has none).
    pub compression: CompressionFormat,
}

impl Default for CopyOptions {
    /// Everything, in uncompressed chunks.
    fn default() -> Self {
        Self {
            start_ns: None,
            end_ns: None,
            topics: TopicFilter::default(),
            compression: CompressionFormat::None,
        }
    }
}

/// What a copy wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Messages written.
    pub messages: u64,
    /// Frames written (messages on data topics).
    pub frames: u64,
    /// Streams left out by the topic selection (`/device_0/sensor_0/Depth_0`).
    pub dropped_streams: Vec<String>,
}

/// How a connection's messages are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Left out (a stream not selected, an event the filter rejects).
    Drop,
    /// Description: kept at its time; later messages kept within the window.
    Describe,
    /// A value with a history (option value, v2 property, processing blocks): its latest
    /// value before the cut becomes its value at the start.
    Stateful,
    /// A frame's data.
    Frame,
    /// Anything else that happens during the recording (metadata, events).
    Event,
}

/// The stream part of a topic: `/device_0/sensor_0/Depth_0`.
fn stream_prefix(name: &str) -> Option<String> {
    let t = topic::parse(name);
    let (stream, index) = t.stream?;
    let device = name.trim_start_matches('/').split('/').next()?;
    Some(format!(
        "/{device}/sensor_{}/{stream}_{index}",
        t.sensor.unwrap_or(0)
    ))
}

/// The key of a v2 property message (`diagnostic_msgs/KeyValue`, ROS 1 bytes: the key first).
fn property_key(data: &[u8]) -> Option<Vec<u8>> {
    let len = u32::from_le_bytes(data.get(..4)?.try_into().ok()?) as usize;
    data.get(4..4 + len).map(<[u8]>::to_vec)
}

/// Copies the RealSense ROS 1 recording `input` to `output` (which must not exist).
pub fn copy_bag(
    input: &Path,
    output: &Path,
    options: &CopyOptions,
) -> Result<CopyReport, RealSenseError> {
    let mut bag = BagReader::open(input, OpenMode::Strict)?;
    if !bag.connections().iter().any(|c| c.topic == "/file_version") {
        return Err(RealSenseError::Missing {
            path: input.to_path_buf(),
            what: "no /file_version topic".into(),
        });
    }
    // Streams and their data topics, to select whole streams.
    let mut streams: BTreeMap<String, (bool, bool)> = BTreeMap::new(); // (has data, selected)
    for c in bag.connections() {
        let Some(prefix) = stream_prefix(&c.topic) else {
            continue;
        };
        let data = topic::parse(&c.topic).kind.is_frame_data();
        let e = streams.entry(prefix).or_default();
        let accepted = options.topics.matches(&c.topic);
        match (e.0, data) {
            (false, true) => *e = (true, accepted),
            (true, true) => e.1 |= accepted,
            (false, false) => e.1 |= accepted,
            (true, false) => {}
        }
    }
    let mut roles: HashMap<u32, Role> = HashMap::new();
    for c in bag.connections() {
        let kind = topic::parse(&c.topic).kind;
        let role = if let Some(prefix) = stream_prefix(&c.topic) {
            if !streams.get(&prefix).is_some_and(|s| s.1) {
                Role::Drop
            } else if kind.is_frame_data() {
                Role::Frame
            } else if kind == TopicKind::Metadata {
                Role::Event
            } else {
                Role::Describe
            }
        } else {
            match kind {
                TopicKind::OptionValue(_) | TopicKind::Property | TopicKind::ProcessingBlocks => {
                    Role::Stateful
                }
                TopicKind::FileVersion
                | TopicKind::DeviceInfo
                | TopicKind::SensorInfo
                | TopicKind::OptionDescription(_)
                | TopicKind::AdditionalInfo => Role::Describe,
                _ if options.topics.matches(&c.topic) => Role::Event,
                _ => Role::Drop,
            }
        };
        roles.insert(c.id, role);
    }
    let start = options.start_ns.filter(|&s| s > DESCRIPTION_TIME_NS);
    let end = options.end_ns.unwrap_or(i64::MAX);
    // Pass 1: each stateful value's latest message before the cut.
    let mut latest: BTreeMap<(u32, Vec<u8>), bytes::Bytes> = BTreeMap::new();
    if let Some(start) = start {
        bag.set_filter(|c| roles.get(&c.id) == Some(&Role::Stateful));
        bag.seek(i64::MIN);
        while let Some(m) = bag.read_next()? {
            if m.time >= start {
                break;
            }
            let key = match topic::parse(bag.connection(m.connection).map_or("", |c| &c.topic)).kind
            {
                TopicKind::Property => property_key(&m.data).unwrap_or_default(),
                _ => Vec::new(),
            };
            latest.insert((m.connection, key), m.data);
        }
    }
    // Pass 2: everything kept, in time order.
    let shift = start.map_or(0, |s| s - (DESCRIPTION_TIME_NS + 1));
    let mut out = Out {
        writer: BagWriter::create(
            output,
            WriterOptions {
                compression: options.compression,
                ..WriterOptions::default()
            },
        )?,
        ids: HashMap::new(),
        connections: bag
            .connections()
            .iter()
            .map(|c| (c.id, c.clone()))
            .collect(),
    };
    let mut report = CopyReport {
        dropped_streams: streams
            .iter()
            .filter(|(_, s)| !s.1)
            .map(|(p, _)| p.clone())
            .collect(),
        ..CopyReport::default()
    };
    bag.set_filter(|c| roles.get(&c.id).is_some_and(|r| *r != Role::Drop));
    bag.seek(i64::MIN);
    let mut folded = start.is_none();
    while let Some(m) = bag.read_next()? {
        let role = roles.get(&m.connection).copied().unwrap_or(Role::Drop);
        if m.time <= DESCRIPTION_TIME_NS {
            if role == Role::Stateful && !folded {
                continue; // written from `latest` below
            }
            out.write(m.connection, m.time, &m.data)?;
            report.messages += 1;
            continue;
        }
        if !folded {
            report.messages += out.write_latest(&latest)?;
            folded = true;
        }
        if start.is_some_and(|s| m.time < s) || m.time > end {
            continue;
        }
        out.write(m.connection, m.time - shift, &m.data)?;
        report.messages += 1;
        report.frames += u64::from(role == Role::Frame);
    }
    if !folded {
        report.messages += out.write_latest(&latest)?;
    }
    out.writer.finish()?;
    Ok(report)
}

/// The copy being written: the input's connections, added as they are first used.
struct Out {
    writer: BagWriter,
    /// Input connection id → output connection id.
    ids: HashMap<u32, u32>,
    connections: HashMap<u32, Connection>,
}

impl Out {
    fn write(&mut self, connection: u32, time: i64, data: &[u8]) -> Result<(), RealSenseError> {
        let id = match self.ids.get(&connection) {
            Some(&id) => id,
            None => {
                let c = self.connections.get(&connection).cloned().ok_or_else(|| {
                    RealSenseError::Invalid {
                        path: self.writer.path().to_path_buf(),
                        topic: "?".into(),
                        reason: format!("message of unknown connection {connection}"),
                    }
                })?;
                let id = self.writer.add_connection(c);
                self.ids.insert(connection, id);
                id
            }
        };
        Ok(self.writer.write(id, time, data)?)
    }

    /// Writes each stateful value's latest message at the description time.
    fn write_latest(
        &mut self,
        latest: &BTreeMap<(u32, Vec<u8>), bytes::Bytes>,
    ) -> Result<u64, RealSenseError> {
        for ((connection, _), data) in latest {
            self.write(*connection, DESCRIPTION_TIME_NS, data)?;
        }
        Ok(latest.len() as u64)
    }
}

/// Copies a RealSense recording of either container to either container: to a ROS 1 `.bag`,
/// a ROS 1 input message by message ([`copy_bag`]); to a rosbag2 `.db3` (the layout SDK 2.58
/// and newer record, chosen by the output's extension), and from a `.db3`, through the model
/// ([`Recording`] to [`RecordingWriter`]), its streams selected by their data topics as the
/// `.bag` names them (`/device_0/sensor_0/Depth_0/image/data`).
pub fn copy_recording(
    input: &Path,
    output: &Path,
    options: &CopyOptions,
) -> Result<CopyReport, RealSenseError> {
    let to_db3 = crate::writer::is_db3_path(output);
    if !to_db3 && crate::source::is_ros1(input)? {
        return copy_bag(input, output, options);
    }
    let mut rec = Recording::open(input)?;
    let start = options.start_ns.filter(|&s| s > rec.time_range().0);
    let end = options.end_ns.unwrap_or(i64::MAX);
    let mut device = match start {
        Some(s) => rec.device().at(s - 1),
        None => rec.device().clone(),
    };
    let mut report = CopyReport::default();
    for sensor in &mut device.sensors {
        let index = sensor.index;
        sensor.streams.retain(|p| {
            let keep = options
                .topics
                .matches(&data_topic(index, &p.stream, p.index));
            if !keep {
                report.dropped_streams.push(format!(
                    "/device_0/sensor_{index}/{}_{}",
                    stream_name(&p.stream),
                    p.index
                ));
            }
            keep
        });
    }
    let keep = |sensor: u32, stream: &str, index: u32| {
        device.sensors.iter().any(|s| {
            s.index == sensor
                && s.streams
                    .iter()
                    .any(|p| p.stream == stream && p.index == index)
        })
    };
    let shift = start.map_or(0, |s| s - (DESCRIPTION_TIME_NS + 1));
    let mut writer = RecordingWriter::create_for_path(output, &device, options.compression)?;
    if let Some(s) = start {
        rec.seek(s)?;
    }
    while let Some(mut event) = rec.next_event()? {
        if event.recorded_ns() > end {
            break;
        }
        match &mut event {
            Event::Frame(f) if !keep(f.sensor, &f.stream, f.index) => continue,
            Event::Frame(f) => {
                f.recorded_ns -= shift;
                report.frames += 1;
            }
            Event::Option(o) => o.recorded_ns -= shift,
            Event::Notification(n) => {
                let topic = format!("/device_0/sensor_{}/notification/{}", n.sensor, n.category);
                if !options.topics.matches(&topic) {
                    continue;
                }
                n.recorded_ns -= shift;
            }
            Event::Log(_) if !options.topics.matches("/log") => continue,
            Event::Log(l) => l.recorded_ns -= shift,
            Event::Time(t) => {
                if !options
                    .topics
                    .matches(&format!("/device_0/sensor_{}/time", t.sensor))
                {
                    continue;
                }
                t.recorded_ns -= shift;
            }
        }
        writer.write_event(&event)?;
        report.messages += 1;
    }
    writer.finish()?;
    Ok(report)
}

/// The `.bag` layout's data topic of a stream.
fn data_topic(sensor: u32, stream: &str, index: u32) -> String {
    let kind = match stream {
        "accel" | "gyro" => "imu",
        "pose" => "pose/transform",
        _ => "image",
    };
    format!(
        "/device_0/sensor_{sensor}/{}_{index}/{kind}/data",
        stream_name(stream)
    )
}
