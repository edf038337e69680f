//! The `--ros-args` part of a command line. `ros2 launch` (and `ros2 run ... --ros-args`) append
//! it to every node's arguments; the binaries take the node name and namespace from it and parse
//! only what comes before it as their own flags.

/// What the binaries use from `--ros-args`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RosArgs {
    /// `-r __node:=NAME`.
    pub node_name: Option<String>,
    /// `-r __ns:=NAMESPACE`.
    pub namespace: Option<String>,
}

/// Splits `args` at `--ros-args`: the program's own arguments, and the ROS arguments it uses.
/// Other ROS arguments (parameters, log settings, topic remaps) are ignored with a warning.
pub fn split_ros_args(args: impl IntoIterator<Item = String>) -> (Vec<String>, RosArgs) {
    let mut own = Vec::new();
    let mut ros = RosArgs::default();
    let mut args = args.into_iter();
    for arg in args.by_ref() {
        if arg == "--ros-args" {
            break;
        }
        own.push(arg);
    }
    let mut rest = args.peekable();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--" => {
                // Ends the ROS arguments; anything after is the program's again.
                own.extend(rest.by_ref());
            }
            "-r" | "--remap" => {
                let Some(rule) = rest.next() else { break };
                if let Some(name) = rule
                    .strip_prefix("__node:=")
                    .or_else(|| rule.strip_prefix("__name:="))
                {
                    ros.node_name = Some(name.to_string());
                } else if let Some(ns) = rule.strip_prefix("__ns:=") {
                    ros.namespace = Some(ns.to_string());
                } else {
                    log::warn!("ignoring ROS remap rule {rule}: use --remap for played topics");
                }
            }
            "-p" | "--param" | "--params-file" | "--log-level" | "-e" | "--enclave" => {
                let value = rest.next().unwrap_or_default();
                log::debug!("ignoring ROS argument {arg} {value}");
            }
            other => log::debug!("ignoring ROS argument {other}"),
        }
    }
    (own, ros)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
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
            "-p",
            "use_sim_time:=false",
        ]));
        assert_eq!(own, strings(&["player", "bag", "--rate", "2"]));
        assert_eq!(ros.node_name.as_deref(), Some("p1"));
        assert_eq!(ros.namespace.as_deref(), Some("/robot"));

        let (own, ros) = split_ros_args(strings(&["player", "bag"]));
        assert_eq!(own, strings(&["player", "bag"]));
        assert_eq!(ros, RosArgs::default());

        let (own, _) = split_ros_args(strings(&["p", "--ros-args", "-r", "a:=b", "--", "--loop"]));
        assert_eq!(own, strings(&["p", "--loop"]));
    }
}
