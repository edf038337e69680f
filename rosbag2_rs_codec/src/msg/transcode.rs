//! Per-type converters between ROS 1 bytes and CDR bytes, built from the definitions a bag
//! stores. Messages are copied field by field from one serialization to the other (see
//! `wire::transcode_struct`), without an intermediate value tree.

use super::definition::{ros2_name, Dialect, Registry};
use super::error::CodecError;
use super::mapping;
use super::wire::{self, CdrRead, CdrWrite, Direction, Ros1Read, Ros1Write};

/// Converts messages of one ROS 1 type to CDR (little endian).
#[derive(Debug, Clone)]
pub struct Ros1ToCdr {
    ros1: Registry,
    src: usize,
    /// The ROS 2 type name, `pkg/msg/Type`.
    pub ros2_type: String,
    /// The ROS 2 definition (`ros2msg`, dependencies appended).
    pub ros2_definition: String,
}

impl Ros1ToCdr {
    /// Builds the converter from a ROS 1 connection's `type` and `message_definition`.
    pub fn new(ros1_type: &str, ros1_definition: &str) -> Result<Self, CodecError> {
        let mut ros1 = Registry::new();
        ros1.parse_concatenated(ros1_type, ros1_definition, Dialect::Ros1)?;
        let src = ros1
            .index_of(ros1_type)
            .ok_or_else(|| CodecError::Missing(ros1_type.into()))?;
        let ros2 = mapping::ros2_registry_from_ros1(&ros1)?;
        let ros2_key = mapping::ros2_type_for(ros1_type);
        let dst = ros2
            .index_of(&ros2_key)
            .ok_or_else(|| CodecError::Missing(ros2_key.clone()))?;
        Ok(Self {
            ros2_definition: ros2.full_text(dst, Dialect::Ros2),
            ros2_type: ros2_name(&ros2_key),
            ros1,
            src,
        })
    }

    /// The ROS 1 registry (source types) and the index of the source type.
    pub fn ros1_registry(&self) -> (&Registry, usize) {
        (&self.ros1, self.src)
    }

    /// Converts one message.
    pub fn convert(&self, ros1: &[u8]) -> Result<Vec<u8>, CodecError> {
        let name = &self.ros1.by_index(self.src).name;
        let mut r = Ros1Read::new(ros1);
        let mut w = CdrWrite {
            buf: Vec::with_capacity(ros1.len() + 64),
            origin: 4,
            big_endian: false,
        };
        w.buf.extend_from_slice(&[0, 1, 0, 0]);
        wire::transcode_struct(&self.ros1, self.src, Direction::Ros1ToCdr, &mut r, &mut w)
            .map_err(|e| e.into_decode(name))?;
        // Bytes after the message are ignored, as roscpp and genpy ignore them (the RealSense
        // SDK appends some to its images).
        Ok(w.buf)
    }
}

/// Converts messages of one ROS 2 type from CDR to ROS 1.
#[derive(Debug, Clone)]
pub struct CdrToRos1 {
    ros1: Registry,
    dst: usize,
    /// The ROS 1 type name, `pkg/Type`.
    pub ros1_type: String,
    /// The ROS 1 `message_definition` (dependencies appended).
    pub ros1_definition: String,
    /// The ROS 1 md5sum.
    pub md5sum: String,
}

impl CdrToRos1 {
    /// Builds the converter from a ROS 2 type name and its `ros2msg` definition.
    pub fn new(ros2_type: &str, ros2_definition: &str) -> Result<Self, CodecError> {
        let mut ros2 = Registry::new();
        ros2.parse_concatenated(ros2_type, ros2_definition, Dialect::Ros2)?;
        Self::from_registry(ros2, ros2_type)
    }

    /// Builds the converter from a ROS 2 registry holding `ros2_type`.
    pub fn from_registry(ros2: Registry, ros2_type: &str) -> Result<Self, CodecError> {
        let src = ros2
            .index_of(ros2_type)
            .ok_or_else(|| CodecError::Missing(ros2_type.into()))?;
        let key = ros2.by_index(src).name.clone();
        // Only the types this one needs must be mappable.
        let mut needed = Registry::new();
        needed.insert(ros2.by_index(src).clone());
        for d in ros2.dependencies(src) {
            needed.insert(ros2.by_index(d).clone());
        }
        needed.link()?;
        let ros1 = mapping::ros1_registry_from_ros2(&needed)?;
        let dst = ros1.index_of(&key).ok_or_else(|| CodecError::Unmappable {
            type_name: key.clone(),
            reason: "builtin types have no ROS 1 message equivalent".into(),
        })?;
        Ok(Self {
            ros1_definition: ros1.full_text(dst, Dialect::Ros1),
            md5sum: ros1.ros1_md5(dst),
            ros1_type: key,
            ros1,
            dst,
        })
    }

    /// Converts one message.
    pub fn convert(&self, cdr: &[u8]) -> Result<Vec<u8>, CodecError> {
        let name = &self.ros1.by_index(self.dst).name;
        let fail = |offset: usize, reason: String| CodecError::Decode {
            type_name: name.clone(),
            field: "<encapsulation>".into(),
            offset,
            reason,
        };
        let big_endian = match cdr {
            [0, 1, _, _, ..] => false,
            [0, 0, _, _, ..] => true,
            _ => return Err(fail(0, "not a plain CDR payload (LE or BE)".into())),
        };
        let mut r = CdrRead::new(&cdr[4..], big_endian);
        let mut w = Ros1Write {
            buf: Vec::with_capacity(cdr.len() + 8),
        };
        wire::transcode_struct(&self.ros1, self.dst, Direction::CdrToRos1, &mut r, &mut w)
            .map_err(|mut e| {
                e.offset += 4;
                e.into_decode(name)
            })?;
        let trailing = &r.buf[r.pos..];
        if trailing.len() > 3 || trailing.iter().any(|&b| b != 0) {
            return Err(fail(
                4 + r.pos,
                format!("{} bytes left after the message", trailing.len()),
            ));
        }
        Ok(w.buf)
    }
}
