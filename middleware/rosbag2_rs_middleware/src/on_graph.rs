//! The nodes of this process that are still on the graph. A node's last reference can be dropped
//! on another thread than `main`'s (a dispatcher thread running a handler's last tick, a signal
//! thread) just as `main` returns; `exit()` would then cut its goodbye to the graph short, and
//! peers would see a ghost until its lease ends. [`wait_for_nodes_to_leave`] lets `main` wait for
//! that teardown before it exits.

use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

static ON_GRAPH: Mutex<usize> = Mutex::new(0);
static LEFT: Condvar = Condvar::new();

/// Counts one node (participant, session, rcl context) as on the graph while it lives. A backend
/// holds it where it drops after the node has left the graph.
#[derive(Debug)]
pub struct OnGraph(());

impl OnGraph {
    /// A node joins the graph.
    pub fn enter() -> Self {
        *ON_GRAPH.lock() += 1;
        OnGraph(())
    }
}

impl Drop for OnGraph {
    fn drop(&mut self) {
        *ON_GRAPH.lock() -= 1;
        LEFT.notify_all();
    }
}

/// How many nodes of this process are on the graph.
pub fn nodes() -> usize {
    *ON_GRAPH.lock()
}

/// Waits until every node of this process has left the graph, at most `timeout`; whether they
/// all did. Call it at the end of `main` (and before `std::process::exit`), once the nodes it
/// owns are dropped.
pub fn wait_for_nodes_to_leave(timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut on_graph = ON_GRAPH.lock();
    while *on_graph > 0 {
        if LEFT.wait_until(&mut on_graph, deadline).timed_out() {
            return *on_graph == 0;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_ends_when_the_last_node_leaves_on_another_thread() {
        let node = OnGraph::enter();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            rx.recv().unwrap();
            drop(node);
        });
        assert!(!wait_for_nodes_to_leave(Duration::from_millis(1)));
        tx.send(()).unwrap();
        assert!(wait_for_nodes_to_leave(Duration::from_secs(60)));
        other.join().unwrap();
    }
}
