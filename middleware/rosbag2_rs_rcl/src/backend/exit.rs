//! The process's exit and rcl: `exit()` runs the C++ static destructors of the rmw's middleware
//! (Fast DDS's participant factory, ...) while other threads may still be finalising a node (the
//! last reference to a node dropped on a signal thread while `main` returns) or waiting in its
//! wait set. An `atexit` handler, registered after the first node's creation (so it runs before
//! those destructors), lets a teardown that is under way finish (bounded), then marks the process as
//! exiting: from then on no finaliser calls into rcl (the process's end frees everything), and the
//! wait threads leave `rcl_wait` and stop.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Once, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use super::Executor;
use rosbag2_rs_middleware::on_graph;

/// Set once the process exits.
static EXITING: AtomicBool = AtomicBool::new(false);
/// Held (shared) by every rcl call of a finaliser and by the wait threads' rounds; taken
/// exclusively by the exit handler, which so waits for them.
static RCL_CALLS: RwLock<()> = RwLock::new(());
/// When a finaliser last ran (ms on [`clock`]).
static LAST_TEARDOWN_MS: AtomicI64 = AtomicI64::new(i64::MIN);
/// Wait threads inside `rcl_wait`.
static IN_WAIT: AtomicUsize = AtomicUsize::new(0);
/// The wait sets' owners, to wake at exit.
static EXECUTORS: Mutex<Vec<Weak<Executor>>> = Mutex::new(Vec::new());

/// How long the exit handler lets a teardown under way finish.
const TEARDOWN_GRACE: Duration = Duration::from_secs(2);
/// A teardown counts as under way when a finaliser ran this recently.
const TEARDOWN_ACTIVE: Duration = Duration::from_millis(100);
/// How long the exit handler waits for the rcl calls in progress and for the wait threads to
/// leave `rcl_wait`.
const CALLS_GRACE: Duration = Duration::from_secs(1);

fn clock() -> i64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as i64
}

extern "C" fn on_exit() {
    // A node being finalised on another thread: let it finish (it leaves the graph at once).
    let deadline = Instant::now() + TEARDOWN_GRACE;
    while on_graph::nodes() > 0
        && clock() - LAST_TEARDOWN_MS.load(Ordering::Acquire) < TEARDOWN_ACTIVE.as_millis() as i64
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    {
        let _exclusive = RCL_CALLS.try_write_for(CALLS_GRACE);
        EXITING.store(true, Ordering::Release);
    }
    for executor in EXECUTORS.lock().iter().filter_map(Weak::upgrade) {
        executor.wake.trigger_unguarded();
    }
    let deadline = Instant::now() + CALLS_GRACE;
    while IN_WAIT.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Registers the exit handler (once; call after the first node's creation).
pub(crate) fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: `on_exit` is a plain `extern "C" fn()` that does not unwind.
        if unsafe { libc::atexit(on_exit) } != 0 {
            log::debug!("rcl: cannot register the exit handler");
        }
    });
}

/// Tracks `executor` for the exit handler.
pub(crate) fn track(executor: Weak<Executor>) {
    let mut all = EXECUTORS.lock();
    all.retain(|e| e.strong_count() > 0);
    all.push(executor);
}

/// Runs `f`, an rcl call of a finaliser, unless the process is exiting.
pub(crate) fn teardown<R>(f: impl FnOnce() -> R) -> Option<R> {
    let _shared = RCL_CALLS.read_recursive();
    if EXITING.load(Ordering::Acquire) {
        return None;
    }
    LAST_TEARDOWN_MS.store(clock(), Ordering::Release);
    Some(f())
}

/// A wait thread's round's hold: `None` when the process is exiting (the thread must stop).
pub(crate) fn round() -> Option<parking_lot::RwLockReadGuard<'static, ()>> {
    let shared = RCL_CALLS.read_recursive();
    (!EXITING.load(Ordering::Acquire)).then_some(shared)
}

/// Counts a wait thread inside `rcl_wait` while the guard lives.
pub(crate) struct InWait;

impl InWait {
    pub fn enter() -> Self {
        IN_WAIT.fetch_add(1, Ordering::AcqRel);
        InWait
    }
}

impl Drop for InWait {
    fn drop(&mut self) {
        IN_WAIT.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether the process is exiting.
pub(crate) fn exiting() -> bool {
    EXITING.load(Ordering::Acquire)
}
