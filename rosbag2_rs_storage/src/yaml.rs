//! A small block-style YAML emitter in the layout rosbag2 (yaml-cpp) writes, and helpers to read
//! typed values out of parsed `yaml_rust2` documents.

use yaml_rust2::Yaml;

/// A YAML value to emit. Mappings keep their insertion order.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A string scalar, quoted when it would otherwise read as something else.
    Str(String),
    /// An integer scalar.
    Int(i128),
    /// A boolean scalar.
    Bool(bool),
    /// `~`.
    Null,
    /// A block sequence.
    Seq(Vec<Node>),
    /// A block mapping.
    Map(Vec<(String, Node)>),
}

impl Node {
    /// A string node.
    pub fn str(s: impl Into<String>) -> Self {
        Node::Str(s.into())
    }

    /// A mapping node from `(key, value)` pairs.
    pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Node)>) -> Self {
        Node::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

/// Emits `node` as a YAML document (no `---` marker), ending with a newline.
pub fn emit(node: &Node) -> String {
    let mut out = String::new();
    match node {
        Node::Map(entries) if !entries.is_empty() => emit_map(entries, 0, &mut out),
        Node::Seq(items) if !items.is_empty() => emit_seq(items, 0, &mut out),
        scalar => {
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
    out
}

fn emit_map(entries: &[(String, Node)], indent: usize, out: &mut String) {
    for (i, (key, value)) in entries.iter().enumerate() {
        // The first key of a mapping that is a sequence item continues the "- " line.
        if i > 0 || !out.ends_with("- ") {
            push_indent(out, indent);
        }
        out.push_str(&quote_if_needed(key));
        out.push(':');
        emit_value(value, indent, out);
    }
}

/// Emits the entries of `map` (a [`Node::Map`]; anything else emits nothing) at `indent`, as
/// the value of a key already written: a document can be emitted in parts.
pub fn emit_entries(map: &Node, indent: usize, out: &mut String) {
    if let Node::Map(entries) = map {
        emit_map(entries, indent, out);
    }
}

/// Emits `key:` at `indent` and the block sequence of `items`, each item built as it is written:
/// a sequence of thousands of entries (a long bag's files) is never held as a whole.
pub fn emit_key_seq(key: &str, items: impl Iterator<Item = Node>, indent: usize, out: &mut String) {
    push_indent(out, indent);
    out.push_str(&quote_if_needed(key));
    out.push(':');
    let mut items = items.peekable();
    if items.peek().is_none() {
        out.push_str(" []\n");
        return;
    }
    out.push('\n');
    for item in items {
        emit_seq_item(&item, indent + 2, out);
    }
}

fn emit_seq(items: &[Node], indent: usize, out: &mut String) {
    for item in items {
        emit_seq_item(item, indent, out);
    }
}

fn emit_seq_item(item: &Node, indent: usize, out: &mut String) {
    push_indent(out, indent);
    out.push_str("- ");
    match item {
        Node::Map(entries) if !entries.is_empty() => emit_map(entries, indent + 2, out),
        Node::Seq(inner) if !inner.is_empty() => {
            out.pop();
            out.push('\n');
            emit_seq(inner, indent + 2, out);
        }
        scalar => {
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
}

fn emit_value(value: &Node, indent: usize, out: &mut String) {
    match value {
        Node::Map(entries) if !entries.is_empty() => {
            out.push('\n');
            emit_map(entries, indent + 2, out);
        }
        Node::Seq(items) if !items.is_empty() => {
            out.push('\n');
            emit_seq(items, indent + 2, out);
        }
        scalar => {
            out.push(' ');
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A name such as a file or topic name (`12_rosbag2_2026_12_07-10_00_01.mcap`, `/tf_static`):
/// letters, digits, `_`, `.`, `-` and `/` only, with a `_` or `/` in it (no number, boolean
/// or null of YAML's core schema has either) and not starting with `-` or `.`. It reads back
/// as itself, without the parse [`quote_if_needed`] otherwise takes (a `metadata.yaml` names
/// thousands of files).
fn is_plain_name(s: &str) -> bool {
    s.contains(['_', '/'])
        && !s.starts_with(['-', '.'])
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-/".contains(&b))
}

fn scalar_text(node: &Node) -> String {
    match node {
        Node::Str(s) => quote_if_needed(s),
        Node::Int(i) => i.to_string(),
        Node::Bool(b) => b.to_string(),
        Node::Null => "~".into(),
        Node::Seq(_) => "[]".into(),
        Node::Map(_) => "{}".into(),
    }
}

/// Returns `s` as a plain scalar when it reads back as the same string, else double-quoted.
fn quote_if_needed(s: &str) -> String {
    if is_plain_name(s) {
        return s.to_string();
    }
    let plain_ok = !s.is_empty()
        && !s.starts_with(|c: char| c.is_whitespace() || "-?:,[]{}#&*!|>'\"%@`~".contains(c))
        && !s.ends_with(char::is_whitespace)
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && s.chars().all(|c| !c.is_control())
        && matches!(yaml_rust2::YamlLoader::load_from_str(s).as_deref(), Ok([Yaml::String(v)]) if v == s);
    if plain_ok {
        return s.to_string();
    }
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            '\r' => q.push_str("\\r"),
            c if c.is_control() => q.push_str(&format!("\\u{:04x}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// Reads `node[key]` as a string; scalars of other kinds are turned into their text.
pub fn get_str(node: &Yaml, key: &str) -> Option<String> {
    scalar_string(&node[key])
}

/// Text of a scalar node, `None` for missing, null, sequences and mappings.
pub fn scalar_string(node: &Yaml) -> Option<String> {
    match node {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Reads `node[key]` as an integer (also accepting integer-valued strings).
pub fn get_int(node: &Yaml, key: &str) -> Option<i64> {
    match &node[key] {
        Yaml::Integer(i) => Some(*i),
        Yaml::String(s) | Yaml::Real(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Reads `node[key]` as an unsigned integer; see [`as_u64`].
pub fn get_u64(node: &Yaml, key: &str) -> Option<u64> {
    as_u64(&node[key])
}

/// Reads a node as an unsigned integer. yaml-rust2 cannot hold values above `i64::MAX` as
/// integers, so large ones are parsed from their text.
pub fn as_u64(node: &Yaml) -> Option<u64> {
    match node {
        Yaml::Integer(i) => u64::try_from(*i).ok(),
        Yaml::String(s) | Yaml::Real(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        for s in [
            "",
            "true",
            "123",
            "~",
            "a: b",
            "- x",
            "/topic",
            "std_msgs/msg/String",
            "x\ny",
            "null",
            " lead",
        ] {
            let doc = emit(&Node::map([("k", Node::str(s))]));
            let parsed = yaml_rust2::YamlLoader::load_from_str(&doc).unwrap();
            assert_eq!(get_str(&parsed[0], "k").as_deref(), Some(s), "doc: {doc}");
        }
    }

    /// What the fast path takes as a plain name reads back as itself.
    #[test]
    fn plain_names_read_back_as_themselves() {
        for s in [
            "12_rosbag2_2026_12_07-10_00_01.mcap",
            "/tf_static",
            "1_000",
            "0x1_f",
            "1.5_e3",
            "_",
            "/",
            "1/2",
            "true_",
            "null/",
            ".inf_",
        ] {
            assert!(is_plain_name(s) || s.starts_with('.'), "{s}");
            let parsed = yaml_rust2::YamlLoader::load_from_str(&emit(&Node::str(s))).unwrap();
            assert_eq!(parsed[0].as_str(), Some(s), "{s}");
        }
        for s in ["123", "true", "-x_", ".x_", "a b_", "a:_", "#_"] {
            assert!(!is_plain_name(s), "{s}");
        }
    }

    #[test]
    fn nested_layout_matches_rosbag2() {
        let doc = emit(&Node::map([(
            "a",
            Node::map([
                (
                    "list",
                    Node::Seq(vec![Node::map([
                        ("x", Node::Int(1)),
                        ("y", Node::map([("z", Node::Int(2))])),
                    ])]),
                ),
                ("empty", Node::Seq(vec![])),
                ("none", Node::Null),
            ]),
        )]));
        assert_eq!(
            doc,
            "a:\n  list:\n    - x: 1\n      y:\n        z: 2\n  empty: []\n  none: ~\n"
        );
    }
}
