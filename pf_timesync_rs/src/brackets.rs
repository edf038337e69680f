//! Load-robust estimation from request brackets relative to the passive
//! floor (`brackets`).
//!
//! The passive lower envelope (the floor) follows the sensor clock's skew
//! and wander closely, but lies above the true line by the packets' minimum
//! delay, an unknown constant. Each HTTP request brackets the true ROS time
//! of its sensor time: `before ≤ truth ≤ after`. Taken relative to the floor
//! at its sensor time, a request gives `before − floor ≤ c ≤ after − floor`
//! for the one constant `c = truth − floor`, and the floor itself is an upper
//! bound (`c ≤ 0`). Because `c` does not drift with the clock, brackets from
//! far longer ago than the floor's window still count.
//!
//! - **Skew** comes from the hulls: the passive lower hull (or, with no
//!   passive samples, the maximum-separation line between the hull of the
//!   answer times and that of the request times, as in [`bounds`](crate::bounds)).
//! - **Per-sample quality**: a bracket counts by where it lies against the
//!   edges: only the [`EDGE_SAMPLES`] tightest lower bounds (and upper
//!   bounds) enter an edge, so a loose bracket, however many, never moves the
//!   estimate. A bracket's round trip is the sum of its slacks against the
//!   two edges plus the band's width, so the slack per edge is the round
//!   trip split by leg: a request that waited long on one leg is still a
//!   tight bound on the other, and is used there.
//! - **Adaptive window**: the brackets are taken over the base window; while
//!   an edge is loose (its estimated shortfall, the mean spacing of its
//!   tightest values, above [`TIGHT_SHORTFALL_NS`]) the window doubles, up
//!   to [`MAX_WINDOW_FACTOR`] times the base. A light host stays at the base
//!   window; on a loaded one, where most requests are loose, the window
//!   grows until it holds enough tight ones.
//! - **Where the clock is read**: each edge falls short of its limit by its
//!   expected shortfall ([`endpoint`](crate::endpoint)); the limits are the
//!   true line minus the request leg's minimum delay and plus the answer
//!   leg's. The estimate lies at the read position between them
//!   ([`BracketsEstimator::with_read_position`], by default the middle: no
//!   bias when the two legs' minimum delays are equal, at most half the
//!   fastest round trip otherwise, like a bracket's midpoint). The floor is
//!   only a hard upper bound here: taking the middle between the request
//!   times and the floor assumed that the request leg's minimum delay equals
//!   the packets' one, which no sample shows (a constant bias of half their
//!   difference).
//! - **Guarantees**: the result is clamped into the hard band of the
//!   current window's samples (so right after a reset the error is bounded
//!   by the band), converted stamps only move by microseconds between scans,
//!   and times are on the synchronizer's unwrapped timeline. Before the
//!   floor's skew is trusted (the first seconds of a run, or passive samples
//!   missing), the result is that of [`BoundsEstimator`] at the same read
//!   position ([`BoundsEstimator::with_read_position`]).
//! - **Soft resets** (`scan_status`): the brackets are kept; once the
//!   envelope has measured the step of the floor across the reset
//!   ([`LowerEnvelope::take_step`](crate::envelope::LowerEnvelope::take_step)),
//!   the brackets of before it are shifted by the step and the later ones
//!   taken anew against the new floor.

pub use crate::bounds::DEFAULT_READ_POSITION;
use crate::bounds::{clamp_read_position, BoundsEstimator};
use crate::endpoint::{lower_endpoint, upper_endpoint, Endpoint};
use crate::estimator::Estimator;
use crate::hull::Line;
use crate::sample::{ActiveSample, PassiveSample};
use std::collections::VecDeque;

/// Tightest values per edge used to estimate its limit.
pub const EDGE_SAMPLES: usize = 4;
/// A lower edge whose estimated shortfall is at most this (ns) is tight:
/// the window stops growing.
pub const TIGHT_SHORTFALL_NS: f64 = 2_000.0;
/// The bracket window grows by doubling from the base window up to this
/// many times it.
pub const MAX_WINDOW_FACTOR: i64 = 16;

/// An active sample and its bounds relative to the passive floor.
#[derive(Debug, Clone, Copy)]
struct Bracket {
    sample: ActiveSample,
    /// Request and answer times minus the floor at the sample's sensor
    /// time, once the floor is trusted.
    rel: Option<(i64, i64)>,
    /// No longer re-referenced: the floor was taken at or past the middle of
    /// its window (where the hull is best), or never could be.
    frozen: bool,
}

/// How the current line was found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The passive floor (lower envelope line).
    pub floor: Line,
    /// Estimated offset of the true line from the floor, ns (≤ 0, and
    /// within the hard band `lower.max ..= upper_ns`).
    pub offset_ns: f64,
    /// Bracket window used, ns of sensor time.
    pub window_ns: i64,
    /// Brackets in that window.
    pub brackets: usize,
    /// Tightest request time relative to the floor (the lower edge) and its
    /// estimated shortfall.
    pub lower: Endpoint,
    /// Tightest answer time relative to the floor (the upper edge),
    /// mirrored: `-upper.max` is the answer time, `-upper.limit()` the
    /// edge's estimated limit.
    pub upper: Endpoint,
    /// Hard upper bound relative to the floor: the tightest answer time or
    /// the floor itself (0), whichever is lower.
    pub upper_ns: i64,
    /// The estimate minus the same read position between the observed
    /// edges, ns: the correction for the edges' unequal shortfalls (and
    /// the clamp into the hard band).
    pub asymmetry_ns: f64,
}

#[derive(Debug, Clone, Copy)]
struct Cached {
    line: Line,
    below: Option<Line>,
    above: Option<Line>,
    estimate: Option<Estimate>,
}

/// The `brackets` estimator: passive floor for the skew, request brackets
/// relative to it for the offset.
#[derive(Debug, Clone)]
pub struct BracketsEstimator {
    window_ns: i64,
    read_position: f64,
    bounds: BoundsEstimator,
    brackets: VecDeque<Bracket>,
    newest_x: Option<i64>,
    /// Newest sensor time at the last soft reset: older brackets are
    /// relative to the floor of before it.
    reset_x: Option<i64>,
    cached: Option<Option<Cached>>,
}

impl BracketsEstimator {
    /// A base window of `window_ns` sensor nanoseconds, skew limited to
    /// `±max_skew`, the clock read in the middle of the request
    /// ([`DEFAULT_READ_POSITION`]).
    pub fn new(window_ns: i64, max_skew: f64) -> Self {
        BracketsEstimator {
            window_ns: window_ns.max(1),
            read_position: DEFAULT_READ_POSITION,
            bounds: BoundsEstimator::new(window_ns, max_skew)
                .with_read_position(DEFAULT_READ_POSITION),
            brackets: VecDeque::new(),
            newest_x: None,
            reset_x: None,
            cached: None,
        }
    }

    /// The scanner reads its clock at `read_position` (clamped to 0..=1)
    /// of the fastest round trip: 0 as the request arrives, 1 just before
    /// the answer leaves, 0.5 (the default) in the middle.
    pub fn with_read_position(mut self, read_position: f64) -> Self {
        self.read_position = clamp_read_position(read_position);
        self.bounds = self.bounds.with_read_position(self.read_position);
        self.cached = None;
        self
    }

    /// The current line (before clamping into the hard band), if any.
    pub fn line(&mut self) -> Option<Line> {
        self.current().map(|c| c.line)
    }

    /// How the current line was found; `None` while the floor is not
    /// trusted or there are too few brackets (then the line is `bounds`').
    pub fn estimate(&mut self) -> Option<Estimate> {
        self.current().and_then(|c| c.estimate)
    }

    fn current(&mut self) -> Option<Cached> {
        if let Some(c) = self.cached {
            return c;
        }
        let c = self.compute();
        self.cached = Some(c);
        c
    }

    fn compute(&mut self) -> Option<Cached> {
        let fallback = self.bounds.line()?;
        let fit = self.bounds.envelope_fit();
        if let Some(step) = self.bounds.take_floor_step() {
            self.follow_step(step);
        }
        let estimate = match fit {
            Some((floor, true)) => {
                self.reference(floor);
                self.offset(floor)
            }
            _ => None,
        };
        let line = match estimate {
            Some(e) => Line {
                x0: e.floor.x0,
                y0: e.floor.y0.saturating_add(e.offset_ns.round() as i64),
                skew: e.floor.skew,
            },
            None => fallback,
        };
        let (below, above) = self.bounds.limits(line.skew);
        Some(Cached {
            line,
            below,
            above,
            estimate,
        })
    }

    /// The floor stepped by `step` across the last soft reset: brackets
    /// from before it are shifted, those after it taken anew.
    fn follow_step(&mut self, step: i64) {
        let Some(reset_x) = self.reset_x.take() else {
            return;
        };
        for b in &mut self.brackets {
            if b.sample.sensor_ns <= reset_x {
                b.rel = b.rel.map(|(lo, hi)| (lo - step, hi - step));
            } else {
                b.frozen = false;
            }
        }
    }

    /// Take the not yet frozen brackets relative to `floor`; freeze those
    /// at or past the middle of the floor's window.
    fn reference(&mut self, floor: Line) {
        let Some(newest) = self.newest_x else {
            return;
        };
        let middle = newest - self.window_ns / 2;
        let oldest = newest - self.window_ns;
        for b in self.brackets.iter_mut().rev() {
            if b.frozen {
                continue;
            }
            let x = b.sample.sensor_ns;
            if x < oldest {
                // Older than the floor's window: keep what it has.
                b.frozen = true;
                continue;
            }
            let f = floor.eval(x);
            b.rel = Some((b.sample.before_ns - f, b.sample.after_ns - f));
            b.frozen = x <= middle;
        }
    }

    /// The offset from the floor over the adaptive window.
    fn offset(&self, floor: Line) -> Option<Estimate> {
        let newest = self.newest_x?;
        let rel_since = |start: i64| {
            self.brackets
                .iter()
                .rev()
                .take_while(move |b| b.sample.sensor_ns >= start)
                .filter_map(|b| b.rel)
        };
        let edges = |start: i64| {
            let lower = upper_endpoint(rel_since(start).map(|r| r.0), EDGE_SAMPLES)?;
            let upper = lower_endpoint(rel_since(start).map(|r| r.1), EDGE_SAMPLES)?;
            Some((lower, upper))
        };
        let mut window = self.window_ns;
        let (lower, upper) = loop {
            let found = edges(newest - window);
            let tight =
                found.is_some_and(|(lo, up)| lo.shortfall.max(up.shortfall) <= TIGHT_SHORTFALL_NS);
            if tight || window >= self.window_ns * MAX_WINDOW_FACTOR {
                break found?;
            }
            window *= 2;
        };
        let brackets = rel_since(newest - window).count();
        // Hard upper bound: the tightest answer time or the floor (the
        // packets are late, never early).
        let upper_ns = (-upper.max).min(0);
        let (lower_limit, upper_limit) = (lower.limit(), -upper.limit());
        let at_read = lower_limit + self.read_position * (upper_limit - lower_limit);
        let offset = at_read.clamp(lower.max as f64, (upper_ns as f64).max(lower.max as f64));
        let observed = lower.max as f64 + self.read_position * (-upper.max - lower.max) as f64;
        Some(Estimate {
            floor,
            offset_ns: offset,
            window_ns: window,
            brackets,
            lower,
            upper,
            upper_ns,
            asymmetry_ns: offset - observed,
        })
    }

    fn touch(&mut self, x: i64) {
        let newest = self.newest_x.map_or(x, |n| n.max(x));
        self.newest_x = Some(newest);
        let keep_from = newest - self.window_ns * MAX_WINDOW_FACTOR;
        while self
            .brackets
            .front()
            .is_some_and(|b| b.sample.sensor_ns < keep_from)
        {
            self.brackets.pop_front();
        }
        self.cached = None;
    }
}

impl Estimator for BracketsEstimator {
    fn name(&self) -> &'static str {
        "brackets"
    }

    fn add_passive(&mut self, sample: PassiveSample) {
        self.bounds.add_passive(sample);
        self.touch(sample.sensor_ns);
    }

    fn add_active(&mut self, sample: ActiveSample) {
        self.bounds.add_active(sample);
        let pos = self
            .brackets
            .partition_point(|b| b.sample.sensor_ns <= sample.sensor_ns);
        // Referenced now if the floor is trusted (refined while it is young).
        let rel = match self.bounds.envelope_fit() {
            Some((floor, true)) => {
                let f = floor.eval(sample.sensor_ns);
                Some((sample.before_ns - f, sample.after_ns - f))
            }
            _ => None,
        };
        self.brackets.insert(
            pos,
            Bracket {
                sample,
                rel,
                frozen: false,
            },
        );
        self.touch(sample.sensor_ns);
    }

    fn reset_passive(&mut self) {
        // The floor continues from the line learnt before; once the new
        // floor's step against it is measured, the brackets follow it.
        self.bounds.reset_passive();
        self.reset_x = self.newest_x;
        self.cached = None;
    }

    fn reset(&mut self) {
        self.bounds.reset();
        self.brackets.clear();
        self.newest_x = None;
        self.reset_x = None;
        self.cached = None;
    }

    fn convert(&mut self, sensor_ns: i64) -> Option<i64> {
        let c = self.current()?;
        let y = c.line.eval(sensor_ns);
        match (
            c.below.map(|l| l.eval(sensor_ns)),
            c.above.map(|l| l.eval(sensor_ns)),
        ) {
            (Some(hi), Some(lo)) if lo <= hi => Some(y.clamp(lo, hi)),
            (Some(hi), None) => Some(y.min(hi)),
            (None, Some(lo)) => Some(y.max(lo)),
            _ => Some(y),
        }
    }
}
