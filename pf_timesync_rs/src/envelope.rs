//! Lower-envelope estimation from passive samples.
//!
//! A passive sample is never evaluated before its packet was measured and
//! sent, so the true sensor-to-ROS line lies at or below every passive point.
//! The least total delay line under that constraint (Moon, Skelly and
//! Towsley's linear program) is the edge of the lower convex hull that spans
//! the middle of the window. Late packets (network queues, host stalls,
//! bursts) only lie higher and never touch the hull: they are rejected by
//! construction, with no threshold to tune. The skew is limited to a
//! physical bound (crystal tolerance, default ±200 ppm).
//!
//! The line is anchored at the hull's point at the middle of the window,
//! where the hull is supported from both sides. Its skew is that of the
//! middle edge only until a window ago; from then on it is the slope from
//! the middle of the window one window earlier to the middle now
//! ([`ANCHOR_BASELINE_FACTOR`]): on a loaded host, where few packets reach
//! the minimum delay, a single hull edge can be a second long and a few
//! microseconds off at each end, while a ten-second baseline divides the
//! same error by ten. Across a `scan_status` reset the anchors are kept,
//! shifted by the step of the floor (the new window's middle against the
//! line from before the reset, measured once the new window spans
//! [`STEP_SPAN_SHARE`] of the old one), so a change of the packets' delay
//! with the scanner's status does not turn into skew.
//!
//! The skew so measured holds at the centre of its baseline, about a window
//! before the newest sample it is applied to, and the crystal's rate
//! drifts (on the loaded simulated host by up to 0.05 ppm/s: about 2 µs at
//! the newest sample, and several times that on a line carried across a
//! reset). The drift is the least-squares slope of the skews measured over
//! the last [`DRIFT_HISTORY_WINDOWS`] windows ([`crate::drift`]; skews over
//! a baseline across a soft reset are left out, they carry the step's
//! measurement error); the line follows it ([`DriftingLine`]), also when it
//! is carried across a soft reset. [`LowerEnvelope::fit`] gives the chord
//! of that line from its anchor to the newest sample.
//!
//! Such a line can pass a few microseconds above a hull vertex far from the
//! middle. Lowering it onto the hull would pivot it on that vertex and raise
//! the jitter (measured on the benchmark's hosts), so it is not: the
//! estimators that use hard bounds ([`brackets`](crate::brackets)) clamp
//! their result into them.

use crate::drift::{DriftingLine, SkewHistory};
use crate::estimator::Estimator;
use crate::hull::{edge_at, lower_hull, support_below, Line, Point};
use crate::sample::{ActiveSample, PassiveSample};
use std::collections::VecDeque;

/// Points are thinned to the lowest one per bucket of this many nanoseconds
/// of sensor time (at 200 ppm the thinning error is below 2 ns).
pub const BUCKET_NS: i64 = 10_000_000;
/// Below this span (ns) the hull slope is not used: the skew of the previous
/// window (or zero) is taken.
pub const MIN_HULL_SPAN_NS: i64 = 1_000_000_000;
/// From this span (ns) on a hull slope is trusted and remembered across
/// soft resets (a `scan_status` reset does not change the crystal's rate).
/// After a soft reset the remembered slope is kept until the new window
/// spans [`PRIOR_SPAN_SHARE`] of the span it was learnt from: a slope from a
/// short span of a loaded host's samples is far worse than one from a full
/// window a few seconds old.
pub const TRUSTED_SPAN_NS: i64 = 3_000_000_000;
/// Anchors (hull points at a window's middle) are kept this far apart, ns.
pub const ANCHOR_SPACING_NS: i64 = 100_000_000;
/// The skew is taken between the current anchor and one this many windows
/// older.
pub const ANCHOR_BASELINE_FACTOR: i64 = 1;
/// Share of the remembered slope's span a new window must span before its
/// own hull slope replaces the remembered one.
pub const PRIOR_SPAN_SHARE: f64 = 0.9;
/// Share of the old window's span the new window must span after a soft
/// reset before the floor's step is measured at its middle and the
/// long-baseline skew (anchors from before the reset, shifted by the step)
/// is used. A later measurement has a better supported middle but reaches
/// further from the line before the reset; following the skew's drift
/// makes that line good further out, so the share is larger than without
/// it (0.5 then).
///
/// Chosen together with [`DRIFT_HISTORY_WINDOWS`] on *tuning* seeds, not
/// on the benchmark's: the loaded host (`SimConfig::loaded`) with seeds
/// 100–119, passive only, counting conversions more than 5 µs off their
/// run's median outside the first 10 s of each run (1470 of 120 000 with
/// no drift and 0.5). With four windows of drift history: 753, 744, 715,
/// 840 and 856 with 0.6, 0.7, 0.8, 0.9 and 0.99; 0.7 is the middle of the
/// flat range. The light host hardly depends on it.
pub const STEP_SPAN_SHARE: f64 = 0.7;
/// The drift of the skew is the least-squares slope of the skews measured
/// over the last this many windows. Chosen on the tuning seeds of
/// [`STEP_SPAN_SHARE`] (counts there with 0.5: 1051, 951 and 1781 with
/// three, four and six windows; with 0.7: 809, 744 (four) and 1034 (five)):
/// a longer history averages more noise, a shorter one follows a changing
/// drift better.
pub const DRIFT_HISTORY_WINDOWS: i64 = 4;

/// The point of a lower hull (left to right) at `x` and the skew of the
/// edge spanning it; `None` with fewer than two vertices.
fn hull_middle(hull: &[Point], x: i64) -> Option<(Point, f64)> {
    let (skew, left) = edge_at(hull, x)?;
    let on_edge = Line {
        x0: left.x,
        y0: left.y,
        skew,
    };
    Some((
        Point {
            x,
            y: on_edge.eval(x),
        },
        skew,
    ))
}

/// A sliding window of upper-bound points with its lower-envelope line.
#[derive(Debug, Clone)]
pub struct LowerEnvelope {
    window_ns: i64,
    max_skew: f64,
    points: VecDeque<Point>,
    newest_x: Option<i64>,
    /// Skew of the last trusted fit and the sensor time it holds at.
    prior_skew: Option<(f64, i64)>,
    /// Span of the window `prior_skew` was learnt from.
    prior_span: i64,
    prior_line: Option<DriftingLine>,
    /// Skews over long baselines, for their drift (kept across soft resets).
    history: SkewHistory,
    /// Sensor time of the first point since the last reset.
    segment_start: i64,
    /// Points of the hull at the middle of past windows (one per
    /// [`ANCHOR_SPACING_NS`]), for the long-baseline skew.
    anchors: VecDeque<Point>,
    /// A soft reset happened and the step of the floor across it is not
    /// measured yet: the anchors are not usable.
    step_pending: bool,
    /// The last step measured, until taken ([`LowerEnvelope::take_step`]).
    measured_step: Option<i64>,
    cached: Option<Option<Fitted>>,
}

/// What [`LowerEnvelope::compute`] finds.
#[derive(Debug, Clone, Copy)]
struct Fit {
    line: DriftingLine,
    /// The skew is trusted.
    trusted: bool,
    /// The hull's middle, when the skew is this window's own.
    own_anchor: Option<Point>,
    /// The long-baseline skew, when measured.
    long_skew: Option<Baseline>,
}

/// A skew measured between two anchors.
#[derive(Debug, Clone, Copy)]
struct Baseline {
    skew: f64,
    /// Sensor time of the baseline's centre, where the skew holds.
    centre: i64,
    /// The older anchor is from before the last soft reset (shifted by the
    /// floor's step, whose measurement error the skew carries).
    across_reset: bool,
}

/// A fit and its chord up to the newest sample.
#[derive(Debug, Clone, Copy)]
struct Fitted {
    floor: DriftingLine,
    chord: Line,
    trusted: bool,
}

impl LowerEnvelope {
    /// A window of `window_ns` sensor nanoseconds, skew limited to `±max_skew`.
    pub fn new(window_ns: i64, max_skew: f64) -> Self {
        LowerEnvelope {
            window_ns: window_ns.max(BUCKET_NS),
            max_skew: max_skew.abs(),
            points: VecDeque::new(),
            newest_x: None,
            prior_skew: None,
            prior_span: 0,
            prior_line: None,
            segment_start: i64::MIN,
            history: SkewHistory::new(DRIFT_HISTORY_WINDOWS * window_ns.max(BUCKET_NS)),
            anchors: VecDeque::new(),
            step_pending: false,
            measured_step: None,
            cached: None,
        }
    }

    /// Add an upper-bound point (true ROS time of `x` is at most `y`).
    pub fn insert(&mut self, p: Point) {
        if let Some(newest) = self.newest_x {
            if p.x < newest.saturating_sub(self.window_ns) {
                return;
            }
        }
        if self.newest_x.is_none() {
            self.segment_start = p.x;
        }
        let skew = self.prior_skew().unwrap_or(0.0);
        let bucket = p.x.div_euclid(BUCKET_NS);
        let pos = self
            .points
            .partition_point(|q| q.x.div_euclid(BUCKET_NS) < bucket);
        match self.points.get_mut(pos) {
            Some(q) if q.x.div_euclid(BUCKET_NS) == bucket => {
                // Keep the lower one, compared along the current slope.
                if crate::hull::offset_from(*q, skew, p) < 0.0 {
                    *q = p;
                }
            }
            _ => self.points.insert(pos, p),
        }
        let newest = self.newest_x.map_or(p.x, |n| n.max(p.x));
        self.newest_x = Some(newest);
        while self
            .points
            .front()
            .is_some_and(|q| q.x < newest - self.window_ns)
        {
            self.points.pop_front();
        }
        self.cached = None;
    }

    /// The thinned points of the window, by sensor time.
    pub fn points(&self) -> &VecDeque<Point> {
        &self.points
    }

    /// Span of sensor time covered by the window.
    pub fn span_ns(&self) -> i64 {
        match (self.points.front(), self.points.back()) {
            (Some(a), Some(b)) => b.x - a.x,
            _ => 0,
        }
    }

    /// Skew of the last trusted fit, kept across soft resets, followed by
    /// its drift up to the newest sample.
    pub fn prior_skew(&self) -> Option<f64> {
        self.prior_skew.map(|(skew, at)| {
            let newest = self.newest_x.unwrap_or(at);
            skew + self.history.drift() * (newest - at) as f64
        })
    }

    /// Drop the points; keep the skew learnt so far, the anchors of the
    /// long-baseline skew (to be shifted by the floor's step) and the last
    /// line as an upper bound until the new window spans
    /// [`TRUSTED_SPAN_NS`] (the scanner's clock does not change with its
    /// `scan_status`; only the packets' measuring-duration correction may).
    pub fn clear(&mut self) {
        self.fit();
        if let Some(Some(f)) = self.cached {
            self.prior_line = Some(f.floor);
        }
        self.points.clear();
        // The anchors are points of the old floor; if the packets' delay
        // changed with the scanner's status, the floor stepped. The step is
        // measured once the new window spans `STEP_SPAN_SHARE` of the old
        // one (a shorter window's middle is too poorly supported), and the
        // anchors are shifted by it.
        self.step_pending = self.prior_line.is_some();
        self.newest_x = None;
        self.cached = None;
    }

    /// Drop the points and the skew learnt.
    pub fn clear_all(&mut self) {
        self.clear();
        self.prior_skew = None;
        self.prior_span = 0;
        self.prior_line = None;
        self.history.clear();
        self.anchors.clear();
        self.step_pending = false;
        self.measured_step = None;
    }

    /// The lower-envelope line and whether its skew is trusted (from a
    /// trusted span of this window, or learnt before a soft reset); `None`
    /// without points.
    pub fn fit(&mut self) -> Option<(Line, bool)> {
        if let Some(cached) = self.cached {
            return cached.map(|f| (f.chord, f.trusted));
        }
        if self.step_pending && self.span_ns() as f64 >= STEP_SPAN_SHARE * self.prior_span as f64 {
            self.measure_step();
        }
        let result = self.compute().map(|fit| {
            if let (Some(anchor), true) = (fit.own_anchor, fit.trusted) {
                self.prior_skew = Some((fit.line.skew, fit.line.anchor.x));
                self.prior_span = self.span_ns();
                if self.remember_anchor(anchor) {
                    if let Some(Baseline {
                        skew,
                        centre,
                        across_reset: false,
                    }) = fit.long_skew
                    {
                        self.history.push(centre, skew);
                    }
                }
            }
            let newest = self.newest_x.unwrap_or(fit.line.anchor.x);
            Fitted {
                floor: fit.line,
                chord: fit.line.chord(fit.line.anchor.x, newest),
                trusted: fit.trusted,
            }
        });
        self.cached = Some(result);
        result.map(|f| (f.chord, f.trusted))
    }

    /// Shift the anchors from before the last soft reset by the step of the
    /// floor across it: the new window's middle minus the line from before.
    fn measure_step(&mut self) {
        self.step_pending = false;
        let pts: Vec<Point> = self.points.iter().copied().collect();
        let hull = lower_hull(&pts);
        let mid = match (self.points.front(), self.points.back()) {
            (Some(a), Some(b)) => a.x + (b.x - a.x) / 2,
            _ => return self.anchors.clear(),
        };
        match (hull_middle(&hull, mid), self.prior_line) {
            (Some((middle, _)), Some(prior)) => {
                let step = middle.y - prior.eval(middle.x);
                for a in &mut self.anchors {
                    a.y += step;
                }
                self.measured_step = Some(step);
            }
            _ => self.anchors.clear(),
        }
    }

    /// The step of the floor across the last soft reset (ns, new minus old),
    /// once measured; returned once. Whoever keeps offsets from the floor
    /// of before the reset shifts them by it.
    pub fn take_step(&mut self) -> Option<i64> {
        self.measured_step.take()
    }

    /// Keep `p` as an anchor unless the last one is too close; whether kept.
    fn remember_anchor(&mut self, p: Point) -> bool {
        if self
            .anchors
            .back()
            .is_some_and(|a| p.x < a.x + ANCHOR_SPACING_NS)
        {
            return false;
        }
        self.anchors.push_back(p);
        while self
            .anchors
            .front()
            .is_some_and(|a| a.x < p.x - ANCHOR_BASELINE_FACTOR * self.window_ns - self.window_ns)
        {
            self.anchors.pop_front();
        }
        true
    }

    /// The line, whether its skew is trusted, the hull's middle point when
    /// the skew is this window's own, and the long-baseline skew.
    fn compute(&self) -> Option<Fit> {
        let fit = |line, trusted, own_anchor, long_skew| Fit {
            line,
            trusted,
            own_anchor,
            long_skew,
        };
        let drift = self.history.drift();
        let Some(&first) = self.points.front() else {
            return self.prior_line.map(|l| fit(l, false, None, None));
        };
        let span = self.span_ns();
        let pts: Vec<Point> = self.points.iter().copied().collect();
        let have_prior = self.prior_skew.is_some() || self.prior_line.is_some();
        let trusted = span >= TRUSTED_SPAN_NS;
        if span >= MIN_HULL_SPAN_NS {
            let hull = lower_hull(&pts);
            // The hull at the middle of the window, where it is best supported.
            let (anchor, edge_skew) = hull_middle(&hull, first.x + span / 2)?;
            // The skew over a long baseline from an anchor of an earlier window.
            let baseline = ANCHOR_BASELINE_FACTOR * self.window_ns;
            let long_skew = self
                .anchors
                .iter()
                .rev()
                .find(|a| a.x <= anchor.x - baseline)
                .filter(|_| trusted && !self.step_pending)
                .map(|old| {
                    let dx = anchor.x - old.x;
                    Baseline {
                        skew: ((anchor.y - old.y) - dx) as f64 / dx as f64,
                        centre: old.x + dx / 2,
                        across_reset: old.x < self.segment_start,
                    }
                });
            let own_slope = match self.prior_skew {
                Some(_) => {
                    trusted
                        && (long_skew.is_some()
                            || span as f64 >= PRIOR_SPAN_SHARE * self.prior_span as f64)
                }
                None => trusted || !have_prior,
            };
            if own_slope {
                // The long-baseline skew holds at its baseline's centre.
                let skew = match long_skew {
                    Some(b) => b.skew + drift * (anchor.x - b.centre) as f64,
                    None => edge_skew,
                };
                if skew.abs() <= self.max_skew {
                    let line = DriftingLine {
                        anchor,
                        skew,
                        drift,
                        horizon_ns: self.history.span_ns(),
                    };
                    return Some(fit(line, trusted, Some(anchor), long_skew));
                }
                let clamped = skew.clamp(-self.max_skew, self.max_skew);
                return support_below(&hull, clamped)
                    .map(|l| fit(DriftingLine::constant(l), trusted, Some(anchor), None));
            }
        }
        // Short window: the known skew (where the line is used: between
        // the window's middle and its newest point), and the lowest of this
        // window's support line and the line from before the last soft reset.
        let trusted = self.prior_skew.is_some();
        let newest = pts[pts.len() - 1].x;
        let middle = first.x + span / 2;
        let at = middle + (newest - middle) / 2;
        let skew = match (self.prior_skew, self.prior_line) {
            (Some((skew, x)), _) => skew + drift * (at - x) as f64,
            (None, Some(prior)) => prior.skew_at(at),
            (None, None) => 0.0,
        };
        let support = support_below(&pts, skew)?;
        let own = DriftingLine {
            anchor: Point {
                x: support.x0,
                y: support.y0,
            },
            skew: skew + drift * (support.x0 - at) as f64,
            drift,
            horizon_ns: self.history.span_ns(),
        };
        match self.prior_line {
            Some(prior) if prior.eval(newest) < own.eval(newest) => {
                Some(fit(prior, trusted, None, None))
            }
            _ => Some(fit(own, trusted, None, None)),
        }
    }
}

/// The passive-only lower-envelope estimator (`envelope`). Active samples
/// only add their answer times as upper bounds.
#[derive(Debug, Clone)]
pub struct EnvelopeEstimator {
    envelope: LowerEnvelope,
}

impl EnvelopeEstimator {
    /// A window of `window_ns` sensor nanoseconds, skew limited to `±max_skew`.
    pub fn new(window_ns: i64, max_skew: f64) -> Self {
        EnvelopeEstimator {
            envelope: LowerEnvelope::new(window_ns, max_skew),
        }
    }

    /// The current line, if any.
    pub fn line(&mut self) -> Option<Line> {
        self.envelope.fit().map(|(l, _)| l)
    }
}

impl Estimator for EnvelopeEstimator {
    fn name(&self) -> &'static str {
        "envelope"
    }

    fn add_passive(&mut self, sample: PassiveSample) {
        self.envelope.insert(Point {
            x: sample.sensor_ns,
            y: sample.ros_ns,
        });
    }

    fn add_active(&mut self, sample: ActiveSample) {
        self.envelope.insert(Point {
            x: sample.sensor_ns,
            y: sample.after_ns,
        });
    }

    fn reset_passive(&mut self) {
        self.envelope.clear();
    }

    fn reset(&mut self) {
        self.envelope.clear_all();
    }

    fn convert(&mut self, sensor_ns: i64) -> Option<i64> {
        self.line().map(|l| l.eval(sensor_ns))
    }
}
