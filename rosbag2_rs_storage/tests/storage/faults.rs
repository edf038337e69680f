//! Damage that hides only itself: a chunk that fails its checks is skipped and
//! reported, an empty or unreadable storage file is left out by `reindex`, a file the metadata
//! lists that is missing and a malformed `.db3` row cost only themselves.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rosbag2_rs_storage::storage::mcap_reader::McapReader;
use rosbag2_rs_storage::*;

const TOPIC: &str = "/chatter";
/// Messages per file.
const N: usize = 300;
const T0: i64 = 1_700_000_000_000_000_000;

/// Writes a bag of `files` files of `N` messages each, 1 ms apart, in small chunks.
fn write_bag(
    dir: &Path,
    storage: StorageId,
    compression: Option<CompressionFormat>,
    files: usize,
) -> PathBuf {
    write_bag_with(
        dir,
        storage,
        compression,
        files,
        CompressionOptions::default(),
    )
}

fn write_bag_with(
    dir: &Path,
    storage: StorageId,
    compression: Option<CompressionFormat>,
    files: usize,
    file_compression: CompressionOptions,
) -> PathBuf {
    let uri = dir.join(format!(
        "bag_{}_{compression:?}_{files}_{:?}",
        storage.as_str(),
        file_compression.mode
    ));
    let mut writer = BagWriter::create(BagWriterOptions {
        compression: file_compression,
        uri: uri.clone(),
        storage: WriterOptions {
            storage,
            compression,
            chunk_size: 4096,
            ..WriterOptions::default()
        },
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new(TOPIC, "std_msgs/msg/String"), None)
        .unwrap();
    let topic: Arc<str> = Arc::from(TOPIC);
    for i in 0..files * N {
        if i > 0 && i % N == 0 {
            writer.split().unwrap();
        }
        let payload: Vec<u8> = (0..100).map(|k| (i * 7 + k) as u8).collect();
        let message = SerializedMessage::new(topic.clone(), T0 + i as i64 * 1_000_000, payload);
        writer.write(&message).unwrap();
    }
    writer.close().unwrap();
    uri
}

fn read_all(bag: &Path) -> Vec<i64> {
    SequentialReader::open(bag)
        .unwrap()
        .map(|m| m.unwrap().recv_timestamp)
        .collect()
}

fn storage_files(bag: &Path) -> Vec<PathBuf> {
    storage_files_in(bag).unwrap()
}

/// The chunk indexes of an MCAP file: (offset, length, message count, first and last time).
fn chunks(file: &Path) -> Vec<(u64, u64, u64, u64, u64)> {
    let data = std::fs::read(file).unwrap();
    let summary = mcap::Summary::read(&data).unwrap().unwrap();
    summary
        .chunk_indexes
        .iter()
        .map(|c| {
            let count: u64 = summary
                .read_message_indexes(&data, c)
                .unwrap()
                .values()
                .map(|entries| entries.len() as u64)
                .sum();
            (
                c.chunk_start_offset,
                c.chunk_length,
                count,
                c.message_start_time,
                c.message_end_time,
            )
        })
        .collect()
}

#[test]
fn a_chunk_that_fails_its_checks_is_skipped_reported_and_reindexed() {
    let dir = tempfile::tempdir().unwrap();
    for compression in [
        None,
        Some(CompressionFormat::Zstd),
        Some(CompressionFormat::Lz4),
    ] {
        let bag = write_bag(dir.path(), StorageId::Mcap, compression, 1);
        let file = storage_files(&bag).remove(0);
        let chunks = chunks(&file);
        assert!(
            chunks.len() >= 3,
            "{compression:?}: {} chunks",
            chunks.len()
        );
        // Damage the middle chunk near the end of its records.
        let (offset, len, count, first, last) = chunks[chunks.len() / 2];
        assert!(count > 0);
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[(offset + len - 20) as usize] ^= 0x5A;
        std::fs::write(&file, &bytes).unwrap();
        let expected: Vec<i64> = (0..N as i64)
            .map(|i| T0 + i * 1_000_000)
            .filter(|t| !(first as i64..=last as i64).contains(t))
            .collect();
        assert_eq!(expected.len() as u64, N as u64 - count);

        // Readers skip the damaged chunk and read the rest.
        assert_eq!(read_all(&bag), expected, "{compression:?}");
        let mut reader = McapReader::open(&file, OpenMode::Strict).unwrap();
        while reader.read_next().unwrap().is_some() {}
        let skipped = &reader.damage().skipped_chunks;
        assert_eq!(skipped.len(), 1, "{compression:?}");
        assert_eq!(skipped[0].offset, offset);
        assert_eq!(skipped[0].messages, Some(count));
        assert_eq!(skipped[0].time_range, Some((first, last)));
        drop(reader);

        // reindex finds the damage, says so and rewrites the file without the chunk.
        let report = reindex(&bag).unwrap();
        let entry = &report.files[0];
        assert_eq!(entry.action, RecoveryAction::Rewritten, "{entry}");
        assert_eq!(entry.messages, N as u64 - count);
        assert_eq!(entry.lost.messages, Some(count), "{entry}");
        assert_eq!(entry.lost.time_range, Some((first as i64, last as i64)));
        let text = entry.to_string();
        assert!(
            text.contains(&format!("chunk at offset {offset}")),
            "{text}"
        );
        assert_eq!(report.metadata.message_count, N as u64 - count);
        assert_eq!(read_all(&bag), expected);
        let again = reindex(&bag).unwrap();
        assert_eq!(again.files[0].action, RecoveryAction::Intact);
    }
}

#[test]
fn reindex_reports_empty_and_unreadable_files_and_recovers_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    for storage in [StorageId::Mcap, StorageId::Sqlite3] {
        let bag = write_bag(dir.path(), storage, None, 2);
        let ext = storage.extension();
        // The recorder had just created the next split file when the power went.
        let first = storage_files(&bag)[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let name = format!("2_{}", first.strip_prefix("0_").unwrap());
        let empty = bag.join(&name);
        std::fs::write(&empty, b"").unwrap();
        let garbage = bag.join(format!("garbage_3{ext}"));
        std::fs::write(&garbage, vec![0xAB; 5000]).unwrap();
        std::fs::remove_file(bag.join("metadata.yaml")).unwrap();

        let report = reindex(&bag).unwrap_or_else(|e| panic!("{storage:?}: {e}"));
        assert_eq!(report.files.len(), 4, "{storage:?}");
        for file in [&empty, &garbage] {
            let entry = report.files.iter().find(|f| &f.path == file).unwrap();
            assert_eq!(entry.action, RecoveryAction::Unreadable, "{entry}");
            assert!(entry.to_string().contains("left out"), "{entry}");
        }
        assert_eq!(report.metadata.relative_file_paths.len(), 2);
        assert!(!report
            .metadata
            .relative_file_paths
            .iter()
            .any(|p| p.ends_with(&name) || p.starts_with("garbage")));
        assert_eq!(report.metadata.message_count, 2 * N as u64);
        assert_eq!(read_all(&bag).len(), 2 * N);
    }
}

#[test]
fn a_missing_file_costs_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    for storage in [StorageId::Mcap, StorageId::Sqlite3] {
        let bag = write_bag(dir.path(), storage, None, 3);
        std::fs::remove_file(&storage_files(&bag)[1]).unwrap();
        let times = read_all(&bag);
        let expected: Vec<i64> = (0..3 * N as i64)
            .filter(|i| !(N as i64..2 * N as i64).contains(i))
            .map(|i| T0 + i * 1_000_000)
            .collect();
        assert_eq!(times, expected, "{storage:?}");
        // reindex then lists the files present.
        let report = reindex(&bag).unwrap();
        assert_eq!(report.metadata.relative_file_paths.len(), 2);
        assert_eq!(report.metadata.message_count, 2 * N as u64);
        // With no listed file left, the bag is refused, naming reindex.
        for file in storage_files(&bag) {
            std::fs::remove_file(file).unwrap();
        }
        let err = SequentialReader::open(&bag).err().unwrap().to_string();
        assert!(err.contains("reindex"), "{err}");
    }
}

#[test]
fn a_malformed_db3_row_costs_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), StorageId::Sqlite3, None, 1);
    let file = storage_files(&bag).remove(0);
    {
        let conn = rusqlite::Connection::open(&file).unwrap();
        conn.execute(
            "UPDATE messages SET timestamp = 'not a time' WHERE id = 10",
            [],
        )
        .unwrap();
        conn.execute("UPDATE messages SET data = 'text' WHERE id = 20", [])
            .unwrap();
    }
    let expected: Vec<i64> = (0..N as i64)
        .filter(|i| *i != 9 && *i != 19)
        .map(|i| T0 + i * 1_000_000)
        .collect();
    assert_eq!(read_all(&bag), expected);
    let info = storage::open_reader(&file, OpenMode::Strict)
        .unwrap()
        .file_information();
    assert_eq!(info.message_count, N as u64 - 1);

    let report = reindex(&bag).unwrap();
    let entry = &report.files[0];
    assert_eq!(entry.action, RecoveryAction::Rewritten, "{entry}");
    assert_eq!(entry.lost.messages, Some(2), "{entry}");
    assert_eq!(report.metadata.message_count, N as u64 - 2);
    assert_eq!(read_all(&bag), expected);
}

#[test]
fn reindex_compresses_what_a_killed_file_mode_recorder_left_uncompressed() {
    let dir = tempfile::tempdir().unwrap();
    let file_mode = CompressionOptions {
        mode: CompressionMode::File,
        ..CompressionOptions::default()
    };
    let bag = write_bag_with(dir.path(), StorageId::Mcap, None, 3, file_mode);
    // The recorder was killed while writing the last file: it is not compressed, and it lacks
    // its summary and footer.
    let last = storage_files(&bag).pop().unwrap();
    assert!(last.to_string_lossy().ends_with(".mcap.zstd"), "{last:?}");
    let plain = PathBuf::from(last.to_string_lossy().trim_end_matches(".zstd"));
    let mut bytes = Vec::new();
    rosbag2_rs_storage::compression::zstd::decompress_file_into(&last, &mut bytes, u64::MAX)
        .unwrap();
    bytes.truncate(bytes.len() * 3 / 4);
    std::fs::write(&plain, &bytes).unwrap();
    std::fs::remove_file(&last).unwrap();

    let report = reindex(&bag).unwrap();
    assert_eq!(report.metadata.compression_mode, "FILE");
    assert_eq!(report.metadata.relative_file_paths.len(), 3);
    for file in &report.metadata.relative_file_paths {
        assert!(file.ends_with(".mcap.zstd"), "{file}");
        assert!(bag.join(file).is_file(), "{file}");
    }
    assert!(!plain.exists());
    let entry = report.files.iter().find(|f| f.path == plain).unwrap();
    assert!(entry.to_string().contains("compressed into"), "{entry}");
    let recovered = report.metadata.message_count as usize;
    assert!(recovered > 2 * N && recovered < 3 * N, "{recovered}");
    assert_eq!(read_all(&bag).len(), recovered);
}
