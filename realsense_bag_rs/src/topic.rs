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
    /// `.../pose/data` or `.../6dof/data` (older layouts).
    PoseData,
    /// `.../Pose_<i>/pose/transform/data`: a 6DoF frame's position and orientation.
    PoseTransform,
    /// `.../Pose_<i>/pose/accel/data`: its linear and angular acceleration.
    PoseAccel,
    /// `.../Pose_<i>/pose/twist/data`: its linear and angular velocity.
    PoseTwist,
    /// `.../occupancy_map/data`.
    OccupancyMap,
    /// `.../<image|imu|pose|6dof>/metadata`.
    Metadata,
    /// `.../tf/<group>` (or `tf/ref_<group>`): extrinsics to a reference.
    Extrinsics(u32),
    /// `/device_<d>/sensor_<s>/property`: file version 2 options (`KeyValue`, name and value).
    Property,
    /// `/device_<d>/sensor_<s>/notification/<category>`.
    Notification(String),
    /// `/device_<d>/sensor_<s>/time`: the sensor time stream (`TimeReference`).
    TimeStream,
    /// `/device_<d>/sensor_<s>/post_processing`: recommended processing blocks.
    ProcessingBlocks,
    /// `/log`: log messages (`rosgraph_msgs/Log`).
    Log,
    /// `/additional_info`: free key-value pairs about the file.
    AdditionalInfo,
    /// Anything else (`/tf_static`, ...).
    Other,
}

impl TopicKind {
    /// True for the topics that carry a stream's frames (not its description or metadata).
    pub fn is_frame_data(&self) -> bool {
        matches!(
            self,
            Self::ImageData
                | Self::ImuData
                | Self::PoseData
                | Self::PoseTransform
                | Self::PoseAccel
                | Self::PoseTwist
                | Self::OccupancyMap
        )
    }

    /// True for what happens during a recording outside the frames: option changes are
    /// description topics, these are events (notifications, the log, the time stream).
    pub fn is_event(&self) -> bool {
        matches!(self, Self::Notification(_) | Self::Log | Self::TimeStream)
    }
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
    let global = |kind| Topic {
        sensor: None,
        stream: None,
        kind,
    };
    match parts.as_slice() {
        ["file_version"] => return global(TopicKind::FileVersion),
        ["log"] => return global(TopicKind::Log),
        ["additional_info"] => return global(TopicKind::AdditionalInfo),
        _ => {}
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
        ["property"] => return sensor_topic(TopicKind::Property),
        ["time"] => return sensor_topic(TopicKind::TimeStream),
        ["post_processing"] => return sensor_topic(TopicKind::ProcessingBlocks),
        ["notification", category] => {
            return sensor_topic(TopicKind::Notification(category.replace('_', " ")))
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
        ["pose", "transform", "data"] => TopicKind::PoseTransform,
        ["pose", "accel", "data"] => TopicKind::PoseAccel,
        ["pose", "twist", "data"] => TopicKind::PoseTwist,
        ["occupancy_map", "data"] => TopicKind::OccupancyMap,
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

    #[test]
    fn every_topic_kind_of_the_file_format() {
        let kind = |t: &str| parse(t).kind;
        assert_eq!(kind("/device_0/sensor_1/property"), TopicKind::Property);
        assert_eq!(kind("/device_0/sensor_1/time"), TopicKind::TimeStream);
        assert_eq!(
            kind("/device_0/sensor_0/post_processing"),
            TopicKind::ProcessingBlocks
        );
        assert_eq!(
            kind("/device_0/sensor_0/notification/Frame Corrupted"),
            TopicKind::Notification("Frame Corrupted".into())
        );
        assert_eq!(
            kind("/device_0/sensor_0/notification/Frame_Corrupted"),
            TopicKind::Notification("Frame Corrupted".into())
        );
        assert_eq!(kind("/log"), TopicKind::Log);
        assert_eq!(kind("/additional_info"), TopicKind::AdditionalInfo);
        let pose = parse("/device_0/sensor_2/Pose_0/pose/transform/data");
        assert_eq!(pose.stream, Some(("Pose".into(), 0)));
        assert_eq!(pose.kind, TopicKind::PoseTransform);
        assert!(pose.kind.is_frame_data());
        assert_eq!(
            kind("/device_0/sensor_2/Pose_0/pose/accel/data"),
            TopicKind::PoseAccel
        );
        assert_eq!(
            kind("/device_0/sensor_2/Pose_0/pose/twist/data"),
            TopicKind::PoseTwist
        );
        assert_eq!(
            kind("/device_0/sensor_2/Pose_0/pose/metadata"),
            TopicKind::Metadata
        );
        assert_eq!(
            kind("/device_0/sensor_2/Fisheye_1/occupancy_map/data"),
            TopicKind::OccupancyMap
        );
        assert!(!kind("/device_0/sensor_0/Depth_0/image/metadata").is_frame_data());
    }
}
