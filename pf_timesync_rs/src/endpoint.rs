//! Where a one-sided sample set ends: the largest of a few values plus the
//! expected gap to the true limit, from the spacings of the largest values.
//!
//! The largest of n draws of a delay-bounded quantity falls short of its
//! limit by about one spacing of the top order statistics (for a density
//! that is locally flat near the limit the spacings are i.i.d. exponential,
//! and the shortfall has the same mean). The mean of the top `k − 1`
//! spacings estimates it; with many tight samples it is tiny, with a few
//! loose ones it is large, which makes it a measure of how tight the set is.

/// The estimated limit of a set of lower bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Endpoint {
    /// The largest value.
    pub max: i64,
    /// Estimated distance from the largest value to the limit (≥ 0).
    pub shortfall: f64,
}

impl Endpoint {
    /// The estimated limit: `max + shortfall`.
    pub fn limit(&self) -> f64 {
        self.max as f64 + self.shortfall
    }
}

/// The endpoint of the upper end of `values` from their `k` largest
/// (`k ≥ 2`); `None` with fewer than `k` values.
pub fn upper_endpoint(values: impl IntoIterator<Item = i64>, k: usize) -> Option<Endpoint> {
    let k = k.max(2);
    // The k largest, descending (k is small: insertion into a short list).
    let mut top: Vec<i64> = Vec::with_capacity(k + 1);
    for v in values {
        if top.len() == k && v <= top[k - 1] {
            continue;
        }
        let pos = top.partition_point(|&t| t >= v);
        top.insert(pos, v);
        top.truncate(k);
    }
    if top.len() < k {
        return None;
    }
    Some(Endpoint {
        max: top[0],
        shortfall: (top[0] - top[k - 1]) as f64 / (k - 1) as f64,
    })
}

/// The endpoint of the lower end of `values` (mirrored): `max` is the
/// negated minimum, so the limit is `-limit()`.
pub fn lower_endpoint(values: impl IntoIterator<Item = i64>, k: usize) -> Option<Endpoint> {
    upper_endpoint(values.into_iter().map(|v| -v), k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = upper_endpoint([1, 9, 3, 7, 5, 8], 3).unwrap();
        assert_eq!(e.max, 9);
        assert!((e.shortfall - 1.0).abs() < 1e-12);
        assert!((e.limit() - 10.0).abs() < 1e-12);
        assert!(upper_endpoint([1, 2], 3).is_none());
        let e = lower_endpoint([10, 12, 30, 16], 3).unwrap();
        assert_eq!(e.max, -10);
        assert!((e.limit() + 7.0).abs() < 1e-12);
        // Ties: no shortfall.
        assert_eq!(upper_endpoint([4, 4, 4], 3).unwrap().shortfall, 0.0);
    }
}
