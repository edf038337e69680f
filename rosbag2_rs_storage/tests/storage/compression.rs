//! rosbag2 file and message compression: round trips through our writer and reader, rosbag2's
//! layout on disk, and clear errors for damaged or unknown compression.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rosbag2_rs_storage::*;

use crate::bags::{bag_file, compression};

const STORAGES: [StorageId; 2] = [StorageId::Mcap, StorageId::Sqlite3];
const MODES: [CompressionMode; 2] = [CompressionMode::File, CompressionMode::Message];

fn messages(n: usize) -> Vec<SerializedMessage> {
    let topics: [Arc<str>; 2] = [Arc::from("/chatter"), Arc::from("/scan")];
    (0..n)
        .map(|i| {
            let mut data = vec![0u8, 1, 0, 0];
            data.extend((0..(i % 5) * 700).map(|j| ((i + j / 13) % 251) as u8));
            let mut m =
                SerializedMessage::new(topics[i % 2].clone(), 1_000 + i as i64 * 1_000_000, data);
            m.send_timestamp = m.recv_timestamp - 7;
            m
        })
        .collect()
}

fn write(
    dir: &Path,
    storage: StorageId,
    compression: CompressionOptions,
    split: u64,
) -> BagMetadata {
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: dir.to_path_buf(),
        storage: WriterOptions {
            storage,
            chunk_size: 16 * 1024,
            ..Default::default()
        },
        max_bagfile_size: split,
        compression,
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
        .unwrap();
    writer
        .create_topic(
            &TopicMetadata::new("/scan", "sensor_msgs/msg/LaserScan"),
            None,
        )
        .unwrap();
    for m in messages(400) {
        writer.write(&m).unwrap();
    }
    writer.close().unwrap()
}

fn read(path: &Path) -> Vec<SerializedMessage> {
    SequentialReader::open(path)
        .unwrap()
        .collect::<Result<Vec<_>>>()
        .unwrap()
}

fn assert_same(got: &[SerializedMessage], want: &[SerializedMessage]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(
            (&g.topic, g.recv_timestamp, &g.data),
            (&w.topic, w.recv_timestamp, &w.data)
        );
    }
}

#[test]
fn every_mode_and_storage_round_trips_with_splits_and_threads() {
    let tmp = tempfile::tempdir().unwrap();
    for storage in STORAGES {
        for mode in MODES {
            for threads in [1, 3] {
                let dir = tmp.path().join(format!("{storage:?}_{mode:?}_{threads}"));
                // Message mode shrinks the files: split smaller to get several (an SQLite file
                // counts 32 KiB from the start).
                let split = if mode == CompressionMode::File {
                    200_000
                } else {
                    60_000
                };
                let metadata = write(&dir, storage, compression(mode, threads), split);
                let files = metadata.relative_file_paths.len();
                assert!((2..20).contains(&files), "{metadata:?}");
                assert_same(&read(&dir), &messages(400));
                let on_disk = BagMetadata::read_from_dir(&dir).unwrap();
                assert_eq!(on_disk.compression_format, "zstd");
                assert_eq!(on_disk.compression_mode, mode.as_metadata_str());
                assert_eq!(on_disk.message_count, 400);
                let ext = storage.extension();
                for (relative, file) in on_disk.relative_file_paths.iter().zip(&on_disk.files) {
                    let expect_zstd = mode == CompressionMode::File;
                    assert_eq!(relative.ends_with(".zstd"), expect_zstd, "{relative}");
                    // rosbag2 keeps the uncompressed name in files[].path.
                    assert!(file.path.ends_with(ext), "{}", file.path);
                    assert!(dir.join(relative).is_file());
                    if expect_zstd {
                        assert!(!dir.join(&file.path).exists(), "{} left behind", file.path);
                    }
                }
                let listed: u64 = on_disk
                    .relative_file_paths
                    .iter()
                    .map(|p| std::fs::metadata(dir.join(p)).unwrap().len())
                    .sum();
                assert_eq!(metadata.bag_size, listed);
            }
        }
    }
}

#[test]
fn message_mode_stores_one_zstd_frame_per_message() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bag");
    write(
        &dir,
        StorageId::Mcap,
        compression(CompressionMode::Message, 2),
        0,
    );
    let mut raw = storage::open_reader(&bag_file(&dir, 0), storage::OpenMode::Strict).unwrap();
    let want = messages(400);
    let mut n = 0;
    while let Some(m) = raw.read_next().unwrap() {
        assert!(compression::zstd::is_zstd(&m.data));
        let plain = compression::zstd::decompress_message(&m.data).unwrap();
        assert_eq!(plain, want[n].data);
        n += 1;
    }
    assert_eq!(n, 400);
}

#[test]
fn file_mode_single_compressed_file_and_reindex() {
    let tmp = tempfile::tempdir().unwrap();
    for storage in STORAGES {
        let dir = tmp.path().join(format!("{storage:?}"));
        write(&dir, storage, compression(CompressionMode::File, 0), 0);
        let file = bag_file(&dir, 0);
        assert!(file
            .to_string_lossy()
            .ends_with(&format!("{}.zstd", storage.extension())));
        assert!(file.is_file(), "{}", file.display());
        assert_eq!(StorageId::detect(&file).unwrap(), storage);
        // The compressed file alone opens as a bag.
        assert_same(&read(&file), &messages(400));
        // reindex lists it as rosbag2 does.
        std::fs::remove_file(dir.join("metadata.yaml")).unwrap();
        let report = reindex(&dir).unwrap();
        assert!(report.repaired.is_empty());
        let m = BagMetadata::read_from_dir(&dir).unwrap();
        assert_eq!(
            (m.compression_mode.as_str(), m.compression_format.as_str()),
            ("FILE", "zstd")
        );
        assert_eq!(m.message_count, 400);
        assert!(m.relative_file_paths[0].ends_with(".zstd"));
        assert!(!m.files[0].path.ends_with(".zstd"));
        assert_same(&read(&dir), &messages(400));
    }
}

fn first_file(dir: &Path) -> PathBuf {
    let m = BagMetadata::read_from_dir(dir).unwrap();
    dir.join(&m.relative_file_paths[0])
}

#[test]
fn corrupted_compressed_file_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    for storage in STORAGES {
        let dir = tmp.path().join(format!("{storage:?}"));
        write(&dir, storage, compression(CompressionMode::File, 1), 0);
        let file = first_file(&dir);
        let mut bytes = std::fs::read(&file).unwrap();
        let len = bytes.len();
        for b in &mut bytes[len / 3..len / 3 + 64] {
            *b ^= 0x5A;
        }
        std::fs::write(&file, &bytes).unwrap();
        let err = SequentialReader::open(&dir)
            .and_then(|r| r.collect::<Result<Vec<_>>>())
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&*file.to_string_lossy()), "{text}");
        // Cut short.
        std::fs::write(&file, &bytes[..len / 2]).unwrap();
        let err = SequentialReader::open(&dir).err().expect("cut file");
        assert!(err.to_string().contains(&*file.to_string_lossy()), "{err}");
    }
}

#[test]
fn corrupted_message_is_an_error_naming_file_and_topic() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bag");
    // A bag of uncompressed messages whose metadata claims message compression.
    write(&dir, StorageId::Mcap, CompressionOptions::default(), 0);
    let mut m = BagMetadata::read_from_dir(&dir).unwrap();
    m.compression_mode = "MESSAGE".into();
    m.compression_format = "zstd".into();
    m.write_to_dir(&dir).unwrap();
    let file = bag_file(&dir, 0).display().to_string();
    let mut reader = SequentialReader::open(&dir).unwrap();
    let err = reader.read_next().unwrap_err().to_string();
    assert!(
        err.contains(&file) && err.contains("/chatter") && err.contains("zstd"),
        "{err}"
    );
}

#[test]
fn unknown_compression_in_metadata_is_an_error_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bag");
    write(
        &dir,
        StorageId::Mcap,
        compression(CompressionMode::File, 1),
        0,
    );
    let mut m = BagMetadata::read_from_dir(&dir).unwrap();
    m.compression_format = "brotli".into();
    m.write_to_dir(&dir).unwrap();
    let err = SequentialReader::open(&dir)
        .err()
        .expect("unknown format")
        .to_string();
    assert!(
        err.contains("metadata.yaml") && err.contains("'brotli'"),
        "{err}"
    );
    m.compression_format = "zstd".into();
    m.compression_mode = "CHUNK".into();
    m.write_to_dir(&dir).unwrap();
    let err = SequentialReader::open(&dir)
        .err()
        .expect("unknown mode")
        .to_string();
    assert!(
        err.contains("metadata.yaml") && err.contains("'CHUNK'"),
        "{err}"
    );
}

#[test]
fn unknown_compression_options_are_clear_errors() {
    let e = CompressionMode::parse("zip").unwrap_err().to_string();
    assert!(e.contains("none, file, message"), "{e}");
    let tmp = tempfile::tempdir().unwrap();
    let err = BagWriter::create(BagWriterOptions {
        uri: tmp.path().join("x"),
        storage: WriterOptions {
            storage: StorageId::Rosbag1,
            ..Default::default()
        },
        compression: compression(CompressionMode::Message, 1),
        ..Default::default()
    })
    .err()
    .expect("ROS 1 cannot be compressed");
    assert!(err.to_string().contains("ROS 1"), "{err}");
}

#[test]
fn a_compressed_file_beside_its_original_is_ignored_by_reindex() {
    // A writer stopped after compressing a file but before removing the original.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bag");
    write(&dir, StorageId::Mcap, CompressionOptions::default(), 0);
    let original = bag_file(&dir, 0);
    let name = original.file_name().unwrap().to_string_lossy().into_owned();
    compression::zstd::compress_file(&original, &dir.join(format!("{name}.zstd"))).unwrap();
    std::fs::remove_file(dir.join("metadata.yaml")).unwrap();
    reindex(&dir).unwrap();
    let m = BagMetadata::read_from_dir(&dir).unwrap();
    assert_eq!(m.relative_file_paths, vec![name]);
    assert_same(&read(&dir), &messages(400));
}

#[test]
fn split_events_name_the_compressed_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bag");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: dir.clone(),
        compression: compression(CompressionMode::File, 1),
        ..Default::default()
    })
    .unwrap();
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = events.clone();
    writer.on_split(move |e| sink.lock().unwrap().push(e.clone()));
    writer
        .create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
        .unwrap();
    writer.write(&messages(1)[0]).unwrap();
    writer.split().unwrap();
    writer.close().unwrap();
    let events = events.lock().unwrap();
    assert_eq!(events[0].closed_file, bag_file(&dir, 0));
    assert!(events[0]
        .closed_file
        .to_string_lossy()
        .ends_with(".mcap.zstd"));
    // Opened uncompressed, compressed at close.
    let opened = format!("{}.zstd", events[0].opened_file.display());
    assert_eq!(opened, bag_file(&dir, 1).display().to_string());
    assert!(events[0].closed_file.is_file());
}

/// The name and nice value of a thread from its `/proc/.../stat` ("tid (name) state ppid ...":
/// the nice value is field 19, the 17th after the name).
fn name_and_nice(stat: &str) -> Option<(&str, i64)> {
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let nice = stat[close + 1..].split_whitespace().nth(16)?.parse().ok()?;
    Some((&stat[open + 1..close], nice))
}

/// Nice values of this process's threads whose name starts with `prefix`.
fn thread_nice_values(prefix: &str) -> Vec<i64> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        // A thread that ended meanwhile has no stat any more.
        .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
        .filter_map(|stat| {
            let (name, nice) = name_and_nice(&stat)?;
            name.starts_with(prefix).then_some(nice)
        })
        .collect()
}

/// Waits (up to 20 s) until `count` threads named `prefix*` run at nice `nice`.
fn wait_for_threads_at(prefix: &str, nice: i64, count: usize) -> bool {
    for _ in 0..2000 {
        if thread_nice_values(prefix)
            .iter()
            .filter(|n| **n == nice)
            .count()
            >= count
        {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

#[cfg(target_os = "linux")]
#[test]
fn compression_threads_run_at_the_asked_nice_value_and_the_writer_keeps_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let own = || {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        name_and_nice(&stat).unwrap().1
    };
    let before = own();
    // Message mode with one thread compresses on the writing thread unless a priority is
    // asked for: then it gets a thread of its own.
    for (mode, prefix, threads) in [
        (CompressionMode::Message, "msg-compress-", 1),
        (CompressionMode::File, "bag-compress-", 2),
    ] {
        let mut writer = BagWriter::create(BagWriterOptions {
            uri: tmp.path().join(format!("{mode:?}")),
            compression: CompressionOptions {
                threads_priority: Some(13),
                ..compression(mode, threads)
            },
            ..Default::default()
        })
        .unwrap();
        writer
            .create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
            .unwrap();
        for m in messages(20).iter().filter(|m| &*m.topic == "/chatter") {
            writer.write(m).unwrap();
        }
        assert!(
            wait_for_threads_at(prefix, 13, threads),
            "{mode:?}: {prefix}* threads at {:?}, want {threads} at nice 13",
            thread_nice_values(prefix)
        );
        let written = writer.close().unwrap();
        assert_eq!(written.message_count, 10);
    }
    assert_eq!(own(), before, "the writing thread's priority changed");
}

/// Retention in file mode deletes only files whose compression is done (the metadata names
/// the compressed file by then); at close every file is compressed and the bound holds.
#[test]
fn retention_deletes_compressed_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: bag.clone(),
        compression: CompressionOptions {
            mode: CompressionMode::File,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    writer.set_retention(Retention {
        max_files: 2,
        ..Default::default()
    });
    for (name, type_name) in [
        ("/chatter", "std_msgs/msg/String"),
        ("/scan", "sensor_msgs/msg/LaserScan"),
    ] {
        writer
            .create_topic(&TopicMetadata::new(name, type_name), None)
            .unwrap();
    }
    let all = messages(60);
    for (i, m) in all.iter().enumerate() {
        writer.write(m).unwrap();
        if i % 10 == 9 {
            writer.split().unwrap();
        }
    }
    let meta = writer.close().unwrap();
    let on_disk: Vec<String> = std::fs::read_dir(&bag)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "metadata.yaml")
        .collect();
    assert_eq!(on_disk.len(), meta.relative_file_paths.len(), "{on_disk:?}");
    // However far compression lagged behind the splits, close leaves the newest two.
    assert_eq!(
        meta.relative_file_paths.len(),
        2,
        "{:?}",
        meta.relative_file_paths
    );
    assert!(meta
        .relative_file_paths
        .iter()
        .all(|p| p.ends_with(".zstd")));
    let got = read(&bag);
    assert_eq!(got.len() as u64, meta.message_count);
    assert_eq!(
        got.last().unwrap().recv_timestamp,
        all.last().unwrap().recv_timestamp
    );
}
