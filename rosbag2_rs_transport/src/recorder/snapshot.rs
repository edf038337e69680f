//! The snapshot mode's ring buffers: one per topic, bounded by payload bytes and by
//! receive-time span (newest minus oldest), oldest evicted first. A trigger swaps every topic's
//! buffer for an empty one under that topic's lock, so ingestion never waits for the snapshot to
//! be written.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use rosbag2_rs_storage::SerializedMessage;

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
    bytes: u64,
}

/// The limits, shared by all topics and changeable at runtime.
#[derive(Debug)]
struct Limits {
    max_bytes: AtomicU64,
    max_duration: AtomicI64,
}

impl Limits {
    fn get(&self) -> (u64, i64) {
        (
            self.max_bytes.load(Ordering::Relaxed),
            self.max_duration.load(Ordering::Relaxed),
        )
    }
}

/// One topic's ring buffer.
#[derive(Debug)]
pub(crate) struct TopicRing {
    topic: Arc<str>,
    state: Mutex<RingState>,
    limits: Arc<Limits>,
    counters: Arc<TopicCounters>,
}

impl TopicRing {
    /// Buffers a message and evicts the oldest ones beyond the limits.
    pub fn push(&self, data: Bytes, recv_timestamp: i64, send_timestamp: i64) {
        let limits = self.limits.get();
        let mut state = self.state.lock();
        state.bytes += data.len() as u64;
        state.queue.push_back(Entry {
            data,
            recv_timestamp,
            send_timestamp,
        });
        let evicted = evict(&mut state, limits);
        drop(state);
        if evicted > 0 {
            TopicCounters::add(&self.counters.evicted, evicted);
        }
    }

    fn take(&self) -> ChunkedQueue<Entry> {
        let mut state = self.state.lock();
        state.bytes = 0;
        std::mem::take(&mut state.queue)
    }

    fn trim(&self) {
        let limits = self.limits.get();
        let evicted = evict(&mut self.state.lock(), limits);
        TopicCounters::add(&self.counters.evicted, evicted);
    }
}

/// Evicts oldest entries while over the byte limit or the duration limit; returns how many.
fn evict(state: &mut RingState, (max_bytes, max_duration): (u64, i64)) -> u64 {
    let newest = state.queue.back().map_or(0, |e| e.recv_timestamp);
    let mut evicted = 0;
    while let Some(oldest) = state.queue.front() {
        let over_bytes = max_bytes > 0 && state.bytes > max_bytes;
        let over_time =
            max_duration > 0 && newest.saturating_sub(oldest.recv_timestamp) > max_duration;
        if !(over_bytes || over_time) {
            break;
        }
        state.bytes -= oldest.data.len() as u64;
        state.queue.pop_front();
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

/// The content taken out of the buffers by a trigger, per topic, oldest first.
pub(crate) type Taken = Vec<(Arc<str>, Arc<TopicCounters>, ChunkedQueue<Entry>)>;

impl SnapshotBuffers {
    /// Empty buffers with these limits.
    pub fn new(limits: SnapshotLimits) -> Self {
        Self {
            limits: Arc::new(Limits {
                max_bytes: AtomicU64::new(limits.max_bytes_per_topic),
                max_duration: AtomicI64::new(limits.max_duration_ns),
            }),
            rings: Mutex::new(Vec::new()),
        }
    }

    /// A new topic's buffer.
    pub fn add_topic(&self, topic: Arc<str>, counters: Arc<TopicCounters>) -> Arc<TopicRing> {
        let ring = Arc::new(TopicRing {
            topic,
            state: Mutex::default(),
            limits: self.limits.clone(),
            counters,
        });
        self.rings.lock().push(ring.clone());
        ring
    }

    /// The current limits.
    pub fn limits(&self) -> SnapshotLimits {
        let (max_bytes_per_topic, max_duration_ns) = self.limits.get();
        SnapshotLimits {
            max_bytes_per_topic,
            max_duration_ns,
        }
    }

    /// Applies new limits (validated by the caller) and trims every buffer to them.
    pub fn set_limits(&self, limits: SnapshotLimits) {
        self.limits
            .max_bytes
            .store(limits.max_bytes_per_topic, Ordering::Relaxed);
        self.limits
            .max_duration
            .store(limits.max_duration_ns, Ordering::Relaxed);
        for ring in self.rings.lock().iter() {
            ring.trim();
        }
    }

    /// Takes every topic's content, leaving empty buffers that keep buffering.
    pub fn take_all(&self) -> Taken {
        let rings: Vec<Arc<TopicRing>> = self.rings.lock().clone();
        rings
            .iter()
            .map(|r| (r.topic.clone(), r.counters.clone(), r.take()))
            .filter(|(_, _, q)| !q.is_empty())
            .collect()
    }

    /// Drops every buffered message.
    pub fn clear(&self) {
        drop(self.take_all());
    }

    /// Messages and payload bytes currently buffered, summed over topics.
    pub fn occupancy(&self) -> (usize, u64) {
        self.rings.lock().iter().fold((0, 0), |(n, b), r| {
            let s = r.state.lock();
            (n + s.queue.len(), b + s.bytes)
        })
    }
}

/// Merges taken buffers into one receive-time ordered list of messages (ties: topic order, then
/// arrival order).
pub(crate) fn into_messages(taken: Taken) -> Vec<SerializedMessage> {
    let mut messages: Vec<SerializedMessage> =
        Vec::with_capacity(taken.iter().map(|(_, _, q)| q.len()).sum());
    for (topic, _, queue) in taken {
        messages.extend(queue.into_iter().map(|e| SerializedMessage {
            topic: topic.clone(),
            recv_timestamp: e.recv_timestamp,
            send_timestamp: e.send_timestamp,
            data: e.data,
        }));
    }
    messages.sort_by_key(|m| m.recv_timestamp);
    messages
}
