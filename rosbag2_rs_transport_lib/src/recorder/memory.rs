//! What a message held in memory costs, as the recorder's byte limits count it
//! (`--max-cache-size`, the snapshot buffers' `--max-buffer-size`): its payload, at least 1 byte,
//! plus [`MESSAGE_OVERHEAD`]. Counting payload bytes only let zero-byte samples never fill a
//! limit and 4-byte ones use about 20 times their budget, while each still costs its struct, its
//! slot and its payload's allocation.

/// Bytes every buffered message costs besides its payload: its struct in the buffer (a
/// `SerializedMessage` or a snapshot entry, at most 64 bytes) with the slack of the
/// growing buffer it sits in (up to as much again), and its payload's allocation (the allocator's
/// header and minimum chunk, or the middleware buffer's owner: 64 bytes with glibc's malloc).
pub const MESSAGE_OVERHEAD: u64 = 2 * MAX_SLOT + 64;

/// The largest buffer slot [`MESSAGE_OVERHEAD`] allows for (checked by the tests of the
/// buffers' entry types).
pub(crate) const MAX_SLOT: u64 = 64;

/// What a message of `payload` bytes costs in memory: the payload (at least 1 byte) and
/// [`MESSAGE_OVERHEAD`].
pub fn message_cost(payload: usize) -> u64 {
    (payload.max(1) as u64).saturating_add(MESSAGE_OVERHEAD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_costs_its_overhead_and_at_least_one_byte() {
        assert_eq!(message_cost(0), MESSAGE_OVERHEAD + 1);
        assert_eq!(message_cost(1), MESSAGE_OVERHEAD + 1);
        assert_eq!(message_cost(4), MESSAGE_OVERHEAD + 4);
        assert_eq!(message_cost(usize::MAX), u64::MAX);
        // The slot the overhead allows for holds the cache's message struct.
        assert!(std::mem::size_of::<rosbag2_rs_storage::SerializedMessage>() as u64 <= MAX_SLOT);
    }
}
