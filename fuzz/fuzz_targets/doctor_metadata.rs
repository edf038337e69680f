//! A hostile `metadata.yaml` in a bag directory that also holds a small valid bag
//! (`bag_0.mcap` and `bag_0.db3`, three messages each): `doctor` on the directory, the bag
//! read through its metadata (every message), `reindex` into a new directory.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_fuzz::{doctor_metadata_files, MAX_MESSAGES};
use rosbag2_rs_storage::{reindex_to, SequentialReader};
use rosbag2_rs_tools::{doctor, DoctorOptions};

static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let files = FILES.get_or_init(doctor_metadata_files);
    let dir = tempfile::tempdir().expect("temporary directory");
    let bag = dir.path().join("bag");
    std::fs::create_dir(&bag).expect("the bag directory");
    for (name, bytes) in files {
        std::fs::write(bag.join(name), bytes).expect("a storage file");
    }
    std::fs::write(bag.join("metadata.yaml"), data).expect("metadata.yaml");
    let _ = doctor(&bag, &DoctorOptions::default());
    if let Ok(reader) = SequentialReader::open(&bag) {
        reader.take(MAX_MESSAGES).for_each(drop);
    }
    let _ = reindex_to(&bag, &dir.path().join("reindexed"));
});
