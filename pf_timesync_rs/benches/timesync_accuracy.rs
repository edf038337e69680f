//! Accuracy of the estimators on the simulator's hosts and cases, several
//! seeds, one run.
//!
//! `cargo bench -p pf_timesync_rs --bench timesync_accuracy`
//! (optional arguments: number of seeds, seconds per run).
//!
//! Two tables: every estimator without requests on the light and loaded
//! hosts, and, with requests every 250 ms, `brackets` next to the
//! TICSync-style `max-separation`, `bounds` and the PF driver's methods for
//! each of [`cases`] (and `brackets` told the case's read position).

use pf_timesync_rs::metrics::{evaluate, pooled, ErrorStats, Pooled, RunErrors};
use pf_timesync_rs::sim::{cases, simulate, SimConfig, SimEvent};
use pf_timesync_rs::{EstimatorKind, Params};

/// Seeds of the loaded host start here (the light host's at 1).
const LOADED_SEED_BASE: u64 = 1000;

/// The estimators compared per case.
const PER_CASE: [EstimatorKind; 5] = [
    EstimatorKind::Brackets,
    EstimatorKind::MaxSeparation,
    EstimatorKind::Bounds,
    EstimatorKind::PfMean,
    EstimatorKind::PfRegression,
];

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

/// Pooled statistics of `kind` over `runs`, and the run totals.
fn measure(kind: EstimatorKind, params: Params, runs: &[Vec<SimEvent>]) -> (Pooled, RunErrors) {
    let results: Vec<RunErrors> = runs
        .iter()
        .map(|events| evaluate(kind, params, events).expect("simulated samples are valid"))
        .collect();
    let totals = RunErrors {
        backward_jumps: results.iter().map(|r| r.backward_jumps).sum(),
        unanswered: results.iter().map(|r| r.unanswered).sum(),
        outside_brackets: results.iter().map(|r| r.outside_brackets).sum(),
        ..RunErrors::default()
    };
    (pooled(&results), totals)
}

/// `seeds` runs of `host` from seed `base + 1`.
fn runs(host: &SimConfig, base: u64, seeds: u64, duration: f64) -> Vec<Vec<SimEvent>> {
    (1..=seeds)
        .map(|seed| {
            simulate(&SimConfig {
                seed: base + seed,
                duration_s: duration,
                ..host.clone()
            })
        })
        .collect()
}

fn passive_only(params: Params, seeds: u64, duration: f64) {
    let passive = |host: SimConfig| SimConfig {
        http_interval_ms: 0,
        ..host
    };
    let light = runs(&passive(SimConfig::light()), 0, seeds, duration);
    let loaded = runs(
        &passive(SimConfig::loaded()),
        LOADED_SEED_BASE,
        seeds,
        duration,
    );
    println!();
    println!("### passive only");
    println!();
    println!(
        "| estimator | window | light: bias µs | p50 µs | p99 µs | max µs | jitter p99 µs \
         | loaded: bias µs | p50 µs | p99 µs | max µs | jitter p99 µs \
         | backward jumps light/loaded | none light/loaded |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for kind in EstimatorKind::ALL {
        if kind == EstimatorKind::MaxSeparation {
            continue; // requests only
        }
        let (l, l_totals) = measure(kind, params, &light);
        let (h, h_totals) = measure(kind, params, &loaded);
        let jumps = format!(
            "{}/{} | {}/{}",
            l_totals.backward_jumps,
            h_totals.backward_jumps,
            l_totals.unanswered,
            h_totals.unanswered
        );
        for ((label, l), (_, h)) in rows(&l).into_iter().zip(rows(&h)) {
            println!(
                "| {} | {label} | {} | {} | {jumps} |",
                kind.name(),
                cells(l),
                cells(h)
            );
        }
    }
}

fn per_case(params: Params, seeds: u64, duration: f64) {
    println!();
    println!("### per case, HTTP every 250 ms");
    println!();
    println!(
        "| case | midpoint bias µs | estimator | bias µs | p50 µs | p99 µs | jitter p99 µs \
         | start p99 µs | after reset p99 µs | settled p99 µs | outside brackets \
         | backward jumps | none |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for case in cases() {
        let base = if case.name.starts_with("loaded") {
            LOADED_SEED_BASE
        } else {
            0
        };
        let runs = runs(&case.config, base, seeds, duration);
        // `brackets` once more, told where the scanner reads its clock.
        let told = Params {
            read_position: case.config.read_position(),
            ..params
        };
        let rows = PER_CASE
            .into_iter()
            .map(|k| (k, params, k.name().to_string()))
            .chain((told != params).then(|| {
                let name = format!("brackets, read position {:.2}", told.read_position);
                (EstimatorKind::Brackets, told, name)
            }));
        for (kind, params, name) in rows {
            let (p, totals) = measure(kind, params, &runs);
            let p99 = |s: Option<ErrorStats>| s.map_or("–".into(), |s| us(s.p99 as f64));
            let all = p.all.map_or("– | – | – | –".into(), |s| {
                format!(
                    "{} | {} | {} | {}",
                    us(s.bias),
                    us(s.p50 as f64),
                    us(s.p99 as f64),
                    us(s.jitter_p99 as f64)
                )
            });
            println!(
                "| {} | {:.0} | {} | {all} | {} | {} | {} | {} | {} | {} |",
                case.name,
                case.config.midpoint_bias_us(),
                name,
                p99(p.start),
                p99(p.after_reset),
                p99(p.settled),
                totals.outside_brackets,
                totals.backward_jumps,
                totals.unanswered
            );
        }
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
        "{seeds} seeds x {duration} s per host and case (light: seeds 1–{seeds}, loaded: seeds \
         {}–{}), period {} ms, skew limit {} ppm, read position {}",
        LOADED_SEED_BASE + 1,
        LOADED_SEED_BASE + seeds,
        params.period_ms,
        params.max_skew_ppm,
        params.read_position
    );
    passive_only(params, seeds, duration);
    per_case(params, seeds, duration);
}
