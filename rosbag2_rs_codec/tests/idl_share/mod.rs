//! Checks every `.idl` of share directories (`<share>/<pkg>/<msg|srv|action>/<Name>.idl`)
//! against the interface file it was generated from and the type hashes rosidl recorded.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use rosbag2_rs_codec::msg::definition::{parse_message, BaseType, MessageType, Primitive};
use rosbag2_rs_codec::msg::idl::{idl_includes, parse_idl};
use rosbag2_rs_codec::{type_hash, MessageDefinition};

const SEPARATOR: &str =
    "================================================================================";

/// Share directories, searched in order.
pub struct Share {
    dirs: Vec<PathBuf>,
}

/// What [`check_share`] found.
#[derive(Debug, Default)]
pub struct Report {
    /// `.idl` files checked.
    pub files: usize,
    /// Of those, files that have the `.msg`, `.srv` or `.action` they came from.
    pub compared_with_source: usize,
    /// Type hashes compared with a `.json` type description's.
    pub hashes_checked: usize,
    /// `file: what differs`.
    pub failures: Vec<String>,
}

impl Share {
    pub fn new(dirs: Vec<PathBuf>) -> Self {
        Self { dirs }
    }

    /// `pkg/kind/Name` → its file with `extension`, in the first directory that has it.
    fn file(&self, interface: &str, extension: &str) -> Option<PathBuf> {
        self.dirs
            .iter()
            .map(|d| d.join(format!("{interface}.{extension}")))
            .find(|p| p.is_file())
    }

    /// Every `.idl` as `pkg/kind/Name`, sorted.
    fn idl_interfaces(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for dir in &self.dirs {
            for pkg in read_dir(dir) {
                for kind in ["msg", "srv", "action"] {
                    for file in read_dir(&pkg.join(kind)) {
                        if file.extension().is_some_and(|e| e == "idl") {
                            let pkg = pkg.file_name().unwrap_or_default().to_string_lossy();
                            let stem = file.file_stem().unwrap_or_default().to_string_lossy();
                            out.insert(format!("{pkg}/{kind}/{stem}"));
                        }
                    }
                }
            }
        }
        out
    }
}

fn read_dir(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `ros2idl` definition rosbag2's `LocalMessageDefinitionSource::get_full_text` stores for
/// `interface` when only `.idl` files are found: a separator and `IDL: <type>` before each
/// file, the type's own first, then its `#include`s depth first (each in sorted order, each
/// once), with an empty line before each dependency's separator.
pub fn rosbag2_idl_definition(share: &Share, interface: &str) -> Result<String, String> {
    fn append(
        share: &Share,
        interface: &str,
        seen: &mut HashSet<String>,
        depth: usize,
    ) -> Result<String, String> {
        if depth == 0 {
            return Err(format!("{interface}: includes nested too deeply"));
        }
        let path = share
            .file(interface, "idl")
            .ok_or_else(|| format!("no {interface}.idl"))?;
        let mut text = read(&path)?;
        let includes = idl_includes(&text).map_err(|e| e.to_string())?;
        let dependencies: BTreeSet<&str> = includes
            .iter()
            .filter_map(|i| i.strip_suffix(".idl"))
            .collect();
        for dep in dependencies {
            if seen.insert(dep.to_string()) {
                text.push('\n');
                text.push_str(&format!("{SEPARATOR}\nIDL: {dep}\n"));
                text.push_str(&append(share, dep, seen, depth - 1)?);
            }
        }
        Ok(text)
    }
    let mut seen = HashSet::new();
    Ok(format!(
        "{SEPARATOR}\nIDL: {interface}\n{}",
        append(share, interface, &mut seen, 50)?
    ))
}

/// Checks every `.idl` file of `share`.
pub fn check_share(share: &Share) -> Report {
    let mut report = Report::default();
    for interface in share.idl_interfaces() {
        report.files += 1;
        if let Err(e) = check_interface(share, &interface, &mut report) {
            report.failures.push(format!("{interface}: {e}"));
        }
    }
    report
}

fn check_interface(share: &Share, interface: &str, report: &mut Report) -> Result<(), String> {
    let path = share.file(interface, "idl").ok_or("vanished")?;
    let types = parse_idl(interface, &read(&path)?).map_err(|e| e.to_string())?;
    if types.is_empty() {
        return Err("declares no struct".into());
    }
    if let Some(expected) = source_types(share, interface)? {
        report.compared_with_source += 1;
        let names = |ts: &[MessageType]| ts.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        if names(&types) != names(&expected) {
            return Err(format!(
                "types {:?}, expected {:?}",
                names(&types),
                names(&expected)
            ));
        }
        for (idl, msg) in types.iter().zip(&expected) {
            compare(idl, msg)?;
        }
    }
    if let Some(json) = share.file(interface, "json") {
        let recorded = recorded_hashes(&read(&json)?);
        let definition = MessageDefinition {
            topic_type: interface.to_string(),
            encoding: "ros2idl".into(),
            encoded_message_definition: rosbag2_idl_definition(share, interface)?,
            type_description_hash: String::new(),
        };
        let kind = interface.split('/').nth(1).unwrap_or("msg");
        let mut names: Vec<String> = types.iter().map(|t| full_name(&t.name, kind)).collect();
        if kind == "srv" {
            // The event message rosidl generates from the request and response.
            names.push(format!("{interface}_Event"));
        }
        for name in names {
            let Some(expected) = recorded.get(&name) else {
                continue;
            };
            let computed = type_hash::rihs01(&name, &definition).map_err(|e| e.to_string())?;
            if &computed != expected {
                return Err(format!(
                    "{name} hashes to {computed}, rosidl recorded {expected}"
                ));
            }
            report.hashes_checked += 1;
        }
    }
    Ok(())
}

/// `pkg/Type` → `pkg/msg/Type`; `pkg/srv/Type` stays.
fn full_name(name: &str, kind: &str) -> String {
    match name.split_once('/') {
        Some((pkg, ty)) if !ty.contains('/') => format!("{pkg}/{kind}/{ty}"),
        _ => name.to_string(),
    }
}

/// The types of the `.msg`, `.srv` (`_Request`, `_Response`) or `.action` (`_Goal`,
/// `_Result`, `_Feedback`) next to an `.idl`, if there is one.
fn source_types(share: &Share, interface: &str) -> Result<Option<Vec<MessageType>>, String> {
    let kind = interface.split('/').nth(1).unwrap_or_default();
    let (extension, suffixes): (&str, &[&str]) = match kind {
        "msg" => ("msg", &[""]),
        "srv" => ("srv", &["_Request", "_Response"]),
        "action" => ("action", &["_Goal", "_Result", "_Feedback"]),
        _ => return Ok(None),
    };
    let Some(path) = share.file(interface, extension) else {
        return Ok(None);
    };
    let text = read(&path)?;
    let mut parts = vec![String::new()];
    for line in text.lines() {
        if line.trim() == "---" {
            parts.push(String::new());
        } else if let Some(last) = parts.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    if parts.len() != suffixes.len() {
        return Err(format!("{} parts in the .{extension}", parts.len()));
    }
    parts
        .iter()
        .zip(suffixes)
        .map(|(part, suffix)| {
            parse_message(
                &format!("{interface}{suffix}"),
                part,
                rosbag2_rs_codec::msg::Dialect::Ros2,
            )
            .map_err(|e| format!(".{extension}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// `type_name → hash_string` of a type description's `type_hashes` (rosidl's `.json`).
fn recorded_hashes(json: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(start) = json.find("\"type_hashes\"") else {
        return out;
    };
    let mut rest = &json[start..];
    let value_after = |s: &str, key: &str| -> Option<(String, usize)> {
        let at = s.find(key)? + key.len();
        let open = at + s[at..].find('"')? + 1;
        let close = open + s[open..].find('"')?;
        Some((s[open..close].to_string(), close + 1))
    };
    while let Some((name, used)) = value_after(rest, "\"type_name\":") {
        rest = &rest[used..];
        let Some((hash, used)) = value_after(rest, "\"hash_string\":") else {
            break;
        };
        rest = &rest[used..];
        out.insert(name, hash);
    }
    out
}

/// Fields (names, types, bounds, defaults) and constants (names, types, values) equal, with
/// the spellings rosidl_adapter changes normalised: a `.msg` `char` is an IDL `uint8`, and
/// values are compared by what they mean (`True` and `TRUE`, `1.5e-3` and `0.0015`, `'a'` and
/// `"a"`, `[1, 2]` and `(1, 2)`).
fn compare(idl: &MessageType, msg: &MessageType) -> Result<(), String> {
    let field_names = |t: &MessageType| t.fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    if field_names(idl) != field_names(msg) {
        return Err(format!(
            "{}: fields {:?}, .msg has {:?}",
            idl.name,
            field_names(idl),
            field_names(msg)
        ));
    }
    for (a, b) in idl.fields.iter().zip(&msg.fields) {
        let differs = |what: &str, x: String, y: String| {
            Err(format!(
                "{}.{}: {what} {x} from .idl, {y} from .msg",
                idl.name, a.name
            ))
        };
        if a.base != msg_base(&b.base) {
            return differs("type", format!("{:?}", a.base), format!("{:?}", b.base));
        }
        if a.array != b.array {
            return differs("array", format!("{:?}", a.array), format!("{:?}", b.array));
        }
        let (x, y) = (
            a.default.as_deref().map(value),
            b.default.as_deref().map(value),
        );
        if x != y {
            return differs(
                "default",
                format!("{:?}", a.default),
                format!("{:?}", b.default),
            );
        }
    }
    let constants = |t: &MessageType, msg: bool| {
        t.constants
            .iter()
            .map(|c| {
                let ty = if msg && c.type_name == "char" {
                    "uint8"
                } else {
                    c.type_name.as_str()
                };
                (c.name.clone(), ty.to_string(), value(&c.value))
            })
            .collect::<Vec<_>>()
    };
    if constants(idl, false) != constants(msg, true) {
        return Err(format!(
            "{}: constants {:?} from .idl, {:?} from .msg",
            idl.name,
            constants(idl, false),
            constants(msg, true)
        ));
    }
    Ok(())
}

/// The IDL type rosidl_adapter writes for a `.msg` type: `char` becomes `uint8`.
fn msg_base(base: &BaseType) -> BaseType {
    match base {
        BaseType::Primitive(Primitive::Char) => BaseType::Primitive(Primitive::UInt8),
        b => b.clone(),
    }
}

/// A value in a form both spellings reach.
fn value(text: &str) -> String {
    let t = text.trim();
    if let Some(inner) = t
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .or_else(|| t.strip_prefix('(').and_then(|t| t.strip_suffix(')')))
    {
        let items: Vec<String> = split_items(inner).iter().map(|i| value(i)).collect();
        return format!("[{}]", items.join(", "));
    }
    if t.len() >= 2
        && ((t.starts_with('"') && t.ends_with('"')) || (t.starts_with('\'') && t.ends_with('\'')))
    {
        let mut out = String::new();
        let mut chars = t[1..t.len() - 1].chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' {
                chars.next().unwrap_or('\\')
            } else {
                c
            });
        }
        return format!("str:{out}");
    }
    match t.to_ascii_lowercase().as_str() {
        "true" => return "true".into(),
        "false" => return "false".into(),
        _ => {}
    }
    // Integers beyond f64's precision (uint64 limits) as written; other numbers as f64.
    match (t.parse::<i128>(), t.parse::<f64>()) {
        (Ok(i), _) if i.unsigned_abs() > 1 << 53 => return i.to_string(),
        (_, Ok(f)) => return format!("{f:e}"),
        _ => {}
    }
    format!("str:{t}")
}

/// Items of a list, split at commas outside quotes; an empty last item (a trailing comma)
/// dropped.
fn split_items(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quote = None;
    let mut escaped = false;
    for c in s.chars() {
        let last = out.last_mut().expect("never empty");
        match (c, quote) {
            _ if escaped => {
                escaped = false;
                last.push(c);
            }
            ('\\', Some(_)) => {
                escaped = true;
                last.push(c);
            }
            ('"' | '\'', None) => {
                quote = Some(c);
                last.push(c);
            }
            (c, Some(q)) if c == q => {
                quote = None;
                last.push(c);
            }
            (',', None) => out.push(String::new()),
            _ => last.push(c),
        }
    }
    if out.last().is_some_and(|s| s.trim().is_empty()) {
        out.pop();
    }
    out
}
