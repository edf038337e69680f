//! Watching `/clock` on the graph from a thread of its own: how many nodes publish it (more than
//! one time source is a mistake the clocks warn about: two sources make time jump) and whether a new subscriber
//! matched one's own `/clock` publisher (it gets the current time at once instead of waiting
//! for the next tick).

use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{select, Receiver, Sender};

use crate::clock_topic::CLOCK_TOPIC;
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::{GraphEvent, Middleware};

/// How often the matched subscriptions of one's own publisher are counted (real time: this is
/// about other processes joining).
const POLL: Duration = Duration::from_millis(20);

/// What a [`ClockWatch`] reports to.
pub(crate) struct ClockWatchHooks {
    /// Called with the number of `/clock` publishers on the graph, at start and whenever one
    /// appears.
    pub publishers: Box<dyn Fn(usize) + Send>,
    /// One's own `/clock` publisher, if any.
    pub subscriptions: Option<MatchedSubscriptions>,
}

/// The number of subscriptions matched by one's own `/clock` publisher (0 while there is
/// none), and what to do when it grows.
pub(crate) struct MatchedSubscriptions {
    /// Counts them.
    pub count: Box<dyn Fn() -> usize + Send>,
    /// Called when the count grew.
    pub on_new: Box<dyn Fn() + Send>,
}

/// A running watch; dropping it stops the thread.
pub(crate) struct ClockWatch {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// The number of `/clock` publishers the graph shows.
fn clock_publishers(middleware: &dyn Middleware) -> usize {
    middleware
        .topics()
        .iter()
        .find(|t| t.name == CLOCK_TOPIC)
        .map_or(0, |t| t.publishers.len())
}

impl ClockWatch {
    /// Starts watching `/clock` on `middleware`'s graph.
    pub(crate) fn start(
        middleware: std::sync::Arc<dyn Middleware>,
        hooks: ClockWatchHooks,
    ) -> Result<Self> {
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let events = middleware.graph_events();
        // Counted before this returns: a subscriber that matches right after is a new one.
        let matched = hooks.subscriptions.as_ref().map_or(0, |s| (s.count)());
        let thread = std::thread::Builder::new()
            .name("clock-watch".into())
            .spawn(move || watch(middleware.as_ref(), &hooks, &events, &stopped, matched))
            .map_err(|source| TransportError::Spawn {
                what: "/clock watch",
                source,
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

fn watch(
    middleware: &dyn Middleware,
    hooks: &ClockWatchHooks,
    events: &Receiver<GraphEvent>,
    stopped: &Receiver<()>,
    mut matched: usize,
) {
    (hooks.publishers)(clock_publishers(middleware));
    let mut events = events.clone();
    loop {
        select! {
            recv(stopped) -> _ => return,
            recv(events) -> event => match event {
                Ok(GraphEvent::PublisherAppeared { topic, .. }) if topic == CLOCK_TOPIC => {
                    (hooks.publishers)(clock_publishers(middleware));
                }
                Ok(_) => {}
                // The middleware reports no more graph changes.
                Err(_) => events = crossbeam_channel::never(),
            },
            default(POLL) => {}
        }
        if let Some(own) = &hooks.subscriptions {
            let now = (own.count)();
            if now > matched {
                (own.on_new)();
            }
            matched = now;
        }
    }
}

impl Drop for ClockWatch {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
