//! Mapping message types and values between ROS 1 and ROS 2 the way `rosbags-convert` does:
//! `time`/`duration` become `builtin_interfaces/Time`/`Duration`, `std_msgs/Header` loses (or
//! gains) `seq`, `tf/tfMessage` becomes `tf2_msgs/TFMessage`, names gain (or lose) `/msg/`. Field
//! names are lower-cased for ROS 2 (whose tools reject others; `rosbags-convert` keeps them), and
//! the ROS 1 spelling of the common types that had upper-case fields is restored going back.

use super::definition::{ArrayKind, BaseType, Field, MessageType, Primitive, Registry};
use super::error::CodecError;

const HEADER: &str = "std_msgs/Header";
const TIME: &str = "builtin_interfaces/Time";
const DURATION: &str = "builtin_interfaces/Duration";

/// ROS 1 type names that ROS 2 knows under another name.
const RENAMES: &[(&str, &str)] = &[("tf/tfMessage", "tf2_msgs/TFMessage")];

/// ROS 2 field names must be lower case; these ROS 1 types had upper-case fields, which their
/// ROS 2 ports lower-cased. Converting back restores the ROS 1 names, so the md5sum is ROS 1's.
const UPPER_CASE_FIELDS: &[(&str, &[&str])] = &[("sensor_msgs/CameraInfo", &["D", "K", "R", "P"])];

/// The ROS 2 name (normalized `pkg/Type`) of a ROS 1 type.
pub fn ros2_type_for(ros1: &str) -> String {
    let n = super::definition::normalize_name(ros1);
    RENAMES
        .iter()
        .find(|(a, _)| *a == n)
        .map(|(_, b)| b.to_string())
        .unwrap_or(n)
}

fn field(name: &str, base: BaseType) -> Field {
    Field {
        name: name.into(),
        base,
        array: ArrayKind::Single,
        default: None,
        type_index: usize::MAX,
    }
}

fn stamp_type(name: &str, sec: Primitive, nsec: Primitive) -> MessageType {
    MessageType {
        name: name.into(),
        fields: vec![
            field("sec", BaseType::Primitive(sec)),
            field("nanosec", BaseType::Primitive(nsec)),
        ],
        constants: vec![],
    }
}

/// The ROS 2 registry equivalent to a linked ROS 1 registry.
pub fn ros2_registry_from_ros1(ros1: &Registry) -> Result<Registry, CodecError> {
    let mut out = Registry::new();
    out.insert(stamp_type(TIME, Primitive::Int32, Primitive::UInt32));
    out.insert(stamp_type(DURATION, Primitive::Int32, Primitive::UInt32));
    out.insert(MessageType {
        name: HEADER.into(),
        fields: vec![
            field("stamp", BaseType::Message(TIME.into())),
            field("frame_id", BaseType::String { bound: None }),
        ],
        constants: vec![],
    });
    for ty in ros1.types() {
        if ty.name == HEADER {
            check_ros1_header(ty)?;
            continue;
        }
        let mut t = ty.clone();
        t.name = ros2_type_for(&t.name);
        for c in &mut t.constants {
            if c.type_name.starts_with("wstring") {
                return Err(CodecError::Unmappable {
                    type_name: ty.name.clone(),
                    reason: format!("constant '{}' is a wstring, which ROS 1 lacks", c.name),
                });
            }
            // A ROS 1 string constant is the rest of its line: quoted for ROS 2 when it is
            // empty (ROS 2 constants need a value), holds a `#` (a comment in ROS 2) or
            // starts with a quote (which ROS 2 would strip).
            let v = &c.value;
            let needs_quotes = v.is_empty() || v.contains('#') || v.starts_with(['"', '\'']);
            if c.type_name.starts_with("string") && needs_quotes {
                let quote = ['"', '\'']
                    .into_iter()
                    .find(|q| !v.contains(*q) && !v.contains('\\'))
                    .ok_or_else(|| CodecError::Unmappable {
                        type_name: ty.name.clone(),
                        reason: format!(
                            "string constant '{}' holds both quotes or a backslash, and would \
                             need quoting in ROS 2",
                            c.name
                        ),
                    })?;
                c.value = format!("{quote}{v}{quote}");
            }
        }
        let mut lowered: std::collections::HashMap<String, &str> = Default::default();
        for (f, original) in t.fields.iter_mut().zip(&ty.fields) {
            if matches!(f.base, BaseType::WString { .. }) {
                return Err(CodecError::Unmappable {
                    type_name: ty.name.clone(),
                    reason: format!("field '{}' is a wstring, which ROS 1 lacks", f.name),
                });
            }
            f.name.make_ascii_lowercase();
            // Two ROS 1 fields differing only in case would be one ROS 2 field twice: a
            // definition no ROS 2 parser reads.
            if let Some(other) = lowered.insert(f.name.clone(), &original.name) {
                return Err(CodecError::Unmappable {
                    type_name: ty.name.clone(),
                    reason: format!(
                        "fields '{other}' and '{}' are both '{}' in ROS 2, whose field names \
                         are lower case",
                        original.name, f.name
                    ),
                });
            }
            f.base = match &f.base {
                BaseType::Primitive(Primitive::Time) => BaseType::Message(TIME.into()),
                BaseType::Primitive(Primitive::Duration) => BaseType::Message(DURATION.into()),
                BaseType::Message(m) => BaseType::Message(ros2_type_for(m)),
                other => other.clone(),
            };
        }
        out.insert(t);
    }
    out.link()?;
    Ok(out)
}

fn check_ros1_header(ty: &MessageType) -> Result<(), CodecError> {
    let names: Vec<&str> = ty.fields.iter().map(|f| f.name.as_str()).collect();
    if names != ["seq", "stamp", "frame_id"] {
        return Err(CodecError::Unmappable {
            type_name: HEADER.into(),
            reason: format!("unexpected ROS 1 Header fields {names:?}"),
        });
    }
    Ok(())
}

/// The ROS 1 registry equivalent to a linked ROS 2 registry.
pub fn ros1_registry_from_ros2(ros2: &Registry) -> Result<Registry, CodecError> {
    let mut out = Registry::new();
    out.insert(MessageType {
        name: HEADER.into(),
        fields: vec![
            field("seq", BaseType::Primitive(Primitive::UInt32)),
            field("stamp", BaseType::Primitive(Primitive::Time)),
            field("frame_id", BaseType::String { bound: None }),
        ],
        constants: vec![],
    });
    for ty in ros2.types() {
        if ty.name == HEADER || ty.name == TIME || ty.name == DURATION {
            continue;
        }
        let mut t = ty.clone();
        let upper = UPPER_CASE_FIELDS
            .iter()
            .find(|(name, _)| *name == t.name)
            .map_or(&[][..], |(_, fields)| *fields);
        for f in &mut t.fields {
            if let Some(name) = upper.iter().find(|n| n.eq_ignore_ascii_case(&f.name)) {
                f.name = name.to_string();
            }
            f.default = None;
            match &f.base {
                BaseType::Message(m) if m == TIME => f.base = BaseType::Primitive(Primitive::Time),
                BaseType::Message(m) if m == DURATION => {
                    f.base = BaseType::Primitive(Primitive::Duration)
                }
                BaseType::WString { .. } => {
                    return Err(CodecError::Unmappable {
                        type_name: ty.name.clone(),
                        reason: format!("field '{}' is a wstring, which ROS 1 lacks", f.name),
                    })
                }
                BaseType::Primitive(Primitive::WChar) => {
                    return Err(CodecError::Unmappable {
                        type_name: ty.name.clone(),
                        reason: format!("field '{}' is a wchar, which ROS 1 lacks", f.name),
                    })
                }
                _ => {}
            }
        }
        for c in &mut t.constants {
            if c.type_name.starts_with("string") {
                let v = c.value.trim();
                if v.len() >= 2
                    && ((v.starts_with('"') && v.ends_with('"'))
                        || (v.starts_with('\'') && v.ends_with('\'')))
                {
                    c.value = v[1..v.len() - 1].to_string();
                }
                c.type_name = "string".into();
            }
        }
        out.insert(t);
    }
    out.link()?;
    Ok(out)
}
