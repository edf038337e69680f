//! `pf-timesync replay`: the replay protocol's lines (samples, resets, conversions) through a
//! synchronizer. The first 8 bytes pick the estimator and its parameters (window, skew limit,
//! read position, jump tolerances, as the command line's options set them); the rest is the
//! replay input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pf_timesync_rs::{replay, EstimatorKind, Params, Synchronizer};

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Some((head, input)) = data.split_first_chunk::<8>() else {
        return;
    };
    let kind = EstimatorKind::ALL[head[0] as usize % EstimatorKind::ALL.len()];
    let params = Params {
        period_ms: i32::from(i16::from_le_bytes([head[1], head[2]])),
        max_skew_ppm: f64::from(u16::from_le_bytes([head[3], head[4]])) / 16.0,
        read_position: f64::from(head[5]) / 255.0,
        jump_tolerance_ms: i64::from(head[6]) * 16,
        forward_jump_ms: i64::from(head[7]) * 16,
    };
    let Ok(mut sync) = Synchronizer::new(kind, params) else {
        return;
    };
    let _ = replay::run(&mut sync, input, std::io::sink());
});
