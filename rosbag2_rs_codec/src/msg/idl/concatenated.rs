//! `ros2idl` definitions as rosbag2 stores them (`LocalMessageDefinitionSource`): each `.idl`
//! after a separator line and `IDL: pkg/msg/Type`, the type's own first, then what it
//! `#include`s, depth first. A service's definition mixes forms: `SRV: pkg/srv/Name` with the
//! `.srv` text, `MSG: pkg/Type` with `.msg` text for dependencies that have one (an empty one
//! for those that do not), and `IDL:` sections for the rest.

use super::parse_idl;
use crate::msg::definition::{
    normalize_name, parse_message, ArrayKind, BaseType, Dialect, Field, MessageType, Registry,
};
use crate::msg::error::CodecError;

/// Shortest line of `=` that separates sections (as for `ros2msg`).
const SEPARATOR_MIN: usize = 3;

/// How a section's text is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Idl,
    Msg,
    Srv,
}

/// One section: its form, the type its header names and its text.
struct Section {
    form: Form,
    name: String,
    text: String,
}

fn is_separator(line: &str) -> bool {
    line.len() >= SEPARATOR_MIN && line.chars().all(|c| c == '=')
}

fn header(line: &str) -> Option<(Form, &str)> {
    [
        ("IDL:", Form::Idl),
        ("MSG:", Form::Msg),
        ("SRV:", Form::Srv),
    ]
    .into_iter()
    .find_map(|(prefix, form)| line.strip_prefix(prefix).map(|n| (form, n.trim())))
}

/// Splits a `ros2idl` definition into its sections. Text before the first separator, if any,
/// is IDL of `root`.
fn sections(root: &str, text: &str) -> Result<Vec<Section>, CodecError> {
    let mut out = Vec::new();
    let mut current = Some(Section {
        form: Form::Idl,
        name: root.to_string(),
        text: String::new(),
    });
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if is_separator(t) {
            out.extend(current.take());
            continue;
        }
        match &mut current {
            Some(section) => {
                section.text.push_str(line);
                section.text.push('\n');
            }
            None if t.is_empty() => {}
            None => {
                let (form, name) = header(t).ok_or_else(|| CodecError::Definition {
                    type_name: root.to_string(),
                    line: i + 1,
                    reason: format!(
                        "expected 'IDL: <type>', 'MSG: <type>' or 'SRV: <type>' after a \
                         separator, found '{}'",
                        t.chars().take(80).collect::<String>()
                    ),
                })?;
                current = Some(Section {
                    form,
                    name: name.to_string(),
                    text: String::new(),
                });
            }
        }
    }
    out.extend(current);
    if out.first().is_some_and(|s| s.text.trim().is_empty()) {
        out.remove(0);
    }
    Ok(out)
}

/// A `.srv` text's request and response as messages `pkg/srv/Name_Request`, `_Response`.
fn service_messages(name: &str, text: &str) -> Result<[MessageType; 2], CodecError> {
    let parts: Vec<&str> = name.split('/').collect();
    let (package, service) = match parts.as_slice() {
        [p, s] | [p, "srv", s] => (*p, *s),
        _ => {
            return Err(CodecError::Definition {
                type_name: name.to_string(),
                line: 0,
                reason: "a service section's name is not 'pkg/srv/Name'".into(),
            })
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let split = lines
        .iter()
        .position(|l| l.trim() == "---")
        .ok_or_else(|| CodecError::Definition {
            type_name: name.to_string(),
            line: 0,
            reason: "service text without a '---' line".into(),
        })?;
    let join = |lines: &[&str]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let request = format!("{package}/srv/{service}_Request");
    let response = format!("{package}/srv/{service}_Response");
    Ok([
        parse_message(&request, &join(&lines[..split]), Dialect::Ros2)?,
        parse_message(&response, &join(&lines[split + 1..]), Dialect::Ros2)?,
    ])
}

/// The `_Event` message rosidl generates for a service, when `root` is one and the registry
/// holds its request and response but not the event (rosbag2 stores the service's definition
/// for a service event topic). Its `service_msgs/ServiceEventInfo` comes from the bundled
/// definitions when the text has none.
fn add_service_event(reg: &mut Registry, root: &str) -> Result<(), CodecError> {
    let parts: Vec<&str> = root.split('/').collect();
    let [package, "srv", name] = parts.as_slice() else {
        return Ok(());
    };
    let Some(base) = name.strip_suffix("_Event") else {
        return Ok(());
    };
    let request = format!("{package}/srv/{base}_Request");
    let response = format!("{package}/srv/{base}_Response");
    if reg.index_of(root).is_some()
        || reg.index_of(&request).is_none()
        || reg.index_of(&response).is_none()
    {
        return Ok(());
    }
    let field = |name: &str, ty: String, array| Field {
        name: name.into(),
        base: BaseType::Message(ty),
        array,
        default: None,
        type_index: usize::MAX,
    };
    let one = ArrayKind::Sequence { bound: Some(1) };
    reg.insert(MessageType {
        name: root.to_string(),
        fields: vec![
            field("info", INFO.into(), ArrayKind::Single),
            field("request", request, one),
            field("response", response, one),
        ],
        constants: Vec::new(),
    });
    if reg.index_of(INFO).is_none() {
        let info = crate::MessageDefinitionCache::with_prefixes(Vec::new())
            .definition("service_msgs/msg/ServiceEventInfo");
        reg.parse_concatenated(INFO, &info.encoded_message_definition, Dialect::Ros2)?;
    }
    Ok(())
}

const INFO: &str = "service_msgs/ServiceEventInfo";

impl Registry {
    /// Parses a `ros2idl` definition as rosbag2 stores it: `.idl` texts after separator lines
    /// and `IDL: pkg/msg/Type`, the first being `root`'s (or IDL text before any separator);
    /// also the `SRV:` (`.srv` text, read as `pkg/srv/Name_Request` and `_Response`) and `MSG:`
    /// (`.msg` text) sections rosbag2 mixes in for a service. IDL sections come first (so that
    /// the empty `MSG:` section rosbag2 leaves for a type it found only as `.idl` does not hide
    /// it); types already present are kept. For a service event type `pkg/srv/Name_Event`,
    /// the event message is built from the request and response. Links the registry; `root`
    /// must be defined.
    pub fn parse_concatenated_idl(&mut self, root: &str, text: &str) -> Result<(), CodecError> {
        let sections = sections(root, text)?;
        for s in sections.iter().filter(|s| s.form == Form::Idl) {
            for ty in parse_idl(&s.name, &s.text)? {
                if self.index_of(&ty.name).is_none() {
                    self.insert(ty);
                }
            }
        }
        for s in sections.iter().filter(|s| s.form != Form::Idl) {
            let types = match s.form {
                Form::Srv => service_messages(&s.name, &s.text)?.into(),
                _ => vec![parse_message(
                    &normalize_name(&s.name),
                    &s.text,
                    Dialect::Ros2,
                )?],
            };
            for ty in types {
                if self.index_of(&ty.name).is_none() {
                    self.insert(ty);
                }
            }
        }
        add_service_event(self, root)?;
        if self.index_of(root).is_none() {
            return Err(CodecError::Missing(root.to_string()));
        }
        self.link()
    }
}
