//! `convert` over the storage layer: merging, filtering and cutting in time, compressed bags
//! decompressed and recompressed.

use rosbag2_rs_storage::qos::Durability;
use rosbag2_rs_storage::*;
use rosbag2_rs_tools::{convert, ConvertOptions};

use crate::bags::*;

#[test]
fn convert_merges_filters_and_cuts_time() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    write_bag(options(&a, StorageId::Sqlite3), &messages(1000, 0));
    let out = dir.path().join("out");
    let meta = convert(&ConvertOptions {
        inputs: vec![a.into()],
        output: options(&out, StorageId::Mcap),
        filter: TopicFilter::from_parts(vec![], None, vec!["/odd".into()], None).unwrap(),
        start: Some(100_000_000),
        end: Some(199_000_000),
        ..Default::default()
    })
    .unwrap();
    // 75 in range, and the transient-local /map's last message from before the start (97 ms),
    // kept at its original time so that the cut bag holds the latched state.
    assert_eq!(meta.message_count, 76);
    assert_eq!(meta.storage_identifier, "mcap");
    assert!(meta.topic("/odd").is_none());
    let read = read_all(&out);
    assert_eq!(
        (&*read[0].topic, read[0].recv_timestamp),
        ("/map", 97_000_000)
    );
    assert_eq!(read[0].data, payload(97, 97)); // len: i % 300
    assert_eq!(read[1].recv_timestamp, 100_000_000);
    assert_eq!(
        read.iter()
            .filter(|m| m.recv_timestamp < 100_000_000)
            .count(),
        1,
        "only the latched state from before the start"
    );
    assert_eq!(
        read.last().unwrap().recv_timestamp,
        198_000_000,
        "199 ms is on the excluded topic"
    );
    let qos = &meta
        .topic("/map")
        .unwrap()
        .topic_metadata
        .offered_qos_profiles;
    assert_eq!(
        qos[0].durability,
        Durability::TransientLocal,
        "QoS survives conversion"
    );
}

#[test]
fn convert_decompresses_and_recompresses() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("source");
    let mut opts = options(&source, StorageId::Sqlite3);
    opts.compression = compression(CompressionMode::Message, 1);
    write_bag(opts, &messages(400, 0));
    let file_mode = tmp.path().join("file_mode");
    convert(&ConvertOptions {
        inputs: vec![source.clone().into()],
        output: BagWriterOptions {
            uri: file_mode.clone(),
            compression: compression(CompressionMode::File, 2),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let plain = tmp.path().join("plain");
    convert(&ConvertOptions {
        inputs: vec![file_mode.clone().into()],
        output: BagWriterOptions {
            uri: plain.clone(),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let m = BagMetadata::read_from_dir(&plain).unwrap();
    assert_eq!(
        (m.compression_mode.as_str(), m.compression_format.as_str()),
        ("", "")
    );
    let (got, want) = (read_all(&plain), messages(400, 0));
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(
            (&g.topic, g.recv_timestamp, &g.data),
            (&w.topic, w.recv_timestamp, &w.data)
        );
    }
    let err = convert(&ConvertOptions {
        inputs: vec![plain.into()],
        output: BagWriterOptions {
            uri: tmp.path().join("x.bag"),
            storage: WriterOptions {
                storage: StorageId::Rosbag1,
                ..Default::default()
            },
            compression: compression(CompressionMode::File, 1),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("ROS 1"), "{err}");
}
