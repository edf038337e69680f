//! `doctor` on an MCAP file, then `reindex` of a bag directory holding it (into a new
//! directory), then reading the reindexed bag.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_fuzz::{with_file, MAX_MESSAGES};
use rosbag2_rs_storage::{reindex_to, SequentialReader};
use rosbag2_rs_tools::{doctor, DoctorOptions};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    with_file("fuzz.mcap", data, |path| {
        let _ = doctor(path, &DoctorOptions::default());
        let bag = path.parent().expect("in a directory");
        let out = bag.join("reindexed");
        if reindex_to(bag, &out).is_ok() {
            if let Ok(reader) = SequentialReader::open(&out) {
                reader.take(MAX_MESSAGES).for_each(drop);
            }
        }
    });
});
