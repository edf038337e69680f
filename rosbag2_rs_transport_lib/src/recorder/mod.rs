//! The recorder: subscribes to the selected topics as they appear on the graph, with a QoS
//! adapted to their publishers, and writes every message to a bag through a double-buffered
//! cache and a writer thread, so that the subscriptions never wait on the disk. In snapshot mode
//! it keeps per-topic ring buffers instead and writes them to a new bag on a trigger.
//!
//! ```no_run
//! use std::sync::Arc;
//! use rosbag2_rs_transport_lib::InProcessBus;
//! use rosbag2_rs_transport_lib::{RecordOptions, Recorder, TopicSelection};
//!
//! let bus = InProcessBus::new();
//! let node = Arc::new(bus.node("rosbag2_recorder", "/")?);
//! let recorder = Recorder::start(node, RecordOptions {
//!     uri: "my_bag".into(),
//!     selection: TopicSelection::all(),
//!     ..Default::default()
//! })?;
//! // ... messages arrive ...
//! let summary = recorder.stop()?;
//! print!("{}", summary.to_text());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cache;
mod discovery;
mod error;
mod options;
mod ring;
mod services;
mod silence;
mod snapshot;
mod snapshot_control;
mod snapshot_writer;
mod stats;
mod time;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use parking_lot::Mutex;
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_interfaces::rosbag2_interfaces::msg::WriteSplitEvent;
use rosbag2_rs_interfaces::{try_to_cdr, MessageType};
use rosbag2_rs_storage::{
    BagWriter, BagWriterOptions, QosProfile, SerializedMessage, TopicMetadata,
};

pub use discovery::{
    adapt_request_to_offers, is_hidden, is_service_event_topic, service_event_topic, TopicPlan,
    TopicSelection, MIN_SUBSCRIPTION_DEPTH,
};
pub use error::{RecorderError, Result};
pub use options::{
    RecordOptions, SnapshotLimits, SnapshotTrigger, DEFAULT_MAX_CACHE_SIZE, DEFAULT_MIN_FREE_SPACE,
    DEFAULT_SNAPSHOT_DURATION_NS,
};
pub use stats::{
    DropCause, RecordSummary, TopicCounters, TopicSummary, DROPPED_BEFORE_CLOCK_KEY,
    DROPPED_MESSAGES_KEY, LOST_MESSAGES_KEY, SILENCES_KEY,
};

use cache::{CacheWriter, Command, MessageCache};
use discovery::{plan_topic, CompiledSelection};
use snapshot::SnapshotBuffers;
use snapshot_control::PendingSnapshot;
use snapshot_writer::{check_output, SnapshotJob, SnapshotWriter};
use stats::{RecordedTopic, TopicRegistry};
use time::{Deliver, RecordTime, Target};

use crate::clock_watch::{ClockWatch, ClockWatchHooks};

use crate::middleware::names::expand_name;
use crate::middleware::services::ServiceIntrospection;
use crate::middleware::{Handle, MessageCallback, Middleware, ReceivedMessage};

/// The topic of the split events, relative to the recorder node (as in rosbag2).
pub const WRITE_SPLIT_TOPIC: &str = "events/write_split";

/// State shared by the recorder handle, its services and its discovery thread.
pub(crate) struct Inner {
    middleware: Arc<dyn Middleware>,
    selection: CompiledSelection,
    qos_overrides: BTreeMap<String, QosProfile>,
    own_topics: Vec<String>,
    paused: Arc<AtomicBool>,
    time: RecordTime,
    registry: Arc<TopicRegistry>,
    subscriptions: Mutex<BTreeMap<String, Handle>>,
    failed_topics: Mutex<BTreeSet<String>>,
    sink: Sink,
    service_introspection: ServiceIntrospection,
    /// The definitions known here (`AMENT_PREFIX_PATH`, bundled), to tell which types to ask
    /// their publishers for.
    local_definitions: Mutex<MessageDefinitionCache>,
    /// Types known neither here nor to their publishers' nodes.
    missing_definitions: Mutex<BTreeSet<String>>,
    /// Keep the latest message of every transient-local topic across cuts (snapshots).
    repeat_latched: bool,
}

/// Where received messages go, by mode.
enum Sink {
    /// Record mode: the cache that the writer thread empties into the bag.
    Bag(Arc<MessageCache>),
    /// Snapshot mode: per-topic ring buffers, and the queue of snapshots to write (closed once
    /// the recorder stops).
    Snapshots {
        buffers: Arc<SnapshotBuffers>,
        jobs: Mutex<Option<Sender<SnapshotJob>>>,
        /// The snapshot bags' name prefix.
        prefix: PathBuf,
        /// Snapshots waiting for the end of their post-trigger tail.
        pending: Mutex<Vec<PendingSnapshot>>,
    },
}

/// The thread that writes, by mode; `Stopped` once the recorder has been torn down.
enum Output {
    /// Record mode: the bag's directory and its writer thread.
    Bag { dir: PathBuf, writer: CacheWriter },
    /// Snapshot mode: the thread that writes each snapshot to a new bag.
    Snapshots(SnapshotWriter),
    /// Torn down.
    Stopped,
}

/// A running recorder; see the module documentation.
pub struct Recorder {
    inner: Arc<Inner>,
    /// Record mode: the bag's directory.
    bag: Option<PathBuf>,
    output: Output,
    services: Vec<Handle>,
    clock_subscription: Option<(Handle, ClockWatch)>,
    discovery: Option<(Sender<()>, JoinHandle<()>)>,
    /// The thread that watches for silent topics and, in snapshot mode, completes snapshots
    /// once their tail is over.
    watch: Option<(Sender<()>, JoinHandle<()>)>,
}

impl Recorder {
    /// Creates the bag (normal mode), serves the services, subscribes to the selected topics
    /// present now and, unless discovery is off, to those that appear later.
    pub fn start(middleware: Arc<dyn Middleware>, options: RecordOptions) -> Result<Self> {
        options.validate()?;
        let node = middleware.node().clone();
        let (selection, qos_overrides) = resolve_names(&options, &node)?;
        let (time, clock_subscription) =
            record_time(&middleware, options.use_sim_time, options.max_cache_size)?;
        let registry = Arc::new(TopicRegistry::default());
        let bag_options = BagWriterOptions {
            uri: options.uri.clone(),
            storage: options.storage.clone(),
            max_bagfile_size: options.max_bagfile_size,
            max_bagfile_duration: options.max_bagfile_duration,
            custom_data: options.custom_data.clone(),
            compression: options.compression,
            attachments: Vec::new(),
        };
        let (sink, output) = match options.snapshot {
            None => open_bag(&middleware, bag_options, &options, &registry)?,
            Some(limits) => open_snapshots(bag_options, limits)?,
        };
        let inner = Arc::new(Inner {
            own_topics: vec![expand_name(WRITE_SPLIT_TOPIC, &node)?],
            middleware,
            selection,
            qos_overrides,
            paused: Arc::new(AtomicBool::new(options.start_paused)),
            time,
            registry,
            subscriptions: Mutex::new(BTreeMap::new()),
            failed_topics: Mutex::new(BTreeSet::new()),
            sink,
            service_introspection: options.service_introspection,
            local_definitions: Mutex::new(MessageDefinitionCache::new()),
            missing_definitions: Mutex::new(BTreeSet::new()),
            repeat_latched: options.repeat_latched,
        });
        let services = services::serve_all(&inner)?;
        let bag = match &output {
            Output::Bag { dir, .. } => Some(dir.clone()),
            _ => None,
        };
        let mut recorder = Self {
            inner,
            bag,
            output,
            services,
            clock_subscription,
            discovery: None,
            watch: None,
        };
        recorder.watch = Some(spawn_watch(recorder.inner.clone())?);
        if options.start_paused {
            log::info!("recording starts paused");
        }
        recorder.inner.discover();
        if options.discovery {
            recorder.discovery = Some(spawn_discovery(
                recorder.inner.clone(),
                options.polling_interval,
            )?);
        }
        Ok(recorder)
    }

    /// A handle that pauses and resumes from another thread (e.g. keyboard controls).
    pub fn control(&self) -> RecorderControl {
        RecorderControl(self.inner.clone())
    }

    /// Normal mode: the bag directory.
    pub fn bag_dir(&self) -> Option<&Path> {
        self.bag.as_deref()
    }

    /// Pauses: messages arriving from now on are not recorded (not buffered in snapshot mode).
    pub fn pause(&self) {
        self.inner.pause()
    }

    /// Resumes recording; in snapshot mode the buffers are cleared first.
    pub fn resume(&self) {
        self.inner.resume()
    }

    /// Whether recording is paused.
    pub fn is_paused(&self) -> bool {
        self.inner.is_paused()
    }

    /// Subscribes at once to selected topics that appeared since the last look; returns their
    /// names. Discovery does this by itself; this is for callers that need it to have happened.
    pub fn discover_now(&self) -> Vec<String> {
        self.inner.discover()
    }

    /// The topics subscribed to.
    pub fn topics(&self) -> Vec<String> {
        self.inner.subscriptions.lock().keys().cloned().collect()
    }

    /// Normal mode: closes the current file and continues in a new one, between the messages
    /// received before the call and those after it; returns once the new file is open, with
    /// whether one was started (a file that holds no message yet is kept).
    pub fn split(&self) -> Result<bool> {
        self.inner.split()
    }

    /// Normal mode: returns once every message received so far is written and durable.
    pub fn flush(&self) -> Result<()> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.inner.command(Command::Flush(tx))?;
        rx.recv()
            .map_err(|_| RecorderError::WriterStopped("bag writer"))?
    }

    /// Snapshot mode: writes the buffers to a new bag and returns its directory, or `None`
    /// (and no bag) when the buffers are empty. Buffering continues meanwhile.
    pub fn snapshot(&self) -> Result<Option<PathBuf>> {
        match self.trigger_snapshot(&SnapshotTrigger::default())? {
            None => Ok(None),
            Some(done) => done
                .recv()
                .map_err(|_| RecorderError::WriterStopped("snapshot writer"))?
                .map(Some),
        }
    }

    /// Snapshot mode: triggers a snapshot with a file name, topic subset, time window and
    /// post-trigger tail, and returns at once; the receiver gets the bag's directory once it
    /// is written (after the tail). `None` (and no bag) when the buffers are empty and there
    /// is no tail. A trigger also ends a pause.
    pub fn trigger_snapshot(
        &self,
        request: &SnapshotTrigger,
    ) -> Result<Option<crossbeam_channel::Receiver<Result<PathBuf>>>> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        Ok(self.inner.trigger(request, Some(tx))?.map(|_| rx))
    }

    /// Snapshot mode: the buffer limits in force.
    pub fn snapshot_limits(&self) -> Result<SnapshotLimits> {
        Ok(self.inner.snapshot_buffers()?.limits())
    }

    /// Snapshot mode: changes the buffer limits (at least one must stay positive) and trims the
    /// buffers to them.
    pub fn set_snapshot_limits(&self, limits: SnapshotLimits) -> Result<()> {
        limits.validate()?;
        self.inner
            .snapshot_buffers()?
            .set_limits(limits, self.inner.now());
        Ok(())
    }

    /// Snapshot mode: drops every buffered message; returns how many.
    pub fn clear_snapshot_buffer(&self) -> Result<usize> {
        self.inner.clear_snapshot_buffer()
    }

    /// Snapshot mode: messages and payload bytes buffered now.
    pub fn snapshot_occupancy(&self) -> Result<(usize, u64)> {
        Ok(self.inner.snapshot_buffers()?.occupancy())
    }

    /// The writer's failure (e.g. a full disk), if it has failed; recording then only counts
    /// drops, and [`Recorder::stop`] returns the error.
    pub fn failure(&self) -> Option<Arc<RecorderError>> {
        match &self.inner.sink {
            Sink::Bag(cache) => cache.failure(),
            Sink::Snapshots { .. } => None,
        }
    }

    /// Per-topic counts so far (`written` is final only after [`Recorder::stop`]).
    pub fn summary(&self) -> RecordSummary {
        RecordSummary {
            bag: self.bag.clone(),
            snapshots: Vec::new(),
            failed_snapshots: Vec::new(),
            topics: RecordSummary::from_registry(&self.inner.registry),
            drop_cause: self.inner.drop_cause(),
            missing_definitions: self
                .inner
                .missing_definitions
                .lock()
                .iter()
                .cloned()
                .collect(),
        }
    }

    /// Stops: unsubscribes, writes what is cached, closes the bag with its final metadata (in
    /// snapshot mode, saves the buffers as a last snapshot unless they are empty), and returns
    /// what was recorded. An error of the writer during the recording is returned here, after
    /// the bag is closed as well as it can be.
    pub fn stop(mut self) -> Result<RecordSummary> {
        self.teardown(true)
    }

    /// The one way down, for [`Recorder::stop`] and `Drop`: stops discovery, unsubscribes,
    /// removes the services, then lets the writer finish (in snapshot mode, after saving the
    /// buffers as a last snapshot when `save_snapshot`).
    fn teardown(&mut self, save_snapshot: bool) -> Result<RecordSummary> {
        if let Some((stop, thread)) = self.discovery.take() {
            drop(stop);
            let _ = thread.join();
        }
        if let Some((stop, thread)) = self.watch.take() {
            drop(stop);
            let _ = thread.join();
        }
        self.inner.subscriptions.lock().clear();
        self.clock_subscription = None;
        self.inner.time.discard_held();
        self.services.clear();
        let mut summary = RecordSummary {
            bag: self.bag.clone(),
            ..RecordSummary::default()
        };
        let mut first_error = None;
        match std::mem::replace(&mut self.output, Output::Stopped) {
            Output::Bag { writer, .. } => {
                let (metadata, error) = writer.finish();
                if let Some(metadata) = metadata {
                    for topic in self.inner.registry.all() {
                        let written = metadata
                            .topic(&topic.metadata.name)
                            .map_or(0, |t| t.message_count);
                        topic.counters.written.store(written, Ordering::Relaxed);
                    }
                }
                first_error = error;
            }
            Output::Snapshots(writer) => {
                // Tails end with the recording: what they hold so far is written.
                self.inner.complete_tails(i64::MAX);
                if save_snapshot {
                    match self.snapshot() {
                        Ok(Some(dir)) => {
                            log::info!("buffers saved at shutdown to {}", dir.display())
                        }
                        Ok(None) => log::info!("buffers empty at shutdown: no snapshot written"),
                        Err(e) => first_error = Some(e),
                    }
                }
                if let Sink::Snapshots { jobs, .. } = &self.inner.sink {
                    jobs.lock().take();
                }
                let outcome = writer.finish();
                summary.snapshots = outcome.written;
                summary.failed_snapshots = outcome.failed;
            }
            Output::Stopped => return Ok(summary),
        }
        summary.topics = RecordSummary::from_registry(&self.inner.registry);
        summary.drop_cause = self.inner.drop_cause();
        summary.missing_definitions = self
            .inner
            .missing_definitions
            .lock()
            .iter()
            .cloned()
            .collect();
        for t in &mut summary.topics {
            t.lost = self.inner.middleware.lost_messages(&t.topic);
            if t.lost > 0 {
                log::warn!(
                    "topic '{}': {} messages lost before reaching the recorder",
                    t.topic,
                    t.lost
                );
            }
        }
        for t in summary.topics.iter().filter(|t| t.dropped > 0) {
            log::warn!(
                "topic '{}': {} of {} messages dropped",
                t.topic,
                t.dropped,
                t.received
            );
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(summary),
        }
    }
}

/// The selection and QoS overrides with topic names expanded for the recorder's node.
fn resolve_names(
    options: &RecordOptions,
    node: &crate::NodeIdentity,
) -> Result<(CompiledSelection, BTreeMap<String, QosProfile>)> {
    let mut selection = options.selection.clone();
    selection.topics = selection
        .topics
        .iter()
        .map(|t| expand_name(t, node))
        .collect::<crate::Result<_>>()?;
    for services in [&mut selection.services, &mut selection.exclude_services] {
        *services = services
            .iter()
            .map(|s| Ok(service_event_topic(&expand_name(s, node)?)))
            .collect::<crate::Result<_>>()?;
    }
    for actions in [&mut selection.actions, &mut selection.exclude_actions] {
        *actions = actions
            .iter()
            .map(|a| expand_name(a, node))
            .collect::<crate::Result<_>>()?;
    }
    let qos_overrides = options
        .qos_overrides
        .iter()
        .map(|(t, q)| Ok((expand_name(t, node)?, *q)))
        .collect::<crate::Result<_>>()?;
    Ok((selection.compile()?, qos_overrides))
}

/// Where receive timestamps come from, and what sim time needs: the `/clock` subscription
/// (what arrives before its first message is held up to `hold_limit` bytes) and a watch of
/// `/clock` publishers (more than one is warned about).
fn record_time(
    middleware: &Arc<dyn Middleware>,
    use_sim_time: bool,
    hold_limit: u64,
) -> Result<(RecordTime, Option<(Handle, ClockWatch)>)> {
    Ok(if use_sim_time {
        let (sim, handle) = time::sim_time(middleware.as_ref(), hold_limit)?;
        let counted = sim.clone();
        let watch = ClockWatch::start(
            middleware.clone(),
            ClockWatchHooks {
                publishers: Box::new(move |n| counted.set_clock_publisher_count(n)),
                subscriptions: None,
            },
        )?;
        (RecordTime::Ros(sim), Some((handle, watch)))
    } else {
        (RecordTime::Receive, None)
    })
}

/// Record mode: creates the bag (with its retention, free-space guard and latched repeats),
/// announces its splits on `events/write_split`, and starts the writer thread on a cache of
/// `max_cache_size` bytes.
fn open_bag(
    middleware: &Arc<dyn Middleware>,
    options: BagWriterOptions,
    record: &RecordOptions,
    registry: &Arc<TopicRegistry>,
) -> Result<(Sink, Output)> {
    let max_cache_size = record.max_cache_size;
    let mut bag_writer = BagWriter::create(options)?;
    bag_writer.set_retention(record.retention);
    bag_writer.set_min_free_space(record.min_free_space);
    bag_writer.set_repeat_latched(record.repeat_latched);
    let (counted, counter) = (registry.clone(), middleware.clone());
    bag_writer.set_custom_data_source(move || counted.health_counts(|t| counter.lost_messages(t)));
    let events = middleware.create_publisher(
        WRITE_SPLIT_TOPIC,
        WriteSplitEvent::TYPE_NAME,
        &QosProfile {
            depth: 1,
            ..QosProfile::default()
        },
    )?;
    let node_name = middleware.node().fully_qualified_name();
    bag_writer.on_split(move |split| {
        let event = WriteSplitEvent {
            closed_file: split.closed_file.display().to_string(),
            opened_file: split.opened_file.display().to_string(),
            node_name: node_name.clone(),
        };
        match try_to_cdr(&event) {
            Ok(bytes) => {
                if let Err(e) = events.publish(&bytes.into()) {
                    log::warn!("cannot publish the split event: {e}");
                }
            }
            Err(e) => log::warn!("cannot encode the split event: {e}"),
        }
    });
    let dir = bag_writer.dir().to_path_buf();
    let cache = Arc::new(MessageCache::new(max_cache_size));
    let writer = CacheWriter::spawn(bag_writer, cache.clone(), registry.clone())?;
    Ok((Sink::Bag(cache), Output::Bag { dir, writer }))
}

/// Snapshot mode: the buffers, and the thread that writes each snapshot (never split).
fn open_snapshots(options: BagWriterOptions, limits: SnapshotLimits) -> Result<(Sink, Output)> {
    check_output(&options.uri, 0)?;
    let prefix = options.uri.clone();
    let writer = SnapshotWriter::spawn(BagWriterOptions {
        max_bagfile_size: 0,
        max_bagfile_duration: 0,
        ..options
    })?;
    let sink = Sink::Snapshots {
        buffers: Arc::new(SnapshotBuffers::new(limits)),
        jobs: Mutex::new(writer.sender()),
        prefix,
        pending: Mutex::new(Vec::new()),
    };
    Ok((sink, Output::Snapshots(writer)))
}

/// Pauses and resumes a [`Recorder`] from another thread.
#[derive(Clone)]
pub struct RecorderControl(Arc<Inner>);

impl RecorderControl {
    /// See [`Recorder::pause`].
    pub fn pause(&self) {
        self.0.pause()
    }

    /// See [`Recorder::resume`].
    pub fn resume(&self) {
        self.0.resume()
    }

    /// See [`Recorder::is_paused`].
    pub fn is_paused(&self) -> bool {
        self.0.is_paused()
    }
}

/// How often the watch thread completes snapshot tails (snapshot mode).
const TAIL_POLL: std::time::Duration = std::time::Duration::from_millis(10);
/// How often the watch thread looks for silent topics.
const SILENCE_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// The thread that warns of silent topics and, in snapshot mode, completes snapshots whose
/// post-trigger tail is over (both by the recorder's clock: virtual time in tests, ROS time
/// under sim time).
fn spawn_watch(inner: Arc<Inner>) -> Result<(Sender<()>, JoinHandle<()>)> {
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
    let snapshots = inner.snapshot_buffers().is_ok();
    let poll = if snapshots { TAIL_POLL } else { SILENCE_POLL };
    let thread = std::thread::Builder::new()
        .name("rosbag2_watch".into())
        .spawn(move || {
            let mut silence = silence::SilenceWatch::default();
            let mut next_silence_check = std::time::Instant::now();
            loop {
                crossbeam_channel::select! {
                    recv(stop_rx) -> _ => return,
                    default(poll) => {},
                }
                let now = inner.now();
                if snapshots {
                    inner.complete_tails(now);
                }
                if std::time::Instant::now() >= next_silence_check {
                    next_silence_check += SILENCE_POLL;
                    inner.watch_silence(&mut silence, now);
                }
            }
        })
        .map_err(|source| RecorderError::Spawn {
            what: "recorder watch",
            source,
        })?;
    Ok((stop_tx, thread))
}

/// The discovery pass after which an unmatched `--regex` is reported.
const REGEX_CHECK_PASS: u32 = 20;

fn spawn_discovery(
    inner: Arc<Inner>,
    interval: std::time::Duration,
) -> Result<(Sender<()>, JoinHandle<()>)> {
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
    let events = inner.middleware.graph_events();
    let thread = std::thread::Builder::new()
        .name("rosbag2_discovery".into())
        .spawn(move || {
            for pass in 1.. {
                if inner.discovery_complete() {
                    log::debug!("every listed topic is recorded: discovery stops");
                    return;
                }
                crossbeam_channel::select! {
                    recv(stop_rx) -> _ => return,
                    recv(events) -> event => if event.is_err() { return },
                    default(interval) => {},
                }
                inner.discover();
                if pass == REGEX_CHECK_PASS {
                    inner.warn_unmatched_regex();
                }
            }
        })
        .map_err(|source| RecorderError::Spawn {
            what: "discovery",
            source,
        })?;
    Ok((stop_tx, thread))
}

impl Inner {
    fn pause(&self) {
        if !self.paused.swap(true, Ordering::SeqCst) {
            log::info!("recording paused");
        }
    }

    fn resume(&self) {
        if let Sink::Snapshots { buffers, .. } = &self.sink {
            buffers.clear();
        }
        if self.paused.swap(false, Ordering::SeqCst) {
            log::info!("recording resumed");
        }
    }

    fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Looks for topics gone silent (or back) at `now`: a warning each, counted per topic. A
    /// topic whose publishers all left is no stall: it is only logged.
    fn watch_silence(&self, watch: &mut silence::SilenceWatch, now: i64) {
        if self.is_paused() {
            watch.pause(now);
            return;
        }
        for topic in self.registry.all() {
            let c = &topic.counters;
            // Arrivals: a message the cache had no room for still shows the topic is alive.
            let arrived = c.received.load(Ordering::Relaxed) + c.dropped.load(Ordering::Relaxed);
            let event = watch.observe(
                &topic.metadata.name,
                arrived,
                [&c.first_received_ns, &c.last_received_ns].map(|t| t.load(Ordering::Relaxed)),
                now,
            );
            match event {
                Some(silence::SilenceEvent::Silent { silent_ns, .. })
                    if !self.has_publishers(&topic.metadata.name) =>
                {
                    log::info!(
                        "topic '{}': its publishers left the graph ({:.1} s after its last message)",
                        topic.metadata.name,
                        silent_ns as f64 / 1e9
                    );
                }
                Some(silence::SilenceEvent::Silent {
                    period_ns,
                    silent_ns,
                }) => {
                    TopicCounters::add(&c.silences, 1);
                    log::warn!(
                        "topic '{}' went silent: no message for {:.1} s (it published every \
                         {:.3} s)",
                        topic.metadata.name,
                        silent_ns as f64 / 1e9,
                        period_ns as f64 / 1e9
                    );
                }
                Some(silence::SilenceEvent::Resumed) => {
                    log::info!("topic '{}' publishes again", topic.metadata.name)
                }
                None => {}
            }
        }
    }

    /// Whether `topic` has a publisher on the graph now.
    fn has_publishers(&self, topic: &str) -> bool {
        self.middleware
            .topics()
            .iter()
            .any(|t| t.name == topic && !t.publishers.is_empty())
    }

    fn command(&self, command: Command) -> Result<()> {
        match &self.sink {
            Sink::Bag(cache) => {
                cache.command(command);
                Ok(())
            }
            Sink::Snapshots { .. } => Err(RecorderError::NotAvailable(
                "splitting is not available in snapshot mode".into(),
            )),
        }
    }

    fn split(&self) -> Result<bool> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.command(Command::Split(tx))?;
        rx.recv()
            .map_err(|_| RecorderError::WriterStopped("bag writer"))?
    }

    fn drop_cause(&self) -> Option<DropCause> {
        match &self.sink {
            Sink::Bag(cache) => cache.drop_cause(),
            Sink::Snapshots { .. } => None,
        }
    }

    fn snapshot_buffers(&self) -> Result<&SnapshotBuffers> {
        match &self.sink {
            Sink::Snapshots { buffers, .. } => Ok(buffers),
            Sink::Bag(_) => Err(RecorderError::NotAvailable(
                "the recorder is not in snapshot mode (--snapshot)".into(),
            )),
        }
    }

    /// The recorder's clock now: the time base of receive timestamps.
    fn now(&self) -> i64 {
        self.time.now(self.middleware.as_ref())
    }

    /// Warns when `--regex` matches none of the topics on the graph (once discovery had time to
    /// settle): a likely typo, since nothing will be recorded for it.
    fn warn_unmatched_regex(&self) {
        let names: Vec<String> = self
            .middleware
            .topics()
            .into_iter()
            .map(|t| t.name)
            .collect();
        if let Some((regex, false)) = self.selection.regex_matches_any(&names) {
            log::warn!(
                "--regex '{regex}' matches none of the {} topics on the graph yet",
                names.len()
            );
        }
    }

    /// True when only listed topics can match and all of them are subscribed.
    fn discovery_complete(&self) -> bool {
        self.selection.is_fixed_list() && {
            let subscribed = self.subscriptions.lock();
            self.selection
                .listed_topics()
                .all(|t| subscribed.contains_key(&t))
        }
    }

    /// One discovery pass: subscribes to every selected topic not yet subscribed.
    fn discover(&self) -> Vec<String> {
        let mut subscriptions = self.subscriptions.lock();
        let mut added = Vec::new();
        for topic in self.middleware.topics() {
            if subscriptions.contains_key(&topic.name)
                || self.failed_topics.lock().contains(&topic.name)
                || (self.own_topics.contains(&topic.name)
                    && !self.selection.selection.topics.contains(&topic.name))
            {
                continue;
            }
            let Some(plan) = plan_topic(&topic, &self.selection, &self.qos_overrides) else {
                continue;
            };
            let definition = self.definition_from_graph(&topic, &plan.type_name);
            match self.subscribe(&plan, definition) {
                Ok(handle) => {
                    log::info!(
                        "recording '{}' ({}, {} {})",
                        plan.name,
                        plan.type_name,
                        plan.request.reliability.as_str(),
                        plan.request.durability.as_str()
                    );
                    subscriptions.insert(plan.name.clone(), handle);
                    added.push(plan.name);
                }
                Err(e) => {
                    log::error!("cannot subscribe to '{}': {e}", plan.name);
                    self.failed_topics.lock().insert(plan.name);
                }
            }
        }
        added
    }

    /// For a type with no local definition: the one its publishers' nodes describe (`None`
    /// otherwise, or when they cannot; then it is listed as missing).
    fn definition_from_graph(
        &self,
        topic: &crate::middleware::TopicInfo,
        type_name: &str,
    ) -> Option<rosbag2_rs_codec::MessageDefinition> {
        if self.local_definitions.lock().knows(type_name) {
            return None;
        }
        let middleware = self.middleware.as_ref();
        let definition = crate::type_description::ask_publishers(middleware, topic, type_name)
            .or_else(|| crate::type_description::from_type_object(middleware, topic, type_name));
        if definition.is_none() {
            self.missing_definitions
                .lock()
                .insert(type_name.to_string());
        }
        definition
    }

    fn subscribe(
        &self,
        plan: &TopicPlan,
        definition: Option<rosbag2_rs_codec::MessageDefinition>,
    ) -> Result<Handle> {
        let name: Arc<str> = Arc::from(plan.name.as_str());
        let counters = Arc::new(TopicCounters::default());
        let metadata = TopicMetadata {
            offered_qos_profiles: plan.offered.clone(),
            // The hash the publishers announce, else that of the definition learned from them.
            type_description_hash: plan
                .type_hash
                .clone()
                .or_else(|| definition.as_ref().map(|d| d.type_description_hash.clone()))
                .unwrap_or_default(),
            ..TopicMetadata::new(plan.name.clone(), plan.type_name.clone())
        };
        // Our subscription announces the hash its publishers do.
        if let Some(hash) = &plan.type_hash {
            self.middleware.register_type_hash(&plan.type_name, hash);
        }
        // Registered before subscribing, so the writer knows the topic before its messages.
        self.registry.add(RecordedTopic {
            metadata,
            name: name.clone(),
            counters: counters.clone(),
            definition,
        });
        let deliver: Deliver = match &self.sink {
            Sink::Bag(cache) => {
                let (cache, counters) = (cache.clone(), counters.clone());
                Box::new(move |m: ReceivedMessage, recv_timestamp, send_timestamp| {
                    let message = SerializedMessage {
                        topic: name.clone(),
                        recv_timestamp,
                        send_timestamp,
                        data: m.data,
                    };
                    if cache.push(message, &counters) {
                        TopicCounters::add(&counters.received, 1);
                    }
                })
            }
            Sink::Snapshots { buffers, .. } => {
                let latched = self.repeat_latched
                    && plan.request.durability
                        == rosbag2_rs_storage::qos::Durability::TransientLocal;
                let ring = buffers.add_topic(name, counters.clone(), latched);
                let counters = counters.clone();
                Box::new(move |m: ReceivedMessage, recv_timestamp, send_timestamp| {
                    TopicCounters::add(&counters.received, 1);
                    ring.push(m.data, recv_timestamp, send_timestamp);
                })
            }
        };
        let target = Arc::new(Target { deliver, counters });
        let (paused, time) = (self.paused.clone(), self.time.clone());
        let callback: MessageCallback = Box::new(move |m: ReceivedMessage| {
            if !paused.load(Ordering::Relaxed) {
                time.deliver(m, &target);
            }
        });
        Ok(self.middleware.create_subscription(
            &plan.name,
            &plan.type_name,
            &plan.request,
            callback,
        )?)
    }
}

impl Drop for Recorder {
    /// A recorder dropped without [`Recorder::stop`] goes down the same way, closing its bag
    /// (the snapshot buffers are not saved).
    fn drop(&mut self) {
        if let Err(e) = self.teardown(false) {
            log::error!("recorder: {}", crate::error_chain::Chain(&e));
        }
    }
}
