//! Error statistics of estimators over simulated runs.

use crate::replay::{apply, Outcome, Record};
use crate::selection::{EstimatorKind, Params};
use crate::sim::{Phase, SimEvent};
use crate::sync::Synchronizer;
use crate::TimeSyncError;

/// Statistics of stamp errors (ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorStats {
    /// Number of errors.
    pub count: usize,
    /// Mean error (converted minus true).
    pub bias: f64,
    /// Median of the absolute error.
    pub p50: i64,
    /// 99th percentile of the absolute error.
    pub p99: i64,
    /// Largest absolute error.
    pub max: i64,
    /// 99th percentile of |error − median error of its run|.
    pub jitter_p99: i64,
}

fn percentile(sorted: &[i64], q: f64) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Statistics of `errors`, with `deviations` (error minus its run's median)
/// for the jitter; `None` when empty.
pub fn error_stats(errors: &[i64], deviations: &[i64]) -> Option<ErrorStats> {
    if errors.is_empty() {
        return None;
    }
    let mut abs: Vec<i64> = errors.iter().map(|e| e.saturating_abs()).collect();
    abs.sort_unstable();
    let mut dev: Vec<i64> = deviations.iter().map(|e| e.saturating_abs()).collect();
    dev.sort_unstable();
    Some(ErrorStats {
        count: errors.len(),
        bias: errors.iter().map(|&e| e as f64).sum::<f64>() / errors.len() as f64,
        p50: percentile(&abs, 0.5),
        p99: percentile(&abs, 0.99),
        max: *abs.last().unwrap_or(&0),
        jitter_p99: percentile(&dev, 0.99),
    })
}

/// Errors of one estimator over one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunErrors {
    /// Error of every answered conversion, ns.
    pub all: Vec<i64>,
    /// The phase of the run of each conversion.
    pub phase: Vec<Phase>,
    /// Conversions answered `none`.
    pub unanswered: usize,
    /// Converted stamps earlier than the previous scan's, with no reset between.
    pub backward_jumps: usize,
    /// Conversions outside the bound of the requests answered in the
    /// [`BRACKET_CHECK_WINDOW_NS`] before them by more than
    /// [`BRACKET_CHECK_TOLERANCE_NS`] (see [`evaluate`]).
    pub outside_brackets: usize,
}

/// Requests whose clock read is at most this long (ROS ns) before a
/// conversion's truth bound its error.
pub const BRACKET_CHECK_WINDOW_NS: i64 = 10_000_000_000;
/// Slack of the bracket check, ns: over the check window a line of the
/// estimated skew departs from the true clock (skew error, wander) by a few
/// microseconds at most.
pub const BRACKET_CHECK_TOLERANCE_NS: i64 = 5_000;

/// The requests answered so far, as bounds of a conversion's error.
#[derive(Debug, Default)]
struct BracketCheck {
    /// (true ROS time of the read, request minus it, answer minus it).
    recent: std::collections::VecDeque<(i64, i64, i64)>,
}

impl BracketCheck {
    fn add(&mut self, read_ns: i64, before_ns: i64, after_ns: i64) {
        self.recent
            .push_back((read_ns, before_ns - read_ns, after_ns - read_ns));
    }

    /// Whether `error` of a conversion of true time `truth_ns` lies outside
    /// the bound of the requests read in the check window before it.
    fn outside(&mut self, truth_ns: i64, error: i64) -> bool {
        while self
            .recent
            .front()
            .is_some_and(|r| r.0 < truth_ns - BRACKET_CHECK_WINDOW_NS)
        {
            self.recent.pop_front();
        }
        let lo = self.recent.iter().map(|r| r.1).max();
        let hi = self.recent.iter().map(|r| r.2).min();
        match (lo, hi) {
            (Some(lo), Some(hi)) => {
                error < lo - BRACKET_CHECK_TOLERANCE_NS || error > hi + BRACKET_CHECK_TOLERANCE_NS
            }
            _ => false,
        }
    }
}

impl RunErrors {
    /// Median error of the run.
    pub fn median(&self) -> i64 {
        let mut v = self.all.clone();
        v.sort_unstable();
        percentile(&v, 0.5)
    }

    /// Errors minus the run's median.
    pub fn deviations(&self) -> Vec<i64> {
        let m = self.median();
        self.all.iter().map(|e| e - m).collect()
    }
}

/// Replay `events` through a [`Synchronizer`] with `kind` and collect
/// errors. A request read at true time `t` bounds the error of the true line
/// to `before − t ..= after − t`; each conversion is checked against the
/// requests read in the [`BRACKET_CHECK_WINDOW_NS`] before its truth.
pub fn evaluate(
    kind: EstimatorKind,
    params: Params,
    events: &[SimEvent],
) -> Result<RunErrors, TimeSyncError> {
    let mut sync = Synchronizer::new(kind, params)?;
    let mut out = RunErrors::default();
    let mut previous: Option<i64> = None;
    let mut check = BracketCheck::default();
    for e in events {
        match (e.record, e.truth) {
            (Record::Reset, _) => previous = None,
            (
                Record::Active {
                    before_ns,
                    after_ns,
                    ..
                },
                Some(t),
            ) => check.add(t.truth_ns, before_ns, after_ns),
            _ => {}
        }
        let Outcome::Converted(answer) = apply(&mut sync, e.record)? else {
            continue;
        };
        let Some(truth) = e.truth else {
            continue;
        };
        match answer {
            Some(t) => {
                let stamp = t.nanos();
                if previous.is_some_and(|p| stamp < p) {
                    out.backward_jumps += 1;
                }
                previous = Some(stamp);
                let error = stamp - truth.truth_ns;
                if check.outside(truth.truth_ns, error) {
                    out.outside_brackets += 1;
                }
                out.all.push(error);
                out.phase.push(truth.phase);
            }
            None => out.unanswered += 1,
        }
    }
    Ok(out)
}

/// Statistics pooled over several runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    /// Every conversion.
    pub all: Option<ErrorStats>,
    /// The first seconds of each run ([`Phase::Start`]).
    pub start: Option<ErrorStats>,
    /// The first seconds after each `scan_status` reset ([`Phase::AfterReset`]).
    pub after_reset: Option<ErrorStats>,
    /// Neither ([`Phase::Settled`]).
    pub settled: Option<ErrorStats>,
}

/// Pooled statistics of several runs (deviations from each run's median).
pub fn pooled(runs: &[RunErrors]) -> Pooled {
    let mut all = (vec![], vec![]);
    let mut start = (vec![], vec![]);
    let mut after = (vec![], vec![]);
    let mut settled = (vec![], vec![]);
    for r in runs {
        let dev = r.deviations();
        for ((e, d), phase) in r.all.iter().zip(&dev).zip(&r.phase) {
            let add = |pool: &mut (Vec<i64>, Vec<i64>)| {
                pool.0.push(*e);
                pool.1.push(*d);
            };
            add(&mut all);
            match phase {
                Phase::Start => add(&mut start),
                Phase::AfterReset => add(&mut after),
                Phase::Settled => add(&mut settled),
            }
        }
    }
    Pooled {
        all: error_stats(&all.0, &all.1),
        start: error_stats(&start.0, &start.1),
        after_reset: error_stats(&after.0, &after.1),
        settled: error_stats(&settled.0, &settled.1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats() {
        let errors = [10, -20, 30, 40, 1000];
        let s = error_stats(&errors, &[0, -30, 20, 30, 990]).unwrap();
        assert_eq!(s.count, 5);
        assert!((s.bias - 212.0).abs() < 1e-9);
        assert_eq!(s.p50, 30);
        assert_eq!(s.max, 1000);
        assert_eq!(s.p99, 1000);
        assert_eq!(s.jitter_p99, 990);
        assert!(error_stats(&[], &[]).is_none());
        let run = RunErrors {
            all: vec![5, 7, 100],
            ..RunErrors::default()
        };
        assert_eq!(run.median(), 7);
        assert_eq!(run.deviations(), vec![-2, 0, 93]);
    }

    #[test]
    fn bracket_check() {
        let mut check = BracketCheck::default();
        assert!(!check.outside(0, 1_000_000));
        // Read at 1 s, 200 µs after sending, 300 µs before the answer;
        // another 100 µs after sending.
        check.add(1_000_000_000, 999_800_000, 1_000_300_000);
        check.add(2_000_000_000, 1_999_900_000, 2_000_900_000);
        let t = 3_000_000_000;
        assert!(!check.outside(t, -100_000 - BRACKET_CHECK_TOLERANCE_NS));
        assert!(check.outside(t, -100_001 - BRACKET_CHECK_TOLERANCE_NS));
        assert!(!check.outside(t, 300_000 + BRACKET_CHECK_TOLERANCE_NS));
        assert!(check.outside(t, 300_001 + BRACKET_CHECK_TOLERANCE_NS));
        // 10 s later only the second request counts.
        let t = 1_000_000_001 + BRACKET_CHECK_WINDOW_NS;
        assert!(!check.outside(t, 900_000));
    }
}
