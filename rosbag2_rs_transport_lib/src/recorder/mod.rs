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
mod lag;
mod loss_events;
mod memory;
mod options;
mod rated_publisher;
mod recording;
mod ring;
mod schedule;
mod services;
mod silence;
mod snapshot;
mod snapshot_control;
mod snapshot_writer;
mod statistics;
mod stats;
mod throttle;
mod time;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use parking_lot::Mutex;
use rosbag2_rs_codec::type_hash::TypeDescription;
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::{BagWriterOptions, QosProfile, SerializedMessage, TopicMetadata};

pub use discovery::{
    adapt_request_to_offers, is_hidden, is_service_event_topic, service_event_topic, TopicPlan,
    TopicSelection, MIN_SUBSCRIPTION_DEPTH,
};
pub use error::{RecorderError, Result};
pub use loss_events::MESSAGES_LOST_TOPIC;
pub use memory::{message_cost, MESSAGE_OVERHEAD};
pub use options::{
    max_service_buffer_bytes, RecordOptions, SnapshotLimits, SnapshotTrigger,
    DEFAULT_MAX_CACHE_SIZE, DEFAULT_MIN_FREE_SPACE, DEFAULT_SNAPSHOT_DURATION_NS,
    MAX_POST_TRIGGER_NS, MAX_SERVICE_BUFFER_DURATION_NS,
};
pub use rated_publisher::MAX_STATS_RATE;
pub use schedule::{Schedule, TimeMode};
pub use statistics::STATISTICS_TOPIC;
pub use stats::{
    DropCause, RecordSummary, TopicCounters, TopicSummary, DROPPED_BEFORE_CLOCK_KEY,
    DROPPED_MESSAGES_KEY, LOST_MESSAGES_KEY, MALFORMED_MESSAGES_KEY, SILENCES_KEY,
    THROTTLED_MESSAGES_KEY,
};
pub use throttle::{Throttle, ThrottleLimit, ThrottleLimitError};

use cache::Command;
use discovery::{plan_requested_topic, plan_topic, CompiledSelection};
use loss_events::LossEvents;
use recording::Recording;
use schedule::ScheduleSlot;
use snapshot::SnapshotBuffers;
use snapshot_control::PendingSnapshot;
use snapshot_writer::{check_output, SnapshotJob, SnapshotWriter};
use statistics::Statistics;
use stats::{RecordedTopic, TopicRegistry};
use time::{Deliver, RecordTime, Target};

use crate::clock_watch::{ClockWatch, ClockWatchHooks};

use rosbag2_rs_middleware::names::expand_name;
use rosbag2_rs_middleware::services::ServiceIntrospection;
use rosbag2_rs_middleware::{Handle, MessageCallback, Middleware, ReceivedMessage};

/// The topic of the split events, relative to the recorder node (as in rosbag2).
pub const WRITE_SPLIT_TOPIC: &str = "events/write_split";

/// State shared by the recorder handle, its services and its discovery thread.
pub(crate) struct Inner {
    middleware: Arc<dyn Middleware>,
    /// The options given at start: a `record` after a `stop` opens its bag with them.
    options: RecordOptions,
    selection: CompiledSelection,
    qos_overrides: BTreeMap<String, QosProfile>,
    own_topics: Vec<String>,
    paused: Arc<AtomicBool>,
    /// The node time from which messages are not recorded, as if paused (`pause_at`; `i64::MAX`:
    /// none). Kept until a resume at or after it, so that no message of that time or later is
    /// recorded whichever callback sees it first.
    pause_from: Arc<AtomicI64>,
    /// A resume waiting for its time (record mode).
    scheduled_resume: Arc<ScheduleSlot>,
    /// A split waiting for its time (record mode).
    scheduled_split: Arc<ScheduleSlot>,
    /// Whether discovery looks for new topics (`start_discovery`/`stop_discovery`; it ends by
    /// itself once every listed topic is recorded).
    discovery_running: AtomicBool,
    time: RecordTime,
    /// The topics of the current recording (a new registry for each `record`).
    registry: Mutex<Arc<TopicRegistry>>,
    /// The bag of the current recording, else of the last one.
    last_bag: Mutex<Option<PathBuf>>,
    /// Why the last closed recording dropped messages, if it did.
    drop_cause_at_close: Mutex<Option<DropCause>>,
    /// Held while a recording starts or stops.
    transition: Mutex<()>,
    subscriptions: Mutex<BTreeMap<String, Handle>>,
    /// Topics asked for by `subscribe_to_topics`, whatever the selection, with the type asked
    /// for (`None`: the one on the graph).
    requested_topics: Mutex<BTreeMap<String, Option<String>>>,
    failed_topics: Mutex<BTreeSet<String>>,
    sink: Sink,
    service_introspection: ServiceIntrospection,
    /// The definitions known here (`AMENT_PREFIX_PATH`, bundled), to tell which types to ask
    /// their publishers for.
    local_definitions: Mutex<MessageDefinitionCache>,
    /// Types known neither here nor to their publishers' nodes.
    missing_definitions: Mutex<BTreeSet<String>>,
    /// The topics whose latest messages are kept across cuts instead of every transient-local
    /// topic's (`RecordOptions::repeat_topics`, names expanded).
    repeat_topics: BTreeMap<String, usize>,
    /// The topics recorded at most at a rate (`RecordOptions::throttle`, names expanded).
    throttle: BTreeMap<String, ThrottleLimit>,
}

/// Where received messages go, by mode.
enum Sink {
    /// Record mode: the recording, none between a `stop` and the next `record`.
    Bag(Mutex<Option<Recording>>),
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

/// A running recorder; see the module documentation.
pub struct Recorder {
    inner: Arc<Inner>,
    /// Snapshot mode: the thread that writes each snapshot to a new bag.
    snapshot_writer: Option<SnapshotWriter>,
    torn_down: bool,
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
        let (sink, snapshot_writer) = match options.snapshot {
            None => (Sink::Bag(Mutex::new(None)), None),
            Some(limits) => {
                let (sink, writer) = open_snapshots(recording::bag_options(&options), limits)?;
                (sink, Some(writer))
            }
        };
        let inner = Arc::new(Inner {
            own_topics: vec![
                expand_name(WRITE_SPLIT_TOPIC, &node)?,
                expand_name(MESSAGES_LOST_TOPIC, &node)?,
                expand_name(STATISTICS_TOPIC, &node)?,
            ],
            middleware,
            selection,
            qos_overrides,
            paused: Arc::new(AtomicBool::new(options.start_paused)),
            pause_from: Arc::new(AtomicI64::new(i64::MAX)),
            scheduled_resume: Arc::default(),
            scheduled_split: Arc::default(),
            discovery_running: AtomicBool::new(options.discovery),
            time,
            registry: Mutex::default(),
            last_bag: Mutex::new(None),
            drop_cause_at_close: Mutex::new(None),
            transition: Mutex::new(()),
            subscriptions: Mutex::new(BTreeMap::new()),
            requested_topics: Mutex::new(BTreeMap::new()),
            failed_topics: Mutex::new(BTreeSet::new()),
            sink,
            service_introspection: options.service_introspection,
            local_definitions: Mutex::new(MessageDefinitionCache::new()),
            missing_definitions: Mutex::new(BTreeSet::new()),
            repeat_topics: options
                .repeat_topics
                .iter()
                .map(|(t, depth)| Ok((expand_name(t, &node)?, *depth)))
                .collect::<crate::Result<_>>()?,
            throttle: options
                .throttle
                .iter()
                .map(|(t, limit)| Ok((expand_name(t, &node)?, *limit)))
                .collect::<crate::Result<_>>()?,
            options: options.clone(),
        });
        if snapshot_writer.is_none() {
            inner.open_recording(options.uri.clone())?;
        }
        let services = services::serve_all(&inner)?;
        let mut recorder = Self {
            inner,
            snapshot_writer,
            torn_down: false,
            services,
            clock_subscription,
            discovery: None,
            watch: None,
        };
        let middleware = recorder.inner.middleware.as_ref();
        let events = Events {
            losses: LossEvents::new(
                middleware,
                options.stats_max_publishing_rate,
                &options.qos_overrides,
            )?,
            statistics: Statistics::new(
                middleware,
                options.statistics_rate,
                &options.qos_overrides,
            )?,
        };
        recorder.watch = Some(spawn_watch(recorder.inner.clone(), events)?);
        if options.start_paused {
            log::info!("recording starts paused");
        }
        recorder.inner.discover();
        recorder.discovery = Some(spawn_discovery(
            recorder.inner.clone(),
            options.polling_interval,
        )?);
        Ok(recorder)
    }

    /// Pauses when the recorder's clock reaches `time_ns` (at once when it has): messages
    /// received from then on are not recorded until a resume; a newer time replaces a pending
    /// one (the `pause_at` service).
    pub fn pause_at(&self, time_ns: i64) {
        self.inner.pause_at(time_ns);
    }

    /// A handle that pauses and resumes from another thread (e.g. keyboard controls).
    pub fn control(&self) -> RecorderControl {
        RecorderControl(self.inner.clone())
    }

    /// Normal mode: the bag directory of the current recording, else of the last one.
    pub fn bag_dir(&self) -> Option<PathBuf> {
        self.inner.last_bag.lock().clone()
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

    /// Normal mode: whether a bag is being recorded (false after [`Recorder::stop_recording`]
    /// until [`Recorder::record`]); snapshot mode: always.
    pub fn is_recording(&self) -> bool {
        self.inner.is_recording()
    }

    /// Normal mode: stops recording (the `stop` service): discovery stops, the topics are
    /// unsubscribed, what is scheduled is dropped and the bag is closed; returns its directory.
    /// The recorder stays up and [`Recorder::record`] starts again.
    pub fn stop_recording(&self) -> Result<PathBuf> {
        self.inner.stop_recording()
    }

    /// Normal mode: starts recording again after [`Recorder::stop_recording`] (the `record`
    /// service), to `uri` (empty: the one given at start), numbered `(1)`, `(2)`, ... where
    /// that bag exists; returns its directory.
    pub fn record(&self, uri: &str) -> Result<PathBuf> {
        self.inner.record(uri, None)
    }

    /// [`Recorder::record`] from `start_ns` by the recorder's clock (the `record` service's
    /// `start_time`): the bag is opened at once and its first message is the first received at
    /// or after that time.
    pub fn record_from(&self, uri: &str, start_ns: i64) -> Result<PathBuf> {
        self.inner.record(uri, Some(start_ns))
    }

    /// Records `topics` from now on, whatever the selection (the `subscribe_to_topics`
    /// service), each of the type at its index in `types` (empty: the one on the graph).
    /// Returns the topics subscribed and those that could not be (not on the graph, of another
    /// type or of several).
    pub fn subscribe_to(
        &self,
        topics: &[String],
        types: &[String],
    ) -> Result<(Vec<String>, Vec<String>)> {
        self.inner.subscribe_to(topics, types)
    }

    /// Starts (`true`) or stops discovery of new topics (`start_discovery`/`stop_discovery`).
    pub fn set_discovery(&self, running: bool) -> Result<()> {
        self.inner.set_discovery(running)
    }

    /// Whether discovery looks for new topics (it ends by itself once every listed topic is
    /// recorded).
    pub fn is_discovery_running(&self) -> bool {
        self.inner.is_discovery_running()
    }

    /// Normal mode: splits at a time (the `split_bagfile` service with `split_time`): at once
    /// when the recorder's clock has passed it, else just before the first message that reaches
    /// it, so that every recorder receiving that message splits between the same two messages.
    pub fn schedule_split(&self, schedule: Schedule) -> Result<()> {
        self.inner.schedule_split(schedule)
    }

    /// Normal mode: resumes at a time (the `resume` service with `resume_time`): at once when
    /// the recorder's clock has passed it, else with the first message that reaches it (that
    /// message is recorded).
    pub fn schedule_resume(&self, schedule: Schedule) -> Result<()> {
        self.inner.schedule_resume(schedule)
    }

    /// Normal mode: returns once every message received so far is written and durable.
    pub fn flush(&self) -> Result<()> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.inner.command(Command::Flush(tx))?;
        rx.recv()
            .map_err(|_| RecorderError::WriterStopped("bag writer"))?
    }

    /// Snapshot mode: writes the buffers to a new bag and returns its directory, or `None`
    /// (and no bag) when the buffers are empty. Buffering continues meanwhile. In rosbag2's
    /// snapshot mode ([`RecordOptions::snapshot_files`]) writes the ring into the bag's current
    /// file and continues in the next, and returns the bag's directory (`None`: nothing
    /// buffered, no new file).
    pub fn snapshot(&self) -> Result<Option<PathBuf>> {
        if self.inner.options.snapshot_files {
            let (tx, rx) = crossbeam_channel::bounded(1);
            self.inner.command(Command::Snapshot(tx))?;
            let split = rx
                .recv()
                .map_err(|_| RecorderError::WriterStopped("bag writer"))??;
            return Ok(split.then(|| self.bag_dir()).flatten());
        }
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
        self.inner.with_recording(|r| r.cache.failure()).flatten()
    }

    /// Per-topic counts so far (`written` is final only after [`Recorder::stop`]).
    pub fn summary(&self) -> RecordSummary {
        RecordSummary {
            bag: self.bag_dir(),
            snapshots: Vec::new(),
            failed_snapshots: Vec::new(),
            topics: RecordSummary::from_registry(&self.inner.registry()),
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
        if std::mem::replace(&mut self.torn_down, true) {
            return Ok(RecordSummary {
                bag: self.bag_dir(),
                ..RecordSummary::default()
            });
        }
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
        let mut summary = RecordSummary::default();
        let mut first_error = None;
        if let Some(writer) = self.snapshot_writer.take() {
            // Tails end with the recording: what they hold so far is written.
            self.inner.complete_tails(i64::MAX);
            if save_snapshot {
                match self.snapshot() {
                    Ok(Some(dir)) => log::info!("buffers saved at shutdown to {}", dir.display()),
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
        } else {
            first_error = self.inner.close_recording();
        }
        summary.bag = self.bag_dir();
        summary.topics = RecordSummary::from_registry(&self.inner.registry());
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
        for t in summary.topics.iter().filter(|t| t.malformed > 0) {
            log::warn!(
                "topic '{}': {} malformed samples (too short for their CDR encapsulation \
                 header) not recorded",
                t.topic,
                t.malformed
            );
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
    for (topic, _) in &mut selection.static_topics {
        *topic = expand_name(topic, node)?;
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

/// Snapshot mode: the buffers, and the thread that writes each snapshot (never split).
fn open_snapshots(
    options: BagWriterOptions,
    limits: SnapshotLimits,
) -> Result<(Sink, SnapshotWriter)> {
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
    Ok((sink, writer))
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

/// What the watch thread publishes, each at its own rate.
struct Events {
    losses: Option<LossEvents>,
    statistics: Option<Statistics>,
}

/// The thread that warns of silent topics, publishes the lost-messages events and the
/// statistics and, in snapshot mode, completes snapshots whose post-trigger tail is over (by the
/// recorder's clock: virtual time in tests, ROS time under sim time).
fn spawn_watch(inner: Arc<Inner>, mut events: Events) -> Result<(Sender<()>, JoinHandle<()>)> {
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
    let snapshots = inner.snapshot_buffers().is_ok();
    let poll = [
        events.losses.as_ref().map(LossEvents::period),
        events.statistics.as_ref().map(Statistics::period),
    ]
    .into_iter()
    .flatten()
    .fold(
        if snapshots { TAIL_POLL } else { SILENCE_POLL },
        std::cmp::min,
    );
    let thread = std::thread::Builder::new()
        .name("rosbag2_watch".into())
        .spawn(move || {
            let mut silence = silence::SilenceWatch::default();
            let mut lag = lag::LagWatch::default();
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
                inner.run_due_by_clock(now);
                let middleware = &inner.middleware;
                let lost = |t: &str| middleware.lost_messages(t);
                let topics = inner.registry().all();
                if let Some(losses) = &mut events.losses {
                    losses.publish_due(&topics, lost);
                }
                let backlog = inner.watch_lag(&mut lag, now);
                if let Some(statistics) = &mut events.statistics {
                    let uri = inner.uri();
                    let from = statistics::Snapshot {
                        now,
                        uri: uri.as_deref(),
                        topics: &topics,
                        backlog,
                        writer_stalls: lag.stalls(),
                    };
                    statistics.publish_due(from, lost);
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

/// The discovery thread: while discovery runs, subscribes to selected topics as they appear
/// (at each graph event, else every `interval`), until every listed topic is recorded.
fn spawn_discovery(
    inner: Arc<Inner>,
    interval: std::time::Duration,
) -> Result<(Sender<()>, JoinHandle<()>)> {
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
    let events = inner.middleware.graph_events();
    let thread = std::thread::Builder::new()
        .name("rosbag2_discovery".into())
        .spawn(move || {
            let mut pass = 0;
            loop {
                if inner.is_discovery_running() && inner.discovery_complete() {
                    log::debug!("every listed topic is recorded: discovery stops");
                    inner.discovery_running.store(false, Ordering::SeqCst);
                }
                crossbeam_channel::select! {
                    recv(stop_rx) -> _ => return,
                    recv(events) -> event => if event.is_err() { return },
                    default(interval) => {},
                }
                if !inner.is_discovery_running() {
                    continue;
                }
                inner.discover();
                pass += 1;
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

    /// Pauses when the recorder's clock reaches `time_ns` (at once when it has): messages
    /// received from then on are not recorded; a newer time replaces a pending one.
    fn pause_at(&self, time_ns: i64) {
        if time_ns <= self.now() {
            self.pause_from.store(i64::MAX, Ordering::SeqCst);
            self.pause();
            return;
        }
        log::info!("pause scheduled at {time_ns} ns (node time)");
        self.pause_from.store(time_ns, Ordering::SeqCst);
    }

    /// Resumes now: a scheduled pause that is already due is over, a later one stays pending.
    fn resume(&self) {
        self.resume_after(self.now());
    }

    /// Resumes as scheduled at `time`: a scheduled pause up to that time is over.
    fn resume_after(&self, time: i64) {
        clear_reached(&self.pause_from, time);
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
        for topic in self.registry().all() {
            let c = &topic.counters;
            // Arrivals: a message the cache had no room for (or the throttle left out) still
            // shows the topic is alive.
            let arrived = [&c.received, &c.dropped, &c.throttled]
                .iter()
                .map(|n| n.load(Ordering::Relaxed))
                .sum();
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

    /// Looks at the writer's backlog at `now` (see [`lag`]): a warning when the writer falls
    /// behind, a note when it has caught up. Returns the backlog (none while no bag is open or
    /// in rosbag2's snapshot mode).
    fn watch_lag(&self, watch: &mut lag::LagWatch, now: i64) -> cache::Backlog {
        let Some(backlog) = self.with_recording(|r| r.cache.backlog(now)).flatten() else {
            return cache::Backlog::default();
        };
        match watch.observe(backlog, now) {
            Some(lag::LagEvent::Behind(b)) => log::warn!(
                "the bag writer is {:.1} s behind: {:.1} MB wait to be written (a slow or \
                 stalled disk?)",
                b.lag_ns as f64 / 1e9,
                b.bytes as f64 / 1e6
            ),
            Some(lag::LagEvent::CaughtUp { after_ns }) => log::info!(
                "the bag writer has caught up ({:.1} s after it fell behind)",
                after_ns as f64 / 1e9
            ),
            None => {}
        }
        backlog
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
            Sink::Bag(_) => self
                .with_recording(|r| r.cache.command(command))
                .ok_or_else(|| RecorderError::NotAvailable("the recorder is stopped".into())),
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
            Sink::Bag(_) => self
                .with_recording(|r| r.cache.drop_cause())
                .unwrap_or(*self.drop_cause_at_close.lock()),
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
        if !self.is_recording() {
            return added;
        }
        for (name, type_name) in &self.selection.selection.static_topics {
            if subscriptions.contains_key(name) || self.failed_topics.lock().contains(name) {
                continue;
            }
            let plan = TopicPlan {
                name: name.clone(),
                type_name: type_name.clone(),
                request: self
                    .qos_overrides
                    .get(name)
                    .copied()
                    .unwrap_or_else(|| adapt_request_to_offers(name, &[])),
                offered: Vec::new(),
                type_hash: None,
            };
            self.subscribe_planned(plan, None, &mut subscriptions, &mut added);
        }
        for topic in self.middleware.topics() {
            if subscriptions.contains_key(&topic.name)
                || self.failed_topics.lock().contains(&topic.name)
                || (self.own_topics.contains(&topic.name)
                    && !self.selection.selection.topics.contains(&topic.name))
            {
                continue;
            }
            let requested = self.requested_topics.lock().get(&topic.name).cloned();
            let plan = match requested {
                Some(wanted) => {
                    plan_requested_topic(&topic, wanted.as_deref(), &self.qos_overrides)
                }
                None => plan_topic(&topic, &self.selection, &self.qos_overrides),
            };
            let Some(plan) = plan else {
                continue;
            };
            let definition = self.definition_from_graph(&topic, &plan.type_name);
            self.subscribe_planned(plan, definition, &mut subscriptions, &mut added);
        }
        added
    }

    /// Subscribes as `plan` says, adding the topic to `subscriptions` and `added`; a topic that
    /// cannot be subscribed to is logged and not tried again.
    fn subscribe_planned(
        &self,
        plan: TopicPlan,
        definition: Option<rosbag2_rs_codec::MessageDefinition>,
        subscriptions: &mut BTreeMap<String, Handle>,
        added: &mut Vec<String>,
    ) {
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

    /// For a type with no local definition: the one its publishers' nodes describe (`None`
    /// otherwise, or when they cannot; then it is listed as missing).
    fn definition_from_graph(
        &self,
        topic: &rosbag2_rs_middleware::TopicInfo,
        type_name: &str,
    ) -> Option<rosbag2_rs_codec::MessageDefinition> {
        if self.local_definitions.lock().knows(type_name) {
            return None;
        }
        let middleware = self.middleware.as_ref();
        let definition =
            rosbag2_rs_middleware::type_description::ask_publishers(middleware, topic, type_name)
                .or_else(|| {
                    rosbag2_rs_middleware::type_description::from_type_object(
                        middleware, topic, type_name,
                    )
                });
        if definition.is_none() {
            self.missing_definitions
                .lock()
                .insert(type_name.to_string());
        }
        definition
    }

    /// Lets `topic`'s stamped messages through to `deliver` unless paused; a message received
    /// at or after a scheduled pause pauses the recording and is not recorded; while paused, the
    /// first message that makes a scheduled resume due resumes the recording and is recorded.
    fn gate(&self, topic: String, deliver: Deliver) -> Deliver {
        let (paused, pause_from, resume) = (
            self.paused.clone(),
            self.pause_from.clone(),
            self.scheduled_resume.clone(),
        );
        let (start, end) = (self.options.start_time_ns, self.options.end_time_ns);
        Box::new(move |m: ReceivedMessage, recv, send| {
            // Outside the window rosbag2's writer takes: not recorded, as while paused.
            if start.is_some_and(|s| recv < s) || end.is_some_and(|e| recv > e) {
                return;
            }
            if paused.load(Ordering::Relaxed) {
                let Some(due) = resume.take_if(|s| s.due_at(&topic, recv, send)) else {
                    return;
                };
                clear_reached(&pause_from, due.time_ns);
                if paused.swap(false, Ordering::SeqCst) {
                    log::info!(
                        "recording resumed: scheduled {} time {} ns reached on '{topic}'",
                        due.mode.as_str(),
                        due.time_ns
                    );
                }
            }
            if recv >= pause_from.load(Ordering::SeqCst) {
                if !paused.swap(true, Ordering::SeqCst) {
                    log::info!("recording paused: scheduled node time reached on '{topic}'");
                }
                return;
            }
            deliver(m, recv, send)
        })
    }

    /// Whether a snapshot keeps `plan`'s newest message across cuts: a topic named to repeat,
    /// or a transient-local one while the latched state is repeated.
    fn keeps_latched(&self, plan: &TopicPlan) -> bool {
        self.repeat_topics.contains_key(&plan.name)
            || (self.options.latched_depth() > 0
                && plan.request.durability == rosbag2_rs_storage::qos::Durability::TransientLocal)
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
        // A type learned from the graph may not be installed: a middleware that builds type
        // support at run time subscribes with its description.
        if let Some(description) = definition
            .as_ref()
            .and_then(|d| TypeDescription::from_definition(&plan.type_name, d).ok())
        {
            self.middleware
                .register_type_description(&plan.type_name, &description);
        }
        // Registered before subscribing, so the writer knows the topic before its messages.
        self.registry().add(RecordedTopic {
            metadata,
            name: name.clone(),
            counters: counters.clone(),
            definition,
        });
        let deliver: Deliver = match &self.sink {
            Sink::Bag(_) => {
                let cache = self
                    .with_recording(|r| r.cache.clone())
                    .ok_or_else(|| RecorderError::NotAvailable("the recorder is stopped".into()))?;
                if self.options.snapshot_files && self.keeps_latched(plan) {
                    cache.keep_latched(name.clone());
                }
                let counters = counters.clone();
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
                let ring = buffers.add_topic(name, counters.clone(), self.keeps_latched(plan));
                let counters = counters.clone();
                Box::new(move |m: ReceivedMessage, recv_timestamp, send_timestamp| {
                    TopicCounters::add(&counters.received, 1);
                    ring.push(m.data, recv_timestamp, send_timestamp);
                })
            }
        };
        let deliver = match self.throttle.get(&plan.name) {
            Some(limit) => throttled(*limit, counters.clone(), deliver),
            None => deliver,
        };
        let deliver = self.gate(plan.name.clone(), deliver);
        let malformed = counters.clone();
        let target = Arc::new(Target { deliver, counters });
        let (paused, resume, time) = (
            self.paused.clone(),
            self.scheduled_resume.clone(),
            self.time.clone(),
        );
        let topic = plan.name.clone();
        let callback: MessageCallback = Box::new(move |m: ReceivedMessage| {
            // A sample too short for its encapsulation header holds no message, whatever the
            // backend: counted, never recorded.
            if rosbag2_rs_middleware::too_short_for_encapsulation(&m.data) {
                if malformed.malformed.fetch_add(1, Ordering::Relaxed) == 0 {
                    log::warn!(
                        "topic '{topic}': a sample of {} bytes, too short for its CDR \
                         encapsulation header: not recorded (such samples are counted as \
                         malformed)",
                        m.data.len()
                    );
                }
                return;
            }
            // Paused: only a message that may be due for a scheduled resume is stamped.
            if !paused.load(Ordering::Relaxed) || resume.is_pending() {
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

/// Drops the scheduled pause in `pause_from` if `now` has reached it (a resume after it); a
/// later one stays pending.
fn clear_reached(pause_from: &AtomicI64, now: i64) {
    let _ = pause_from.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |p| {
        (p <= now).then_some(i64::MAX)
    });
}

/// Lets through to `deliver` what `limit` admits, counting the rest as throttled.
fn throttled(limit: ThrottleLimit, counters: Arc<TopicCounters>, deliver: Deliver) -> Deliver {
    let throttle = Mutex::new(Throttle::new(limit));
    Box::new(move |m: ReceivedMessage, recv, send| {
        if throttle.lock().admit(recv, m.data.len() as u64) {
            deliver(m, recv, send)
        } else {
            TopicCounters::add(&counters.throttled, 1);
        }
    })
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
