//! Lateness of `sleep_until` vs a plain condition-variable wait.
//!
//! For each mode and frequency, sleeps to N absolute deadlines spaced at the
//! period and records how late each wake-up was, plus the CPU time used.
//!
//! Run: `cargo bench -p rosbag2_rs_clock --bench sleep_precision`
//! Env: `SLEEP_BENCH_DEADLINES` (default 10000) for quicker runs.

use rosbag2_rs_clock::{
    Clock, Duration, MonotonicSource, PlayerClock, SpinPolicy, Time, TimeControllerClock,
    TimeControllerConfig, TimeSource,
};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

const WARMUP: usize = 100;

fn cpu_time_ns() -> i64 {
    // SAFETY: rusage is plain data, for which all zeros is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we pass.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return 0;
    }
    // time_t and suseconds_t are i64 on the 64-bit Linux targets this runs on.
    let tv = |t: libc::timeval| -> i64 { t.tv_sec * 1_000_000_000 + t.tv_usec * 1_000 };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

struct Stats {
    p50: i64,
    p99: i64,
    max: i64,
    cpu_percent: f64,
    n: usize,
}

fn stats(mut late: Vec<i64>, cpu_ns: i64, wall_ns: i64) -> Stats {
    late.sort_unstable();
    let q = |p: f64| late[((late.len() as f64 - 1.0) * p).round() as usize];
    Stats {
        p50: q(0.50),
        p99: q(0.99),
        max: *late.last().unwrap_or(&0),
        cpu_percent: 100.0 * cpu_ns as f64 / wall_ns.max(1) as f64,
        n: late.len(),
    }
}

/// Sleep with `TimeControllerClock::sleep_until` on a real monotonic source.
fn bench_clock(policy: SpinPolicy, period_ns: i64, n: usize) -> Stats {
    let source = Arc::new(MonotonicSource::with_spin(policy));
    let cfg = TimeControllerConfig {
        start_paused: false,
        ..TimeControllerConfig::default()
    };
    let clock = TimeControllerClock::with_source(Time::ros(0), cfg, source.clone()).unwrap();
    let start = clock.now().nanos() + 1_000_000;
    let mut late = Vec::with_capacity(n);
    let (mut cpu0, mut wall0) = (0, 0);
    for i in 0..(n + WARMUP) {
        if i == WARMUP {
            cpu0 = cpu_time_ns();
            wall0 = source.now();
        }
        let until = Time::ros(start + i as i64 * period_ns);
        let steady_deadline = clock.ros_to_steady(until).unwrap().nanos();
        while !clock.sleep_until(until, Duration::from_secs(1)) {}
        let woke = source.now();
        if i >= WARMUP {
            late.push(woke - steady_deadline);
        }
    }
    stats(late, cpu_time_ns() - cpu0, source.now() - wall0)
}

/// What rosbag2 does: `condition_variable::wait_until` in a loop.
fn bench_condvar(period_ns: i64, n: usize) -> Stats {
    let pair = (Mutex::new(()), Condvar::new());
    let origin = Instant::now() + std::time::Duration::from_millis(1);
    let mut late = Vec::with_capacity(n);
    let (mut cpu0, mut wall0) = (0, Instant::now());
    for i in 0..(n + WARMUP) {
        if i == WARMUP {
            cpu0 = cpu_time_ns();
            wall0 = Instant::now();
        }
        let deadline = origin + std::time::Duration::from_nanos((i as i64 * period_ns) as u64);
        let mut guard = pair.0.lock().unwrap();
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            guard = pair.1.wait_timeout(guard, deadline - now).unwrap().0;
        }
        drop(guard);
        let woke = Instant::now();
        if i >= WARMUP {
            late.push((woke - deadline).as_nanos() as i64);
        }
    }
    stats(
        late,
        cpu_time_ns() - cpu0,
        wall0.elapsed().as_nanos() as i64,
    )
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "n/a".into())
}

fn main() {
    let n: usize = std::env::var("SLEEP_BENCH_DEADLINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    println!(
        "sleep_until lateness, {n} deadlines per row (after {WARMUP} warm-up), loadavg before: {}",
        loadavg()
    );
    println!();
    println!(
        "| mode | rate | p50 late (µs) | p99 late (µs) | max late (µs) | CPU (% of one core) |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for (hz, period) in [("1 kHz", 1_000_000i64), ("10 kHz", 100_000)] {
        let rows: Vec<(&str, Stats)> = vec![
            ("plain condvar wait (rosbag2)", bench_condvar(period, n)),
            (
                "sleep_until, SpinPolicy::low_power",
                bench_clock(SpinPolicy::low_power(), period, n),
            ),
            (
                "sleep_until, SpinPolicy::precise (default)",
                bench_clock(SpinPolicy::precise(), period, n),
            ),
        ];
        for (mode, s) in rows {
            assert_eq!(s.n, n);
            println!(
                "| {mode} | {hz} | {:.1} | {:.1} | {:.1} | {:.1} |",
                s.p50 as f64 / 1e3,
                s.p99 as f64 / 1e3,
                s.max as f64 / 1e3,
                s.cpu_percent
            );
        }
    }
    println!();
    println!("loadavg after: {}", loadavg());
}
