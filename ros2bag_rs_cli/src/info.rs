//! `info`: what `ros2 bag info` prints, as text or JSON.

use std::path::Path;

use anyhow::Result;
use rosbag2_rs_storage::{BagMetadata, SequentialReader};
use serde_json::json;

use crate::time_format;

/// The facts `info` reports about one bag.
pub struct BagSummary {
    metadata: BagMetadata,
    /// The recorded camera, when the bag is a RealSense recording.
    realsense: Option<realsense_bag_rs::Device>,
}

impl BagSummary {
    /// Opens the bag (reading its files when it has no metadata.yaml).
    pub fn load(path: &Path) -> Result<Self> {
        let reader = SequentialReader::open(path)?;
        let mut metadata = reader.bags()[0].metadata.clone();
        if metadata.relative_file_paths.is_empty() {
            metadata.relative_file_paths = reader.bags()[0]
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect();
        }
        let is_realsense = path.is_file()
            && metadata
                .topics_with_message_count
                .iter()
                .any(|t| t.topic_metadata.name == "/file_version");
        let realsense = if is_realsense {
            Some(realsense_bag_rs::Recording::open(path)?.device().clone())
        } else {
            None
        };
        Ok(Self {
            metadata,
            realsense,
        })
    }

    fn realsense_text(device: &realsense_bag_rs::Device, pad: &str) -> String {
        let info: Vec<String> = device
            .info
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let mut out = format!(
            "RealSense device:  {} (file version {})\n",
            info.join(", "),
            device.file_version
        );
        let mut sensors = Vec::new();
        for s in &device.sensors {
            let streams: Vec<String> = s
                .streams
                .iter()
                .map(|p| match &p.intrinsics {
                    Some(i) => format!(
                        "{} {} {} {}x{} @{} fps",
                        p.stream, p.index, p.format, i.width, i.height, p.fps
                    ),
                    None => format!("{} {} {} @{} fps", p.stream, p.index, p.format, p.fps),
                })
                .collect();
            let options: Vec<String> = s
                .options
                .iter()
                .map(|o| format!("{}={}", o.name, o.value))
                .collect();
            sensors.push(format!(
                "{}: {}{}",
                s.name().unwrap_or("?"),
                streams.join(", "),
                if options.is_empty() {
                    String::new()
                } else {
                    format!(" | options: {}", options.join(", "))
                }
            ));
        }
        out += &format!("Sensors:           {}\n", sensors.join(&format!("\n{pad}")));
        out
    }

    /// The `ros2 bag info` text.
    pub fn to_text(&self) -> String {
        let m = &self.metadata;
        let pad = " ".repeat(19);
        let mut out = String::from("\n");
        out += &format!(
            "Files:             {}\n",
            m.relative_file_paths.join(&format!("\n{pad}"))
        );
        out += &format!("Bag size:          {}\n", time_format::size(m.bag_size));
        out += &format!("Storage id:        {}\n", m.storage_identifier);
        out += &format!(
            "ROS Distro:        {}\n",
            if m.ros_distro.is_empty() {
                "unknown"
            } else {
                &m.ros_distro
            }
        );
        out += &format!("Duration:          {}\n", time_format::duration(m.duration));
        out += &format!(
            "Start:             {}\n",
            time_format::timestamp(m.starting_time)
        );
        out += &format!(
            "End:               {}\n",
            time_format::timestamp(m.end_time())
        );
        out += &format!("Messages:          {}\n", m.message_count);
        let topics: Vec<String> = m
            .topics_with_message_count
            .iter()
            .map(|t| {
                format!(
                    "Topic: {} | Type: {} | Count: {} | Serialization Format: {}",
                    t.topic_metadata.name,
                    t.topic_metadata.type_name,
                    t.message_count,
                    t.topic_metadata.serialization_format
                )
            })
            .collect();
        out += &format!("Topic information: {}\n", topics.join(&format!("\n{pad}")));
        if !m.custom_data.is_empty() {
            let pairs: Vec<String> = m
                .custom_data
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            out += &format!("Custom data:       {}\n", pairs.join(&format!("\n{pad}")));
        }
        if let Some(device) = &self.realsense {
            out += &Self::realsense_text(device, &pad);
        }
        out
    }

    /// The same facts as JSON, for scripts.
    pub fn to_json(&self) -> serde_json::Value {
        let m = &self.metadata;
        json!({
            "files": m.files.iter().map(|f| json!({
                "path": f.path, "starting_time_ns": f.starting_time, "duration_ns": f.duration, "message_count": f.message_count,
            })).collect::<Vec<_>>(),
            "relative_file_paths": m.relative_file_paths,
            "bag_size": m.bag_size,
            "storage_identifier": m.storage_identifier,
            "ros_distro": m.ros_distro,
            "duration_ns": m.duration,
            "starting_time_ns": m.starting_time,
            "ending_time_ns": m.end_time(),
            "message_count": m.message_count,
            "topics": m.topics_with_message_count.iter().map(|t| json!({
                "name": t.topic_metadata.name,
                "type": t.topic_metadata.type_name,
                "serialization_format": t.topic_metadata.serialization_format,
                "message_count": t.message_count,
                "offered_qos_profiles": rosbag2_rs_storage::qos::serialize_profiles(&t.topic_metadata.offered_qos_profiles),
                "type_description_hash": t.topic_metadata.type_description_hash,
            })).collect::<Vec<_>>(),
            "compression_format": m.compression_format,
            "compression_mode": m.compression_mode,
            "custom_data": m.custom_data,
            "metadata_version": m.version,
            "realsense": self.realsense.as_ref().map(|d| json!({
                "file_version": d.file_version,
                "info": d.info.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                "sensors": d.sensors.iter().map(|s| json!({
                    "name": s.name(),
                    "options": s.options.iter().map(|o| json!({"name": o.name, "value": o.value, "description": o.description})).collect::<Vec<_>>(),
                    "streams": s.streams.iter().map(|p| json!({
                        "stream": p.stream, "index": p.index, "format": p.format, "fps": p.fps,
                        "width": p.intrinsics.as_ref().map(|i| i.width),
                        "height": p.intrinsics.as_ref().map(|i| i.height),
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })),
        })
    }
}
