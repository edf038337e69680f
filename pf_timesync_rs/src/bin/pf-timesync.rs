//! `pf-timesync`: offline tuning of the laser scanner time sync.
//!
//! `pf-timesync replay [--estimator NAME] [--period-ms N] ...` reads the
//! replay protocol (see `pf_timesync_rs::replay`) on stdin and answers on
//! stdout; `pf-timesync simulate` writes a simulated sample log.

use anyhow::Context;
use clap::{Parser, Subcommand};
use pf_timesync_rs::replay::Record;
use pf_timesync_rs::sim::{simulate, SimConfig};
use pf_timesync_rs::{replay, EstimatorKind, Params, Synchronizer, ESTIMATOR_NAMES};
use std::io::{BufRead, BufWriter, Write};

#[derive(Parser, Debug)]
#[command(
    name = "pf-timesync",
    version,
    about = "Pepperl+Fuchs scanner clock to ROS time: replay logged samples, simulate"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run an estimator over samples on stdin; one answer line per `c` line.
    ///
    /// Input lines: `p,<raw>,<ros_ns>` passive sample; `a,<raw>,<ros_before_ns>,<ros_after_ns>`
    /// active sample; `r` reset (non-zero scan_status); `c,<raw>` convert (answers ns or `none`).
    Replay {
        /// Estimator: pf-mean, pf-regression (the PF driver's TimeSync), envelope, bounds,
        /// max-separation, brackets.
        #[arg(long, value_parser = parse_kind, default_value_t = EstimatorKind::default())]
        estimator: EstimatorKind,
        /// The driver's `timesync_period` (ms); window of envelope/bounds/brackets when positive.
        #[arg(long, default_value_t = Params::default().period_ms, allow_negative_numbers = true)]
        period_ms: i32,
        /// Skew limit of the scanner clock, ppm (envelope, bounds, brackets).
        #[arg(long, default_value_t = Params::default().max_skew_ppm)]
        max_ppm: f64,
        /// Sensor/ROS disagreement that counts as a clock jump, ms.
        #[arg(long, default_value_t = Params::default().jump_tolerance_ms)]
        jump_tolerance_ms: i64,
        /// brackets: where in the fastest request round trip the scanner reads its clock
        /// (0: as the request arrives, 1: as the answer leaves).
        #[arg(long, default_value_t = Params::default().read_position)]
        read_position: f64,
    },
    /// Write a simulated sample log (replay protocol) to stdout.
    Simulate {
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Length, seconds.
        #[arg(long, default_value_t = 60.0)]
        duration_s: f64,
        /// HTTP request interval, ms (0: passive only).
        #[arg(long, default_value_t = 0)]
        http_ms: u32,
        /// Simulated host: `light` or `loaded` (see `pf_timesync_rs::sim::SimConfig`).
        #[arg(long, default_value = "light", value_parser = ["light", "loaded"])]
        host: String,
        /// Also write `<raw>,<true ros ns>` of every `c` line to this file.
        #[arg(long)]
        truth: Option<std::path::PathBuf>,
    },
}

fn parse_kind(s: &str) -> Result<EstimatorKind, String> {
    s.parse::<EstimatorKind>()
        .map_err(|_| format!("unknown estimator `{s}`; known: {ESTIMATOR_NAMES}"))
}

fn replay_cmd(kind: EstimatorKind, params: Params, input: impl BufRead) -> anyhow::Result<()> {
    let mut sync = Synchronizer::new(kind, params).context("invalid parameters")?;
    let stdout = std::io::stdout();
    let out = BufWriter::new(stdout.lock());
    let summary = replay::run(&mut sync, input, out)?;
    log::info!(
        "{} lines, {} conversions ({} none), resets {:?}",
        summary.lines,
        summary.conversions,
        summary.unanswered,
        sync.reset_counts()
    );
    Ok(())
}

fn simulate_cmd(cfg: SimConfig, truth: Option<std::path::PathBuf>) -> anyhow::Result<()> {
    let events = simulate(&cfg);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut truth_out = match truth {
        Some(p) => Some(BufWriter::new(
            std::fs::File::create(&p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    for e in &events {
        writeln!(out, "{}", e.record.to_line())?;
        if let (Some(out), Record::Convert { raw }, Some(truth)) =
            (truth_out.as_mut(), e.record, e.truth)
        {
            writeln!(out, "{raw},{}", truth.truth_ns)?;
        }
    }
    out.flush()?;
    if let Some(mut t) = truth_out {
        t.flush()?;
    }
    Ok(())
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Replay {
            estimator,
            period_ms,
            max_ppm,
            jump_tolerance_ms,
            read_position,
        } => {
            let params = Params {
                period_ms,
                max_skew_ppm: max_ppm,
                jump_tolerance_ms,
                read_position,
                ..Params::default()
            };
            replay_cmd(estimator, params, std::io::stdin().lock())
        }
        Command::Simulate {
            seed,
            duration_s,
            http_ms,
            host,
            truth,
        } => {
            if !(duration_s.is_finite() && duration_s > 0.0 && duration_s <= 1e6) {
                eprintln!("pf-timesync: --duration-s must be in (0, 1e6]");
                std::process::exit(2);
            }
            let Some(host) = SimConfig::host(&host) else {
                eprintln!("pf-timesync: unknown --host {host}");
                std::process::exit(2);
            };
            let cfg = SimConfig {
                seed,
                duration_s,
                http_interval_ms: http_ms,
                ..host
            };
            simulate_cmd(cfg, truth)
        }
    };
    if let Err(e) = result {
        eprintln!("pf-timesync: {e:#}");
        std::process::exit(1);
    }
}
