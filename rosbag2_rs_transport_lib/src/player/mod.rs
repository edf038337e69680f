//! The player: plays bags onto the ROS 2 graph under full time control.
//!
//! All time logic belongs to the [`PlayerClock`]: the player asks it when to publish
//! ([`sleep_until`](rosbag2_rs_clock::Clock::sleep_until)), forwards pause/resume/rate to it, and
//! reacts to its jumps (seek, or an external `/clock` going back or leaping ahead) by repositioning the
//! [read-ahead queue](read_ahead). One playback thread publishes everything, so messages, `/clock`
//! and split events leave in bag order; play-next and burst requests are handed to that thread.
//!
//! Controls are available as methods, as ROS 2 services on `/<node_name>/...` with rosbag2's
//! wire types ([`services`]), and as keys in a terminal ([`cli`]).

mod error;
mod options;
mod playback;
mod qos;
mod read_ahead;
mod schedule;
mod service_requests;
mod services;
mod type_hashes;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration as StdDuration;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Mutex, RwLock};
use rosbag2_rs_clock::{
    create_player_clock, ClockChange, Duration, JumpHandle, JumpThreshold, MonotonicSource,
    PlayerClock, PlayerClockOptions, SteadyClock, SystemClock, Time, TimeJump, TimeSource,
};
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_interfaces::rosbag2_interfaces::msg::ReadSplitEvent;
use rosbag2_rs_interfaces::MessageType;
use rosbag2_rs_storage::qos::{Durability, History, Reliability};
use rosbag2_rs_storage::{QosProfile, SequentialReader, TopicFilter};

use crate::clock_topic::{clock_qos, CLOCK_TOPIC, CLOCK_TYPE};
use crate::clock_watch::{ClockWatch, ClockWatchHooks, MatchedSubscriptions};
use crate::recorder::is_service_event_topic;
use rosbag2_rs_interfaces::action_msgs::{action_interface, ActionInterface};
use rosbag2_rs_middleware::{Handle, Middleware, RawPublisher};
use service_requests::RequestReplayer;
use type_hashes::PlayedTypeHashes;

pub use error::PlayerError;
pub use options::{MessageOrder, PlayOptions, ServiceRequestsSource};
pub use qos::adapt_to_recorded;

/// How long the playback thread waits before re-checking for requests. Every request also
/// wakes it at once; this is a backstop, not a polling period.
const WAIT: Duration = Duration::from_nanos(1_000_000_000);
/// [`WAIT`] for waits on the wall clock.
const WAIT_REAL: StdDuration = StdDuration::from_secs(1);
/// How long a service or method waits for the playback thread to answer.
const ANSWER_TIMEOUT: StdDuration = StdDuration::from_secs(10);

/// How a playback ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaybackEnd {
    /// Every message up to the end (or the playback bound) was played.
    Finished,
    /// [`Player::stop`] (or the `stop` service, or a signal) ended it.
    Stopped,
}

/// What a playback did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaybackSummary {
    /// Messages of the bag published (the bag's own `/clock` included; not the player's).
    pub published: u64,
    /// How it ended.
    pub end: PlaybackEnd,
}

/// Where playback starts and stops, relative to the bag: a [`PlayOptions`] subset that the
/// `play` service can change per playback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaySpan {
    /// Skip this much bag time from the first message.
    pub start_offset: Duration,
    /// Stop after this much bag time.
    pub duration: Option<Duration>,
    /// Stop at this bag timestamp.
    pub until: Option<Time>,
}

impl PlaySpan {
    /// The last bag timestamp to play when playback starts at `from`.
    fn end_bound(&self, from: i64) -> i64 {
        let by_duration = self
            .duration
            .map_or(i64::MAX, |d| from.saturating_add(d.as_nanos()));
        by_duration.min(self.until.map_or(i64::MAX, Time::nanos))
    }
}

/// A topic being played.
struct TopicPublisher {
    publisher: Box<dyn RawPublisher>,
    qos: QosProfile,
    clock_before: bool,
    /// A recorded service's requests, sent to the service (`subscription_count`: 1 once it is
    /// on the graph).
    calls_service: bool,
}

/// Where the playback thread must continue after a jump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reposition {
    /// A seek to this bag time.
    To(i64),
    /// The clock jumped on its own (external `/clock`): continue from its current time.
    ToNow,
}

/// Work for the playback thread.
enum Request {
    PlayNext(Sender<Result<(), PlayerError>>),
    Burst(u64, Sender<Result<u64, PlayerError>>),
}

/// State shared by the playback thread and the control surfaces.
struct Control {
    requests: (Sender<Request>, Receiver<Request>),
    reposition: Mutex<Option<Reposition>>,
    /// Set while the playback thread jumps the clock itself (play-next, loop): not a seek.
    self_jump: AtomicBool,
    /// Set from before a repositioning jump's new time is visible until `reposition` says so.
    jumping: AtomicBool,
    stop: AtomicBool,
    /// A seek past the end: playback is complete.
    finish: AtomicBool,
    playing: AtomicBool,
    /// A playback has started (a `stop` before the first is kept for it).
    played: AtomicBool,
    /// Why the last playback ended when it failed: the refusal of requests it left unserved.
    failure: Mutex<Option<String>>,
    /// Bag time of the last published message.
    position: AtomicI64,
    published: AtomicU64,
    /// Wakes the `/clock` thread while it waits for publishing to be switched on.
    clock_changes: (Sender<()>, Receiver<()>),
}

impl Control {
    /// Whether a repositioning jump is being announced or waits for the playback thread.
    fn jump_pending(&self) -> bool {
        self.jumping.load(Ordering::SeqCst) || self.reposition.lock().is_some()
    }
}

/// Where the player says it moved to the bag's next file (rosbag2's `events/read_split`).
const READ_SPLIT_TOPIC: &str = "events/read_split";

/// The part of the player that the playback thread and the services share.
struct Core {
    options: PlayOptions,
    middleware: Arc<dyn Middleware>,
    clock: Arc<dyn PlayerClock>,
    steady: SteadyClock,
    /// The node's clock: what scheduled pauses and resumes wait for.
    system: SystemClock,
    /// The pauses and resumes waiting for their time.
    schedules: schedule::Schedules,
    /// Keyed by bag topic name.
    publishers: HashMap<String, TopicPublisher>,
    /// `/clock`, once the player publishes it (from the start, or from the first
    /// [`Player::set_clock_publish_frequency`]).
    clock_publisher: RwLock<Option<Box<dyn RawPublisher>>>,
    split_events: Box<dyn RawPublisher>,
    reader: Mutex<Option<SequentialReader>>,
    filter: TopicFilter,
    bag_start: i64,
    bag_end: i64,
    control: Arc<Control>,
}

/// Whether a jump of the player's clock makes playback continue from the clock's new time,
/// dropping what lies between. Under time control (`sim_time` is `None`) every jump does: they
/// are seeks. Under sim time (`Some(forward threshold)`) an external `/clock` stepping forward
/// releases every message whose time has come, in order (none is skipped); only a backward step, or a
/// forward step beyond the threshold, repositions. The first `/clock` sample counts as a step
/// from the playback position.
fn jump_repositions(jump: &TimeJump, position: i64, sim_time: Option<Option<Duration>>) -> bool {
    let Some(forward_threshold) = sim_time else {
        return true;
    };
    let beyond = |step: i64| forward_threshold.is_some_and(|t| step > t.as_nanos());
    match jump.clock_change {
        // Activation reports the new time itself (the step from "no time"): a first time before
        // the playback position only means that nothing is due yet.
        ClockChange::RosTimeActivated => beyond(jump.delta.as_nanos().saturating_sub(position)),
        _ => jump.delta.as_nanos() < 0 || beyond(jump.delta.as_nanos()),
    }
}

/// A bag player on one node.
pub struct Player {
    core: Arc<Core>,
    _handles: Vec<Handle>,
    _jumps: JumpHandle,
    _clock_watch: ClockWatch,
}

/// Stops playback without owning the player: see [`Player::stop_handle`]. Once the player is
/// gone, [`stop`](Self::stop) does nothing.
#[derive(Clone)]
pub struct StopHandle {
    control: Weak<Control>,
    clock: Weak<dyn PlayerClock>,
}

impl StopHandle {
    /// As [`Player::stop`], while the player exists.
    pub fn stop(&self) {
        if let (Some(control), Some(clock)) = (self.control.upgrade(), self.clock.upgrade()) {
            request_stop(&control, clock.as_ref());
        }
    }
}

/// Ends the current playback, or the next one when none runs (the flag is cleared when the
/// playback it ended finishes), and wakes the playback thread from its wait.
fn request_stop(control: &Control, clock: &dyn PlayerClock) {
    control.stop.store(true, Ordering::SeqCst);
    clock.wakeup();
}

/// What the player does with what it sees of `/clock`: under sim time or while publishing
/// `/clock`, the number of `/clock` publishers goes to the clock (which warns about more than
/// one); a subscriber matching its `/clock` publisher gets the current time at once.
fn clock_watch_hooks(core: &Arc<Core>) -> ClockWatchHooks {
    let (counting, matching, publishing) = (
        Arc::downgrade(core),
        Arc::downgrade(core),
        Arc::downgrade(core),
    );
    ClockWatchHooks {
        publishers: Box::new(move |count| {
            if let Some(core) = counting.upgrade() {
                if core.clock.uses_sim_time() || core.publishes_clock() {
                    core.clock.set_clock_publisher_count(count);
                }
            }
        }),
        subscriptions: Some(MatchedSubscriptions {
            count: Box::new(move || {
                matching.upgrade().map_or(0, |core| {
                    core.clock_publisher
                        .read()
                        .as_ref()
                        .map_or(0, |p| p.subscription_count())
                })
            }),
            on_new: Box::new(move || {
                if let Some(core) = publishing.upgrade().filter(|c| c.publishes_clock()) {
                    core.publish_clock(core.clock.now().nanos());
                }
            }),
        }),
    }
}

impl Player {
    /// Opens the bags and creates the publishers, services and clock; playback starts with
    /// [`play`](Self::play).
    pub fn new(middleware: Arc<dyn Middleware>, options: PlayOptions) -> Result<Self, PlayerError> {
        Self::build(
            middleware,
            options,
            Arc::new(MonotonicSource::new()),
            SystemClock::new(),
        )
    }

    /// As [`new`](Self::new), with the time source the clocks run on (tests pass a
    /// `VirtualTimeSource`): steady time, and the node's clock that scheduled pauses and
    /// resumes wait for.
    pub fn with_time_source(
        middleware: Arc<dyn Middleware>,
        options: PlayOptions,
        source: Arc<dyn TimeSource>,
    ) -> Result<Self, PlayerError> {
        let system = SystemClock::with_source(source.clone());
        Self::build(middleware, options, source, system)
    }

    fn build(
        middleware: Arc<dyn Middleware>,
        options: PlayOptions,
        source: Arc<dyn TimeSource>,
        system: SystemClock,
    ) -> Result<Self, PlayerError> {
        check_options(&options)?;
        let (reader, filter) = open_bags(&options)?;
        let (bag_start, bag_end) = (reader.start_time(), reader.end_time());
        let clock = create_player_clock(
            &PlayerClockOptions {
                starting_time: Time::ros(bag_start.saturating_add(options.start_offset.as_nanos())),
                rate: options.rate,
                start_paused: options.start_paused,
                clock_publish_frequency: options.clock_publish_frequency,
                use_sim_time: options.use_sim_time,
                extrapolate_ros_time: options.extrapolate_ros_time,
            },
            source.clone(),
        )?;
        let publishers = create_publishers(middleware.as_ref(), &reader, &filter, &options);
        let described = played_definitions(&reader, &filter, options.typestore);
        let clock_publisher = if options.publishes_clock() {
            Some(middleware.create_publisher(CLOCK_TOPIC, CLOCK_TYPE, &clock_qos())?)
        } else {
            None
        };
        let clock_publisher = RwLock::new(clock_publisher);
        let split_qos = rosbag2_rs_middleware::names::event_qos(
            &options.qos_overrides,
            READ_SPLIT_TOPIC,
            middleware.node(),
            QosProfile {
                depth: 1,
                ..QosProfile::default()
            },
        );
        let split_events =
            middleware.create_publisher(READ_SPLIT_TOPIC, ReadSplitEvent::TYPE_NAME, &split_qos)?;

        let control = Arc::new(Control {
            requests: crossbeam_channel::unbounded(),
            reposition: Mutex::new(None),
            self_jump: AtomicBool::new(false),
            jumping: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            finish: AtomicBool::new(false),
            playing: AtomicBool::new(false),
            played: AtomicBool::new(false),
            failure: Mutex::new(None),
            position: AtomicI64::new(bag_start),
            published: AtomicU64::new(0),
            clock_changes: crossbeam_channel::bounded(1),
        });
        // A jump that repositions holds publishing from before its new time is visible until
        // the playback thread has been told to reposition: no message due only by the jump
        // leaves in between.
        let (before, after) = (control.clone(), control.clone());
        let sim_time_threshold = options
            .use_sim_time
            .then_some(options.sim_time_jump_threshold);
        let jumps = clock.create_jump_callback(
            Some(Box::new(move |jump| {
                let position = before.position.load(Ordering::SeqCst);
                if !before.self_jump.load(Ordering::SeqCst)
                    && jump_repositions(jump, position, sim_time_threshold)
                {
                    before.jumping.store(true, Ordering::SeqCst);
                }
            })),
            Some(Box::new(move |_| {
                if after.jumping.load(Ordering::SeqCst) {
                    after.reposition.lock().get_or_insert(Reposition::ToNow);
                    after.jumping.store(false, Ordering::SeqCst);
                }
            })),
            JumpThreshold::any(),
        )?;

        let core = Arc::new(Core {
            options,
            middleware: middleware.clone(),
            clock,
            steady: SteadyClock::with_source(source),
            system,
            schedules: schedule::Schedules::default(),
            publishers,
            clock_publisher,
            split_events,
            reader: Mutex::new(Some(reader)),
            filter,
            bag_start,
            bag_end,
            control,
        });
        let mut handles = services::register(&core)?;
        handles.push(rosbag2_rs_middleware::type_description::serve_definitions(
            middleware.as_ref(),
            described,
        )?);
        if core.options.use_sim_time {
            let clock = core.clock.clone();
            handles.push(middleware.create_subscription(
                CLOCK_TOPIC,
                CLOCK_TYPE,
                &clock_qos(),
                Box::new(move |m| match crate::clock_topic::decode(&m.data) {
                    Some(t) => clock.on_clock_message(Time::ros(t)),
                    None => log::warn!("ignoring a malformed {CLOCK_TOPIC} message"),
                }),
            )?);
        }
        let watch = ClockWatch::start(middleware, clock_watch_hooks(&core))?;
        Ok(Self {
            core,
            _handles: handles,
            _jumps: jumps,
            _clock_watch: watch,
        })
    }

    /// Pauses when the node's clock (system time) reaches `time_ns`, at once when it has; a
    /// newer scheduled pause replaces a pending one. Refused under sim time.
    pub fn pause_at(&self, time_ns: i64) -> Result<(), PlayerError> {
        self.core.schedule(schedule::Action::Pause, time_ns)
    }

    /// Resumes when the node's clock (system time) reaches `time_ns`, at once when it has; a
    /// newer scheduled resume replaces a pending one. Refused under sim time.
    pub fn resume_at(&self, time_ns: i64) -> Result<(), PlayerError> {
        self.core.schedule(schedule::Action::Resume, time_ns)
    }

    /// Plays the bags as the options say; blocks until playback finishes or is stopped.
    pub fn play(&self) -> Result<PlaybackSummary, PlayerError> {
        self.core.play(self.core.options.span())
    }

    /// Plays with another start, duration or end; blocks like [`play`](Self::play).
    pub fn play_span(&self, span: PlaySpan) -> Result<PlaybackSummary, PlayerError> {
        self.core.play(span)
    }

    /// Stops time.
    pub fn pause(&self) -> Result<(), PlayerError> {
        self.core.pause()
    }

    /// Lets time flow again; playback continues with the message after the last one published.
    pub fn resume(&self) -> Result<(), PlayerError> {
        self.core.resume()
    }

    /// Pauses when playing, resumes when paused.
    pub fn toggle_paused(&self) -> Result<(), PlayerError> {
        self.core.toggle_paused()
    }

    /// Whether time is paused.
    pub fn is_paused(&self) -> bool {
        self.core.clock.is_paused()
    }

    /// Sets the playback rate (must be positive and finite); takes effect at once.
    pub fn set_rate(&self, rate: f64) -> Result<(), PlayerError> {
        self.core.set_rate(rate)
    }

    /// The playback rate.
    pub fn rate(&self) -> f64 {
        self.core.clock.get_rate()
    }

    /// Continues playback from bag time `time` (ns): before the start clamps to the start, past
    /// the end finishes playback.
    pub fn seek(&self, time: i64) -> Result<(), PlayerError> {
        self.core.seek(time)
    }

    /// While paused, publishes the next message at once and moves time to it.
    pub fn play_next(&self) -> Result<(), PlayerError> {
        self.core.play_next()
    }

    /// While paused, publishes up to `n` next messages at once; returns how many were published.
    pub fn burst(&self, n: u64) -> Result<u64, PlayerError> {
        self.core.burst(n)
    }

    /// Starts, changes (`hz > 0`) or stops (`hz <= 0`) publishing `/clock` while the player
    /// runs. Refused under sim time.
    pub fn set_clock_publish_frequency(&self, hz: f64) -> Result<(), PlayerError> {
        self.core.set_clock_publish_frequency(hz)
    }

    /// Ends the current playback (also while paused), or, when none runs, the next one as soon
    /// as it starts: a stop that comes before [`play`](Self::play) (a signal or `stop` request
    /// right after the node appeared) is not lost.
    pub fn stop(&self) {
        self.core.stop();
    }

    /// A handle that stops playback as [`stop`](Self::stop) does, for threads that may outlive
    /// the player (a signal handler): it keeps neither the player nor its node alive, so the
    /// node always goes with the player, on the thread that drops it.
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle {
            control: Arc::downgrade(&self.core.control),
            clock: Arc::downgrade(&self.core.clock),
        }
    }

    /// Whether a playback is running.
    pub fn is_playing(&self) -> bool {
        self.core.control.playing.load(Ordering::SeqCst)
    }

    /// Bag time (ns) of the last message published.
    pub fn position(&self) -> i64 {
        self.core.control.position.load(Ordering::SeqCst)
    }

    /// Bag time (ns) of the first and last message.
    pub fn bag_range(&self) -> (i64, i64) {
        (self.core.bag_start, self.core.bag_end)
    }

    /// The clock that drives playback.
    pub fn clock(&self) -> &Arc<dyn PlayerClock> {
        &self.core.clock
    }

    /// Waits (on the wall clock: this is about other processes) until every played topic has a
    /// matched subscription, or `timeout`; returns the topics still without one.
    pub fn wait_for_subscribers(&self, timeout: std::time::Duration) -> Vec<String> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let mut lonely: Vec<String> = self
                .core
                .publishers
                .iter()
                .filter(|(_, p)| p.publisher.subscription_count() == 0)
                .map(|(topic, _)| topic.clone())
                .collect();
            if lonely.is_empty() || std::time::Instant::now() >= deadline {
                lonely.sort();
                return lonely;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Waits until reliable subscribers acknowledged every message published, or `timeout`
    /// (shared by all topics); true when all were.
    pub fn wait_for_acks(&self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now().checked_add(timeout);
        self.core.publishers.values().all(|p| {
            let left = deadline.map_or(timeout, |d| {
                d.saturating_duration_since(std::time::Instant::now())
            });
            p.publisher.wait_for_acks(left)
        })
    }
}

/// Opens the bags with the options' topic filter. The bag's `/clock` is played like any topic
/// (sim-time nodes need it), unless the player publishes its own time (`--clock`) or follows an
/// external one (sim time): then the two would collide, and it is left out.
fn open_bags(options: &PlayOptions) -> Result<(SequentialReader, TopicFilter), PlayerError> {
    let mut filter = options.filter.clone();
    let own_time = options.publishes_clock() || options.use_sim_time;
    if own_time {
        filter.exclude_topics.push(CLOCK_TOPIC.to_string());
    }
    let mut reader = SequentialReader::open_many_with(&options.bags, &options.storage_config)?;
    reader.set_filter(&filter)?;
    if own_time
        && reader
            .topics()
            .iter()
            .any(|t| t.topic_metadata.name == CLOCK_TOPIC && options.filter.matches(CLOCK_TOPIC))
    {
        log::info!(
            "the bag's {CLOCK_TOPIC} is not played: {}",
            if options.use_sim_time {
                "the player follows the graph's /clock (use_sim_time)"
            } else {
                "the player publishes its own time (--clock)"
            }
        );
    }
    Ok((reader, filter))
}

/// The definitions of the played types (the bag's, else the local ones), which the player's
/// `~/get_type_description` describes.
fn played_definitions(
    reader: &SequentialReader,
    filter: &TopicFilter,
    typestore: Option<rosbag2_rs_codec::Typestore>,
) -> Vec<rosbag2_rs_codec::MessageDefinition> {
    let mut cache = MessageDefinitionCache::new().with_typestore(typestore);
    let mut types: Vec<&str> = reader
        .topics()
        .iter()
        .map(|t| &t.topic_metadata)
        .filter(|m| filter.matches(&m.name))
        .map(|m| m.type_name.as_str())
        .collect();
    types.sort_unstable();
    types.dedup();
    types
        .into_iter()
        .map(|t| reader.message_definition(t, &mut cache))
        .collect()
}

/// A publisher per played topic, offering the QoS it was recorded with (or its override;
/// keep-all when the options ask for it). A topic whose publisher cannot be created is left out
/// with a warning.
fn create_publishers(
    middleware: &dyn Middleware,
    reader: &SequentialReader,
    filter: &TopicFilter,
    options: &PlayOptions,
) -> HashMap<String, TopicPublisher> {
    let mut publishers = HashMap::new();
    let mut definitions = MessageDefinitionCache::new().with_typestore(options.typestore);
    let mut hashes = PlayedTypeHashes::new(reader);
    for topic in reader.topics() {
        let meta = &topic.topic_metadata;
        if !filter.matches(&meta.name) {
            continue;
        }
        let action = action_interface(&meta.name, &meta.type_name);
        let replay_requests = match action {
            Some((_, interface)) if options.send_actions_as_client => {
                if !interface.is_service_event() {
                    // The server's side of the action: its server publishes it.
                    continue;
                }
                true
            }
            Some(_) => false,
            None => {
                options.publish_service_requests
                    && is_service_event_topic(&meta.name, &meta.type_name)
            }
        };
        if replay_requests {
            let replayer = RequestReplayer::new(
                middleware,
                reader,
                &mut definitions,
                (&meta.name, &meta.type_name),
                |service| options.remapped(service).to_string(),
                options.service_requests_source,
                matches!(action, Some((_, ActionInterface::SendGoalEvent)))
                    .then_some(service_requests::GOAL_RESPONSE_WAIT),
            );
            match replayer {
                Ok(replayer) => {
                    publishers.insert(
                        meta.name.clone(),
                        TopicPublisher {
                            publisher: Box::new(replayer),
                            qos: QosProfile::default(),
                            clock_before: options.clock_before(&meta.name),
                            calls_service: true,
                        },
                    );
                }
                Err(e) => log::warn!(
                    "not replaying the requests of {}: {}",
                    meta.name,
                    crate::error_chain::Chain(&e)
                ),
            }
            continue;
        }
        let name = options.remapped(&meta.name);
        let mut qos = options
            .qos_overrides
            .get(name)
            .or_else(|| options.qos_overrides.get(&meta.name))
            .copied()
            .unwrap_or_else(|| adapt_to_recorded(&meta.name, &meta.offered_qos_profiles));
        if options.keep_all_history && qos.reliability == Reliability::Reliable {
            qos.history = History::KeepAll;
        }
        if let Some(hash) = hashes.for_topic(meta, &mut definitions) {
            middleware.register_type_hash(&meta.type_name, &hash);
        }
        match middleware.create_publisher(name, &meta.type_name, &qos) {
            Ok(publisher) => {
                let clock_before = options.clock_before(&meta.name) || options.clock_before(name);
                publishers.insert(
                    meta.name.clone(),
                    TopicPublisher {
                        publisher,
                        qos,
                        clock_before,
                        calls_service: false,
                    },
                );
            }
            Err(e) => log::warn!("not playing {}: {e}", meta.name),
        }
    }
    publishers
}

impl PlayOptions {
    fn span(&self) -> PlaySpan {
        PlaySpan {
            start_offset: self.start_offset,
            duration: self.playback_duration,
            until: self.playback_until,
        }
    }
}

fn check_options(options: &PlayOptions) -> Result<(), PlayerError> {
    let invalid = |m: String| Err(PlayerError::InvalidOption(m));
    if options.bags.is_empty() {
        return invalid("no bag to play".into());
    }
    if options.start_offset.is_negative() {
        return invalid("--start-offset must not be negative".into());
    }
    if options.delay.is_negative() {
        return invalid("--delay must not be negative".into());
    }
    if options.playback_duration.is_some_and(|d| d.as_nanos() <= 0) {
        return invalid("--playback-duration must be positive".into());
    }
    if options.clock_publish_frequency < 0.0
        || rosbag2_rs_clock::check_clock_publish_frequency(options.clock_publish_frequency).is_err()
    {
        return invalid(format!(
            "invalid --clock frequency {}: at most {} Hz",
            options.clock_publish_frequency,
            rosbag2_rs_clock::MAX_CLOCK_PUBLISH_FREQUENCY
        ));
    }
    if options.read_ahead_queue_size == 0 {
        return invalid("--read-ahead-queue-size must be at least 1".into());
    }
    Ok(())
}

impl Core {
    fn refuse_under_sim_time(&self, what: &str) -> Result<(), PlayerError> {
        if self.clock.uses_sim_time() {
            return Err(PlayerError::Refused(format!(
                "{what} is not available with --use-sim-time: an external /clock controls time"
            )));
        }
        Ok(())
    }

    fn pause(&self) -> Result<(), PlayerError> {
        self.clock.pause()?;
        log::info!("paused");
        Ok(())
    }

    fn resume(&self) -> Result<(), PlayerError> {
        self.clock.resume()?;
        log::info!("resumed");
        Ok(())
    }

    fn toggle_paused(&self) -> Result<(), PlayerError> {
        if self.clock.is_paused() {
            self.resume()
        } else {
            self.pause()
        }
    }

    fn set_rate(&self, rate: f64) -> Result<(), PlayerError> {
        self.clock.set_rate(rate)?;
        log::info!("rate set to {rate}");
        Ok(())
    }

    fn set_clock_publish_frequency(&self, hz: f64) -> Result<(), PlayerError> {
        self.refuse_under_sim_time("set_clock_publish_frequency")?;
        rosbag2_rs_clock::check_clock_publish_frequency(hz)?;
        if hz > 0.0 {
            let mut publisher = self.clock_publisher.write();
            if publisher.is_none() {
                *publisher = Some(self.middleware.create_publisher(
                    CLOCK_TOPIC,
                    CLOCK_TYPE,
                    &clock_qos(),
                )?);
            }
        }
        self.clock.set_clock_publish_frequency(hz)?;
        if hz > 0.0 {
            let _ = self.control.clock_changes.0.try_send(());
            log::info!("publishing /clock at {hz} Hz");
        } else {
            // The /clock thread stops waiting for the next tick.
            self.clock.wakeup();
            log::info!("/clock publishing stopped");
        }
        Ok(())
    }

    /// Whether `/clock` is published now (at a frequency, or before messages of some topics).
    fn publishes_clock(&self) -> bool {
        self.clock.get_clock_publish_frequency() > 0.0
            || self.options.clock_topics_all
            || !self.options.clock_topics.is_empty()
    }

    fn play_next(&self) -> Result<(), PlayerError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.ask(Request::PlayNext(tx), rx)?
    }

    fn burst(&self, n: u64) -> Result<u64, PlayerError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.ask(Request::Burst(n, tx), rx)?
    }

    fn seek(&self, time: i64) -> Result<(), PlayerError> {
        self.refuse_under_sim_time("seek")?;
        if time < 0 {
            return Err(PlayerError::Refused(format!(
                "cannot seek to a negative time ({time} ns)"
            )));
        }
        let time = time.max(self.bag_start);
        if time > self.bag_end && self.options.loop_playback {
            return Err(PlayerError::Refused(format!(
                "cannot seek past the end of the bag ({time} ns > {} ns) while looping",
                self.bag_end
            )));
        }
        if time > self.bag_end {
            log::info!("seek past the end of the bag: playback finishes");
            self.control.finish.store(true, Ordering::SeqCst);
            self.clock.wakeup();
            return Ok(());
        }
        *self.control.reposition.lock() = Some(Reposition::To(time));
        self.clock.jump(Time::ros(time))?;
        log::info!("seek to {time}");
        Ok(())
    }

    /// Starts a playback of `span` on a thread of its own (the `play` service).
    fn play_in_background(self: &Arc<Self>, span: PlaySpan) -> Result<(), PlayerError> {
        if self.control.playing.load(Ordering::SeqCst) {
            return Err(PlayerError::Refused("already playing".into()));
        }
        let core = self.clone();
        std::thread::Builder::new()
            .name("player".into())
            .spawn(move || {
                if let Err(e) = core.play(span) {
                    log::error!("playback failed: {}", crate::error_chain::Chain(&e));
                }
            })
            .map_err(PlayerError::Spawn)?;
        Ok(())
    }

    fn stop(&self) {
        request_stop(&self.control, self.clock.as_ref());
    }

    /// The `stop` service: ends the playback that runs, or the first one when it has not
    /// started yet; else, as rosbag2 Lyrical answers, return code 1, "Player is already
    /// stopped.", and nothing is kept for a later playback.
    fn stop_service(&self) -> Result<(), PlayerError> {
        let control = &self.control;
        if control.played.load(Ordering::SeqCst) && !control.playing.load(Ordering::SeqCst) {
            return Err(PlayerError::Refused("Player is already stopped.".into()));
        }
        self.stop();
        Ok(())
    }

    /// Hands a request to the playback thread and waits for its answer.
    fn ask<T>(
        &self,
        request: Request,
        answer: Receiver<Result<T, PlayerError>>,
    ) -> Result<Result<T, PlayerError>, PlayerError> {
        if !self.control.playing.load(Ordering::SeqCst) {
            return Err(PlayerError::Refused("not playing".into()));
        }
        let _ = self.control.requests.0.send(request);
        self.clock.wakeup();
        let give_up = std::time::Instant::now() + ANSWER_TIMEOUT;
        loop {
            match answer.recv_timeout(WAIT_REAL) {
                Ok(answer) => return Ok(answer),
                // The playback ended between the check above and the send: nobody else will
                // take the request from the queue.
                Err(_) if !self.control.playing.load(Ordering::SeqCst) => {
                    self.refuse_queued_requests()
                }
                Err(_) if std::time::Instant::now() >= give_up => {
                    return Err(PlayerError::Refused(
                        "playback ended before the request was served".into(),
                    ))
                }
                Err(_) => {}
            }
        }
    }

    /// Answers the requests no playback will serve: with the failure that ended the last
    /// playback, or as refused because playback ended.
    fn refuse_queued_requests(&self) {
        let failure = self.control.failure.lock().clone();
        let refusal = || PlayerError::Refused(failure.clone().unwrap_or("playback ended".into()));
        while let Ok(request) = self.control.requests.1.try_recv() {
            match request {
                Request::PlayNext(answer) => drop(answer.send(Err(refusal()))),
                Request::Burst(_, answer) => drop(answer.send(Err(refusal()))),
            }
        }
    }

    /// The played topics offered as latched (transient local), with their history depth.
    fn latched_topics(&self) -> Vec<(String, u64)> {
        self.publishers
            .iter()
            .filter(|(_, p)| p.qos.durability == Durability::TransientLocal)
            .map(|(name, p)| (name.clone(), p.qos.depth.max(1)))
            .collect()
    }
}
