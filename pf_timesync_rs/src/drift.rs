//! A skew that drifts: the sensor crystal's rate changes slowly (temperature),
//! so a skew measured over a baseline holds at the baseline's centre, not
//! where it is applied.
//!
//! The lower envelope measures its skew between hull points a window apart
//! and applies it from the newer one (the window's middle) to the newest
//! sample, half a window further: the skew used is about a window old. A
//! drift of the skew by `d` per second then puts the newest stamp off by
//! about `3/8 · d · window²` (1.9 µs for 0.05 ppm/s over 10 s), and across
//! a `scan_status` reset, where the learnt skew is kept for several seconds,
//! by several times that. [`SkewHistory`] estimates the drift from the
//! skews measured over the last few windows (least-squares slope of skew
//! over the baselines' centres) and [`DriftingLine`] applies it.

use crate::hull::{Line, Point};
use std::collections::VecDeque;

/// A line from sensor to ROS time whose skew changes linearly with sensor
/// time within `horizon_ns` of its anchor and stays constant beyond:
/// `skew(x) = skew + drift · clamp(x − anchor.x, ±horizon_ns)` (a drift
/// measured over a few windows says nothing about the next hour).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriftingLine {
    /// A point of the line.
    pub anchor: Point,
    /// Skew at the anchor.
    pub skew: f64,
    /// Change of the skew per nanosecond of sensor time.
    pub drift: f64,
    /// How far from the anchor the skew follows the drift, ns.
    pub horizon_ns: i64,
}

impl DriftingLine {
    /// A line of constant skew.
    pub fn constant(line: Line) -> Self {
        DriftingLine {
            anchor: Point {
                x: line.x0,
                y: line.y0,
            },
            skew: line.skew,
            drift: 0.0,
            horizon_ns: 0,
        }
    }

    /// Distance from the anchor to `x`, and the part of it within the
    /// horizon.
    fn spans(&self, x: i64) -> (i64, f64) {
        let dx = x.saturating_sub(self.anchor.x);
        let h = self.horizon_ns.max(0);
        (dx, dx.clamp(-h, h) as f64)
    }

    /// Skew at sensor time `x`.
    pub fn skew_at(&self, x: i64) -> f64 {
        let (_, within) = self.spans(x);
        self.skew + self.drift * within
    }

    /// The part of `eval(x) − anchor.y` beyond the sensor time elapsed
    /// (the integral of the skew from the anchor), unrounded, ns.
    fn gained(&self, x: i64) -> f64 {
        let (dx, within) = self.spans(x);
        self.skew * dx as f64 + self.drift * within * (dx as f64 - 0.5 * within)
    }

    /// ROS time at sensor time `x` (the integral of the drifting rate).
    pub fn eval(&self, x: i64) -> i64 {
        self.anchor
            .y
            .saturating_add(x.saturating_sub(self.anchor.x))
            .saturating_add(self.gained(x).round() as i64)
    }

    /// The straight line through this one at `a` and at `b` (its mean skew
    /// between them); between them it is off by at most
    /// `drift · (b − a)² / 8`.
    pub fn chord(&self, a: i64, b: i64) -> Line {
        let skew = match b.saturating_sub(a) {
            0 => self.skew_at(a),
            dx => (self.gained(b) - self.gained(a)) / dx as f64,
        };
        Line {
            x0: a,
            y0: self.eval(a),
            skew,
        }
    }
}

/// Skews measured over long baselines, by the sensor time of each
/// baseline's centre, over the last `span_ns`; their least-squares slope is
/// the drift.
#[derive(Debug, Clone, Default)]
pub struct SkewHistory {
    span_ns: i64,
    samples: VecDeque<(i64, f64)>,
    drift: f64,
}

impl SkewHistory {
    /// Samples whose centres are within `span_ns` of the newest are kept;
    /// a drift is reported once they cover at least half of it.
    pub fn new(span_ns: i64) -> Self {
        SkewHistory {
            span_ns: span_ns.max(1),
            samples: VecDeque::new(),
            drift: 0.0,
        }
    }

    /// Add the skew measured over a baseline centred at `centre`.
    pub fn push(&mut self, centre: i64, skew: f64) {
        if self.samples.back().is_some_and(|&(c, _)| centre <= c) {
            return;
        }
        self.samples.push_back((centre, skew));
        while self
            .samples
            .front()
            .is_some_and(|&(c, _)| c < centre - self.span_ns)
        {
            self.samples.pop_front();
        }
        self.drift = self.slope().unwrap_or(0.0);
    }

    /// The span of sensor time the history covers, ns.
    pub fn span_ns(&self) -> i64 {
        self.span_ns
    }

    /// Drop every sample.
    pub fn clear(&mut self) {
        self.samples.clear();
        self.drift = 0.0;
    }

    /// The drift of the skew per nanosecond of sensor time; zero while the
    /// samples cover less than half the history's span.
    pub fn drift(&self) -> f64 {
        self.drift
    }

    fn slope(&self) -> Option<f64> {
        let (&(first, _), &(last, _)) = (self.samples.front()?, self.samples.back()?);
        if 2 * (last - first) < self.span_ns {
            return None;
        }
        let n = self.samples.len() as f64;
        let mean_x = self
            .samples
            .iter()
            .map(|&(c, _)| (c - first) as f64)
            .sum::<f64>()
            / n;
        let mean_s = self.samples.iter().map(|&(_, s)| s).sum::<f64>() / n;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for &(c, s) in &self.samples {
            let dx = (c - first) as f64 - mean_x;
            sxy += dx * (s - mean_s);
            sxx += dx * dx;
        }
        (sxx > 0.0).then(|| sxy / sxx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drifting_line_integrates_the_rate() {
        let l = DriftingLine {
            anchor: Point { x: 0, y: 1_000 },
            skew: 10e-6,
            drift: 1e-6 / 1e9, // 1 ppm per second
            horizon_ns: 20_000_000_000,
        };
        // Over 10 s: 10 s + 10 ppm · 10 s + ½ · 1 ppm/s · (10 s)².
        assert_eq!(
            l.eval(10_000_000_000),
            1_000 + 10_000_000_000 + 100_000 + 50_000
        );
        assert!((l.skew_at(10_000_000_000) - 20e-6).abs() < 1e-12);
        let c = l.chord(0, 10_000_000_000);
        assert_eq!(c.eval(0), l.eval(0));
        assert_eq!(c.eval(10_000_000_000), l.eval(10_000_000_000));
        // Beyond the horizon (20 s) the skew stays at 30 ppm (−10 ppm
        // before it): 10 ppm · 30 s ± ½ · 1 ppm/s · (20 s)² ± 20 ppm · 10 s.
        assert!((l.skew_at(30_000_000_000) - 30e-6).abs() < 1e-12);
        assert!((l.skew_at(-30_000_000_000) + 10e-6).abs() < 1e-12);
        assert_eq!(
            l.eval(30_000_000_000),
            1_000 + 30_000_000_000 + 300_000 + 200_000 + 200_000
        );
        assert_eq!(
            l.eval(-30_000_000_000),
            1_000 - 30_000_000_000 - 300_000 + 200_000 + 200_000
        );
    }

    #[test]
    fn history_fits_the_slope_once_it_spans_half() {
        let mut h = SkewHistory::new(20_000_000_000);
        for k in 0..50 {
            // 0.05 ppm/s, one sample every 100 ms.
            let c = k * 100_000_000;
            h.push(c, 5e-6 + 0.05e-6 * c as f64 / 1e9);
        }
        assert_eq!(h.drift(), 0.0, "4.9 s of 20 s");
        for k in 50..300 {
            let c = k * 100_000_000;
            h.push(c, 5e-6 + 0.05e-6 * c as f64 / 1e9);
        }
        assert!((h.drift() * 1e9 - 0.05e-6).abs() < 1e-12);
        h.clear();
        assert_eq!(h.drift(), 0.0);
    }
}
