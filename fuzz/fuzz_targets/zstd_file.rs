//! File-mode `.zstd` storage files (a whole `.mcap` or `.db3` compressed): decompressed to the
//! temporary directory within `FILE_MODE_BYTES`, then read strict and recovering (every
//! message), then checked by `doctor`. The first byte says what follows: even, the `.zstd`
//! file itself (its frames fuzzed); odd, the file inside, which the target compresses (with
//! its size declared in the frame header when the byte's second bit is set), so that the
//! storage file behind the decompression is fuzzed too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_fuzz::{with_file, MAX_MESSAGES};
use rosbag2_rs_storage::compression::file_mode::open_compressed;
use rosbag2_rs_storage::OpenMode;
use rosbag2_rs_tools::{doctor, DoctorOptions};

fn compress(inner: &[u8], declare_size: bool) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).expect("a zstd encoder");
    if declare_size {
        encoder
            .set_pledged_src_size(Some(inner.len() as u64))
            .expect("a pledged size");
    }
    encoder.write_all(inner).expect("compress to memory");
    encoder.finish().expect("compress to memory")
}

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let compressed;
    let file = match kind % 2 {
        0 => rest,
        _ => {
            compressed = compress(rest, kind & 2 != 0);
            &compressed[..]
        }
    };
    with_file("fuzz_0.zstd", file, |path| {
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
