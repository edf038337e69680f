//! The RealSense recording reader (ROS 1 layout): the device description, then every frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use realsense_bag_rs::Recording;
use rosbag2_rs_fuzz::{with_file, MAX_MESSAGES};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    with_file("fuzz.bag", data, |path| {
        let Ok(mut recording) = Recording::open(path) else {
            return;
        };
        for _ in 0..MAX_MESSAGES {
            match recording.next_frame() {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    });
});
