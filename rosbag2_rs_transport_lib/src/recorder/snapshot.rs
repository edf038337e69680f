//! The snapshot mode's buffers, as rosbag2's snapshot mode keeps them: one per topic, bounded
//! by bytes per topic and by time, oldest evicted first. The byte bound counts what each message
//! costs in memory ([`message_cost`]: its payload, at least 1 byte, and a per-message
//! overhead), so that a flood of empty or tiny samples is bounded as memory really grows. The time bound is
//! `now() - max_duration` on every topic: a message received before it is evicted, also on a
//! topic that has gone quiet (its buffer is trimmed to the recorder's clock at every trigger).
//! A non-positive limit disables its axis.
//!
//! A trigger takes every selected topic's content under that topic's lock, so ingestion never
//! waits for the snapshot to be written. A transient-local topic also keeps the newest message
//! that left its buffer (evicted or written by an earlier snapshot): a snapshot whose window
//! starts after it still begins with it, stamped at its original time, so that a snapshot alone
//! holds the latched state (`/tf_static`, `/robot_description`).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use rosbag2_rs_storage::SerializedMessage;

use super::memory::message_cost;
use super::options::SnapshotLimits;
use super::ring::ChunkedQueue;
use super::stats::TopicCounters;

/// One buffered message: 48 bytes besides its payload (the topic is stored once per buffer).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    data: Bytes,
    recv_timestamp: i64,
    send_timestamp: i64,
}

#[derive(Debug, Default)]
struct RingState {
    queue: ChunkedQueue<Entry>,
    /// Payload bytes buffered (what a snapshot writes).
    bytes: u64,
    /// What the buffered messages cost in memory ([`message_cost`]): the byte limit's measure.
    cost: u64,
    /// Transient-local topics: the newest message that left the buffer.
    latched: Option<Entry>,
}

/// The limits, shared by all topics and changeable at runtime (0: no limit on that axis).
#[derive(Debug)]
struct Limits {
    max_bytes: AtomicU64,
    max_duration: AtomicI64,
    /// Messages received after this time are not evicted by time: a snapshot's post-trigger
    /// tail is being recorded (`i64::MAX`: none is).
    hold_after: AtomicI64,
}

impl Limits {
    fn get(&self) -> EvictionLimits {
        EvictionLimits {
            max_bytes: self.max_bytes.load(Ordering::Relaxed),
            max_duration: self.max_duration.load(Ordering::Relaxed),
            hold_after: self.hold_after.load(Ordering::Relaxed),
        }
    }
}

/// The limits as one eviction applies them.
#[derive(Debug, Clone, Copy)]
struct EvictionLimits {
    max_bytes: u64,
    max_duration: i64,
    hold_after: i64,
}

/// One topic's ring buffer.
#[derive(Debug)]
pub(crate) struct TopicRing {
    topic: Arc<str>,
    state: Mutex<RingState>,
    limits: Arc<Limits>,
    counters: Arc<TopicCounters>,
    /// Keep the newest message that left the buffer (transient-local topics).
    keep_latched: bool,
}

impl TopicRing {
    /// Buffers a message and evicts what the limits exclude, the receive time of the message
    /// being the clock's now.
    pub fn push(&self, data: Bytes, recv_timestamp: i64, send_timestamp: i64) {
        let limits = self.limits.get();
        let mut state = self.state.lock();
        state.bytes += data.len() as u64;
        state.cost += message_cost(data.len());
        state.queue.push_back(Entry {
            data,
            recv_timestamp,
            send_timestamp,
        });
        let evicted = evict(&mut state, limits, recv_timestamp, self.keep_latched);
        drop(state);
        if evicted > 0 {
            TopicCounters::add(&self.counters.evicted, evicted);
        }
    }

    /// Trims to the limits at `now`, then takes the messages received up to `until`, and the
    /// latched message from before them.
    fn take(&self, now: i64, until: i64) -> (ChunkedQueue<Entry>, Option<Entry>) {
        let limits = self.limits.get();
        let mut state = self.state.lock();
        let evicted = evict(&mut state, limits, now, self.keep_latched);
        let latched = state.latched.clone();
        let mut taken = ChunkedQueue::default();
        while state
            .queue
            .front()
            .is_some_and(|e| e.recv_timestamp <= until)
        {
            if let Some(entry) = state.queue.pop_front() {
                state.bytes -= entry.data.len() as u64;
                state.cost -= message_cost(entry.data.len());
                taken.push_back(entry);
            }
        }
        if self.keep_latched {
            if let Some(newest) = taken.back() {
                state.latched = Some(newest.clone());
            }
        }
        drop(state);
        TopicCounters::add(&self.counters.evicted, evicted);
        (taken, latched)
    }

    fn trim(&self, now: i64) {
        let limits = self.limits.get();
        let evicted = evict(&mut self.state.lock(), limits, now, self.keep_latched);
        TopicCounters::add(&self.counters.evicted, evicted);
    }
}

/// Evicts oldest entries while their cost is over the byte limit or they were received before
/// `now - max_duration` (and not after `hold_after`); returns how many.
fn evict(state: &mut RingState, limits: EvictionLimits, now: i64, keep_latched: bool) -> u64 {
    let mut evicted = 0;
    while let Some(oldest) = state.queue.front() {
        let over_bytes = limits.max_bytes > 0 && state.cost > limits.max_bytes;
        let over_time = limits.max_duration > 0
            && oldest.recv_timestamp < now.saturating_sub(limits.max_duration)
            && oldest.recv_timestamp <= limits.hold_after;
        if !(over_bytes || over_time) {
            break;
        }
        state.bytes -= oldest.data.len() as u64;
        state.cost -= message_cost(oldest.data.len());
        if let Some(entry) = state.queue.pop_front() {
            if keep_latched {
                state.latched = Some(entry);
            }
        }
        evicted += 1;
    }
    evicted
}

/// The buffers of all topics.
#[derive(Debug)]
pub(crate) struct SnapshotBuffers {
    limits: Arc<Limits>,
    rings: Mutex<Vec<Arc<TopicRing>>>,
}

/// One topic's content taken by a trigger.
pub(crate) struct TakenTopic {
    /// The topic.
    pub topic: Arc<str>,
    /// Its counters.
    pub counters: Arc<TopicCounters>,
    /// Its messages, oldest first.
    pub queue: ChunkedQueue<Entry>,
    /// Transient-local topics: the newest message from before `queue`.
    pub latched: Option<Entry>,
    /// Whether the topic is transient-local (its state is kept across cuts).
    pub keep_latched: bool,
}

/// The content taken out of the buffers by a trigger.
pub(crate) type Taken = Vec<TakenTopic>;

/// Which messages a trigger writes: topics (empty: all) and a receive-time window (inclusive;
/// `None`: open).
#[derive(Debug, Clone, Default)]
pub(crate) struct Selection {
    /// Topic names (fully qualified); empty: every topic.
    pub topics: Vec<String>,
    /// Earliest receive time written.
    pub start: Option<i64>,
    /// Latest receive time written.
    pub stop: Option<i64>,
}

impl Selection {
    fn has(&self, topic: &str) -> bool {
        self.topics.is_empty() || self.topics.iter().any(|t| t == topic)
    }
}

impl SnapshotBuffers {
    /// Empty buffers with these limits.
    pub fn new(limits: SnapshotLimits) -> Self {
        let limits = limits.normalized();
        Self {
            limits: Arc::new(Limits {
                max_bytes: AtomicU64::new(limits.max_bytes_per_topic),
                max_duration: AtomicI64::new(limits.max_duration_ns),
                hold_after: AtomicI64::new(i64::MAX),
            }),
            rings: Mutex::new(Vec::new()),
        }
    }

    /// A new topic's buffer; `keep_latched` for a transient-local topic.
    pub fn add_topic(
        &self,
        topic: Arc<str>,
        counters: Arc<TopicCounters>,
        keep_latched: bool,
    ) -> Arc<TopicRing> {
        let ring = Arc::new(TopicRing {
            topic,
            state: Mutex::default(),
            limits: self.limits.clone(),
            counters,
            keep_latched,
        });
        self.rings.lock().push(ring.clone());
        ring
    }

    /// The current limits.
    pub fn limits(&self) -> SnapshotLimits {
        let limits = self.limits.get();
        SnapshotLimits {
            max_bytes_per_topic: limits.max_bytes,
            max_duration_ns: limits.max_duration,
        }
    }

    /// Keeps every message received after `time` from time eviction (the byte limit still
    /// applies) until the next call: a post-trigger tail started then (`i64::MAX`: none).
    pub fn hold_after(&self, time: i64) {
        self.limits.hold_after.store(time, Ordering::Relaxed);
    }

    /// Applies new limits (validated by the caller) and trims every buffer to them at `now`.
    pub fn set_limits(&self, limits: SnapshotLimits, now: i64) {
        let limits = limits.normalized();
        self.limits
            .max_bytes
            .store(limits.max_bytes_per_topic, Ordering::Relaxed);
        self.limits
            .max_duration
            .store(limits.max_duration_ns, Ordering::Relaxed);
        for ring in self.rings.lock().iter() {
            ring.trim(now);
        }
    }

    /// Trims every buffer to the limits at `now`.
    pub fn trim_all(&self, now: i64) {
        for ring in self.rings.lock().iter() {
            ring.trim(now);
        }
    }

    /// Takes the selected topics' messages received up to `until` (after trimming every
    /// buffer to the limits at `now`), leaving the rest buffered; topics with nothing to write
    /// are left out.
    pub fn take(&self, selection: &Selection, now: i64, until: i64) -> Taken {
        let rings: Vec<Arc<TopicRing>> = self.rings.lock().clone();
        rings
            .iter()
            .filter_map(|r| {
                if !selection.has(&r.topic) {
                    r.trim(now);
                    return None;
                }
                let (queue, latched) = r.take(now, until);
                (!queue.is_empty() || latched.is_some()).then(|| TakenTopic {
                    topic: r.topic.clone(),
                    counters: r.counters.clone(),
                    queue,
                    latched,
                    keep_latched: r.keep_latched,
                })
            })
            .collect()
    }

    /// Drops every buffered message (a transient-local topic's latched message stays: it is
    /// state, not history); returns how many.
    pub fn clear(&self) -> usize {
        let rings: Vec<Arc<TopicRing>> = self.rings.lock().clone();
        rings
            .iter()
            .map(|r| {
                let (queue, _) = r.take(i64::MIN, i64::MAX);
                queue.len()
            })
            .sum()
    }

    /// Messages and payload bytes currently buffered, summed over topics.
    pub fn occupancy(&self) -> (usize, u64) {
        self.rings.lock().iter().fold((0, 0), |(n, b), r| {
            let s = r.state.lock();
            (n + s.queue.len(), b + s.bytes)
        })
    }
}

/// A topic's counters, and how many of its taken messages were written and how many fell
/// outside the requested window.
pub(crate) type WindowCounts = (Arc<TopicCounters>, u64, u64);

/// What a snapshot writes from taken buffers: per topic the messages inside the window and,
/// for a transient-local topic, the newest message from before the window start (at its
/// original time); merged in receive-time order. Returns the messages and, per topic, how
/// many of its taken messages are written and how many fell outside the window.
pub(crate) fn into_messages(
    taken: Taken,
    selection: &Selection,
) -> (Vec<SerializedMessage>, Vec<WindowCounts>) {
    let start = selection.start.unwrap_or(i64::MIN);
    let stop = selection.stop.unwrap_or(i64::MAX);
    let mut messages: Vec<SerializedMessage> =
        Vec::with_capacity(taken.iter().map(|t| t.queue.len() + 1).sum());
    let mut counts = Vec::with_capacity(taken.len());
    for TakenTopic {
        topic,
        counters,
        queue,
        latched,
        keep_latched,
    } in taken
    {
        let make = |e: Entry| SerializedMessage {
            topic: topic.clone(),
            recv_timestamp: e.recv_timestamp,
            send_timestamp: e.send_timestamp,
            data: e.data,
        };
        // The newest message before the window (or before the buffer's content): the latched
        // one, or a taken one after it.
        let mut before = latched.filter(|e| e.recv_timestamp <= stop);
        let (mut written, mut outside) = (0, 0);
        for entry in queue.into_iter() {
            if entry.recv_timestamp < start {
                outside += 1;
                if keep_latched {
                    before = Some(entry);
                }
            } else if entry.recv_timestamp <= stop {
                written += 1;
                messages.push(make(entry));
            } else {
                outside += 1;
            }
        }
        if let Some(entry) = before {
            messages.push(make(entry));
        }
        counts.push((counters, written, outside));
    }
    messages.sort_by_key(|m| m.recv_timestamp);
    (messages, counts)
}

#[cfg(test)]
mod tests {
    use super::super::memory::MAX_SLOT;
    use super::*;

    fn buffers(max_bytes_per_topic: u64) -> (SnapshotBuffers, Arc<TopicRing>, Arc<TopicCounters>) {
        let buffers = SnapshotBuffers::new(SnapshotLimits {
            max_bytes_per_topic,
            max_duration_ns: 0,
        });
        let counters = Arc::new(TopicCounters::default());
        let ring = buffers.add_topic(Arc::from("/t"), counters.clone(), false);
        (buffers, ring, counters)
    }

    /// Empty and 4-byte samples fill the byte limit as memory grows: the buffer keeps what the
    /// limit pays for and evicts the rest (a payload-only count kept every empty one).
    #[test]
    fn a_flood_of_empty_or_tiny_messages_is_bounded_by_the_byte_limit() {
        assert!(std::mem::size_of::<Entry>() as u64 <= MAX_SLOT);
        for len in [0usize, 4] {
            let limit = 1 << 20;
            let (buffers, ring, counters) = buffers(limit);
            let n = 100_000u64;
            for i in 0..n {
                ring.push(Bytes::from(vec![0u8; len]), i as i64, i as i64);
            }
            let (count, bytes) = buffers.occupancy();
            assert_eq!(
                count as u64,
                limit / message_cost(len),
                "{len}-byte messages"
            );
            assert_eq!(
                bytes,
                count as u64 * len as u64,
                "occupancy reports payload bytes"
            );
            assert_eq!(counters.evicted.load(Ordering::Relaxed), n - count as u64);
            let taken = buffers.take(&Selection::default(), n as i64, n as i64);
            assert_eq!(taken[0].queue.len(), count);
            assert_eq!(
                ring.state.lock().cost,
                0,
                "what is taken is no longer counted"
            );
        }
    }
}
