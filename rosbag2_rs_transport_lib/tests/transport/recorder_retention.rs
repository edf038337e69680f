//! Unattended recording on the in-process backend and virtual time: retention of the newest
//! files (`--max-bag-files`, `--max-total-size`, `--max-total-duration`) with a
//! `metadata.yaml` that is true after every deletion, the file being written named in it, the
//! latched state at the start of every split file, and the free-space guard.

use crate::recorder_support;

use std::path::{Path, PathBuf};

use recorder_support::*;
use rosbag2_rs_storage::qos::Durability;
use rosbag2_rs_storage::{
    BagMetadata, QosProfile, Retention, SequentialReader, FILE_BEING_WRITTEN_KEY,
};
use rosbag2_rs_transport_lib::*;

const S: i64 = 1_000_000_000;

fn latched_publisher(node: &InProcessNode, topic: &str) -> Box<dyn RawPublisher> {
    let qos = QosProfile {
        durability: Durability::TransientLocal,
        depth: 1,
        ..Default::default()
    };
    node.create_publisher(topic, STRING, &qos).unwrap()
}

/// Every message of one storage file, read alone.
/// A recorder of every topic splitting each second under `retention`, with a publisher of
/// `/a`; the directory, bus and publishing node live as long as it.
struct Retained {
    _dir: tempfile::TempDir,
    _bus: InProcessBus,
    _talker: InProcessNode,
    clock: VirtualClock,
    a: Box<dyn RawPublisher>,
    bag: PathBuf,
    recorder: Recorder,
}

fn retained(retention: Retention) -> Retained {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let a = publisher(&talker, "/a", STRING);
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            max_bagfile_duration: S,
            retention,
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    Retained {
        _dir: dir,
        _bus: bus,
        _talker: talker,
        clock,
        a,
        bag,
        recorder,
    }
}

fn read_file(path: &Path) -> Vec<rosbag2_rs_storage::SerializedMessage> {
    let mut reader = SequentialReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(m) = reader.read_next().unwrap() {
        out.push(m);
    }
    out
}

/// Checks that `metadata.yaml` is true while recording: every listed file exists and holds
/// the counts listed, and the file being written is named and exists but is not listed.
fn check_live_metadata(bag: &Path) -> BagMetadata {
    let meta = metadata(bag);
    assert_eq!(meta.relative_file_paths.len(), meta.files.len());
    let mut total = 0;
    for (path, file) in meta.relative_file_paths.iter().zip(&meta.files) {
        let messages = read_file(&bag.join(path));
        assert_eq!(messages.len() as u64, file.message_count, "{path}");
        total += file.message_count;
    }
    assert_eq!(meta.message_count, total);
    let per_topic: u64 = meta
        .topics_with_message_count
        .iter()
        .map(|t| t.message_count)
        .sum();
    assert_eq!(per_topic, total, "per-topic counts match the files listed");
    let writing = &meta.custom_data[FILE_BEING_WRITTEN_KEY];
    assert!(bag.join(writing).exists(), "{writing}");
    assert!(!meta.relative_file_paths.contains(writing));
    meta
}

fn storage_files(bag: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(bag)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mcap"))
        .collect();
    files.sort_by_key(|n| rosbag2_rs_storage::split_index_key(Path::new(n)));
    files
}

/// One message per 250 ms on /a, files split every second: `--max-bag-files 3` keeps the three
/// newest files, the oldest deleted after each split, `metadata.yaml` true after each.
#[test]
fn retention_keeps_exactly_n_files_and_true_metadata() {
    let Retained {
        clock,
        a,
        bag,
        recorder,
        _dir,
        _bus,
        _talker,
    } = retained(Retention {
        max_files: 3,
        ..Default::default()
    });
    let mut sent = 0;
    for second in 0..10 {
        for quarter in 0..4 {
            clock.set(10 * S + second * S + quarter * S / 4);
            a.publish(&string_msg(&format!("{second}.{quarter}")))
                .unwrap();
            sent += 1;
        }
        recorder.flush().unwrap();
        if second >= 1 {
            let meta = check_live_metadata(&bag);
            assert!(meta.files.len() <= 2, "{} closed", meta.files.len());
            assert!(storage_files(&bag).len() <= 3);
        }
    }
    let summary = recorder.stop().unwrap();
    assert_eq!(summary.received(), sent);
    let meta = metadata(&bag);
    assert!(!meta.custom_data.contains_key(FILE_BEING_WRITTEN_KEY));
    assert_eq!(meta.relative_file_paths, storage_files(&bag));
    let indexes: Vec<u64> = meta
        .relative_file_paths
        .iter()
        .map(|p| rosbag2_rs_storage::split_index_key(std::path::Path::new(p)).1)
        .collect();
    assert_eq!(indexes, [7, 8, 9]);
    let messages = read_bag(&bag);
    assert_eq!(messages.len() as u64, meta.message_count);
    assert_eq!(meta.topic("/a").unwrap().message_count, 12);
    // The newest 12 messages, in order: only what retention deleted is missing.
    let expected: Vec<_> = (7..10)
        .flat_map(|s| (0..4).map(move |q| string_msg(&format!("{s}.{q}"))))
        .collect();
    assert_eq!(payloads_on(&messages, "/a"), expected);
}

/// `--max-total-duration` and `--max-total-size` bound the closed files.
#[test]
fn retention_by_total_duration_and_size() {
    for (retention, kept_closed) in [
        (
            Retention {
                max_total_duration: 2 * S + S / 2,
                ..Default::default()
            },
            // closed files span 0.75 s each, 1 s apart: 3 files span 2.75 s, 2 span 1.75 s
            2,
        ),
        (
            Retention {
                max_total_size: 1, // less than any file: only the file being written stays
                ..Default::default()
            },
            0,
        ),
    ] {
        let Retained {
            clock,
            a,
            bag,
            recorder,
            _dir,
            _bus,
            _talker,
        } = retained(retention);
        for second in 0..6 {
            for quarter in 0..4 {
                clock.set(10 * S + second * S + quarter * S / 4);
                a.publish(&string_msg("x")).unwrap();
            }
            recorder.flush().unwrap();
            if second >= 1 {
                let meta = check_live_metadata(&bag);
                assert_eq!(
                    meta.files.len(),
                    kept_closed.min(second as usize),
                    "{retention:?}"
                );
                if retention.max_total_duration > 0 {
                    assert!(meta.duration <= retention.max_total_duration);
                }
            }
        }
        recorder.stop().unwrap();
        let meta = metadata(&bag);
        assert_eq!(meta.relative_file_paths, storage_files(&bag));
        assert_eq!(read_bag(&bag).len() as u64, meta.message_count);
    }
}

/// Each split file, read alone, starts with the latest message of every transient-local topic
/// at its original time; `repeat_latched: false` (`--no-repeat-latched`) turns it off.
#[test]
fn every_split_file_starts_with_the_latched_state() {
    for repeat in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (bus, clock) = virtual_bus();
        let talker = bus.node("talker", "/").unwrap();
        let tf = latched_publisher(&talker, "/tf_static");
        let description = latched_publisher(&talker, "/robot_description");
        let a = publisher(&talker, "/a", STRING);
        clock.set(S);
        tf.publish(&string_msg("tf 1")).unwrap();
        description.publish(&string_msg("urdf")).unwrap();
        // The recorder joins late: it receives both at its start, 2 s.
        clock.set(2 * S);
        let bag = dir.path().join("bag");
        let recorder = start(
            &bus,
            "rosbag2_recorder",
            RecordOptions {
                max_bagfile_duration: S,
                repeat_latched: repeat,
                ..options(bag.clone(), TopicSelection::all())
            },
        );
        for i in 0..16 {
            clock.set(2 * S + i * S / 4);
            if i == 6 {
                tf.publish(&string_msg("tf 2")).unwrap(); // a new latest value
            }
            a.publish(&string_msg(&format!("a{i}"))).unwrap();
        }
        recorder.stop().unwrap();
        let meta = metadata(&bag);
        assert_eq!(meta.files.len(), 4);
        for (n, path) in meta.relative_file_paths.iter().enumerate() {
            let messages = read_file(&bag.join(path));
            let latched: Vec<(&str, i64)> = messages
                .iter()
                .take_while(|m| &*m.topic != "/a")
                .map(|m| (&*m.topic, m.recv_timestamp))
                .collect();
            let own: Vec<_> = messages.iter().filter(|m| &*m.topic == "/a").collect();
            assert_eq!(own.len(), 4, "{path}");
            if n == 0 {
                // The first file has them as received (the recorder's late joining
                // subscription gets them at its start).
                assert_eq!(latched.len(), 2, "{path}: {latched:?}");
                continue;
            }
            if !repeat {
                assert!(latched.is_empty(), "{path}: {latched:?}");
                continue;
            }
            // The latest value when the file opened ("tf 2" came at 3.5 s, in file 1), at its
            // original time.
            let (expected_tf, tf_time) = if n == 1 {
                ("tf 1", 2 * S)
            } else {
                ("tf 2", 3 * S + S / 2)
            };
            assert_eq!(latched.len(), 2, "{path}: {latched:?}");
            assert!(
                latched.contains(&("/robot_description", 2 * S)),
                "{latched:?}"
            );
            assert!(latched.contains(&("/tf_static", tf_time)), "{latched:?}");
            let tf_value = payloads_on(&messages, "/tf_static");
            assert_eq!(tf_value[0], string_msg(expected_tf), "{path}");
        }
        // The counts in metadata.yaml are what the files hold, repeats included.
        assert_eq!(read_bag(&bag).len() as u64, meta.message_count);
    }
}

/// `repeat_topics` (rosbag2 Lyrical's `--repeat-transient-local /a=2`): each split file starts
/// with the latest messages of the topics named, as many as their depth, at their original
/// times, and with nothing of the other transient-local topics.
#[test]
fn named_topics_are_repeated_to_their_depth_and_only_they() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let tf = latched_publisher(&talker, "/tf_static");
    let a = publisher(&talker, "/a", STRING);
    clock.set(S);
    tf.publish(&string_msg("tf")).unwrap();
    clock.set(2 * S); // the recorder receives it at its start
    let bag = dir.path().join("bag");
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            max_bagfile_duration: S,
            repeat_topics: [("a".to_string(), 2)].into(),
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    for i in 0..8 {
        clock.set(2 * S + i * S / 4);
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
    }
    recorder.stop().unwrap();
    let meta = metadata(&bag);
    let files: Vec<Vec<(String, i64)>> = meta
        .relative_file_paths
        .iter()
        .map(|path| {
            read_file(&bag.join(path))
                .iter()
                .map(|m| {
                    let text = String::from_utf8_lossy(&m.data[8..m.data.len() - 1]).into_owned();
                    (text, m.recv_timestamp)
                })
                .collect()
        })
        .collect();
    let at = |i: i64| 2 * S + i * S / 4;
    let file = |list: &[(&str, i64)]| -> Vec<(String, i64)> {
        list.iter().map(|(t, n)| (t.to_string(), *n)).collect()
    };
    assert_eq!(
        files,
        [
            file(&[
                ("tf", 2 * S),
                ("a0", at(0)),
                ("a1", at(1)),
                ("a2", at(2)),
                ("a3", at(3))
            ]),
            file(&[
                ("a2", at(2)),
                ("a3", at(3)),
                ("a4", at(4)),
                ("a5", at(5)),
                ("a6", at(6)),
                ("a7", at(7))
            ]),
        ]
    );
}

#[test]
fn every_latched_topic_is_repeated_to_the_depth_asked_and_named_ones_to_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let (bus, clock) = virtual_bus();
    let talker = bus.node("talker", "/").unwrap();
    let tf = latched_publisher(&talker, "/tf_static");
    let a = publisher(&talker, "/a", STRING);
    let bag = dir.path().join("bag");
    clock.set(2 * S);
    let recorder = start(
        &bus,
        "rosbag2_recorder",
        RecordOptions {
            max_bagfile_duration: S,
            repeat_topics: [("a".to_string(), 1)].into(),
            repeat_all_transient_local: Some(2),
            ..options(bag.clone(), TopicSelection::all())
        },
    );
    let at = |i: i64| 2 * S + i * S / 4;
    for i in 0..3 {
        clock.set(at(i));
        tf.publish(&string_msg(&format!("tf{i}"))).unwrap();
        a.publish(&string_msg(&format!("a{i}"))).unwrap();
    }
    clock.set(at(5));
    a.publish(&string_msg("a5")).unwrap();
    recorder.stop().unwrap();
    let second = &metadata(&bag).relative_file_paths[1];
    let mut texts: Vec<String> = read_file(&bag.join(second))
        .iter()
        .map(|m| String::from_utf8_lossy(&m.data[8..m.data.len() - 1]).into_owned())
        .collect();
    texts.sort();
    // The latched topic's latest two, the named topic's latest one, and the new message.
    assert_eq!(texts, ["a2", "a5", "tf1", "tf2"]);
}

/// The free-space guard, on a real small file system (tmpfs, needs root: skipped otherwise):
/// recording stops with the bag closed and readable, before the disk is full; under retention
/// the oldest files are deleted instead and recording goes on.
#[test]
fn min_free_space_stops_cleanly_on_a_small_disk() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("disk");
    std::fs::create_dir(&mount).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(&mount)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs (not root?)");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mount.clone());
    for retention in [false, true] {
        let (bus, clock) = virtual_bus();
        let talker = bus.node("talker", "/").unwrap();
        let a = publisher(&talker, "/a", STRING);
        let bag = mount.join(if retention { "kept" } else { "stopped" });
        let recorder = start(
            &bus,
            "rosbag2_recorder",
            RecordOptions {
                max_bagfile_size: 1 << 20,
                min_free_space: 3 << 20,
                retention: Retention {
                    max_files: if retention { 1000 } else { 0 },
                    ..Default::default()
                },
                ..options(bag.clone(), TopicSelection::all())
            },
        );
        let big = payload(100_000, 7);
        let mut published = 0;
        for i in 0..200 {
            clock.set(10 * S + i * S / 10);
            a.publish(&big).unwrap();
            published += 1;
            recorder.flush().ok();
            if recorder.failure().is_some() {
                break;
            }
        }
        let free = rosbag2_rs_storage::free_space(&mount).unwrap();
        let result = recorder.stop();
        let messages = read_bag(&bag);
        let meta = metadata(&bag);
        assert_eq!(messages.len() as u64, meta.message_count);
        assert!(!meta.custom_data.contains_key(FILE_BEING_WRITTEN_KEY));
        assert!(free > 1 << 20, "the guard kept {free} bytes free");
        if retention {
            let summary = result.unwrap();
            assert_eq!(summary.received(), published);
            assert_eq!(published, 200, "never stopped");
            assert!(meta.files.len() < 30, "the oldest files were deleted");
            assert_eq!(
                messages.last().unwrap().recv_timestamp,
                10 * S + 199 * S / 10,
                "the newest messages are kept"
            );
        } else {
            let Err(err) = result else {
                panic!("stopped for lack of space")
            };
            let mut chain = err.to_string();
            let mut source = std::error::Error::source(&err);
            while let Some(e) = source {
                chain = format!("{chain}: {e}");
                source = e.source();
            }
            let err = chain;
            assert!(err.contains("bytes free, below the minimum"), "{err}");
            assert!(published < 200);
            assert!(
                messages.len() > 20,
                "{} written before the stop",
                messages.len()
            );
        }
        std::fs::remove_dir_all(&bag).unwrap();
    }
}

#[test]
fn loss_counts_are_in_the_metadata_at_every_split_and_at_close() {
    // Room for none of the messages held before /clock: all three are dropped.
    let SimTimeRecording {
        t: p,
        clock_pub,
        bag,
        recorder,
        _dir,
        _bus,
        _talker,
        ..
    } = sim_time_recording(Some(4));
    for _ in 0..3 {
        p.publish(&string_msg("before the clock")).unwrap();
    }
    clock_pub.publish(&clock_msg(100, 0)).unwrap();
    p.publish(&string_msg("recorded")).unwrap();
    assert!(recorder.split().unwrap());
    let key = format!("{DROPPED_BEFORE_CLOCK_KEY}/t");
    let live = metadata(&bag);
    assert_eq!(live.custom_data.get(&key).map(String::as_str), Some("3"));
    assert_eq!(live.files.len(), 1);
    p.publish(&string_msg("recorded too")).unwrap();
    recorder.stop().unwrap();
    let last = metadata(&bag);
    assert_eq!(last.custom_data.get(&key).map(String::as_str), Some("3"));
    assert_eq!(last.message_count, 2);
    assert!(!last
        .custom_data
        .keys()
        .any(|k| k.starts_with(DROPPED_MESSAGES_KEY)));
}

#[test]
fn a_topic_silent_for_ten_periods_is_warned_counted_and_in_the_metadata() {
    let r = retained(Retention::default());
    let (clock, a, bag, recorder) = (&r.clock, &r.a, &r.bag, &r.recorder);
    // /b's publisher leaves once it has published: an orderly end, not a stall.
    let b = publisher(&r._talker, "/b", STRING);
    recorder.discover_now();
    // 10 Hz for 2 s of virtual time.
    for i in 0..20 {
        a.publish(&string_msg(&format!("{i}"))).unwrap();
        b.publish(&string_msg(&format!("{i}"))).unwrap();
        clock.advance(S / 10);
    }
    drop(b);
    let summary = wait_for_summary(recorder, |s| s.received() == 40);
    assert_eq!(summary.topics[0].silences, 0, "publishing: not silent");
    // Silent for 5 s: more than 10 periods.
    clock.advance(5 * S);
    let summary = wait_for_summary(recorder, |s| s.topics[0].silences > 0);
    assert_eq!(summary.topics[0].silences, 1);
    // Back, then silent again: a second silence, noticed two looks later (by then /b, looked
    // at after /a, has long been seen silent).
    a.publish(&string_msg("back")).unwrap();
    clock.advance(5 * S);
    let summary = wait_for_summary(recorder, |s| s.topics[0].silences > 1);
    assert_eq!(summary.topics[0].silences, 2);
    assert_eq!(summary.topics[1].silences, 0, "/b's publisher left");
    assert!(
        summary.to_text().contains("went silent 2 times"),
        "{}",
        summary.to_text()
    );
    a.publish(&string_msg("back again")).unwrap();
    assert!(recorder.split().unwrap());
    let key = format!("{SILENCES_KEY}/a");
    let left = format!("{SILENCES_KEY}/b");
    let live = metadata(bag).custom_data;
    assert_eq!(live.get(&key).map(String::as_str), Some("2"));
    assert_eq!(live.get(&left), None);
    let bag = bag.clone();
    r.recorder.stop().unwrap();
    assert_eq!(
        metadata(&bag).custom_data.get(&key).map(String::as_str),
        Some("2")
    );
}
