//! Bound-intersection estimation with active samples (TICSync-style
//! maximum-separation line).
//!
//! Every passive sample and every answer time is an upper bound of the true
//! ROS time of its sensor time; every request time is a lower bound. The
//! true line runs between the lower hull of the upper bounds and the upper
//! hull of the lower bounds. The estimate is the line that keeps the largest
//! vertical separation from both sets, i.e. the middle of the feasible band:
//! its error is at most half the band's width, whatever the delays were.
//! With passive samples covering a trusted span, their lower envelope gives
//! the slope (it is far denser than the requests) and the bounds give the
//! offset; without, the slope maximising the separation is searched within
//! the skew limit. Long requests give loose bounds and are simply not
//! binding: no threshold needed.
//!
//! [`BoundsEstimator::requests_only`] leaves the passive samples out: the
//! plain TICSync estimator over the request brackets (`max-separation`, the
//! benchmark's reference).

use crate::envelope::{LowerEnvelope, MIN_HULL_SPAN_NS};
use crate::estimator::Estimator;
use crate::hull::{lower_hull, offset_from, support_above, support_below, upper_hull, Line, Point};
use crate::sample::{ActiveSample, PassiveSample};
use std::collections::VecDeque;

/// Where in the fastest round trip the scanner is assumed to read its
/// clock: the middle, so equal minimum delays of the two legs give no bias.
pub const DEFAULT_READ_POSITION: f64 = 0.5;
/// `read_position` within 0..=1 ([`DEFAULT_READ_POSITION`] for NaN).
pub(crate) fn clamp_read_position(read_position: f64) -> f64 {
    if read_position.is_nan() {
        DEFAULT_READ_POSITION
    } else {
        read_position.clamp(0.0, 1.0)
    }
}

/// The `bounds` estimator: passive lower envelope plus active brackets
/// (or, [`requests_only`](Self::requests_only), the brackets alone).
#[derive(Debug, Clone)]
pub struct BoundsEstimator {
    window_ns: i64,
    requests_only: bool,
    read_position: Option<f64>,
    max_skew: f64,
    passive: LowerEnvelope,
    active: VecDeque<ActiveSample>,
    newest_x: Option<i64>,
    cached: Option<Option<Line>>,
}

/// The feasible band at one skew: offsets of the lowest upper bound and the
/// highest lower bound relative to `reference`.
fn band(reference: Point, skew: f64, upper: &[Point], lower: &[Point]) -> (f64, f64) {
    let top = upper
        .iter()
        .map(|p| offset_from(reference, skew, *p))
        .fold(f64::INFINITY, f64::min);
    let bottom = lower
        .iter()
        .map(|p| offset_from(reference, skew, *p))
        .fold(f64::NEG_INFINITY, f64::max);
    (top, bottom)
}

impl BoundsEstimator {
    /// A window of `window_ns` sensor nanoseconds, skew limited to `±max_skew`.
    pub fn new(window_ns: i64, max_skew: f64) -> Self {
        BoundsEstimator {
            window_ns,
            requests_only: false,
            read_position: None,
            max_skew: max_skew.abs(),
            passive: LowerEnvelope::new(window_ns, max_skew),
            active: VecDeque::new(),
            newest_x: None,
            cached: None,
        }
    }

    /// The request brackets alone over a window of `window_ns`: passive
    /// samples are ignored, the skew is the maximum-separation one (TICSync).
    pub fn requests_only(window_ns: i64, max_skew: f64) -> Self {
        BoundsEstimator {
            requests_only: true,
            ..BoundsEstimator::new(window_ns, max_skew)
        }
    }

    /// With requests, the line at `read_position` (clamped to 0..=1, NaN:
    /// the middle) between the request times' and the answer times' edges
    /// (the brackets alone, as
    /// [`BracketsEstimator::with_read_position`](crate::brackets::BracketsEstimator::with_read_position)),
    /// clamped into the hard band, instead of the band's middle (which
    /// assumes the request leg's minimum delay equals the packets' one when
    /// the passive samples bound the band).
    pub fn with_read_position(mut self, read_position: f64) -> Self {
        self.read_position = Some(clamp_read_position(read_position));
        self.cached = None;
        self
    }

    /// The current line, if any.
    pub fn line(&mut self) -> Option<Line> {
        if let Some(c) = self.cached {
            return c;
        }
        let line = self.compute();
        self.cached = Some(line);
        line
    }

    /// The lower envelope of the passive samples: its line and whether its
    /// skew is trusted (see [`LowerEnvelope::fit`]).
    pub fn envelope_fit(&mut self) -> Option<(Line, bool)> {
        self.passive.fit()
    }

    /// The step of the passive floor across the last soft reset, once
    /// measured (see [`LowerEnvelope::take_step`]).
    pub fn take_floor_step(&mut self) -> Option<i64> {
        self.passive.take_step()
    }

    /// The hard limits at `skew`: the highest line of that slope at or
    /// below every upper bound (passive samples and answer times of the
    /// window) and the lowest one at or above every lower bound (request
    /// times); `None` for a side without bounds.
    pub fn limits(&self, skew: f64) -> (Option<Line>, Option<Line>) {
        let (upper, lower) = self.bounds();
        (support_below(&upper, skew), support_above(&lower, skew))
    }

    /// Width of the feasible band (ns) at the current line's skew, when
    /// active samples exist: twice the worst-case error of the estimate.
    pub fn band_width(&mut self) -> Option<f64> {
        let line = self.line()?;
        let (upper, lower) = self.bounds();
        if lower.is_empty() {
            return None;
        }
        let reference = upper[0];
        let (top, bottom) = band(reference, line.skew, &upper, &lower);
        Some(top - bottom)
    }

    fn bounds(&self) -> (Vec<Point>, Vec<Point>) {
        let mut upper: Vec<Point> = self.passive.points().iter().copied().collect();
        upper.extend(self.active.iter().map(|a| Point {
            x: a.sensor_ns,
            y: a.after_ns,
        }));
        let lower = self
            .active
            .iter()
            .map(|a| Point {
                x: a.sensor_ns,
                y: a.before_ns,
            })
            .collect();
        (upper, lower)
    }

    fn compute(&mut self) -> Option<Line> {
        let envelope = self.passive.fit();
        if self.active.is_empty() {
            return envelope.map(|(l, _)| l);
        }
        let (upper, lower) = self.bounds();
        let upper = lower_hull(&upper);
        let lower = upper_hull(&lower);
        let reference = upper[0];
        let skew = match envelope {
            Some((line, true)) => line.skew,
            _ => {
                let min_x = upper[0].x.min(lower[0].x);
                let max_x = upper[upper.len() - 1].x.max(lower[lower.len() - 1].x);
                if max_x - min_x >= MIN_HULL_SPAN_NS {
                    self.max_separation_skew(reference, &upper, &lower)
                } else {
                    self.passive.prior_skew().unwrap_or(0.0)
                }
            }
        };
        let (top, bottom) = band(reference, skew, &upper, &lower);
        let mid = if let Some(p) = self.read_position {
            let answers: Vec<Point> = self
                .active
                .iter()
                .map(|a| Point {
                    x: a.sensor_ns,
                    y: a.after_ns,
                })
                .collect();
            let (top_answers, _) = band(reference, skew, &answers, &[]);
            (bottom + p * (top_answers - bottom)).clamp(bottom, top.max(bottom))
        } else if top.is_finite() && bottom.is_finite() {
            0.5 * (top + bottom)
        } else if top.is_finite() {
            top
        } else {
            bottom
        };
        Some(Line {
            x0: reference.x,
            y0: reference.y.saturating_add(mid.round() as i64),
            skew,
        })
    }

    /// Golden-section search of the skew maximising the band width (a
    /// concave function of the skew).
    fn max_separation_skew(&self, reference: Point, upper: &[Point], lower: &[Point]) -> f64 {
        let width = |s: f64| {
            let (t, b) = band(reference, s, upper, lower);
            t - b
        };
        let phi = 0.5 * (5f64.sqrt() - 1.0);
        let (mut a, mut b) = (-self.max_skew, self.max_skew);
        let mut c = b - phi * (b - a);
        let mut d = a + phi * (b - a);
        let (mut fc, mut fd) = (width(c), width(d));
        for _ in 0..80 {
            if fc > fd {
                b = d;
                d = c;
                fd = fc;
                c = b - phi * (b - a);
                fc = width(c);
            } else {
                a = c;
                c = d;
                fc = fd;
                d = a + phi * (b - a);
                fd = width(d);
            }
        }
        0.5 * (a + b)
    }

    fn trim_active(&mut self, x: i64) {
        let newest = self.newest_x.map_or(x, |n| n.max(x));
        self.newest_x = Some(newest);
        {
            while self
                .active
                .front()
                .is_some_and(|a| a.sensor_ns < newest - self.window_ns)
            {
                self.active.pop_front();
            }
        }
    }
}

impl Estimator for BoundsEstimator {
    fn name(&self) -> &'static str {
        if self.requests_only {
            "max-separation"
        } else {
            "bounds"
        }
    }

    fn add_passive(&mut self, sample: PassiveSample) {
        if self.requests_only {
            return;
        }
        self.passive.insert(Point {
            x: sample.sensor_ns,
            y: sample.ros_ns,
        });
        self.trim_active(sample.sensor_ns);
        self.cached = None;
    }

    fn add_active(&mut self, sample: ActiveSample) {
        let pos = self
            .active
            .partition_point(|a| a.sensor_ns <= sample.sensor_ns);
        self.active.insert(pos, sample);
        self.trim_active(sample.sensor_ns);
        self.cached = None;
    }

    fn reset_passive(&mut self) {
        self.passive.clear();
        self.cached = None;
    }

    fn reset(&mut self) {
        self.passive.clear_all();
        self.active.clear();
        self.newest_x = None;
        self.cached = None;
    }

    fn convert(&mut self, sensor_ns: i64) -> Option<i64> {
        self.line().map(|l| l.eval(sensor_ns))
    }
}
