//! From the declarations of one IDL text to message types: typedefs resolved, scoped names
//! turned into `pkg/Type` (`pkg/srv/Type`, `pkg/action/Type`), `@default` values and the
//! constants of `<Struct>_Constants` modules spelled as `.msg` writes them, so that the types are
//! the ones [`parse_message`](crate::msg::definition::parse_message) gives for the `.msg` the IDL
//! was generated from.

use std::collections::{HashMap, HashSet};

use super::ast::{Const, File, Literal, Member, Struct, TypeSpec, Typedef};
use super::parser::MAX_DEPTH;
use super::IdlError;
use crate::msg::definition::{ArrayKind, BaseType, Constant, Field, MessageType, Primitive};

/// The member rosidl gives a message without fields; `.msg` has no such field.
const EMPTY_STRUCTURE_MEMBER: &str = "structure_needs_at_least_one_member";

/// Suffix of the module that holds a struct's constants.
const CONSTANTS_SUFFIX: &str = "_Constants";

/// The message types `file` declares, in order.
pub(super) fn lower(file: &File) -> Result<Vec<MessageType>, IdlError> {
    let scope = Scope::new(&file.typedefs)?;
    let mut consts: HashMap<&[String], Vec<&Const>> = HashMap::new();
    for c in &file.consts {
        consts.entry(c.scope.as_slice()).or_default().push(c);
    }
    let mut names = HashSet::new();
    let mut out: Vec<MessageType> = Vec::with_capacity(file.structs.len());
    for s in &file.structs {
        let mut module = s.scope.clone();
        module.push(format!("{}{CONSTANTS_SUFFIX}", s.name));
        let own = consts.get(module.as_slice()).map_or(&[][..], Vec::as_slice);
        let ty = scope.message(s, own)?;
        if !names.insert(ty.name.clone()) {
            return Err(IdlError::new(
                s.line,
                format!("struct '{}' declared twice", s.name),
            ));
        }
        out.push(ty);
    }
    Ok(out)
}

/// A type once typedefs are resolved: one element, a fixed array or a sequence of them.
enum Resolved {
    Element(BaseType),
    Array(BaseType, usize),
    Sequence(BaseType, Option<usize>),
}

struct Scope<'f> {
    /// Typedefs by their full path (modules and name).
    typedefs: HashMap<Vec<String>, &'f Typedef>,
}

impl<'f> Scope<'f> {
    fn new(typedefs: &'f [Typedef]) -> Result<Self, IdlError> {
        let mut map: HashMap<Vec<String>, &'f Typedef> = HashMap::new();
        for t in typedefs {
            let mut path = t.scope.clone();
            path.push(t.name.clone());
            if let Some(previous) = map.insert(path, t) {
                if (&previous.ty, previous.array) != (&t.ty, t.array) {
                    return Err(IdlError::new(
                        t.line,
                        format!("typedef '{}' declared twice, differently", t.name),
                    ));
                }
            }
        }
        Ok(Self { typedefs: map })
    }

    /// The message of struct `s`, with `consts` (those of its `_Constants` module).
    fn message(&self, s: &Struct, consts: &[&Const]) -> Result<MessageType, IdlError> {
        let name = struct_name(&s.scope, &s.name)
            .ok_or_else(|| IdlError::new(s.line, not_ros_scope(&s.scope, &s.name)))?;
        let mut fields: Vec<Field> = Vec::with_capacity(s.members.len());
        let mut names = HashSet::new();
        for m in &s.members {
            let field = self.field(m, &s.scope)?;
            if !names.insert(field.name.clone()) {
                return Err(IdlError::new(
                    m.line,
                    format!("duplicate member '{}'", field.name),
                ));
            }
            fields.push(field);
        }
        if let [only] = fields.as_slice() {
            if only.name == EMPTY_STRUCTURE_MEMBER {
                fields.clear();
            }
        }
        let constants = consts
            .iter()
            .map(|c| self.constant(c))
            .collect::<Result<_, _>>()?;
        Ok(MessageType {
            name,
            fields,
            constants,
        })
    }

    fn field(&self, m: &Member, scope: &[String]) -> Result<Field, IdlError> {
        let what = format!("member '{}'", m.name);
        let err = |reason: &str| IdlError::new(m.line, format!("{what}: {reason}"));
        let within = |e: IdlError| e.within(&what);
        if !is_ident(&m.name) {
            return Err(err("not a valid field name"));
        }
        let resolved = self.resolve(&m.ty, scope, 0, m.line).map_err(within)?;
        let (base, array) = match (resolved, m.array) {
            (Resolved::Element(b), None) => (b, ArrayKind::Single),
            (Resolved::Element(b), Some(n)) => (b, ArrayKind::Fixed(n)),
            (Resolved::Array(b, n), None) => (b, ArrayKind::Fixed(n)),
            (Resolved::Sequence(b, bound), None) => (b, ArrayKind::Sequence { bound }),
            _ => return Err(err("arrays of arrays or sequences are not supported")),
        };
        let default = match &m.default {
            None => None,
            Some(_) if matches!(base, BaseType::Message(_)) => {
                return Err(err("a nested message has no default value"))
            }
            Some(value) if array == ArrayKind::Single => {
                Some(value_text(&base, value, m.line).map_err(within)?)
            }
            Some(value) => Some(array_text(value, m.line).map_err(within)?),
        };
        Ok(Field {
            name: m.name.clone(),
            base,
            array,
            default,
            type_index: usize::MAX,
        })
    }

    fn constant(&self, c: &Const) -> Result<Constant, IdlError> {
        let what = format!("constant '{}'", c.name);
        let err = |reason: &str| IdlError::new(c.line, format!("{what}: {reason}"));
        let within = |e: IdlError| e.within(&what);
        if !is_ident(&c.name) {
            return Err(err("not a valid constant name"));
        }
        let base = match self.resolve(&c.ty, &c.scope, 0, c.line).map_err(within)? {
            Resolved::Element(
                b @ (BaseType::Primitive(_) | BaseType::String { .. } | BaseType::WString { .. }),
            ) => b,
            _ => return Err(err("a constant must have a builtin, non-array type")),
        };
        let type_name = match &base {
            BaseType::Primitive(p) => p.name().to_string(),
            BaseType::WString { .. } => "wstring".into(),
            _ => "string".into(),
        };
        Ok(Constant {
            type_name,
            name: c.name.clone(),
            value: value_text(&base, &c.value, c.line).map_err(within)?,
        })
    }

    /// Resolves typedefs (through at most [`MAX_DEPTH`] of them) and struct names.
    fn resolve(
        &self,
        ty: &TypeSpec,
        scope: &[String],
        depth: usize,
        line: usize,
    ) -> Result<Resolved, IdlError> {
        if depth > MAX_DEPTH {
            return Err(IdlError::new(
                line,
                format!("typedefs nested deeper than {MAX_DEPTH} (or circular)"),
            ));
        }
        Ok(match ty {
            TypeSpec::Primitive(p) => Resolved::Element(BaseType::Primitive(*p)),
            TypeSpec::String { bound, wide: false } => {
                Resolved::Element(BaseType::String { bound: *bound })
            }
            TypeSpec::String { bound, wide: true } => {
                Resolved::Element(BaseType::WString { bound: *bound })
            }
            TypeSpec::Sequence { element, bound } => {
                match self.resolve(element, scope, depth + 1, line)? {
                    Resolved::Element(b) => Resolved::Sequence(b, *bound),
                    _ => {
                        return Err(IdlError::new(
                            line,
                            "sequences of arrays or sequences are not supported",
                        ))
                    }
                }
            }
            TypeSpec::Named(path) => match self.typedef(path, scope) {
                Some(t) => {
                    let inner = self.resolve(&t.ty, &t.scope, depth + 1, line)?;
                    match (inner, t.array) {
                        (inner, None) => inner,
                        (Resolved::Element(b), Some(n)) => Resolved::Array(b, n),
                        _ => {
                            return Err(IdlError::new(
                                line,
                                format!(
                                    "typedef '{}': arrays of arrays or sequences are not \
                                     supported",
                                    t.name
                                ),
                            ))
                        }
                    }
                }
                None => Resolved::Element(BaseType::Message(message_name(path, line)?)),
            },
        })
    }

    /// The typedef `path` names from `scope`: an unscoped name is looked for in `scope` and
    /// the modules around it, a scoped one as written.
    fn typedef(&self, path: &[String], scope: &[String]) -> Option<&'f Typedef> {
        if let [name] = path {
            (0..=scope.len()).rev().find_map(|n| {
                let mut full = scope[..n].to_vec();
                full.push(name.clone());
                self.typedefs.get(&full).copied()
            })
        } else {
            self.typedefs.get(path).copied()
        }
    }
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `pkg/Type` for a struct in `module pkg { module msg { ... } }` (or `module pkg { ... }`),
/// `pkg/srv/Type` and `pkg/action/Type` for services' and actions' structs.
fn struct_name(scope: &[String], name: &str) -> Option<String> {
    if !is_ident(name) || !scope.iter().all(|s| is_ident(s)) {
        return None;
    }
    match scope {
        [pkg] => Some(format!("{pkg}/{name}")),
        [pkg, kind] if kind == "msg" => Some(format!("{pkg}/{name}")),
        [pkg, kind] if kind == "srv" || kind == "action" => Some(format!("{pkg}/{kind}/{name}")),
        _ => None,
    }
}

fn not_ros_scope(scope: &[String], name: &str) -> String {
    format!(
        "struct '{}' is not in a module 'pkg::msg', 'pkg::srv' or 'pkg::action'",
        scope
            .iter()
            .chain([&name.to_string()])
            .cloned()
            .collect::<Vec<_>>()
            .join("::")
    )
}

/// The message a scoped name that is no typedef refers to.
fn message_name(path: &[String], line: usize) -> Result<String, IdlError> {
    let last = path.last().map(String::as_str).unwrap_or_default();
    let scope = &path[..path.len().saturating_sub(1)];
    let reason = match scope {
        [] => format!("unknown type '{last}' (neither a builtin nor a typedef)"),
        _ => match struct_name(scope, last) {
            Some(name) => return Ok(name),
            None => format!(
                "type '{}' is not 'pkg::msg::Type' (or a typedef)",
                path.join("::")
            ),
        },
    };
    Err(IdlError::new(line, reason))
}

/// A `.msg` value for a literal of type `base`.
fn value_text(base: &BaseType, value: &Literal, line: usize) -> Result<String, IdlError> {
    let fail = |reason: String| Err(IdlError::new(line, reason));
    let mismatch = || {
        fail(format!(
            "value {} does not fit type {}",
            describe(value),
            base_name(base)
        ))
    };
    match (base, value) {
        (BaseType::Primitive(Primitive::Bool), Literal::Bool(b)) => Ok(b.to_string()),
        (BaseType::Primitive(Primitive::Float32 | Primitive::Float64), Literal::Float(f)) => {
            Ok(f.clone())
        }
        (BaseType::Primitive(Primitive::Bool), _) => mismatch(),
        (BaseType::Primitive(_), Literal::Integer(i)) => Ok(i.to_string()),
        (
            BaseType::Primitive(Primitive::IdlChar | Primitive::WChar | Primitive::Char),
            Literal::Char(c),
        ) => match c.chars().next() {
            Some(ch) if c.chars().count() == 1 => Ok((ch as u32).to_string()),
            _ => mismatch(),
        },
        (BaseType::String { .. } | BaseType::WString { .. }, Literal::Str(s)) => Ok(quoted(s)),
        (_, Literal::Name(path)) => fail(format!(
            "the named value '{}' is not supported; write a literal",
            path.join("::")
        )),
        _ => mismatch(),
    }
}

/// An array's default: rosidl writes the Python tuple as a string literal, `"(1, 2, 3)"`;
/// `.msg` writes `[1, 2, 3]`.
fn array_text(value: &Literal, line: usize) -> Result<String, IdlError> {
    let Literal::Str(text) = value else {
        return Err(IdlError::new(
            line,
            format!("array default {} is not a string literal", describe(value)),
        ));
    };
    let t = text.trim();
    let inner = t
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .or_else(|| t.strip_prefix('[').and_then(|t| t.strip_suffix(']')))
        .ok_or_else(|| {
            IdlError::new(
                line,
                format!("array default \"{text}\" is not a \"(...)\" tuple"),
            )
        })?
        .trim();
    let inner = inner.strip_suffix(',').unwrap_or(inner).trim_end();
    Ok(format!("[{inner}]"))
}

/// A string as a double-quoted `.msg` literal.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn describe(value: &Literal) -> String {
    match value {
        Literal::Integer(i) => i.to_string(),
        Literal::Float(f) => f.clone(),
        Literal::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        Literal::Str(s) => format!("{:?}", s.chars().take(40).collect::<String>()),
        Literal::Char(c) => format!("'{c}'"),
        Literal::Name(p) => p.join("::"),
    }
}

fn base_name(base: &BaseType) -> String {
    match base {
        BaseType::Primitive(p) => p.name().into(),
        BaseType::String { .. } => "string".into(),
        BaseType::WString { .. } => "wstring".into(),
        BaseType::Message(m) => m.clone(),
    }
}
