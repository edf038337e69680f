//! QoS profiles as bags store them, and QoS override files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_storage::qos;

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = qos::parse_profiles(text);
    let _ = qos::parse_overrides(text);
});
