use std::path::Path;

use super::*;
use crate::storage::{OpenMode, StorageReader, StorageWriter};
use crate::CompressionFormat;
use crate::{QosProfile, StorageError, TopicFilter, TopicMetadata};
use rosbag2_rs_codec::MessageDefinition;

const STRING_DEF: &str = "string data\n";

fn connection(topic: &str, latching: bool) -> Connection {
    Connection {
        id: 0,
        topic: topic.into(),
        type_name: "std_msgs/String".into(),
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
        message_definition: STRING_DEF.into(),
        callerid: Some("/talker".into()),
        latching,
    }
}

fn ros1_string(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

/// Writes `n` messages on /a (every 1 ms) and every third also on /latched, in small chunks.
fn write_bag(path: &Path, compression: CompressionFormat, n: i64) {
    let mut w = BagWriter::create(
        path,
        WriterOptions {
            compression,
            chunk_threshold: 1000,
        },
    )
    .unwrap();
    let a = w.add_connection(connection("/a", false));
    let l = w.add_connection(connection("/latched", true));
    for i in 0..n {
        let t = 1_000_000_000 + i * 1_000_000;
        w.write(a, t, &ros1_string(&format!("a{i}"))).unwrap();
        if i % 3 == 0 {
            w.write(l, t, &ros1_string(&format!("l{i}"))).unwrap();
        }
    }
    w.finish().unwrap();
}

fn read_all(r: &mut BagReader) -> Vec<(u32, i64, Vec<u8>)> {
    std::iter::from_fn(|| r.read_next().unwrap())
        .map(|m| (m.connection, m.time, m.data.to_vec()))
        .collect()
}

#[test]
fn written_bags_read_back_in_time_order_with_every_compression() {
    let dir = tempfile::tempdir().unwrap();
    for c in [
        CompressionFormat::None,
        CompressionFormat::Bz2,
        CompressionFormat::Lz4,
    ] {
        let path = dir.path().join(format!("{}.bag", c.as_str()));
        write_bag(&path, c, 300);
        let mut r = BagReader::open(&path, OpenMode::Strict).unwrap();
        assert!(r.is_indexed());
        assert_eq!(r.connections().len(), 2);
        assert!(r.connections()[1].latching && !r.connections()[0].latching);
        assert_eq!(r.connections()[0].callerid.as_deref(), Some("/talker"));
        assert_eq!(r.message_count(), 400);
        assert!(r.chunk_compressions()[0].1 > 10, "several chunks");
        assert_eq!(r.chunk_compressions()[0].0, c);
        let all = read_all(&mut r);
        assert_eq!(all.len(), 400);
        assert!(all.windows(2).all(|w| w[0].1 <= w[1].1));
        assert_eq!(all[0], (0, 1_000_000_000, ros1_string("a0")));
        assert_eq!(all[1], (1, 1_000_000_000, ros1_string("l0")));
        r.seek(1_000_000_000 + 150 * 1_000_000);
        r.set_filter(|c| c.topic == "/latched");
        assert_eq!(read_all(&mut r)[0].2, ros1_string("l150"));
    }
}

#[test]
fn a_bag_cut_anywhere_never_panics_and_keeps_its_finished_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.bag");
    write_bag(&full, CompressionFormat::Lz4, 200);
    let bytes = std::fs::read(&full).unwrap();
    let mut previous = 0;
    for cut in (0..bytes.len()).step_by(97) {
        let path = dir.path().join(format!("cut{cut}.bag"));
        // A killed recorder leaves the header unpatched: index_pos 0.
        let mut data = bytes[..cut].to_vec();
        if data.len() >= 13 + 4096 {
            let at = data.windows(10).position(|w| w == b"index_pos=").unwrap();
            data[at + 10..at + 18].fill(0);
        }
        std::fs::write(&path, &data).unwrap();
        match BagReader::open(&path, OpenMode::Strict) {
            Ok(mut r) => {
                let n = read_all(&mut r).len();
                assert!(n >= previous, "cut at {cut}: {n} < {previous}");
                previous = n;
            }
            Err(e) => assert!(cut < 13 + 4100, "cut at {cut}: {e}"),
        }
    }
    assert!(previous > 150, "most of the bag is recovered: {previous}");
}

#[test]
fn damage_is_a_clear_error_or_recovered_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.bag");
    write_bag(&path, CompressionFormat::Bz2, 100);
    let good = std::fs::read(&path).unwrap();

    // A corrupted index: strict refuses, recover scans the chunks.
    let mut bad = good.clone();
    // The last chunk info points at the bag header instead of its chunk.
    let at = bad.windows(10).rposition(|w| w == b"chunk_pos=").unwrap() + 10;
    bad[at..at + 8].copy_from_slice(&13u64.to_le_bytes());
    std::fs::write(&path, &bad).unwrap();
    let e = BagReader::open(&path, OpenMode::Strict).unwrap_err();
    assert!(e.to_string().contains("b.bag"), "{e}");
    let mut r = BagReader::open(&path, OpenMode::Recover).unwrap();
    assert_eq!(read_all(&mut r).len(), 134);

    // A corrupted compressed chunk: the read names the file, the chunk and the topic.
    let mut bad = good.clone();
    let chunk = bad
        .windows(15)
        .position(|w| w == b"compression=bz2")
        .unwrap();
    bad[chunk + 60..chunk + 70].fill(0x55);
    std::fs::write(&path, &bad).unwrap();
    let mut r = BagReader::open(&path, OpenMode::Strict).unwrap();
    let e = std::iter::from_fn(|| Some(r.read_next()))
        .find_map(|m| m.err())
        .unwrap();
    let text = e.to_string();
    assert!(
        text.contains("b.bag") && text.contains("chunk at offset") && text.contains("topic '/a'"),
        "{text}"
    );
    // The cause stays a typed source: the chunk's decoder error under the message's context.
    let StorageError::Ros1Format {
        source: Ros1FormatError::Message { topic, source, .. },
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(topic, "/a");
    assert!(
        matches!(
            **source,
            Ros1FormatError::Decompress {
                compression: CompressionFormat::Bz2,
                ..
            }
        ),
        "{source:?}"
    );
    assert!(std::error::Error::source(source.as_ref()).is_some());

    // Not a bag at all.
    std::fs::write(&path, b"#ROSBAG V1.2\n").unwrap();
    assert!(BagReader::open(&path, OpenMode::Strict).is_err());
}

#[test]
fn the_plugin_converts_to_cdr_and_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conv.bag");
    let mut w: Box<dyn StorageWriter> =
        Box::new(Ros1Writer::create(path.clone(), CompressionFormat::Lz4, 4096).unwrap());
    let mut latched = TopicMetadata::new("/latched", "std_msgs/msg/String");
    latched.offered_qos_profiles.push(QosProfile {
        durability: crate::qos::Durability::TransientLocal,
        ..QosProfile::default()
    });
    let def = MessageDefinition {
        topic_type: "std_msgs/msg/String".into(),
        encoding: "ros2msg".into(),
        encoded_message_definition: STRING_DEF.into(),
        type_description_hash: String::new(),
    };
    w.create_topic(&latched, &def).unwrap();
    // No stored definition: looked up in the bundled set.
    w.create_topic(
        &TopicMetadata::new("/pose", "geometry_msgs/msg/PoseStamped"),
        &MessageDefinition::default(),
    )
    .unwrap();
    let cdr_string = |s: &str| {
        let mut v = vec![0, 1, 0, 0];
        v.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        v // no trailing padding, as rosbags and Fast CDR write it
    };
    let mut pose = vec![
        0, 1, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 4, 0, 0, 0, b'm', b'a', b'p', 0,
    ];
    pose.extend((1..=7).flat_map(|i| (i as f64).to_le_bytes()));
    let messages = [
        crate::SerializedMessage::new("/latched".into(), 5, cdr_string("hello")),
        crate::SerializedMessage::new("/pose".into(), 6, pose.clone()),
    ];
    for m in &messages {
        w.write(m).unwrap();
    }
    w.finish().unwrap();

    let raw = BagReader::open(&path, OpenMode::Strict).unwrap();
    let c = &raw.connections()[1];
    assert_eq!(c.type_name, "geometry_msgs/PoseStamped");
    assert_eq!(c.md5sum, "d3812c3cbc69362b77dc0b19b345f8f5");
    assert!(raw.connections()[0].latching);

    let mut r = Ros1Reader::open(&path, OpenMode::Strict).unwrap();
    assert_eq!(
        r.topics()[0].topic_metadata.offered_qos_profiles[0].durability,
        crate::qos::Durability::TransientLocal
    );
    assert_eq!(
        r.topics()[1].topic_metadata.type_name,
        "geometry_msgs/msg/PoseStamped"
    );
    assert_eq!(r.message_definitions().len(), 2);
    let back: Vec<_> = std::iter::from_fn(|| r.read_next().unwrap()).collect();
    assert_eq!(back, messages);
    r.set_filter(&TopicFilter::topics(["/pose"]));
    r.seek(0).unwrap();
    assert_eq!(r.read_next().unwrap().unwrap().topic.as_ref(), "/pose");
}

#[test]
fn unconvertible_types_are_listed_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u.bag");
    let mut w = BagWriter::create(&path, WriterOptions::default()).unwrap();
    let mut bad = connection("/bad", false);
    bad.type_name = "my/Thing".into();
    bad.message_definition = "my/Missing m\n".into();
    let good = w.add_connection(connection("/good", false));
    let b = w.add_connection(bad);
    w.write(good, 1, &ros1_string("x")).unwrap();
    w.write(b, 2, &[1, 2, 3]).unwrap();
    w.finish().unwrap();
    let mut r = Ros1Reader::open(&path, OpenMode::Strict).unwrap();
    assert_eq!(r.topics().len(), 1);
    let u = &r.unreadable_topics()[0];
    assert_eq!(
        (u.topic.as_str(), u.type_name.as_str()),
        ("/bad", "my/Thing")
    );
    assert!(u.reason.contains("my/Missing"), "{}", u.reason);
    assert_eq!(std::iter::from_fn(|| r.read_next().unwrap()).count(), 1);
}
