//! The ROS 2 message types a recording's frames and motion become (the bridge to camera topics,
//! the SDK's `.db3` layout), each parsed once from its definition.

use std::collections::HashMap;

use rosbag2_rs_codec::msg::{encode_cdr_at, CdrHeader, CodecError, Dialect, Registry, Value};
use rosbag2_rs_codec::{MessageDefinition, MessageDefinitionCache};

/// The driver's metadata message.
pub(crate) const METADATA_TYPE: &str = "realsense2_camera_msgs/msg/Metadata";
const METADATA_DEF: &str = "std_msgs/Header header\nstring json_data\n";

/// ROS 2 message types to encode, each with its registry, index and definition (shared with
/// the `.db3` layout writer).
pub(crate) struct Types {
    pub(crate) by_name: HashMap<String, (Registry, usize, MessageDefinition)>,
}

impl Types {
    /// The types the bridge writes.
    pub(crate) fn new() -> Result<Self, CodecError> {
        Self::of(&[
            "sensor_msgs/msg/Image",
            "sensor_msgs/msg/CameraInfo",
            "sensor_msgs/msg/Imu",
            "nav_msgs/msg/Odometry",
            "tf2_msgs/msg/TFMessage",
            METADATA_TYPE,
        ])
    }

    /// The types `names` (`pkg/msg/Type`), their definitions from the bundled ones (or an
    /// installed ROS 2).
    pub(crate) fn of(names: &[&str]) -> Result<Self, CodecError> {
        let mut cache = MessageDefinitionCache::new();
        let mut by_name = HashMap::new();
        for &name in names {
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
            reg.parse_concatenated(name, &def.encoded_message_definition, Dialect::Ros2)?;
            let index = reg
                .index_of(name)
                .ok_or_else(|| CodecError::Missing(name.to_string()))?;
            by_name.insert(name.to_string(), (reg, index, def));
        }
        Ok(Self { by_name })
    }

    /// A message of `name` built from its zero value by `fill` (dotted paths), as CDR.
    pub(crate) fn encode(&self, name: &str, fill: &[(&str, Value)]) -> Result<Vec<u8>, CodecError> {
        let (reg, index, _) = &self.by_name[name];
        let mut value = reg.default_value(*index);
        for (path, v) in fill {
            reg.set(*index, &mut value, path, v.clone())?;
        }
        encode_cdr_at(reg, *index, &value, CdrHeader::default())
    }
}
