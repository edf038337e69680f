//! Exact scaling of nanosecond intervals by a floating-point playback rate.
//!
//! A finite positive `f64` is exactly `mantissa * 2^exp`, so `rate * d` and
//! `d / rate` can be computed exactly in 128-bit integers. This keeps the
//! ROS/steady mapping exact even near 2^63 ns (rosbag2 multiplies by a
//! `double` and loses precision above 2^53 ns).

use crate::ClockError;

/// A playback rate: finite and above zero (pausing, not a zero rate, stops time). Checked once
/// where it is given (`--rate`, the `play.rate` parameter, a `SetRate` request, a key), then
/// passed on as it is.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct PlaybackRate(f64);

impl PlaybackRate {
    /// Real time, the default.
    pub const REAL_TIME: Self = Self(1.0);

    /// `rate` if it is finite and above zero, else [`ClockError::InvalidRate`].
    pub fn new(rate: f64) -> Result<Self, ClockError> {
        match rate.is_finite() && rate > 0.0 {
            true => Ok(Self(rate)),
            false => Err(ClockError::InvalidRate(rate)),
        }
    }

    /// The rate.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Default for PlaybackRate {
    fn default() -> Self {
        Self::REAL_TIME
    }
}

impl std::fmt::Display for PlaybackRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for PlaybackRate {
    type Err = ClockError;

    /// Parses a number and checks it (`--rate 2`, `-p play.rate:=2.0`).
    fn from_str(text: &str) -> Result<Self, ClockError> {
        let rate = text
            .trim()
            .parse()
            .map_err(|_| ClockError::NotARate(text.to_string()))?;
        Self::new(rate)
    }
}

impl TryFrom<f64> for PlaybackRate {
    type Error = ClockError;
    fn try_from(rate: f64) -> Result<Self, ClockError> {
        Self::new(rate)
    }
}

/// A playback rate with its exact binary decomposition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RateScale {
    rate: f64,
    mantissa: i128,
    exp: i32,
}

impl RateScale {
    /// The decomposition of `rate`.
    pub(crate) fn new(rate: PlaybackRate) -> Self {
        let rate = rate.get();
        let bits = rate.to_bits();
        let exp_bits = ((bits >> 52) & 0x7ff) as i32;
        let frac = (bits & ((1u64 << 52) - 1)) as i128;
        let (mut mantissa, mut exp) = if exp_bits == 0 {
            (frac, -1074)
        } else {
            (frac | (1i128 << 52), exp_bits - 1075)
        };
        let tz = mantissa.trailing_zeros();
        mantissa >>= tz;
        exp += tz as i32;
        RateScale {
            rate,
            mantissa,
            exp,
        }
    }

    /// The rate as given.
    pub(crate) fn rate(&self) -> f64 {
        self.rate
    }

    /// `floor(rate * d)`, saturating to `i64`.
    pub(crate) fn scale_floor(&self, d: i64) -> i64 {
        let p = self.mantissa * d as i128; // < 2^53 * 2^63: fits
        let r = if self.exp >= 0 {
            shl_saturating(p, self.exp as u32)
        } else {
            shr_floor(p, (-self.exp) as u32)
        };
        saturate_i64(r)
    }

    /// `ceil(d / rate)`, saturating to `i64`: the smallest `s` with
    /// `scale_floor(s) >= d` (when representable).
    pub(crate) fn unscale_ceil(&self, d: i64) -> i64 {
        if self.exp >= 0 {
            let e = self.exp as u32;
            if e > 60 {
                // rate >= 2^60: any |d| < 2^63 maps to at most one nanosecond.
                return i64::from(d > 0);
            }
            let denom = self.mantissa << e; // < 2^53 * 2^60
            saturate_i64(ceil_div(d as i128, denom))
        } else {
            let num = shl_saturating(d as i128, (-self.exp) as u32);
            saturate_i64(ceil_div(num, self.mantissa))
        }
    }
}

fn shl_saturating(x: i128, s: u32) -> i128 {
    if x == 0 {
        return 0;
    }
    let lz = if x > 0 {
        x.leading_zeros()
    } else {
        (!x).leading_zeros()
    };
    if s + 1 >= lz {
        if x > 0 {
            i128::MAX
        } else {
            i128::MIN
        }
    } else {
        x << s
    }
}

fn shr_floor(x: i128, s: u32) -> i128 {
    if s >= 127 {
        if x < 0 {
            -1
        } else {
            0
        }
    } else {
        x >> s
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    let q = a.div_euclid(b);
    if a.rem_euclid(b) != 0 {
        q.saturating_add(1)
    } else {
        q
    }
}

fn saturate_i64(x: i128) -> i64 {
    x.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_invalid() {
        for r in [0.0, -1.0, f64::NAN, f64::INFINITY, -0.0] {
            assert!(PlaybackRate::new(r).is_err(), "{r}");
        }
    }

    #[test]
    fn exact_at_large_values() {
        let one = RateScale::new(PlaybackRate::new(1.0).unwrap());
        assert_eq!(one.scale_floor(1 << 61), 1 << 61);
        assert_eq!(one.scale_floor((1 << 61) + 1), (1 << 61) + 1);
        assert_eq!(one.scale_floor(i64::MAX), i64::MAX);
        let r = RateScale::new(PlaybackRate::new(2.5).unwrap());
        assert_eq!(r.scale_floor(3_000_000_000), 7_500_000_000);
        assert_eq!(r.scale_floor(i64::MAX), i64::MAX);
        assert_eq!(r.scale_floor(i64::MIN), i64::MIN);
        assert_eq!(r.scale_floor(-1), -3);
        assert_eq!(r.unscale_ceil(7_500_000_001), 3_000_000_001);
        let tiny = RateScale::new(PlaybackRate::new(f64::MIN_POSITIVE / 4.0).unwrap());
        assert_eq!(tiny.scale_floor(i64::MAX), 0);
        assert_eq!(tiny.unscale_ceil(1), i64::MAX);
        let huge = RateScale::new(PlaybackRate::new(f64::MAX).unwrap());
        assert_eq!(huge.scale_floor(1), i64::MAX);
        assert_eq!(huge.unscale_ceil(5), 1);
        assert_eq!(huge.unscale_ceil(-5), 0);
    }

    proptest! {
        #[test]
        fn unscale_is_minimal_preimage(rate in 1e-3f64..1e3, d in -(1i64 << 50)..(1i64 << 50)) {
            let r = RateScale::new(PlaybackRate::new(rate).unwrap());
            let s = r.unscale_ceil(d);
            prop_assert!(r.scale_floor(s) >= d);
            prop_assert!(r.scale_floor(s - 1) < d);
        }

        #[test]
        fn scale_is_monotonic(rate in 1e-3f64..1e3, a in any::<i64>(), b in any::<i64>()) {
            let r = RateScale::new(PlaybackRate::new(rate).unwrap());
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(r.scale_floor(lo) <= r.scale_floor(hi));
        }
    }
}
