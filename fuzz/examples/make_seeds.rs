//! Writes the seed corpora of the fuzz targets into `fuzz/seeds/<target>/` (committed; a few KB
//! each): small files of every storage and compression written by this repository's writers,
//! `metadata.yaml` and QoS texts, CDR payloads, definitions, `--where` expressions, service
//! messages and what other nodes send on the graph; the files of issue 48 whose index lists a
//! chunk several times (`rosbag2_rs_tools/tests/crafted`), definitions with their payloads,
//! file-mode `.zstd` files, RealSense `.db3` recordings, `pf-timesync replay` logs.
//!
//! `cargo run --manifest-path fuzz/Cargo.toml --example make_seeds [target...]` (from the
//! repository root): the seeds of the targets named, or of all. `--no-default-features` leaves
//! out the transport library (and the `graph_wire` seeds).

#[path = "../../rosbag2_rs_tools/tests/crafted/mod.rs"]
mod crafted;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rosbag2_rs_codec::msg::transcode::CdrToRos1;
use rosbag2_rs_codec::msg::TopicDecoder;
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_dds_common::discovery_info::{NodeEntities, ParticipantEntities};
use rosbag2_rs_fuzz::{DEFINITIONS, WIRE_TYPES};
use rosbag2_rs_storage::rosbag1;
use rosbag2_rs_storage::storage::{StorageConfig, StorageId, WriterOptions};
use rosbag2_rs_storage::{
    BagWriter, BagWriterOptions, CompressionFormat, CompressionMode, CompressionOptions,
    SerializedMessage, TopicMetadata,
};
use rosbag2_rs_zenoh::attachment::Attachment;

fn seeds(target: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

use rosbag2_rs_fuzz::string_cdr;

/// A bag of three `std_msgs/msg/String` messages; returns its directory.
fn bag(tmp: &Path, name: &str, options: WriterOptions) -> PathBuf {
    let uri = tmp.join(name);
    let mut w = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        storage: options,
        ..Default::default()
    })
    .unwrap();
    w.create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
        .unwrap();
    let topic: Arc<str> = "/chatter".into();
    for i in 0..3i64 {
        let msg = SerializedMessage::new(topic.clone(), 1_000 + i, string_cdr(&format!("hi {i}")));
        w.write(&msg).unwrap();
    }
    w.close().unwrap();
    uri
}

fn storage_file(uri: &Path) -> PathBuf {
    std::fs::read_dir(uri)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().is_some_and(|n| n != "metadata.yaml"))
        .unwrap()
}

fn copy(from: &Path, target: &str, name: &str) {
    if wanted(target) {
        std::fs::copy(from, seeds(target).join(name)).unwrap();
    }
}

/// Whether `target`'s seeds are written: those named on the command line, or all.
fn wanted(target: &str) -> bool {
    let named: Vec<String> = std::env::args().skip(1).collect();
    named.is_empty() || named.iter().any(|n| n == target)
}

/// Writes one seed of `target`, if it is wanted.
fn write_seed(target: &str, name: impl AsRef<Path>, data: impl AsRef<[u8]>) {
    if wanted(target) {
        std::fs::write(seeds(target).join(name), data).unwrap();
    }
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    // MCAP: chunk compressions, and unchunked.
    for (name, compression) in [
        ("none", CompressionFormat::None),
        ("lz4", CompressionFormat::Lz4),
        ("zstd", CompressionFormat::Zstd),
    ] {
        let uri = bag(
            tmp,
            &format!("mcap_{name}"),
            WriterOptions {
                storage: StorageId::Mcap,
                compression: Some(compression),
                ..Default::default()
            },
        );
        for target in ["mcap_read", "mcap_doctor_reindex"] {
            copy(&storage_file(&uri), target, &format!("chunked-{name}"));
        }
        copy(
            &uri.join("metadata.yaml"),
            "metadata_yaml",
            &format!("mcap-{name}"),
        );
    }
    // SQLite3 with small pages.
    let uri = bag(
        tmp,
        "sqlite",
        WriterOptions {
            storage: StorageId::Sqlite3,
            config: StorageConfig {
                write_pragmas: vec!["PRAGMA page_size = 512".into()],
                ..Default::default()
            },
            ..Default::default()
        },
    );
    copy(&storage_file(&uri), "sqlite", "three-messages");
    copy(&uri.join("metadata.yaml"), "metadata_yaml", "sqlite");
    // ROS 1 bags.
    for compression in [
        CompressionFormat::None,
        CompressionFormat::Bz2,
        CompressionFormat::Lz4,
    ] {
        let path = tmp.join(format!("ros1-{}.bag", compression.as_str()));
        let mut w = rosbag1::BagWriter::create(
            &path,
            rosbag1::WriterOptions {
                compression,
                ..Default::default()
            },
        )
        .unwrap();
        let id = w.add_connection(rosbag1::Connection {
            id: 0,
            topic: "/chatter".into(),
            type_name: "std_msgs/String".into(),
            md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
            message_definition: "string data\n".into(),
            callerid: Some("/talker".into()),
            latching: false,
        });
        for i in 0..3i64 {
            let text = format!("hi {i}");
            let mut data = (text.len() as u32).to_le_bytes().to_vec();
            data.extend(text.as_bytes());
            w.write(id, 1_000_000_000 + i, &data).unwrap();
        }
        w.finish().unwrap();
        copy(&path, "ros1", compression.as_str());
    }
    realsense(tmp);
    // QoS profiles and overrides.
    write_seed(
        "qos_yaml",
        "profiles",
        "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n  lifespan:\n    sec: 1\n    nsec: 0\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 5\n  avoid_ros_namespace_conventions: false\n",
    );
    write_seed(
        "qos_yaml",
        "overrides",
        "/chatter:\n  reliability: best_effort\n  durability: transient_local\n  history: keep_last\n  depth: 10\nscan:\n  deadline:\n    sec: 1\n    nsec: 0\n",
    );
    // CDR payloads: the first byte picks the definition.
    for (i, (type_name, text)) in DEFINITIONS.iter().enumerate() {
        let decoder = TopicDecoder::new(type_name, &ros2msg(text)).unwrap();
        let value = decoder.registry.default_value(decoder.index);
        let bytes = rosbag2_rs_codec::msg::encode_cdr(
            &decoder.registry,
            type_name,
            &value,
            Default::default(),
        )
        .unwrap();
        let mut seed = vec![i as u8];
        seed.extend(bytes);
        write_seed("cdr", format!("default-{i}"), seed);
        write_seed("msg_definition", format!("def-{i}"), text);
    }
    write_seed(
        "msg_definition",
        "srv",
        "int64 a\nint64 b\nstring<=10 s\n---\nint64 sum\nfloat64[3] v\n",
    );
    write_seed(
        "msg_definition",
        "ros1-header",
        "Header header\ntime t\nduration d\nstring CONST=unquoted text\nuint8[] data\n",
    );
    idl_definitions();
    for (i, expr) in [
        "i32 > 3 and s == \"x\"",
        "not (inner.values[2] <= -1.5e3) or bs != 'a'",
        "seq[0] == 1 and inners[1].leaves[0].xyz[2] > 0",
    ]
    .iter()
    .enumerate()
    {
        write_seed("where_expr", format!("expr-{i}"), expr);
    }
    // Each service message's default value, behind the byte that picks its type.
    for (pick, wire) in WIRE_TYPES.iter().enumerate() {
        let mut seed = vec![pick as u8];
        seed.extend((wire.default_encoding)());
        let name = wire.name.replace('/', "-");
        write_seed("service_messages", name, seed);
    }
    graph_wire();
    remote_types();
    duplicated_indexes(tmp);
    definition_payload();
    zstd_file(tmp);
    doctor_metadata(tmp);
    realsense_db3(tmp);
    pf_timesync_replay();
}

/// Index records listing a chunk more than once (issue 48): an MCAP file of two zstd chunks
/// each listed by three chunk indexes, a ROS 1 bag whose chunk is listed by four chunk-info
/// records.
fn duplicated_indexes(tmp: &Path) {
    let mcap = crafted::mcap_zstd_chunks(tmp, "listed.mcap", 2, 64, None, 3);
    for target in ["mcap_read", "mcap_doctor_reindex"] {
        copy(&mcap, target, "chunks-listed-3-times");
    }
    let ros1 = crafted::ros1_chunk_listed_many_times(tmp, 4);
    copy(&ros1, "ros1", "chunk-listed-4-times");
}

/// Each definition of `DEFINITIONS` with its default value's CDR encoding (dialect byte 0),
/// and the ROS 1 definition and message the converter makes of them (dialect byte 1), plus the
/// crafted ROS 1 type of empty elements (`std_msgs/Empty[]` in a sequence).
fn definition_payload() {
    for (i, (type_name, text)) in DEFINITIONS.iter().enumerate() {
        let decoder = TopicDecoder::new(type_name, &ros2msg(text)).unwrap();
        let value = decoder.registry.default_value(decoder.index);
        let cdr = rosbag2_rs_codec::msg::encode_cdr(
            &decoder.registry,
            type_name,
            &value,
            Default::default(),
        )
        .unwrap();
        let mut seed = vec![0];
        seed.extend(text.as_bytes());
        seed.push(0);
        seed.extend(&cdr);
        write_seed("definition_payload", format!("ros2-{i}"), seed);
        let converter = CdrToRos1::new(type_name, text).unwrap();
        let mut seed = vec![1];
        seed.extend(converter.ros1_definition.as_bytes());
        seed.push(0);
        seed.extend(converter.convert(&cdr).unwrap());
        write_seed("definition_payload", format!("ros1-{i}"), seed);
    }
    let mut seed = vec![1];
    seed.extend(crafted::EMPTY_ELEMENTS_DEFINITION.as_bytes());
    seed.push(0);
    seed.extend(crafted::empty_elements_payload(3, 4));
    write_seed("definition_payload", "ros1-empty-elements", seed);
}

/// File-mode `.zstd` files as the writer compresses them, an MCAP file and an SQLite3 file
/// (behind byte 0), and the files inside them (behind byte 3: the target compresses them).
fn zstd_file(tmp: &Path) {
    for (name, storage) in [("mcap", StorageId::Mcap), ("db3", StorageId::Sqlite3)] {
        let uri = tmp.join(format!("file_mode_{name}"));
        let mut w = BagWriter::create(BagWriterOptions {
            uri: uri.clone(),
            storage: WriterOptions {
                storage,
                ..Default::default()
            },
            compression: CompressionOptions {
                mode: CompressionMode::File,
                format: CompressionFormat::Zstd,
                threads: 1,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        w.create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
            .unwrap();
        let topic: Arc<str> = "/chatter".into();
        for i in 0..3i64 {
            let msg =
                SerializedMessage::new(topic.clone(), 1_000 + i, string_cdr(&format!("hi {i}")));
            w.write(&msg).unwrap();
        }
        w.close().unwrap();
        let file = std::fs::read(storage_file(&uri)).unwrap();
        let mut seed = vec![0];
        seed.extend(&file);
        write_seed("zstd_file", name, seed);
        // The file inside, which the target compresses (its size declared).
        let inner = zstd::stream::decode_all(&file[..]).unwrap();
        let mut seed = vec![3];
        seed.extend(inner);
        write_seed("zstd_file", format!("{name}-inside"), seed);
    }
}

/// The `metadata.yaml` of the files the `doctor_metadata` target puts beside its input, as the
/// writer writes it for each.
fn doctor_metadata(tmp: &Path) {
    for (name, storage) in [("mcap", StorageId::Mcap), ("db3", StorageId::Sqlite3)] {
        let uri = tmp.join(format!("doctor_{name}")).join("bag");
        std::fs::create_dir_all(uri.parent().unwrap()).unwrap();
        rosbag2_rs_fuzz::write_small_bag(
            &uri,
            WriterOptions {
                storage,
                ..Default::default()
            },
        );
        copy(&uri.join("metadata.yaml"), "doctor_metadata", name);
    }
}

/// A RealSense recording in the `.db3` layout: a depth stream (`compressedDepth` PNG) and a
/// color stream (PNG), two small frames each.
fn realsense_db3(tmp: &Path) {
    use realsense_bag_rs::*;
    let stream = |stream: &str, format: &str| StreamProfile {
        stream: stream.into(),
        format: format.into(),
        fps: 30,
        intrinsics: Some(Intrinsics {
            width: 4,
            height: 2,
            model: "brown_conrady".into(),
            coeffs: vec![0.0; 5],
            ..Intrinsics::default()
        }),
        ..StreamProfile::default()
    };
    let device = Device {
        file_version: 4,
        info: vec![("Name".into(), "seed".into())],
        sensors: vec![Sensor {
            index: 0,
            info: vec![("Name".into(), "Stereo Module".into())],
            options: vec![],
            streams: vec![stream("depth", "z16"), stream("color", "rgb8")],
        }],
        ..Device::default()
    };
    let path = tmp.join("realsense.db3");
    let mut w = RecordingWriter::create_db3(&path, &device).unwrap();
    for number in 1..=2u64 {
        let recorded_ns = number as i64 * 33_000_000;
        for (stream, format, bytes_per_pixel) in [("depth", "z16", 2), ("color", "rgb8", 3)] {
            w.write_frame(&Frame {
                sensor: 0,
                stream: stream.into(),
                index: 0,
                number,
                timestamp_ms: recorded_ns as f64 / 1e6,
                domain: "hardware_clock".into(),
                recorded_ns,
                metadata: vec![("frame_counter".into(), number as i64)],
                payload: Payload::Video {
                    width: 4,
                    height: 2,
                    stride: 4 * bytes_per_pixel,
                    format: format.into(),
                    data: bytes::Bytes::from(
                        (0..8 * bytes_per_pixel)
                            .map(|i| (i as u64 * 37 + number) as u8)
                            .collect::<Vec<u8>>(),
                    ),
                },
            })
            .unwrap();
        }
    }
    w.finish().unwrap();
    copy(&path, "realsense_db3", "depth-and-color");
    image_topics(tmp);
}

/// A rosbag2 `.db3` of an `Image` topic (4 × 2 rgb8, rows padded to 16 bytes) and a
/// `CompressedImage` topic (a PNG), their definitions stored (Jazzy's): what `export` decodes
/// and writes, for the `realsense_db3` target.
fn image_topics(tmp: &Path) {
    use rosbag2_rs_codec::{MessageDefinitionCache, Typestore};
    let mut cache = MessageDefinitionCache::new().with_typestore(Some(Typestore::Jazzy));
    let uri = tmp.join("images");
    let mut w = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        storage: WriterOptions {
            storage: StorageId::Sqlite3,
            config: StorageConfig {
                write_pragmas: vec!["PRAGMA page_size = 512".into()],
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    for (topic, type_name) in [
        ("/image", "sensor_msgs/msg/Image"),
        ("/compressed", "sensor_msgs/msg/CompressedImage"),
    ] {
        let definition = cache.definition(type_name);
        assert!(
            !definition.encoded_message_definition.is_empty(),
            "{type_name}"
        );
        w.create_topic(&TopicMetadata::new(topic, type_name), Some(definition))
            .unwrap();
    }
    let cdr_string = |cdr: &mut Vec<u8>, text: &str| {
        while !cdr.len().is_multiple_of(4) {
            cdr.push(0);
        }
        cdr.extend((text.len() as u32 + 1).to_le_bytes());
        cdr.extend(text.as_bytes());
        cdr.push(0);
    };
    let align4 = |cdr: &mut Vec<u8>| {
        while !(cdr.len() - 4).is_multiple_of(4) {
            cdr.push(0);
        }
    };
    let pixels: Vec<u8> = (0..32u8).map(|i| i.wrapping_mul(7)).collect();
    let header = |cdr: &mut Vec<u8>, i: i32| {
        cdr.extend([0, 1, 0, 0]);
        cdr.extend(i.to_le_bytes()); // stamp.sec
        cdr.extend(0u32.to_le_bytes()); // stamp.nanosec
        cdr_string(cdr, "camera");
    };
    let image: Arc<str> = "/image".into();
    let compressed: Arc<str> = "/compressed".into();
    for i in 0..2i32 {
        let mut cdr = Vec::new();
        header(&mut cdr, i);
        align4(&mut cdr);
        cdr.extend(2u32.to_le_bytes()); // height
        cdr.extend(4u32.to_le_bytes()); // width
        cdr_string(&mut cdr, "rgb8");
        cdr.push(0); // is_bigendian
        align4(&mut cdr);
        cdr.extend(16u32.to_le_bytes()); // step
        cdr.extend((pixels.len() as u32).to_le_bytes());
        cdr.extend(&pixels);
        w.write(&SerializedMessage::new(
            image.clone(),
            1_000 + i as i64,
            cdr,
        ))
        .unwrap();
        let png = rosbag2_rs_codec::image::pixels_to_png(4, 2, "rgb8", false, 16, &pixels).unwrap();
        let mut cdr = Vec::new();
        header(&mut cdr, i);
        cdr_string(&mut cdr, "png");
        align4(&mut cdr);
        cdr.extend((png.len() as u32).to_le_bytes());
        cdr.extend(&png);
        w.write(&SerializedMessage::new(
            compressed.clone(),
            1_000 + i as i64,
            cdr,
        ))
        .unwrap();
    }
    w.close().unwrap();
    copy(&storage_file(&uri), "realsense_db3", "image-topics");
}

/// `pf-timesync replay` logs of the simulator (two seconds of a light and a loaded host), behind
/// the 8 bytes that pick the estimator and its parameters (the defaults: a 10 s window, 200
/// ppm, read position 0.5, jump tolerances of 1 s, approximately).
fn pf_timesync_replay() {
    use pf_timesync_rs::sim::{simulate, SimConfig};
    for (name, config) in [
        ("light", SimConfig::light()),
        ("loaded", SimConfig::loaded()),
    ] {
        for estimator in [0u8, 5] {
            let mut seed = vec![estimator];
            seed.extend(10_000i16.to_le_bytes());
            seed.extend((200u16 * 16).to_le_bytes());
            seed.push(128);
            seed.push(62);
            seed.push(62);
            let config = SimConfig {
                duration_s: 2.0,
                ..config.clone()
            };
            for event in simulate(&config) {
                seed.extend(event.record.to_line().as_bytes());
                seed.push(b'\n');
            }
            write_seed("pf_timesync_replay", format!("{name}-{estimator}"), seed);
        }
    }
}

/// What other nodes send: a `ros_discovery_info` sample, rmw_zenoh attachments in both layouts,
/// liveliness tokens as rmw_zenoh writes them, a QoS string and a DDS type name, each behind the
/// byte that picks its parser in the `graph_wire` target.
fn graph_wire() {
    let info = ParticipantEntities {
        gid: [1; 16],
        nodes: vec![NodeEntities {
            namespace: "/".into(),
            name: "talker".into(),
            readers: vec![[2; 16]],
            writers: vec![[3; 16], [4; 16]],
        }],
    };
    let attachment = Attachment {
        sequence_number: 7,
        source_timestamp: 1_700_000_000_000_000_000,
        source_gid: [5; 16],
    };
    let hash = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
    let seeds_of = [
        (0, "discovery", info.encode()),
        (1, "attachment", attachment.encode()),
        (1, "attachment-jazzy", attachment.encode_jazzy()),
        (2, "token-publisher", format!("@ros2_lv/2/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/{hash}/::,7:,:,:,,").into_bytes()),
        (2, "token-node", b"@ros2_lv/0/8b20917502ee955ac4476e0266340d5c/0/0/NN/%/%/talker".to_vec()),
        (3, "qos", b"2:1:,10:,:,:,,".to_vec()),
        (4, "dds-type", b"std_msgs::msg::dds_::String_".to_vec()),
    ];
    for (pick, name, bytes) in seeds_of {
        let mut seed = vec![pick];
        seed.extend(bytes);
        write_seed("graph_wire", name, seed);
    }
}

/// How peers describe their types: structures in the compact form of the `xtypes` target
/// (its wire-form seeds are type objects of Python cyclonedds, `tools/xtypes_seeds.py`), and
/// `GetTypeDescription` answers as the player gives them, with and without sources.
fn remote_types() {
    use rosbag2_rs_interfaces::type_description_interfaces::srv::GetTypeDescriptionRequest;
    use rosbag2_rs_middleware::type_description as remote_types;
    use std::collections::HashMap;

    /// A name as the compact form spells it: its length, then its bytes.
    fn name(out: &mut Vec<u8>, name: &str) {
        out.push(name.len() as u8);
        out.extend(name.as_bytes());
    }
    // A reading with a header (object 1) that has a stamp (object 2); the nested hashes are
    // 14 copies of the index of the object they resolve to.
    let mut reading = vec![];
    name(&mut reading, "custom_msgs::msg::dds_::Reading_");
    name(&mut reading, "header");
    reading.extend([4, 1]);
    name(&mut reading, "value");
    reading.extend([0, 0x0A]);
    name(&mut reading, "label");
    reading.extend([1, 16, 0, 0, 0]);
    name(&mut reading, "samples");
    reading.extend([2, 0, 0, 0, 0, 0, 0x09]);
    name(&mut reading, "last");
    reading.extend([3, 1, 3, 0, 0, 0, 0, 0x04]);
    let mut header = vec![];
    name(&mut header, "std_msgs::msg::dds_::Header_");
    name(&mut header, "stamp");
    header.extend([4, 2]);
    name(&mut header, "frame_id");
    header.extend([1, 0, 0, 0, 0]);
    let mut time = vec![];
    name(&mut time, "builtin_interfaces::msg::dds_::Time_");
    name(&mut time, "sec");
    time.extend([0, 0x04]);
    name(&mut time, "nanosec");
    time.extend([0, 0x07]);
    let mut seed = vec![1];
    for object in [&reading, &header, &time] {
        seed.extend((object.len() as u16).to_le_bytes());
        seed.extend(object);
    }
    write_seed("xtypes", "model-Reading", seed);

    let mut cache = rosbag2_rs_codec::MessageDefinitionCache::with_prefixes(Vec::new());
    for type_name in ["sensor_msgs/msg/NavSatFix", "std_msgs/msg/String"] {
        // The player's own answer, sources included.
        let definitions = HashMap::from([(type_name.to_string(), cache.definition(type_name))]);
        let mut answer = remote_types::answer(
            &definitions,
            &GetTypeDescriptionRequest {
                type_name: type_name.into(),
                type_hash: String::new(),
                include_type_sources: true,
            },
        );
        assert!(answer.successful, "{}", answer.failure_reason);
        let name = type_name.replace('/', "-");
        for (suffix, answer) in [
            ("sources", answer.clone()),
            ("fields", {
                answer.type_sources.clear();
                answer
            }),
        ] {
            let mut seed = vec![0];
            seed.extend(rosbag2_rs_interfaces::to_cdr(&answer));
            write_seed("type_description_answer", format!("{name}-{suffix}"), seed);
        }
    }
}

fn ros2msg(text: &str) -> MessageDefinition {
    MessageDefinition {
        topic_type: String::new(),
        encoding: "ros2msg".into(),
        encoded_message_definition: text.into(),
        type_description_hash: String::new(),
    }
}

/// `ros2idl` seeds of the `msg_definition` target: rosidl_adapter's IDL (from the codec's golden
/// set), a hand-written IDL of every spelling, the layout rosbag2 stores (a separator and `IDL:`
/// line before each file) for the target's root type with a dependency, and a service's
/// definition mixing `SRV:`, `MSG:` and `IDL:` sections.
fn idl_definitions() {
    const SEPARATOR: &str =
        "================================================================================";
    write_seed(
        "msg_definition",
        "idl-rosidl-adapter",
        include_str!("../../rosbag2_rs_codec/tests/data/idl/idl_golden/msg/Everything.idl"),
    );
    write_seed(
        "msg_definition",
        "idl-spellings",
        include_str!("../../rosbag2_rs_codec/tests/data/idl/idl_golden/msg/Spellings.idl"),
    );
    let root = r#"#include "fuzz_msgs/msg/Inner.idl"

module fuzz_msgs {
  module msg {
    typedef fuzz_msgs::msg::Inner fuzz_msgs__msg__Inner;
    typedef fuzz_msgs__msg__Inner fuzz_msgs__msg__Inner__2[2];
    module Root_Constants {
      const string NAME = "root";
    };
    struct Root {
      string<8> name;
      fuzz_msgs__msg__Inner__2 pair;
      sequence<fuzz_msgs::msg::Inner> all;
    };
  };
};
"#;
    let inner = r#"module fuzz_msgs {
  module msg {
    struct Inner {
      @default (value="(1.0, 2.0)")
      sequence<double, 2> values;
    };
  };
};
"#;
    write_seed(
        "msg_definition",
        "idl-rosbag2-layout",
        format!(
            "{SEPARATOR}\nIDL: fuzz_msgs/msg/Root\n{root}\n{SEPARATOR}\nIDL: fuzz_msgs/msg/Inner\n{inner}"
        ),
    );
    write_seed(
        "msg_definition",
        "idl-service",
        format!(
            "{SEPARATOR}\nSRV: fuzz_msgs/srv/Call\nfuzz_msgs/Inner req\n---\nbool ok\n\n\
             {SEPARATOR}\nMSG: fuzz_msgs/Inner\n\n{SEPARATOR}\nIDL: fuzz_msgs/msg/Inner\n{inner}"
        ),
    );
}

/// A RealSense recording of two depth frames.
fn realsense(tmp: &Path) {
    use realsense_bag_rs::*;
    let device = Device {
        file_version: 4,
        info: vec![("Name".into(), "seed".into())],
        sensors: vec![Sensor {
            index: 0,
            info: vec![("Name".into(), "Stereo Module".into())],
            options: vec![SensorOption {
                name: "Exposure".into(),
                value: 8500.0,
                description: "Depth exposure".into(),
                history: vec![],
            }],
            streams: vec![StreamProfile {
                stream: "depth".into(),
                format: "z16".into(),
                fps: 30,
                intrinsics: Some(Intrinsics {
                    width: 2,
                    height: 1,
                    model: "brown_conrady".into(),
                    coeffs: vec![0.0; 5],
                    ..Intrinsics::default()
                }),
                ..StreamProfile::default()
            }],
        }],
        ..Device::default()
    };
    let path = tmp.join("realsense.bag");
    let mut w = RecordingWriter::create(&path, &device, CompressionFormat::None).unwrap();
    for number in 1..=2u64 {
        let recorded_ns = number as i64 * 33_000_000;
        w.write_frame(&Frame {
            sensor: 0,
            stream: "depth".into(),
            index: 0,
            number,
            timestamp_ms: recorded_ns as f64 / 1e6,
            domain: "hardware_clock".into(),
            recorded_ns,
            metadata: vec![("frame_counter".into(), number as i64)],
            payload: Payload::Video {
                width: 2,
                height: 1,
                stride: 4,
                format: "z16".into(),
                data: bytes::Bytes::from(vec![number as u8; 4]),
            },
        })
        .unwrap();
    }
    w.finish().unwrap();
    copy(&path, "realsense", "two-frames");
}
