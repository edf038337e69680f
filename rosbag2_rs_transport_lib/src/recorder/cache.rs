//! The double-buffered message cache between the subscriptions and the disk.
//!
//! Subscription callbacks push into the primary buffer under a short lock and return; they never
//! wait on the disk. The writer thread swaps the primary buffer with its own (empty) one and
//! writes the full one to the [`BagWriter`] outside the lock, releasing each message's bytes as
//! it is written. `max_cache_size` bounds the memory of both buffers together (plus the one
//! message an empty primary buffer always takes), each message counted at what it costs
//! ([`message_cost`]: its payload, at least 1 byte, and a per-message overhead, so that a flood
//! of empty or tiny samples fills the cache as memory really grows), and `max_cache_duration` (rosbag2 Lyrical)
//! the receive-time span of the primary buffer, which only fills while the writer is busy: when
//! either is reached, new messages are dropped and counted per topic. A `max_cache_size` of 0
//! leaves only the duration bound; with neither, there is no cache, as in rosbag2: each callback
//! returns once the writer has written its message, so nothing is dropped and a slow disk slows
//! the callbacks instead. The writer thread logs the drops once a second with their cause
//! ([`DropCause`]: compression, the disk, or a failed writer) and the recorder summarises them.
//!
//! A command (split, flush) is queued with its position among the messages pushed so far: the
//! writer writes exactly the messages before it, runs it, then goes on with the rest.
//!
//! rosbag2's snapshot mode ([`MessageCache::circular`]) keeps the primary buffer as a ring
//! instead, as rosbag2's `CircularMessageCache` does: a new message evicts the oldest ones while
//! the buffer would cost more than `max_cache_size` or span more than `max_cache_duration` of
//! receive time, and the writer takes nothing until a [`Command::Snapshot`] asks for the messages
//! before it, which it writes into the current file before starting the next one. What is
//! buffered when the recording closes is written too (rosbag2 drops it). A transient-local
//! topic's newest evicted message is kept and written at the head of the next snapshot, so that
//! a snapshot holds the latched state (rosbag2 merges its transient-local cache the same way).

use std::collections::{HashMap, HashSet, VecDeque};
use std::mem;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use parking_lot::{Condvar, Mutex};
use rosbag2_rs_storage::{BagMetadata, BagWriter, SerializedMessage};

use super::error::{RecorderError, Result};
use super::memory::message_cost;
use super::schedule::ScheduleSlot;
use super::stats::{DropCause, TopicCounters, TopicRegistry};

/// A request to the writer thread, answered once every message pushed before it is written.
pub(crate) enum Command {
    /// Close the current file and continue in a new one (answers whether a new file was
    /// started: a file that holds no message yet is kept).
    Split(Sender<Result<bool>>),
    /// Make everything written so far durable.
    Flush(Sender<Result<()>>),
    /// rosbag2's snapshot mode: write the messages buffered before it, then continue in a new
    /// file (answers as [`Command::Split`]).
    Snapshot(Sender<Result<bool>>),
}

#[derive(Default)]
struct CacheState {
    primary: VecDeque<SerializedMessage>,
    /// What the messages in both buffers cost ([`message_cost`]): the primary one and what the
    /// writer has not written yet.
    bytes: u64,
    /// Commands, each with the number of messages in `primary` when it was queued.
    commands: Vec<(usize, Command)>,
    closed: bool,
    failed: Option<Arc<RecorderError>>,
    drop_cause: Option<DropCause>,
    /// Messages pushed so far, and of those the ones written or dropped (write-through only).
    pushed: u64,
    finished: u64,
    /// Circular mode: messages evicted per topic since the writer last counted them.
    evicted: HashMap<Arc<str>, u64>,
    /// Circular mode: the topics whose newest evicted message is kept ([`MessageCache::keep_latched`]).
    latched: HashSet<Arc<str>>,
    /// Circular mode: the newest evicted message of each of those topics, for the next snapshot.
    evicted_latched: HashMap<Arc<str>, SerializedMessage>,
    /// Circular mode: what the snapshots queued took out of the ring, for the writer (the
    /// commands' positions count these).
    taken: VecDeque<SerializedMessage>,
    /// The receive time of the first message of the batch the writer is writing.
    writing_since: Option<i64>,
}

/// What waits to be written, as the recorder's watch thread sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Backlog {
    /// How long the oldest message not yet written has waited, ns (0: nothing waits).
    pub lag_ns: i64,
    /// What the messages not yet written cost ([`message_cost`]).
    pub bytes: u64,
}

/// The producer side of the cache.
pub(crate) struct MessageCache {
    state: Mutex<CacheState>,
    ready: Condvar,
    /// Signalled when messages are written or dropped (write-through waits on it).
    finished: Condvar,
    max_bytes: u64,
    max_duration_ns: i64,
    /// rosbag2's snapshot mode: a ring written only by [`Command::Snapshot`].
    circular: bool,
}

impl MessageCache {
    /// A cache that holds messages costing up to `max_bytes` ([`message_cost`]; 0: no bound by
    /// size) and messages
    /// received within `max_duration_ns` (non-positive: no bound by time) while the writer is
    /// busy; with neither bound, no cache: [`push`](Self::push) returns once the message is
    /// written.
    pub fn new(max_bytes: u64, max_duration_ns: i64) -> Self {
        Self {
            state: Mutex::new(CacheState::default()),
            ready: Condvar::new(),
            finished: Condvar::new(),
            max_bytes,
            max_duration_ns: max_duration_ns.max(0),
            circular: false,
        }
    }

    /// rosbag2's snapshot mode: a ring of the messages costing up to `max_bytes`
    /// ([`message_cost`]; 0: no bound by size) and spanning up to `max_duration_ns` of receive
    /// time (non-positive: no bound by time), written only when a [`Command::Snapshot`] asks.
    /// One bound must be set, as rosbag2 requires.
    pub fn circular(max_bytes: u64, max_duration_ns: i64) -> Self {
        Self {
            circular: true,
            ..Self::new(max_bytes, max_duration_ns)
        }
    }

    /// Circular mode: keep the newest message of `topic` that leaves the ring unwritten, and
    /// write it at the head of the next snapshot (a transient-local topic's latched state).
    pub fn keep_latched(&self, topic: Arc<str>) {
        self.state.lock().latched.insert(topic);
    }

    fn write_through(&self) -> bool {
        !self.circular && self.max_bytes == 0 && self.max_duration_ns == 0
    }

    /// Circular mode: buffers `message`, evicting the oldest messages while the ring would
    /// exceed a bound; a message costing more than the whole ring is dropped (false).
    fn push_circular(&self, state: &mut CacheState, message: SerializedMessage) -> bool {
        let len = message_cost(message.data.len());
        if self.max_bytes > 0 && len > self.max_bytes {
            return false;
        }
        while let Some(oldest) = state.primary.front() {
            let over_bytes = self.max_bytes > 0 && state.bytes.saturating_add(len) > self.max_bytes;
            let over_time = self.max_duration_ns > 0
                && message.recv_timestamp.saturating_sub(oldest.recv_timestamp)
                    > self.max_duration_ns;
            if !(over_bytes || over_time) {
                break;
            }
            let Some(evicted) = state.primary.pop_front() else {
                break;
            };
            state.bytes = state.bytes.saturating_sub(message_cost(evicted.data.len()));
            *state.evicted.entry(evicted.topic.clone()).or_default() += 1;
            if state.latched.contains(&evicted.topic) {
                state.evicted_latched.insert(evicted.topic.clone(), evicted);
            }
        }
        state.bytes += len;
        state.primary.push_back(message);
        state.pushed += 1;
        true
    }

    /// Whether `message` finds the cache full: its cost beyond the size bound, or its receive
    /// time beyond the duration bound after the oldest message waiting. An empty cache takes any
    /// message, so that one larger than the bound is recorded too.
    fn is_full(&self, state: &CacheState, message: &SerializedMessage) -> bool {
        let len = message_cost(message.data.len());
        let too_big = self.max_bytes > 0
            && state.bytes > 0
            && state.bytes.saturating_add(len) > self.max_bytes;
        let too_long = self.max_duration_ns > 0
            && state.primary.front().is_some_and(|oldest| {
                message.recv_timestamp.saturating_sub(oldest.recv_timestamp) > self.max_duration_ns
            });
        too_big || too_long
    }

    /// Adds a message, or drops and counts it when the cache is full or the writer has failed.
    /// Never blocks on the disk, but without a cache (`max_bytes` 0) returns once the writer
    /// has written (or dropped) it. Returns false (and counts nothing) once the cache is closed,
    /// for a message that raced with the end of the recording.
    pub fn push(&self, message: SerializedMessage, counters: &TopicCounters) -> bool {
        let len = message_cost(message.data.len());
        let mut state = self.state.lock();
        if state.closed {
            return false;
        }
        if self.circular && state.failed.is_none() {
            let topic = message.topic.clone();
            if !self.push_circular(&mut state, message) {
                drop(state);
                if counters.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                    log::warn!(
                        "topic '{topic}': dropping messages larger than the snapshot buffer \
                         (--max-cache-size)"
                    );
                }
            }
            return true;
        }
        let full = !self.write_through() && self.is_full(&state, &message);
        if full || state.failed.is_some() {
            drop(state);
            if counters.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                log::warn!(
                    "topic '{}': dropping messages, {}",
                    message.topic,
                    if full {
                        "the cache is full (the writer is not keeping up; see --max-cache-size \
                         and --max-cache-duration)"
                    } else {
                        "the bag writer has stopped"
                    }
                );
            }
            return true;
        }
        let wake = state.primary.is_empty();
        state.primary.push_back(message);
        state.bytes += len;
        state.pushed += 1;
        let seq = state.pushed;
        if wake {
            self.ready.notify_one();
        }
        if self.write_through() {
            while state.finished < seq && state.failed.is_none() {
                self.finished.wait(&mut state);
            }
        }
        true
    }

    /// The writer's backlog at `now` (the recorder's clock): the oldest message not yet written,
    /// taken by the writer or waiting in the primary buffer; `None` in rosbag2's snapshot mode,
    /// whose ring holds its messages by design.
    pub fn backlog(&self, now: i64) -> Option<Backlog> {
        if self.circular {
            return None;
        }
        let state = self.state.lock();
        let waiting = state.primary.front().map(|m| m.recv_timestamp);
        let oldest = state.writing_since.into_iter().chain(waiting).min();
        Some(Backlog {
            lag_ns: oldest.map_or(0, |t| now.saturating_sub(t).max(0)),
            bytes: state.bytes,
        })
    }

    /// Queues a command for the writer thread, behind every message pushed before it (circular
    /// mode: behind the messages of the snapshots queued; a snapshot takes the ring's messages
    /// at once, after the latched ones evicted before them, so that later ones cannot evict
    /// them, and they no longer count against the ring's bounds).
    pub fn command(&self, command: Command) {
        let mut state = self.state.lock();
        if self.circular && matches!(command, Command::Snapshot(_)) {
            Self::take_ring(&mut state);
        }
        let position = if self.circular {
            state.taken.len()
        } else {
            state.primary.len()
        };
        state.commands.push((position, command));
        drop(state);
        self.ready.notify_one();
    }

    /// The writer's failure, if it has failed.
    pub fn failure(&self) -> Option<Arc<RecorderError>> {
        self.state.lock().failed.clone()
    }

    /// Why messages were dropped most recently (none dropped: `None`).
    pub fn drop_cause(&self) -> Option<DropCause> {
        self.state.lock().drop_cause
    }

    /// Gives back the cost ([`message_cost`]) of `count` messages the writer is done with
    /// (written or dropped).
    fn release(&self, bytes: u64, count: u64) {
        let mut state = self.state.lock();
        if !self.circular {
            // (A ring's messages leave its bound when they are taken.)
            state.bytes = state.bytes.saturating_sub(bytes);
        }
        state.finished += count;
        drop(state);
        if self.write_through() {
            self.finished.notify_all();
        }
    }

    fn close(&self) {
        self.state.lock().closed = true;
        self.ready.notify_one();
    }

    /// Circular mode: moves the ring's messages, after the latched ones evicted before them,
    /// to those taken for the writer.
    fn take_ring(state: &mut CacheState) {
        let mut latched: Vec<SerializedMessage> =
            state.evicted_latched.drain().map(|(_, m)| m).collect();
        latched.sort_by_key(|m| m.recv_timestamp);
        state.taken.extend(latched);
        state.bytes = 0;
        state.taken.extend(state.primary.drain(..));
    }

    /// Waits for data, a command or closing (or a second) and takes the primary buffer (its
    /// bytes stay counted until released) with the commands queued among its messages. In
    /// circular mode takes what the snapshots queued took out of the ring (and the ring itself
    /// once closed), so that the ring keeps buffering up to its bounds while a snapshot is
    /// written (as rosbag2's double buffer).
    fn take(&self, spare: &mut VecDeque<SerializedMessage>) -> Taken {
        let mut state = self.state.lock();
        // The previous batch is written.
        state.writing_since = None;
        let idle = state.commands.is_empty() && (self.circular || state.primary.is_empty());
        if idle && !state.closed {
            self.ready.wait_for(&mut state, Duration::from_secs(1));
        }
        if !self.circular {
            mem::swap(&mut state.primary, spare);
            state.writing_since = spare.front().map(|m| m.recv_timestamp);
        } else {
            if state.closed {
                Self::take_ring(&mut state);
            }
            mem::swap(&mut state.taken, spare);
        }
        Taken {
            commands: mem::take(&mut state.commands),
            done: state.closed,
            evicted: mem::take(&mut state.evicted),
        }
    }
}

/// What the writer takes from the cache in one round.
struct Taken {
    /// The commands queued, each with its position among the messages taken.
    commands: Vec<(usize, Command)>,
    /// The cache is closed: this is the last round.
    done: bool,
    /// Circular mode: messages the ring evicted per topic since the last round.
    evicted: HashMap<Arc<str>, u64>,
}

/// The consumer side: the thread that writes the cache's buffers to the bag.
pub(crate) struct CacheWriter {
    cache: Arc<MessageCache>,
    thread: Option<JoinHandle<(Option<BagMetadata>, Option<RecorderError>)>>,
}

impl CacheWriter {
    /// Starts the writer thread for `writer`; it splits before the first message that makes
    /// the `scheduled_split` due.
    pub fn spawn(
        writer: BagWriter,
        cache: Arc<MessageCache>,
        registry: Arc<TopicRegistry>,
        scheduled_split: Arc<ScheduleSlot>,
    ) -> Result<Self> {
        let c = cache.clone();
        let thread = std::thread::Builder::new()
            .name("rosbag2_writer".into())
            .spawn(move || WriterLoop::new(writer, c, registry, scheduled_split).run())
            .map_err(|source| RecorderError::Spawn {
                what: "bag writer",
                source,
            })?;
        Ok(Self {
            cache,
            thread: Some(thread),
        })
    }

    /// Writes what is left, closes the bag and returns its metadata and the first error.
    pub fn finish(mut self) -> (Option<BagMetadata>, Option<RecorderError>) {
        self.cache.close();
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => (
                None,
                Some(RecorderError::WriterStopped("bag writer thread")),
            ),
        }
    }
}

impl Drop for CacheWriter {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.cache.close();
            let _ = thread.join();
        }
    }
}

struct WriterLoop {
    writer: Option<BagWriter>,
    cache: Arc<MessageCache>,
    registry: Arc<TopicRegistry>,
    scheduled_split: Arc<ScheduleSlot>,
    /// The counters of the topics created in the bag so far, by name.
    created: HashMap<Arc<str>, Arc<TopicCounters>>,
    failure: Option<Arc<RecorderError>>,
    reported_drops: HashMap<String, u64>,
    last_report: Instant,
    /// Time spent writing since the last report, and the writer's compression time then.
    busy: Duration,
    compression_at_report: Duration,
}

impl WriterLoop {
    fn new(
        writer: BagWriter,
        cache: Arc<MessageCache>,
        registry: Arc<TopicRegistry>,
        scheduled_split: Arc<ScheduleSlot>,
    ) -> Self {
        Self {
            writer: Some(writer),
            cache,
            registry,
            scheduled_split,
            created: HashMap::new(),
            failure: None,
            reported_drops: HashMap::new(),
            last_report: Instant::now(),
            busy: Duration::ZERO,
            compression_at_report: Duration::ZERO,
        }
    }

    fn run(mut self) -> (Option<BagMetadata>, Option<RecorderError>) {
        let mut batch = VecDeque::new();
        loop {
            let Taken {
                commands,
                done,
                evicted,
            } = self.cache.take(&mut batch);
            self.count_evicted(evicted);
            let started = Instant::now();
            let messages = batch.make_contiguous();
            let mut written = 0;
            for (position, command) in commands {
                self.write_part(&messages[written..position.min(messages.len())]);
                written = written.max(position.min(messages.len()));
                self.execute(command);
            }
            self.write_part(&messages[written..]);
            batch.clear();
            self.busy += started.elapsed();
            self.report_drops(false);
            if done && self.cache.state.lock().primary.is_empty() {
                break;
            }
        }
        self.report_drops(true);
        let metadata = match self.writer.take().map(BagWriter::close) {
            Some(Ok(metadata)) => Some(metadata),
            Some(Err(e)) => {
                self.failure.get_or_insert(Arc::new(e.into()));
                None
            }
            None => None,
        };
        (metadata, self.failure.map(RecorderError::WriterFailed))
    }

    fn writer(&mut self) -> Result<&mut BagWriter> {
        match (&mut self.writer, &self.failure) {
            (Some(writer), None) => Ok(writer),
            (_, Some(e)) => Err(RecorderError::WriterFailed(e.clone())),
            (None, None) => Err(RecorderError::WriterStopped(
                "bag writer (the bag is closed)",
            )),
        }
    }

    /// Writes part of a batch and releases its bytes; a failure stops the writer.
    fn write_part(&mut self, part: &[SerializedMessage]) {
        if let Err(e) = self.write(part) {
            self.fail(e);
        }
    }

    /// Writes a batch, releasing each message's bytes as it is written; on failure counts
    /// every message not written as dropped.
    fn write(&mut self, batch: &[SerializedMessage]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let new_topics = self.registry.since(self.created.len());
        let (Some(writer), None) = (self.writer.as_mut(), &self.failure) else {
            self.count_dropped(batch);
            return Ok(());
        };
        let mut written = 0;
        let result = (|| -> Result<()> {
            for topic in new_topics {
                writer.create_topic(&topic.metadata, topic.definition.clone())?;
                self.created.insert(topic.name, topic.counters);
            }
            for message in batch {
                let (recv, send) = (message.recv_timestamp, message.send_timestamp);
                if let Some(due) = self
                    .scheduled_split
                    .take_if(|s| s.due_at(&message.topic, recv, send))
                {
                    log::info!(
                        "scheduled split: {} time {} ns reached",
                        due.mode.as_str(),
                        due.time_ns
                    );
                    writer.split()?;
                }
                writer.write(message)?;
                self.cache.release(message_cost(message.data.len()), 1);
                if let Some(counters) = self.created.get(&message.topic) {
                    TopicCounters::add(&counters.written, 1);
                }
                written += 1;
            }
            Ok(())
        })();
        if result.is_err() {
            self.count_dropped(&batch[written..]);
        }
        result
    }

    fn fail(&mut self, error: RecorderError) {
        if self.failure.is_none() {
            log::error!("recording failed: {error}; no more messages are written");
            let error = Arc::new(error);
            self.cache.state.lock().failed = Some(error.clone());
            self.cache.finished.notify_all();
            self.failure = Some(error);
        }
    }

    /// Counts messages that will not be written as dropped and releases their bytes.
    fn count_dropped(&self, messages: &[SerializedMessage]) {
        self.cache.release(
            messages.iter().map(|m| message_cost(m.data.len())).sum(),
            messages.len() as u64,
        );
        let counters: HashMap<Arc<str>, Arc<TopicCounters>> = self
            .registry
            .all()
            .into_iter()
            .map(|t| (t.name, t.counters))
            .collect();
        for message in messages {
            if let Some(c) = counters.get(&message.topic) {
                TopicCounters::add(&c.dropped, 1);
            }
        }
    }

    /// Circular mode: adds what the ring evicted to each topic's `evicted` count.
    fn count_evicted(&self, evicted: HashMap<Arc<str>, u64>) {
        if evicted.is_empty() {
            return;
        }
        for topic in self.registry.all() {
            if let Some(count) = evicted.get(&topic.name) {
                TopicCounters::add(&topic.counters.evicted, *count);
            }
        }
    }

    fn execute(&mut self, command: Command) {
        match command {
            Command::Split(reply) | Command::Snapshot(reply) => {
                let result = self.writer().and_then(|w| Ok(w.split()?));
                let _ = reply.send(self.check(result));
            }
            Command::Flush(reply) => {
                let result = self.writer().and_then(|w| Ok(w.flush()?));
                let _ = reply.send(self.check(result));
            }
        }
    }

    /// A storage error of a command stops the writer; the command answers with that failure.
    fn check<T>(&mut self, result: Result<T>) -> Result<T> {
        match result {
            Err(e @ RecorderError::Storage(_)) => {
                self.fail(e);
                Err(self
                    .writer()
                    .err()
                    .unwrap_or(RecorderError::WriterStopped("bag writer")))
            }
            other => other,
        }
    }

    /// Why the messages dropped since the last report were dropped: a failed writer; else
    /// compression when it took most of the writer's time, the CPU being the bottleneck; else
    /// the disk.
    fn drop_cause(&self) -> DropCause {
        if self.failure.is_some() {
            return DropCause::WriterFailed;
        }
        let compression = self
            .writer
            .as_ref()
            .map_or(Duration::ZERO, BagWriter::compression_busy)
            .saturating_sub(self.compression_at_report);
        DropCause::from_shares(compression, self.busy)
    }

    fn report_drops(&mut self, force: bool) {
        if !force && self.last_report.elapsed() < Duration::from_secs(1) {
            return;
        }
        let cause = self.drop_cause();
        self.last_report = Instant::now();
        self.busy = Duration::ZERO;
        self.compression_at_report = self
            .writer
            .as_ref()
            .map_or(Duration::ZERO, BagWriter::compression_busy);
        for topic in self.registry.all() {
            let dropped = topic.counters.dropped.load(Ordering::Relaxed);
            let reported = self
                .reported_drops
                .entry(topic.metadata.name.clone())
                .or_default();
            if dropped > *reported {
                log::warn!(
                    "topic '{}': {} messages dropped ({} in total): {cause}",
                    topic.metadata.name,
                    dropped - *reported,
                    dropped
                );
                *reported = dropped;
                self.cache.state.lock().drop_cause = Some(cause);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::stats::RecordedTopic;
    use super::*;
    use rosbag2_rs_storage::{BagWriterOptions, TopicMetadata};

    fn message(len: usize) -> SerializedMessage {
        SerializedMessage::new(Arc::from("/t"), 0, vec![0u8; len])
    }

    #[test]
    fn without_a_cache_a_push_returns_once_its_message_is_written() {
        let cache = Arc::new(MessageCache::new(0, 0));
        let (returned, pushed) = crossbeam_channel::bounded(1);
        let pusher = {
            let cache = cache.clone();
            std::thread::spawn(move || {
                let counters = TopicCounters::default();
                let kept = cache.push(message(10), &counters);
                returned.send(kept).unwrap();
                counters.dropped.load(Ordering::Relaxed)
            })
        };
        let mut batch = VecDeque::new();
        while batch.is_empty() {
            cache.take(&mut batch);
        }
        // Taken by the writer but not yet written: the callback is still waiting.
        assert!(pushed.try_recv().is_err());
        cache.release(message_cost(10), 1);
        assert!(pushed.recv_timeout(Duration::from_secs(60)).unwrap());
        assert_eq!(pusher.join().unwrap(), 0, "nothing dropped");
    }

    #[test]
    fn the_duration_bound_drops_what_arrives_too_long_after_the_oldest_waiting_message() {
        let cache = MessageCache::new(0, 1_000);
        let counters = TopicCounters::default();
        let at = |t| SerializedMessage::new(Arc::from("/t"), t, vec![0u8; 10]);
        for t in [0, 500, 1_000, 1_001, 2_000] {
            cache.push(at(t), &counters);
        }
        assert_eq!(
            counters.dropped.load(Ordering::Relaxed),
            2,
            "1001 and 2000 ns"
        );
        let mut held = VecDeque::new();
        cache.take(&mut held);
        assert_eq!(held.len(), 3);
        // The writer took them: the span starts again at the next message waiting.
        cache.push(at(5_000), &counters);
        cache.push(at(6_000), &counters);
        assert_eq!(counters.dropped.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn the_bound_covers_what_the_writer_holds_until_it_is_written() {
        // Room for two 100-byte messages, not three.
        let cache = MessageCache::new(message_cost(100) * 5 / 2, 0);
        let counters = TopicCounters::default();
        let dropped = || counters.dropped.load(Ordering::Relaxed);
        cache.push(message(1000), &counters); // an empty cache takes any message
        let mut held = VecDeque::new();
        cache.take(&mut held);
        assert_eq!(held.len(), 1);
        cache.push(message(100), &counters);
        assert_eq!(dropped(), 1, "the writer still holds 1000 bytes");
        cache.release(message_cost(1000), 1);
        for _ in 0..3 {
            cache.push(message(100), &counters);
        }
        assert_eq!(dropped(), 2, "two messages taken, the third does not fit");
        let mut batch = VecDeque::new();
        cache.take(&mut batch);
        assert_eq!(batch.len(), 2, "the writer gets the full buffer");
        cache.push(message(100), &counters);
        assert_eq!(dropped(), 3, "taken but not yet written: still counted");
        cache.release(message_cost(100) * 2, 2);
        cache.push(message(100), &counters);
        assert_eq!(dropped(), 3, "written: room again");
        cache.state.lock().failed = Some(Arc::new(RecorderError::WriterStopped("test writer")));
        cache.push(message(1), &counters);
        assert_eq!(dropped(), 4);
    }

    /// The backlog is the age of the oldest message not yet written, whether the writer holds
    /// it or it waits in the primary buffer, and nothing once the writer is back for more.
    #[test]
    fn the_backlog_is_the_age_of_the_oldest_message_not_yet_written() {
        let cache = MessageCache::new(1 << 20, 0);
        let counters = TopicCounters::default();
        let at = |t| SerializedMessage::new(Arc::from("/t"), t, vec![0u8; 10]);
        let backlog = |now| cache.backlog(now).unwrap();
        assert_eq!(backlog(5), Backlog::default());
        cache.push(at(100), &counters);
        assert_eq!(backlog(150).lag_ns, 50);
        let mut batch = VecDeque::new();
        cache.take(&mut batch);
        cache.push(at(200), &counters);
        assert_eq!(
            backlog(1_000).lag_ns,
            900,
            "the writer still holds the message of 100"
        );
        assert_eq!(backlog(1_000).bytes, 2 * message_cost(10));
        cache.release(message_cost(10), 1);
        batch.clear();
        cache.take(&mut batch);
        assert_eq!(
            backlog(1_000).lag_ns,
            800,
            "now it holds the message of 200"
        );
        cache.release(message_cost(10), 1);
        cache.close();
        batch.clear();
        cache.take(&mut batch);
        assert_eq!(backlog(1_000), Backlog::default());
        assert_eq!(MessageCache::circular(100, 0).backlog(0), None);
    }

    /// rosbag2's snapshot mode: the ring evicts its oldest messages at its bound, hands over
    /// only what a snapshot asks for, and keeps buffering up to its bound while the snapshot is
    /// written (the messages taken no longer count against it).
    #[test]
    fn a_ring_evicts_the_oldest_and_keeps_its_bound_while_a_snapshot_is_written() {
        let cache = MessageCache::circular(message_cost(100) * 3, 0);
        let counters = TopicCounters::default();
        let numbered = |n: u8| SerializedMessage::new(Arc::from("/t"), n.into(), vec![n; 100]);
        for n in 0..5 {
            cache.push(numbered(n), &counters);
        }
        let mut batch = VecDeque::new();
        let taken = cache.take(&mut batch);
        assert!(
            batch.is_empty() && taken.commands.is_empty(),
            "no snapshot asked for"
        );
        assert_eq!(taken.evicted[&Arc::from("/t")], 2);
        let (reply, _) = crossbeam_channel::bounded(1);
        cache.command(Command::Snapshot(reply));
        cache.push(numbered(5), &counters);
        let taken = cache.take(&mut batch);
        let first: Vec<i64> = batch.iter().map(|m| m.recv_timestamp).collect();
        assert_eq!(first, [2, 3, 4], "the newest three, before the snapshot");
        assert_eq!(taken.commands[0].0, 3);
        // Not yet written: the ring still fills to its bound (three), evicting nothing else.
        for n in 6..8 {
            cache.push(numbered(n), &counters);
        }
        let ring: Vec<i64> = cache
            .state
            .lock()
            .primary
            .iter()
            .map(|m| m.recv_timestamp)
            .collect();
        assert_eq!(ring, [5, 6, 7]);
        assert_eq!(counters.dropped.load(Ordering::Relaxed), 0);
    }

    /// Empty and 4-byte samples cost memory as they are buffered: a flood of them fills the
    /// cache at its bound (a payload-only count let empty ones in without end).
    #[test]
    fn a_flood_of_empty_or_tiny_messages_fills_the_cache_at_its_bound() {
        for len in [0, 4] {
            let bound = 1 << 20;
            let cache = MessageCache::new(bound, 0);
            let counters = TopicCounters::default();
            for _ in 0..100_000 {
                cache.push(message(len), &counters);
            }
            let kept = cache.state.lock().primary.len() as u64;
            assert_eq!(kept, bound / message_cost(len), "{len}-byte messages");
            assert_eq!(counters.dropped.load(Ordering::Relaxed), 100_000 - kept);
            assert!(cache.state.lock().bytes <= bound);
        }
    }

    #[test]
    fn a_split_falls_exactly_between_the_messages_before_and_after_it_and_leaves_no_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Arc::new(TopicRegistry::default());
        let counters = Arc::new(TopicCounters::default());
        registry.add(RecordedTopic {
            metadata: TopicMetadata::new("/t", "std_msgs/msg/String"),
            name: Arc::from("/t"),
            counters: counters.clone(),
            definition: None,
        });
        let cache = Arc::new(MessageCache::new(u64::MAX, 0));
        // Everything is queued before the writer runs, so it takes all in one batch: only the
        // command's position can put the split in the right place.
        let split = |cache: &MessageCache| {
            let (tx, rx) = crossbeam_channel::bounded(1);
            cache.command(Command::Split(tx));
            rx
        };
        for _ in 0..10 {
            cache.push(message(8), &counters);
        }
        let first = split(&cache);
        let second = split(&cache);
        for _ in 0..5 {
            cache.push(message(8), &counters);
        }
        let writer = BagWriter::create(BagWriterOptions {
            uri: dir.path().join("bag"),
            ..Default::default()
        })
        .unwrap();
        let writer = CacheWriter::spawn(writer, cache.clone(), registry, Arc::default()).unwrap();
        assert!(first.recv().unwrap().unwrap(), "a new file was started");
        assert!(
            !second.recv().unwrap().unwrap(),
            "nothing written since the last split: no new file"
        );
        let (metadata, error) = writer.finish();
        assert!(error.is_none());
        let counts: Vec<u64> = metadata
            .unwrap()
            .files
            .iter()
            .map(|f| f.message_count)
            .collect();
        assert_eq!(counts, [10, 5]);
        assert_eq!(cache.state.lock().bytes, 0, "every written byte released");
    }

    #[test]
    fn drops_are_blamed_on_compression_only_when_it_took_most_of_the_time() {
        let ms = Duration::from_millis;
        assert_eq!(
            DropCause::from_shares(ms(700), ms(1000)),
            DropCause::Compression
        );
        assert_eq!(DropCause::from_shares(ms(300), ms(1000)), DropCause::Disk);
        assert_eq!(
            DropCause::from_shares(Duration::ZERO, Duration::ZERO),
            DropCause::Disk
        );
    }
}
