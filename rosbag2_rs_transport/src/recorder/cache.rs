//! The double-buffered message cache between the subscriptions and the disk.
//!
//! Subscription callbacks push into the primary buffer under a short lock and return; they never
//! wait on the disk. The writer thread swaps the primary buffer with its own (empty) one and
//! writes the full one to the [`BagWriter`] outside the lock. When the disk cannot keep up and the
//! primary buffer reaches `max_cache_size` bytes, new messages are dropped and counted per topic;
//! the writer thread logs the drops once a second and the recorder summarises them at the end.

use std::collections::HashMap;
use std::mem;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use parking_lot::{Condvar, Mutex};
use rosbag2_rs_storage::{BagMetadata, BagWriter, SerializedMessage};

use super::error::{RecorderError, Result};
use super::stats::{TopicCounters, TopicRegistry};

/// A request to the writer thread, answered once every message pushed before it is written.
pub(crate) enum Command {
    /// Close the current file and continue in a new one.
    Split(Sender<Result<()>>),
    /// Make everything written so far durable.
    Flush(Sender<Result<()>>),
}

#[derive(Default)]
struct CacheState {
    primary: Vec<SerializedMessage>,
    bytes: u64,
    commands: Vec<Command>,
    closed: bool,
    failed: Option<Arc<RecorderError>>,
}

/// The producer side of the cache.
pub(crate) struct MessageCache {
    state: Mutex<CacheState>,
    ready: Condvar,
    max_bytes: u64,
}

impl MessageCache {
    /// A cache that holds up to `max_bytes` of payload while the writer is busy (0: no limit).
    pub fn new(max_bytes: u64) -> Self {
        Self {
            state: Mutex::new(CacheState::default()),
            ready: Condvar::new(),
            max_bytes,
        }
    }

    /// Adds a message, or drops and counts it when the cache is full or the writer has failed.
    /// Never blocks on the disk. Returns false (and counts nothing) once the cache is closed,
    /// for a message that raced with the end of the recording.
    pub fn push(&self, message: SerializedMessage, counters: &TopicCounters) -> bool {
        let len = message.data.len() as u64;
        let mut state = self.state.lock();
        if state.closed {
            return false;
        }
        let full = self.max_bytes > 0
            && !state.primary.is_empty()
            && state.bytes.saturating_add(len) > self.max_bytes;
        if full || state.failed.is_some() {
            drop(state);
            if counters.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                log::warn!(
                    "topic '{}': dropping messages, {}",
                    message.topic,
                    if full {
                        "the cache is full (the disk is not keeping up; see --max-cache-size)"
                    } else {
                        "the bag writer has stopped"
                    }
                );
            }
            return true;
        }
        let wake = state.primary.is_empty();
        state.primary.push(message);
        state.bytes += len;
        drop(state);
        if wake {
            self.ready.notify_one();
        }
        true
    }

    /// Queues a command for the writer thread.
    pub fn command(&self, command: Command) {
        self.state.lock().commands.push(command);
        self.ready.notify_one();
    }

    /// The writer's failure, if it has failed.
    pub fn failure(&self) -> Option<Arc<RecorderError>> {
        self.state.lock().failed.clone()
    }

    fn close(&self) {
        self.state.lock().closed = true;
        self.ready.notify_one();
    }

    /// Waits for data, a command or closing (or a second) and takes the primary buffer.
    fn take(&self, spare: &mut Vec<SerializedMessage>) -> (Vec<Command>, bool) {
        let mut state = self.state.lock();
        if state.primary.is_empty() && state.commands.is_empty() && !state.closed {
            self.ready.wait_for(&mut state, Duration::from_secs(1));
        }
        mem::swap(&mut state.primary, spare);
        state.bytes = 0;
        let done = state.closed && state.commands.is_empty();
        (mem::take(&mut state.commands), done)
    }
}

/// The consumer side: the thread that writes the cache's buffers to the bag.
pub(crate) struct CacheWriter {
    cache: Arc<MessageCache>,
    thread: Option<JoinHandle<(Option<BagMetadata>, Option<RecorderError>)>>,
}

impl CacheWriter {
    /// Starts the writer thread for `writer`.
    pub fn spawn(
        writer: BagWriter,
        cache: Arc<MessageCache>,
        registry: Arc<TopicRegistry>,
    ) -> Result<Self> {
        let c = cache.clone();
        let thread = std::thread::Builder::new()
            .name("rosbag2_writer".into())
            .spawn(move || WriterLoop::new(writer, c, registry).run())
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
    created: usize,
    failure: Option<Arc<RecorderError>>,
    reported_drops: HashMap<String, u64>,
    last_report: Instant,
}

impl WriterLoop {
    fn new(writer: BagWriter, cache: Arc<MessageCache>, registry: Arc<TopicRegistry>) -> Self {
        Self {
            writer: Some(writer),
            cache,
            registry,
            created: 0,
            failure: None,
            reported_drops: HashMap::new(),
            last_report: Instant::now(),
        }
    }

    fn run(mut self) -> (Option<BagMetadata>, Option<RecorderError>) {
        let mut batch = Vec::new();
        loop {
            let (commands, done) = self.cache.take(&mut batch);
            if let Err(e) = self.write(&batch) {
                self.fail(e);
            }
            batch.clear();
            for command in commands {
                self.execute(command);
            }
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

    /// Writes a batch; on failure counts every message not written as dropped.
    fn write(&mut self, batch: &[SerializedMessage]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let new_topics = self.registry.since(self.created);
        let (Some(writer), None) = (self.writer.as_mut(), &self.failure) else {
            self.count_dropped(batch);
            return Ok(());
        };
        let mut written = 0;
        let result = (|| -> Result<()> {
            for topic in &new_topics {
                writer.create_topic(&topic.metadata, None)?;
            }
            for message in batch {
                writer.write(message)?;
                written += 1;
            }
            Ok(())
        })();
        match result {
            Ok(()) => self.created += new_topics.len(),
            Err(_) => self.count_dropped(&batch[written..]),
        }
        result
    }

    fn fail(&mut self, error: RecorderError) {
        if self.failure.is_none() {
            log::error!("recording failed: {error}; no more messages are written");
            let error = Arc::new(error);
            self.cache.state.lock().failed = Some(error.clone());
            self.failure = Some(error);
        }
    }

    fn count_dropped(&self, messages: &[SerializedMessage]) {
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

    fn execute(&mut self, command: Command) {
        let (result, reply) = match command {
            Command::Split(reply) => (self.writer().and_then(|w| Ok(w.split()?)), reply),
            Command::Flush(reply) => (self.writer().and_then(|w| Ok(w.flush()?)), reply),
        };
        let result = match result {
            Err(e @ RecorderError::Storage(_)) => {
                self.fail(e);
                Err(self
                    .writer()
                    .err()
                    .unwrap_or(RecorderError::WriterStopped("bag writer")))
            }
            other => other,
        };
        let _ = reply.send(result);
    }

    fn report_drops(&mut self, force: bool) {
        if !force && self.last_report.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last_report = Instant::now();
        for topic in self.registry.all() {
            let dropped = topic.counters.dropped.load(Ordering::Relaxed);
            let reported = self
                .reported_drops
                .entry(topic.metadata.name.clone())
                .or_default();
            if dropped > *reported {
                let why = if self.failure.is_some() {
                    "the bag can no longer be written"
                } else {
                    "the disk is not keeping up"
                };
                log::warn!(
                    "topic '{}': {} messages dropped ({} in total): {why}",
                    topic.metadata.name,
                    dropped - *reported,
                    dropped
                );
                *reported = dropped;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(len: usize) -> SerializedMessage {
        SerializedMessage::new(Arc::from("/t"), 0, vec![0u8; len])
    }

    #[test]
    fn a_full_cache_drops_and_counts_instead_of_blocking() {
        let cache = MessageCache::new(250);
        let counters = TopicCounters::default();
        cache.push(message(1000), &counters); // an empty cache takes any message
        let mut spare = Vec::new();
        cache.take(&mut spare);
        assert_eq!(spare.len(), 1);
        spare.clear();
        for _ in 0..3 {
            cache.push(message(100), &counters);
        }
        assert_eq!(counters.dropped.load(Ordering::Relaxed), 1);
        cache.take(&mut spare);
        assert_eq!(spare.len(), 2, "the writer gets the full buffer");
        cache.push(message(100), &counters);
        assert_eq!(
            counters.dropped.load(Ordering::Relaxed),
            1,
            "swapped: room again"
        );
        cache.state.lock().failed = Some(Arc::new(RecorderError::WriterStopped("test writer")));
        cache.push(message(1), &counters);
        assert_eq!(counters.dropped.load(Ordering::Relaxed), 2);
    }
}
