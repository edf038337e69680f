//! Messages lost on the way, from the sequence numbers each publisher gives its messages (rmw's
//! `publication_sequence_number`, rmw_zenoh's attachment): a gap between two consecutive ones
//! counts the messages skipped. The GIDs come from the senders: the tracker keeps at most
//! [`MAX_TRACKED_PUBLISHERS`] of them recently seen (two generations, the older dropped when the
//! newer fills), so that a peer inventing GIDs cannot grow it.

use std::collections::HashMap;

/// The most publisher GIDs a subscription's loss tracker keeps (in each of its two
/// generations): a publisher not heard from while this many others were is forgotten, and its
/// next sample counts as its first (a gap across it is not counted).
pub const MAX_TRACKED_PUBLISHERS: usize = 1024;

/// Counts messages lost between consecutive samples of each publisher, by GID, for at most
/// 2 x [`MAX_TRACKED_PUBLISHERS`] publishers: the recent generation, and the one before it
/// (dropped when the recent one fills, its GIDs moving up as they are seen again).
#[derive(Debug, Default)]
pub struct LossTracker {
    recent: HashMap<[u8; 16], i64>,
    older: HashMap<[u8; 16], i64>,
    /// Publishers forgotten so far (their generation was dropped).
    forgotten: u64,
    /// Sequence gaps seen so far.
    gaps: u64,
}

impl LossTracker {
    /// Records a sample of `gid` numbered `sequence_number`; returns how many of its publisher's
    /// samples were skipped since the previous one (0 for its first, repeated or late ones).
    pub fn record(&mut self, gid: [u8; 16], sequence_number: i64) -> u64 {
        let previous = match self.recent.get_mut(&gid) {
            Some(last) => Some(std::mem::replace(last, (*last).max(sequence_number))),
            None => {
                let previous = self.older.remove(&gid);
                if self.recent.len() >= MAX_TRACKED_PUBLISHERS {
                    self.forgotten = self.forgotten.saturating_add(self.older.len() as u64);
                    self.older = std::mem::take(&mut self.recent);
                }
                let last = previous.map_or(sequence_number, |p| p.max(sequence_number));
                self.recent.insert(gid, last);
                previous
            }
        };
        // Late (recovered) or repeated samples count nothing; a gap counts the numbers skipped,
        // in checked arithmetic (a sender picks its numbers).
        let lost = match previous {
            Some(last) if sequence_number > last => {
                u64::try_from(i128::from(sequence_number) - i128::from(last) - 1).unwrap_or(0)
            }
            _ => 0,
        };
        if lost > 0 {
            self.gaps = self.gaps.saturating_add(1);
        }
        lost
    }

    /// Whether the gap just recorded is one to warn about: the 1st, 2nd, 4th, 8th, ... (a peer
    /// skipping numbers on every sample must not turn each into a log line).
    pub fn warn_of_gap(&self) -> bool {
        self.gaps.is_power_of_two()
    }

    /// Sequence gaps seen so far.
    pub fn gaps(&self) -> u64 {
        self.gaps
    }

    /// Publishers tracked now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.recent.len() + self.older.len()
    }

    /// Publishers forgotten so far to keep the tracker bounded.
    pub fn forgotten(&self) -> u64 {
        self.forgotten
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_count_per_publisher() {
        let mut t = LossTracker::default();
        let (a, b) = ([1u8; 16], [2u8; 16]);
        assert_eq!(t.record(a, 5), 0); // joined late: nothing lost before the first
        assert_eq!(t.record(a, 6), 0);
        assert_eq!(t.record(b, 1), 0);
        assert_eq!(t.record(a, 10), 3);
        assert_eq!(t.record(a, 8), 0); // recovered late
        assert_eq!(t.record(a, 11), 0);
        assert_eq!(t.record(b, 3), 1);
    }

    #[test]
    fn a_publisher_skipping_a_number_every_sample_is_warned_of_at_doubling_gaps() {
        let mut t = LossTracker::default();
        let a = [1u8; 16];
        t.record(a, 0);
        let warned: Vec<i64> = (1..=1000)
            .filter(|i| t.record(a, 2 * i) == 1 && t.warn_of_gap())
            .collect();
        assert_eq!(warned, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]);
    }

    #[test]
    fn sequence_numbers_at_the_ends_of_their_range_neither_overflow_nor_count_wrongly() {
        let mut t = LossTracker::default();
        let a = [1u8; 16];
        assert_eq!(t.record(a, i64::MIN), 0);
        assert_eq!(t.record(a, i64::MAX), u64::MAX - 1);
        assert_eq!(t.record(a, i64::MAX), 0, "repeated");
        assert_eq!(t.record(a, i64::MIN), 0, "late");
        assert_eq!(t.record(a, 0), 0, "late");
    }

    #[test]
    fn a_flood_of_distinct_gids_keeps_the_tracker_bounded_and_recent_publishers_tracked() {
        let mut t = LossTracker::default();
        let steady = [0xffu8; 16];
        let mut seq = 0;
        for i in 0u64..100_000 {
            let mut gid = [0u8; 16];
            gid[..8].copy_from_slice(&i.to_le_bytes());
            assert_eq!(t.record(gid, 1), 0);
            if i % 100 == 0 {
                seq += 1;
                assert_eq!(t.record(steady, seq), 0, "a publisher heard from is kept");
            }
            assert!(t.len() <= 2 * MAX_TRACKED_PUBLISHERS);
        }
        assert!(t.forgotten() > 90_000);
        assert_eq!(t.record(steady, seq + 3), 2, "its gaps still count");
    }
}
