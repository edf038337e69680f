//! The time arguments shared by several verbs: `--start`/`--end` as epoch seconds or `+S` after
//! the bag start.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// The bag start (ns) when a `+S` time needs it, else 0.
pub fn relative_base(bags: &[PathBuf], times: [&Option<String>; 2]) -> Result<i64> {
    Ok(
        if times
            .iter()
            .any(|t| t.as_deref().is_some_and(|s| s.starts_with('+')))
        {
            rosbag2_rs_storage::SequentialReader::open_many(bags)?.start_time()
        } else {
            0
        },
    )
}

/// Parses `--start`/`--end`: absolute epoch seconds, or `+S` relative to `bag_start` (ns).
pub fn parse_time(text: &str, bag_start: i64) -> Result<i64> {
    let (relative, number) = match text.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let ns = match exact_nanos(number) {
        Some(ns) => ns,
        None => {
            let seconds: f64 = number
                .parse()
                .with_context(|| format!("invalid time '{text}': expected seconds"))?;
            anyhow::ensure!(
                seconds.is_finite() && seconds >= 0.0,
                "invalid time '{text}': must be a non-negative number of seconds"
            );
            rosbag2_rs_tools::flags::seconds(seconds, "time")?.as_nanos()
        }
    };
    Ok(if relative {
        bag_start.saturating_add(ns)
    } else {
        ns
    })
}

/// Decimal seconds (`1764271584.123456789`) as exact nanoseconds (an `f64` keeps only about
/// 16 digits: epoch times would move by up to a few hundred ns); `None` for any other form
/// (exponents, signs) or beyond 9 decimals or `i64`.
fn exact_nanos(number: &str) -> Option<i64> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 9 {
        return None;
    }
    let fraction: i64 = format!("{fraction:0<9}").parse().ok()?;
    whole
        .parse::<i64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(fraction)
}

/// `--start` and `--end` of `bags` in ns (`+S` relative to the bags' start).
pub fn time_range(
    bags: &[PathBuf],
    start: &Option<String>,
    end: &Option<String>,
) -> Result<(Option<i64>, Option<i64>)> {
    let bag_start = relative_base(bags, [start, end])?;
    let time = |t: &Option<String>| t.as_deref().map(|s| parse_time(s, bag_start)).transpose();
    Ok((time(start)?, time(end)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_absolute_and_relative() {
        assert_eq!(parse_time("1.5", 100).unwrap(), 1_500_000_000);
        assert_eq!(parse_time("+2", 100).unwrap(), 2_000_000_100);
        assert!(parse_time("-1", 0).is_err());
        assert!(parse_time("soon", 0).is_err());
        assert!(parse_time("nan", 0).is_err());
        // Epoch times to the nanosecond (an f64 would give ...123456768).
        assert_eq!(
            parse_time("1764271584.123456789", 0).unwrap(),
            1_764_271_584_123_456_789
        );
        assert_eq!(parse_time("+0.000000001", 5).unwrap(), 6);
        assert_eq!(parse_time("2.", 0).unwrap(), 2_000_000_000);
        assert_eq!(parse_time("1e3", 0).unwrap(), 1_000_000_000_000);
        assert!(parse_time(".5", 0).unwrap() == 500_000_000);
    }
}
