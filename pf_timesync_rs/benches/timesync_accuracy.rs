//! Accuracy of every estimator on the simulator's light and loaded hosts,
//! several seeds, one run.
//!
//! `cargo bench -p pf_timesync_rs --bench timesync_accuracy`
//! (optional arguments: number of seeds, seconds per run).

use pf_timesync_rs::metrics::{evaluate, pooled, ErrorStats, Pooled, RunErrors};
use pf_timesync_rs::sim::{simulate, SimConfig, SimEvent};
use pf_timesync_rs::{EstimatorKind, Params};

/// Seeds of the loaded host start here (the light host's at 1).
const LOADED_SEED_BASE: u64 = 1000;

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

fn cells(s: Option<ErrorStats>) -> String {
    match s {
        Some(s) => format!(
            "{} | {} | {} | {} | {}",
            us(s.bias),
            us(s.p50 as f64),
            us(s.p99 as f64),
            us(s.max as f64),
            us(s.jitter_p99 as f64)
        ),
        None => "– | – | – | – | –".to_string(),
    }
}

/// Pooled statistics (all, after reset), backward jumps and unanswered
/// conversions of `kind` over `runs`.
/// The rows of one estimator: every conversion, the start of each run, the
/// time after each reset, the rest.
fn rows(p: &Pooled) -> [(&'static str, Option<ErrorStats>); 4] {
    [
        ("all", p.all),
        ("first 3 s of the run", p.start),
        ("first 3 s after a reset", p.after_reset),
        ("settled (neither)", p.settled),
    ]
}

fn measure(kind: EstimatorKind, params: Params, runs: &[Vec<SimEvent>]) -> (Pooled, usize, usize) {
    let results: Vec<RunErrors> = runs
        .iter()
        .map(|events| evaluate(kind, params, events).expect("simulated samples are valid"))
        .collect();
    let backward = results.iter().map(|r| r.backward_jumps).sum();
    let none = results.iter().map(|r| r.unanswered).sum();
    (pooled(&results), backward, none)
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
        "{seeds} seeds x {duration} s per host (light: seeds 1–{seeds}, loaded: seeds {}–{}), \
         period {} ms, skew limit {} ppm",
        LOADED_SEED_BASE + 1,
        LOADED_SEED_BASE + seeds,
        params.period_ms,
        params.max_skew_ppm
    );
    for (name, http) in [("passive only", 0u32), ("passive + HTTP every 250 ms", 250)] {
        let runs = |host: SimConfig, base: u64| -> Vec<Vec<SimEvent>> {
            (1..=seeds)
                .map(|seed| {
                    simulate(&SimConfig {
                        seed: base + seed,
                        duration_s: duration,
                        http_interval_ms: http,
                        ..host.clone()
                    })
                })
                .collect()
        };
        let light = runs(SimConfig::light(), 0);
        let loaded = runs(SimConfig::loaded(), LOADED_SEED_BASE);
        println!();
        println!("### {name}");
        println!();
        println!(
            "| estimator | window | light: bias µs | p50 µs | p99 µs | max µs | jitter p99 µs \
             | loaded: bias µs | p50 µs | p99 µs | max µs | jitter p99 µs \
             | backward jumps light/loaded | none light/loaded |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for kind in EstimatorKind::ALL {
            let (light_stats, l_back, l_none) = measure(kind, params, &light);
            let (loaded_stats, h_back, h_none) = measure(kind, params, &loaded);
            let jumps = format!("{l_back}/{h_back} | {l_none}/{h_none}");
            for ((label, l), (_, h)) in rows(&light_stats).into_iter().zip(rows(&loaded_stats)) {
                println!(
                    "| {} | {label} | {} | {} | {jumps} |",
                    kind.name(),
                    cells(l),
                    cells(h)
                );
            }
        }
    }
}
