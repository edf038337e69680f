//! Human-readable times and sizes as `ros2 bag info` prints them (times in UTC).

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `(year, month 1-12, day)` of a day count since 1970-01-01 (proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// `Nov 21 2026 18:32:25.123456789 (1763749945.123456789)`.
pub fn timestamp(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000);
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    let tod = secs.rem_euclid(86_400);
    format!(
        "{} {day:02} {year} {:02}:{:02}:{:02}.{frac:09} ({secs}.{frac:09})",
        MONTHS[(month - 1) as usize],
        tod / 3600,
        tod % 3600 / 60,
        tod % 60
    )
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
        assert_eq!(timestamp(0), "Jan 01 1970 00:00:00.000000000 (0.000000000)");
        assert_eq!(
            timestamp(1_763_749_945_123_456_789),
            "Nov 21 2025 18:32:25.123456789 (1763749945.123456789)"
        );
        assert_eq!(
            timestamp(951_782_400_000_000_000),
            "Feb 29 2000 00:00:00.000000000 (951782400.000000000)"
        );
        assert_eq!(duration(12_000_000_001), "12.000000001s");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1536), "1.5 KiB");
    }
}
