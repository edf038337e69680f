//! Messages as CSV rows: every field flattened to a column named by its dotted path
//! (`pose.pose.position.x`); fixed arrays of up to [`EXPAND_LIMIT`] elements expanded to one
//! column per element (`orientation_covariance[0]`); other arrays in one cell, as a JSON list
//! (numbers, strings, objects for messages) or, for byte arrays, as hex. Numbers print in their
//! shortest exact form, so that reading them back gives the same value.

use std::fmt::Write as _;

use rosbag2_rs_codec::msg::definition::{ArrayKind, BaseType};
use rosbag2_rs_codec::msg::{Registry, Value};

/// Fixed arrays up to this many elements get a column per element.
pub const EXPAND_LIMIT: usize = 64;

fn number(value: &Value) -> Option<String> {
    Some(match value {
        Value::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
        Value::Float32(v) => float(*v as f64, format!("{v:?}")),
        Value::Float64(v) => float(*v, format!("{v:?}")),
        Value::Time { sec, nsec } => format!("{sec}.{nsec:09}"),
        Value::Duration { sec, nsec } => format!("{}", *sec as f64 + *nsec as f64 * 1e-9),
        other => other.as_i128()?.to_string(),
    })
}

/// Non-finite floats as Python's `float()` reads them.
fn float(v: f64, text: String) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        (if v > 0.0 { "inf" } else { "-inf" }).into()
    } else {
        text
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// A value as JSON (for arrays in one cell).
fn json(reg: &Registry, type_index: usize, base: &BaseType, value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json(reg, type_index, base, item, out);
            }
            out.push(']');
        }
        Value::Bytes(b) => {
            out.push('[');
            for (i, x) in b.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{x}");
            }
            out.push(']');
        }
        Value::Struct(fields) => {
            let ty = reg.by_index(type_index);
            out.push('{');
            for (i, (f, v)) in ty.fields.iter().zip(fields).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "\"{}\":", f.name);
                json(reg, f.type_index(), &f.base, v, out);
            }
            out.push('}');
        }
        Value::String(_) => {
            let text = value.as_str().unwrap_or_default();
            out.push('"');
            for c in text.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if (c as u32) < 0x20 => {
                        let _ = write!(out, "\\u{:04x}", c as u32);
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Value::Float32(v) if !v.is_finite() => out.push_str("null"),
        Value::Float64(v) if !v.is_finite() => out.push_str("null"),
        other => {
            let _ = base;
            out.push_str(&number(other).unwrap_or_default());
        }
    }
}

/// Appends the columns of `value` (a message of the type at `index`) under `prefix`.
fn flatten(
    reg: &Registry,
    index: usize,
    value: &Value,
    prefix: &str,
    out: &mut Vec<(String, String)>,
) {
    let ty = reg.by_index(index);
    let Some(fields) = value.fields() else {
        return;
    };
    for (field, v) in ty.fields.iter().zip(fields) {
        let name = if prefix.is_empty() {
            field.name.clone()
        } else {
            format!("{prefix}.{}", field.name)
        };
        match (field.array, v) {
            (ArrayKind::Single, Value::Struct(_)) => {
                flatten(reg, field.type_index(), v, &name, out)
            }
            (ArrayKind::Single, Value::String(_)) => {
                out.push((name, v.as_str().unwrap_or_default().into_owned()))
            }
            (ArrayKind::Single, other) => out.push((name, number(other).unwrap_or_default())),
            (ArrayKind::Fixed(n), Value::Array(items)) if n <= EXPAND_LIMIT => {
                for (i, item) in items.iter().enumerate() {
                    let name = format!("{name}[{i}]");
                    match item {
                        Value::Struct(_) => flatten(reg, field.type_index(), item, &name, out),
                        Value::String(_) => {
                            out.push((name, item.as_str().unwrap_or_default().into_owned()))
                        }
                        other => out.push((name, number(other).unwrap_or_default())),
                    }
                }
            }
            (ArrayKind::Fixed(n), Value::Bytes(bytes)) if n <= EXPAND_LIMIT => {
                for (i, b) in bytes.iter().enumerate() {
                    out.push((format!("{name}[{i}]"), b.to_string()));
                }
            }
            (_, Value::Bytes(bytes)) => out.push((name, hex(bytes))),
            (_, other) => {
                let mut cell = String::new();
                json(reg, field.type_index(), &field.base, other, &mut cell);
                out.push((name, cell));
            }
        }
    }
}

/// The columns of one decoded message: `(dotted path, text)` in definition order.
pub fn columns(reg: &Registry, index: usize, value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    flatten(reg, index, value, "", &mut out);
    out
}

/// Whether column `name` is selected by `fields` (empty: all): a field selects itself and
/// everything under it (`pose.position` selects `pose.position.x`, `data` selects `data[3]`).
pub fn selected(name: &str, fields: &[String]) -> bool {
    fields.is_empty()
        || fields.iter().any(|f| {
            name == f
                || name
                    .strip_prefix(f.as_str())
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        })
}

/// One CSV cell, quoted when it must be (RFC 4180).
pub fn cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) || text.starts_with(' ') || text.ends_with(' ') {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_codec::msg::Dialect;

    #[test]
    fn nested_fields_arrays_and_quoting() {
        let mut reg = Registry::new();
        reg.parse_concatenated(
            "t/msg/A",
            "string name\nfloat64[3] v\nt/B[] bs\nuint8[] raw\nfloat32 f\n\
             ===\nMSG: t/B\nint32 x\n",
            Dialect::Ros2,
        )
        .unwrap();
        let value = Value::Struct(vec![
            Value::string("a, \"b\""),
            Value::Array(vec![
                Value::Float64(0.1),
                Value::Float64(-2.0),
                Value::Float64(1e300),
            ]),
            Value::Array(vec![
                Value::Struct(vec![Value::Int32(1)]),
                Value::Struct(vec![Value::Int32(2)]),
            ]),
            Value::Bytes(vec![0xab, 0x01]),
            Value::Float32(0.1),
        ]);
        let cols = columns(&reg, reg.index_of("t/msg/A").unwrap(), &value);
        let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["name", "v[0]", "v[1]", "v[2]", "bs", "raw", "f"]);
        assert_eq!(cols[1].1, "0.1");
        assert_eq!(cols[2].1, "-2.0");
        assert_eq!(cols[3].1, "1e300");
        assert_eq!(cols[4].1, r#"[{"x":1},{"x":2}]"#);
        assert_eq!(cols[5].1, "ab01");
        assert_eq!(cols[6].1, "0.1");
        assert_eq!(cell(&cols[0].1), r#""a, ""b""""#);
        assert!(selected("v[2]", &["v".into()]));
        assert!(!selected("vv", &["v".into()]));
        assert!(selected("pose.position.x", &["pose.position".into()]));
    }
}
