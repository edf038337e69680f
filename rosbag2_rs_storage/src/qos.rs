//! QoS profiles as rosbag2 stores them: a YAML list in `metadata.yaml` (version 9), and the same
//! list serialized to a string in MCAP channel metadata and the SQLite `topics` table.
//!
//! Older bags wrote the policies as integers (rmw enum values); both forms are read.

use yaml_rust2::Yaml;

use crate::yaml::{self, Node};

/// Why a QoS profile, profile list or override file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum QosError {
    /// A profile that is not a YAML mapping.
    #[error("a QoS profile must be a mapping")]
    NotMapping,
    /// A policy or duration field whose value is not one of its kind.
    #[error("invalid QoS {field}: {value}")]
    InvalidField {
        /// The field.
        field: &'static str,
        /// Its value as parsed (YAML debug form).
        value: String,
    },
    /// `offered_qos_profiles` that is neither a list nor empty.
    #[error("offered_qos_profiles must be a list, found {0}")]
    NotList(String),
    /// Text that is not YAML.
    #[error("QoS YAML: {0}")]
    Yaml(#[from] crate::limits::YamlLoadError),
    /// An override file that is not a mapping of topic names.
    #[error("expected a mapping of topic names, found {0}")]
    OverridesNotMapping(String),
    /// An override file keyed by something else than a topic name.
    #[error("topic names must be strings, found {0}")]
    TopicNotString(String),
    /// The profile of one topic of an override file.
    #[error("{topic}: {source}")]
    Topic {
        /// The topic, as written in the file.
        topic: String,
        /// What is wrong with its profile.
        #[source]
        source: Box<QosError>,
    },
}

macro_rules! policy_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = ($value:expr, $text:expr)),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl $name {
            /// The rmw enum value.
            pub fn as_int(self) -> i64 {
                match self { $(Self::$variant => $value,)+ }
            }

            /// The name rosbag2 writes in metadata version 9.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text,)+ }
            }

            /// Parses a rmw enum value or a rosbag2 name.
            pub fn parse(node: &Yaml) -> Option<Self> {
                match node {
                    Yaml::Integer(i) => match *i { $($value => Some(Self::$variant),)+ _ => None },
                    Yaml::String(s) => match s.as_str() {
                        $($text => Some(Self::$variant),)+
                        other => other.parse::<i64>().ok().and_then(|i| Self::parse(&Yaml::Integer(i))),
                    },
                    _ => None,
                }
            }
        }
    };
}

policy_enum!(
    /// How many samples are kept.
    History {
        /// Use the middleware's default.
        #[default]
        SystemDefault = (0, "system_default"),
        /// Keep the last `depth` samples.
        KeepLast = (1, "keep_last"),
        /// Keep all samples.
        KeepAll = (2, "keep_all"),
        /// Not known.
        Unknown = (3, "unknown"),
    }
);

policy_enum!(
    /// Delivery guarantee.
    Reliability {
        /// Use the middleware's default.
        #[default]
        SystemDefault = (0, "system_default"),
        /// Retransmit until delivered.
        Reliable = (1, "reliable"),
        /// Send once.
        BestEffort = (2, "best_effort"),
        /// Not known.
        Unknown = (3, "unknown"),
        /// Match the publishers.
        BestAvailable = (4, "best_available"),
    }
);

policy_enum!(
    /// Whether late joiners receive earlier samples.
    Durability {
        /// Use the middleware's default.
        #[default]
        SystemDefault = (0, "system_default"),
        /// Late joiners receive the last samples (latched).
        TransientLocal = (1, "transient_local"),
        /// Only samples published after joining.
        Volatile = (2, "volatile"),
        /// Not known.
        Unknown = (3, "unknown"),
        /// Match the publishers.
        BestAvailable = (4, "best_available"),
    }
);

policy_enum!(
    /// How liveliness is asserted.
    Liveliness {
        /// Use the middleware's default.
        #[default]
        SystemDefault = (0, "system_default"),
        /// Asserted by the middleware.
        Automatic = (1, "automatic"),
        /// Deprecated, manual by node.
        ManualByNode = (2, "manual_by_node"),
        /// Asserted by publishing.
        ManualByTopic = (3, "manual_by_topic"),
        /// Not known.
        Unknown = (4, "unknown"),
        /// Match the publishers.
        BestAvailable = (5, "best_available"),
    }
);

/// A QoS duration as `sec` + `nsec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QosDuration {
    /// Whole seconds.
    pub sec: u64,
    /// Nanoseconds.
    pub nsec: u64,
}

impl QosDuration {
    /// rmw's "infinite" duration as rosbag2 writes it.
    pub const INFINITE: Self = Self {
        sec: 9_223_372_036,
        nsec: 854_775_807,
    };
    /// Zero, which rmw treats as "use the default".
    pub const ZERO: Self = Self { sec: 0, nsec: 0 };

    /// Total nanoseconds, saturating.
    pub fn as_nanos(self) -> u64 {
        self.sec
            .saturating_mul(1_000_000_000)
            .saturating_add(self.nsec)
    }

    /// True for zero and for values at or beyond rmw's infinite, which mean "no limit".
    pub fn is_unlimited(self) -> bool {
        self == Self::ZERO
            || self.as_nanos() >= Self::INFINITE.as_nanos()
            || self.sec >= i32::MAX as u64
    }

    fn to_node(self) -> Node {
        Node::map([
            ("sec", Node::Int(self.sec.into())),
            ("nsec", Node::Int(self.nsec.into())),
        ])
    }

    fn parse(node: &Yaml) -> Option<Self> {
        Some(Self {
            sec: yaml::get_u64(node, "sec")?,
            nsec: yaml::get_u64(node, "nsec")?,
        })
    }
}

/// One offered QoS profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QosProfile {
    /// History policy.
    pub history: History,
    /// History depth (for keep-last).
    pub depth: u64,
    /// Reliability policy.
    pub reliability: Reliability,
    /// Durability policy.
    pub durability: Durability,
    /// Deadline period.
    pub deadline: QosDuration,
    /// Sample lifespan.
    pub lifespan: QosDuration,
    /// Liveliness policy.
    pub liveliness: Liveliness,
    /// Liveliness lease duration.
    pub liveliness_lease_duration: QosDuration,
    /// Whether ROS namespace conventions are bypassed.
    pub avoid_ros_namespace_conventions: bool,
}

impl Default for QosProfile {
    /// rclcpp's default: keep last 10, reliable, volatile, no deadline/lifespan, automatic.
    fn default() -> Self {
        Self {
            history: History::KeepLast,
            depth: 10,
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
            deadline: QosDuration::INFINITE,
            lifespan: QosDuration::INFINITE,
            liveliness: Liveliness::Automatic,
            liveliness_lease_duration: QosDuration::INFINITE,
            avoid_ros_namespace_conventions: false,
        }
    }
}

impl QosProfile {
    /// The YAML mapping rosbag2 writes for one profile (version 9 names).
    pub fn to_node(&self) -> Node {
        Node::map([
            ("history", Node::str(self.history.as_str())),
            ("depth", Node::Int(self.depth.into())),
            ("reliability", Node::str(self.reliability.as_str())),
            ("durability", Node::str(self.durability.as_str())),
            ("deadline", self.deadline.to_node()),
            ("lifespan", self.lifespan.to_node()),
            ("liveliness", Node::str(self.liveliness.as_str())),
            (
                "liveliness_lease_duration",
                self.liveliness_lease_duration.to_node(),
            ),
            (
                "avoid_ros_namespace_conventions",
                Node::Bool(self.avoid_ros_namespace_conventions),
            ),
        ])
    }

    /// Parses one profile mapping, accepting names or integers for the policies; missing fields
    /// take rclcpp's defaults so hand-written override files can be partial.
    pub fn from_yaml(node: &Yaml) -> Result<Self, QosError> {
        if node.as_hash().is_none() {
            return Err(QosError::NotMapping);
        }
        let mut qos = Self::default();
        let bad = |field: &'static str| QosError::InvalidField {
            field,
            value: format!("{:?}", node[field]),
        };
        macro_rules! field {
            ($name:literal, $parse:expr, $slot:expr) => {
                if !node[$name].is_badvalue() {
                    $slot = $parse(&node[$name]).ok_or_else(|| bad($name))?;
                }
            };
        }
        field!("history", History::parse, qos.history);
        field!("depth", yaml::as_u64, qos.depth);
        field!("reliability", Reliability::parse, qos.reliability);
        field!("durability", Durability::parse, qos.durability);
        field!("deadline", QosDuration::parse, qos.deadline);
        field!("lifespan", QosDuration::parse, qos.lifespan);
        field!("liveliness", Liveliness::parse, qos.liveliness);
        field!(
            "liveliness_lease_duration",
            QosDuration::parse,
            qos.liveliness_lease_duration
        );
        field!(
            "avoid_ros_namespace_conventions",
            |n: &Yaml| n.as_bool(),
            qos.avoid_ros_namespace_conventions
        );
        Ok(qos)
    }
}

/// The YAML sequence node for a list of profiles.
pub fn profiles_to_node(profiles: &[QosProfile]) -> Node {
    Node::Seq(profiles.iter().map(QosProfile::to_node).collect())
}

/// Serializes profiles to the string stored in MCAP channel metadata and SQLite (`""` for none).
pub fn serialize_profiles(profiles: &[QosProfile]) -> String {
    if profiles.is_empty() {
        return String::new();
    }
    yaml::emit(&profiles_to_node(profiles))
        .trim_end()
        .to_string()
}

/// Parses a profile list from a YAML node: a sequence of mappings, or (metadata versions 4 to 8)
/// a string holding such a sequence.
pub fn profiles_from_yaml(node: &Yaml) -> Result<Vec<QosProfile>, QosError> {
    match node {
        Yaml::String(text) => parse_profiles(text),
        other => profiles_from_list(other),
    }
}

/// The list itself; a string here is not unwrapped again (a damaged file could nest them
/// without end).
fn profiles_from_list(node: &Yaml) -> Result<Vec<QosProfile>, QosError> {
    match node {
        Yaml::Array(items) => items.iter().map(QosProfile::from_yaml).collect(),
        Yaml::Null | Yaml::BadValue => Ok(Vec::new()),
        other => Err(QosError::NotList(format!("{other:?}"))),
    }
}

/// Parses the string form of a profile list (as stored in MCAP and SQLite).
pub fn parse_profiles(text: &str) -> Result<Vec<QosProfile>, QosError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let docs = crate::limits::load_yaml(text)?;
    match docs.first() {
        None => Ok(Vec::new()),
        Some(doc) => profiles_from_list(doc),
    }
}

/// Parses a QoS override file (`--qos-profile-overrides-path`): a mapping from topic name to a
/// (possibly partial) profile. Topic names without a leading `/` are made absolute.
pub fn parse_overrides(
    text: &str,
) -> Result<std::collections::BTreeMap<String, QosProfile>, QosError> {
    let docs = crate::limits::load_yaml(text)?;
    let mut out = std::collections::BTreeMap::new();
    let Some(doc) = docs.first() else {
        return Ok(out);
    };
    let map = match doc {
        Yaml::Hash(map) => map,
        Yaml::Null => return Ok(out),
        other => return Err(QosError::OverridesNotMapping(format!("{other:?}"))),
    };
    for (topic, profile) in map {
        let topic = topic
            .as_str()
            .ok_or_else(|| QosError::TopicNotString(format!("{topic:?}")))?;
        let profile = QosProfile::from_yaml(profile).map_err(|e| QosError::Topic {
            topic: topic.to_string(),
            source: Box::new(e),
        })?;
        let topic = if topic.starts_with('/') {
            topic.to_string()
        } else {
            format!("/{topic}")
        };
        out.insert(topic, profile);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_form_round_trips() {
        let p = QosProfile {
            durability: Durability::TransientLocal,
            reliability: Reliability::BestEffort,
            depth: 1,
            ..QosProfile::default()
        };
        let text = serialize_profiles(&[p, QosProfile::default()]);
        assert!(
            text.starts_with("- history: keep_last\n  depth: 1\n"),
            "{text}"
        );
        assert_eq!(
            parse_profiles(&text).unwrap(),
            vec![p, QosProfile::default()]
        );
    }

    #[test]
    fn reads_integer_policies_of_old_bags() {
        let text = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n  lifespan:\n    sec: 0\n    nsec: 0\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  avoid_ros_namespace_conventions: false";
        let p = &parse_profiles(text).unwrap()[0];
        assert_eq!(p.history, History::Unknown);
        assert_eq!(p.durability, Durability::Volatile);
        assert_eq!(p.deadline.sec, 2147483647);
        assert!(p.deadline.is_unlimited());
    }

    #[test]
    fn parses_override_files() {
        let text = "/chatter:\n  reliability: best_effort\n  depth: 3\nscan:\n  durability: transient_local\n  deadline:\n    sec: 1\n    nsec: 5\n";
        let map = parse_overrides(text).unwrap();
        assert_eq!(map["/chatter"].reliability, Reliability::BestEffort);
        assert_eq!(map["/chatter"].depth, 3);
        assert_eq!(map["/scan"].durability, Durability::TransientLocal);
        assert_eq!(map["/scan"].deadline, QosDuration { sec: 1, nsec: 5 });
        assert!(parse_overrides("").unwrap().is_empty());
        assert!(parse_overrides("- a\n").is_err());
        let e = parse_overrides("/x:\n  reliability: sometimes\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/x: invalid QoS reliability: String(\"sometimes\")"
        );
        assert!(matches!(
            e,
            QosError::Topic { source, .. }
                if matches!(*source, QosError::InvalidField { field: "reliability", .. })
        ));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_profiles("- history: sometimes").is_err());
        assert!(parse_profiles("[").is_err());
        // A plain scalar parses to itself: it must be an error, not endless unwrapping (a
        // corrupted MCAP channel overflowed the stack this way).
        assert!(parse_profiles("abc").is_err());
        assert!(profiles_from_yaml(&Yaml::String("abc".into())).is_err());
    }
}
