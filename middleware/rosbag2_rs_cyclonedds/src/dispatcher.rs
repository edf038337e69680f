//! One background thread per node that waits on every reader of the node (a Cyclone waitset
//! with a read condition per reader), hands each reader's samples to its handler, and runs
//! periodic work (replies waiting for their client, see [`super::service`]).
//!
//! Each handler takes at most [`TAKES_PER_ROUND`] samples per round: a reader with samples left
//! keeps its read condition triggered, so the next wait returns at once with it and with every
//! other reader that has samples. A writer faster than the takes cannot hold the thread: the
//! node's services and its other topics get their turn every round. A handler that panics is
//! caught, counted and logged; the thread goes on with the others.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cyclors::*;
use parking_lot::Mutex;

use super::sys::{check, Entity};
use rosbag2_rs_middleware::error::{Result, TransportError};

/// The most samples a handler takes from its reader in one round of the dispatcher.
pub const TAKES_PER_ROUND: usize = 256;

/// A reader and what to do with its samples.
pub trait Drain: Send {
    /// Takes and handles the available samples, at most [`TAKES_PER_ROUND`] (the rest wait for
    /// the next round).
    fn drain(&mut self);
    /// Periodic work (about every dispatcher period).
    fn tick(&mut self) {}
}

type Entry = Arc<Mutex<Box<dyn Drain>>>;

struct Shared {
    entries: Mutex<HashMap<dds_attach_t, Entry>>,
    waitset: Entity,
    stop: AtomicBool,
    next: AtomicIsize,
    /// Handler calls that panicked (caught).
    panics: AtomicU64,
}

impl Shared {
    fn guarded(&self, what: &str, call: impl FnOnce()) {
        rosbag2_rs_middleware::guard::guarded(&self.panics, &format!("DDS {what} handler"), call);
    }
}

/// The dispatcher thread of one node.
pub struct Dispatcher {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Keeps a registered reader's handler alive; dropping it detaches the reader and drops the
/// handler (and with it the reader).
pub struct Registration {
    shared: Arc<Shared>,
    token: dds_attach_t,
    condition: Entity,
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: detaching a condition that is not attached only returns an error.
        unsafe { dds_waitset_detach(self.shared.waitset.handle(), self.condition.handle()) };
        // Dropped after the lock is released: a handler can own the last reference to its node,
        // whose dispatcher then stops (and needs the lock to get there).
        let handler = self.shared.entries.lock().remove(&self.token);
        drop(handler);
    }
}

impl Dispatcher {
    /// Starts the thread for the readers of `participant`; handlers' `tick` run about every
    /// `period`.
    pub fn start(participant: dds_entity_t, period: Duration) -> Result<Self> {
        // SAFETY: a valid participant handle.
        let waitset = Entity::new(
            unsafe { dds_create_waitset(participant) },
            "cannot create a DDS waitset",
        )?;
        let shared = Arc::new(Shared {
            entries: Mutex::new(HashMap::new()),
            waitset,
            stop: AtomicBool::new(false),
            next: AtomicIsize::new(1),
            panics: AtomicU64::new(0),
        });
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rosbag2-rs-dds".into())
            .spawn(move || run(&thread_shared, period))
            .map_err(|source| TransportError::Spawn {
                what: "DDS",
                source,
            })?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Watches `reader` for samples and hands them to `drain` (which owns the reader).
    pub fn register(&self, reader: dds_entity_t, drain: Box<dyn Drain>) -> Result<Registration> {
        let token = self.shared.next.fetch_add(1, Ordering::Relaxed);
        // SAFETY: a valid reader handle.
        let condition = Entity::new(
            unsafe { dds_create_readcondition(reader, DDS_ANY_STATE) },
            "cannot watch a DDS reader",
        )?;
        let entry: Entry = Arc::new(Mutex::new(drain));
        self.shared.entries.lock().insert(token, entry.clone());
        // SAFETY: valid waitset and condition handles.
        let attached =
            unsafe { dds_waitset_attach(self.shared.waitset.handle(), condition.handle(), token) };
        check(attached, "cannot watch a DDS reader")?;
        // Samples that arrived before the condition existed trigger it too; drain them now.
        self.shared.guarded("reader", || entry.lock().drain());
        Ok(Registration {
            shared: self.shared.clone(),
            token,
            condition,
        })
    }
}

fn run(shared: &Shared, period: Duration) {
    let mut triggered: Vec<dds_attach_t> = vec![0; 256];
    let mut last_tick = Instant::now();
    while !shared.stop.load(Ordering::Relaxed) {
        // SAFETY: the buffer holds `triggered.len()` entries.
        let n = unsafe {
            dds_waitset_wait(
                shared.waitset.handle(),
                triggered.as_mut_ptr(),
                triggered.len(),
                period.as_nanos() as i64,
            )
        };
        if n < 0 {
            log::error!("DDS waitset failed ({n}); the node stops receiving");
            break;
        }
        for token in &triggered[..(n as usize).min(triggered.len())] {
            let entry = shared.entries.lock().get(token).cloned();
            if let Some(entry) = entry {
                shared.guarded("reader", || entry.lock().drain());
            }
        }
        if last_tick.elapsed() >= period {
            last_tick = Instant::now();
            let entries: Vec<Entry> = shared.entries.lock().values().cloned().collect();
            for entry in entries {
                shared.guarded("periodic", || entry.lock().tick());
            }
        }
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        // SAFETY: a valid waitset handle; the trigger wakes the thread.
        unsafe { dds_waitset_set_trigger(self.shared.waitset.handle(), true) };
        if let Some(thread) = self.thread.take() {
            // The thread itself may drop the last reference to its node; it then ends by itself.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}
