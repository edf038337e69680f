//! The ROS arguments of a node's command line (`--ros-args ... [--]`), with rcl's meaning.
//!
//! Where the rcl backend runs, rcl itself parses them (`rcl_parse_arguments`, in
//! rosbag2_rs_rcl; the same argv reaches `rcl_init`, so rcl applies remaps, the enclave and the
//! logging switches to its own node). The native backends parse them here, to the same
//! result on the same command line: rules aimed at another node (`talker:/chatter:=/x`,
//! `-p talker:rate:=2`) are left alone, the first matching remap wins, and parameters are
//! resolved as rclcpp resolves them (`/**` sections first, then the node's own, later values
//! winning). One table of command lines checks both paths, and rclpy's own parsing, alike
//! (`tests/ros_args_golden.json`).

use std::path::{Path, PathBuf};

use yaml_rust2::Yaml;

use crate::names::NodeIdentity;

/// A ROS argument that cannot be used, or a parameter file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RosArgumentsError {
    /// A ROS argument that rcl does not know, or a malformed one.
    #[error("invalid ROS argument {argument}: {reason}")]
    Invalid {
        /// The argument as given.
        argument: String,
        /// What is wrong with it.
        reason: String,
    },
    /// ROS arguments rcl does not know (rclcpp refuses them too).
    #[error("unknown ROS arguments: {}", .0.join(" "))]
    Unknown(Vec<String>),
    /// A `--params-file` that cannot be read or is not a parameter file.
    #[error("parameter file {path}: {reason}")]
    ParamsFile {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// rcl refused the arguments (its message).
    #[error("rcl: {0}")]
    Rcl(String),
}

/// A log severity, as ROS names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// `DEBUG`.
    Debug,
    /// `INFO`.
    Info,
    /// `WARN`.
    Warn,
    /// `ERROR`.
    Error,
    /// `FATAL`.
    Fatal,
}

impl Severity {
    /// Parses a severity as rcutils does (`debug`, `INFO`, ...: any case).
    pub fn parse(text: &str) -> Option<Severity> {
        Some(match text.to_ascii_uppercase().as_str() {
            "DEBUG" => Severity::Debug,
            "INFO" => Severity::Info,
            "WARN" | "WARNING" => Severity::Warn,
            "ERROR" => Severity::Error,
            "FATAL" => Severity::Fatal,
            _ => return None,
        })
    }

    /// The name rcutils gives it.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Debug => "DEBUG",
            Severity::Info => "INFO",
            Severity::Warn => "WARN",
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
        }
    }

    /// The `log` crate's filter that shows this severity and above (`FATAL`: errors).
    pub fn level_filter(self) -> log::LevelFilter {
        match self {
            Severity::Debug => log::LevelFilter::Debug,
            Severity::Info => log::LevelFilter::Info,
            Severity::Warn => log::LevelFilter::Warn,
            Severity::Error | Severity::Fatal => log::LevelFilter::Error,
        }
    }
}

/// The logging part of the ROS arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggingArguments {
    /// `--log-level LEVEL`: every logger's level.
    pub default_level: Option<Severity>,
    /// `--log-level NAME:=LEVEL`, in order (the last for a name wins).
    pub logger_levels: Vec<(String, Severity)>,
    /// `--log-config-file FILE`.
    pub config_file: Option<PathBuf>,
    /// `--log-file-name PREFIX` (rcl from Kilted on): the log file's name before its suffix.
    pub file_name: Option<String>,
    /// Log lines go to `/rosout` (`--disable-rosout-logs` turns it off).
    pub rosout: bool,
    /// Log lines go to the console (`--disable-stdout-logs`).
    pub stdout: bool,
    /// Log lines go to the log file of the logging library (`--disable-external-lib-logs`).
    pub external_lib: bool,
}

impl Default for LoggingArguments {
    fn default() -> Self {
        Self {
            default_level: None,
            logger_levels: Vec::new(),
            config_file: None,
            file_name: None,
            rosout: true,
            stdout: true,
            external_lib: true,
        }
    }
}

impl LoggingArguments {
    /// The level of `logger`: its own, else the default.
    pub fn level_of(&self, logger: &str) -> Option<Severity> {
        self.logger_levels
            .iter()
            .rev()
            .find(|(name, _)| name == logger)
            .map(|(_, level)| *level)
            .or(self.default_level)
    }
}

/// What the ROS arguments say to one node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RosArguments {
    /// The node's name after the `__node` rules for it.
    pub node_name: String,
    /// The node's namespace after the `__ns` rules for it (`/` when none).
    pub namespace: String,
    /// The topic and service remap rules `(from, to)` for this node, in the order rcl tries
    /// them (the first match wins). Empty where rcl applies them itself ([`Self::by_rcl`]).
    pub remaps: Vec<(String, String)>,
    /// The node's parameter overrides, resolved: name and value (as YAML text: `2.0`, `true`,
    /// `[a, b]`), the one that wins last.
    pub params: Vec<(String, String)>,
    /// `--enclave` / `-e`.
    pub enclave: Option<String>,
    /// Log levels and switches.
    pub logging: LoggingArguments,
    /// Whether rcl parsed these (and applies remaps and the enclave to its node itself).
    pub by_rcl: bool,
}

impl RosArguments {
    /// The node's logger name, as rcl makes it: namespace and name joined with dots
    /// (`/robot` and `rosbag2_player` give `robot.rosbag2_player`).
    pub fn logger_name(&self) -> String {
        logger_name(&self.node_name, &self.namespace)
    }

    /// The node's fully qualified name.
    pub fn fully_qualified_name(&self) -> String {
        fully_qualified(&self.node_name, &self.namespace)
    }

    /// `name` after the first of [`Self::remaps`] that matches it (rules and name as given:
    /// both absolute, or both relative).
    pub fn remapped<'a>(&'a self, name: &'a str) -> &'a str {
        self.remaps
            .iter()
            .find(|(from, _)| from == name)
            .map_or(name, |(_, to)| to.as_str())
    }
}

/// The logger name rcl gives node `name` in `namespace`.
pub fn logger_name(name: &str, namespace: &str) -> String {
    let ns = namespace.trim_matches('/');
    if ns.is_empty() {
        name.to_string()
    } else {
        format!("{}.{name}", ns.replace('/', "."))
    }
}

/// The fully qualified name of node `name` in `namespace` (`/` when empty).
pub fn fully_qualified(name: &str, namespace: &str) -> String {
    NodeIdentity {
        name: name.to_string(),
        namespace: if namespace.is_empty() { "/" } else { namespace }.to_string(),
    }
    .fully_qualified_name()
}

/// The program's own arguments: `argv` without its ROS arguments.
pub fn strip_ros_arguments(argv: &[String]) -> Vec<String> {
    let mut own = Vec::new();
    let mut in_ros = false;
    for arg in argv {
        match arg.as_str() {
            "--ros-args" => in_ros = true,
            "--" if in_ros => in_ros = false,
            _ if in_ros => {}
            _ => own.push(arg.clone()),
        }
    }
    own
}

/// One `--ros-args` rule before it is resolved for the node.
#[derive(Debug)]
enum Rule {
    Remap {
        node: Option<String>,
        /// `rosservice://`: a rule for service names only.
        services_only: bool,
        from: String,
        to: String,
    },
    Param {
        node: Option<String>,
        name: String,
        value: String,
    },
    ParamsFile(PathBuf),
}

/// Splits `node:rest` where a rule names its node (the part before the last `:` of the match
/// side, when there is one).
fn node_prefix(lhs: &str) -> (Option<String>, String) {
    match lhs.rsplit_once(':') {
        Some((node, rest)) if !node.is_empty() => (Some(node.to_string()), rest.to_string()),
        _ => (None, lhs.to_string()),
    }
}

/// Splits a remap rule's match side, `[node:][rostopic://|rosservice://]name`, into the node it
/// names, whether it is for service names only, and the name.
fn remap_target(lhs: &str) -> (Option<String>, bool, String) {
    for (scheme, services_only) in [("rostopic://", false), ("rosservice://", true)] {
        if let Some(at) = lhs.find(scheme) {
            let node = lhs[..at].strip_suffix(':').filter(|n| !n.is_empty());
            let name = lhs[at + scheme.len()..].to_string();
            return (node.map(str::to_string), services_only, name);
        }
    }
    let (node, name) = node_prefix(lhs);
    (node, false, name)
}

/// The ROS arguments parsed here, as rcl parses them, resolved for the node `node_name`.
pub fn parse_native(argv: &[String], node_name: &str) -> Result<RosArguments, RosArgumentsError> {
    let mut rules = Vec::new();
    let mut enclave = None;
    let mut logging = LoggingArguments::default();
    let mut unknown = Vec::new();
    let mut args = argv.iter().skip(1);
    let mut in_ros = false;
    while let Some(arg) = args.next() {
        if !in_ros {
            in_ros = arg == "--ros-args";
            continue;
        }
        let mut value = |what: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| RosArgumentsError::Invalid {
                    argument: arg.clone(),
                    reason: format!("expected {what} after it"),
                })
        };
        match arg.as_str() {
            "--" => in_ros = false,
            "--ros-args" => {}
            "-r" | "--remap" => {
                let rule = value("a rule from:=to")?;
                let (lhs, to) = rule
                    .split_once(":=")
                    .ok_or_else(|| invalid(&rule, "from:=to"))?;
                let (node, services_only, from) = remap_target(lhs);
                if from.is_empty() || to.is_empty() {
                    return Err(invalid(&rule, "from:=to"));
                }
                rules.push(Rule::Remap {
                    node,
                    services_only,
                    from,
                    to: to.to_string(),
                });
            }
            "-p" | "--param" => {
                let rule = value("a parameter name:=value")?;
                let (lhs, v) = rule
                    .split_once(":=")
                    .ok_or_else(|| invalid(&rule, "name:=value"))?;
                let (node, name) = node_prefix(lhs);
                if name.is_empty() {
                    return Err(invalid(&rule, "name:=value"));
                }
                rules.push(Rule::Param {
                    node,
                    name,
                    value: v.to_string(),
                });
            }
            "--params-file" => rules.push(Rule::ParamsFile(PathBuf::from(value("a file")?))),
            "-e" | "--enclave" => enclave = Some(value("an enclave")?),
            "--log-level" => {
                let rule = value("a log level")?;
                match rule.split_once(":=") {
                    Some((logger, level)) => {
                        let level =
                            Severity::parse(level).ok_or_else(|| invalid(&rule, "a level"))?;
                        logging.logger_levels.push((logger.to_string(), level));
                    }
                    None => {
                        logging.default_level =
                            Some(Severity::parse(&rule).ok_or_else(|| invalid(&rule, "a level"))?);
                    }
                }
            }
            "--log-config-file" => logging.config_file = Some(PathBuf::from(value("a file")?)),
            "--log-file-name" => logging.file_name = Some(value("a file name")?),
            "--enable-rosout-logs" => logging.rosout = true,
            "--disable-rosout-logs" => logging.rosout = false,
            "--enable-stdout-logs" => logging.stdout = true,
            "--disable-stdout-logs" => logging.stdout = false,
            "--enable-external-lib-logs" => logging.external_lib = true,
            "--disable-external-lib-logs" => logging.external_lib = false,
            other => unknown.push(other.to_string()),
        }
    }
    if !unknown.is_empty() {
        return Err(RosArgumentsError::Unknown(unknown));
    }
    // The node's name and namespace: the first rule aimed at it (or at every node) wins.
    let rule_for = |key: &str, name: &str| {
        rules.iter().find_map(|r| match r {
            Rule::Remap { node, from, to, .. }
                if from == key && node.as_deref().is_none_or(|n| n == name) =>
            {
                Some(to.clone())
            }
            _ => None,
        })
    };
    let original = node_name;
    let node_name = rule_for("__node", original)
        .or_else(|| rule_for("__name", original))
        .unwrap_or_else(|| original.to_string());
    let namespace = rule_for("__ns", original).map_or_else(
        || "/".to_string(),
        |ns| {
            if ns.starts_with('/') {
                ns
            } else {
                format!("/{ns}")
            }
        },
    );
    // Topic rules aimed at this node (by its final name) or at every node; the first for a name
    // wins, as in rcl.
    let mut remaps: Vec<(String, String)> = Vec::new();
    for rule in &rules {
        if let Rule::Remap {
            node,
            services_only: false,
            from,
            to,
        } = rule
        {
            let for_us = node.as_deref().is_none_or(|n| n == node_name);
            let special = matches!(from.as_str(), "__node" | "__name" | "__ns");
            if for_us && !special && !remaps.iter().any(|(f, _)| f == from) {
                remaps.push((from.clone(), to.clone()));
            }
        }
    }
    let fqn = fully_qualified(&node_name, &namespace);
    let params = resolve_params(&rules, &fqn)?;
    Ok(RosArguments {
        node_name,
        namespace,
        remaps,
        params,
        enclave,
        logging,
        by_rcl: false,
    })
}

fn invalid(rule: &str, expected: &str) -> RosArgumentsError {
    RosArgumentsError::Invalid {
        argument: rule.to_string(),
        reason: format!("expected {expected}"),
    }
}

/// A parameter section's node name as rcl keeps it: absolute (`player` is `/player`).
fn absolute_node(name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/{name}")
    }
}

/// Resolves the parameters for the node `fqn` as rclcpp does: every value of a `/**` section,
/// then every value of the node's own section, a later one replacing an earlier one of the same
/// name; in the order each name was first set.
fn resolve_params(rules: &[Rule], fqn: &str) -> Result<Vec<(String, String)>, RosArgumentsError> {
    let mut sections: Vec<(String, String, String)> = Vec::new();
    for rule in rules {
        match rule {
            Rule::Param { node, name, value } => sections.push((
                node.as_deref()
                    .map_or_else(|| "/**".to_string(), absolute_node),
                name.clone(),
                value.clone(),
            )),
            Rule::ParamsFile(path) => sections.extend(read_params_file(path)?),
            Rule::Remap { .. } => {}
        }
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for wanted in ["/**", fqn] {
        for (_, name, value) in sections.iter().filter(|(node, _, _)| node == wanted) {
            match out.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = value.clone(),
                None => out.push((name.clone(), value.clone())),
            }
        }
    }
    Ok(out)
}

/// Every parameter of a ROS 2 parameter file: `(node, name, value)`, with the node as rcl keeps
/// it (`/**`, `/ns/player`), nested parameter names joined with dots and values as YAML text.
pub fn read_params_file(path: &Path) -> Result<Vec<(String, String, String)>, RosArgumentsError> {
    let error = |reason: String| RosArgumentsError::ParamsFile {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    let docs = rosbag2_rs_storage::limits::load_yaml(&text).map_err(|e| error(e.to_string()))?;
    let mut out = Vec::new();
    for doc in &docs {
        let Yaml::Hash(top) = doc else {
            return Err(error("not a map of node names".into()));
        };
        for (key, value) in top {
            let Some(key) = key.as_str() else { continue };
            node_sections(key, value, &mut out);
        }
    }
    Ok(out)
}

/// The `ros__parameters` sections under `node` (namespaces may nest: `ns: {player: ...}`).
fn node_sections(node: &str, value: &Yaml, out: &mut Vec<(String, String, String)>) {
    let Yaml::Hash(map) = value else { return };
    for (key, value) in map {
        let Some(key) = key.as_str() else { continue };
        if key == "ros__parameters" {
            let mut flat = Vec::new();
            flatten("", value, &mut flat);
            let node = absolute_node(node);
            out.extend(flat.into_iter().map(|(n, v)| (node.clone(), n, v)));
        } else {
            node_sections(&format!("{}/{key}", node.trim_end_matches('/')), value, out);
        }
    }
}

/// Nested parameter names joined with dots, values as YAML scalars or `[a, b]` lists.
fn flatten(prefix: &str, value: &Yaml, out: &mut Vec<(String, String)>) {
    match value {
        Yaml::Hash(map) => {
            for (k, v) in map {
                let Some(k) = k.as_str() else { continue };
                let name = if prefix.is_empty() {
                    k.to_string()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&name, v, out);
            }
        }
        other => {
            if let Some(text) = scalar(other) {
                out.push((prefix.to_string(), text));
            }
        }
    }
}

fn scalar(value: &Yaml) -> Option<String> {
    Some(match value {
        Yaml::Real(r) => r.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::String(s) => s.clone(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Array(items) => {
            let items: Vec<String> = items.iter().filter_map(scalar).collect();
            format!("[{}]", items.join(", "))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn rules_for_other_nodes_are_left_alone() {
        let parsed = parse_native(
            &argv(&[
                "player",
                "--ros-args",
                "-r",
                "talker:/chatter:=/x",
                "-r",
                "rosbag2_player:/a:=/b",
                "-r",
                "/a:=/c",
                "-r",
                "talker:__node:=t",
                "-p",
                "talker:rate:=3.0",
                "-p",
                "rosbag2_player:play.rate:=2.0",
                "-p",
                "play.rate:=4.0",
            ]),
            "rosbag2_player",
        )
        .unwrap();
        assert_eq!(parsed.node_name, "rosbag2_player");
        assert_eq!(parsed.remaps, [("/a".to_string(), "/b".to_string())]);
        // `/**` first, then the node's own section: the node's value wins whatever the order.
        assert_eq!(
            parsed.params,
            [("play.rate".to_string(), "2.0".to_string())]
        );
    }

    #[test]
    fn logging_and_security_arguments_are_read() {
        let parsed = parse_native(
            &argv(&[
                "recorder",
                "-o",
                "bag",
                "--ros-args",
                "--log-level",
                "warn",
                "--log-level",
                "rosbag2_recorder:=DEBUG",
                "-e",
                "/x",
                "--disable-rosout-logs",
                "--disable-stdout-logs",
                "--",
                "--more",
            ]),
            "rosbag2_recorder",
        )
        .unwrap();
        assert_eq!(parsed.enclave.as_deref(), Some("/x"));
        assert_eq!(parsed.logging.default_level, Some(Severity::Warn));
        assert_eq!(
            parsed.logging.level_of("rosbag2_recorder"),
            Some(Severity::Debug)
        );
        assert!(!parsed.logging.rosout && !parsed.logging.stdout && parsed.logging.external_lib);
        assert_eq!(
            strip_ros_arguments(&argv(&[
                "r",
                "-o",
                "b",
                "--ros-args",
                "-e",
                "/x",
                "--",
                "-a"
            ])),
            argv(&["r", "-o", "b", "-a"])
        );
    }

    /// The golden table of command lines, parsed natively: as rclpy parses them
    /// (`tests/interop/test_ros_args_golden.py`); rosbag2_rs_rcl checks rcl's parse on it too.
    #[test]
    fn golden_command_lines_parse_as_rcl_parses_them() {
        crate::ros_arguments_golden::check_every_case(parse_native);
    }

    #[test]
    fn unknown_and_malformed_arguments_are_errors() {
        for bad in [
            &["p", "--ros-args", "--frobnicate"][..],
            &["p", "--ros-args", "-r", "nothing"],
            &["p", "--ros-args", "--log-level", "loud"],
            &["p", "--ros-args", "-p"],
        ] {
            assert!(parse_native(&argv(bad), "p").is_err(), "{bad:?}");
        }
    }
}
