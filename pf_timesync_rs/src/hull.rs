//! Convex hulls and supporting lines of (sensor, ROS) points in integer
//! nanoseconds (exact orientation tests in 128-bit arithmetic).

/// A point: sensor time `x` and ROS time `y`, both in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// Sensor time, nanoseconds.
    pub x: i64,
    /// ROS time, nanoseconds.
    pub y: i64,
}

/// A line `y = y0 + (1 + skew)(x - x0)` from sensor to ROS time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Sensor time of the anchor point.
    pub x0: i64,
    /// ROS time at the anchor point.
    pub y0: i64,
    /// Rate of ROS time over sensor time, minus one (0.00001 = 10 ppm).
    pub skew: f64,
}

impl Line {
    /// ROS time at sensor time `x` (rounded to the nanosecond, saturating).
    pub fn eval(&self, x: i64) -> i64 {
        let dx = x.saturating_sub(self.x0);
        self.y0
            .saturating_add(dx)
            .saturating_add((self.skew * dx as f64).round() as i64)
    }
}

/// Twice the signed area of the triangle `o a b` (positive: counter-clockwise).
fn cross(o: Point, a: Point, b: Point) -> i128 {
    let (ax, ay) = (i128::from(a.x - o.x), i128::from(a.y - o.y));
    let (bx, by) = (i128::from(b.x - o.x), i128::from(b.y - o.y));
    ax * by - ay * bx
}

/// The lower convex hull of `points` (any order), left to right. Of points
/// with equal `x` only the lowest counts.
pub fn lower_hull(points: &[Point]) -> Vec<Point> {
    let mut sorted = points.to_vec();
    sorted.sort_unstable_by_key(|p| (p.x, p.y));
    let mut hull: Vec<Point> = Vec::with_capacity(sorted.len().min(64));
    for p in sorted {
        if hull.last().is_some_and(|l| l.x == p.x) {
            continue;
        }
        while hull.len() >= 2 && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0 {
            hull.pop();
        }
        hull.push(p);
    }
    hull
}

/// The upper convex hull of `points` (any order), left to right. Of points
/// with equal `x` only the highest counts.
pub fn upper_hull(points: &[Point]) -> Vec<Point> {
    let mirrored: Vec<Point> = points.iter().map(|p| Point { x: p.x, y: -p.y }).collect();
    lower_hull(&mirrored)
        .into_iter()
        .map(|p| Point { x: p.x, y: -p.y })
        .collect()
}

/// Vertical offset of `p` from the line of slope `1 + skew` through `reference`.
pub(crate) fn offset_from(reference: Point, skew: f64, p: Point) -> f64 {
    let dx = p.x - reference.x;
    ((p.y - reference.y) - dx) as f64 - skew * dx as f64
}

/// The highest line of slope `1 + skew` at or below every point; `None` for no points.
pub fn support_below(points: &[Point], skew: f64) -> Option<Line> {
    let reference = *points.first()?;
    let best = points.iter().copied().min_by(|a, b| {
        offset_from(reference, skew, *a).total_cmp(&offset_from(reference, skew, *b))
    })?;
    Some(Line {
        x0: best.x,
        y0: best.y,
        skew,
    })
}

/// The lowest line of slope `1 + skew` at or above every point; `None` for no points.
pub fn support_above(points: &[Point], skew: f64) -> Option<Line> {
    let reference = *points.first()?;
    let best = points.iter().copied().max_by(|a, b| {
        offset_from(reference, skew, *a).total_cmp(&offset_from(reference, skew, *b))
    })?;
    Some(Line {
        x0: best.x,
        y0: best.y,
        skew,
    })
}

/// The edge of a lower hull (left to right) spanning `x`: its slope minus
/// one and its left vertex. `None` if the hull has fewer than two vertices.
pub fn edge_at(hull: &[Point], x: i64) -> Option<(f64, Point)> {
    if hull.len() < 2 {
        return None;
    }
    let i = hull
        .windows(2)
        .position(|w| w[1].x >= x)
        .unwrap_or(hull.len() - 2);
    let (a, b) = (hull[i], hull[i + 1]);
    let dx = b.x - a.x;
    let skew = ((b.y - a.y) - dx) as f64 / dx as f64;
    Some((skew, a))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: i64, y: i64) -> Point {
        Point { x, y }
    }

    #[test]
    fn hulls() {
        let pts = [
            p(0, 5),
            p(1, 1),
            p(2, 4),
            p(3, 0),
            p(4, 6),
            p(2, 9),
            p(3, 7),
        ];
        assert_eq!(lower_hull(&pts), vec![p(0, 5), p(1, 1), p(3, 0), p(4, 6)]);
        assert_eq!(upper_hull(&pts), vec![p(0, 5), p(2, 9), p(4, 6)]);
        // Collinear points are dropped, equal x keeps the lowest.
        assert_eq!(
            lower_hull(&[p(0, 0), p(1, 1), p(2, 2), p(2, 5)]),
            vec![p(0, 0), p(2, 2)]
        );
        assert!(lower_hull(&[]).is_empty());
    }

    #[test]
    fn supports_and_edges() {
        let pts = [p(0, 10), p(10, 12), p(20, 30)];
        // Slope 1: offsets 10, 2, 10 -> through (10, 12).
        let below = support_below(&pts, 0.0).unwrap();
        assert_eq!((below.x0, below.y0), (10, 12));
        assert_eq!(below.eval(20), 22);
        let above = support_above(&pts, 0.0).unwrap();
        assert_eq!(above.eval(0), 10);
        let hull = lower_hull(&pts);
        let (skew, left) = edge_at(&hull, 15).unwrap();
        assert_eq!(left, p(10, 12));
        assert!((skew - 0.8).abs() < 1e-12);
        let (skew, left) = edge_at(&hull, 5).unwrap();
        assert_eq!(left, p(0, 10));
        assert!((skew + 0.8).abs() < 1e-12);
        assert!(edge_at(&hull[..1], 0).is_none());
        assert!(support_below(&[], 0.0).is_none());
        // Large absolute values stay exact.
        let big = Line {
            x0: 1_700_000_000_000_000_000,
            y0: 1_800_000_000_000_000_000,
            skew: 50e-6,
        };
        assert_eq!(
            big.eval(1_700_000_010_000_000_000),
            1_800_000_010_000_500_000
        );
    }
}
