//! Accuracy of every estimator on the simulator, several seeds, one run.
//!
//! `cargo bench -p pf_timesync_rs --bench timesync_accuracy`
//! (optional arguments: number of seeds, seconds per run).

use pf_timesync_rs::metrics::{evaluate, pooled, ErrorStats, RunErrors};
use pf_timesync_rs::sim::{simulate, SimConfig};
use pf_timesync_rs::{EstimatorKind, Params};

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

fn row(label: &str, s: Option<ErrorStats>) -> String {
    match s {
        Some(s) => format!(
            "{label} | {} | {} | {} | {} | {} |",
            us(s.bias),
            us(s.p50 as f64),
            us(s.p99 as f64),
            us(s.max as f64),
            us(s.jitter_p99 as f64)
        ),
        None => format!("{label} | – | – | – | – | – |"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let seeds: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(5);
    let duration: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300.0);
    let params = Params::default();
    println!(
        "{seeds} seeds x {duration} s, 20 Hz scans of 3600 samples in 10 packets, skew within ±50 ppm + 1 ppm wander, \
         31-bit wrap at 100 s, scan_status reset every 60 s, period {} ms, skew limit {} ppm",
        params.period_ms, params.max_skew_ppm
    );
    for (name, http) in [("passive only", 0u32), ("passive + HTTP every 250 ms", 250)] {
        println!();
        println!("### {name}");
        println!();
        println!("| estimator | window | bias µs | p50 µs | p99 µs | max µs | jitter p99 µs | backward jumps | none |");
        println!("|---|---|---|---|---|---|---|---|---|");
        let runs: Vec<_> = (1..=seeds)
            .map(|seed| {
                simulate(&SimConfig {
                    seed,
                    duration_s: duration,
                    http_interval_ms: http,
                    ..SimConfig::default()
                })
            })
            .collect();
        for kind in EstimatorKind::ALL {
            let results: Vec<RunErrors> = runs
                .iter()
                .map(|events| evaluate(kind, params, events).expect("simulated samples are valid"))
                .collect();
            let (all, after) = pooled(&results);
            let backward: usize = results.iter().map(|r| r.backward_jumps).sum();
            let none: usize = results.iter().map(|r| r.unanswered).sum();
            println!(
                "| {} | {} {backward} | {none} |",
                kind.name(),
                row("all", all)
            );
            println!(
                "| {} | {} {backward} | {none} |",
                kind.name(),
                row("first 3 s after reset", after)
            );
        }
    }
}
