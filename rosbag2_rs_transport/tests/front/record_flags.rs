//! `ros2 bag record`'s flags turned into the recorder's options: snapshot limits, split
//! sizes, custom data and storage, checked as rosbag2 checks them.

use rosbag2_rs_transport::RecordArgs;
use rosbag2_rs_transport_lib::{RecordOptions, SnapshotLimits};

fn limits(max_bytes_per_topic: u64, max_duration_ns: i64) -> SnapshotLimits {
    SnapshotLimits {
        max_bytes_per_topic,
        max_duration_ns,
    }
}

#[derive(clap::Parser)]
struct Args {
    #[command(flatten)]
    args: RecordArgs,
}

fn parse(args: &[&str]) -> anyhow::Result<RecordOptions> {
    use clap::Parser;
    let args = Args::try_parse_from(std::iter::once("record").chain(args.iter().copied()))?;
    args.args.to_options()
}

#[test]
fn command_line_limits_are_validated() {
    // rosbag2's snapshot mode: the cache is the ring, one bag, a file per snapshot.
    let o = parse(&["--snapshot-mode", "-a", "-o", "x"]).unwrap();
    assert_eq!(o.snapshot, None);
    assert!(o.snapshot_files);
    assert_eq!(o.max_cache_size, 100 * 1024 * 1024, "rosbag2's default");
    let o = parse(&[
        "--snapshot",
        "-a",
        "--max-cache-size",
        "0",
        "--max-cache-duration",
        "5",
    ]);
    assert_eq!(o.unwrap().max_cache_duration, 5_000_000_000);
    let err = |args: &[&str]| parse(args).err().unwrap().to_string();
    assert!(err(&["--snapshot-mode", "-a", "--max-cache-size", "0"])
        .contains("In snapshot mode, either the max_cache_duration or max_cache_size"));
    // -b and -d do not split it (rosbag2 ignores them in snapshot mode); --max-bag-files keeps
    // the last snapshots.
    let o = parse(&[
        "--snapshot-mode",
        "-a",
        "-b",
        "100000000",
        "-d",
        "60",
        "--max-bag-files",
        "3",
    ])
    .unwrap();
    assert_eq!((o.max_bagfile_size, o.max_bagfile_duration), (0, 0));
    assert_eq!(o.retention.max_files, 3);
    // Per-topic buffers (the seed's design) when their limits are given.
    let o = parse(&["--snapshot", "-a", "--max-buffer-size", "5000000"]).unwrap();
    assert!(!o.snapshot_files);
    assert_eq!(o.snapshot, Some(limits(5_000_000, 0)));
    let o = parse(&[
        "--snapshot-mode",
        "/a",
        "--max-buffer-size",
        "10",
        "--max-buffer-duration",
        "1.5",
    ])
    .unwrap();
    assert_eq!(o.snapshot, Some(limits(10, 1_500_000_000)));
    assert_eq!(o.selection.topics, ["/a"]);
    assert!(err(&[
        "--snapshot",
        "-a",
        "--max-buffer-size",
        "0",
        "--max-buffer-duration",
        "0"
    ])
    .contains("--max-buffer-size or --max-buffer-duration"));
    // Non-positive: no limit on that axis; both off is an error.
    let o = parse(&[
        "--snapshot",
        "-a",
        "--max-buffer-duration",
        "-1",
        "--max-buffer-size",
        "100",
    ]);
    assert_eq!(o.unwrap().snapshot, Some(limits(100, 0)));
    let o = parse(&[
        "--snapshot",
        "-a",
        "--max-buffer-size",
        "-5",
        "--max-buffer-duration",
        "3",
    ]);
    assert_eq!(o.unwrap().snapshot, Some(limits(0, 3_000_000_000)));
    assert!(err(&["--snapshot", "-a", "--max-buffer-size", "-5"])
        .contains("--max-buffer-size or --max-buffer-duration"));
    assert!(err(&["--snapshot", "-a", "--max-buffer-duration", "-1"])
        .contains("--max-buffer-size or --max-buffer-duration"));
    assert!(err(&[
        "--snapshot",
        "-a",
        "--max-buffer-duration",
        "0",
        "--max-buffer-size",
        "-1"
    ])
    .contains("--max-buffer-size or --max-buffer-duration"));
    assert!(err(&["-a", "--max-buffer-size", "5"]).contains("need --snapshot"));
    assert!(err(&["-o", "x"]).contains("nothing to record"));
    assert!(err(&["-a", "--custom-data", "novalue"]).contains("KEY=VALUE"));
    let o = parse(&[
        "-a",
        "--custom-data",
        "k=v",
        "-d",
        "2.5",
        "-b",
        "1000",
        "-s",
        "sqlite3",
    ])
    .unwrap();
    assert_eq!(o.custom_data["k"], "v");
    assert_eq!(
        (o.max_bagfile_duration, o.max_bagfile_size),
        (2_500_000_000, 1000)
    );
    assert_eq!(o.storage.storage, rosbag2_rs_storage::StorageId::Sqlite3);
    assert!(o.uri.to_str().unwrap().starts_with("rosbag2_"));
    assert!(err(&["-a", "-s", "nope"]).contains("nope"));
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().to_str().unwrap();
    assert!(err(&["-a", "-o", existing]).contains("already exists"));
}

/// `--all` (Kilted: topics, services and actions), `-f/--serialization-format` (`cdr`, the only
/// format a ROS 2 middleware hands over), `--stats_max_publishing_rate`, and
/// `--static-topics-path` read from rosbag2's own test resource (rosbag2_transport
/// `test/resources/static_topics_list.yaml`, Lyrical).
#[test]
fn all_serialization_format_and_static_topics_as_rosbag2_reads_them() {
    let o = parse(&["--all"]).unwrap();
    let s = &o.selection;
    assert!(s.all && s.all_services && s.all_actions);
    for flag in ["-f", "--serialization-format"] {
        parse(&["-a", flag, "cdr"]).unwrap();
        let err = parse(&["-a", flag, "sensor_msgs_py"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("cdr"), "{flag}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("static_topics_list.yaml");
    std::fs::write(
        &path,
        "static_topics_and_types_list:\n  - [/topic_name1, test_msgs/msg/Strings]\n  \
         - [/topic_name2, test_msgs/msg/Strings]\n  - [/topic_name3, test_msgs/msg/Strings]",
    )
    .unwrap();
    // Lyrical's spelling, with underscores, and ours.
    for flag in ["--stats_max_publishing_rate", "--stats-max-publishing-rate"] {
        let o = parse(&["-a", flag, "5"]).unwrap();
        assert_eq!(o.stats_max_publishing_rate, 5.0, "{flag}");
    }
    let o = parse(&["--static-topics-path", path.to_str().unwrap()]).unwrap();
    let expected: Vec<(String, String)> = (1..=3)
        .map(|i| (format!("/topic_name{i}"), "test_msgs/msg/Strings".into()))
        .collect();
    assert_eq!(o.selection.static_topics, expected);
}
