//! The read-ahead queue: a thread that reads the bag into a bounded queue ahead of playback, so
//! that storage latency (decompression, SQLite pages) never delays a publication. A seek bumps a
//! generation number: the reader repositions and everything queued under an older generation is
//! discarded by the consumer.
//!
//! With [`MessageOrder::Sent`] the reader keeps a window of messages (the queue's capacity)
//! sorted by send time and hands out the earliest, its receive time replaced by its send time:
//! the time playback follows.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Select, Sender, TryRecvError, TrySendError};
use rosbag2_rs_storage::{SequentialReader, SerializedMessage, StorageError};

use super::MessageOrder;

/// What the reader produced.
pub(crate) enum Item {
    /// The next message, and the file it came from.
    Message(SerializedMessage, Option<Arc<Path>>),
    /// No more messages until the next seek.
    End,
    /// The bag could not be read further.
    Failed(StorageError),
    /// The reading thread is gone.
    Stopped,
}

/// An item, tagged with the seek generation it was read under.
pub(crate) struct Prefetched {
    pub generation: u64,
    pub item: Item,
}

/// The consumer's end of the read-ahead queue.
pub(crate) struct ReadAhead {
    seeks: Sender<(u64, i64)>,
    queue: Receiver<Prefetched>,
    generation: u64,
    thread: Option<JoinHandle<SequentialReader>>,
}

impl ReadAhead {
    /// Starts reading from `reader`'s current position, up to `capacity` messages ahead, in
    /// `order`.
    pub fn start(reader: SequentialReader, capacity: usize, order: MessageOrder) -> Self {
        let (seeks, seek_rx) = crossbeam_channel::unbounded();
        let (queue_tx, queue) = crossbeam_channel::bounded(capacity.max(1));
        let window = match order {
            MessageOrder::Received => None,
            MessageOrder::Sent => Some(SendOrder::new(capacity.max(1))),
        };
        let thread = std::thread::Builder::new()
            .name("player-read-ahead".into())
            .spawn(move || read_loop(reader, window, seek_rx, queue_tx))
            .ok();
        Self {
            seeks,
            queue,
            generation: 0,
            thread,
        }
    }

    /// Repositions the reader at `time` (ns); items read before are dropped by [`next`](Self::next).
    pub fn seek(&mut self, time: i64) {
        self.generation += 1;
        let _ = self.seeks.send((self.generation, time));
    }

    /// The next item of the current generation (blocks while the reader catches up).
    pub fn next(&self) -> Item {
        loop {
            match self.queue.recv() {
                Ok(p) if p.generation == self.generation => return p.item,
                Ok(_) => continue,
                Err(_) => return Item::Stopped,
            }
        }
    }

    /// Stops the reader thread and hands the reader back.
    pub fn finish(mut self) -> Option<SequentialReader> {
        let thread = self.thread.take()?;
        drop(self.seeks);
        drop(self.queue);
        thread.join().ok()
    }
}

/// A message in the send-order window, ordered by send time, then by reading order.
struct Windowed {
    key: (i64, u64),
    message: SerializedMessage,
    file: Option<Arc<Path>>,
}

impl PartialEq for Windowed {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Windowed {}
impl PartialOrd for Windowed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Windowed {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// Sorts by send time within a window of `size` messages.
pub(crate) struct SendOrder {
    size: usize,
    heap: BinaryHeap<Reverse<Windowed>>,
    /// Messages read since the start, to keep equal send times in reading order.
    read: u64,
    /// The reader has no more messages (until the next seek).
    drained: bool,
}

impl SendOrder {
    /// An empty window of `size` messages.
    pub fn new(size: usize) -> Self {
        Self {
            size,
            heap: BinaryHeap::new(),
            read: 0,
            drained: false,
        }
    }

    /// Forgets the window (after a seek).
    fn clear(&mut self) {
        self.heap.clear();
        self.drained = false;
    }

    /// Whether another message must be read before the earliest can be handed out.
    fn wants_more(&self) -> bool {
        !self.drained && self.heap.len() < self.size
    }

    fn push(&mut self, message: SerializedMessage, file: Option<Arc<Path>>) {
        self.read += 1;
        self.heap.push(Reverse(Windowed {
            key: (message.send_timestamp, self.read),
            message,
            file,
        }));
    }

    /// The earliest sent message, timed by its send time.
    fn pop(&mut self) -> Option<(SerializedMessage, Option<Arc<Path>>)> {
        let Reverse(Windowed {
            mut message, file, ..
        }) = self.heap.pop()?;
        message.recv_timestamp = message.send_timestamp;
        Some((message, file))
    }
}

/// The reader thread's state.
struct Producer {
    reader: SequentialReader,
    /// Send order: the sorting window.
    window: Option<SendOrder>,
    generation: u64,
    last_file: Option<Arc<Path>>,
    /// The reader returned its last item; wait for a seek.
    exhausted: bool,
    /// Read but not yet queued.
    pending: Option<Prefetched>,
}

impl Producer {
    fn seek(&mut self, (generation, time): (u64, i64)) {
        self.generation = generation;
        self.pending = None;
        self.exhausted = false;
        if let Some(window) = &mut self.window {
            window.clear();
        }
        if let Err(e) = self.reader.seek(time) {
            self.push(Item::Failed(e));
        }
    }

    fn push(&mut self, item: Item) {
        self.exhausted = !matches!(item, Item::Message(..));
        self.pending = Some(Prefetched {
            generation: self.generation,
            item,
        });
    }

    fn read(&mut self) {
        let item = match self.window.take() {
            None => self.read_one(),
            Some(mut window) => {
                let mut item = None;
                while window.wants_more() {
                    match self.read_one() {
                        Item::Message(message, file) => window.push(message, file),
                        Item::End => window.drained = true,
                        failed => {
                            item = Some(failed);
                            break;
                        }
                    }
                }
                let item = item.unwrap_or_else(|| match window.pop() {
                    Some((message, file)) => Item::Message(message, file),
                    None => Item::End,
                });
                self.window = Some(window);
                item
            }
        };
        self.push(item);
    }

    fn read_one(&mut self) -> Item {
        match self.reader.read_next() {
            Ok(Some(message)) => {
                if let Some(path) = self.reader.current_file() {
                    if self.last_file.as_deref() != Some(path) {
                        self.last_file = Some(Arc::from(path));
                    }
                }
                Item::Message(message, self.last_file.clone())
            }
            Ok(None) => Item::End,
            Err(e) => Item::Failed(e),
        }
    }
}

fn read_loop(
    reader: SequentialReader,
    window: Option<SendOrder>,
    seeks: Receiver<(u64, i64)>,
    queue: Sender<Prefetched>,
) -> SequentialReader {
    let mut p = Producer {
        reader,
        window,
        generation: 0,
        last_file: None,
        exhausted: false,
        pending: None,
    };
    loop {
        // A seek takes effect before anything else is queued.
        match seeks.try_recv() {
            Ok(seek) => {
                p.seek(seek);
                continue;
            }
            Err(TryRecvError::Disconnected) => return p.reader,
            Err(TryRecvError::Empty) => {}
        }
        let Some(item) = p.pending.take() else {
            if !p.exhausted {
                p.read();
                continue;
            }
            // Nothing to read until the next seek.
            match seeks.recv() {
                Ok(seek) => p.seek(seek),
                Err(_) => return p.reader,
            }
            continue;
        };
        match queue.try_send(item) {
            Ok(()) => {}
            Err(TrySendError::Disconnected(_)) => return p.reader,
            Err(TrySendError::Full(item)) => {
                // Queue full: wait for room or for a seek, whichever comes first.
                let mut select = Select::new();
                let send = select.send(&queue);
                select.recv(&seeks);
                let op = select.select();
                if op.index() == send {
                    if op.send(&queue, item).is_err() {
                        return p.reader;
                    }
                } else {
                    match op.recv(&seeks) {
                        Ok(seek) => p.seek(seek),
                        Err(_) => return p.reader,
                    }
                }
            }
        }
    }
}
