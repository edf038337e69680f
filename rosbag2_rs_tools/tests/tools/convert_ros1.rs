//! `convert` with ROS 1 bags in: topics whose types have no ROS 2 counterpart, and selections
//! that cannot select anything, are refused before anything is written.

use std::path::Path;

use rosbag2_rs_storage::rosbag1::{BagWriter, Connection, WriterOptions};
use rosbag2_rs_storage::{BagWriterOptions, TopicFilter};
use rosbag2_rs_tools::{convert, ConvertOptions};

fn connection(topic: &str) -> Connection {
    Connection {
        id: 0,
        topic: topic.into(),
        type_name: "std_msgs/String".into(),
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
        message_definition: "string data\n".into(),
        callerid: Some("/talker".into()),
        latching: false,
    }
}

fn ros1_string(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

/// Writes `n` messages on /a (every 1 ms) and every third also on /b.
fn write_bag(path: &Path, n: i64) {
    let mut w = BagWriter::create(path, WriterOptions::default()).unwrap();
    let a = w.add_connection(connection("/a"));
    let b = w.add_connection(connection("/b"));
    for i in 0..n {
        let t = 1_000_000_000 + i * 1_000_000;
        w.write(a, t, &ros1_string(&format!("a{i}"))).unwrap();
        if i % 3 == 0 {
            w.write(b, t, &ros1_string(&format!("b{i}"))).unwrap();
        }
    }
    w.finish().unwrap();
}

#[test]
fn convert_refuses_unconvertible_topics_unless_told_to_skip_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u.bag");
    let mut w = BagWriter::create(&path, WriterOptions::default()).unwrap();
    let mut bad = connection("/bad");
    bad.type_name = "my/Thing".into();
    bad.message_definition = "wstring w\n".into();
    let good = w.add_connection(connection("/good"));
    let b = w.add_connection(bad);
    w.write(good, 1, &ros1_string("x")).unwrap();
    w.write(b, 2, &[0, 0, 0, 0]).unwrap();
    w.finish().unwrap();
    let mut options = ConvertOptions {
        inputs: vec![path.into()],
        output: BagWriterOptions {
            uri: dir.path().join("out"),
            ..Default::default()
        },
        ..Default::default()
    };
    let e = convert(&options).unwrap_err().to_string();
    assert!(
        e.contains("'/bad' (my/Thing)") && e.contains("--skip-unknown"),
        "{e}"
    );
    assert!(
        !dir.path().join("out").exists(),
        "nothing written on refusal"
    );
    options.skip_unknown = true;
    let meta = convert(&options).unwrap();
    assert_eq!(meta.message_count, 1);
    assert!(meta.topic("/bad").is_none());
}

#[test]
fn convert_refuses_contradictory_ranges_and_empty_selections() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.bag");
    write_bag(&path, 10);
    let base = ConvertOptions {
        inputs: vec![path.into()],
        output: BagWriterOptions {
            uri: dir.path().join("out"),
            ..Default::default()
        },
        ..Default::default()
    };
    for (options, needle) in [
        (
            ConvertOptions {
                start: Some(5),
                end: Some(2),
                ..base.clone()
            },
            "after the end",
        ),
        (
            ConvertOptions {
                start: Some(9_000_000_000),
                ..base.clone()
            },
            "after the input's last message",
        ),
        (
            ConvertOptions {
                filter: TopicFilter::topics(["/nope"]),
                ..base.clone()
            },
            "no topic of the input matches",
        ),
    ] {
        let e = convert(&options).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
        assert!(!dir.path().join("out").exists());
    }
    assert_eq!(convert(&base).unwrap().message_count, 14);
}
