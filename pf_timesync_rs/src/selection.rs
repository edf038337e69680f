//! The estimators selectable by name, and the parameters they are built with. Above the
//! estimators.

use crate::bounds::{BoundsEstimator, DEFAULT_READ_POSITION};
use crate::brackets::BracketsEstimator;
use crate::envelope::EnvelopeEstimator;
use crate::estimator::Estimator;
use crate::pf::PfEstimator;
use crate::TimeSyncError;
use std::fmt;
use std::str::FromStr;

/// The estimators, selectable by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EstimatorKind {
    /// PF driver, averaging (`timesync_regression: false`).
    PfMean,
    /// PF driver, linear regression (`timesync_regression: true`).
    PfRegression,
    /// Lower convex hull of the passive samples over a sliding window.
    Envelope,
    /// Lower envelope for the slope, active request brackets for the offset.
    Bounds,
    /// The request brackets alone: maximum-separation line over a
    /// [`MAX_SEPARATION_WINDOW_MS`] window (TICSync), the reference method.
    MaxSeparation,
    /// Passive floor for the slope, the tightest request brackets relative
    /// to it over an adaptive window for the offset.
    Brackets,
}

/// The known estimator names, comma-separated.
pub const ESTIMATOR_NAMES: &str =
    "pf-mean, pf-regression, envelope, bounds, max-separation, brackets";

impl EstimatorKind {
    /// All estimators, in the order of [`ESTIMATOR_NAMES`].
    pub const ALL: [EstimatorKind; 6] = [
        EstimatorKind::PfMean,
        EstimatorKind::PfRegression,
        EstimatorKind::Envelope,
        EstimatorKind::Bounds,
        EstimatorKind::MaxSeparation,
        EstimatorKind::Brackets,
    ];

    /// The estimator's name.
    pub fn name(self) -> &'static str {
        match self {
            EstimatorKind::PfMean => "pf-mean",
            EstimatorKind::PfRegression => "pf-regression",
            EstimatorKind::Envelope => "envelope",
            EstimatorKind::Bounds => "bounds",
            EstimatorKind::MaxSeparation => "max-separation",
            EstimatorKind::Brackets => "brackets",
        }
    }

    /// A new estimator of this kind.
    pub fn build(self, params: &Params) -> Box<dyn Estimator> {
        let window = params.window_ns();
        let skew = params.max_skew_ppm * 1e-6;
        match self {
            EstimatorKind::PfMean => Box::new(PfEstimator::new(params.period_ms, false)),
            EstimatorKind::PfRegression => Box::new(PfEstimator::new(params.period_ms, true)),
            EstimatorKind::Envelope => Box::new(EnvelopeEstimator::new(window, skew)),
            EstimatorKind::Bounds => Box::new(BoundsEstimator::new(window, skew)),
            EstimatorKind::MaxSeparation => Box::new(BoundsEstimator::requests_only(
                i64::from(MAX_SEPARATION_WINDOW_MS) * 1_000_000,
                skew,
            )),
            EstimatorKind::Brackets => Box::new(
                BracketsEstimator::new(window, skew).with_read_position(params.read_position),
            ),
        }
    }
}

/// `brackets`: with requests unbiased where the scanner reads its clock
/// mid-request, whatever the packets' minimum delay, and never outside the
/// brackets elsewhere; without requests the lower envelope, clamped into the
/// hard band.
impl Default for EstimatorKind {
    fn default() -> Self {
        EstimatorKind::Brackets
    }
}

impl fmt::Display for EstimatorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EstimatorKind {
    type Err = TimeSyncError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EstimatorKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| TimeSyncError::UnknownEstimator {
                name: s.to_string(),
                known: ESTIMATOR_NAMES,
            })
    }
}

/// Window of the envelope, bounds and brackets estimators (the base window
/// of brackets) when `period_ms` is not positive.
pub const DEFAULT_WINDOW_MS: i32 = 10_000;

/// Window of `max-separation`, ms: long enough for tight brackets on a
/// light host, short enough for the skew's wander.
pub const MAX_SEPARATION_WINDOW_MS: i32 = 60_000;

/// Parameters of the estimators and the synchronizer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// The driver's `timesync_period` (ms): the PF methods' window; the
    /// window of the envelope, bounds and brackets estimators when positive.
    pub period_ms: i32,
    /// Physical skew limit of the scanner's clock, in ppm.
    pub max_skew_ppm: f64,
    /// `brackets`: where in the fastest request round trip the scanner
    /// reads its clock, 0 (as the request arrives) to 1 (as the answer
    /// leaves); the default 0.5 ([`DEFAULT_READ_POSITION`]) is unbiased
    /// when both legs' minimum delays are equal and off by at most half the
    /// fastest round trip otherwise.
    pub read_position: f64,
    /// A disagreement of sensor and ROS time advances between consecutive
    /// samples larger than this (ms) is a clock jump: all samples are reset.
    pub jump_tolerance_ms: i64,
    /// A forward ROS clock jump of at least this (ms) resets the samples
    /// (backward jumps and sim-time activation always do).
    pub forward_jump_ms: i64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            period_ms: 10_000,
            max_skew_ppm: 200.0,
            read_position: DEFAULT_READ_POSITION,
            jump_tolerance_ms: 1_000,
            forward_jump_ms: 1_000,
        }
    }
}

impl Params {
    /// Check the ranges.
    pub fn validate(&self) -> Result<(), TimeSyncError> {
        if !(self.max_skew_ppm.is_finite() && self.max_skew_ppm >= 0.0 && self.max_skew_ppm < 1e5) {
            return Err(TimeSyncError::InvalidParameter {
                name: "max_skew_ppm",
                reason: "must be finite, >= 0 and < 100000",
            });
        }
        if !(0.0..=1.0).contains(&self.read_position) {
            return Err(TimeSyncError::InvalidParameter {
                name: "read_position",
                reason: "must be within 0..=1",
            });
        }
        if self.jump_tolerance_ms <= 0 || self.jump_tolerance_ms > 1_000_000_000 {
            return Err(TimeSyncError::InvalidParameter {
                name: "jump_tolerance_ms",
                reason: "must be in 1..=1e9",
            });
        }
        if self.forward_jump_ms <= 0 || self.forward_jump_ms > 1_000_000_000 {
            return Err(TimeSyncError::InvalidParameter {
                name: "forward_jump_ms",
                reason: "must be in 1..=1e9",
            });
        }
        Ok(())
    }

    /// Window of the envelope, bounds and brackets estimators, in nanoseconds.
    pub fn window_ns(&self) -> i64 {
        let ms = if self.period_ms > 0 {
            self.period_ms
        } else {
            DEFAULT_WINDOW_MS
        };
        i64::from(ms) * 1_000_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in EstimatorKind::ALL {
            assert_eq!(k.name().parse::<EstimatorKind>(), Ok(k));
            assert_eq!(k.build(&Params::default()).name(), k.name());
            assert!(ESTIMATOR_NAMES.contains(k.name()));
        }
        assert_eq!(EstimatorKind::default(), EstimatorKind::Brackets);
        let err = "kalman".parse::<EstimatorKind>().unwrap_err();
        assert!(err.to_string().contains("unknown estimator `kalman`"));
    }

    #[test]
    fn params() {
        assert!(Params::default().validate().is_ok());
        let bad = Params {
            max_skew_ppm: f64::NAN,
            ..Params::default()
        };
        assert!(bad.validate().is_err());
        let bad = Params {
            jump_tolerance_ms: 0,
            ..Params::default()
        };
        assert!(bad.validate().is_err());
        for read_position in [-0.1, 1.5, f64::NAN] {
            let bad = Params {
                read_position,
                ..Params::default()
            };
            assert!(bad.validate().is_err(), "{read_position}");
        }
        let p = Params {
            period_ms: 0,
            ..Params::default()
        };
        assert_eq!(p.window_ns(), 10_000_000_000);
    }
}
