//! Message definitions for MCAP schemas and SQLite `message_definitions`: the full `.msg` text of
//! a type with its dependencies appended the way rosbag2 and Foxglove expect.
//!
//! Definitions come from `AMENT_PREFIX_PATH` (`share/<pkg>/msg/<Type>.msg`,
//! `share/<pkg>/srv/<Service>.srv`) when a ROS 2 environment is present, otherwise from a bundled
//! set of the common interfaces. A service's request, response and event messages
//! (`pkg/srv/Name_Request`, `_Response`, `_Event`, the types of recorded `_service_event`
//! topics) are described as the messages they are on the wire, nested types spelled
//! `pkg/Name_Request`, so that a generic parser (rosbags, our codec) decodes them; rosbag2 stores
//! the `.srv` text instead, which no message parser reads.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use crate::MessageDefinition;

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

/// Why the full definition of a type cannot be assembled: its message names the type at fault.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Incomplete {
    /// No definition text for this type (the one asked for or a dependency).
    #[error("{0}")]
    Missing(String),
    /// Dependencies nested deeper than [`MAX_DEPTH`] (a cycle): the type where it stopped.
    #[error("{0} (definition nested too deeply)")]
    TooDeep(String),
}

/// Looks up and caches message definitions.
#[derive(Debug, Default)]
pub struct MessageDefinitionCache {
    ament_prefixes: Vec<PathBuf>,
    /// Interface file texts by `pkg/msg/Type` or `pkg/srv/Service`.
    texts: HashMap<String, Option<String>>,
    /// RIHS01 hashes computed so far, by type name as asked.
    pub(crate) hashes: HashMap<String, String>,
    /// The distribution whose definitions come first (`--typestore`), if any.
    typestore: Option<crate::typestore::Typestore>,
    /// Types already warned about as missing from a bag.
    warned: HashSet<String>,
}

/// The message of a service a type name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServicePart {
    Request,
    Response,
    /// `service_msgs/ServiceEventInfo` and at most one request and one response.
    Event,
}

impl ServicePart {
    const ALL: [Self; 3] = [Self::Request, Self::Response, Self::Event];

    /// What follows the service name in the message's type name.
    fn suffix(self) -> &'static str {
        match self {
            Self::Request => "_Request",
            Self::Response => "_Response",
            Self::Event => "_Event",
        }
    }
}

/// The messages rosidl generates for an action `pkg/action/Name`, by what follows `Name` in
/// their type names, and their `.msg` text (`{goal}` and the like stand for the sections of the
/// `.action` file, spelled `pkg/Name_Goal`): the goal, result and feedback sections, the
/// `send_goal` and `get_result` services' messages, and the feedback topic's message.
const ACTION_PARTS: &[(&str, &str)] = &[
    ("_Goal", "{goal_text}"),
    ("_Result", "{result_text}"),
    ("_Feedback", "{feedback_text}"),
    (
        "_SendGoal_Request",
        "unique_identifier_msgs/UUID goal_id\n{goal} goal\n",
    ),
    (
        "_SendGoal_Response",
        "bool accepted\nbuiltin_interfaces/Time stamp\n",
    ),
    (
        "_SendGoal_Event",
        "service_msgs/ServiceEventInfo info\n{base}_SendGoal_Request[<=1] request\n\
         {base}_SendGoal_Response[<=1] response\n",
    ),
    (
        "_GetResult_Request",
        "unique_identifier_msgs/UUID goal_id\n",
    ),
    ("_GetResult_Response", "int8 status\n{result} result\n"),
    (
        "_GetResult_Event",
        "service_msgs/ServiceEventInfo info\n{base}_GetResult_Request[<=1] request\n\
         {base}_GetResult_Response[<=1] response\n",
    ),
    (
        "_FeedbackMessage",
        "unique_identifier_msgs/UUID goal_id\n{feedback} feedback\n",
    ),
];

/// Where a type name says its definition is: `pkg/Type`, `pkg/msg/Type`, `pkg/srv/...` or
/// `pkg/action/...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `pkg/Type` (as dependencies are spelled): a message, or a message of a service or action.
    Unspecified,
    Msg,
    Srv,
    Action,
}

/// A message type name, parsed: `pkg/Type`, `pkg/msg/Type`, `pkg/srv/Service_Part` or
/// `pkg/action/Action_Part`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TypeName<'a> {
    package: &'a str,
    name: &'a str,
    kind: Kind,
}

impl<'a> TypeName<'a> {
    fn parse(name: &'a str) -> Option<Self> {
        let ident =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let mut parts = name.split('/');
        let (package, mid, last) = (parts.next()?, parts.next()?, parts.next());
        let (name, kind) = match (mid, last) {
            (name, None) => (name, Kind::Unspecified),
            ("msg", Some(name)) => (name, Kind::Msg),
            ("srv", Some(name)) => (name, Kind::Srv),
            ("action", Some(name)) => (name, Kind::Action),
            _ => return None,
        };
        (parts.next().is_none() && ident(package) && ident(name)).then_some(Self {
            package,
            name,
            kind,
        })
    }

    /// The service and part a `Service_Request`, `_Response` or `_Event` name stands for.
    fn service(self) -> Option<(&'a str, ServicePart)> {
        if !matches!(self.kind, Kind::Unspecified | Kind::Srv) {
            return None;
        }
        ServicePart::ALL
            .into_iter()
            .find_map(|part| Some((self.name.strip_suffix(part.suffix())?, part)))
            .filter(|(service, _)| !service.is_empty())
    }

    /// The action and the template of its part (see [`ACTION_PARTS`]) an `Action_Goal`,
    /// `Action_SendGoal_Request`, ... name stands for.
    fn action(self) -> Option<(&'a str, &'static str)> {
        if !matches!(self.kind, Kind::Unspecified | Kind::Action) {
            return None;
        }
        ACTION_PARTS
            .iter()
            .find_map(|(suffix, template)| Some((self.name.strip_suffix(suffix)?, *template)))
            .filter(|(action, _)| !action.is_empty())
    }

    /// The name in dependency lists and `MSG:` headers: `pkg/Type`, also for a service's or an
    /// action's messages (the spelling generic `.msg` parsers such as rosbags' accept).
    fn canonical(self) -> String {
        format!("{}/{}", self.package, self.name)
    }
}

/// Field types a `.msg` text depends on, as canonical type names, sorted.
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
        // A type without a package is a message of this package.
        let qualified = if base.contains('/') {
            base.to_string()
        } else {
            format!("{package}/{base}")
        };
        if let Some(name) = TypeName::parse(&qualified) {
            deps.insert(name.canonical());
        }
    }
    deps
}

/// Section `index` of an interface file whose sections are split by `---` lines (a `.srv`:
/// request, response; an `.action`: goal, result, feedback).
fn section(text: &str, index: usize) -> String {
    let mut sections = vec![String::new()];
    for line in text.lines() {
        if line.trim() == "---" {
            sections.push(String::new());
        } else if let Some(current) = sections.last_mut() {
            current.push_str(line);
            current.push('\n');
        }
    }
    sections.into_iter().nth(index).unwrap_or_default()
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
            hashes: HashMap::new(),
            typestore: None,
            warned: HashSet::new(),
        }
    }

    /// This cache with the messages of `typestore` (a ROS 2 distribution, see
    /// [`crate::Typestore`]) looked up before install prefixes and the bundled set; services
    /// still come from those.
    pub fn with_typestore(mut self, typestore: Option<crate::typestore::Typestore>) -> Self {
        self.typestore = typestore;
        self.texts.clear();
        self.hashes.clear();
        self
    }

    /// The typestore given to [`Self::with_typestore`].
    pub fn typestore(&self) -> Option<crate::typestore::Typestore> {
        self.typestore
    }

    /// The definition for a topic of `type_name` in a bag that stores none (bags recorded
    /// before Iron): from the typestore if one is set; otherwise from the install prefixes or
    /// the bundled set, with a warning (once per type) that they may not be the recording's and
    /// that `--typestore` names the distribution. An unknown type gives an empty definition
    /// and a warning suggesting `--typestore`.
    pub fn definition_for_bag(&mut self, type_name: &str) -> MessageDefinition {
        let known = self.full_text(type_name);
        let first = self.warned.insert(type_name.to_string());
        match (&known, self.typestore) {
            (Ok(_), Some(_)) => {}
            (Ok(_), None) if first => log::warn!(
                "'{type_name}': the bag stores no message definition (recorded before Iron?); \
                 using the one installed or bundled here, which may differ from the recording's \
                 distribution: pass --typestore ({}) to name it",
                crate::typestore::TYPESTORE_NAMES
            ),
            (Err(missing), store) if first => log::warn!(
                "'{type_name}': the bag stores no message definition and '{missing}' is not \
                 known {}: {}",
                store.map_or("here".to_string(), |s| format!("in typestore {s}")),
                match store {
                    Some(_) => "add its package to AMENT_PREFIX_PATH".to_string(),
                    None => format!(
                        "if the bag was recorded before Iron, pass --typestore ({})",
                        crate::typestore::TYPESTORE_NAMES
                    ),
                }
            ),
            _ => {}
        }
        match known {
            Ok(text) => MessageDefinition {
                topic_type: type_name.to_string(),
                encoding: "ros2msg".into(),
                encoded_message_definition: text,
                type_description_hash: String::new(),
            },
            Err(_) => MessageDefinition {
                topic_type: type_name.to_string(),
                ..Default::default()
            },
        }
    }

    /// The `.msg` text of one type (without dependencies), if known. A service's request or
    /// response is its part of the `.srv` file; its event is the message rclcpp publishes. An
    /// action's messages are made from the `.action` file as rosidl makes them.
    pub fn own_text(&mut self, type_name: &str) -> Option<String> {
        let ty = TypeName::parse(type_name)?;
        if matches!(ty.kind, Kind::Unspecified | Kind::Msg) {
            if let Some(text) = self.interface_file(ty.package, "msg", ty.name) {
                return Some(text);
            }
        }
        if let Some((service, part)) = ty.service() {
            if let Some(srv) = self.interface_file(ty.package, "srv", service) {
                return Some(match part {
                    ServicePart::Request => section(&srv, 0),
                    ServicePart::Response => section(&srv, 1),
                    ServicePart::Event => format!(
                        "service_msgs/ServiceEventInfo info\n\
                         {package}/{service}_Request[<=1] request\n\
                         {package}/{service}_Response[<=1] response\n",
                        package = ty.package
                    ),
                });
            }
        }
        let (action, template) = ty.action()?;
        let text = self.interface_file(ty.package, "action", action)?;
        let base = format!("{}/{action}", ty.package);
        Some(match template {
            "{goal_text}" => section(&text, 0),
            "{result_text}" => section(&text, 1),
            "{feedback_text}" => section(&text, 2),
            template => template
                .replace("{goal}", &format!("{base}_Goal"))
                .replace("{result}", &format!("{base}_Result"))
                .replace("{feedback}", &format!("{base}_Feedback"))
                .replace("{base}", &base),
        })
    }

    /// The text of `share/<package>/<kind>/<name>.<kind>` from an install prefix, else bundled.
    fn interface_file(&mut self, package: &str, kind: &str, name: &str) -> Option<String> {
        let key = format!("{package}/{kind}/{name}");
        if let Some(cached) = self.texts.get(&key) {
            return cached.clone();
        }
        if let Some(text) = self.typestore.and_then(|t| t.text(&key)) {
            self.texts.insert(key, Some(text.to_string()));
            return Some(text.to_string());
        }
        let from_ament = self.ament_prefixes.iter().find_map(|prefix| {
            std::fs::read_to_string(
                prefix
                    .join("share")
                    .join(package)
                    .join(kind)
                    .join(format!("{name}.{kind}")),
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

    /// Whether the full definition of `type_name` (with every dependency) is known here.
    pub fn knows(&mut self, type_name: &str) -> bool {
        self.full_text(type_name).is_ok()
    }

    /// The names of the bundled interfaces: `pkg/msg/Type` for messages, and for each service
    /// `pkg/srv/Service_Request`, `_Response` and `_Event`.
    pub fn bundled_types() -> Vec<String> {
        let mut out = Vec::new();
        for (name, _) in bundled::BUNDLED {
            match name.split_once("/srv/") {
                Some(_) => out.extend(ServicePart::ALL.map(|p| format!("{name}{}", p.suffix()))),
                None => out.push(name.to_string()),
            }
        }
        out
    }

    pub(crate) fn full_text(&mut self, type_name: &str) -> Result<String, Incomplete> {
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
    ) -> Result<(), Incomplete> {
        if depth == 0 {
            return Err(Incomplete::TooDeep(type_name.to_string()));
        }
        let text = self
            .own_text(type_name)
            .ok_or_else(|| Incomplete::Missing(type_name.to_string()))?;
        let package = TypeName::parse(type_name)
            .map(|t| t.package.to_string())
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
    fn every_typestore_type_resolves_and_parses() {
        for store in crate::Typestore::ALL {
            let mut cache =
                MessageDefinitionCache::with_prefixes(vec![]).with_typestore(Some(store));
            for name in store.types() {
                let def = cache.definition_for_bag(name);
                assert_eq!(def.encoding, "ros2msg", "{store}: {name}");
                let mut reg = crate::msg::Registry::new();
                reg.parse_concatenated(
                    name,
                    &def.encoded_message_definition,
                    crate::msg::Dialect::Ros2,
                )
                .unwrap_or_else(|e| panic!("{store}: {name}: {e}"));
            }
        }
    }

    #[test]
    fn the_typestore_comes_before_the_bundled_set_for_messages_only() {
        let range = |store| {
            MessageDefinitionCache::with_prefixes(vec![])
                .with_typestore(store)
                .definition_for_bag("sensor_msgs/msg/Range")
                .encoded_message_definition
        };
        assert!(!range(Some(crate::Typestore::Humble)).contains("variance"));
        assert!(range(Some(crate::Typestore::Jazzy)).contains("float32 variance"));
        assert!(range(None).contains("float32 variance"), "bundled");
        // Services are not in the typestores: still found in the bundled set.
        let mut cache = MessageDefinitionCache::with_prefixes(vec![])
            .with_typestore(Some(crate::Typestore::Humble));
        assert_eq!(
            cache
                .definition_for_bag("std_srvs/srv/Trigger_Response")
                .encoding,
            "ros2msg"
        );
        assert_eq!(cache.definition_for_bag("nope_msgs/msg/X").encoding, "");
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

    /// A `SetRate` call as rclcpp's introspection publishes it: request received, rate 2.0.
    fn set_rate_event_cdr() -> Vec<u8> {
        let mut cdr = vec![0, 1, 0, 0, 1, 0, 0, 0]; // header; event_type, padding
        cdr.extend(7i32.to_le_bytes()); // stamp.sec
        cdr.extend(8u32.to_le_bytes()); // stamp.nanosec
        cdr.extend([9u8; 16]); // client_gid
        cdr.extend([0u8; 4]); // padding to 8
        cdr.extend(42i64.to_le_bytes()); // sequence_number
        cdr.extend(1u32.to_le_bytes()); // one request
        cdr.extend([0u8; 4]);
        cdr.extend(2.0f64.to_le_bytes());
        cdr.extend(0u32.to_le_bytes()); // no response
        cdr
    }

    #[test]
    fn service_events_are_described_as_the_messages_on_the_wire() {
        let name = "rosbag2_interfaces/srv/SetRate_Event";
        let def = MessageDefinitionCache::with_prefixes(vec![]).definition(name);
        assert_eq!(
            (def.encoding.as_str(), def.topic_type.as_str()),
            ("ros2msg", name)
        );
        let text = &def.encoded_message_definition;
        assert!(
            text.starts_with(
                "service_msgs/ServiceEventInfo info\n\
                 rosbag2_interfaces/SetRate_Request[<=1] request\n\
                 rosbag2_interfaces/SetRate_Response[<=1] response\n"
            ),
            "{text}"
        );
        for section in [
            "MSG: rosbag2_interfaces/SetRate_Request\nfloat64 rate\n",
            "MSG: rosbag2_interfaces/SetRate_Response\nbool success",
            "MSG: service_msgs/ServiceEventInfo\n",
            "MSG: builtin_interfaces/Time\n",
        ] {
            assert_eq!(text.matches(section).count(), 1, "{section} in {text}");
        }

        let mut reg = crate::msg::Registry::new();
        reg.parse_concatenated(name, text, crate::msg::Dialect::Ros2)
            .unwrap();
        let cdr = set_rate_event_cdr();
        let (value, header) = crate::msg::decode_cdr(&reg, name, &cdr).unwrap();
        let event = crate::msg::MessageView::new(&reg, reg.index_of(name).unwrap(), &value);
        let info = event.message("info").unwrap();
        assert_eq!(info.number("event_type"), Some(1.0));
        assert_eq!(info.number("sequence_number"), Some(42.0));
        let requests = event.messages("request");
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].number("rate"), Some(2.0));
        assert!(event.messages("response").is_empty());
        assert_eq!(
            crate::msg::encode_cdr(&reg, name, &value, header).unwrap(),
            cdr
        );
    }

    #[test]
    fn service_parts_come_from_srv_files_with_their_dependencies() {
        let mut cache = MessageDefinitionCache::with_prefixes(vec![]);
        let def = cache.definition("rcl_interfaces/srv/GetParameters_Response");
        let text = def.encoded_message_definition;
        assert!(text.contains("ParameterValue[] values\n"), "{text}");
        assert!(!text.contains("string[] names"), "{text}");
        assert_eq!(
            text.matches("MSG: rcl_interfaces/ParameterValue\n").count(),
            1
        );
        assert!(cache
            .definition("std_srvs/srv/Trigger_Request")
            .encoding
            .eq("ros2msg"));

        let dir = tempfile::tempdir().unwrap();
        let srv = dir.path().join("share/my_pkg/srv");
        let msg = dir.path().join("share/my_pkg/msg");
        std::fs::create_dir_all(&srv).unwrap();
        std::fs::create_dir_all(&msg).unwrap();
        std::fs::write(srv.join("Do.srv"), "Thing thing\n---\nint32 code\n").unwrap();
        std::fs::write(msg.join("Thing.msg"), "int32 x\n").unwrap();
        let mut cache = MessageDefinitionCache::with_prefixes(vec![dir.path().into()]);
        let request = cache.definition("my_pkg/srv/Do_Request");
        assert_eq!(
            request.encoded_message_definition,
            format!("Thing thing\n{SEPARATOR}\nMSG: my_pkg/Thing\nint32 x\n")
        );
        assert_eq!(
            cache
                .definition("my_pkg/srv/Do_Response")
                .encoded_message_definition,
            "int32 code\n"
        );
        for unknown in [
            "my_pkg/srv/Nope_Event",
            "my_pkg/srv/Do",
            "my_pkg/srv/Do_Reply",
        ] {
            assert_eq!(
                cache.definition(unknown).encoded_message_definition,
                "",
                "{unknown}"
            );
        }
    }
    /// `test_msgs/action/Fibonacci` as the ROS 2 Kilted wheel `ros-kilted-test-msgs` 2.3.0
    /// installs it, and the RIHS01 hashes rosidl computed for its messages
    /// (`share/test_msgs/action/Fibonacci.json`).
    const FIBONACCI: &str =
        "#goal definition\nint32 order\n---\n#result definition\nint32[] sequence\n---\n#feedback\nint32[] sequence\n";
    const FIBONACCI_HASHES: &[(&str, &str)] = &[
        (
            "Goal",
            "e58ef5a8f4f039ab522a740823547c460b1d5aed8031c8b7825d33d345d90df8",
        ),
        (
            "Result",
            "0774b095467813c6904d475498b5486b7ebd4cda6a4569f97e8de8c862689049",
        ),
        (
            "Feedback",
            "7d1110f2efa019ad5ad8ad2244db98d862f39dc9fae8c976814b0065fa2f32d5",
        ),
        (
            "SendGoal_Request",
            "dfe75c73dc2c090cbc8fd8c45039bfa279d16aa6aadd348f812c6adad26e669e",
        ),
        (
            "SendGoal_Response",
            "1e7e84f7edf1fb020d9e51c7842bceef4cbdbd847f354125f3227cf4f314a683",
        ),
        (
            "SendGoal_Event",
            "a20e708c6aae7a99d1eb0e930a0916f596bb5bae93a342a61752e13135be2c44",
        ),
        (
            "GetResult_Request",
            "c65e93c4c4328d7f1abd6ace83dba8e5fa0f32de76b4d2c96b5c655d94803b92",
        ),
        (
            "GetResult_Response",
            "ef88159d47a3d21d9bf4bec690cf668939d9542db28a9cfd77dbcd97eaf1add2",
        ),
        (
            "GetResult_Event",
            "fe0aa5843ef10550a9b322aeeccd5b11e78bca05b3571cf6999c51bff30c1e23",
        ),
        (
            "FeedbackMessage",
            "37487bae8cea358366b97003c1ef1ca7ce7c08df36f9e8cca496624226aee64e",
        ),
    ];

    #[test]
    fn action_messages_come_from_action_files_with_rosidls_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let action = dir.path().join("share/test_msgs/action");
        std::fs::create_dir_all(&action).unwrap();
        std::fs::write(action.join("Fibonacci.action"), FIBONACCI).unwrap();
        let mut cache = MessageDefinitionCache::with_prefixes(vec![dir.path().into()]);
        for (part, hash) in FIBONACCI_HASHES {
            let name = format!("test_msgs/action/Fibonacci_{part}");
            assert_eq!(
                cache.type_hash(&name).unwrap(),
                format!("RIHS01_{hash}"),
                "{name}: {}",
                cache.definition(&name).encoded_message_definition
            );
        }
        let feedback = cache.definition("test_msgs/action/Fibonacci_FeedbackMessage");
        assert_eq!(
            feedback.encoded_message_definition,
            format!(
                "unique_identifier_msgs/UUID goal_id\ntest_msgs/Fibonacci_Feedback feedback\n\
                 {SEPARATOR}\nMSG: test_msgs/Fibonacci_Feedback\n#feedback\nint32[] sequence\n\
                 {SEPARATOR}\nMSG: unique_identifier_msgs/UUID\n{}",
                cache.own_text("unique_identifier_msgs/msg/UUID").unwrap()
            )
        );
        // The status topic's and the cancel service's types are bundled.
        for bundled in [
            "action_msgs/msg/GoalStatusArray",
            "action_msgs/srv/CancelGoal_Event",
        ] {
            assert!(
                MessageDefinitionCache::with_prefixes(vec![]).knows(bundled),
                "{bundled}"
            );
        }
        // A service's suffix on an action's name is not read from a `.srv` file.
        assert!(!cache.knows("test_msgs/srv/Fibonacci_SendGoal_Request"));
        assert!(!cache.knows("test_msgs/action/Fibonacci_Reply"));
    }
}
