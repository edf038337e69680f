//! `--storage-config-file`: an MCAP file's chunks follow the file's `compression` and CRC settings, an SQLite3
//! database runs the file's `write` pragmas.

use std::sync::Arc;

use rosbag2_rs_storage::*;

fn write_bag(dir: &std::path::Path, storage: StorageId, config: &str) -> std::path::PathBuf {
    let file = dir.join("config.yaml");
    std::fs::write(&file, config).unwrap();
    let uri = dir.join("bag");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        storage: WriterOptions {
            storage,
            config: StorageConfig::load(&file, storage).unwrap(),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let topic = TopicMetadata::new("/t", "std_msgs/msg/String");
    writer.create_topic(&topic, None).unwrap();
    let name: Arc<str> = Arc::from("/t");
    for i in 0..100i64 {
        let data = [&[0u8, 1, 0, 0][..], &[b'a'; 2000]].concat();
        writer
            .write(&SerializedMessage::new(name.clone(), i, data))
            .unwrap();
    }
    writer.close().unwrap();
    uri
}

#[test]
fn mcap_chunks_follow_the_files_compression() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(
        dir.path(),
        StorageId::Mcap,
        "compression: Zstd\nchunkSize: 10000\n",
    );
    let bytes = mcap_bytes(&bag);
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    assert!(summary.chunk_indexes.len() > 5, "10 kB chunks");
    assert!(summary
        .chunk_indexes
        .iter()
        .all(|c| c.compression == "zstd"));
    assert_eq!(read_count(&bag), 100);
}

/// The first MCAP file of `bag`, whole.
fn mcap_bytes(bag: &std::path::Path) -> Vec<u8> {
    let file = std::fs::read_dir(bag)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "mcap"))
        .unwrap();
    std::fs::read(file).unwrap()
}

/// Messages of `bag` our reader reads.
fn read_count(bag: &std::path::Path) -> usize {
    let mut reader = SequentialReader::open(bag).unwrap();
    std::iter::from_fn(|| reader.read_next().unwrap()).count()
}

#[test]
fn records_the_file_leaves_out_are_not_written_and_every_message_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(
        dir.path(),
        StorageId::Mcap,
        "chunkSize: 10000\nnoRepeatedChannels: true\nnoRepeatedSchemas: true\nnoMessageIndex: true\n",
    );
    let bytes = mcap_bytes(&bag);
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    assert!(summary.channels.is_empty() && summary.schemas.is_empty());
    assert!(summary.chunk_indexes.len() > 5);
    assert!(summary
        .chunk_indexes
        .iter()
        .all(|c| c.message_index_offsets.is_empty()));
    // The summary names no channel: the reader scans for them (it used to read nothing).
    assert_eq!(read_count(&bag), 100);

    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), StorageId::Mcap, "noSummary: true\n");
    assert!(mcap::Summary::read(&mcap_bytes(&bag)).unwrap().is_none());
    assert_eq!(read_count(&bag), 100);
}

#[test]
fn sqlite_runs_the_files_write_pragmas() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(
        dir.path(),
        StorageId::Sqlite3,
        "write:\n  pragmas: [\"journal_mode = WAL\"]\n",
    );
    let db = std::fs::read_dir(&bag)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "db3"))
        .unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

/// The chunk CRCs and the summary CRC of the one MCAP file of `bag`.
fn mcap_crcs(bag: &std::path::Path) -> (Vec<u32>, u32) {
    let bytes = mcap_bytes(bag);
    let (mut chunks, mut summary) = (Vec::new(), None);
    for record in mcap::read::LinearReader::new(&bytes).unwrap() {
        match record.unwrap() {
            mcap::records::Record::Chunk { header, .. } => chunks.push(header.uncompressed_crc),
            mcap::records::Record::Footer(footer) => summary = Some(footer.summary_crc),
            _ => {}
        }
    }
    (chunks, summary.unwrap())
}

#[test]
fn mcap_crcs_left_out_as_rosbag2_storage_mcap_spells_it() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["with", "without"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
    }
    let with = mcap_crcs(&write_bag(
        &dir.path().join("with"),
        StorageId::Mcap,
        "chunkSize: 10000\n",
    ));
    assert!(with.0.len() > 5 && with.0.iter().all(|&crc| crc != 0) && with.1 != 0);
    let without = mcap_crcs(&write_bag(
        &dir.path().join("without"),
        StorageId::Mcap,
        "chunkSize: 10000\nnoChunkCRC: true\nnoSummaryCRC: true\n",
    ));
    assert!(without.0.len() > 5 && without.0.iter().all(|&crc| crc == 0));
    assert_eq!(without.1, 0);
}

#[test]
fn sqlite_read_pragmas_run_when_a_bag_is_opened_for_reading() {
    let dir = tempfile::tempdir().unwrap();
    let bag = write_bag(dir.path(), StorageId::Sqlite3, "");
    let config = |text: &str| {
        let file = dir.path().join("read.yaml");
        std::fs::write(&file, text).unwrap();
        StorageConfig::load(&file, StorageId::Sqlite3).unwrap()
    };
    let count = |config: &StorageConfig| -> Result<usize> {
        let mut reader = SequentialReader::open_many_with(std::slice::from_ref(&bag), config)?;
        let mut n = 0;
        while reader.read_next()?.is_some() {
            n += 1;
        }
        Ok(n)
    };
    let tuned = config("read:\n  pragmas: [\"cache_size = -65536\", \"mmap_size = 268435456\"]\n");
    assert_eq!(tuned.read_pragmas.len(), 2);
    assert_eq!(count(&tuned).unwrap(), 100);
    // Run, not just read: a pragma that writes fails on the read-only database, naming it.
    let writing = config("read:\n  pragmas: [\"journal_mode = WAL\"]\n");
    let error = count(&writing).unwrap_err().to_string();
    assert!(error.contains(".db3"), "{error}");
}
