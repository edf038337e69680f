//! The requests and responses of every service the player and recorder serve or call, and the
//! messages they exchange, as they arrive from the wire: the first byte picks the type
//! ([`rosbag2_rs_fuzz::WIRE_TYPES`]), the rest is its CDR. What decodes must encode and decode
//! again to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_fuzz::WIRE_TYPES;

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    if let Some((&pick, bytes)) = data.split_first() {
        (WIRE_TYPES[pick as usize % WIRE_TYPES.len()].round_trip)(bytes);
    }
});
