//! DDS-XTypes type objects as ROS 2 type descriptions.
//!
//! A DDS writer may announce its type as XTypes type information (a hash of its complete type
//! object) and serve the type objects through the type lookup service. For a recorded type that
//! no node describes, a backend resolves those objects into this crate-neutral model
//! ([`StructType`], [`TypeIdentifier`]) and [`describe`] turns them into the ROS 2 type
//! description (`type_description_interfaces`) that the bag's `.msg` definition and RIHS01
//! hash are built from, as rosidl maps `.msg` types to IDL (`pkg::msg::dds_::Type_` structs,
//! plain sequences, arrays and bounded strings).

use std::collections::BTreeMap;

use rosbag2_rs_codec::type_hash::field_type_id::*;
use rosbag2_rs_codec::type_hash::{
    FieldDescription, FieldType, IndividualTypeDescription, TypeDescription,
};

/// The XTypes hash of a complete type object (`EK_COMPLETE` identifier).
pub type TypeHash = [u8; 14];

/// An XTypes type identifier, as far as ROS 2 types use them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeIdentifier {
    /// A primitive: its `TK_*` kind.
    Primitive(u8),
    /// A string (`wide`: a wstring); bound 0: unbounded.
    String {
        /// A wide string.
        wide: bool,
        /// Maximum length; 0: none.
        bound: u32,
    },
    /// A plain sequence; bound 0: unbounded.
    Sequence {
        /// Maximum length; 0: none.
        bound: u32,
        /// Its elements' type.
        element: Box<TypeIdentifier>,
    },
    /// A plain array of these dimensions.
    Array {
        /// Dimensions (ROS 2 arrays have one).
        bounds: Vec<u32>,
        /// Its elements' type.
        element: Box<TypeIdentifier>,
    },
    /// A type with its own complete type object (a nested message).
    Complete(TypeHash),
    /// Any other identifier: its discriminator.
    Other(u8),
}

/// A complete structure type object: its qualified name and members in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructType {
    /// DDS name (`pkg::msg::dds_::Type_`).
    pub name: String,
    /// Member names and types, in declaration order.
    pub members: Vec<(String, TypeIdentifier)>,
}

/// Why type objects give no ROS 2 type description.
#[derive(Debug, thiserror::Error)]
pub enum XTypesError {
    /// The type object names no ROS 2 message type.
    #[error("'{0}' is not a ROS 2 message type name")]
    NotRos(String),
    /// The announced type is not the expected one.
    #[error("the writer's type object describes '{found}', not '{expected}'")]
    OtherType {
        /// The type recorded.
        expected: String,
        /// The type the object describes.
        found: String,
    },
    /// A member of a kind ROS 2 messages cannot hold (maps, unions, multi-dimensional arrays,
    /// 128-bit floats, ...).
    #[error("'{type_name}' member '{member}' has a type ROS 2 messages cannot hold ({kind})")]
    Unsupported {
        /// The type containing the member.
        type_name: String,
        /// The member.
        member: String,
        /// What its type is.
        kind: String,
    },
    /// A type object could not be obtained or is not a structure.
    #[error("type object {hash} could not be resolved: {reason}")]
    Unresolved {
        /// The type's hash, hex.
        hash: String,
        /// Why.
        reason: String,
    },
}

/// `pkg::msg::dds_::Type_` (rmw's DDS spelling) or `pkg::msg::Type` as `pkg/msg/Type`.
pub fn ros_type_name(dds_name: &str) -> Option<String> {
    match dds_name.split("::").collect::<Vec<_>>()[..] {
        [package, kind, "dds_", ty] => Some(format!(
            "{package}/{kind}/{}",
            ty.strip_suffix('_').unwrap_or(ty)
        )),
        [package, kind, ty] => Some(format!("{package}/{kind}/{ty}")),
        _ => None,
    }
}

/// Hex of a type hash, for messages.
pub fn hash_hex(hash: &TypeHash) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `FieldType` id of an XTypes primitive kind, as rosidl maps `.msg` types to IDL.
fn primitive_field_type(kind: u8) -> Option<u8> {
    Some(match kind {
        0x01 => 15, // TK_BOOLEAN: bool
        0x02 => 16, // TK_BYTE (octet): byte
        0x03 => 4,  // TK_INT16
        0x04 => 6,  // TK_INT32
        0x05 => 8,  // TK_INT64
        0x06 => 5,  // TK_UINT16
        0x07 => 7,  // TK_UINT32
        0x08 => 9,  // TK_UINT64
        0x09 => 10, // TK_FLOAT32
        0x0A => 11, // TK_FLOAT64
        0x0C => 2,  // TK_INT8
        0x0D => 3,  // TK_UINT8
        0x10 => 13, // TK_CHAR8: char
        _ => return None,
    })
}

/// Resolves complete type objects by hash.
pub type Resolve<'a> = dyn FnMut(&TypeHash) -> Result<StructType, XTypesError> + 'a;

/// The ROS 2 type description of `root` (expected to be `type_name`, `pkg/msg/Type`) and of
/// every type it refers to, resolved through `resolve`.
pub fn describe(
    type_name: &str,
    root: &StructType,
    resolve: &mut Resolve<'_>,
) -> Result<TypeDescription, XTypesError> {
    let mut known: BTreeMap<TypeHash, StructType> = BTreeMap::new();
    let mut pending: Vec<TypeHash> = Vec::new();
    let root = individual(root, &mut known, &mut pending, resolve)?;
    if root.type_name != type_name {
        return Err(XTypesError::OtherType {
            expected: type_name.to_string(),
            found: root.type_name,
        });
    }
    let mut referenced: BTreeMap<String, IndividualTypeDescription> = BTreeMap::new();
    while let Some(hash) = pending.pop() {
        let nested = known[&hash].clone();
        let description = individual(&nested, &mut known, &mut pending, resolve)?;
        referenced.insert(description.type_name.clone(), description);
    }
    Ok(TypeDescription {
        type_description: root,
        referenced_type_descriptions: referenced.into_values().collect(),
    })
}

/// One structure as an individual description; the nested types it names first are resolved
/// into `known` and queued in `pending`.
fn individual(
    st: &StructType,
    known: &mut BTreeMap<TypeHash, StructType>,
    pending: &mut Vec<TypeHash>,
    resolve: &mut Resolve<'_>,
) -> Result<IndividualTypeDescription, XTypesError> {
    let type_name = ros_type_name(&st.name).ok_or_else(|| XTypesError::NotRos(st.name.clone()))?;
    let mut fields = Vec::with_capacity(st.members.len());
    for (member, id) in &st.members {
        let unsupported = |kind: String| XTypesError::Unsupported {
            type_name: type_name.clone(),
            member: member.clone(),
            kind,
        };
        let (element, offset, capacity) = match id {
            TypeIdentifier::Sequence { bound: 0, element } => {
                (&**element, UNBOUNDED_SEQUENCE_OFFSET, 0)
            }
            TypeIdentifier::Sequence { bound, element } => {
                (&**element, BOUNDED_SEQUENCE_OFFSET, u64::from(*bound))
            }
            TypeIdentifier::Array { bounds, element } => match bounds[..] {
                [n] => (&**element, ARRAY_OFFSET, u64::from(n)),
                _ => return Err(unsupported(format!("array of dimensions {bounds:?}"))),
            },
            other => (other, 0, 0),
        };
        let (id, string_capacity, nested_type_name) = match element {
            TypeIdentifier::Primitive(kind) => (
                primitive_field_type(*kind)
                    .ok_or_else(|| unsupported(format!("XTypes kind {kind:#04x}")))?,
                0,
                String::new(),
            ),
            TypeIdentifier::String { wide, bound } => {
                let id = match (wide, bound) {
                    (false, 0) => STRING,
                    (true, 0) => WSTRING,
                    (false, _) => BOUNDED_STRING,
                    (true, _) => BOUNDED_WSTRING,
                };
                (id, u64::from(*bound), String::new())
            }
            TypeIdentifier::Complete(hash) => {
                if !known.contains_key(hash) {
                    known.insert(*hash, resolve(hash)?);
                    pending.push(*hash);
                }
                let nested = &known[hash].name;
                let name =
                    ros_type_name(nested).ok_or_else(|| XTypesError::NotRos(nested.clone()))?;
                (NESTED_TYPE, 0, name)
            }
            TypeIdentifier::Sequence { .. } | TypeIdentifier::Array { .. } => {
                return Err(unsupported("a collection of collections".into()))
            }
            TypeIdentifier::Other(kind) => {
                return Err(unsupported(format!("XTypes identifier {kind:#04x}")))
            }
        };
        fields.push(FieldDescription {
            name: member.clone(),
            field_type: FieldType {
                type_id: id + offset,
                capacity,
                string_capacity,
                nested_type_name,
            },
        });
    }
    Ok(IndividualTypeDescription { type_name, fields })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(name: &str, members: &[(&str, TypeIdentifier)]) -> StructType {
        StructType {
            name: name.into(),
            members: members
                .iter()
                .map(|(n, t)| (n.to_string(), t.clone()))
                .collect(),
        }
    }

    /// `custom_msgs/msg/Reading` with a nested `std_msgs/msg/Header` (itself nesting
    /// `builtin_interfaces/msg/Time`): the description's text and RIHS01 equal those of the
    /// same `.msg` definition, as the hash a ROS 2 node announces for it.
    #[test]
    fn a_nested_structure_becomes_the_msg_definition_rosidl_would_hash() {
        use TypeIdentifier::*;
        let (time_hash, header_hash) = ([1u8; 14], [2u8; 14]);
        let time = st(
            "builtin_interfaces::msg::dds_::Time_",
            &[("sec", Primitive(0x04)), ("nanosec", Primitive(0x07))],
        );
        let header = st(
            "std_msgs::msg::dds_::Header_",
            &[
                ("stamp", Complete(time_hash)),
                (
                    "frame_id",
                    String {
                        wide: false,
                        bound: 0,
                    },
                ),
            ],
        );
        let reading = st(
            "custom_msgs::msg::dds_::Reading_",
            &[
                ("header", Complete(header_hash)),
                ("value", Primitive(0x0A)),
                ("ok", Primitive(0x01)),
                (
                    "label",
                    String {
                        wide: false,
                        bound: 16,
                    },
                ),
                (
                    "samples",
                    Sequence {
                        bound: 0,
                        element: Box::new(Primitive(0x09)),
                    },
                ),
                (
                    "last",
                    Sequence {
                        bound: 3,
                        element: Box::new(Primitive(0x0D)),
                    },
                ),
                (
                    "rgb",
                    Array {
                        bounds: vec![3],
                        element: Box::new(Primitive(0x02)),
                    },
                ),
                (
                    "stamps",
                    Sequence {
                        bound: 0,
                        element: Box::new(Complete(time_hash)),
                    },
                ),
            ],
        );
        let mut resolve = |h: &TypeHash| -> Result<StructType, XTypesError> {
            Ok(if *h == time_hash {
                time.clone()
            } else {
                header.clone()
            })
        };
        let description = describe("custom_msgs/msg/Reading", &reading, &mut resolve).unwrap();
        let definition = description.definition(&|_| None, None).unwrap();
        let expected_text = "std_msgs/Header header\nfloat64 value\nbool ok\nstring<=16 label\n\
             float32[] samples\nuint8[<=3] last\nbyte[3] rgb\nbuiltin_interfaces/Time[] stamps\n";
        assert!(
            definition
                .encoded_message_definition
                .starts_with(expected_text),
            "{}",
            definition.encoded_message_definition
        );
        let names: Vec<&str> = description
            .referenced_type_descriptions
            .iter()
            .map(|t| t.type_name.as_str())
            .collect();
        assert_eq!(
            names,
            ["builtin_interfaces/msg/Time", "std_msgs/msg/Header"]
        );
        // The same type written as .msg text hashes the same.
        let msg = rosbag2_rs_codec::MessageDefinition {
            topic_type: "custom_msgs/msg/Reading".into(),
            encoding: "ros2msg".into(),
            encoded_message_definition: format!(
                "{expected_text}================================================================================\n\
                 MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\
                 ================================================================================\n\
                 MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
            ),
            type_description_hash: std::string::String::new(),
        };
        assert_eq!(
            rosbag2_rs_codec::type_hash::rihs01("custom_msgs/msg/Reading", &msg).unwrap(),
            description.rihs01()
        );
    }

    #[test]
    fn what_ros_2_messages_cannot_hold_is_a_clear_error() {
        use TypeIdentifier::*;
        let mut never = |_: &TypeHash| -> Result<StructType, XTypesError> {
            unreachable!("nothing to resolve")
        };
        for (member, kind) in [
            (Primitive(0x0B), "0x0b"),
            (Other(0xA0), "0xa0"),
            (
                Array {
                    bounds: vec![2, 2],
                    element: Box::new(Primitive(0x04)),
                },
                "dimensions",
            ),
        ] {
            let t = st("p::msg::dds_::T_", &[("m", member)]);
            let err = describe("p/msg/T", &t, &mut never).unwrap_err().to_string();
            assert!(
                err.contains("'p/msg/T' member 'm'") && err.contains(kind),
                "{err}"
            );
        }
        let t = st("NotRos", &[]);
        assert!(matches!(
            describe("p/msg/T", &t, &mut never),
            Err(XTypesError::NotRos(_))
        ));
        let t = st("p::msg::dds_::U_", &[]);
        assert!(matches!(
            describe("p/msg/T", &t, &mut never),
            Err(XTypesError::OtherType { .. })
        ));
        assert_eq!(
            ros_type_name("pkg::msg::Type").as_deref(),
            Some("pkg/msg/Type")
        );
    }

    /// A member whose name is not a ROS field name (`f\u{de}_id`, found by the `xtypes` fuzz
    /// target): the `.msg` text built from it was read as field `f` with a default value, a
    /// definition of another type and RIHS01 hash than the peer's. It gives no definition: the
    /// text is not written.
    #[test]
    fn a_member_name_ros_cannot_spell_gives_no_definition() {
        let reading = st(
            "custom_msgs::msg::dds_::Reading_",
            &[
                ("stamp", TypeIdentifier::Primitive(0x02)),
                ("f\u{de}_id", TypeIdentifier::Primitive(0x07)),
            ],
        );
        let description = describe("custom_msgs/msg/Reading", &reading, &mut |_| {
            unreachable!("no nested type")
        })
        .unwrap();
        let err = description
            .definition(&|_| None, None)
            .expect_err("an invalid field name");
        assert!(
            matches!(
                &err,
                rosbag2_rs_codec::type_hash::TypeHashError::Unspellable { name, .. }
                    if name == "f\u{de}_id"
            ),
            "{err}"
        );
    }
}
