//! Rendering decoded messages as YAML (like `ros2 topic echo`) or as one-line JSON.

use std::fmt::Write as _;

use super::definition::{BaseType, Registry};
use super::value::Value;

/// How to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Arrays longer than this are summarised (ignored when `full`).
    pub max_array: usize,
    /// Print every element of every array.
    pub full: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            max_array: 32,
            full: false,
        }
    }
}

enum Node<'a> {
    Scalar(String),
    Map(Vec<(&'a str, Node<'a>)>),
    List(Vec<Node<'a>>),
}

fn float_text(repr: String, v: f64, json: bool) -> String {
    if v.is_finite() {
        repr
    } else if json {
        "null".into()
    } else if v.is_nan() {
        ".nan".into()
    } else if v > 0.0 {
        ".inf".into()
    } else {
        "-.inf".into()
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn yaml_string(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '/')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "null" | "on" | "off" | "y" | "n"
        );
    if plain {
        s.to_string()
    } else {
        json_string(s)
    }
}

fn scalar(v: &Value, json: bool) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Int8(x) => x.to_string(),
        Value::UInt8(x) => x.to_string(),
        Value::Int16(x) => x.to_string(),
        Value::UInt16(x) => x.to_string(),
        Value::Int32(x) => x.to_string(),
        Value::UInt32(x) => x.to_string(),
        Value::Int64(x) => x.to_string(),
        Value::UInt64(x) => x.to_string(),
        Value::Float32(x) => float_text(format!("{x:?}"), *x as f64, json),
        Value::Float64(x) => float_text(format!("{x:?}"), *x, json),
        Value::String(b) => {
            let s = String::from_utf8_lossy(b);
            if json {
                json_string(&s)
            } else {
                yaml_string(&s)
            }
        }
        other => format!("<{}>", other.kind()),
    }
}

fn summary(kind: &str, len: usize, head: &[String], json: bool) -> Node<'static> {
    let text = format!("<{len} × {kind}: {} ...>", head.join(", "));
    let _ = json;
    Node::Scalar(json_string(&text))
}

fn build<'a>(
    reg: &'a Registry,
    base: Option<(&'a BaseType, usize)>,
    v: &Value,
    opts: RenderOptions,
    json: bool,
) -> Node<'a> {
    match v {
        Value::Struct(values) => {
            let Some((BaseType::Message(_), t)) = base else {
                return Node::Scalar("<struct>".into());
            };
            let ty = reg.by_index(t);
            Node::Map(
                ty.fields
                    .iter()
                    .zip(values)
                    .map(|(f, v)| {
                        (
                            f.name.as_str(),
                            build(reg, Some((&f.base, f.type_index)), v, opts, json),
                        )
                    })
                    .collect(),
            )
        }
        Value::Time { sec, nsec } => Node::Map(vec![
            ("secs", Node::Scalar(sec.to_string())),
            ("nsecs", Node::Scalar(nsec.to_string())),
        ]),
        Value::Duration { sec, nsec } => Node::Map(vec![
            ("secs", Node::Scalar(sec.to_string())),
            ("nsecs", Node::Scalar(nsec.to_string())),
        ]),
        Value::Bytes(b) => {
            if !opts.full && b.len() > opts.max_array {
                let head: Vec<String> = b.iter().take(8).map(|x| x.to_string()).collect();
                return summary("uint8", b.len(), &head, json);
            }
            Node::List(b.iter().map(|x| Node::Scalar(x.to_string())).collect())
        }
        Value::Array(items) => {
            if !opts.full && items.len() > opts.max_array {
                let head: Vec<String> = items
                    .iter()
                    .take(4)
                    .map(|x| match x {
                        Value::Struct(_) => "{...}".into(),
                        x => scalar(x, true),
                    })
                    .collect();
                let kind = items.first().map(|x| x.kind()).unwrap_or("?");
                return summary(kind, items.len(), &head, json);
            }
            Node::List(
                items
                    .iter()
                    .map(|x| build(reg, base, x, opts, json))
                    .collect(),
            )
        }
        v => Node::Scalar(scalar(v, json)),
    }
}

fn write_json(node: &Node, out: &mut String) {
    match node {
        Node::Scalar(s) => out.push_str(s),
        Node::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&json_string(k));
                out.push(':');
                write_json(v, out);
            }
            out.push('}');
        }
        Node::List(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(v, out);
            }
            out.push(']');
        }
    }
}

fn write_yaml(node: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match node {
        Node::Map(entries) => {
            for (k, v) in entries {
                match v {
                    Node::Scalar(s) => {
                        let _ = writeln!(out, "{pad}{k}: {s}");
                    }
                    Node::List(items) if items.is_empty() => {
                        let _ = writeln!(out, "{pad}{k}: []");
                    }
                    Node::Map(e) if e.is_empty() => {
                        let _ = writeln!(out, "{pad}{k}: {{}}");
                    }
                    Node::List(_) => {
                        let _ = writeln!(out, "{pad}{k}:");
                        write_yaml(v, indent, out);
                    }
                    Node::Map(_) => {
                        let _ = writeln!(out, "{pad}{k}:");
                        write_yaml(v, indent + 2, out);
                    }
                }
            }
        }
        Node::List(items) => {
            for item in items {
                match item {
                    Node::Scalar(s) => {
                        let _ = writeln!(out, "{pad}- {s}");
                    }
                    Node::List(l) if l.is_empty() => {
                        let _ = writeln!(out, "{pad}- []");
                    }
                    Node::Map(e) if e.is_empty() => {
                        let _ = writeln!(out, "{pad}- {{}}");
                    }
                    _ => {
                        // First line after the dash, the rest indented under it.
                        let mut inner = String::new();
                        write_yaml(item, indent + 2, &mut inner);
                        let inner = inner.trim_start();
                        let _ = write!(out, "{pad}- {inner}");
                    }
                }
            }
        }
        Node::Scalar(s) => {
            let _ = writeln!(out, "{pad}{s}");
        }
    }
}

/// Renders a message of the type at `index` as YAML (`ros2 topic echo` style, no `---`).
pub fn to_yaml(reg: &Registry, index: usize, value: &Value, opts: RenderOptions) -> String {
    let base = BaseType::Message(reg.by_index(index).name.clone());
    let node = build(reg, Some((&base, index)), value, opts, false);
    let mut out = String::new();
    write_yaml(&node, 0, &mut out);
    out
}

/// Renders a message of the type at `index` as one line of JSON.
pub fn to_json(reg: &Registry, index: usize, value: &Value, opts: RenderOptions) -> String {
    let base = BaseType::Message(reg.by_index(index).name.clone());
    let node = build(reg, Some((&base, index)), value, opts, true);
    let mut out = String::new();
    write_json(&node, &mut out);
    out
}
