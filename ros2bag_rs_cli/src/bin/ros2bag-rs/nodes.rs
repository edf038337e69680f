//! The command line as the nodes take it (feature `transport`): `--ros-args` (node name,
//! namespace, remaps, rosbag2's node parameters, logging) apply to `play`, `burst` and `record`,
//! as they do to rosbag2's nodes; those verbs' nodes declare the parameters the `player` and
//! `recorder` nodes declare; and the process leaves the graph before it exits.

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches};
use rosbag2_rs_transport::{
    command_line, declared_parameters, init_node_logging, split_ros_args, ParamTable, RosArgs,
    PLAY_PARAMETERS, RECORD_PARAMETERS,
};
use rosbag2_rs_transport_lib::ros_arguments::RosArguments;
use rosbag2_rs_transport_lib::DeclaredParameter;

pub use rosbag2_rs_transport::{exit, fail};

use crate::Cli;

/// The node of `play`, `burst` or `record`: its namespace and the parameters it declares.
pub struct Node {
    /// Its namespace (`/` unless `--ros-args -r __ns:=...`).
    pub namespace: String,
    /// rosbag2's node parameters, with the values of the flags they stand for.
    pub parameters: Vec<DeclaredParameter>,
}

/// Parses the command line and installs the logger: the node's (rcl's, or printed here with
/// `/rosout`) when `--ros-args` are given, the console's otherwise.
pub fn parse_and_init_logging() -> (Cli, Node) {
    let parsed = parse(std::env::args()).unwrap_or_else(|e| fail(e));
    match &parsed.ros {
        Some(ros) => init_node_logging(parsed.cli.log_level, ros),
        None => {
            rosbag2_rs_tools::console::install(parsed.cli.log_level, &parsed.node_name, true, None)
        }
    }
    parsed.warnings.iter().for_each(|w| log::warn!("{w}"));
    (parsed.cli, parsed.node)
}

/// A command line, parsed.
struct Parsed {
    cli: Cli,
    node: Node,
    /// The node name for log lines (`ros2bag_rs` for the file tools).
    node_name: String,
    ros: Option<RosArguments>,
    /// What `--ros-args` held that is taken differently here.
    warnings: Vec<String>,
}

/// Parses `args` (clap exits on `--help` and on flags it refuses).
fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed> {
    let (own, ros) = split_ros_args(args);
    let (argv, warnings, ros) = resolve(own, &ros)?;
    let command = Cli::command();
    let matches = command.clone().get_matches_from(argv);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let (verb, verb_matches) = matches.subcommand().unwrap_or(("", &matches));
    let (parameters, node_name) = match (parameter_table(verb), command.find_subcommand(verb)) {
        (Some(table), Some(verb_command)) => (
            declared_parameters(table, verb_command, verb_matches),
            verb_matches.get_one::<String>("node_name").cloned(),
        ),
        _ => (Vec::new(), None),
    };
    Ok(Parsed {
        cli,
        node: Node {
            namespace: ros.as_ref().map_or("/", |r| &r.namespace).to_string(),
            parameters,
        },
        node_name: node_name.unwrap_or_else(|| "ros2bag_rs".to_string()),
        ros,
        warnings,
    })
}

/// rosbag2's node parameters of a verb's node, for the verbs that run one.
fn parameter_table(verb: &str) -> Option<&'static ParamTable> {
    match verb {
        "play" | "burst" => Some(&PLAY_PARAMETERS),
        "record" => Some(&RECORD_PARAMETERS),
        _ => None,
    }
}

/// The command line with `--ros-args` turned into flags, for the verbs that run a node, with
/// the warnings of that and the resolved ROS arguments.
fn resolve(
    own: Vec<String>,
    ros: &RosArgs,
) -> Result<(Vec<String>, Vec<String>, Option<RosArguments>)> {
    if ros.is_empty() {
        return Ok((own, Vec::new(), None));
    }
    let mut words = own.iter().skip(1);
    let mut verb = None;
    while let Some(word) = words.next() {
        match word.as_str() {
            "--log-level" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => {
                verb = Some(w);
                break;
            }
        }
    }
    let Some(table) = verb.and_then(parameter_table) else {
        anyhow::bail!("--ros-args apply to play, burst and record only")
    };
    let resolved = ros.resolve(&own, table)?;
    let (argv, warnings) = command_line(&resolved, own, table)?;
    Ok((argv, warnings, Some(resolved)))
}

#[cfg(test)]
mod tests {
    use rosbag2_rs_transport::{PlayerNode, RecorderNode};

    use super::*;

    /// The parameters a node binary started with `args` declares.
    fn node_parameters<C: rosbag2_rs_transport::NodeCommand>(
        args: &[&str],
    ) -> Vec<DeclaredParameter> {
        let (own, ros) = split_ros_args(args.iter().map(|s| s.to_string()));
        let (argv, _) = command_line(
            &ros.resolve(&own, &C::PARAMETERS).unwrap(),
            own,
            &C::PARAMETERS,
        )
        .unwrap();
        let command = C::command();
        let matches = command.clone().get_matches_from(argv);
        declared_parameters(&C::PARAMETERS, &command, &matches)
    }

    fn verb_parameters(args: &[&str]) -> Vec<DeclaredParameter> {
        parse(args.iter().map(|s| s.to_string()))
            .unwrap()
            .node
            .parameters
    }

    #[test]
    fn play_burst_and_record_declare_the_parameters_of_the_nodes() {
        let player = node_parameters::<PlayerNode>(&["player", "bag", "--rate", "2"]);
        assert!(player.iter().any(|p| p.name == "play.rate"));
        assert_eq!(
            verb_parameters(&["ros2bag-rs", "play", "bag", "--rate", "2"]),
            player
        );
        assert_eq!(
            verb_parameters(&["ros2bag-rs", "burst", "bag", "--rate", "2"]),
            player
        );
        let recorder = node_parameters::<RecorderNode>(&[
            "recorder",
            "-a",
            "--ros-args",
            "-p",
            "record.rmw_serialization_format:=cdr",
        ]);
        assert_eq!(
            verb_parameters(&[
                "ros2bag-rs",
                "record",
                "-a",
                "--ros-args",
                "-p",
                "record.rmw_serialization_format:=cdr",
            ]),
            recorder
        );
        assert!(verb_parameters(&["ros2bag-rs", "info", "bag"]).is_empty());
    }
}
