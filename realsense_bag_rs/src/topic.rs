//! The RealSense topic layout: `/device_<d>/sensor_<s>/<Stream>_<i>/<what>`.

/// What a topic carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicKind {
    /// `/file_version`.
    FileVersion,
    /// `/device_<d>/info`: device information.
    DeviceInfo,
    /// `/device_<d>/sensor_<s>/info`: sensor information.
    SensorInfo,
    /// `.../option/<name>/value`.
    OptionValue(String),
    /// `.../option/<name>/description`.
    OptionDescription(String),
    /// `.../<Stream>_<i>/info`: `StreamInfo` (ROS 1) or `encoding=..;fps=..` (rosbag2).
    StreamInfo,
    /// `.../<Stream>_<i>/info/camera_info` (ROS 1) or `.../camera_info` (rosbag2).
    CameraInfo,
    /// `.../<Stream>_<i>/imu_intrinsic` (or `info/imu_intrinsic`).
    ImuIntrinsic,
    /// `.../image/data` (`Image`) or `.../image/data/compressed[Depth]` (`CompressedImage`).
    ImageData,
    /// `.../image/camera_info`: per-frame camera info (rosbag2 layout).
    ImageCameraInfo,
    /// `.../imu/data`.
    ImuData,
    /// `.../pose/data` or `.../6dof/data`.
    PoseData,
    /// `.../<image|imu|pose|6dof>/metadata`.
    Metadata,
    /// `.../tf/<group>` (or `tf/ref_<group>`): extrinsics to a reference.
    Extrinsics(u32),
    /// Anything else (logs, time stream, additional info, `/tf_static`).
    Other,
}

/// A parsed RealSense topic name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topic {
    /// Sensor index, for sensor-level topics.
    pub sensor: Option<u32>,
    /// Stream type as written (`Depth`, `Infrared`, `Color`, `Accel`, `Gyro`, `Pose`, ...) and
    /// index, for stream-level topics.
    pub stream: Option<(String, u32)>,
    /// What the topic carries.
    pub kind: TopicKind,
}

fn indexed(part: &str, prefix: &str) -> Option<u32> {
    part.strip_prefix(prefix)?.parse().ok()
}

/// `Depth_0` → (`Depth`, 0).
fn stream_part(part: &str) -> Option<(String, u32)> {
    let (name, index) = part.rsplit_once('_')?;
    Some((name.to_string(), index.parse().ok()?))
}

/// Parses a topic name; `None` for topics outside the layout.
pub fn parse(topic: &str) -> Topic {
    let parts: Vec<&str> = topic.trim_start_matches('/').split('/').collect();
    let other = Topic {
        sensor: None,
        stream: None,
        kind: TopicKind::Other,
    };
    if parts == ["file_version"] {
        return Topic {
            kind: TopicKind::FileVersion,
            ..other
        };
    }
    let Some(_device) = parts.first().and_then(|p| indexed(p, "device_")) else {
        return other;
    };
    if parts.len() == 2 && parts[1] == "info" {
        return Topic {
            kind: TopicKind::DeviceInfo,
            ..other
        };
    }
    let Some(sensor) = parts.get(1).and_then(|p| indexed(p, "sensor_")) else {
        return other;
    };
    let sensor_topic = |kind| Topic {
        sensor: Some(sensor),
        stream: None,
        kind,
    };
    match &parts[2..] {
        ["info"] => return sensor_topic(TopicKind::SensorInfo),
        ["option", name, "value"] => {
            return sensor_topic(TopicKind::OptionValue(name.replace('_', " ")))
        }
        ["option", name, "description"] => {
            return sensor_topic(TopicKind::OptionDescription(name.replace('_', " ")))
        }
        _ => {}
    }
    let Some(stream) = parts.get(2).and_then(|p| stream_part(p)) else {
        return sensor_topic(TopicKind::Other);
    };
    let kind = match &parts[3..] {
        ["info"] => TopicKind::StreamInfo,
        ["info", "camera_info"] | ["camera_info"] => TopicKind::CameraInfo,
        ["info", "imu_intrinsic"] | ["imu_intrinsic"] => TopicKind::ImuIntrinsic,
        ["image", "data", ..] => TopicKind::ImageData,
        ["image", "camera_info"] => TopicKind::ImageCameraInfo,
        ["imu", "data"] => TopicKind::ImuData,
        ["pose", "data"] | ["6dof", "data"] => TopicKind::PoseData,
        [_, "metadata"] => TopicKind::Metadata,
        ["tf", group] => match group.trim_start_matches("ref_").parse() {
            Ok(g) => TopicKind::Extrinsics(g),
            Err(_) => TopicKind::Other,
        },
        _ => TopicKind::Other,
    };
    Topic {
        sensor: Some(sensor),
        stream: Some(stream),
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts() {
        let t = parse("/device_0/sensor_1/Color_0/image/data");
        assert_eq!(t.sensor, Some(1));
        assert_eq!(t.stream, Some(("Color".into(), 0)));
        assert_eq!(t.kind, TopicKind::ImageData);
        assert_eq!(
            parse("/device_0/sensor_0/Depth_0/image/data/compressedDepth").kind,
            TopicKind::ImageData
        );
        assert_eq!(
            parse("/device_0/sensor_0/Depth_0/info/camera_info").kind,
            TopicKind::CameraInfo
        );
        assert_eq!(
            parse("/device_0/sensor_0/Depth_0/camera_info").kind,
            TopicKind::CameraInfo
        );
        assert_eq!(
            parse("/device_0/sensor_0/option/Frames_Queue_Size/value").kind,
            TopicKind::OptionValue("Frames Queue Size".into())
        );
        assert_eq!(
            parse("/device_0/sensor_0/Depth_0/tf/ref_1").kind,
            TopicKind::Extrinsics(1)
        );
        assert_eq!(parse("/device_0/info").kind, TopicKind::DeviceInfo);
        assert_eq!(parse("/file_version").kind, TopicKind::FileVersion);
        assert_eq!(parse("/tf_static").kind, TopicKind::Other);
    }
}
