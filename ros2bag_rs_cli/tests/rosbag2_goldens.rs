//! rosbag2's own tests and golden behaviour, run through `ros2bag-rs` on rosbag2's resources
//! (copied unchanged, see `rosbag2_rs_storage/tests/data/rosbag2/README.md`): the `convert` cases
//! of rosbag2_transport's `test_rewrite.cpp` and rosbag2_py's `test_convert.py` (Lyrical 0.33.3),
//! each written as the options files `ros2 bag convert` reads, on the `rewriter_a` and
//! `rewriter_b` bags of both storages, with rosbag2's expected results; and `info`'s
//! `--topic-name` and `--verbose` as rosbag2_py's `Info` prints them.
//!
//! `rewriter_a`: `a_empty` (test_msgs/Empty, 100 messages, 2 offered QoS profiles),
//! `b_basictypes` (test_msgs/BasicTypes, 50); `rewriter_b`: `a_empty` (25, 1 profile),
//! `c_strings` (test_msgs/Strings, 50).

use std::path::{Path, PathBuf};
use std::process::Command;

use rosbag2_rs_storage::{BagMetadata, SequentialReader};

const STORAGES: [&str; 2] = ["mcap", "sqlite3"];

fn resource(storage: &str, bag: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rosbag2_rs_storage/tests/data/rosbag2/rewriter")
        .join(storage)
        .join(bag)
}

/// Runs `ros2bag-rs VERB ARGS`; its stdout, or its stderr on failure.
fn run(verb: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_ros2bag-rs"))
        .arg(verb)
        .args(args)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Runs `ros2bag-rs convert ARGS`; its stderr on failure.
fn convert(args: &[&str]) -> Result<(), String> {
    run("convert", args).map(drop)
}

/// Writes `text` to `dir/name` and returns its path as a string.
fn file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Topic names and message counts of the bag at `uri`, by its metadata.
fn counts(uri: &Path) -> (u64, Vec<(String, u64)>) {
    let metadata = BagMetadata::read_from_dir(uri).unwrap();
    let topics = metadata
        .topics_with_message_count
        .iter()
        .map(|t| (t.topic_metadata.name.clone(), t.message_count))
        .collect();
    (metadata.message_count, topics)
}

/// One output bag `dir/name` in `storage` with the further keys `keys` (YAML lines under the
/// entry), in the options file `dir/out.yaml`: the bag's path and the file's.
fn output(dir: &Path, name: &str, storage: &str, keys: &str) -> (PathBuf, String) {
    let out = dir.join(name);
    let text = format!(
        "output_bags:\n- uri: {}\n  storage_id: {storage}\n{keys}",
        out.display()
    );
    (out, file(dir, "out.yaml", &text))
}

fn input(storage: &str, bag: &str) -> String {
    resource(storage, bag).display().to_string()
}

#[test]
fn test_noop_rewrite() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let (out, options) = output(dir.path(), "unchanged", storage, "  all_topics: true\n");
        convert(&["-i", &input(storage, "rewriter_a"), "-o", &options]).unwrap();
        let (total, topics) = counts(&out);
        assert_eq!((total, topics.len()), (100 + 50, 2), "{storage}");
        let metadata = BagMetadata::read_from_dir(&out).unwrap();
        assert_eq!(metadata.storage_identifier, storage);
        for topic in &metadata.topics_with_message_count {
            assert_eq!(topic.topic_metadata.serialization_format, "cdr");
        }
    }
}

#[test]
fn test_merge() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let (out, options) = output(dir.path(), "merged", storage, "  all_topics: true\n");
        let (a, b) = (input(storage, "rewriter_a"), input(storage, "rewriter_b"));
        // The long spellings of `ros2 bag convert`'s flags.
        convert(&["--input", &a, "--input", &b, "--output-options", &options]).unwrap();
        let (total, topics) = counts(&out);
        assert_eq!((total, topics.len()), (100 + 50 + 50 + 25, 3), "{storage}");
        // The offered QoS profiles of a topic in both inputs are concatenated.
        let metadata = BagMetadata::read_from_dir(&out).unwrap();
        let a_empty = metadata.topic("a_empty").unwrap();
        assert_eq!(a_empty.topic_metadata.offered_qos_profiles.len(), 3);
    }
}

#[test]
fn test_filter_split() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let (split1, split2) = (dir.path().join("split1"), dir.path().join("split2"));
        let options = format!(
            "output_bags:\n\
             - uri: {}\n  storage_id: {storage}\n  all_topics: true\n  exclude_regex: basic\n\
             - uri: {}\n  storage_id: {storage}\n  all_topics: false\n  topics: [b_basictypes]\n",
            split1.display(),
            split2.display()
        );
        let options = file(dir.path(), "out.yaml", &options);
        convert(&["-i", &input(storage, "rewriter_a"), "-o", &options]).unwrap();
        assert_eq!(counts(&split1), (100, vec![("a_empty".into(), 100)]));
        assert_eq!(counts(&split2), (50, vec![("b_basictypes".into(), 50)]));
    }
}

#[test]
fn test_compress() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let keys = "  all_topics: true\n  compression_mode: file\n  compression_format: zstd\n";
        let (out, options) = output(dir.path(), "compressed", storage, keys);
        convert(&["-i", &input(storage, "rewriter_a"), "-o", &options]).unwrap();
        let metadata = BagMetadata::read_from_dir(&out).unwrap();
        let first = out.join(&metadata.relative_file_paths[0]);
        assert_eq!(first.extension().unwrap(), "zstd");
        assert!(first.is_file());
    }
}

/// rosbag2's input `start_time_ns` / `end_time_ns` (ros2/rosbag2#2325): the window from the
/// receive time of the quarter to that of the three-quarter `a_empty` message of `rewriter_a`,
/// both inclusive, given in `--input-options`.
#[test]
fn test_cut_single_topic_with_start_and_end_time() {
    for storage in STORAGES {
        let a = resource(storage, "rewriter_a");
        let times: Vec<i64> = SequentialReader::open(&a)
            .unwrap()
            .map(Result::unwrap)
            .filter(|m| &*m.topic == "a_empty")
            .map(|m| m.recv_timestamp)
            .collect();
        assert!(times.len() >= 4);
        let (start, end) = (times[times.len() / 4], times[times.len() * 3 / 4]);
        let expected = times.iter().filter(|t| (start..=end).contains(t)).count() as u64;
        assert!(
            0 < expected && expected < times.len() as u64,
            "{start} {end}"
        );
        let dir = tempfile::tempdir().unwrap();
        let inputs = format!(
            "input_bags:\n- uri: {}\n  storage_id: {storage}\n  start_time_ns: {start}\n  \
             end_time_ns: {end}\n",
            a.display()
        );
        let inputs = file(dir.path(), "in.yaml", &inputs);
        let keys = "  all_topics: false\n  topics: [a_empty]\n";
        let (out, options) = output(dir.path(), "cut_window", storage, keys);
        convert(&["--input-options", &inputs, "-o", &options]).unwrap();
        assert_eq!(counts(&out), (expected, vec![("a_empty".into(), expected)]));
    }
}

/// rosbag2_py's `test_basic_convert` on its bags (the same as `rewriter_a`/`_b`), with the
/// outputs' contents checked too: `topics: [a_empty]`, and the old `exclude` key.
#[test]
fn test_basic_convert() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (
            dir.path().join("converted_1"),
            dir.path().join("converted_2"),
        );
        let options = format!(
            "output_bags:\n\
             - uri: {}\n  storage_id: {storage}\n  topics: [a_empty]\n\
             - uri: {}\n  storage_id: {storage}\n  exclude: \".*empty.*\"\n  all_topics: true\n",
            one.display(),
            two.display()
        );
        let options = file(dir.path(), "simple_convert.yml", &options);
        let (a, b) = (input(storage, "rewriter_a"), input(storage, "rewriter_b"));
        convert(&["-i", &a, "-i", &b, "-o", &options]).unwrap();
        assert_eq!(counts(&one), (125, vec![("a_empty".into(), 125)]));
        let (total, mut topics) = counts(&two);
        topics.sort();
        let expected = vec![("b_basictypes".into(), 50), ("c_strings".into(), 50)];
        assert_eq!((total, topics), (100, expected));
    }
}

/// rosbag2_py's `test_input_options_yaml_parsing` and `test_input_options_yaml_missing_uri`.
#[test]
fn test_input_options_yaml() {
    let storage = "mcap";
    let dir = tempfile::tempdir().unwrap();
    let inputs = format!(
        "input_bags:\n- uri: {}\n  storage_id: {storage}\n- uri: {}\n  storage_id: {storage}\n",
        input(storage, "rewriter_a"),
        input(storage, "rewriter_b")
    );
    let inputs = file(dir.path(), "input_options.yml", &inputs);
    let keys = "  all_topics: true\n  all_services: true\n";
    let (out, options) = output(dir.path(), "converted_from_input_yaml", storage, keys);
    convert(&["--input-options", &inputs, "-o", &options]).unwrap();
    assert_eq!(counts(&out).0, 225);
    let bad = file(
        dir.path(),
        "bad_input.yml",
        "input_bags:\n- storage_id: mcap\n",
    );
    let err = convert(&["--input-options", &bad, "-o", &options]).unwrap_err();
    assert!(
        err.contains("StorageOptions must specify a non-empty 'uri'"),
        "{err}"
    );
}

/// An output's `max_bagfile_size` with `max_bag_files`: rosbag2's writer deletes the oldest
/// files as it splits, so the bag ends with the last ones (the file being written counted).
#[test]
fn output_max_bag_files_keeps_the_last_files() {
    let dir = tempfile::tempdir().unwrap();
    let keys = "  all_topics: true\n  storage_preset_profile: fastwrite\n  \
                max_bagfile_size: 1\n  max_bag_files: 2\n";
    let (out, options) = output(dir.path(), "kept", "mcap", keys);
    convert(&["-i", &input("mcap", "rewriter_a"), "-o", &options]).unwrap();
    let metadata = BagMetadata::read_from_dir(&out).unwrap();
    assert_eq!(metadata.relative_file_paths.len(), 2);
    let kept: Vec<u64> = metadata
        .relative_file_paths
        .iter()
        .map(|p| rosbag2_rs_storage::split_index_key(Path::new(p)).1)
        .collect();
    assert!(kept[0] > 100 && kept[1] == kept[0] + 1, "{kept:?}");
}

/// An input's `storage_config_uri` applies to reading it: SQLite3 `read: pragmas` run on its
/// database (one the read-only database refuses is an error naming the file).
#[test]
fn input_storage_config_uri_applies_to_reading() {
    let dir = tempfile::tempdir().unwrap();
    let options = format!(
        "output_bags:\n- uri: {}\n  all_topics: true\n",
        dir.path().join("out").display()
    );
    let options = file(dir.path(), "out.yaml", &options);
    for (pragma, works) in [("cache_size = -65536", true), ("user_version = 7", false)] {
        let config = file(
            dir.path(),
            "read.yaml",
            &format!("read:\n  pragmas: [\"{pragma}\"]\n"),
        );
        let inputs = format!(
            "input_bags:\n- uri: {}\n  storage_config_uri: {config}\n",
            input("sqlite3", "rewriter_a")
        );
        let inputs = file(dir.path(), "in.yaml", &inputs);
        let result = convert(&["--input-options", &inputs, "-o", &options]);
        let _ = std::fs::remove_dir_all(dir.path().join("out"));
        match result {
            Ok(()) => assert!(works, "{pragma}: taken"),
            Err(err) => {
                assert!(!works, "{pragma}: {err}");
                assert!(err.contains("rewriter_a_0.db3"), "{err}");
            }
        }
    }
}

/// rosbag2_py's `Info::print_output_topic_name_only`: the topic names, sorted by name, without
/// the service event topics (and action topics) of the bag.
#[test]
fn info_topic_name_prints_only_the_topic_names() {
    let bag = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rosbag2_rs_storage/tests/data/rosbag2/bag_with_topics_and_service_events.mcap");
    let bag = bag.to_str().unwrap();
    let reader = SequentialReader::open(Path::new(bag)).unwrap();
    let all: Vec<&str> = reader
        .topics()
        .iter()
        .map(|t| t.topic_metadata.name.as_str())
        .collect();
    assert!(
        all.iter().any(|t| t.ends_with("/_service_event")),
        "{all:?}"
    );
    for flag in ["--topic-name", "-t"] {
        let out = run("info", &[flag, bag]).unwrap();
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ["/events/write_split", "/test_topic1", "/test_topic2"],
            "{flag}"
        );
    }
}

/// rosbag2_py's verbose topic line: `Topic: | Type: | Count: | Size Contribution: |
/// Serialization Format:`, the size being the topic's payload bytes as `format_file_size` writes
/// them (whole bytes, else one decimal of KiB, MiB, ...).
#[test]
fn info_verbose_gives_each_topics_size_contribution() {
    fn format_file_size(bytes: u64) -> String {
        let (mut size, mut unit) = (bytes as f64, 0);
        while size >= 1024.0 && unit < 4 {
            size /= 1024.0;
            unit += 1;
        }
        let units = ["B", "KiB", "MiB", "GiB", "TiB"];
        match unit {
            0 => format!("{size:.0} B"),
            _ => format!("{size:.1} {}", units[unit]),
        }
    }
    for storage in STORAGES {
        let bag = resource(storage, "rewriter_b");
        let mut sizes = std::collections::BTreeMap::<String, (u64, u64)>::new();
        for message in SequentialReader::open(&bag).unwrap() {
            let message = message.unwrap();
            let entry = sizes.entry(message.topic.to_string()).or_default();
            *entry = (entry.0 + 1, entry.1 + message.data.len() as u64);
        }
        let types = [
            ("a_empty", "test_msgs/msg/Empty"),
            ("c_strings", "test_msgs/msg/Strings"),
        ];
        for flag in ["--verbose", "-v"] {
            let out = run("info", &[flag, bag.to_str().unwrap()]).unwrap();
            for (topic, type_name) in types {
                let (count, bytes) = sizes[topic];
                let line = format!(
                    "Topic: {topic} | Type: {type_name} | Count: {count} | Size Contribution: {} \
                     | Serialization Format: cdr",
                    format_file_size(bytes)
                );
                assert!(
                    out.contains(&line),
                    "{storage} {flag}: no '{line}' in\n{out}"
                );
            }
        }
    }
}

/// rosbag2_py's `generate_sorted_idx`: `--sort name|type|count`, each ascending (`rewriter_a`:
/// `a_empty` test_msgs/msg/Empty 100, `b_basictypes` test_msgs/msg/BasicTypes 50).
#[test]
fn info_sort_orders_topics_as_rosbag2_does() {
    let bag = input("mcap", "rewriter_a");
    for (sort, expected) in [
        ("name", ["a_empty", "b_basictypes"]),
        ("type", ["b_basictypes", "a_empty"]),
        ("count", ["b_basictypes", "a_empty"]),
    ] {
        let out = run("info", &["-t", "--sort", sort, &bag]).unwrap();
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "--sort {sort}");
    }
}
