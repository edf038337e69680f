//! File-mode `.zstd` storage files (a whole `.mcap` or `.db3` compressed): decompressed to the
//! temporary directory within `FILE_MODE_BYTES`, then read strict and recovering (every
//! message), then checked by `doctor`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_fuzz::{with_file, MAX_MESSAGES};
use rosbag2_rs_storage::compression::file_mode::open_compressed;
use rosbag2_rs_storage::OpenMode;
use rosbag2_rs_tools::{doctor, DoctorOptions};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    with_file("fuzz_0.zstd", data, |path| {
        for mode in [OpenMode::Strict, OpenMode::Recover] {
            let Ok(mut reader) = open_compressed(path, mode) else {
                continue;
            };
            for _ in 0..MAX_MESSAGES {
                match reader.read_next() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
        }
        let _ = doctor(path, &DoctorOptions::default());
    });
});
