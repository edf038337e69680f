//! One background thread that waits on every DDS reader of a node (mio) and hands each sample
//! to its handler, and runs periodic work (graph watching).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mio::{Events, Interest, Poll, Registry, Token};
use parking_lot::Mutex;

use crate::error::{Result, TransportError};

/// A reader and what to do with its samples.
pub trait Drain: Send {
    /// Takes and handles every available sample.
    fn drain(&mut self);
    /// The reader, as a source of readable events.
    fn source(&mut self) -> &mut dyn mio::event::Source;
}

type Entry = Arc<Mutex<Box<dyn Drain>>>;

struct Shared {
    entries: Mutex<HashMap<Token, Entry>>,
    registry: Registry,
    stop: AtomicBool,
    next: AtomicUsize,
}

/// The dispatcher thread of one node.
pub struct Dispatcher {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Keeps a registered reader alive; dropping it deregisters and drops the reader.
pub struct Registration {
    shared: Arc<Shared>,
    token: Token,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let entry = self.shared.entries.lock().remove(&self.token);
        if let Some(entry) = entry {
            let _ = self.shared.registry.deregister(entry.lock().source());
        }
    }
}

impl Dispatcher {
    /// Starts the thread; `tick` runs about every `period`.
    pub fn start(period: Duration, mut tick: impl FnMut() + Send + 'static) -> Result<Self> {
        let err = |e: std::io::Error| {
            TransportError::Middleware(format!("cannot create the event poll: {e}"))
        };
        let mut poll = Poll::new().map_err(err)?;
        let registry = poll.registry().try_clone().map_err(err)?;
        let shared = Arc::new(Shared {
            entries: Mutex::new(HashMap::new()),
            registry,
            stop: AtomicBool::new(false),
            next: AtomicUsize::new(1),
        });
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rosbag2-rs-dds".into())
            .spawn(move || {
                let mut events = Events::with_capacity(256);
                let mut last_tick = std::time::Instant::now();
                while !thread_shared.stop.load(Ordering::Relaxed) {
                    if let Err(e) = poll.poll(&mut events, Some(period)) {
                        if e.kind() != std::io::ErrorKind::Interrupted {
                            log::error!("DDS event poll failed: {e}");
                            break;
                        }
                    }
                    for event in events.iter() {
                        let entry = thread_shared.entries.lock().get(&event.token()).cloned();
                        if let Some(entry) = entry {
                            entry.lock().drain();
                        }
                    }
                    if last_tick.elapsed() >= period {
                        last_tick = std::time::Instant::now();
                        tick();
                    }
                }
            })
            .map_err(|e| TransportError::Middleware(format!("cannot start the DDS thread: {e}")))?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Registers a reader (owned by `drain`) for readable events.
    pub fn register(&self, drain: Box<dyn Drain>) -> Result<Registration> {
        let token = Token(self.shared.next.fetch_add(1, Ordering::Relaxed));
        let entry: Entry = Arc::new(Mutex::new(drain));
        self.shared
            .registry
            .register(entry.lock().source(), token, Interest::READABLE)
            .map_err(|e| TransportError::Middleware(format!("cannot watch a DDS reader: {e}")))?;
        self.shared.entries.lock().insert(token, entry.clone());
        // Samples that arrived before registration produce no event.
        entry.lock().drain();
        Ok(Registration {
            shared: self.shared.clone(),
            token,
        })
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
