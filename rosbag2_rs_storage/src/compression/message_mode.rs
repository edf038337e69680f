//! Message mode: every message's data is one compressed frame inside an ordinary storage file.
//!
//! Reading wraps a storage reader and decompresses each message it returns
//! ([`DecompressingReader`]). Writing compresses each message before it is stored
//! ([`MessageCompressor`]), on the writing thread or on a pool of threads; messages are stored
//! in the order they were written either way.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::{
    set_thread_priority, zstd, AdaptedReader, CompressionFormat, CompressionOptions, ReaderAdapter,
};
use crate::error::{Result, StorageError};
use crate::message::SerializedMessage;
use crate::storage::plugin::StorageReader;

/// Decompresses one message's data.
pub fn decompress(format: CompressionFormat, data: &[u8]) -> std::io::Result<Vec<u8>> {
    match format {
        CompressionFormat::Zstd => zstd::decompress_message(data),
        other => Err(not_a_compressor(other)),
    }
}

/// Compresses one message's data.
pub fn compress(format: CompressionFormat, data: &[u8]) -> std::io::Result<Vec<u8>> {
    match format {
        CompressionFormat::Zstd => zstd::compress_message(data),
        other => Err(not_a_compressor(other)),
    }
}

/// A format that is no compressor of rosbag2's (its writer checks first, so this is a bug).
fn not_a_compressor(format: CompressionFormat) -> std::io::Error {
    std::io::Error::other(
        format
            .check_compressor()
            .err()
            .map_or_else(String::new, |e| e.to_string()),
    )
}

/// A storage reader whose messages' data is decompressed as it is read.
pub type DecompressingReader = AdaptedReader<Decompress>;

impl DecompressingReader {
    /// Wraps `inner`, whose messages are compressed in `format`.
    pub fn new(inner: Box<dyn StorageReader>, format: CompressionFormat) -> Self {
        Self::wrap(inner, Decompress(format))
    }
}

/// The [`ReaderAdapter`] of a [`DecompressingReader`]: decompresses each message's data.
pub struct Decompress(CompressionFormat);

impl ReaderAdapter for Decompress {
    fn message(&self, path: &Path, mut message: SerializedMessage) -> Result<SerializedMessage> {
        let data = decompress(self.0, &message.data).map_err(|source| {
            StorageError::DecompressMessage {
                path: path.to_path_buf(),
                topic: message.topic.to_string(),
                recv_timestamp: message.recv_timestamp,
                format: self.0,
                source,
            }
        })?;
        message.data = Bytes::from(data);
        Ok(message)
    }
}

type Compressed = std::io::Result<SerializedMessage>;

fn thread_stopped() -> std::io::Error {
    std::io::Error::other("a compression thread stopped")
}
type Job = (SerializedMessage, std::sync::mpsc::SyncSender<Compressed>);

/// Compresses messages in write order, on the caller's thread (one thread) or on a pool.
pub struct MessageCompressor {
    format: CompressionFormat,
    pool: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    in_flight: VecDeque<(SerializedMessage, Receiver<Compressed>)>,
    limit: usize,
    busy: Duration,
}

impl MessageCompressor {
    /// A compressor for `options` (see [`CompressionOptions::threads`] and
    /// [`CompressionOptions::queue_size`]).
    pub fn new(options: &CompressionOptions) -> std::io::Result<Self> {
        let threads = options.effective_threads();
        let mut compressor = Self {
            format: options.format,
            pool: None,
            threads: Vec::new(),
            in_flight: VecDeque::new(),
            limit: threads + options.queue_size,
            busy: Duration::ZERO,
        };
        if threads > 1 || options.threads_priority.is_some() {
            let (jobs, job_rx) = channel::<Job>();
            let job_rx = Arc::new(Mutex::new(job_rx));
            for i in 0..threads {
                let job_rx = Arc::clone(&job_rx);
                let (format, priority) = (options.format, options.threads_priority);
                compressor.threads.push(
                    std::thread::Builder::new()
                        .name(format!("msg-compress-{i}"))
                        .spawn(move || {
                            if let Some(priority) = priority {
                                set_thread_priority(priority);
                            }
                            loop {
                                let job = job_rx.lock().map(|rx| rx.recv());
                                let Ok(Ok((mut message, reply))) = job else {
                                    return;
                                };
                                let result = compress(format, &message.data).map(|data| {
                                    message.data = Bytes::from(data);
                                    message
                                });
                                let _ = reply.send(result);
                            }
                        })?,
                );
            }
            compressor.pool = Some(jobs);
        }
        Ok(compressor)
    }

    /// How long the caller's thread has spent on compression so far: compressing (one
    /// thread) or waiting for the pool (a full queue, a drain). The writer compares it with
    /// its own busy time to tell a CPU-bound recording from a disk-bound one.
    pub fn busy(&self) -> Duration {
        self.busy
    }

    /// Hands `message` over for compression; returns the messages now compressed, in write
    /// order (waits for the oldest when the queue is full).
    pub fn push(&mut self, message: SerializedMessage) -> Vec<(SerializedMessage, Compressed)> {
        let Some(pool) = &self.pool else {
            let started = Instant::now();
            let result = compress(self.format, &message.data).map(|data| SerializedMessage {
                data: Bytes::from(data),
                ..message.clone()
            });
            self.busy += started.elapsed();
            return vec![(message, result)];
        };
        let (reply, result) = sync_channel(1);
        if let Err(err) = pool.send((message.clone(), reply)) {
            let (message, _) = err.0;
            let failed = Err(std::io::Error::other(
                "the compression threads have stopped",
            ));
            return vec![(message, failed)];
        }
        self.in_flight.push_back((message, result));
        let mut out = Vec::new();
        while let Some((_, front)) = self.in_flight.front() {
            let done = if self.in_flight.len() > self.limit {
                let started = Instant::now();
                let done = front.recv().unwrap_or_else(|_| Err(thread_stopped()));
                self.busy += started.elapsed();
                done
            } else {
                match front.try_recv() {
                    Ok(done) => done,
                    Err(TryRecvError::Disconnected) => Err(thread_stopped()),
                    Err(TryRecvError::Empty) => break,
                }
            };
            if let Some((original, _)) = self.in_flight.pop_front() {
                out.push((original, done));
            }
        }
        out
    }

    /// Waits for every message handed over and returns them compressed, in write order.
    pub fn drain(&mut self) -> Vec<(SerializedMessage, Compressed)> {
        let started = Instant::now();
        let done = self
            .in_flight
            .drain(..)
            .map(|(original, result)| {
                let done = result.recv().unwrap_or_else(|_| Err(thread_stopped()));
                (original, done)
            })
            .collect();
        self.busy += started.elapsed();
        done
    }
}

impl Drop for MessageCompressor {
    fn drop(&mut self) {
        self.pool = None;
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
