//! `record --throttle`: the rate it records from a jittery topic, next to the strict spacing
//! rule of ROS 1's `topic_tools throttle` (keep a message when at least one period has passed
//! since the last kept one) on the same arrivals in the same run, and the fullest second of each.
//!
//! Arrivals are a camera-like topic at 30 Hz (and 100 Hz) whose messages come up to ±J ms early
//! or late (uniform, seeded), over 10 minutes of bag time; the throttles see only receive times,
//! as in the recorder, so the result does not depend on the machine. The cost per message of
//! `Throttle::admit` is timed last.
//!
//! Run: `cargo bench -p rosbag2_rs_transport_lib --bench throttle_rate`

use std::time::Instant;

use rosbag2_rs_transport_lib::{Throttle, ThrottleLimit};

const SEC: i64 = 1_000_000_000;
const SECONDS: i64 = 600;

/// `hz` arrivals a second for [`SECONDS`], each up to `jitter_ms` early or late.
fn arrivals(hz: i64, jitter_ms: i64, seed: u64) -> Vec<i64> {
    let mut state = seed;
    let mut times: Vec<i64> = (0..SECONDS * hz)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let jitter = (state % (2 * jitter_ms as u64 * 1000 + 1)) as i64 - jitter_ms * 1000;
            i * SEC / hz + jitter * 1000
        })
        .collect();
    times.sort_unstable();
    times
}

/// The most of `kept` within any second.
fn fullest_second(kept: &[i64]) -> usize {
    let mut end = 0;
    let mut most = 0;
    for (start, &t) in kept.iter().enumerate() {
        while end < kept.len() && kept[end] - t < SEC {
            end += 1;
        }
        most = most.max(end - start);
    }
    most
}

/// The strict spacing rule: at least `1/rate` after the last kept message.
fn spacing(times: &[i64], rate: f64) -> Vec<i64> {
    let period = (SEC as f64 / rate) as i64;
    let mut last: Option<i64> = None;
    times
        .iter()
        .copied()
        .filter(|&t| {
            let keep = last.is_none_or(|l| t - l >= period);
            if keep {
                last = Some(t);
            }
            keep
        })
        .collect()
}

fn ours(times: &[i64], rate: f64) -> Vec<i64> {
    let mut throttle = Throttle::new(ThrottleLimit::MessagesPerSecond(rate));
    times
        .iter()
        .copied()
        .filter(|&t| throttle.admit(t, 0))
        .collect()
}

fn main() {
    println!(
        "| input | limit | jitter | recorded (ours) | fullest second (ours) | recorded \
         (spacing rule) | fullest second (spacing rule) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (hz, rate) in [(30, 10.0), (30, 5.0), (30, 15.0), (100, 30.0), (30, 0.5)] {
        for jitter_ms in [0, 2, 5, 10] {
            let times = arrivals(hz, jitter_ms, 0x9e37_79b9_7f4a_7c15 ^ hz as u64);
            let (a, b) = (ours(&times, rate), spacing(&times, rate));
            let per_second = |kept: &[i64]| kept.len() as f64 / SECONDS as f64;
            println!(
                "| {hz} Hz | {rate} Hz | ±{jitter_ms} ms | {:.3} Hz | {} | {:.3} Hz | {} |",
                per_second(&a),
                fullest_second(&a),
                per_second(&b),
                fullest_second(&b)
            );
        }
    }
    let times = arrivals(1000, 1, 1);
    let started = Instant::now();
    let kept = ours(&times, 100.0).len();
    let elapsed = started.elapsed();
    println!(
        "\nadmit: {:.1} ns per message ({} messages, {kept} kept)",
        elapsed.as_nanos() as f64 / times.len() as f64,
        times.len()
    );
}
