//! Message definitions: parsing `.msg` text (ROS 1 and ROS 2 dialects, concatenated with their
//! dependencies as in MCAP schemas, rosbag2 `message_definitions` and ROS 1 connection headers)
//! into a [`Registry`] of types the codecs walk. `.idl` text (`ros2idl`) gives the same types:
//! [`super::idl`].

use std::collections::HashMap;

use super::error::{CodecError, FieldTypeError};

/// Which ROS version's `.msg` rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// ROS 1: `Header` means `std_msgs/Header`, `time`/`duration` builtins, unquoted string
    /// constants that run to the end of the line.
    Ros1,
    /// ROS 2: bounded strings and sequences, default values, quoted string constants.
    Ros2,
}

/// A fixed-size builtin type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `bool`, one byte.
    Bool,
    /// `byte` (ROS 2 octet, ROS 1 deprecated int8), one byte.
    Byte,
    /// `char` (uint8), one byte.
    Char,
    /// `int8`.
    Int8,
    /// `uint8`.
    UInt8,
    /// `int16`.
    Int16,
    /// `uint16`.
    UInt16,
    /// `int32`.
    Int32,
    /// `uint32`.
    UInt32,
    /// `int64`.
    Int64,
    /// `uint64`.
    UInt64,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// ROS 1 `time`: uint32 seconds, uint32 nanoseconds.
    Time,
    /// ROS 1 `duration`: int32 seconds, int32 nanoseconds.
    Duration,
    /// IDL `char`: an 8-bit character (type id `FIELD_TYPE_CHAR`). `.msg` has no spelling for it
    /// (a `.msg` `char` is [`Primitive::Char`], which rosidl makes a `uint8`); only `.idl`
    /// definitions give it. Spelled `char` when written as `.msg`.
    IdlChar,
    /// IDL `wchar`: a wide character (type id `FIELD_TYPE_WCHAR`), only in `.idl` definitions.
    /// Parsed and hashed, but, like `wstring`, neither decoded nor encoded.
    WChar,
}

impl Primitive {
    /// Parses a builtin type name.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "bool" => Self::Bool,
            "byte" => Self::Byte,
            "char" => Self::Char,
            "int8" => Self::Int8,
            "uint8" => Self::UInt8,
            "int16" => Self::Int16,
            "uint16" => Self::UInt16,
            "int32" => Self::Int32,
            "uint32" => Self::UInt32,
            "int64" => Self::Int64,
            "uint64" => Self::UInt64,
            "float32" => Self::Float32,
            "float64" => Self::Float64,
            "time" => Self::Time,
            "duration" => Self::Duration,
            _ => return None,
        })
    }

    /// The `.msg` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bool => "bool",
            Self::Byte => "byte",
            Self::Char => "char",
            Self::Int8 => "int8",
            Self::UInt8 => "uint8",
            Self::Int16 => "int16",
            Self::UInt16 => "uint16",
            Self::Int32 => "int32",
            Self::UInt32 => "uint32",
            Self::Int64 => "int64",
            Self::UInt64 => "uint64",
            Self::Float32 => "float32",
            Self::Float64 => "float64",
            Self::Time => "time",
            Self::Duration => "duration",
            Self::IdlChar => "char",
            Self::WChar => "wchar",
        }
    }

    /// Size on the wire in bytes.
    pub fn size(self) -> usize {
        match self {
            Self::Bool | Self::Byte | Self::Char | Self::IdlChar | Self::Int8 | Self::UInt8 => 1,
            Self::Int16 | Self::UInt16 | Self::WChar => 2,
            Self::Int32 | Self::UInt32 | Self::Float32 => 4,
            Self::Int64 | Self::UInt64 | Self::Float64 | Self::Time | Self::Duration => 8,
        }
    }

    /// CDR alignment in bytes (`time`/`duration` are two 4-byte integers).
    pub fn alignment(self) -> usize {
        match self {
            Self::Time | Self::Duration => 4,
            p => p.size(),
        }
    }

    /// True for the one-byte unsigned kinds kept as raw bytes in arrays.
    pub fn is_octet(self) -> bool {
        matches!(self, Self::Byte | Self::Char | Self::IdlChar | Self::UInt8)
    }
}

/// The element type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseType {
    /// A builtin.
    Primitive(Primitive),
    /// `string` or `string<=N`.
    String {
        /// Maximum length, if bounded.
        bound: Option<usize>,
    },
    /// `wstring` or `wstring<=N`.
    WString {
        /// Maximum length, if bounded.
        bound: Option<usize>,
    },
    /// A nested message, by normalized name `pkg/Type`.
    Message(String),
}

/// Whether a field is one value, a fixed array or a sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayKind {
    /// A single value.
    Single,
    /// `T[N]`.
    Fixed(usize),
    /// `T[]` or `T[<=N]`.
    Sequence {
        /// Maximum length, if bounded.
        bound: Option<usize>,
    },
}

/// One field of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Field name.
    pub name: String,
    /// Element type.
    pub base: BaseType,
    /// Array kind.
    pub array: ArrayKind,
    /// ROS 2 default value, as written.
    pub default: Option<String>,
    /// Index of the nested type in the registry (set when the registry is linked).
    pub(crate) type_index: usize,
}

impl Field {
    /// The index in its [`Registry`] of the field's message type, once the registry is linked
    /// (`usize::MAX` for a primitive field).
    pub fn type_index(&self) -> usize {
        self.type_index
    }
}

/// A constant declared in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    /// Type as written (`uint8`, `string`, ...).
    pub type_name: String,
    /// Constant name.
    pub name: String,
    /// Value as written (string constants unquoted in ROS 1, as written in ROS 2).
    pub value: String,
}

/// One message type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageType {
    /// Normalized name `pkg/Type`.
    pub name: String,
    /// Fields in wire order.
    pub fields: Vec<Field>,
    /// Constants.
    pub constants: Vec<Constant>,
}

impl MessageType {
    /// Position of the field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

/// Normalizes `pkg/msg/Type` and `pkg/Type` to `pkg/Type`.
pub fn normalize_name(name: &str) -> String {
    let name = name.trim();
    match name.split('/').collect::<Vec<_>>().as_slice() {
        [pkg, "msg", ty] => format!("{pkg}/{ty}"),
        _ => name.to_string(),
    }
}

/// The sections of a definition with its dependencies appended after `===` separator lines and
/// `MSG: pkg/Type` lines: `(type name as normalized, its text)`, the first being `root`.
pub fn concatenated_sections(root: &str, text: &str) -> Result<Vec<(String, String)>, CodecError> {
    let mut name = normalize_name(root);
    let mut section = String::new();
    let mut sections = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.len() >= SEPARATOR_MIN && t.chars().all(|c| c == '=') {
            sections.push((std::mem::take(&mut name), std::mem::take(&mut section)));
            continue;
        }
        if name.is_empty() {
            if let Some(n) = t.strip_prefix("MSG:") {
                name = normalize_name(n);
                continue;
            }
            if t.is_empty() {
                continue;
            }
            return Err(CodecError::Definition {
                type_name: root.to_string(),
                line: 0,
                reason: format!("expected 'MSG: <type>' after a separator, found '{t}'"),
            });
        }
        section.push_str(line);
        section.push('\n');
    }
    sections.push((name, section));
    Ok(sections)
}

/// `pkg/Type` → `pkg/msg/Type` (ROS 2 spelling); `pkg/srv/Service_Request` stays as it is.
pub fn ros2_name(name: &str) -> String {
    let n = normalize_name(name);
    match n.split_once('/') {
        Some((pkg, ty)) if !ty.contains('/') => format!("{pkg}/msg/{ty}"),
        _ => n,
    }
}

/// Whether `s` is a name `.msg` text spells as it is: an ASCII letter, then ASCII letters,
/// digits and underscores.
pub(crate) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What [`Registry::link`] finds per type: whether it was visited (0 no, 1 in progress, 2 done),
/// its minimum wire size, and how many levels of types it holds (1 for no nested message).
struct Walk {
    state: Vec<u8>,
    min: Vec<usize>,
    height: Vec<usize>,
}

/// Message types by name, linked so that nested types are found by index.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    types: Vec<MessageType>,
    index: HashMap<String, usize>,
    /// Minimum wire size (ROS 1 rules) per type, for sanity checks on sequence lengths.
    min_size: Vec<usize>,
    linked: bool,
}

const SEPARATOR_MIN: usize = 3;

/// Deepest nesting of message types (a type containing a type containing ...) that links: the
/// codecs walk a message recursively, so a longer chain from hostile text would overflow the
/// stack. ROS interfaces nest a handful of levels; rosbag2 stops resolving at 50.
pub const MAX_NESTING: usize = 100;

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The type called `name` (`pkg/Type` or `pkg/msg/Type`).
    pub fn get(&self, name: &str) -> Option<&MessageType> {
        self.index_of(name).map(|i| &self.types[i])
    }

    /// Index of the type called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        match self.index.get(name) {
            Some(&i) => Some(i),
            None => self.index.get(&normalize_name(name)).copied(),
        }
    }

    /// The type at `index`.
    pub fn by_index(&self, index: usize) -> &MessageType {
        &self.types[index]
    }

    /// All types.
    pub fn types(&self) -> &[MessageType] {
        &self.types
    }

    /// Minimum ROS 1 wire size of the type at `index`.
    pub(crate) fn min_size(&self, index: usize) -> usize {
        self.min_size.get(index).copied().unwrap_or(0)
    }

    /// Adds (or replaces) one type.
    pub fn insert(&mut self, ty: MessageType) {
        self.linked = false;
        match self.index.get(&ty.name) {
            Some(&i) => self.types[i] = ty,
            None => {
                self.index.insert(ty.name.clone(), self.types.len());
                self.types.push(ty);
            }
        }
    }

    /// Parses a definition with its dependencies appended after `===` separator lines and
    /// `MSG: pkg/Type` lines, the first section being `root`. Types already present are kept
    /// (the first definition of a type wins). Links the registry.
    pub fn parse_concatenated(
        &mut self,
        root: &str,
        text: &str,
        dialect: Dialect,
    ) -> Result<(), CodecError> {
        let sections = concatenated_sections(root, text)?;
        for (name, body) in sections {
            if name.is_empty() {
                continue;
            }
            if self.index.contains_key(&name) {
                continue;
            }
            let ty = parse_message(&name, &body, dialect)?;
            self.insert(ty);
        }
        self.link()
    }

    /// Resolves nested type names to indices; checks that every type is known, that none
    /// contains itself and that types nest at most [`MAX_NESTING`] deep.
    pub fn link(&mut self) -> Result<(), CodecError> {
        for t in 0..self.types.len() {
            for f in 0..self.types[t].fields.len() {
                if let BaseType::Message(name) = &self.types[t].fields[f].base {
                    let Some(&i) = self.index.get(name) else {
                        return Err(CodecError::UnknownType {
                            type_name: self.types[t].name.clone(),
                            field: self.types[t].fields[f].name.clone(),
                            missing: name.clone(),
                        });
                    };
                    self.types[t].fields[f].type_index = i;
                }
            }
        }
        // Cycle check, nesting depth and minimum sizes, depth first.
        let n = self.types.len();
        let mut walk = Walk {
            state: vec![0; n],
            min: vec![0; n],
            height: vec![0; n],
        };
        for t in 0..n {
            self.visit(t, &mut walk, 0)?;
        }
        self.min_size = walk.min;
        self.linked = true;
        Ok(())
    }

    /// Visits type `t`, reached through `depth` enclosing types, and the types it contains.
    fn visit(&self, t: usize, walk: &mut Walk, depth: usize) -> Result<(), CodecError> {
        let too_deep = || CodecError::Definition {
            type_name: self.types[t].name.clone(),
            line: 0,
            reason: format!("message types nested deeper than {MAX_NESTING}"),
        };
        if depth >= MAX_NESTING {
            return Err(too_deep());
        }
        match walk.state[t] {
            2 => return Ok(()),
            1 => {
                return Err(CodecError::Recursive {
                    type_name: self.types[t].name.clone(),
                })
            }
            _ => {}
        }
        walk.state[t] = 1;
        let mut size = 0usize;
        let mut height = 1;
        for f in &self.types[t].fields {
            let elem = match &f.base {
                BaseType::Primitive(p) => p.size(),
                BaseType::String { .. } | BaseType::WString { .. } => 4,
                BaseType::Message(_) => {
                    self.visit(f.type_index, walk, depth + 1)?;
                    height = height.max(walk.height[f.type_index] + 1);
                    walk.min[f.type_index]
                }
            };
            size = size.saturating_add(match f.array {
                ArrayKind::Single => elem,
                ArrayKind::Fixed(n) => elem.saturating_mul(n),
                ArrayKind::Sequence { .. } => 4,
            });
        }
        // A chain visited from its innermost type first is not deep here, but is as tall.
        if height > MAX_NESTING {
            return Err(too_deep());
        }
        walk.state[t] = 2;
        walk.min[t] = size;
        walk.height[t] = height;
        Ok(())
    }

    /// True once [`Registry::link`] succeeded after the last change.
    pub fn is_linked(&self) -> bool {
        self.linked
    }
}

/// Parses one type's `.msg` text.
pub fn parse_message(name: &str, text: &str, dialect: Dialect) -> Result<MessageType, CodecError> {
    let name = normalize_name(name);
    let package = name.split('/').next().unwrap_or("").to_string();
    let mut ty = MessageType {
        name: name.clone(),
        fields: Vec::new(),
        constants: Vec::new(),
    };
    for (i, raw) in text.lines().enumerate() {
        let err = |reason: String| CodecError::Definition {
            type_name: name.clone(),
            line: i + 1,
            reason,
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let type_end = line
            .find(|c: char| c.is_whitespace())
            .ok_or_else(|| err(format!("'{line}': expected '<type> <name>'")))?;
        let type_text = &line[..type_end];
        let rest = line[type_end..].trim_start();
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let field_name = &rest[..name_end];
        // The name ends the token: what follows it is a space, a constant's `=` or a comment
        // (`x-1`, `fÞ_id` are invalid names, not `x` and a default value).
        let token_end = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == '#')
            .unwrap_or(rest.len());
        if !is_ident(field_name) || token_end != name_end {
            let token = &rest[..token_end];
            return Err(err(format!("'{line}': invalid field name '{token}'")));
        }
        let after = rest[name_end..].trim_start();
        let (base, array) =
            parse_type(type_text, &package, dialect).map_err(|e| err(e.to_string()))?;
        if let Some(value) = after.strip_prefix('=') {
            if array != ArrayKind::Single || matches!(base, BaseType::Message(_)) {
                return Err(err(format!(
                    "constant '{field_name}' must have a builtin, non-array type"
                )));
            }
            let is_string = matches!(base, BaseType::String { .. } | BaseType::WString { .. });
            let value = if is_string && dialect == Dialect::Ros1 {
                value.trim().to_string()
            } else {
                strip_comment(value).trim().to_string()
            };
            // ROS 1 string constants are the rest of the line, which may be empty (genmsg
            // takes `string EMPTY=`; ROS 1 has no wstring); every other constant needs a value.
            let may_be_empty = dialect == Dialect::Ros1 && matches!(base, BaseType::String { .. });
            if value.is_empty() && !may_be_empty {
                return Err(err(format!("constant '{field_name}' has no value")));
            }
            ty.constants.push(Constant {
                type_name: type_text.to_string(),
                name: field_name.to_string(),
                value,
            });
            continue;
        }
        let rest = strip_comment(after).trim();
        let default = if rest.is_empty() {
            None
        } else if dialect == Dialect::Ros2 {
            Some(rest.to_string())
        } else {
            return Err(err(format!(
                "unexpected '{rest}' after field '{field_name}'"
            )));
        };
        if ty.fields.iter().any(|f| f.name == field_name) {
            return Err(err(format!("duplicate field '{field_name}'")));
        }
        ty.fields.push(Field {
            name: field_name.to_string(),
            base,
            array,
            default,
            type_index: usize::MAX,
        });
    }
    Ok(ty)
}

/// Removes a trailing `# comment` outside of quotes.
fn strip_comment(s: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (c, quote) {
            ('\\', Some(_)) => escaped = true,
            ('"' | '\'', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('#', None) => return &s[..i],
            _ => {}
        }
    }
    s
}

fn parse_bound(text: &str) -> Result<usize, FieldTypeError> {
    text.trim()
        .parse::<usize>()
        .map_err(|source| FieldTypeError::InvalidBound {
            bound: text.to_string(),
            source,
        })
}

/// Parses a field type such as `uint8[16]`, `string<=10`, `Point[<=3]`, `Header`.
pub fn parse_type(
    text: &str,
    package: &str,
    dialect: Dialect,
) -> Result<(BaseType, ArrayKind), FieldTypeError> {
    if dialect == Dialect::Ros1 && text.contains("<=") {
        return Err(FieldTypeError::BoundInRos1(text.to_string()));
    }
    let (base_text, array) = match text.find('[') {
        Some(open) => {
            let inner = text[open + 1..]
                .strip_suffix(']')
                .ok_or_else(|| FieldTypeError::UnterminatedArray(text.to_string()))?;
            let array = if inner.is_empty() {
                ArrayKind::Sequence { bound: None }
            } else if let Some(b) = inner.strip_prefix("<=") {
                ArrayKind::Sequence {
                    bound: Some(parse_bound(b)?),
                }
            } else {
                ArrayKind::Fixed(parse_bound(inner)?)
            };
            (&text[..open], array)
        }
        None => (text, ArrayKind::Single),
    };
    let base = if let Some((s, bound)) = base_text.split_once("<=") {
        let bound = Some(parse_bound(bound)?);
        match s {
            "string" => BaseType::String { bound },
            "wstring" => BaseType::WString { bound },
            _ => return Err(FieldTypeError::BoundedNonString(text.to_string())),
        }
    } else if base_text == "string" {
        BaseType::String { bound: None }
    } else if base_text == "wstring" {
        BaseType::WString { bound: None }
    } else if let Some(p) = Primitive::parse(base_text) {
        BaseType::Primitive(p)
    } else if base_text == "Header" && (dialect == Dialect::Ros1 || package != "std_msgs") {
        BaseType::Message("std_msgs/Header".into())
    } else {
        let parts: Vec<&str> = base_text.split('/').collect();
        let full = match parts.as_slice() {
            [ty] if is_ident(ty) => format!("{package}/{ty}"),
            [pkg, ty] if is_ident(pkg) && is_ident(ty) => format!("{pkg}/{ty}"),
            [pkg, "msg", ty] if is_ident(pkg) && is_ident(ty) => format!("{pkg}/{ty}"),
            // A service's or action's own message keeps its `srv` or `action` part.
            [pkg, kind @ ("srv" | "action"), ty] if is_ident(pkg) && is_ident(ty) => {
                format!("{pkg}/{kind}/{ty}")
            }
            _ => return Err(FieldTypeError::InvalidType(text.to_string())),
        };
        BaseType::Message(full)
    };
    Ok((base, array))
}

/// Spells a field type in `.msg` syntax for `dialect` (`pkg/Type` names, bounds kept only in
/// ROS 2).
pub fn type_text(field: &Field, dialect: Dialect) -> String {
    let mut s = match &field.base {
        BaseType::Primitive(p) => p.name().to_string(),
        BaseType::String { bound } | BaseType::WString { bound } => {
            let w = if matches!(field.base, BaseType::WString { .. }) {
                "wstring"
            } else {
                "string"
            };
            match (bound, dialect) {
                (Some(b), Dialect::Ros2) => format!("{w}<={b}"),
                _ => w.to_string(),
            }
        }
        BaseType::Message(name) => {
            if dialect == Dialect::Ros1 && name == "std_msgs/Header" {
                "Header".to_string()
            } else {
                name.clone()
            }
        }
    };
    match field.array {
        ArrayKind::Single => {}
        ArrayKind::Fixed(n) => s.push_str(&format!("[{n}]")),
        ArrayKind::Sequence { bound: Some(b) } if dialect == Dialect::Ros2 => {
            s.push_str(&format!("[<={b}]"))
        }
        ArrayKind::Sequence { .. } => s.push_str("[]"),
    }
    s
}

const SEPARATOR: &str =
    "================================================================================";

impl Registry {
    /// The `.msg` text of one type (constants, then fields), without comments.
    pub fn own_text(&self, index: usize, dialect: Dialect) -> String {
        let ty = &self.types[index];
        let mut out = String::new();
        for c in &ty.constants {
            out.push_str(&format!("{} {}={}\n", c.type_name, c.name, c.value));
        }
        for f in &ty.fields {
            out.push_str(&type_text(f, dialect));
            out.push(' ');
            out.push_str(&f.name);
            if let (Some(d), Dialect::Ros2) = (&f.default, dialect) {
                out.push(' ');
                out.push_str(d);
            }
            out.push('\n');
        }
        out
    }

    /// Types `index` depends on, depth first in field order, each once.
    pub fn dependencies(&self, index: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![(index, 0usize)];
        while let Some((t, f)) = stack.pop() {
            let fields = &self.types[t].fields;
            if f < fields.len() {
                stack.push((t, f + 1));
                if let BaseType::Message(_) = fields[f].base {
                    let dep = fields[f].type_index;
                    if dep != index && !out.contains(&dep) {
                        out.push(dep);
                        stack.push((dep, 0));
                    }
                }
            }
        }
        out
    }

    /// The full definition text of a type as bags store it: its own text, then each dependency
    /// after a separator and `MSG: pkg/Type`.
    pub fn full_text(&self, index: usize, dialect: Dialect) -> String {
        let mut out = self.own_text(index, dialect);
        for dep in self.dependencies(index) {
            out.push_str(SEPARATOR);
            out.push_str("\nMSG: ");
            out.push_str(&self.types[dep].name);
            out.push('\n');
            out.push_str(&self.own_text(dep, dialect));
        }
        out
    }

    /// The ROS 1 md5sum of a type, computed as `genmsg` does: constants, then builtin fields as
    /// written and nested fields as the md5 of their type.
    pub fn ros1_md5(&self, index: usize) -> String {
        use md5::{Digest, Md5};
        let mut memo: HashMap<usize, String> = HashMap::new();
        fn go(reg: &Registry, t: usize, memo: &mut HashMap<usize, String>) -> String {
            if let Some(s) = memo.get(&t) {
                return s.clone();
            }
            let ty = &reg.types[t];
            let mut text = String::new();
            for c in &ty.constants {
                text.push_str(&format!("{} {}={}\n", c.type_name, c.name, c.value));
            }
            for f in &ty.fields {
                match f.base {
                    BaseType::Message(_) => {
                        let sub = go(reg, f.type_index, memo);
                        text.push_str(&format!("{sub} {}\n", f.name));
                    }
                    _ => text.push_str(&format!("{} {}\n", type_text(f, Dialect::Ros1), f.name)),
                }
            }
            let digest = Md5::digest(text.trim_end_matches('\n').as_bytes());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            memo.insert(t, hex.clone());
            hex
        }
        go(self, index, &mut memo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros1_header_and_string_constant_with_hash() {
        let mut reg = Registry::new();
        reg.parse_concatenated(
            "my/Thing",
            "string S=a # not a comment\nHeader header\ntime t\nuint8[4] fixed # comment\n\
             ================================================================================\n\
             MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n",
            Dialect::Ros1,
        )
        .unwrap();
        let t = reg.get("my/Thing").unwrap();
        assert_eq!(t.constants[0].value, "a # not a comment");
        assert_eq!(t.fields.len(), 3);
        assert_eq!(
            t.fields[0].base,
            BaseType::Message("std_msgs/Header".into())
        );
        assert_eq!(t.fields[2].array, ArrayKind::Fixed(4));
    }

    #[test]
    fn ros2_bounds_defaults_and_quoted_constants() {
        let t = parse_message(
            "pkg/msg/T",
            "string<=5 s \"ab\" # c\nint32[<=3] v [1, 2]\nstring C=\"x#y\" # comment\nOther o\n",
            Dialect::Ros2,
        )
        .unwrap();
        assert_eq!(t.name, "pkg/T");
        assert_eq!(t.fields[0].base, BaseType::String { bound: Some(5) });
        assert_eq!(t.fields[0].default.as_deref(), Some("\"ab\""));
        assert_eq!(t.fields[1].array, ArrayKind::Sequence { bound: Some(3) });
        assert_eq!(t.fields[1].default.as_deref(), Some("[1, 2]"));
        assert_eq!(t.constants[0].value, "\"x#y\"");
        assert_eq!(t.fields[2].base, BaseType::Message("pkg/Other".into()));
    }

    #[test]
    fn field_types_that_do_not_parse_are_typed_errors() {
        let e = |t: &str| parse_type(t, "pkg", Dialect::Ros2).unwrap_err();
        assert!(matches!(e("uint8[3"), FieldTypeError::UnterminatedArray(_)));
        assert!(matches!(e("int32<=3"), FieldTypeError::BoundedNonString(_)));
        assert!(matches!(e("a/b/c/d"), FieldTypeError::InvalidType(_)));
        let bad = e("uint8[x]");
        assert!(matches!(&bad, FieldTypeError::InvalidBound { bound, .. } if bound == "x"));
        assert!(std::error::Error::source(&bad).is_some());
    }

    #[test]
    fn errors_name_type_and_line() {
        let e = parse_message("p/T", "int32 ok\nint32[x bad\n", Dialect::Ros2).unwrap_err();
        assert!(
            matches!(&e, CodecError::Definition { type_name, line: 2, .. } if type_name == "p/T"),
            "{e}"
        );
        let mut reg = Registry::new();
        let e = reg
            .parse_concatenated("p/T", "p/Missing m\n", Dialect::Ros2)
            .unwrap_err();
        assert!(e.to_string().contains("p/Missing"), "{e}");
        let mut reg = Registry::new();
        let e = reg
            .parse_concatenated("p/A", "B b\n===\nMSG: p/B\nA[] a\n", Dialect::Ros2)
            .unwrap_err();
        assert!(matches!(e, CodecError::Recursive { .. }), "{e}");
    }

    #[test]
    fn md5_matches_rosbag_for_known_types() {
        // Values as published by ROS 1 Noetic (`rosmsg md5`).
        let mut reg = Registry::new();
        reg.parse_concatenated("std_msgs/String", "string data\n", Dialect::Ros1)
            .unwrap();
        assert_eq!(
            reg.ros1_md5(reg.index_of("std_msgs/String").unwrap()),
            "992ce8a1687cec8c8bd883ec73ca41d1"
        );
        reg.parse_concatenated(
            "std_msgs/Header",
            "uint32 seq\ntime stamp\nstring frame_id\n",
            Dialect::Ros1,
        )
        .unwrap();
        assert_eq!(
            reg.ros1_md5(reg.index_of("std_msgs/Header").unwrap()),
            "2176decaecbce78abc3b96ef049fabed"
        );
    }
}
