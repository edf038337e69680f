//! Type hashes as ROS 2 computes them since Iron: RIHS01 (REP-2011).
//!
//! A type's hash is the SHA-256 of its *type description* (the type and every type it refers
//! to, as `type_description_interfaces/msg/TypeDescription` describes them) written as the
//! compact JSON `rosidl_generator_type_description` hashes, spelled `RIHS01_<64 lowercase hex>`.
//! What enters the hash: type names (`pkg/msg/Type`, `pkg/srv/Service_Request`), field names in
//! order, each field's type id (`type_description_interfaces/msg/FieldType`), array and sequence
//! capacities, string bounds and nested type names. What does not: comments, constants and
//! default values. A `.msg` `char` is a `uint8` (rosidl maps it so), a message without fields
//! gets rosidl's `uint8 structure_needs_at_least_one_member`.
//!
//! Input is a definition as bags store it (`ros2msg` text with its dependencies appended, parsed
//! by [`crate::msg`]), including rosbag2's bare `.srv` text for service event topics, or
//! `ros2idl` (`.idl` texts, [`crate::msg::idl`]). An IDL `char` is `FIELD_TYPE_CHAR` and `wchar`
//! `FIELD_TYPE_WCHAR`, as rosidl describes them.
//!
//! ```
//! use rosbag2_rs_codec::{type_hash, MessageDefinition};
//! let definition = MessageDefinition {
//!     topic_type: "std_msgs/msg/String".into(),
//!     encoding: "ros2msg".into(),
//!     encoded_message_definition: "string data\n".into(),
//!     type_description_hash: String::new(),
//! };
//! assert_eq!(
//!     type_hash::rihs01("std_msgs/msg/String", &definition)?,
//!     "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
//! );
//! # Ok::<(), type_hash::TypeHashError>(())
//! ```

use std::fmt::Write;

use sha2::{Digest, Sha256};

use crate::definition_cache::Incomplete;
use crate::msg::definition::{is_ident, ArrayKind, BaseType, Primitive};
use crate::msg::{CodecError, Dialect, Registry};
use crate::{MessageDefinition, MessageDefinitionCache};

/// The prefix of version 1 hashes.
pub const RIHS01_PREFIX: &str = "RIHS01_";

/// The name of the field rosidl gives a message that has none.
const EMPTY_STRUCTURE_MEMBER: &str = "structure_needs_at_least_one_member";

/// Why a type hash could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeHashError {
    /// A type name that is not `pkg/Type`, `pkg/msg/Type`, `pkg/srv/Name` or `pkg/action/Name`.
    #[error("'{0}' is not a ROS 2 interface type name")]
    InvalidTypeName(String),
    /// No definition text for the type.
    #[error("no message definition for '{0}'")]
    NoDefinition(String),
    /// A dependency of the type has no definition.
    #[error("no message definition for '{missing}' (needed by '{type_name}')")]
    UnknownType {
        /// The type whose hash was asked for.
        type_name: String,
        /// The type nothing defines.
        missing: String,
    },
    /// A definition in another encoding than `ros2msg` or `ros2idl`.
    #[error(
        "the definition of '{type_name}' is encoded as '{encoding}'; only ros2msg and ros2idl \
         are hashed"
    )]
    UnsupportedEncoding {
        /// The type.
        type_name: String,
        /// Its definition's encoding.
        encoding: String,
    },
    /// A definition that does not parse.
    #[error("the definition of '{type_name}' does not parse: {source}")]
    Definition {
        /// The type whose hash was asked for.
        type_name: String,
        /// The parser's error.
        #[source]
        source: CodecError,
    },
    /// A definition that does not hash to the hash announced for it.
    #[error("the definition built for '{type_name}' hashes to {computed}, not {expected}")]
    Mismatch {
        /// The type.
        type_name: String,
        /// The hash announced.
        expected: String,
        /// The hash of the definition.
        computed: String,
    },
    /// A field or type name of a description that `.msg` text cannot spell (not an identifier:
    /// a space, a line break, a character outside ASCII): the text would describe another type.
    #[error("'{type_name}' {what} '{name}' cannot be written in .msg text")]
    Unspellable {
        /// The type holding the name.
        type_name: String,
        /// What the name is (`field`, `nested type`).
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A field of a type ROS 2 type descriptions have no id for (ROS 1 `time`/`duration`).
    #[error("'{type_name}' field '{field}' has type '{field_type}', which has no ROS 2 type id")]
    UnsupportedField {
        /// The type containing the field.
        type_name: String,
        /// The field.
        field: String,
        /// The field's element type.
        field_type: String,
    },
}

/// `type_description_interfaces/msg/FieldType`: a field's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldType {
    /// One of `FieldType`'s `FIELD_TYPE_*` ids (element id, plus 48 for an array, 96 for a
    /// bounded sequence, 144 for an unbounded sequence).
    pub type_id: u8,
    /// Array size or sequence bound; 0 when none.
    pub capacity: u64,
    /// String bound; 0 when none.
    pub string_capacity: u64,
    /// The nested type (`pkg/msg/Type`), empty for builtins.
    pub nested_type_name: String,
}

/// `type_description_interfaces/msg/Field`, without the default value (not hashed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDescription {
    /// Field name.
    pub name: String,
    /// Its type.
    pub field_type: FieldType,
}

/// `type_description_interfaces/msg/IndividualTypeDescription`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndividualTypeDescription {
    /// `pkg/msg/Type`, `pkg/srv/Service_Request`, ...
    pub type_name: String,
    /// Fields in wire order.
    pub fields: Vec<FieldDescription>,
}

/// `type_description_interfaces/msg/TypeDescription`: a type and all the types it refers to,
/// directly or not, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeDescription {
    /// The type itself.
    pub type_description: IndividualTypeDescription,
    /// Every type it refers to, sorted by name.
    pub referenced_type_descriptions: Vec<IndividualTypeDescription>,
}

mod bounds;
pub use bounds::{DescriptionRefused, MAX_NESTING};

/// `FieldType` ids (`type_description_interfaces/msg/FieldType.msg`) beyond the primitives.
pub mod field_type_id {
    /// A nested message type.
    pub const NESTED_TYPE: u8 = 1;
    /// `string`.
    pub const STRING: u8 = 17;
    /// `wstring`.
    pub const WSTRING: u8 = 18;
    /// `string<=N`.
    pub const BOUNDED_STRING: u8 = 21;
    /// `wstring<=N`.
    pub const BOUNDED_WSTRING: u8 = 22;
    /// Added to the element id for an array `T[N]`.
    pub const ARRAY_OFFSET: u8 = 48;
    /// Added to the element id for a bounded sequence `T[<=N]`.
    pub const BOUNDED_SEQUENCE_OFFSET: u8 = 96;
    /// Added to the element id for an unbounded sequence `T[]`.
    pub const UNBOUNDED_SEQUENCE_OFFSET: u8 = 144;
}
use field_type_id::*;

/// The `FieldType` id of a builtin, as rosidl maps `.msg` types to IDL (`char` is `uint8`,
/// `byte` is `octet`).
fn primitive_id(p: Primitive) -> Option<u8> {
    Some(match p {
        Primitive::Int8 => 2,
        Primitive::UInt8 | Primitive::Char => 3,
        Primitive::Int16 => 4,
        Primitive::UInt16 => 5,
        Primitive::Int32 => 6,
        Primitive::UInt32 => 7,
        Primitive::Int64 => 8,
        Primitive::UInt64 => 9,
        Primitive::Float32 => 10,
        Primitive::Float64 => 11,
        Primitive::IdlChar => 13,
        Primitive::WChar => 14,
        Primitive::Bool => 15,
        Primitive::Byte => 16,
        Primitive::Time | Primitive::Duration => return None,
    })
}

/// The `.msg` spelling of a field's element type id (the inverse of the description's ids);
/// `None` for ids `.msg` cannot spell.
fn element_spelling(id: u8, string_capacity: u64, nested: &str) -> Option<String> {
    Some(match id {
        NESTED_TYPE => msg_type_name(nested),
        2 => "int8".into(),
        3 => "uint8".into(),
        4 => "int16".into(),
        5 => "uint16".into(),
        6 => "int32".into(),
        7 => "uint32".into(),
        8 => "int64".into(),
        9 => "uint64".into(),
        10 => "float32".into(),
        11 => "float64".into(),
        13 => "char".into(),
        15 => "bool".into(),
        16 => "byte".into(),
        STRING => "string".into(),
        WSTRING => "wstring".into(),
        BOUNDED_STRING => format!("string<={string_capacity}"),
        BOUNDED_WSTRING => format!("wstring<={string_capacity}"),
        _ => return None,
    })
}

/// `pkg/msg/Type` as `.msg` files and rosbag2's `MSG:` lines spell it: `pkg/Type`.
fn msg_type_name(name: &str) -> String {
    match name.split('/').collect::<Vec<_>>()[..] {
        [package, "msg", ty] => format!("{package}/{ty}"),
        _ => name.to_string(),
    }
}

impl IndividualTypeDescription {
    /// The type as `.msg` text (fields only: descriptions carry no comments or constants). A
    /// field or nested type name the text cannot spell is refused
    /// ([`TypeHashError::Unspellable`]): a remote peer's description could otherwise write
    /// lines of its own into the text.
    pub fn msg_text(&self) -> Result<String, TypeHashError> {
        let mut out = String::new();
        for f in &self.fields {
            let unspellable = |what, name: &str| TypeHashError::Unspellable {
                type_name: self.type_name.clone(),
                what,
                name: name.to_string(),
            };
            if !is_ident(&f.name) {
                return Err(unspellable("field", &f.name));
            }
            let ft = &f.field_type;
            let (element, suffix) = match ft.type_id {
                id if id >= UNBOUNDED_SEQUENCE_OFFSET => {
                    (id - UNBOUNDED_SEQUENCE_OFFSET, "[]".into())
                }
                id if id >= BOUNDED_SEQUENCE_OFFSET => {
                    (id - BOUNDED_SEQUENCE_OFFSET, format!("[<={}]", ft.capacity))
                }
                id if id >= ARRAY_OFFSET => (id - ARRAY_OFFSET, format!("[{}]", ft.capacity)),
                id => (id, String::new()),
            };
            if element == NESTED_TYPE && !spellable_type(&ft.nested_type_name) {
                return Err(unspellable("nested type", &ft.nested_type_name));
            }
            let spelled = element_spelling(element, ft.string_capacity, &ft.nested_type_name)
                .ok_or_else(|| TypeHashError::UnsupportedField {
                    type_name: self.type_name.clone(),
                    field: f.name.clone(),
                    field_type: format!("type id {}", ft.type_id),
                })?;
            let _ = writeln!(out, "{spelled}{suffix} {}", f.name);
        }
        Ok(out)
    }
}

impl TypeDescription {
    /// The description as the definition a bag stores (`ros2msg`, the type's text with each
    /// referenced type appended under rosbag2's `MSG:` separator). `sources` gives `.msg`
    /// texts by type name (`pkg/msg/Type`), used instead of the fields where present so that
    /// constants and comments are kept. Checked against `expected_hash` when given: the text
    /// must describe the same type.
    pub fn definition(
        &self,
        sources: &dyn Fn(&str) -> Option<String>,
        expected_hash: Option<&str>,
    ) -> Result<MessageDefinition, TypeHashError> {
        let root = &self.type_description;
        let text_of = |t: &IndividualTypeDescription| match sources(&t.type_name) {
            Some(text) => Ok(text),
            None => t.msg_text(),
        };
        for t in std::iter::once(root).chain(&self.referenced_type_descriptions) {
            if !spellable_type(&t.type_name) {
                return Err(TypeHashError::InvalidTypeName(t.type_name.clone()));
            }
        }
        let mut text = text_of(root)?;
        for t in &self.referenced_type_descriptions {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            let _ = writeln!(text, "{SEPARATOR}\nMSG: {}", msg_type_name(&t.type_name));
            text.push_str(&text_of(t)?);
        }
        let definition = MessageDefinition {
            topic_type: root.type_name.clone(),
            encoding: "ros2msg".into(),
            encoded_message_definition: text,
            type_description_hash: String::new(),
        };
        let hash = rihs01(&root.type_name, &definition)?;
        if let Some(expected) = expected_hash.filter(|h| *h != hash) {
            return Err(TypeHashError::Mismatch {
                type_name: root.type_name.clone(),
                expected: expected.to_string(),
                computed: hash,
            });
        }
        Ok(MessageDefinition {
            type_description_hash: hash,
            ..definition
        })
    }
}

/// Whether `.msg` text spells the type name `name` as it is (`pkg/Type`, `pkg/msg/Type`, ...,
/// nothing around it).
fn spellable_type(name: &str) -> bool {
    name.trim() == name && FullName::parse(name).is_some()
}

/// A type name split into package, interface kind (`msg`, `srv`, `action`) and name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FullName {
    package: String,
    kind: String,
    name: String,
}

impl FullName {
    fn parse(type_name: &str) -> Option<Self> {
        let ident = |s: &str| {
            s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        let parts: Vec<&str> = type_name.trim().split('/').collect();
        let (package, kind, name) = match parts.as_slice() {
            [package, name] => (*package, "msg", *name),
            [package, kind @ ("msg" | "srv" | "action"), name] => (*package, *kind, *name),
            _ => return None,
        };
        (ident(package) && ident(name)).then(|| Self {
            package: package.into(),
            kind: kind.into(),
            name: name.into(),
        })
    }

    /// The service or action a generated message belongs to: `Fibonacci` for
    /// `Fibonacci_SendGoal_Request`; `None` for a plain message.
    fn interface_base(&self) -> Option<&str> {
        const SUFFIXES: &[&str] = &[
            "_SendGoal_Request",
            "_SendGoal_Response",
            "_SendGoal_Event",
            "_GetResult_Request",
            "_GetResult_Response",
            "_GetResult_Event",
            "_FeedbackMessage",
            "_Feedback",
            "_Goal",
            "_Result",
            "_Request",
            "_Response",
            "_Event",
        ];
        if self.kind == "msg" {
            return None;
        }
        SUFFIXES
            .iter()
            .find_map(|s| self.name.strip_suffix(s))
            .filter(|base| !base.is_empty())
    }

    fn spelled(&self) -> String {
        format!("{}/{}/{}", self.package, self.kind, self.name)
    }
}

/// The RIHS01 hash of `type_name` from its definition as a bag stores it.
pub fn rihs01(type_name: &str, definition: &MessageDefinition) -> Result<String, TypeHashError> {
    Ok(TypeDescription::from_definition(type_name, definition)?.rihs01())
}

/// Whether `hash` is a well-formed RIHS01 hash (`RIHS01_` and 64 lowercase hex digits).
pub fn is_rihs01(hash: &str) -> bool {
    hash.strip_prefix(RIHS01_PREFIX).is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The hash an endpoint announces, normalised: `None` for nothing, for Humble's
/// `TypeHashNotSupported` (rmw_zenoh's spelling of "no hash") and for anything that is not a
/// RIHS01 hash.
pub fn announced(hash: Option<&str>) -> Option<&str> {
    hash.map(str::trim).filter(|h| is_rihs01(h))
}

impl TypeDescription {
    /// The type description of `type_name` from its definition as a bag stores it (`ros2msg`
    /// with dependencies appended; for a service's `_Event`, `_Request` or `_Response` also
    /// rosbag2's bare `.srv` text; or `ros2idl`, see [`Registry::parse_concatenated_idl`]).
    pub fn from_definition(
        type_name: &str,
        definition: &MessageDefinition,
    ) -> Result<Self, TypeHashError> {
        let root = FullName::parse(type_name)
            .ok_or_else(|| TypeHashError::InvalidTypeName(type_name.to_string()))?;
        if definition.encoding.is_empty() && definition.encoded_message_definition.is_empty() {
            return Err(TypeHashError::NoDefinition(type_name.to_string()));
        }
        let text = &definition.encoded_message_definition;
        let root_key = root.spelled();
        let mut reg = Registry::new();
        let parsed = match definition.encoding.as_str() {
            "ros2msg" => {
                let srv = service_text_as_messages(&root, text);
                reg.parse_concatenated(&root_key, srv.as_deref().unwrap_or(text), Dialect::Ros2)
            }
            "ros2idl" => reg.parse_concatenated_idl(&root_key, text),
            _ => {
                return Err(TypeHashError::UnsupportedEncoding {
                    type_name: type_name.to_string(),
                    encoding: definition.encoding.clone(),
                })
            }
        };
        parsed.map_err(|source| match source {
            CodecError::Missing(_) => TypeHashError::NoDefinition(type_name.to_string()),
            CodecError::UnknownType { missing, .. } => TypeHashError::UnknownType {
                type_name: type_name.to_string(),
                missing,
            },
            source => TypeHashError::Definition {
                type_name: type_name.to_string(),
                source,
            },
        })?;
        let index = reg
            .index_of(&root_key)
            .ok_or_else(|| TypeHashError::NoDefinition(type_name.to_string()))?;
        let describe = |i: usize| describe_type(&reg, i, &root);
        let mut referenced = reg
            .dependencies(index)
            .into_iter()
            .map(describe)
            .collect::<Result<Vec<_>, _>>()?;
        referenced.sort_by(|a, b| a.type_name.cmp(&b.type_name));
        referenced.dedup_by(|a, b| a.type_name == b.type_name);
        Ok(Self {
            type_description: describe(index)?,
            referenced_type_descriptions: referenced,
        })
    }

    /// The JSON that is hashed: `json.dumps` of the description with `, ` and `: ` separators,
    /// keys in message order, ASCII only.
    pub fn hashable_json(&self) -> String {
        let mut out = String::with_capacity(256);
        out.push_str("{\"type_description\": ");
        write_individual(&mut out, &self.type_description);
        out.push_str(", \"referenced_type_descriptions\": [");
        for (i, t) in self.referenced_type_descriptions.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_individual(&mut out, t);
        }
        out.push_str("]}");
        out
    }

    /// `RIHS01_` and the SHA-256 of [`TypeDescription::hashable_json`] in lowercase hex.
    pub fn rihs01(&self) -> String {
        let digest = Sha256::digest(self.hashable_json().as_bytes());
        let mut out = String::with_capacity(RIHS01_PREFIX.len() + 64);
        out.push_str(RIHS01_PREFIX);
        for b in digest {
            let _ = write!(out, "{b:02x}");
        }
        out
    }

    /// Every type name in the description, the described type first.
    pub fn type_names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(&self.type_description)
            .chain(&self.referenced_type_descriptions)
            .map(|t| t.type_name.as_str())
    }
}

/// rosbag2 stores a service's messages as the `.srv` text (`request --- response`), which no
/// message parser reads: rewrite it as the messages rosidl generates (`_Request`, `_Response`,
/// `_Event` with `service_msgs/ServiceEventInfo`). `None` when the text is already messages.
fn service_text_as_messages(root: &FullName, text: &str) -> Option<String> {
    if root.kind != "srv" {
        return None;
    }
    let base = root.interface_base()?;
    let is_separator = |l: &str| {
        let t = l.trim();
        t.len() >= 3 && t.chars().all(|c| c == '=')
    };
    let first: Vec<&str> = text.lines().take_while(|l| !is_separator(l)).collect();
    let split = first.iter().position(|l| l.trim() == "---")?;
    let rest: Vec<&str> = text.lines().skip(first.len()).collect();
    let join = |lines: &[&str]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let (request, response) = (join(&first[..split]), join(&first[split + 1..]));
    let pkg = &root.package;
    let section = |name: &str, body: &str| format!("{SEPARATOR}\nMSG: {pkg}/{name}\n{body}");
    let mut out = match root.name.strip_prefix(base) {
        Some("_Request") => request.clone(),
        Some("_Response") => response.clone(),
        _ => format!(
            "service_msgs/ServiceEventInfo info\n\
             {pkg}/{base}_Request[<=1] request\n\
             {pkg}/{base}_Response[<=1] response\n"
        ),
    };
    out.push_str(&section(&format!("{base}_Request"), &request));
    out.push_str(&section(&format!("{base}_Response"), &response));
    out.push_str(&join(&rest));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    // The event's own dependencies, which the `.srv` text does not carry.
    let info = MessageDefinitionCache::with_prefixes(Vec::new())
        .definition("service_msgs/msg/ServiceEventInfo");
    out.push_str(SEPARATOR);
    out.push_str("\nMSG: service_msgs/ServiceEventInfo\n");
    out.push_str(&info.encoded_message_definition);
    Some(out)
}

/// For a service type (`pkg/srv/Name_Event`, `_Request`, `_Response`) whose stored definition is
/// the `.srv` text rosbag2 stores, that text rewritten as the messages rosidl generates, which a
/// message parser reads; `None` for anything else.
pub(crate) fn service_definition_as_messages(type_name: &str, text: &str) -> Option<String> {
    service_text_as_messages(&FullName::parse(type_name)?, text)
}

/// The hashing of what the cache knows (the cache itself is below this module: it knows texts).
impl MessageDefinitionCache {
    /// The RIHS01 type hash (REP-2011) of `type_name` from its definition , computed once per type.
    pub fn type_hash(&mut self, type_name: &str) -> Result<String, TypeHashError> {
        if let Some(hash) = self.hashes.get(type_name) {
            return Ok(hash.clone());
        }
        let text = self.full_text(type_name).map_err(|e| match e {
            Incomplete::Missing(missing) if missing == type_name => {
                TypeHashError::NoDefinition(missing)
            }
            other => TypeHashError::UnknownType {
                type_name: type_name.to_string(),
                missing: other.to_string(),
            },
        })?;
        let definition = MessageDefinition {
            topic_type: type_name.to_string(),
            encoding: "ros2msg".into(),
            encoded_message_definition: text,
            type_description_hash: String::new(),
        };
        let hash = rihs01(type_name, &definition)?;
        self.hashes.insert(type_name.to_string(), hash.clone());
        Ok(hash)
    }
}

const SEPARATOR: &str =
    "================================================================================";

/// The full ROS 2 name of a type the registry holds as `pkg/Type` (or `pkg/srv/Name`): a
/// message of the same service or action as the described type keeps its `srv`/`action` part.
fn ros2_type_name(registry_name: &str, root: &FullName) -> String {
    let Some(name) = FullName::parse(registry_name) else {
        return registry_name.to_string();
    };
    if registry_name.split('/').count() == 3 {
        return name.spelled();
    }
    if let Some(base) = root.interface_base() {
        let same_interface = name.package == root.package
            && name
                .name
                .strip_prefix(base)
                .is_some_and(|rest| rest.starts_with('_'));
        if same_interface {
            return format!("{}/{}/{}", name.package, root.kind, name.name);
        }
    }
    name.spelled()
}

fn describe_type(
    reg: &Registry,
    index: usize,
    root: &FullName,
) -> Result<IndividualTypeDescription, TypeHashError> {
    let ty = reg.by_index(index);
    let type_name = if index == reg.index_of(&root.spelled()).unwrap_or(usize::MAX) {
        root.spelled()
    } else {
        ros2_type_name(&ty.name, root)
    };
    let mut fields = Vec::with_capacity(ty.fields.len().max(1));
    for f in &ty.fields {
        let unsupported = |field_type: &str| TypeHashError::UnsupportedField {
            type_name: type_name.clone(),
            field: f.name.clone(),
            field_type: field_type.to_string(),
        };
        let (element, string_capacity, nested_type_name) = match &f.base {
            BaseType::Primitive(p) => (
                primitive_id(*p).ok_or_else(|| unsupported(p.name()))?,
                0,
                String::new(),
            ),
            BaseType::String { bound: None } => (STRING, 0, String::new()),
            BaseType::String { bound: Some(b) } => (BOUNDED_STRING, *b as u64, String::new()),
            BaseType::WString { bound: None } => (WSTRING, 0, String::new()),
            BaseType::WString { bound: Some(b) } => (BOUNDED_WSTRING, *b as u64, String::new()),
            BaseType::Message(name) => (NESTED_TYPE, 0, ros2_type_name(name, root)),
        };
        let (offset, capacity) = match f.array {
            ArrayKind::Single => (0, 0),
            ArrayKind::Fixed(n) => (ARRAY_OFFSET, n as u64),
            ArrayKind::Sequence { bound: Some(n) } => (BOUNDED_SEQUENCE_OFFSET, n as u64),
            ArrayKind::Sequence { bound: None } => (UNBOUNDED_SEQUENCE_OFFSET, 0),
        };
        fields.push(FieldDescription {
            name: f.name.clone(),
            field_type: FieldType {
                type_id: element + offset,
                capacity,
                string_capacity,
                nested_type_name,
            },
        });
    }
    if fields.is_empty() {
        fields.push(FieldDescription {
            name: EMPTY_STRUCTURE_MEMBER.into(),
            field_type: FieldType {
                type_id: primitive_id(Primitive::UInt8).unwrap_or(3),
                capacity: 0,
                string_capacity: 0,
                nested_type_name: String::new(),
            },
        });
    }
    Ok(IndividualTypeDescription { type_name, fields })
}

fn write_individual(out: &mut String, t: &IndividualTypeDescription) {
    out.push_str("{\"type_name\": ");
    write_json_string(out, &t.type_name);
    out.push_str(", \"fields\": [");
    for (i, f) in t.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str("{\"name\": ");
        write_json_string(out, &f.name);
        let ft = &f.field_type;
        let _ = write!(
            out,
            ", \"type\": {{\"type_id\": {}, \"capacity\": {}, \"string_capacity\": {}, \"nested_type_name\": ",
            ft.type_id, ft.capacity, ft.string_capacity
        );
        write_json_string(out, &ft.nested_type_name);
        out.push_str("}}");
    }
    out.push_str("]}");
}

/// A JSON string as Python's `json.dumps(ensure_ascii=True)` writes it.
fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7f => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests;
