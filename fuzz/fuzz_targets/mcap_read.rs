//! The MCAP reader on bytes held in memory: opened strictly and recovering, every message
//! read.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_fuzz::MAX_MESSAGES;
use rosbag2_rs_storage::storage::mcap_reader::McapReader;
use rosbag2_rs_storage::{OpenMode, StorageReader};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    for mode in [OpenMode::Strict, OpenMode::Recover] {
        let bytes = bytes::Bytes::copy_from_slice(data);
        let Ok(mut reader) = McapReader::from_bytes(Path::new("fuzz.mcap"), bytes, mode) else {
            continue;
        };
        for _ in 0..MAX_MESSAGES {
            match reader.read_next() {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }
});
