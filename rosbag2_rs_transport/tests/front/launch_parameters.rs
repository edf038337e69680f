//! Every rosbag2 node parameter the recorder and the player take changes what they do: given as
//! `--ros-args -p NAME:=VALUE` (as `ros2 launch` passes them), each one yields other options than
//! the same command without it. A parameter that were silently ignored would yield the same
//! options and fail here. Those whose effect lies outside the options (keyboard, node name) are
//! checked on the parsed flags instead.

use clap::Parser;
use rosbag2_rs_transport::{
    split_ros_args, Param, PlayArgs, RecordArgs, PLAY_PARAMETERS, RECORD_PARAMETERS,
};

#[derive(Parser)]
struct Record {
    #[command(flatten)]
    args: RecordArgs,
}

#[derive(Parser)]
struct Play {
    #[command(flatten)]
    args: PlayArgs,
}

/// A value of `name` that differs from its default (`kind` picks the shape).
fn sample(name: &str, kind: Param, dir: &std::path::Path) -> String {
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    match name {
        "storage.uri" => dir.join("elsewhere").display().to_string(),
        "storage.storage_id" => "sqlite3".into(),
        "storage.storage_preset_profile" => "zstd_fast".into(),
        "storage.storage_config_uri" => file("config.yaml", "chunkSize: 1000000\n"),
        "storage.custom_data" => "['k=v']".into(),
        "record.qos_profile_overrides_path" | "play.qos_profile_overrides_path" => file(
            "qos.yaml",
            "/base:\n  reliability: best_effort\n  durability: volatile\n  history: keep_last\n  depth: 3\n",
        ),
        "record.compression_mode" => "file".into(),
        "record.compression_format" => "zstd".into(),
        "record.compression_threads_priority" => "5".into(),
        "record.regex" | "record.exclude_regex" | "play.regex_to_filter" | "play.exclude_regex_to_filter" => {
            "^/x".into()
        }
        "record.throttle" => "['/base:=5']".into(),
        "record.repeat_transient_local" => "['/base=2']".into(),
        "play.message_order" => "SENT_TIMESTAMP".into(),
        "play.service_requests_source" => "CLIENT_INTROSPECTION".into(),
        "play.progress_bar_update_rate" => "7".into(),
        "play.topic_qos_profile_overrides_path" => file("qos.yaml", "/base:\n  depth: 3\n"),
        _ => match kind {
            Param::Switch(_) => "true".into(),
            Param::List(_) => "['/a', '/b']".into(),
            // Given as `.sec`/`.nsec` by `with_parameter`.
            Param::Seconds(_) | Param::Nanoseconds(_) | Param::Milliseconds(_) => String::new(),
            _ => "3".into(),
        },
    }
}

/// The command line `own` plus `-p name:=value` (durations as `.sec`/`.nsec`), as the program
/// sees it after the ROS arguments became flags.
fn with_parameter(
    own: &[&str],
    name: &str,
    kind: Param,
    value: &str,
    table: &rosbag2_rs_transport::ParamTable,
) -> Vec<String> {
    let mut args: Vec<String> = own.iter().map(|a| a.to_string()).collect();
    args.push("--ros-args".into());
    match kind {
        Param::Seconds(_) | Param::Nanoseconds(_) | Param::Milliseconds(_) => {
            args.extend(["-p".into(), format!("{name}.sec:=3")]);
            args.extend(["-p".into(), format!("{name}.nsec:=0")]);
        }
        _ => args.extend(["-p".into(), format!("{name}:={value}")]),
    }
    let (own, ros) = split_ros_args(args);
    let (argv, warnings) = ros.command_line(own, table).unwrap();
    assert!(warnings.is_empty(), "{name}: {warnings:?}");
    argv
}

/// Parameters whose effect is outside the options (checked on the parsed flags): the terminal,
/// the wait after playback, a storage the files are checked against, and loans (messages are
/// never loaned here: taken for launch files, nothing to change).
const OUTSIDE_OPTIONS: &[&str] = &[
    "record.disable_keyboard_controls",
    "play.disable_keyboard_controls",
    "play.wait_acked_timeout",
    "play.progress_bar_update_rate",
    "play.progress_bar_separation_lines",
    "play.storage_id",
    "storage.storage_id",
    "play.disable_loan_message",
];

/// Gives each supported parameter of `table` to the command `own` (without its last arguments
/// from index `own.1` for `storage.uri`, which replaces them), with the value `value` picks;
/// `options` gives the parsed flags and options of a command line, which must differ from
/// those of `own` alone (the flags for [`OUTSIDE_OPTIONS`]). Returns how many were checked.
fn check_every_parameter(
    table: &rosbag2_rs_transport::ParamTable,
    own: (&[&str], usize),
    value: impl Fn(&str, Param) -> String,
    options: impl Fn(&[String]) -> (String, String),
) -> usize {
    let (own, without_uri) = own;
    let base: Vec<String> = own.iter().map(|a| a.to_string()).collect();
    let (base_flags, base_options) = options(&base);
    let mut checked = 0;
    for &(name, kind) in table.params {
        match kind {
            // Taken and ignored, as rosbag2's node ignores it.
            Param::Unsupported | Param::Unused => continue,
            // One possible value: taken, and another is refused.
            Param::Only(only) => {
                let line = |value: &str| {
                    let parameter = format!("{name}:={value}");
                    let args = [own, &["--ros-args", "-p", &parameter]].concat();
                    split_ros_args(args.iter().map(|a| a.to_string()))
                        .1
                        .command_line(own.iter().map(|a| a.to_string()).collect(), table)
                };
                assert!(line(only).is_ok(), "{name}:={only} is refused");
                assert!(line("json").is_err(), "{name}:=json is accepted");
                checked += 1;
                continue;
            }
            _ => {}
        }
        let value = value(name, kind);
        let own = if name == "storage.uri" {
            &own[..without_uri]
        } else {
            own
        };
        let (flags, options) = options(&with_parameter(own, name, kind, &value, table));
        if OUTSIDE_OPTIONS.contains(&name) {
            assert_ne!(flags, base_flags, "{name}:={value} is ignored");
        } else {
            assert_ne!(options, base_options, "{name}:={value} changes nothing");
        }
        checked += 1;
    }
    checked
}

#[test]
fn every_recorder_parameter_changes_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bag");
    let out = out.to_str().unwrap();
    let own = ["recorder", "--topics", "/base", "-o", out];
    let options = |argv: &[String]| {
        let parsed = Record::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        (
            format!("{:?}", parsed.args),
            format!("{:?}", parsed.args.to_options().unwrap()),
        )
    };
    // The output given by `storage.uri` instead of `-o`.
    let checked = check_every_parameter(
        &RECORD_PARAMETERS,
        (&own, 3),
        |name, kind| sample(name, kind, dir.path()),
        options,
    );
    assert!(checked >= 40, "{checked} parameters");
}

/// A bag of `/base` (String) and `/clock`, two messages each.
fn small_bag(dir: &std::path::Path) -> std::path::PathBuf {
    use rosbag2_rs_storage::{BagWriter, BagWriterOptions, SerializedMessage, TopicMetadata};
    let uri = dir.join("small");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    for (topic, type_name) in [
        ("/base", "std_msgs/msg/String"),
        ("/clock", "rosgraph_msgs/msg/Clock"),
    ] {
        writer
            .create_topic(&TopicMetadata::new(topic, type_name), None)
            .unwrap();
        for t in [1_000_000_000, 2_000_000_000] {
            let data = vec![0u8, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
            writer
                .write(&SerializedMessage::new(topic.into(), t, data))
                .unwrap();
        }
    }
    writer.close().unwrap();
    uri
}

#[test]
fn every_player_parameter_changes_the_playback() {
    let dir = tempfile::tempdir().unwrap();
    let bag = small_bag(dir.path());
    let bag = bag.to_str().unwrap();
    let own = ["player", bag];
    let options = |argv: &[String]| {
        let parsed = Play::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let options = parsed
            .args
            .options()
            .unwrap_or_else(|e| panic!("{argv:?}: {e:#}"));
        (format!("{:?}", parsed.args), format!("{options:?}"))
    };
    // The bag given by `storage.uri` instead of on the command line.
    let value = |name: &str, kind| match name {
        "storage.uri" => small_bag(&dir.path().join("other")).display().to_string(),
        "storage.storage_config_uri" => {
            let path = dir.path().join("read.yaml");
            std::fs::write(&path, "chunkSize: 1000000\n").unwrap();
            path.display().to_string()
        }
        "storage.storage_id" | "play.storage_id" => "mcap".into(),
        _ => sample(name, kind, dir.path()),
    };
    let checked = check_every_parameter(&PLAY_PARAMETERS, (&own, 1), value, options);
    assert!(checked >= 30, "{checked} parameters");
}

/// The parameters rosbag2 Kilted and Lyrical added (issue 35) are taken, so the tests above
/// check them: none is missing or marked unsupported.
#[test]
fn the_kilted_and_lyrical_parameters_are_taken() {
    let missing: Vec<&str> = [
        (&PLAY_PARAMETERS, "play.publish_service_request"),
        (&PLAY_PARAMETERS, "play.message_order"),
        (&PLAY_PARAMETERS, "play.progress_bar_update_rate"),
        (&PLAY_PARAMETERS, "play.progress_bar_separation_lines"),
        (&PLAY_PARAMETERS, "play.send_actions_as_client"),
        (&PLAY_PARAMETERS, "play.actions_to_filter"),
        (&PLAY_PARAMETERS, "play.exclude_actions_to_filter"),
        (&RECORD_PARAMETERS, "record.all_actions"),
        (&RECORD_PARAMETERS, "record.actions"),
        (&RECORD_PARAMETERS, "record.exclude_actions"),
        (&RECORD_PARAMETERS, "record.repeat_transient_local"),
        (&RECORD_PARAMETERS, "record.repeat_all_transient_local"),
        (&RECORD_PARAMETERS, "record.statistics_max_publishing_rate"),
        (&RECORD_PARAMETERS, "storage.max_bag_files"),
        (&RECORD_PARAMETERS, "storage.max_cache_duration"),
    ]
    .into_iter()
    .filter(|(table, name)| matches!(table.find(name), None | Some(Param::Unsupported)))
    .map(|(_, name)| name)
    .collect();
    assert!(missing.is_empty(), "not taken: {missing:?}");
}
