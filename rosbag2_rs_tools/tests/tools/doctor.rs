//! `doctor` on clean bags of every storage (MCAP, SQLite3, ROS 1, file- and message-mode
//! compressed) and on each kind of damage: flipped bytes in a chunk, a truncated file, an empty
//! file, a file metadata.yaml lists that is missing, bad .db3 rows, a definition that does not
//! match the payloads or does not parse, metadata.yaml counts that are wrong; damage apart from
//! remarks, and each disagreement under the damage that explains it. `reindex_to` leaves its
//! input untouched and its output doctors clean.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::*;
use rosbag2_rs_tools::*;

const START: i64 = 1_700_000_000_000_000_000;

/// A `std_msgs/msg/String` payload.
fn string_msg(text: &str) -> Vec<u8> {
    let mut data = vec![0, 1, 0, 0];
    data.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    data.extend_from_slice(text.as_bytes());
    data.push(0);
    while data.len() % 4 != 0 {
        data.push(0);
    }
    data
}

/// Writes a bag of 20 strings on /chatter and 20 `Thing`s on /thing (custom type with its
/// definition); returns its directory.
fn write_bag(dir: &Path, storage: &str, compression: CompressionOptions) -> PathBuf {
    let uri = dir.join(format!("bag_{storage}"));
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        storage: WriterOptions {
            storage: rosbag2_rs_storage::StorageId::parse(storage).unwrap(),
            ..Default::default()
        },
        compression,
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
        .unwrap();
    writer
        .create_topic(
            &TopicMetadata::new("/thing", "test_msgs/msg/Thing"),
            Some(MessageDefinition {
                topic_type: "test_msgs/msg/Thing".into(),
                encoding: "ros2msg".into(),
                encoded_message_definition: "int32 a\nfloat64 b\n".into(),
                type_description_hash: String::new(),
            }),
        )
        .unwrap();
    let (chatter, thing): (Arc<str>, Arc<str>) = (Arc::from("/chatter"), Arc::from("/thing"));
    for i in 0..20i64 {
        let t = START + i * 10_000_000;
        writer
            .write(&SerializedMessage::new(
                chatter.clone(),
                t,
                string_msg(&format!("hello number {i:04}")),
            ))
            .unwrap();
        let mut thing_data = vec![0, 1, 0, 0];
        thing_data.extend_from_slice(&(i as i32).to_le_bytes());
        thing_data.extend_from_slice(&[0; 4]);
        thing_data.extend_from_slice(&(i as f64 * 0.5).to_le_bytes());
        writer
            .write(&SerializedMessage::new(thing.clone(), t + 1, thing_data))
            .unwrap();
    }
    writer.close().unwrap();
    uri
}

fn only_file(bag: &Path, ext: &str) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(bag)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn check(bag: &Path) -> DoctorReport {
    doctor(bag, &DoctorOptions::default()).unwrap()
}

fn kinds(report: &DoctorReport) -> Vec<ProblemKind> {
    report.all_problems().map(|p| p.kind).collect()
}

fn assert_problem(report: &DoctorReport, kind: ProblemKind, needle: &str) {
    assert!(
        report
            .all_problems()
            .any(|p| p.kind == kind && p.to_string().contains(needle)),
        "expected a {kind:?} problem containing '{needle}', got {:#?}",
        report.problems
    );
}

#[test]
fn clean_bags_of_every_storage_are_clean() {
    let dir = tempfile::tempdir().unwrap();
    let zstd = |mode| CompressionOptions {
        mode,
        format: CompressionFormat::Zstd,
        ..Default::default()
    };
    let mut bags = vec![
        write_bag(dir.path(), "mcap", CompressionOptions::default()),
        write_bag(dir.path(), "sqlite3", CompressionOptions::default()),
    ];
    let file_mode = dir.path().join("file_mode");
    std::fs::create_dir(&file_mode).unwrap();
    bags.push(write_bag(&file_mode, "mcap", zstd(CompressionMode::File)));
    let message_mode = dir.path().join("message_mode");
    std::fs::create_dir(&message_mode).unwrap();
    bags.push(write_bag(
        &message_mode,
        "sqlite3",
        zstd(CompressionMode::Message),
    ));
    // A ROS 1 bag, converted from the MCAP one (only its convertible topic).
    let ros1 = dir.path().join("old.bag");
    to_ros1(&bags[0], &ros1);
    bags.push(ros1);
    // A single MCAP file given directly.
    bags.push(only_file(&bags[0], ".mcap"));
    for bag in &bags {
        let report = check(bag);
        assert!(
            report.is_clean(),
            "{}: {:#?}",
            bag.display(),
            report.problems
        );
        let messages: u64 = report.files.iter().map(|f| f.messages).sum();
        assert!(messages >= 20, "{}: {messages}", bag.display());
        assert!(report.decoded_messages >= 5, "{}", bag.display());
    }
}

#[test]
fn bags_recorded_by_rosbag2_are_clean_and_decode_to_the_last_message() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../rosbag2_rs_storage/tests/data/rosbag2");
    for name in [
        "topics_and_services.mcap",
        "bag_with_topics_and_service_events.mcap",
    ] {
        let report = doctor(
            &dir.join(name),
            &DoctorOptions {
                samples_per_topic: usize::MAX,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(report.is_clean(), "{name}: {:#?}", report.problems);
        let read: u64 = report.files.iter().map(|f| f.messages).sum();
        // Service events too: their `.srv` text is read as rosidl's messages.
        assert_eq!(report.decoded_messages, read, "{name}");
    }
}

/// rosbag2's own test bags with what rosbag2 wrote loosely or what no definition describes:
/// intact data, so remarks only, each with its cause.
#[test]
fn rosbag2s_loose_bags_have_remarks_and_no_damage() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../rosbag2_rs_storage/tests/data/rosbag2");
    for (name, messages, remarks) in [
        (
            "rewriter/mcap/rewriter_a",
            150,
            &[
                (ProblemKind::Time, "the file's index gives the time range"),
                (
                    ProblemKind::Definition,
                    "test_msgs/msg/Empty: no definition",
                ),
                (ProblemKind::Crc, "no data section CRC stored"),
            ][..],
        ),
        (
            "mcap_wbag",
            6074,
            &[
                (ProblemKind::Time, "metadata.yaml gives the time range"),
                (
                    ProblemKind::Crc,
                    "decodes (5 files: wbag_0.mcap, wbag_1.mcap",
                ),
            ],
        ),
        (
            "sqlite3_talker",
            20,
            &[
                (
                    ProblemKind::Definition,
                    "unknown type 'rcl_interfaces/Parameter'",
                ),
                (ProblemKind::Payload, "rcl_interfaces/msg/Log"),
            ],
        ),
        (
            "rewriter/sqlite3/rewriter_a",
            150,
            &[
                (
                    ProblemKind::Definition,
                    "test_msgs/msg/Empty: no definition",
                ),
                (
                    ProblemKind::Definition,
                    "test_msgs/msg/BasicTypes: no definition",
                ),
            ],
        ),
    ] {
        let report = check(&dir.join(name));
        assert!(report.is_clean(), "{name}: {report:#?}");
        let read: u64 = report.files.iter().map(|f| f.messages).sum();
        assert_eq!(read, messages, "{name}");
        let found: Vec<&Problem> = report.remarks().collect();
        assert_eq!(found.len(), remarks.len(), "{name}: {report:#?}");
        for (kind, needle) in remarks {
            assert!(
                found
                    .iter()
                    .any(|p| p.kind == *kind && p.to_string().contains(needle)),
                "{name}: no {kind:?} remark with '{needle}': {report:#?}"
            );
        }
    }
}

/// A Humble `sensor_msgs/msg/Range` (no `variance`, which Iron added) in a bag that stores no
/// definition: the bundled (Jazzy) one does not decode it, and the remark names the typestore
/// that does; with that typestore the bag decodes.
#[test]
fn a_payload_remark_names_the_typestore_that_decodes_it() {
    let dir = tempfile::tempdir().unwrap();
    let uri = dir.path().join("humble_range");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        storage: WriterOptions {
            storage: rosbag2_rs_storage::StorageId::parse("sqlite3").unwrap(),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new("/range", "sensor_msgs/msg/Range"), None)
        .unwrap();
    let topic: Arc<str> = Arc::from("/range");
    for i in 0..3i64 {
        let mut cdr = vec![0, 1, 0, 0];
        cdr.extend((i as i32).to_le_bytes()); // stamp.sec
        cdr.extend(0u32.to_le_bytes()); // stamp.nanosec
        cdr.extend(4u32.to_le_bytes()); // frame_id
        cdr.extend(b"map\0");
        cdr.extend([0, 0, 0, 0]); // radiation_type, then padding to 4
        for value in [0.5f32, 0.1, 4.0, 1.5] {
            cdr.extend(value.to_le_bytes()); // field_of_view, min, max, range
        }
        writer
            .write(&SerializedMessage::new(topic.clone(), START + i, cdr))
            .unwrap();
    }
    writer.close().unwrap();
    let file = only_file(&uri, ".db3");
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute("DELETE FROM message_definitions", [])
        .unwrap();
    let report = check(&uri);
    assert!(report.is_clean(), "{report:#?}");
    let remark = report.remarks().next().expect("a payload remark");
    assert_eq!(remark.kind, ProblemKind::Payload, "{report:#?}");
    assert!(
        remark.message.contains("`--typestore humble` decodes them"),
        "{report:#?}"
    );
    let report = doctor(
        &uri,
        &DoctorOptions {
            typestore: Some(rosbag2_rs_codec::Typestore::Humble),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(report.remarks().count(), 0, "{report:#?}");
    assert_eq!(report.decoded_messages, 3);
}

#[test]
fn flipped_bytes_in_a_chunk_fail_the_crcs() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "mcap", CompressionOptions::default());
    let file = only_file(&bag, ".mcap");
    let mut data = std::fs::read(&file).unwrap();
    let at = data
        .windows(16)
        .position(|w| w == b"hello number 0007")
        .or_else(|| data.windows(16).position(|w| w == b"hello number 000"))
        .unwrap();
    data[at + 3] ^= 0x20;
    std::fs::write(&file, &data).unwrap();
    let report = check(&bag);
    // One cause: the chunk that fails its CRC and is skipped.
    let damage: Vec<&Problem> = report.damage().collect();
    assert_eq!(damage.len(), 1, "{report:#?}");
    assert_eq!(damage[0].kind, ProblemKind::Crc);
    assert!(damage[0].message.contains("skipped"), "{report:#?}");
    // Its consequences under it: the data section's CRC, and the chunk's messages missing
    // against the index and the metadata.
    let consequences = &damage[0].consequences;
    let has = |kind, needle: &str| {
        consequences
            .iter()
            .any(|c| c.kind == kind && c.message.contains(needle))
    };
    assert!(
        has(ProblemKind::Crc, "data section CRC mismatch"),
        "{report:#?}"
    );
    assert!(has(ProblemKind::Index, "reading gave"), "{report:#?}");
    assert!(has(ProblemKind::Metadata, "in all"), "{report:#?}");
    assert_eq!(report.remarks().count(), 0, "{report:#?}");
    assert!(!report.is_clean());
}

#[test]
fn disagreements_without_damage_are_causes_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "mcap", CompressionOptions::default());
    // A byte of a message outside any chunk's CRC: rewrite the data section CRC only.
    let file = only_file(&bag, ".mcap");
    let mut data = std::fs::read(&file).unwrap();
    let len = data.len();
    let summary_start = u64::from_le_bytes(data[len - 8 - 20..len - 8 - 12].try_into().unwrap());
    let data_end = summary_start as usize - 13;
    data[data_end + 9] ^= 0xff;
    std::fs::write(&file, &data).unwrap();
    let report = check(&bag);
    let damage: Vec<&Problem> = report.damage().collect();
    assert_eq!(damage.len(), 1, "{report:#?}");
    assert!(damage[0].message.contains("data section CRC mismatch"));
    assert!(damage[0].consequences.is_empty());
}

#[test]
fn an_attachment_failing_its_crc_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "mcap", CompressionOptions::default());
    let file = only_file(&bag, ".mcap");
    let data: Vec<u8> = (0..100).map(|i| (i * 31 % 251) as u8).collect();
    let attachment = Attachment {
        name: "z.bin".into(),
        media_type: "application/octet-stream".into(),
        log_time: 7,
        create_time: 8,
        data: data.clone().into(),
    };
    append_attachments(&file, &[attachment]).unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes
        .windows(data.len())
        .position(|w| w == &data[..])
        .unwrap();
    bytes[at + 50] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    assert_problem(&check(&bag), ProblemKind::Crc, "'z.bin'");
}

fn to_ros1(bag: &Path, out: &Path) {
    convert(&ConvertOptions {
        inputs: vec![bag.to_path_buf().into()],
        output: BagWriterOptions {
            uri: out.to_path_buf(),
            storage: WriterOptions {
                storage: rosbag2_rs_storage::StorageId::parse("rosbag_v2").unwrap(),
                ..Default::default()
            },
            ..Default::default()
        },
        filter: TopicFilter::topics(["/chatter"]),
        ..Default::default()
    })
    .unwrap();
}

fn truncate(file: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(file)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn truncated_files_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "mcap", CompressionOptions::default());
    let ros1 = dir.path().join("cut.bag");
    to_ros1(&bag, &ros1);
    let file = only_file(&bag, ".mcap");
    truncate(&file, std::fs::metadata(&file).unwrap().len() / 2);
    let report = check(&bag);
    assert_problem(&report, ProblemKind::Index, "footer");
    // A ROS 1 bag cut short loses its index.
    truncate(&ros1, std::fs::metadata(&ros1).unwrap().len() - 40);
    let report = check(&ros1);
    assert_problem(&report, ProblemKind::Index, "index");
}

#[test]
fn an_empty_file_and_a_missing_file_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "mcap", CompressionOptions::default());
    let file = only_file(&bag, ".mcap");
    std::fs::write(&file, b"").unwrap();
    let report = check(&bag);
    assert_problem(&report, ProblemKind::Unreadable, "empty file");
    assert_problem(&report, ProblemKind::Metadata, "the files hold 0");
    std::fs::remove_file(&file).unwrap();
    let report = check(&bag);
    assert_problem(&report, ProblemKind::Metadata, "which does not exist");
}

#[test]
fn bad_db3_rows_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "sqlite3", CompressionOptions::default());
    let file = only_file(&bag, ".db3");
    {
        let conn = rusqlite::Connection::open(&file).unwrap();
        conn.execute(
            "INSERT INTO messages (topic_id, timestamp, data) VALUES (99, ?1, x'00010000')",
            [START + 5],
        )
        .unwrap();
        // The first /chatter message: a string length far past the payload.
        conn.execute(
            "UPDATE messages SET data = x'00010000ffffff7f6869' WHERE id = \
             (SELECT m.id FROM messages m JOIN topics t ON m.topic_id = t.id \
              WHERE t.name = '/chatter' ORDER BY m.timestamp LIMIT 1)",
            [],
        )
        .unwrap();
    }
    let report = check(&bag);
    assert_problem(&report, ProblemKind::Index, "topic id no topic has: 1");
    assert_problem(&report, ProblemKind::Payload, "/chatter");
}

#[test]
fn definitions_that_do_not_match_or_parse_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "sqlite3", CompressionOptions::default());
    let file = only_file(&bag, ".db3");
    let conn = rusqlite::Connection::open(&file).unwrap();
    // Thing's payloads hold an int32 and a float64: a definition with a string does not match.
    conn.execute(
        "UPDATE message_definitions SET encoded_message_definition = 'int32 a\nstring b\n' \
         WHERE topic_type = 'test_msgs/msg/Thing'",
        [],
    )
    .unwrap();
    let report = check(&bag);
    assert_problem(&report, ProblemKind::Payload, "/thing");
    assert_eq!(kinds(&report), vec![ProblemKind::Payload], "{report:#?}");
    // The data is intact: a remark, not damage.
    assert!(report.is_clean(), "{report:#?}");
    assert_eq!(report.remarks().count(), 1);
    conn.execute(
        "UPDATE message_definitions SET encoded_message_definition = 'int32 a\nfloat64\n' \
         WHERE topic_type = 'test_msgs/msg/Thing'",
        [],
    )
    .unwrap();
    let report = check(&bag);
    assert_problem(&report, ProblemKind::Definition, "/thing");
}

#[test]
fn a_recorded_type_hash_that_the_definition_does_not_give_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "sqlite3", CompressionOptions::default());
    let file = only_file(&bag, ".db3");
    let mut cache = MessageDefinitionCache::new();
    let right = cache.type_hash("std_msgs/msg/String").unwrap();
    let conn = rusqlite::Connection::open(&file).unwrap();
    let set = |hash: &str| {
        conn.execute(
            "UPDATE topics SET type_description_hash = ?1 WHERE name = '/chatter'",
            [hash],
        )
        .unwrap()
    };
    set(&right);
    assert!(check(&bag).is_clean(), "{:#?}", check(&bag).problems);
    let wrong = format!("RIHS01_{}", "ab".repeat(32));
    set(&wrong);
    assert_problem(&check(&bag), ProblemKind::Definition, "recorded type hash");
}

#[test]
fn metadata_counts_and_times_that_disagree_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "mcap", CompressionOptions::default());
    let mut metadata = BagMetadata::read_from_dir(&bag).unwrap();
    metadata.message_count += 1;
    metadata.starting_time -= 1;
    metadata.write_to_dir(&bag).unwrap();
    let report = check(&bag);
    assert_problem(&report, ProblemKind::Metadata, "counts 41 messages in all");
    assert_problem(&report, ProblemKind::Time, "time range");
    // Nothing explains either: the wrong count is damage, the loose time range a remark.
    assert_eq!(report.damage().count(), 1, "{report:#?}");
    assert_eq!(report.remarks().count(), 1, "{report:#?}");
    let mut metadata = BagMetadata::read_from_dir(&bag).unwrap();
    metadata.message_count -= 1;
    metadata.write_to_dir(&bag).unwrap();
    let report = check(&bag);
    assert!(report.is_clean(), "{report:#?}");
    assert_eq!(report.remarks().next().unwrap().kind, ProblemKind::Time);
}

#[test]
fn reindex_to_repairs_a_copy_and_leaves_the_input_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), "mcap", CompressionOptions::default());
    let file = only_file(&bag, ".mcap");
    truncate(&file, std::fs::metadata(&file).unwrap().len() * 3 / 4);
    let before = std::fs::read(&file).unwrap();
    let metadata_before = std::fs::read(bag.join("metadata.yaml")).unwrap();
    let out = dir.path().join("repaired");
    let report = reindex_to(&bag, &out).unwrap();
    assert!(report.metadata.message_count > 0);
    assert_eq!(std::fs::read(&file).unwrap(), before, "input untouched");
    assert_eq!(
        std::fs::read(bag.join("metadata.yaml")).unwrap(),
        metadata_before
    );
    assert!(!check(&bag).is_clean());
    let repaired = check(&out);
    assert!(repaired.is_clean(), "{:#?}", repaired.problems);
    assert!(matches!(
        reindex_to(&bag, &out),
        Err(StorageError::AlreadyExists(_))
    ));
}
