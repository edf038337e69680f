//! A dynamic message codec: message definitions parsed at run time (no code generation), one
//! [`Value`] tree, and CDR (XCDR1, both endiannesses, rmw alignment) and ROS 1 serialization to
//! and from it. Decoding never panics: bad bytes or definitions give a [`CodecError`] naming the
//! type and field.
//!
//! ```
//! use rosbag2_rs_codec::msg::{Dialect, Registry, decode_cdr, encode_cdr, CdrHeader};
//! let mut reg = Registry::new();
//! reg.parse_concatenated("std_msgs/msg/String", "string data\n", Dialect::Ros2)?;
//! let bytes = [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0];
//! let (value, header) = decode_cdr(&reg, "std_msgs/msg/String", &bytes)?;
//! assert_eq!(value.fields().unwrap()[0].as_str().unwrap(), "hi");
//! assert_eq!(encode_cdr(&reg, "std_msgs/msg/String", &value, header)?, bytes);
//! # Ok::<(), rosbag2_rs_codec::msg::CodecError>(())
//! ```

pub mod decoder;
pub mod definition;
pub mod error;
pub mod idl;
pub mod mapping;
pub mod render;
pub mod transcode;
pub mod value;
mod wire;

pub use decoder::TopicDecoder;
pub use definition::{Dialect, MessageType, Registry};
pub use error::{CodecError, FieldTypeError};
pub use value::Value;

use wire::{CdrRead, CdrWrite, Ros1Read, Ros1Write};

/// The 4-byte CDR encapsulation header and the trailing padding it announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CdrHeader {
    /// Big endian (`CDR_BE`) rather than little endian (`CDR_LE`).
    pub big_endian: bool,
    /// The two option bytes as found.
    pub options: [u8; 2],
    /// Zero bytes after the message (0 to 3), kept so that re-encoding is byte-exact.
    pub padding: u8,
}

fn type_index(reg: &Registry, type_name: &str) -> Result<usize, CodecError> {
    reg.index_of(type_name)
        .ok_or_else(|| CodecError::Missing(type_name.to_string()))
}

/// Decodes a CDR payload (with its encapsulation header) of `type_name`.
pub fn decode_cdr(
    reg: &Registry,
    type_name: &str,
    data: &[u8],
) -> Result<(Value, CdrHeader), CodecError> {
    decode_cdr_at(reg, type_index(reg, type_name)?, data)
}

/// [`decode_cdr`] for the type at `index` in `reg`.
pub fn decode_cdr_at(
    reg: &Registry,
    index: usize,
    data: &[u8],
) -> Result<(Value, CdrHeader), CodecError> {
    let name = &reg.by_index(index).name;
    let fail = |offset: usize, reason: String| CodecError::Decode {
        type_name: name.clone(),
        field: "<encapsulation>".into(),
        offset,
        reason,
    };
    if data.len() < 4 {
        return Err(fail(
            0,
            format!("{} bytes, shorter than the 4-byte CDR header", data.len()),
        ));
    }
    let big_endian = match (data[0], data[1]) {
        (0, 0) => true,
        (0, 1) => false,
        (a, b) => {
            return Err(fail(
                0,
                format!("encapsulation {a:#04x}{b:02x} is not plain CDR (LE or BE)"),
            ))
        }
    };
    let mut r = CdrRead::new(&data[4..], big_endian);
    let value = wire::decode_struct(reg, index, &mut r).map_err(|mut e| {
        e.offset += 4;
        e.into_decode(name)
    })?;
    let trailing = &data[4 + r.pos..];
    if trailing.len() > 3 || trailing.iter().any(|&b| b != 0) {
        return Err(fail(
            4 + r.pos,
            format!("{} bytes left after the message", trailing.len()),
        ));
    }
    Ok((
        value,
        CdrHeader {
            big_endian,
            options: [data[2], data[3]],
            padding: trailing.len() as u8,
        },
    ))
}

/// Encodes `value` of `type_name` as CDR with the given header.
pub fn encode_cdr(
    reg: &Registry,
    type_name: &str,
    value: &Value,
    header: CdrHeader,
) -> Result<Vec<u8>, CodecError> {
    encode_cdr_at(reg, type_index(reg, type_name)?, value, header)
}

/// [`encode_cdr`] for the type at `index` in `reg`.
pub fn encode_cdr_at(
    reg: &Registry,
    index: usize,
    value: &Value,
    header: CdrHeader,
) -> Result<Vec<u8>, CodecError> {
    let mut buf = Vec::with_capacity(64);
    buf.extend_from_slice(&[0, if header.big_endian { 0 } else { 1 }]);
    buf.extend_from_slice(&header.options);
    let mut w = CdrWrite {
        buf,
        origin: 4,
        big_endian: header.big_endian,
    };
    wire::encode_struct(reg, index, value, &mut w)
        .map_err(|e| e.into_encode(&reg.by_index(index).name))?;
    w.buf
        .resize(w.buf.len() + header.padding.min(3) as usize, 0);
    Ok(w.buf)
}

/// Decodes a ROS 1 payload of `type_name`.
pub fn decode_ros1(reg: &Registry, type_name: &str, data: &[u8]) -> Result<Value, CodecError> {
    decode_ros1_at(reg, type_index(reg, type_name)?, data)
}

/// Decodes the ROS 1 message at the start of `data`, returning it and the bytes it took. ROS 1
/// libraries ignore bytes after a message (the RealSense SDK writes some); this lets a caller do
/// the same, or look at them.
pub fn decode_ros1_prefix_at(
    reg: &Registry,
    index: usize,
    data: &[u8],
) -> Result<(Value, usize), CodecError> {
    let name = &reg.by_index(index).name;
    let mut r = Ros1Read::new(data);
    let value = wire::decode_struct(reg, index, &mut r).map_err(|e| e.into_decode(name))?;
    Ok((value, r.pos))
}

/// [`decode_ros1`] for the type at `index` in `reg`.
pub fn decode_ros1_at(reg: &Registry, index: usize, data: &[u8]) -> Result<Value, CodecError> {
    let name = &reg.by_index(index).name;
    let (value, used) = decode_ros1_prefix_at(reg, index, data)?;
    if used != data.len() {
        return Err(CodecError::Decode {
            type_name: name.clone(),
            field: "<message>".into(),
            offset: used,
            reason: format!("{} bytes left after the message", data.len() - used),
        });
    }
    Ok(value)
}

/// Encodes `value` of `type_name` in ROS 1 serialization.
pub fn encode_ros1(reg: &Registry, type_name: &str, value: &Value) -> Result<Vec<u8>, CodecError> {
    encode_ros1_at(reg, type_index(reg, type_name)?, value)
}

/// [`encode_ros1`] for the type at `index` in `reg`.
pub fn encode_ros1_at(reg: &Registry, index: usize, value: &Value) -> Result<Vec<u8>, CodecError> {
    let mut w = Ros1Write {
        buf: Vec::with_capacity(64),
    };
    wire::encode_struct(reg, index, value, &mut w)
        .map_err(|e| e.into_encode(&reg.by_index(index).name))?;
    Ok(w.buf)
}

impl Registry {
    /// A message of the type at `index` with every field at its zero value (numbers 0, strings
    /// and sequences empty, fixed arrays full of zeros), to be filled with [`Registry::set`].
    pub fn default_value(&self, index: usize) -> Value {
        let ty = self.by_index(index);
        Value::Struct(
            ty.fields
                .iter()
                .map(|f| {
                    let one = || match &f.base {
                        definition::BaseType::Primitive(p) => wire::zero(*p),
                        definition::BaseType::String { .. }
                        | definition::BaseType::WString { .. } => Value::String(Vec::new()),
                        definition::BaseType::Message(_) => self.default_value(f.type_index),
                    };
                    let octets =
                        matches!(&f.base, definition::BaseType::Primitive(p) if p.is_octet());
                    match (f.array, octets) {
                        (definition::ArrayKind::Single, _) => one(),
                        (definition::ArrayKind::Fixed(n), true) => Value::Bytes(vec![0; n]),
                        (definition::ArrayKind::Fixed(n), false) => {
                            Value::Array((0..n).map(|_| one()).collect())
                        }
                        (definition::ArrayKind::Sequence { .. }, true) => Value::Bytes(Vec::new()),
                        (definition::ArrayKind::Sequence { .. }, false) => Value::Array(Vec::new()),
                    }
                })
                .collect(),
        )
    }

    /// Sets the field at dotted `path` (`header.stamp`) of `value`, a message of the type at
    /// `index`.
    pub fn set(
        &self,
        index: usize,
        value: &mut Value,
        path: &str,
        field: Value,
    ) -> Result<(), CodecError> {
        let (head, rest) = match path.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (path, None),
        };
        let ty = self.by_index(index);
        let missing = || CodecError::Encode {
            type_name: ty.name.clone(),
            field: path.to_string(),
            reason: "no such field".into(),
        };
        let i = ty.field_index(head).ok_or_else(missing)?;
        let Value::Struct(fields) = value else {
            return Err(missing());
        };
        let slot = fields.get_mut(i).ok_or_else(missing)?;
        match rest {
            None => *slot = field,
            Some(rest) => self.set(ty.fields[i].type_index, slot, rest, field)?,
        }
        Ok(())
    }
}

/// A decoded message with its type, for reading fields by name.
#[derive(Debug, Clone, Copy)]
pub struct MessageView<'a> {
    reg: &'a Registry,
    index: usize,
    value: &'a Value,
}

impl<'a> MessageView<'a> {
    /// Views `value`, a message of the type at `index` in `reg`.
    pub fn new(reg: &'a Registry, index: usize, value: &'a Value) -> Self {
        Self { reg, index, value }
    }

    /// The value of field `name`, if the type has it.
    pub fn field(&self, name: &str) -> Option<&'a Value> {
        let i = self.reg.by_index(self.index).field_index(name)?;
        self.value.fields()?.get(i)
    }

    /// The nested message in field `name` (`None` if the field is not a message).
    pub fn message(&self, name: &str) -> Option<MessageView<'a>> {
        let ty = self.reg.by_index(self.index);
        let i = ty.field_index(name)?;
        if !matches!(ty.fields[i].base, definition::BaseType::Message(_)) {
            return None;
        }
        Some(MessageView {
            reg: self.reg,
            index: ty.fields[i].type_index,
            value: self.value.fields()?.get(i)?,
        })
    }

    /// The elements of the message array in field `name`.
    pub fn messages(&self, name: &str) -> Vec<MessageView<'a>> {
        let ty = self.reg.by_index(self.index);
        let (Some(i), Some(Value::Array(items))) = (ty.field_index(name), self.field(name)) else {
            return Vec::new();
        };
        if !matches!(ty.fields[i].base, definition::BaseType::Message(_)) {
            return Vec::new();
        }
        let index = ty.fields[i].type_index;
        items
            .iter()
            .map(|value| MessageView {
                reg: self.reg,
                index,
                value,
            })
            .collect()
    }

    /// Field `name` as a number (any integer or float kind).
    pub fn number(&self, name: &str) -> Option<f64> {
        self.field(name)?.as_f64()
    }

    /// Field `name` as text.
    pub fn text(&self, name: &str) -> Option<String> {
        self.field(name)?.as_str().map(|s| s.into_owned())
    }
}

#[cfg(test)]
mod tests;
