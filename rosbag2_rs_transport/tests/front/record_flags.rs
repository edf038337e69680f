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
