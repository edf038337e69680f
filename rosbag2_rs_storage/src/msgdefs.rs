//! Message definitions for MCAP schemas and SQLite `message_definitions`: the full `.msg` text of
//! a type with its dependencies appended the way rosbag2 and Foxglove expect.
//!
//! Definitions come from `AMENT_PREFIX_PATH` (`share/<pkg>/msg/<Type>.msg`) when a ROS 2
//! environment is present, otherwise from a bundled set of the common interfaces.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use crate::message::MessageDefinition;

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled_msgs.rs"));
}

const SEPARATOR: &str =
    "================================================================================";
const PRIMITIVES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "string", "wstring",
];
const MAX_DEPTH: usize = 50;

/// Looks up and caches message definitions.
#[derive(Debug, Default)]
pub struct MessageDefinitionCache {
    ament_prefixes: Vec<PathBuf>,
    texts: HashMap<String, Option<String>>,
}

/// Splits `pkg/Type` or `pkg/msg/Type` into `(pkg, Type)`.
fn split_type(name: &str) -> Option<(&str, &str)> {
    let mut parts = name.split('/');
    let (pkg, mid, last) = (parts.next()?, parts.next()?, parts.next());
    let ty = match last {
        Some(ty) if mid == "msg" && parts.next().is_none() => ty,
        None => mid,
        _ => return None,
    };
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ident(pkg) && ident(ty)).then_some((pkg, ty))
}

/// Field types a `.msg` text depends on, as `pkg/Type`, sorted.
fn dependencies(text: &str, package: &str) -> BTreeSet<String> {
    let mut deps = BTreeSet::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(ty) = line.split_whitespace().next() else {
            continue;
        };
        if line.split_whitespace().nth(1).is_none() {
            continue;
        }
        let base = ty
            .split('[')
            .next()
            .unwrap_or(ty)
            .split("<=")
            .next()
            .unwrap_or(ty);
        if PRIMITIVES.contains(&base) {
            continue;
        }
        match split_type(base) {
            Some((pkg, t)) => deps.insert(format!("{pkg}/{t}")),
            None if !base.contains('/') => deps.insert(format!("{package}/{base}")),
            None => false,
        };
    }
    deps
}

impl MessageDefinitionCache {
    /// A cache that searches `AMENT_PREFIX_PATH`, then the bundled definitions.
    pub fn new() -> Self {
        let ament_prefixes = std::env::var_os("AMENT_PREFIX_PATH")
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default();
        Self::with_prefixes(ament_prefixes)
    }

    /// A cache that searches the given install prefixes, then the bundled definitions.
    pub fn with_prefixes(ament_prefixes: Vec<PathBuf>) -> Self {
        Self {
            ament_prefixes,
            texts: HashMap::new(),
        }
    }

    /// The `.msg` text of one type (without dependencies), if known.
    pub fn own_text(&mut self, type_name: &str) -> Option<String> {
        let (pkg, ty) = split_type(type_name)?;
        let key = format!("{pkg}/msg/{ty}");
        if let Some(cached) = self.texts.get(&key) {
            return cached.clone();
        }
        let from_ament = self.ament_prefixes.iter().find_map(|prefix| {
            std::fs::read_to_string(
                prefix
                    .join("share")
                    .join(pkg)
                    .join("msg")
                    .join(format!("{ty}.msg")),
            )
            .ok()
        });
        let text = from_ament.or_else(|| {
            bundled::BUNDLED
                .binary_search_by(|(name, _)| (*name).cmp(key.as_str()))
                .ok()
                .map(|i| bundled::BUNDLED[i].1.to_string())
        });
        self.texts.insert(key, text.clone());
        text
    }

    /// The full definition of `type_name` for a bag: encoding `ros2msg` with dependencies
    /// appended, or an empty definition (with a warning) when the type or one of its
    /// dependencies is unknown.
    pub fn definition(&mut self, type_name: &str) -> MessageDefinition {
        match self.full_text(type_name) {
            Ok(text) => MessageDefinition {
                topic_type: type_name.to_string(),
                encoding: "ros2msg".into(),
                encoded_message_definition: text,
                type_description_hash: String::new(),
            },
            Err(missing) => {
                log::warn!("no message definition for '{missing}' (needed by '{type_name}'): recording '{type_name}' with an empty definition");
                MessageDefinition {
                    topic_type: type_name.to_string(),
                    ..Default::default()
                }
            }
        }
    }

    fn full_text(&mut self, type_name: &str) -> Result<String, String> {
        let mut seen = HashSet::new();
        let mut out = String::new();
        self.append(type_name, &mut seen, &mut out, MAX_DEPTH)?;
        Ok(out)
    }

    fn append(
        &mut self,
        type_name: &str,
        seen: &mut HashSet<String>,
        out: &mut String,
        depth: usize,
    ) -> Result<(), String> {
        if depth == 0 {
            return Err(format!("{type_name} (definition nested too deeply)"));
        }
        let text = self
            .own_text(type_name)
            .ok_or_else(|| type_name.to_string())?;
        let package = split_type(type_name)
            .map(|(p, _)| p.to_string())
            .unwrap_or_default();
        out.push_str(&text);
        for dep in dependencies(&text, &package) {
            if seen.insert(dep.clone()) {
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(SEPARATOR);
                out.push_str("\nMSG: ");
                out.push_str(&dep);
                out.push('\n');
                self.append(&dep, seen, out, depth - 1)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pose_stamped_has_all_dependencies_once() {
        let def = MessageDefinitionCache::with_prefixes(vec![])
            .definition("geometry_msgs/msg/PoseStamped");
        assert_eq!(def.encoding, "ros2msg");
        let text = def.encoded_message_definition;
        assert!(
            text.starts_with("std_msgs/Header header\ngeometry_msgs/Pose pose\n"),
            "{text}"
        );
        for dep in [
            "std_msgs/Header",
            "builtin_interfaces/Time",
            "geometry_msgs/Pose",
            "geometry_msgs/Point",
            "geometry_msgs/Quaternion",
        ] {
            assert_eq!(
                text.matches(&format!("MSG: {dep}\n")).count(),
                1,
                "{dep} in {text}"
            );
        }
    }

    #[test]
    fn ament_prefix_overrides_bundled() {
        let dir = tempfile::tempdir().unwrap();
        let msg = dir.path().join("share/my_pkg/msg");
        std::fs::create_dir_all(&msg).unwrap();
        std::fs::write(
            msg.join("Thing.msg"),
            "# comment\nInner inner  # same package\nstring name\n",
        )
        .unwrap();
        std::fs::write(msg.join("Inner.msg"), "int32 x\n").unwrap();
        let def = MessageDefinitionCache::with_prefixes(vec![dir.path().into()])
            .definition("my_pkg/msg/Thing");
        assert!(
            def.encoded_message_definition
                .ends_with("MSG: my_pkg/Inner\nint32 x\n"),
            "{}",
            def.encoded_message_definition
        );
    }

    #[test]
    fn unknown_type_gives_empty_definition() {
        let def = MessageDefinitionCache::with_prefixes(vec![]).definition("nope_msgs/msg/Nothing");
        assert_eq!(
            (
                def.encoding.as_str(),
                def.encoded_message_definition.as_str()
            ),
            ("", "")
        );
        assert_eq!(def.topic_type, "nope_msgs/msg/Nothing");
    }

    #[test]
    fn dependency_parsing_handles_arrays_bounds_and_constants() {
        let deps = dependencies(
            "uint8 A=1\nstring<=5 s\nPoint[<=3] pts\ngeometry_msgs/Vector3[] v\n# x/Y z\n",
            "geometry_msgs",
        );
        assert_eq!(
            deps.into_iter().collect::<Vec<_>>(),
            vec!["geometry_msgs/Point", "geometry_msgs/Vector3"]
        );
    }
}
