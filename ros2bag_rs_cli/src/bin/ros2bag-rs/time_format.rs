//! Human-readable times and sizes as `ros2 bag info` prints them (times in local time, as
//! rosbag2 does, or in UTC).

use chrono::{DateTime, Local, Utc};

/// `Nov 21 2026 18:32:25.123456789 (1763749945.123456789)`, in local time or UTC (the day is
/// space-padded, as rosbag2's `%e`).
pub fn timestamp(ns: i64, utc: bool) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000);
    const FORMAT: &str = "%b %e %Y %H:%M:%S";
    let text = match DateTime::<Utc>::from_timestamp(secs, 0) {
        Some(t) if utc => t.format(FORMAT).to_string(),
        Some(t) => t.with_timezone(&Local).format(FORMAT).to_string(),
        None => "(out of range)".to_string(),
    };
    format!("{text}.{frac:09} ({secs}.{frac:09})")
}

/// `12.345678901s`.
pub fn duration(ns: i64) -> String {
    format!("{}.{:09}s", ns / 1_000_000_000, (ns % 1_000_000_000).abs())
}

/// `1.5 MiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(
            timestamp(0, true),
            "Jan  1 1970 00:00:00.000000000 (0.000000000)"
        );
        assert_eq!(
            timestamp(1_763_749_945_123_456_789, true),
            "Nov 21 2025 18:32:25.123456789 (1763749945.123456789)"
        );
        assert_eq!(
            timestamp(951_782_400_000_000_000, true),
            "Feb 29 2000 00:00:00.000000000 (951782400.000000000)"
        );
        // Local time keeps the instant: the part in parentheses is the same.
        assert!(timestamp(951_782_400_000_000_000, false).ends_with("(951782400.000000000)"));
        assert_eq!(duration(12_000_000_001), "12.000000001s");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1536), "1.5 KiB");
    }
}
