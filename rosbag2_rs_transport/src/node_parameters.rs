//! The parameters a node binary declares, for its parameter services (`ros2 param list`): each
//! rosbag2 parameter of its [`ParamTable`] that rosbag2-rs takes, with the value of the flag it
//! stands for as parsed (given on the command line, by `--ros-args -p`, or the flag's default).
//! A flag of a number is a parameter of that type; a duration is rosbag2's `.sec`/`.nsec` pair.

use std::any::TypeId;

use clap::{ArgMatches, Command};
use rosbag2_rs_interfaces::rcl_interfaces::msg::{parameter_type, ParameterValue};
use rosbag2_rs_transport_lib::{parse_value, DeclaredParameter};

use crate::ros_args::{Param, ParamTable};

/// The parameters of `table` with the values `matches` (parsed by `command`) holds.
pub fn declared(
    table: &ParamTable,
    command: &Command,
    matches: &ArgMatches,
) -> Vec<DeclaredParameter> {
    let mut out = Vec::new();
    for &(name, param) in table.params {
        let arg = match param {
            Param::Unsupported | Param::Unused => continue,
            Param::Only(value) => {
                out.push(DeclaredParameter {
                    name: name.to_string(),
                    value: ParameterValue::string(value),
                    description: format!("'{value}', the only value taken here"),
                });
                continue;
            }
            Param::Positional => command.get_positionals().next(),
            _ => param.flag().and_then(|flag| {
                let long = flag.trim_start_matches('-');
                command.get_arguments().find(|a| a.get_long() == Some(long))
            }),
        };
        let Some(arg) = arg else { continue };
        let values: Vec<String> = matches
            .try_get_raw(arg.get_id().as_str())
            .ok()
            .flatten()
            .map(|raw| raw.map(|v| v.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let text = values.last().map(String::as_str).unwrap_or_default();
        let description = match (arg.get_long(), arg.get_help()) {
            (Some(long), Some(help)) => format!("--{long}: {help}"),
            (None, Some(help)) => help.to_string(),
            (Some(long), None) => format!("--{long}"),
            (None, None) => String::new(),
        };
        let declare = |name: String, value| DeclaredParameter {
            name,
            value,
            description: description.clone(),
        };
        let nanos = match param {
            Param::Seconds(_) => text.parse::<f64>().map_or(0, |s| (s * 1e9).round() as i64),
            Param::Milliseconds(_) => text
                .parse::<f64>()
                .map_or(0, |ms| (ms * 1e6).round() as i64),
            Param::Nanoseconds(_) => text.parse::<i64>().unwrap_or(0),
            _ => {
                let value = match param {
                    Param::List(_) => ParameterValue::strings(values),
                    Param::Switch(_) => ParameterValue::bool(text == "true"),
                    _ => {
                        let value_type = value_type(arg.get_value_parser().type_id());
                        parse_value(value_type, text)
                            .unwrap_or_else(|| ParameterValue::string(text))
                    }
                };
                out.push(declare(name.to_string(), value));
                continue;
            }
        };
        // rosbag2 splits a duration into whole seconds and the nanoseconds left, both of the
        // duration's sign.
        let (sec, nsec) = (nanos / 1_000_000_000, nanos % 1_000_000_000);
        out.push(declare(format!("{name}.sec"), ParameterValue::integer(sec)));
        out.push(declare(
            format!("{name}.nsec"),
            ParameterValue::integer(nsec),
        ));
    }
    out
}

/// The parameter type of a flag whose parser gives values of type `id`.
fn value_type(id: impl PartialEq<TypeId>) -> u8 {
    if [
        TypeId::of::<f64>(),
        TypeId::of::<f32>(),
        TypeId::of::<rosbag2_rs_clock::PlaybackRate>(),
    ]
    .iter()
    .any(|t| id == *t)
    {
        parameter_type::DOUBLE
    } else if [
        TypeId::of::<u64>(),
        TypeId::of::<u32>(),
        TypeId::of::<u16>(),
        TypeId::of::<u8>(),
        TypeId::of::<usize>(),
        TypeId::of::<i64>(),
        TypeId::of::<i32>(),
    ]
    .iter()
    .any(|t| id == *t)
    {
        parameter_type::INTEGER
    } else if id == TypeId::of::<bool>() {
        parameter_type::BOOL
    } else {
        parameter_type::STRING
    }
}

#[cfg(test)]
mod tests {
    use rosbag2_rs_interfaces::rcl_interfaces::msg::parameter_type::*;

    use super::*;
    use crate::{split_ros_args, NodeCommand, PlayerNode, RecorderNode};

    /// The parameters a node binary started with `args` declares.
    fn parameters<C: NodeCommand>(args: &[&str]) -> Vec<DeclaredParameter> {
        let (own, ros) = split_ros_args(args.iter().map(|s| s.to_string()));
        let (argv, _) = ros.command_line(own, &C::PARAMETERS).unwrap();
        let command = C::command();
        let matches = command.clone().try_get_matches_from(argv).unwrap();
        declared(&C::PARAMETERS, &command, &matches)
    }

    fn value<'a>(parameters: &'a [DeclaredParameter], name: &str) -> &'a ParameterValue {
        &parameters
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("{name} is not declared"))
            .value
    }

    #[test]
    fn the_player_declares_what_it_was_given_and_the_defaults_with_their_types() {
        let p = parameters::<PlayerNode>(&[
            "player",
            "--loop",
            "--ros-args",
            "-p",
            "storage.uri:=/bags/run1",
            "-p",
            "play.rate:=2",
            "-p",
            "play.topics_to_filter:=[/a, /b]",
            "-p",
            "play.delay.sec:=1",
            "-p",
            "play.delay.nsec:=500000000",
        ]);
        assert_eq!(value(&p, "play.rate"), &ParameterValue::double(2.0));
        assert_eq!(value(&p, "play.loop"), &ParameterValue::bool(true));
        assert_eq!(value(&p, "play.start_paused"), &ParameterValue::bool(false));
        assert_eq!(
            value(&p, "play.topics_to_filter"),
            &ParameterValue::strings(vec!["/a".into(), "/b".into()])
        );
        assert_eq!(value(&p, "play.delay.sec"), &ParameterValue::integer(1));
        assert_eq!(
            value(&p, "play.delay.nsec"),
            &ParameterValue::integer(500_000_000)
        );
        assert_eq!(
            value(&p, "play.read_ahead_queue_size").value_type,
            INTEGER,
            "a number flag's default"
        );
        assert_eq!(
            value(&p, "storage.uri"),
            &ParameterValue::string("/bags/run1")
        );
        assert!(
            p.iter().all(|p| p.name != "play.node_prefix"),
            "a parameter rosbag2-rs does not take is not declared"
        );
        let rate = p.iter().find(|p| p.name == "play.rate").unwrap();
        assert!(
            rate.description.starts_with("--rate: "),
            "{}",
            rate.description
        );
    }

    #[test]
    fn every_parameter_a_node_takes_is_declared_once() {
        for (table, p) in [
            (
                PlayerNode::PARAMETERS,
                parameters::<PlayerNode>(&["player", "bag"]),
            ),
            (
                RecorderNode::PARAMETERS,
                parameters::<RecorderNode>(&["recorder", "-a"]),
            ),
        ] {
            let mut expected: Vec<String> = Vec::new();
            for (name, param) in table.params {
                match param {
                    Param::Unsupported | Param::Unused => {}
                    Param::Seconds(_) | Param::Nanoseconds(_) | Param::Milliseconds(_) => {
                        expected.extend([format!("{name}.sec"), format!("{name}.nsec")])
                    }
                    _ => expected.push(name.to_string()),
                }
            }
            let names: Vec<String> = p.iter().map(|p| p.name.clone()).collect();
            assert_eq!(names, expected, "{}", table.node);
            assert!(p.iter().all(|p| p.value.value_type != NOT_SET));
        }
    }
}
