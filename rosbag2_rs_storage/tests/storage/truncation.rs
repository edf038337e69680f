//! A bag truncated by another process while it is read gives an error, never a crash (SIGBUS
//! on the memory mapping): see `storage::mapped_file`.

use std::path::Path;
use std::sync::Arc;

use rosbag2_rs_storage::storage::mcap_reader::McapReader;
use rosbag2_rs_storage::storage::{OpenMode, StorageReader};
use rosbag2_rs_storage::*;

/// A bag of ~3 MiB in uncompressed 256 KiB chunks; returns its MCAP file.
fn write_bag(dir: &Path) -> std::path::PathBuf {
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: dir.to_path_buf(),
        storage: WriterOptions {
            chunk_size: 256 * 1024,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let topic: Arc<str> = Arc::from("/data");
    writer
        .create_topic(
            &TopicMetadata::new("/data", "std_msgs/msg/ByteMultiArray"),
            None,
        )
        .unwrap();
    for i in 0..300i64 {
        let data = vec![(i % 251) as u8; 10_000];
        writer
            .write(&SerializedMessage::new(topic.clone(), i * 1_000, data))
            .unwrap();
    }
    let metadata = writer.close().unwrap();
    dir.join(&metadata.relative_file_paths[0])
}

fn truncate(path: &Path, len: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn truncating_an_open_mcap_file_is_an_error_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let bag = tmp.path().join("bag");
    let file = write_bag(&bag);
    let mut reader = SequentialReader::open(&bag).unwrap();
    let first = reader.read_next().unwrap().unwrap();
    assert_eq!(first.data[0], 0);
    truncate(&file, 100_000);
    let mut read = 1;
    let err = loop {
        match reader.read_next() {
            Ok(Some(_)) => read += 1,
            Ok(None) => panic!("read to the end of a truncated file ({read} messages)"),
            Err(e) => break e,
        }
    };
    assert!(read < 300, "{read}");
    let text = err.to_string();
    assert!(
        text.contains("truncated") && text.contains(&*file.to_string_lossy()),
        "{text}"
    );
    // Reading on keeps failing cleanly.
    assert!(reader.read_next().is_err() || reader.read_next().is_ok());
}

#[test]
fn truncating_a_file_being_recovered_is_an_error_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write_bag(&tmp.path().join("bag"));
    // Without its summary and footer, as a killed writer leaves it: opened by a scan.
    let len = std::fs::metadata(&file).unwrap().len();
    truncate(&file, len * 9 / 10);
    let mut reader = McapReader::open(&file, OpenMode::Recover).unwrap();
    truncate(&file, 50_000);
    let mut result = Ok(None);
    for _ in 0..400 {
        result = reader.read_next();
        if !matches!(result, Ok(Some(_))) {
            break;
        }
    }
    let err = result.expect_err("a truncated file cannot be read to its end");
    assert!(err.to_string().contains("truncated"), "{err}");
}
