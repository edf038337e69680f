//! Behaviour of the storage layer through its public API, for both storage plugins.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::qos::{Durability, Reliability};
use rosbag2_rs_storage::storage::{mcap_reader::McapReader, OpenMode};
use rosbag2_rs_storage::*;

use crate::bags::*;

const STORAGES: [StorageId; 2] = [StorageId::Mcap, StorageId::Sqlite3];

fn same(a: &SerializedMessage, b: &SerializedMessage, storage: StorageId) -> bool {
    if std::env::var("DEBUG_SAME").is_ok()
        && (a.topic != b.topic
            || a.recv_timestamp != b.recv_timestamp
            || a.data != b.data
            || a.send_timestamp != b.send_timestamp)
    {
        eprintln!("{storage:?} mismatch:\n got  {a:?}\n want {b:?}");
    }
    // SQLite stores no send time.
    let send_ok = storage == StorageId::Sqlite3 || a.send_timestamp == b.send_timestamp;
    a.topic == b.topic && a.recv_timestamp == b.recv_timestamp && a.data == b.data && send_ok
}

#[test]
fn round_trip_preserves_messages_topics_qos_and_definitions() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        let msgs = messages(500, 1_700_000_000_000_000_000);
        let written = write_bag(options(&bag, storage), &msgs);
        assert_eq!(written.message_count, 500);

        let read = read_all(&bag);
        assert_eq!(read.len(), msgs.len(), "{storage:?}");
        assert!(
            read.iter().zip(&msgs).all(|(a, b)| same(a, b, storage)),
            "{storage:?}"
        );

        let meta = BagMetadata::read_from_dir(&bag).unwrap();
        assert_eq!(meta.storage_identifier, storage.as_str());
        assert_eq!(meta.message_count, 500);
        assert_eq!(meta.starting_time, msgs[0].recv_timestamp);
        assert_eq!(meta.duration, 499_000_000);
        assert_eq!(meta.custom_data["owner"], "tests");
        assert_eq!(meta.files.len(), 1);
        assert_eq!(
            meta.topic("/map")
                .unwrap()
                .topic_metadata
                .offered_qos_profiles[0]
                .durability,
            Durability::TransientLocal
        );
        assert_eq!(meta.topic("/chatter").unwrap().message_count, 125);

        let reader = SequentialReader::open(&bag).unwrap();
        let mut cache = MessageDefinitionCache::with_prefixes(vec![]);
        let def = reader.message_definition("nav_msgs/msg/OccupancyGrid", &mut cache);
        assert_eq!(def.encoding, "ros2msg");
        assert!(def
            .encoded_message_definition
            .contains("MSG: nav_msgs/MapMetaData"));
        let file_topic = reader
            .topics()
            .iter()
            .find(|t| t.topic_metadata.name == "/scan")
            .unwrap();
        assert_eq!(
            file_topic.topic_metadata.offered_qos_profiles[0].reliability,
            Reliability::BestEffort
        );
    }
}

#[test]
fn single_storage_file_opens_without_metadata() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        write_bag(options(&bag, storage), &messages(50, 10));
        let file = bag_file(&bag, 0);
        assert_eq!(read_all(&file).len(), 50);
        std::fs::remove_file(bag.join("metadata.yaml")).unwrap();
        let reader = SequentialReader::open(&bag).unwrap();
        assert_eq!(reader.bags()[0].metadata.message_count, 50);
        assert_eq!(reader.start_time(), 10);
    }
}

#[test]
fn out_of_order_writes_are_read_in_time_order() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        let mut msgs = messages(2000, 0);
        // Reverse blocks so that chunks overlap in time and are internally unsorted.
        for block in msgs.chunks_mut(150) {
            block.reverse();
        }
        msgs.swap(0, 1999);
        write_bag(options(&bag, storage), &msgs);
        let read = read_all(&bag);
        assert_eq!(read.len(), 2000);
        assert!(
            read.windows(2)
                .all(|w| w[0].recv_timestamp <= w[1].recv_timestamp),
            "{storage:?}"
        );
        let mut expected = msgs.clone();
        expected.sort_by_key(|m| m.recv_timestamp);
        assert!(read.iter().zip(&expected).all(|(a, b)| same(a, b, storage)));
    }
}

#[test]
fn seek_uses_index_and_clamps() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        let msgs = messages(1000, 5_000_000_000);
        write_bag(options(&bag, storage), &msgs);
        let mut r = SequentialReader::open(&bag).unwrap();
        for _ in 0..10 {
            r.read_next().unwrap();
        }
        r.seek(msgs[700].recv_timestamp).unwrap();
        assert!(same(&r.read_next().unwrap().unwrap(), &msgs[700], storage));
        r.seek(msgs[700].recv_timestamp + 1).unwrap();
        assert!(same(&r.read_next().unwrap().unwrap(), &msgs[701], storage));
        r.seek(0).unwrap();
        assert!(same(&r.read_next().unwrap().unwrap(), &msgs[0], storage));
        r.seek(i64::MAX).unwrap();
        assert!(r.read_next().unwrap().is_none());
        r.seek(msgs[999].recv_timestamp).unwrap();
        assert_eq!(r.by_ref().count(), 1);
    }
}

#[test]
fn filters_select_topics() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        write_bag(options(&bag, storage), &messages(400, 0));
        let mut r = SequentialReader::open(&bag).unwrap();
        r.set_filter(
            &TopicFilter::from_parts(vec!["/chatter".into()], Some("/s.*"), vec![], None).unwrap(),
        )
        .unwrap();
        let got: Vec<_> = r.map(Result::unwrap).collect();
        assert_eq!(got.len(), 200);
        assert!(got
            .iter()
            .all(|m| &*m.topic == "/chatter" || &*m.topic == "/scan"));

        let mut r = SequentialReader::open(&bag).unwrap();
        r.set_filter(
            &TopicFilter::from_parts(vec![], None, vec!["/map".into()], Some("/o.*")).unwrap(),
        )
        .unwrap();
        assert_eq!(r.count(), 200);
    }
}

#[test]
fn splits_by_size_duration_and_on_demand_keep_metadata_correct() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        let events = Arc::new(Mutex::new(Vec::new()));
        let mut opts = options(&bag, storage);
        opts.max_bagfile_duration = 100_000_000; // 100 ms
        let mut w = BagWriter::create(opts).unwrap();
        let sink = events.clone();
        w.on_split(move |e| sink.lock().unwrap().push(e.clone()));
        for t in topics() {
            w.create_topic(&t, None).unwrap();
        }
        let msgs = messages(1000, 0);
        for (i, m) in msgs.iter().enumerate() {
            w.write(m).unwrap();
            if i == 950 {
                w.split().unwrap();
            }
            if i == 120 {
                // metadata.yaml is already correct for the closed files
                let on_disk = BagMetadata::read_from_dir(&bag).unwrap();
                assert_eq!(on_disk.files.len(), 1);
                assert_eq!(on_disk.files[0].message_count, 100);
            }
        }
        let meta = w.close().unwrap();
        assert_eq!(meta.files.len(), 11, "{storage:?}: {:?}", meta.files);
        assert_eq!(events.lock().unwrap().len(), 10);
        assert_eq!(
            meta.files.iter().map(|f| f.message_count).sum::<u64>(),
            1000
        );
        assert_eq!(meta.files[0].starting_time, 0);
        assert_eq!(meta.files[0].duration, 99_000_000);
        assert_eq!(meta.files[9].message_count, 51);
        assert_eq!(
            BagMetadata {
                bag_size: meta.bag_size,
                ..BagMetadata::read_from_dir(&bag).unwrap()
            },
            meta
        );
        let read = read_all(&bag);
        assert!(read.iter().zip(&msgs).all(|(a, b)| same(a, b, storage)) && read.len() == 1000);

        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        let mut opts = options(&bag, storage);
        opts.max_bagfile_size = 200_000;
        let meta = write_bag(opts, &messages(3000, 0));
        assert!(
            meta.files.len() >= 2,
            "{storage:?}: size split produced {:?}",
            meta.files
        );
        assert_eq!(read_all(&bag).len(), 3000);
    }
}

/// Hours of 1 s splits: `metadata.yaml` is rewritten at every split up to
/// `METADATA_REWRITE_SHARE` files, then at a share of the splits (its cost stays flat per
/// split), while a reader of the open bag still finds every closed file; each file embeds the
/// metadata of itself alone, so that files do not grow with the bag.
#[test]
fn a_long_bag_rewrites_its_metadata_at_a_share_of_its_splits() {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    let mut w = BagWriter::create(options(&bag, StorageId::Mcap)).unwrap();
    for t in topics() {
        w.create_topic(&t, None).unwrap();
    }
    let (mut rewrites, mut listed) = (0, 0);
    for (closed, m) in messages(160, 0).iter().enumerate() {
        w.write(m).unwrap();
        assert!(w.split().unwrap());
        let on_disk = BagMetadata::read_from_dir(&bag).unwrap();
        let now_listed = on_disk.files.len();
        if now_listed != listed {
            rewrites += 1;
            listed = now_listed;
        }
        let closed = closed + 1;
        if closed <= METADATA_REWRITE_SHARE {
            assert_eq!(listed, closed);
        }
        assert!(
            closed - listed <= closed / METADATA_REWRITE_SHARE,
            "{closed}: {listed}"
        );
        assert_eq!(
            Bag::locate(&bag).unwrap().files.len(),
            closed,
            "after {closed} splits"
        );
    }
    assert!(rewrites < 120, "{rewrites} rewrites in 160 splits");
    w.close().unwrap();
    assert_eq!(BagMetadata::read_from_dir(&bag).unwrap().files.len(), 161);
    for index in [0, 159] {
        let reader = McapReader::open(&bag_file(&bag, index), OpenMode::Strict).unwrap();
        let own = reader.embedded_metadata().unwrap();
        assert_eq!(own.relative_file_paths.len(), 1, "{index}");
        assert_eq!((own.files.len(), own.message_count), (1, 1), "{index}");
    }
}

#[test]
fn the_custom_data_source_is_asked_at_every_split_and_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    let mut w = BagWriter::create(options(&bag, StorageId::Mcap)).unwrap();
    let calls = Arc::new(Mutex::new(0u64));
    let counter = calls.clone();
    w.set_custom_data_source(move || {
        let mut n = counter.lock().unwrap();
        *n += 1;
        [("dropped".to_string(), n.to_string())].into()
    });
    for t in topics() {
        w.create_topic(&t, None).unwrap();
    }
    let msgs = messages(30, 0);
    for (i, m) in msgs.iter().enumerate() {
        w.write(m).unwrap();
        if i % 10 == 9 && i < 29 {
            w.split().unwrap();
            let on_disk = BagMetadata::read_from_dir(&bag).unwrap();
            let splits = (i / 10 + 1).to_string();
            assert_eq!(on_disk.custom_data["dropped"], splits, "after split {i}");
            assert_eq!(on_disk.custom_data["owner"], "tests");
        }
    }
    let meta = w.close().unwrap();
    assert_eq!(meta.custom_data["dropped"], "3");
    assert_eq!(
        BagMetadata::read_from_dir(&bag).unwrap().custom_data,
        meta.custom_data
    );
}

#[test]
fn several_bags_merge_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let mut first = messages(300, 0);
    first.retain(|m| m.recv_timestamp % 2_000_000 == 0);
    let mut second = messages(300, 0);
    second.retain(|m| m.recv_timestamp % 2_000_000 != 0);
    write_bag(options(&a, StorageId::Mcap), &first);
    write_bag(options(&b, StorageId::Sqlite3), &second);
    let merged: Vec<_> = SequentialReader::open_many(&[a, b])
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(merged.len(), 300);
    assert!(merged
        .windows(2)
        .all(|w| w[0].recv_timestamp < w[1].recv_timestamp));
}

#[test]
fn compression_and_presets_round_trip() {
    for (preset, compression) in [
        ("none", Some("zstd")),
        ("none", Some("lz4")),
        ("fastwrite", None),
        ("zstd_fast", None),
        ("zstd_small", None),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        let mut opts = options(&bag, StorageId::Mcap);
        opts.storage.preset = StoragePreset::parse(preset).unwrap();
        opts.storage.compression = compression.map(|c| CompressionFormat::parse(c).unwrap());
        let msgs = messages(800, 0);
        write_bag(opts, &msgs);
        let read = read_all(&bag);
        assert_eq!(read.len(), 800, "{preset} {compression:?}");
        assert!(read
            .iter()
            .zip(&msgs)
            .all(|(a, b)| same(a, b, StorageId::Mcap)));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(&dir.path().join("bag"), StorageId::Sqlite3);
    opts.storage.preset = StoragePreset::Resilient;
    write_bag(opts, &messages(100, 0));
    assert_eq!(read_all(&dir.path().join("bag")).len(), 100);
}

#[test]
fn invalid_writer_options_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (storage, preset, compression, needle) in [
        (
            StorageId::Mcap,
            "turbo",
            None,
            "unknown MCAP storage preset 'turbo'",
        ),
        (
            StorageId::Mcap,
            "none",
            Some("brotli"),
            "unknown compression format 'brotli'",
        ),
        (
            StorageId::Mcap,
            "none",
            Some("bz2"),
            "unknown MCAP chunk compression 'bz2' (valid: none, lz4, zstd)",
        ),
        (
            StorageId::Mcap,
            "fastwrite",
            Some("zstd"),
            "cannot compress",
        ),
        (
            StorageId::Sqlite3,
            "turbo",
            None,
            "unknown SQLite3 storage preset",
        ),
    ] {
        let mut opts = options(
            &dir.path()
                .join(format!("b{preset}{compression:?}{storage:?}")),
            storage,
        );
        let create = || -> Result<BagWriter> {
            opts.storage.preset = StoragePreset::parse_for(storage, preset)?;
            opts.storage.compression = compression
                .map(|c| CompressionFormat::parse(c).and_then(|c| c.check_chunks_of(storage)))
                .transpose()?;
            BagWriter::create(opts)
        };
        let err = create().err().expect("must fail").to_string();
        assert!(err.contains(needle), "{err}");
    }
    let existing = dir.path().join("exists");
    std::fs::create_dir(&existing).unwrap();
    let err = BagWriter::create(options(&existing, StorageId::Mcap))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("already exists"), "{err}");
    assert!(StorageId::parse("rosbag1").is_err());
}

/// Writes a bag, returns the path of its only storage file.
fn single_file_bag(dir: &Path, storage: StorageId, n: usize) -> (PathBuf, PathBuf) {
    let bag = dir.join("bag");
    write_bag(options(&bag, storage), &messages(n, 0));
    let file = bag_file(&bag, 0);
    (bag, file)
}

#[test]
fn truncated_mcap_is_a_clear_error_and_reindex_recovers_complete_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, file) = single_file_bag(dir.path(), StorageId::Mcap, 2000);
    let full = std::fs::read(&file).unwrap();
    for cut in [full.len() - 1, full.len() * 2 / 3, full.len() / 3, 20, 9, 3] {
        std::fs::write(&file, &full[..cut]).unwrap();
        let err = SequentialReader::open(&bag)
            .err()
            .expect("truncated must fail")
            .to_string();
        assert!(
            err.contains(&*file.to_string_lossy())
                && (err.contains("truncated") || err.contains("not an MCAP")),
            "cut {cut}: {err}"
        );
    }
    // Cut in the middle: reindex keeps every complete chunk, in order.
    let cut = full.len() * 2 / 3;
    std::fs::write(&file, &full[..cut]).unwrap();
    let report = reindex(&bag).unwrap();
    assert_eq!(report.repaired.len(), 1);
    let kept = report.repaired[0].1 as usize;
    assert!(
        kept > 2000 / 2,
        "only {kept} of 2000 recovered from 2/3 of the file"
    );
    let read = read_all(&bag);
    assert_eq!(read.len(), kept);
    let expected = messages(2000, 0);
    assert!(
        read.iter()
            .zip(&expected)
            .all(|(a, b)| same(a, b, StorageId::Mcap)),
        "recovered messages must be the first ones"
    );
    assert_eq!(report.metadata.message_count, kept as u64);
    assert_eq!(
        report.metadata.custom_data["owner"], "tests",
        "custom data survives reindex"
    );
}

#[test]
fn corrupted_mcap_chunk_is_skipped_not_returned() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, file) = single_file_bag(dir.path(), StorageId::Mcap, 2000);
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..middle + 64] {
        *b ^= 0x5a;
    }
    std::fs::write(&file, &bytes).unwrap();
    // The damaged chunk hides only itself: the messages of the others are read, in order.
    let times: Vec<i64> = SequentialReader::open(&bag)
        .unwrap()
        .map(|m| m.unwrap().recv_timestamp)
        .collect();
    assert!(!times.is_empty() && times.len() < 2000, "{}", times.len());
    assert!(times.is_sorted());
    let mut reader = McapReader::open(&file, OpenMode::Strict).unwrap();
    while reader.read_next().unwrap().is_some() {}
    let skipped = &reader.damage().skipped_chunks;
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].reason.contains("CRC"), "{}", skipped[0].reason);
    assert_eq!(skipped[0].messages, Some(2000 - times.len() as u64));
}

#[test]
fn garbage_and_empty_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        ("empty.mcap", b"", "only 0 bytes"),
        ("junk.mcap", b"this is not an mcap file at all", "bad magic"),
        (
            "junk.db3",
            b"SQLite format 3\0 but then nothing useful follows here......",
            "junk.db3",
        ),
        (
            "junk.bag",
            b"#ROSBAG V2.0",
            "neither an MCAP, an SQLite3 nor a ROS 1 bag file",
        ),
    ];
    for (name, content, needle) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let err = SequentialReader::open(&path)
            .err()
            .expect("must fail")
            .to_string();
        assert!(err.contains(needle), "{name}: {err}");
    }
    let err = SequentialReader::open(&dir.path().join("missing"))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("missing"), "{err}");
}

#[test]
fn truncated_sqlite_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, file) = single_file_bag(dir.path(), StorageId::Sqlite3, 3000);
    let full = std::fs::read(&file).unwrap();
    std::fs::write(&file, &full[..full.len() / 2]).unwrap();
    let result = SequentialReader::open(&bag).and_then(|r| r.collect::<Result<Vec<_>>>());
    let err = result.expect_err("truncated sqlite must fail").to_string();
    assert!(err.contains(&*file.to_string_lossy()), "{err}");
}

#[test]
fn malformed_metadata_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (bag, _) = single_file_bag(dir.path(), StorageId::Mcap, 10);
    std::fs::write(
        bag.join("metadata.yaml"),
        "rosbag2_bagfile_information: [1, 2",
    )
    .unwrap();
    let err = SequentialReader::open(&bag).err().unwrap().to_string();
    assert!(
        err.contains("metadata.yaml") && err.contains("invalid metadata"),
        "{err}"
    );
    reindex(&bag).unwrap();
    assert_eq!(read_all(&bag).len(), 10);
}

#[test]
fn killed_writer_leaves_a_bag_reindex_recovers() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        let mut w = BagWriter::create(options(&bag, storage)).unwrap();
        for t in topics() {
            w.create_topic(&t, None).unwrap();
        }
        let msgs = messages(5000, 0);
        for m in &msgs {
            w.write(m).unwrap();
        }
        // A killed process runs no destructor: nothing after the last completed chunk (MCAP)
        // or committed transaction (SQLite) is written.
        std::mem::forget(w);
        assert!(SequentialReader::open(&bag).is_err() || storage == StorageId::Sqlite3);
        let report = reindex(&bag).unwrap();
        let read = read_all(&bag);
        assert_eq!(read.len() as u64, report.metadata.message_count);
        assert!(
            read.len() >= 4000,
            "{storage:?}: only {} of 5000 recovered",
            read.len()
        );
        assert!(read.iter().zip(&msgs).all(|(a, b)| same(a, b, storage)));
    }
}

#[test]
fn strict_open_of_summaryless_but_complete_mcap_works() {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    let mut opts = options(&bag, StorageId::Mcap);
    opts.storage.preset = StoragePreset::Fastwrite;
    write_bag(opts, &messages(300, 0));
    let file = bag_file(&bag, 0);
    assert!(!McapReader::needs_repair(&file).unwrap());
    let r = McapReader::open(&file, OpenMode::Strict).unwrap();
    assert_eq!(r.topics().iter().map(|t| t.message_count).sum::<u64>(), 300);
}

mod damaged_files_never_panic {
    use super::*;
    use proptest::prelude::*;

    fn pristine() -> &'static [u8] {
        static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        BYTES.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let bag = dir.path().join("bag");
            let mut opts = options(&bag, StorageId::Mcap);
            opts.storage.chunk_size = 1024;
            write_bag(opts, &messages(300, 0));
            std::fs::read(bag_file(&bag, 0)).unwrap()
        })
    }

    fn read_everything(path: &Path, mode: OpenMode) {
        if let Ok(mut reader) = McapReader::open(path, mode) {
            reader.set_filter(&TopicFilter::all());
            for _ in 0..10_000 {
                match reader.read_next() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
            let _ = reader.seek(150_000_000);
            let _ = reader.read_next();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn corrupted_or_truncated_mcap_gives_errors_not_panics(
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            let mut bytes = pristine().to_vec();
            for (at, value) in flips {
                let i = at.index(bytes.len());
                bytes[i] = value;
            }
            if truncate {
                bytes.truncate(cut.index(bytes.len()));
            }
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("damaged.mcap");
            std::fs::write(&path, &bytes).unwrap();
            read_everything(&path, OpenMode::Strict);
            read_everything(&path, OpenMode::Recover);
        }
    }
}

/// A bag of twelve split files named as rosbag2 names them, read without its `metadata.yaml`
/// and reindexed: files and messages in split order, with Lyrical's names
/// (`{index}_{prefix}_{time}`) as with the older ones (`{prefix}_{index}`).
#[test]
fn twelve_split_files_are_read_and_reindexed_in_split_order_under_either_naming() {
    for lyrical in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("my_bag");
        let mut w = BagWriter::create(options(&bag, StorageId::Mcap)).unwrap();
        for t in topics() {
            w.create_topic(&t, None).unwrap();
        }
        let msgs = messages(12, 1_000);
        for (i, m) in msgs.iter().enumerate() {
            if i > 0 {
                assert!(w.split().unwrap());
            }
            w.write(m).unwrap();
        }
        w.close().unwrap();
        let written: Vec<PathBuf> = (0..12).map(|i| bag_file(&bag, i)).collect();
        std::fs::remove_file(bag.join("metadata.yaml")).unwrap();
        let mut expected = Vec::new();
        for (i, file) in written.iter().enumerate() {
            // Local times that sort against the index (a clock set back between splits).
            let name = if lyrical {
                format!("{i}_my_bag_2026_12_07-10_{:02}_00.mcap", 59 - i)
            } else {
                format!("my_bag_{i}.mcap")
            };
            std::fs::rename(file, bag.join(&name)).unwrap();
            expected.push(name);
        }
        let read: Vec<i64> = read_all(&bag).iter().map(|m| m.recv_timestamp).collect();
        let times: Vec<i64> = msgs.iter().map(|m| m.recv_timestamp).collect();
        assert_eq!(read, times, "lyrical names: {lyrical}");
        let report = reindex(&bag).unwrap();
        assert_eq!(report.metadata.relative_file_paths, expected);
    }
}

/// Each bag read within its own receive-time window (`convert --input-options`' `start_time_ns`
/// and `end_time_ns`), merged in time order, also after a seek; and a topic in several bags
/// offers the QoS profiles of all (rosbag2's rewriter concatenates them).
#[test]
fn each_input_is_read_within_its_own_window() {
    for storage in STORAGES {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        // 2 000 messages a step apart, from 0 (a) and from 500 ns (b).
        write_bag(options(&a, storage), &messages(2000, 0));
        write_bag(options(&b, storage), &messages(2000, 500));
        let step = messages(2, 0)[1].recv_timestamp;
        let inputs = [
            InputBag {
                start: Some(100 * step),
                end: Some(200 * step),
                ..a.clone().into()
            },
            InputBag {
                start: Some(150 * step),
                ..b.clone().into()
            },
        ];
        let in_window = |m: &SerializedMessage, input: &InputBag| {
            m.recv_timestamp >= input.start.unwrap_or(i64::MIN)
                && m.recv_timestamp <= input.end.unwrap_or(i64::MAX)
        };
        let mut expected: Vec<i64> = messages(2000, 0)
            .iter()
            .filter(|m| in_window(m, &inputs[0]))
            .chain(
                messages(2000, 500)
                    .iter()
                    .filter(|m| in_window(m, &inputs[1])),
            )
            .map(|m| m.recv_timestamp)
            .collect();
        expected.sort_unstable();
        let mut reader = SequentialReader::open_inputs(&inputs).unwrap();
        let times = |r: &mut SequentialReader| -> Vec<i64> {
            r.map(|m| m.unwrap().recv_timestamp).collect()
        };
        assert_eq!(times(&mut reader), expected, "{storage:?}");
        reader.seek(180 * step).unwrap();
        let after: Vec<i64> = expected
            .iter()
            .copied()
            .filter(|t| *t >= 180 * step)
            .collect();
        assert_eq!(times(&mut reader), after, "{storage:?}: after a seek");
        let map = reader
            .topics()
            .iter()
            .find(|t| t.topic_metadata.name == "/map");
        assert_eq!(map.unwrap().topic_metadata.offered_qos_profiles.len(), 2);
    }
}
