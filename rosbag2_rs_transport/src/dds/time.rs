//! RTPS timestamps (32.32 fixed point seconds) to and from nanoseconds since the epoch.

use rustdds::Timestamp;

/// Nanoseconds since the epoch of an RTPS timestamp.
pub fn to_nanos(t: Timestamp) -> i64 {
    let ticks = t.to_ticks();
    let secs = (ticks >> 32) as i64;
    let frac = ((ticks & 0xffff_ffff) * 1_000_000_000) >> 32;
    secs * 1_000_000_000 + frac as i64
}

/// The RTPS timestamp of nanoseconds since the epoch (clamped to what RTPS can hold).
pub fn from_nanos(ns: i64) -> Timestamp {
    let ns = ns.max(0) as u64;
    let secs = (ns / 1_000_000_000).min(u32::MAX as u64 - 1);
    let frac = ((ns % 1_000_000_000) << 32) / 1_000_000_000;
    Timestamp::from_ticks((secs << 32) | frac)
}

/// Now, in nanoseconds since the epoch.
pub fn now_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip_within_a_nanosecond() {
        for ns in [0i64, 1, 999_999_999, 1_700_000_000_123_456_789] {
            assert!(
                (super::to_nanos(super::from_nanos(ns)) - ns).abs() <= 1,
                "{ns}"
            );
        }
    }
}
