//! `metadata.yaml` of any version, and the re-emitted text of what parses.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_storage::BagMetadata;

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(metadata) = BagMetadata::from_yaml_str(text, Path::new("metadata.yaml")) {
        let again = metadata.to_yaml_string();
        BagMetadata::from_yaml_str(&again, Path::new("again.yaml"))
            .expect("what is emitted reads back");
    }
});
