//! The ROS 1 bag reader (strict and recovering, every message), then `reindex` of the bag into
//! a new file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_fuzz::{with_file, MAX_MESSAGES};
use rosbag2_rs_storage::rosbag1::BagReader;
use rosbag2_rs_storage::{reindex_to, OpenMode};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    with_file("fuzz.bag", data, |path| {
        for mode in [OpenMode::Strict, OpenMode::Recover] {
            let Ok(mut reader) = BagReader::open(path, mode) else {
                continue;
            };
            for _ in 0..MAX_MESSAGES {
                match reader.read_next() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
        }
        let _ = reindex_to(path, &path.with_file_name("reindexed.bag"));
    });
});
