//! Message definitions per ROS 2 distribution, for bags that store none (SQLite3 bags recorded
//! before Iron have no `message_definitions`): `--typestore humble|iron|jazzy|kilted`, as Python
//! rosbags' typestores.
//!
//! The definitions are generated from rosbags' typestores by `tools/gen_typestores.py` into
//! `typestores/<distro>.msgs` (each type's own `.msg` text after a `MSG: pkg/msg/Type` line) and
//! embedded; [`crate::MessageDefinitionCache::with_typestore`] looks types up there first. Types
//! differ between distributions: `sensor_msgs/msg/Range` gained `variance` in Iron,
//! `rmw_dds_common/msg/Gid` shrank from 24 to 16 bytes.

use std::collections::HashMap;
use std::sync::OnceLock;

/// A ROS 2 distribution whose message definitions are bundled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Typestore {
    /// ROS 2 Humble Hawksbill.
    Humble,
    /// ROS 2 Iron Irwini.
    Iron,
    /// ROS 2 Jazzy Jalisco.
    Jazzy,
    /// ROS 2 Kilted Kaiju.
    Kilted,
}

const TEXTS: [(Typestore, &str, &str); 4] = [
    (
        Typestore::Humble,
        "humble",
        include_str!("../typestores/humble.msgs"),
    ),
    (
        Typestore::Iron,
        "iron",
        include_str!("../typestores/iron.msgs"),
    ),
    (
        Typestore::Jazzy,
        "jazzy",
        include_str!("../typestores/jazzy.msgs"),
    ),
    (
        Typestore::Kilted,
        "kilted",
        include_str!("../typestores/kilted.msgs"),
    ),
];

/// The spellings `--typestore` accepts, for messages.
pub const TYPESTORE_NAMES: &str = "humble, iron, jazzy, kilted";

/// Splits a generated `.msgs` file into `pkg/msg/Type -> own text`.
fn parse(text: &'static str) -> HashMap<&'static str, &'static str> {
    let mut out = HashMap::new();
    let mut rest = text;
    // Every entry starts at a line `MSG: name`; the text before the first is a comment.
    while let Some(at) = rest
        .find("MSG: ")
        .filter(|&i| i == 0 || rest[..i].ends_with('\n'))
    {
        let after = &rest[at + 5..];
        let (name, body) = after.split_once('\n').unwrap_or((after, ""));
        // An empty message (std_msgs/msg/Empty) is followed directly by the next entry.
        let end = match body.starts_with("MSG: ") {
            true => 0,
            false => body.find("\nMSG: ").map_or(body.len(), |i| i + 1),
        };
        out.insert(name.trim(), &body[..end]);
        rest = &body[end..];
    }
    out
}

impl Typestore {
    /// Every bundled distribution.
    pub const ALL: [Self; 4] = [Self::Humble, Self::Iron, Self::Jazzy, Self::Kilted];

    /// The distribution's name: `humble`, `iron`, `jazzy`, `kilted`.
    pub fn as_str(self) -> &'static str {
        TEXTS[self as usize].1
    }

    /// Parses a distribution's name (as `ROS_DISTRO` spells it).
    pub fn parse(name: &str) -> Result<Self, UnknownTypestore> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == name)
            .ok_or_else(|| UnknownTypestore(name.to_owned()))
    }

    fn table(self) -> &'static HashMap<&'static str, &'static str> {
        static TABLES: [OnceLock<HashMap<&str, &str>>; 4] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        TABLES[self as usize].get_or_init(|| parse(TEXTS[self as usize].2))
    }

    /// The own `.msg` text (without dependencies) of `pkg/msg/Type` in this distribution.
    pub fn text(self, type_name: &str) -> Option<&'static str> {
        self.table().get(type_name).copied()
    }

    /// The message types of this distribution, sorted.
    pub fn types(self) -> Vec<&'static str> {
        let mut names: Vec<&str> = self.table().keys().copied().collect();
        names.sort_unstable();
        names
    }
}

/// A distribution name with no bundled typestore.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown typestore '{0}' (bundled: {TYPESTORE_NAMES})")]
pub struct UnknownTypestore(pub String);

impl std::fmt::Display for Typestore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Typestore {
    type Err = UnknownTypestore;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_distribution_parses_and_names_round_trip() {
        for store in Typestore::ALL {
            assert_eq!(Typestore::parse(store.as_str()).unwrap(), store);
            let types = store.types();
            let entries = TEXTS[store as usize].2.matches("\nMSG: ").count();
            assert_eq!(types.len(), entries, "{store}");
            assert!(types.len() >= 150, "{store}: {}", types.len());
            assert_eq!(store.text("std_msgs/msg/Empty"), Some(""));
            assert_eq!(
                store.text("std_msgs/msg/Header"),
                Some("builtin_interfaces/Time stamp\nstring frame_id\n")
            );
        }
        assert!(Typestore::parse("rolling").is_err());
    }

    #[test]
    fn range_differs_between_humble_and_iron() {
        let humble = Typestore::Humble.text("sensor_msgs/msg/Range").unwrap();
        let iron = Typestore::Iron.text("sensor_msgs/msg/Range").unwrap();
        assert!(!humble.contains("variance"), "{humble}");
        assert!(
            iron.ends_with("float32 range\nfloat32 variance\n"),
            "{iron}"
        );
        assert!(Typestore::Humble
            .text("geometry_msgs/msg/VelocityStamped")
            .is_none());
        assert!(Typestore::Jazzy
            .text("geometry_msgs/msg/VelocityStamped")
            .is_some());
    }
}
