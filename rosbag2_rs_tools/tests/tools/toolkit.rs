//! `convert_filtered` (`--where`, `--last-per-topic-before-start`, `--rename`) and `export`
//! (images to PNG, topics to CSV) at the library level, on bags written here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rosbag2_rs_codec::msg::{encode_cdr_at, CdrHeader, TopicDecoder, Value};
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::*;
use rosbag2_rs_tools::convert_filtered;
use rosbag2_rs_tools::export::{export, ExportError, ExportKind, ExportOptions};
use rosbag2_rs_tools::ConvertFilters;
use rosbag2_rs_tools::ConvertOptions;

const START: i64 = 1_700_000_000_000_000_000;
const THING: &str = "int32 a\nfloat64 b\nstring name\n";

fn thing_def() -> MessageDefinition {
    MessageDefinition {
        topic_type: "test_msgs/msg/Thing".into(),
        encoding: "ros2msg".into(),
        encoded_message_definition: THING.into(),
        type_description_hash: String::new(),
    }
}

fn encode(decoder: &TopicDecoder, value: &Value) -> Vec<u8> {
    encode_cdr_at(
        &decoder.registry,
        decoder.index,
        value,
        CdrHeader::default(),
    )
    .unwrap()
}

/// /thing: 30 messages (a = i, b = i / 4, name "n<i>"), 100 ms apart; /other: 30 Things.
fn write_things(dir: &Path) -> PathBuf {
    let uri = dir.join("things");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    for topic in ["/thing", "/other"] {
        writer
            .create_topic(
                &TopicMetadata::new(topic, "test_msgs/msg/Thing"),
                Some(thing_def()),
            )
            .unwrap();
    }
    let decoder = TopicDecoder::new("test_msgs/msg/Thing", &thing_def()).unwrap();
    for i in 0..30 {
        let value = Value::Struct(vec![
            Value::Int32(i),
            Value::Float64(i as f64 / 4.0),
            Value::string(&format!("n{i}")),
        ]);
        let t = START + i as i64 * 100_000_000;
        for (k, topic) in ["/thing", "/other"].into_iter().enumerate() {
            writer
                .write(&SerializedMessage::new(
                    Arc::from(topic),
                    t + k as i64,
                    encode(&decoder, &value),
                ))
                .unwrap();
        }
    }
    writer.close().unwrap();
    uri
}

fn read(bag: &Path) -> Vec<(String, i64, Value)> {
    let mut reader = SequentialReader::open(bag).unwrap();
    let decoder = TopicDecoder::new("test_msgs/msg/Thing", &thing_def()).unwrap();
    let mut out = Vec::new();
    while let Some(m) = reader.read_next().unwrap() {
        out.push((
            m.topic.to_string(),
            m.recv_timestamp,
            decoder.decode(&m.data).unwrap().0,
        ));
    }
    out
}

fn a_of(v: &Value) -> i32 {
    match v.fields().unwrap()[0] {
        Value::Int32(a) => a,
        _ => unreachable!(),
    }
}

#[test]
fn where_keeps_what_the_predicate_selects_and_other_topics_whole() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_things(dir.path());
    let out = dir.path().join("out");
    convert_filtered(
        &ConvertOptions {
            inputs: vec![bag.into()],
            output: BagWriterOptions {
                uri: out.clone(),
                ..Default::default()
            },
            ..Default::default()
        },
        &ConvertFilters {
            where_clauses: vec![("/thing".into(), "(a > 20 and b < 7) or name == 'n3'".into())],
            ..Default::default()
        },
    )
    .unwrap();
    let got = read(&out);
    let thing: Vec<i32> = got
        .iter()
        .filter(|(t, ..)| t == "/thing")
        .map(|(_, _, v)| a_of(v))
        .collect();
    assert_eq!(thing, [3, 21, 22, 23, 24, 25, 26, 27]);
    assert_eq!(got.iter().filter(|(t, ..)| t == "/other").count(), 30);
}

#[test]
fn where_errors_are_typed_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_things(dir.path());
    for (clause, needle) in [
        (("/thing", "c > 1"), "no field 'c'"),
        (("/nope", "a > 1"), "no topic '/nope'"),
        (("/thing", "a >"), "column"),
    ] {
        let out = dir.path().join("never");
        let err = convert_filtered(
            &ConvertOptions {
                inputs: vec![bag.clone().into()],
                output: BagWriterOptions {
                    uri: out.clone(),
                    ..Default::default()
                },
                ..Default::default()
            },
            &ConvertFilters {
                where_clauses: vec![(clause.0.into(), clause.1.into())],
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(matches!(err, StorageError::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains(needle), "{err}");
        assert!(!out.exists());
    }
}

#[test]
fn last_before_start_at_its_own_time_and_renamed_topics_and_types() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_things(dir.path());
    let out = dir.path().join("out");
    let start = START + 1_050_000_000; // between messages 10 and 11
    convert_filtered(
        &ConvertOptions {
            inputs: vec![bag.into()],
            output: BagWriterOptions {
                uri: out.clone(),
                ..Default::default()
            },
            start: Some(start),
            ..Default::default()
        },
        &ConvertFilters {
            last_before_start: vec!["/other".into()],
            rename: vec![("/other".into(), "/renamed".into())],
            rename_types: vec![("test_msgs/msg/Thing".into(), "new_msgs/msg/Item".into())],
            ..Default::default()
        },
    )
    .unwrap();
    let reader = SequentialReader::open(&out).unwrap();
    for t in reader.topics() {
        assert_eq!(t.topic_metadata.type_name, "new_msgs/msg/Item");
    }
    let def = reader.stored_definition("new_msgs/msg/Item").unwrap();
    assert_eq!(def.encoded_message_definition, THING);
    drop(reader);
    let got = read(&out);
    let renamed: Vec<(i64, i32)> = got
        .iter()
        .filter(|(t, ..)| t == "/renamed")
        .map(|(_, t, v)| (*t, a_of(v)))
        .collect();
    assert_eq!(renamed[0], (START + 1_000_000_001, 10));
    assert_eq!(renamed.len(), 1 + 19);
    assert!(got.iter().all(|(t, ..)| t != "/other"));
    let thing_first = got.iter().find(|(t, ..)| t == "/thing").unwrap();
    assert_eq!(a_of(&thing_first.2), 11, "/thing is cut at --start");
}

fn write_images(dir: &Path) -> (PathBuf, Vec<Vec<u8>>) {
    let uri = dir.join("images");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    let mut cache = MessageDefinitionCache::new();
    let def = cache.definition("sensor_msgs/msg/Image");
    writer
        .create_topic(
            &TopicMetadata::new("/cam", "sensor_msgs/msg/Image"),
            Some(def.clone()),
        )
        .unwrap();
    let decoder = TopicDecoder::new("sensor_msgs/msg/Image", &def).unwrap();
    let mut pixels = Vec::new();
    for i in 0..3u8 {
        let (w, h, step) = (5u32, 3u32, 6usize);
        let data: Vec<u8> = (0..step * h as usize)
            .map(|k| (k as u8).wrapping_mul(7).wrapping_add(i))
            .collect();
        pixels.push(
            data.chunks(step)
                .flat_map(|row| row[..w as usize].to_vec())
                .collect(),
        );
        let mut value = decoder.registry.default_value(decoder.index);
        let set = |v: &mut Value, path: &str, x: Value| {
            decoder.registry.set(decoder.index, v, path, x).unwrap()
        };
        set(&mut value, "header.stamp.sec", Value::Int32(7));
        set(&mut value, "height", Value::UInt32(h));
        set(&mut value, "width", Value::UInt32(w));
        set(&mut value, "encoding", Value::string("mono8"));
        set(&mut value, "step", Value::UInt32(step as u32));
        set(&mut value, "data", Value::Bytes(data));
        writer
            .write(&SerializedMessage::new(
                Arc::from("/cam"),
                START + i as i64,
                encode(&decoder, &value),
            ))
            .unwrap();
    }
    writer.close().unwrap();
    (uri, pixels)
}

#[test]
fn images_export_to_png_with_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, pixels) = write_images(dir.path());
    let out = dir.path().join("frames");
    let options = ExportOptions {
        inputs: vec![bag],
        topic: "/cam".into(),
        output: out.clone(),
        ..Default::default()
    };
    let report = export(&options).unwrap();
    assert_eq!(report.messages, 3);
    for (i, want) in pixels.iter().enumerate() {
        let file = std::fs::read(out.join(format!("frame_{i:06}.png"))).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(file))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (5, 3));
        assert_eq!(&buf[..info.buffer_size()], &want[..]);
    }
    let index = std::fs::read_to_string(out.join("index.csv")).unwrap();
    assert_eq!(
        index.lines().nth(1).unwrap(),
        format!("frame_000000.png,{START},7000000000")
    );
    // A second export into the same directory would mix frames: refused.
    assert!(matches!(
        export(&options),
        Err(ExportError::Storage(StorageError::AlreadyExists(_)))
    ));
}

#[test]
fn topics_export_to_csv_with_field_selection() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_things(dir.path());
    let out = dir.path().join("csv");
    export(&ExportOptions {
        inputs: vec![bag.clone()],
        topic: "/thing".into(),
        output: out.clone(),
        kind: ExportKind::Csv,
        fields: vec!["b".into(), "name".into()],
        ..Default::default()
    })
    .unwrap();
    let text = std::fs::read_to_string(out.join("thing.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "timestamp,b,name");
    assert_eq!(lines[3], format!("{},0.5,n2", START + 200_000_000));
    assert_eq!(lines.len(), 31);
    let err = export(&ExportOptions {
        inputs: vec![bag],
        topic: "/thing".into(),
        output: dir.path().join("img"),
        kind: ExportKind::Images,
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(err, ExportError::Unsupported { .. }), "{err}");
}
