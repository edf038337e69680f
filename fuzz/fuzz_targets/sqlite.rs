//! The SQLite3 storage: a `.db3` read by the reader, checked by `doctor`, then recovered by
//! `reindex` (SQLite's own check, then the page-level salvage of damaged files).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_fuzz::{with_file, MAX_MESSAGES};
use rosbag2_rs_storage::{reindex_to, SequentialReader};
use rosbag2_rs_tools::{doctor, DoctorOptions};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    with_file("fuzz.db3", data, |path| {
        if let Ok(reader) = SequentialReader::open(path) {
            reader.take(MAX_MESSAGES).for_each(drop);
        }
        let _ = doctor(path, &DoctorOptions::default());
        let bag = path.parent().expect("in a directory");
        let _ = reindex_to(bag, &bag.join("reindexed"));
    });
});
