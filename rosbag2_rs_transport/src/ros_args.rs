//! The `--ros-args` part of a command line. `ros2 launch` (and `ros2 run ... --ros-args`) append
//! it to every node's arguments. rcl parses it where the rcl backend runs, the transport
//! library's own parser otherwise ([`rosbag2_rs_transport_lib::ros_arguments`], one result on
//! both paths); the binaries take from the result the node name and namespace, the topic remaps
//! the native backends apply themselves, the log levels and switches, and the parameters in
//! rosbag2's names (`-p play.rate:=2.0`, `--params-file FILE`), so that a launch file written for
//! rosbag2's player or recorder node works unchanged.
//!
//! Parameters become the equivalent command-line flags ([`ParamTable`]), appended after the
//! program's own flags: one parser, one set of checks, and a parameter overrides the flag it
//! repeats.

use anyhow::{bail, Result};
use rosbag2_rs_transport_lib::ros_arguments::{self, strip_ros_arguments, RosArguments};

/// A command line's ROS arguments, resolved for a node once its table is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RosArgs {
    /// The whole command line (rcl reads the ROS arguments out of it).
    argv: Vec<String>,
}

impl RosArgs {
    /// Whether the command line has ROS arguments.
    pub fn is_empty(&self) -> bool {
        !self.argv.iter().any(|a| a == "--ros-args")
    }

    /// The ROS arguments for the node of `table`, whose name in the code is the `own` command
    /// line's `--node-name` or the table's default.
    pub fn resolve(&self, own: &[String], table: &ParamTable) -> Result<RosArguments> {
        Ok(ros_arguments::parse(
            &self.argv,
            &code_node_name(own, table),
        )?)
    }

    /// [`RosArgs::resolve`], then the command line to parse ([`command_line`]).
    pub fn command_line(
        &self,
        own: Vec<String>,
        table: &ParamTable,
    ) -> Result<(Vec<String>, Vec<String>)> {
        let resolved = self.resolve(&own, table)?;
        command_line(&resolved, own, table)
    }
}

/// The node's name before the ROS arguments: the `own` command line's node-name flag (the last
/// one), or the table's default.
fn code_node_name(own: &[String], table: &ParamTable) -> String {
    let mut name = table.default_node_name.to_string();
    let mut words = own.iter();
    while let Some(word) = words.next() {
        if word == table.node_name_flag {
            if let Some(value) = words.next() {
                name = value.clone();
            }
        } else if let Some(value) = word
            .strip_prefix(table.node_name_flag)
            .and_then(|v| v.strip_prefix('='))
        {
            name = value.to_string();
        }
    }
    name
}

/// Splits `args`: the program's own arguments, and the ROS arguments.
pub fn split_ros_args(args: impl IntoIterator<Item = String>) -> (Vec<String>, RosArgs) {
    let argv: Vec<String> = args.into_iter().collect();
    (strip_ros_arguments(&argv), RosArgs { argv })
}

/// How one rosbag2 node parameter maps to a command-line flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// `--flag VALUE` (an empty value sets nothing).
    Value(&'static str),
    /// `--flag VALUE` when the value is a positive number (0 means "off" in rosbag2).
    Positive(&'static str),
    /// `--flag` when the value is `true`.
    Switch(&'static str),
    /// `--flag A B ...` from a list value `[A, B]` (an empty list sets nothing).
    List(&'static str),
    /// A duration given as `name.sec` and `name.nsec`, as `--flag SECONDS`.
    Seconds(&'static str),
    /// A duration given as `name.sec` and `name.nsec`, as `--flag NANOSECONDS`.
    Nanoseconds(&'static str),
    /// A duration given as `name.sec` and `name.nsec`, as `--flag MILLISECONDS`.
    Milliseconds(&'static str),
    /// The program's positional argument (the bag to play).
    Positional,
    /// A rosbag2 parameter rosbag2-rs does not offer: ignored, with a warning unless the value
    /// is the default (false, zero, empty).
    Unsupported,
    /// A parameter rosbag2's node declares and never reads (`play.node_prefix`, the player's
    /// writer options): taken, and ignored as there.
    Unused,
    /// A parameter with one possible value here (rosbag2's default): that value, or an empty
    /// one, is taken; any other is an error.
    Only(&'static str),
}

impl Param {
    /// The flag the parameter stands for, if it stands for one.
    pub fn flag(self) -> Option<&'static str> {
        match self {
            Param::Value(flag)
            | Param::Positive(flag)
            | Param::Switch(flag)
            | Param::List(flag)
            | Param::Seconds(flag)
            | Param::Nanoseconds(flag)
            | Param::Milliseconds(flag) => Some(flag),
            Param::Positional | Param::Unsupported | Param::Unused | Param::Only(_) => None,
        }
    }
}

/// The parameters a node takes and the flags they stand for.
#[derive(Debug, Clone, Copy)]
pub struct ParamTable {
    /// The node's kind, for messages ("player", "recorder").
    pub node: &'static str,
    /// Parameter names (`play.rate`) and their flags.
    pub params: &'static [(&'static str, Param)],
    /// The node's name when neither the flag nor a remap sets it (`rosbag2_player`).
    pub default_node_name: &'static str,
    /// The flag that sets the node name.
    pub node_name_flag: &'static str,
    /// The flag that takes a topic remap `from:=to`, if the node offers one.
    pub remap_flag: Option<&'static str>,
}

impl ParamTable {
    /// What the parameter `name` sets, if the table has it.
    pub fn find(&self, name: &str) -> Option<Param> {
        self.params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| *p)
    }
}

/// Items of a list value `[a, 'b']` (a lone value is a list of one).
fn list_items(value: &str) -> Vec<String> {
    let inner = value.trim();
    let inner = inner
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(inner);
    inner
        .split(',')
        .map(|s| s.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether a value is what rosbag2 takes as "not set" (so ignoring it loses nothing).
fn is_default_value(value: &str) -> bool {
    let v = value.trim().trim_matches(|c| c == '"' || c == '\'');
    v.is_empty()
        || v.eq_ignore_ascii_case("false")
        || v == "[]"
        || v.parse::<f64>().is_ok_and(|n| n <= 0.0)
}

/// The command line to parse: `own` with the node name, remaps and parameters of `ros`
/// appended as the flags `table` maps them to (so they win over the same flags in `own`), and a
/// bag given as `storage.uri` after them. Also returns warnings about what was ignored, to log
/// once logging is set up. Malformed values are errors.
pub fn command_line(
    ros: &RosArguments,
    own: Vec<String>,
    table: &ParamTable,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut warnings = Vec::new();
    let mut flags = Vec::new();
    if ros.node_name != code_node_name(&own, table) {
        flags.extend([table.node_name_flag.to_string(), ros.node_name.clone()]);
    }
    for (from, to) in &ros.remaps {
        match table.remap_flag {
            Some(flag) => flags.extend([flag.to_string(), format!("{from}:={to}")]),
            None => warnings.push(format!(
                "ignoring remap {from}:={to}: the {} records topics under their own names",
                table.node
            )),
        }
    }
    let mut positional = Vec::new();
    // Durations come as `.sec` and `.nsec` parts; they are joined in first-seen order.
    let mut durations: Vec<(String, Param, i64, i64)> = Vec::new();
    for (name, value) in ros.params.clone() {
        let bad = |what: &str| anyhow::anyhow!("parameter {name}: '{value}' is not {what}");
        let (base, part) = match name.rsplit_once('.') {
            Some((base, part @ ("sec" | "nsec"))) => (base, Some(part)),
            _ => (name.as_str(), None),
        };
        let Some(param) = table.find(base) else {
            warnings.push(format!(
                "ignoring parameter {name}: not a parameter of the {}",
                table.node
            ));
            continue;
        };
        let text = value.trim().trim_matches(|c| c == '"' || c == '\'');
        match (param, part) {
            (Param::Seconds(_) | Param::Nanoseconds(_) | Param::Milliseconds(_), Some(p)) => {
                let n: i64 = text.parse().map_err(|_| bad("an integer"))?;
                let i = match durations.iter().position(|d| d.0 == base) {
                    Some(i) => i,
                    None => {
                        durations.push((base.to_string(), param, 0, 0));
                        durations.len() - 1
                    }
                };
                if p == "sec" {
                    durations[i].2 = n;
                } else {
                    durations[i].3 = n;
                }
            }
            (_, Some(_)) => warnings.push(format!("ignoring parameter {name}: not a duration")),
            (Param::Value(flag), None) => {
                if !text.is_empty() {
                    flags.extend([flag.to_string(), text.to_string()]);
                }
            }
            (Param::Positive(flag), None) => {
                let n: f64 = text.parse().map_err(|_| bad("a number"))?;
                if n > 0.0 {
                    flags.extend([flag.to_string(), text.to_string()]);
                }
            }
            (Param::Switch(flag), None) => match text.to_ascii_lowercase().as_str() {
                "true" => flags.push(flag.to_string()),
                "false" => {}
                _ => return Err(bad("true or false")),
            },
            (Param::List(flag), None) => {
                let items = list_items(text);
                if !items.is_empty() {
                    flags.push(flag.to_string());
                    flags.extend(items);
                }
            }
            (Param::Positional, None) => {
                if !text.is_empty() {
                    positional.push(text.to_string());
                }
            }
            (Param::Only(only), None) => {
                if !text.is_empty() && text != only {
                    return Err(bad(&format!("'{only}' (the only one here)")));
                }
            }
            (Param::Unused, None) => {}
            (Param::Unsupported, None) => {
                if !is_default_value(text) {
                    warnings.push(format!(
                        "ignoring parameter {name}={text}: not supported by the rosbag2-rs {}",
                        table.node
                    ));
                }
            }
            (Param::Seconds(_) | Param::Nanoseconds(_) | Param::Milliseconds(_), None) => {
                bail!("parameter {name} is a duration: set {name}.sec and {name}.nsec")
            }
        }
    }
    for (_, param, sec, nsec) in durations {
        let ns = sec as i128 * 1_000_000_000 + nsec as i128;
        let (flag, text) = match param {
            Param::Seconds(flag) => (flag, format!("{}", ns as f64 / 1e9)),
            Param::Nanoseconds(flag) => (flag, ns.to_string()),
            Param::Milliseconds(flag) => (flag, (ns / 1_000_000).to_string()),
            _ => continue,
        };
        flags.extend([flag.to_string(), text]);
    }
    let mut argv = own;
    let escaped = argv.iter().any(|a| a == "--");
    argv.extend(flags);
    if !positional.is_empty() {
        if !escaped {
            argv.push("--".to_string());
        }
        argv.extend(positional);
    }
    Ok((argv, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    const TABLE: ParamTable = ParamTable {
        node: "player",
        params: &[
            ("play.rate", Param::Value("--rate")),
            ("play.loop", Param::Switch("--loop")),
            ("play.clock_publish_frequency", Param::Positive("--clock")),
            ("play.topics_to_filter", Param::List("--topics")),
            ("play.start_offset", Param::Seconds("--start-offset")),
            (
                "play.playback_until_timestamp",
                Param::Nanoseconds("--until"),
            ),
            ("play.disable_loan_message", Param::Unsupported),
            ("storage.uri", Param::Positional),
        ],
        default_node_name: "rosbag2_player",
        node_name_flag: "--node-name",
        remap_flag: Some("--remap"),
    };

    fn command_line(args: &[&str]) -> Result<(Vec<String>, Vec<String>)> {
        let (own, ros) = split_ros_args(strings(args));
        ros.command_line(own, &TABLE)
    }

    #[test]
    fn splits_launch_arguments() {
        let (own, ros) = split_ros_args(strings(&[
            "player",
            "bag",
            "--rate",
            "2",
            "--ros-args",
            "-r",
            "__node:=p1",
            "-r",
            "__ns:=/robot",
            "-r",
            "p1:/scan:=/scan2",
            "-r",
            "talker:/chatter:=/x",
            "-p",
            "use_sim_time:=false",
            "--log-level",
            "debug",
        ]));
        assert_eq!(own, strings(&["player", "bag", "--rate", "2"]));
        let ros = ros.resolve(&own, &TABLE).unwrap();
        assert_eq!(ros.node_name, "p1");
        assert_eq!(ros.namespace, "/robot");
        // The rule for another node is not ours.
        assert_eq!(ros.remaps, [("/scan".to_string(), "/scan2".to_string())]);

        let (own, ros) = split_ros_args(strings(&["player", "bag"]));
        assert_eq!(own, strings(&["player", "bag"]));
        assert!(ros.is_empty());

        let (own, _) = split_ros_args(strings(&["p", "--ros-args", "-r", "a:=b", "--", "--loop"]));
        assert_eq!(own, strings(&["p", "--loop"]));
    }

    #[test]
    fn the_node_name_flag_names_the_node_rules_aim_at() {
        let (argv, _) = command_line(&[
            "player",
            "--node-name",
            "p2",
            "--ros-args",
            "-p",
            "p2:play.rate:=3.0",
            "-p",
            "rosbag2_player:play.loop:=true",
        ])
        .unwrap();
        assert_eq!(
            argv,
            strings(&["player", "--node-name", "p2", "--rate", "3.0"])
        );
    }

    #[test]
    fn parameters_become_flags_after_the_programs_own() {
        let (argv, warnings) = command_line(&[
            "player",
            "--rate",
            "1",
            "--ros-args",
            "-r",
            "__node:=p1",
            "-r",
            "/a:=/b",
            "-p",
            "play.rate:=2.0",
            "-p",
            "play.loop:=true",
            "-p",
            "play.clock_publish_frequency:=0.0",
            "-p",
            "play.topics_to_filter:=[/a, '/b']",
            "-p",
            "play.start_offset.sec:=1",
            "-p",
            "play.start_offset.nsec:=500000000",
            "-p",
            "play.playback_until_timestamp.sec:=-1",
            "-p",
            "play.disable_loan_message:=false",
            "-p",
            "play.unknown:=1",
            "-p",
            "storage.uri:=my_bag",
        ])
        .unwrap();
        assert_eq!(
            argv,
            strings(&[
                "player",
                "--rate",
                "1",
                "--node-name",
                "p1",
                "--remap",
                "/a:=/b",
                "--rate",
                "2.0",
                "--loop",
                "--topics",
                "/a",
                "/b",
                "--start-offset",
                "1.5",
                "--until",
                "-1000000000",
                "--",
                "my_bag"
            ])
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("play.unknown"));
    }

    #[test]
    fn malformed_values_are_errors() {
        for bad in [
            "play.loop:=maybe",
            "play.clock_publish_frequency:=fast",
            "play.start_offset.sec:=1.5",
            "play.start_offset:=3",
        ] {
            assert!(
                command_line(&["player", "--ros-args", "-p", bad]).is_err(),
                "{bad}"
            );
        }
        let missing = command_line(&["player", "--ros-args", "--params-file", "/nonexistent.yaml"]);
        assert!(missing
            .unwrap_err()
            .to_string()
            .contains("/nonexistent.yaml"));
    }

    #[test]
    fn parameter_files_as_launch_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("params.yaml");
        std::fs::write(
            &file,
            "/**:\n  ros__parameters:\n    play:\n      rate: 2.0\n      loop: true\n      \
             topics_to_filter: [/a, /b]\n      start_offset:\n        sec: 2\n        nsec: 0\n    \
             storage:\n      uri: my_bag\n",
        )
        .unwrap();
        let (argv, warnings) = command_line(&[
            "player",
            "--ros-args",
            "--params-file",
            file.to_str().unwrap(),
            "-p",
            "play.rate:=3.0",
        ])
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            argv,
            // Resolved as rcl resolves them: `-p` after the file replaces its value.
            strings(&[
                "player",
                "--rate",
                "3.0",
                "--loop",
                "--topics",
                "/a",
                "/b",
                "--start-offset",
                "2",
                "--",
                "my_bag"
            ])
        );
    }
}
