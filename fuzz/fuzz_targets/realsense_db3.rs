//! A RealSense recording in the rosbag2 SQLite3 layout (`.db3`, SDK 2.58 and newer) whose
//! frames are PNG (`CompressedImage`, `compressedDepth`): `Recording::open` and every frame,
//! then `export` of each image topic of the file as image files (the PNGs decoded within
//! `IMAGE_PIXELS`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use realsense_bag_rs::Recording;
use rosbag2_rs_fuzz::{with_file, MAX_MESSAGES};
use rosbag2_rs_storage::SequentialReader;
use rosbag2_rs_tools::export::{export, ExportKind, ExportOptions};

/// At most this many image topics are exported per input.
const MAX_TOPICS: usize = 4;

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    with_file("fuzz.db3", data, |path| {
        if let Ok(mut recording) = Recording::open(path) {
            for _ in 0..MAX_MESSAGES {
                match recording.next_frame() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
        }
        let Ok(reader) = SequentialReader::open(path) else {
            return;
        };
        let topics: Vec<String> = reader
            .topics()
            .iter()
            .filter(|t| t.topic_metadata.type_name.starts_with("sensor_msgs/msg/"))
            .filter(|t| t.topic_metadata.type_name.ends_with("Image"))
            .map(|t| t.topic_metadata.name.clone())
            .take(MAX_TOPICS)
            .collect();
        drop(reader);
        for (i, topic) in topics.into_iter().enumerate() {
            let _ = export(&ExportOptions {
                inputs: vec![path.to_path_buf()],
                topic,
                output: path.with_file_name(format!("export{i}")),
                kind: ExportKind::Images,
                ..Default::default()
            });
        }
    });
});
