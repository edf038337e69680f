//! What to play and how: the options of `ros2 bag play`.

use rosbag2_rs_clock::{Duration, PlaybackRate, Time};
use std::collections::BTreeMap;
use std::path::PathBuf;

use rosbag2_rs_interfaces::service_msgs::ServiceEventInfo;
use rosbag2_rs_storage::{QosProfile, StorageConfig, TopicFilter};

use rosbag2_rs_middleware::services::ServiceIntrospection;

/// Playback options, mirroring `ros2 bag play`. All times are nanoseconds.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Bags (directories or single files), merged in receive-time order.
    pub bags: Vec<PathBuf>,
    /// What `--storage-config-file` sets for reading (SQLite3's `read: pragmas`).
    pub storage_config: StorageConfig,
    /// Playback rate.
    pub rate: PlaybackRate,
    /// Start with time paused.
    pub start_paused: bool,
    /// Skip this much of the bag (from its first message) before playing.
    pub start_offset: Duration,
    /// Stop after this much bag time from the start point.
    pub playback_duration: Option<Duration>,
    /// Stop at this bag timestamp.
    pub playback_until: Option<Time>,
    /// Wait this long (steady time) before playing.
    pub delay: Duration,
    /// Start again from the start point when the end is reached.
    pub loop_playback: bool,
    /// Which topics to play.
    pub filter: TopicFilter,
    /// Topic renames, `from → to` (fully qualified names).
    pub remap: Vec<(String, String)>,
    /// QoS to offer instead of the one adapted from the recording, per topic.
    pub qos_overrides: BTreeMap<String, QosProfile>,
    /// Messages read ahead of playback.
    pub read_ahead_queue_size: usize,
    /// Publish `/clock` at this frequency (Hz); 0 disables.
    pub clock_publish_frequency: f64,
    /// Publish `/clock` before each message of these topics.
    pub clock_topics: Vec<String>,
    /// Publish `/clock` before every message.
    pub clock_topics_all: bool,
    /// Follow an external `/clock` instead of controlling time.
    pub use_sim_time: bool,
    /// With `use_sim_time`, extrapolate between `/clock` samples.
    pub extrapolate_ros_time: bool,
    /// With `use_sim_time`, a forward `/clock` step larger than this skips the messages it
    /// passes over (playback continues from the new time). `None`: every forward step releases
    /// every message whose time has come, in order. Backward steps always reposition.
    pub sim_time_jump_threshold: Option<Duration>,
    /// Node name; services live under `/<node_name>/`.
    pub node_name: String,
    /// Reliable publishers keep every message until each subscriber acknowledged it (keep-all
    /// history): a slow subscriber makes publishing wait instead of losing messages. `burst`
    /// sets it.
    pub keep_all_history: bool,
    /// Service introspection of the player's own services (off by default, as in rclcpp).
    pub service_introspection: ServiceIntrospection,
    /// Which timestamp orders and schedules the messages.
    pub message_order: MessageOrder,
    /// Replay recorded service events as calls of their services (the request of each event
    /// of [`service_requests_source`](Self::service_requests_source)) instead of publishing them.
    pub publish_service_requests: bool,
    /// Replay recorded actions as their client did (rosbag2's `--send-actions-as-client`): the
    /// requests of each action's `send_goal`, `cancel_goal` and `get_result` events are sent to
    /// the action's server; its `feedback` and `status` topics, the server's side, are not
    /// played.
    pub send_actions_as_client: bool,
    /// Which recorded events' requests [`publish_service_requests`](Self::publish_service_requests)
    /// and [`send_actions_as_client`](Self::send_actions_as_client) send.
    pub service_requests_source: ServiceRequestsSource,
    /// Definitions for bags that store none (`--typestore`).
    pub typestore: Option<rosbag2_rs_codec::Typestore>,
}

/// Where the replayed service requests come from (`ros2 bag play --service-requests-source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServiceRequestsSource {
    /// Requests as servers received them (`REQUEST_RECEIVED` events).
    #[default]
    ServiceIntrospection,
    /// Requests as clients sent them (`REQUEST_SENT` events).
    ClientIntrospection,
}

impl ServiceRequestsSource {
    /// The `service_msgs/ServiceEventInfo` event type whose requests are replayed.
    pub fn event_type(self) -> u8 {
        match self {
            Self::ServiceIntrospection => ServiceEventInfo::REQUEST_RECEIVED,
            Self::ClientIntrospection => ServiceEventInfo::REQUEST_SENT,
        }
    }
}

/// Which timestamp of the recorded messages playback follows (`ros2 bag play --message-order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MessageOrder {
    /// The receive (recording) time: the order of the bag.
    #[default]
    Received,
    /// The send (publication) time. The bag is read in receive order and sorted again within
    /// a window of the read-ahead queue's size: a message sent before others it was received
    /// after by more than that many messages is played late (at once when its time has passed).
    /// The message's time for playback, `/clock`, seeks and bounds is then its send time.
    Sent,
}

impl Default for PlayOptions {
    fn default() -> Self {
        Self {
            bags: Vec::new(),
            storage_config: StorageConfig::default(),
            rate: PlaybackRate::REAL_TIME,
            start_paused: false,
            start_offset: Duration::ZERO,
            playback_duration: None,
            playback_until: None,
            delay: Duration::ZERO,
            loop_playback: false,
            filter: TopicFilter::all(),
            remap: Vec::new(),
            qos_overrides: BTreeMap::new(),
            read_ahead_queue_size: 1000,
            clock_publish_frequency: 0.0,
            clock_topics: Vec::new(),
            clock_topics_all: false,
            use_sim_time: false,
            extrapolate_ros_time: false,
            sim_time_jump_threshold: None,
            node_name: "rosbag2_player".into(),
            keep_all_history: false,
            service_introspection: ServiceIntrospection::Off,
            message_order: MessageOrder::Received,
            publish_service_requests: false,
            send_actions_as_client: false,
            service_requests_source: ServiceRequestsSource::ServiceIntrospection,
            typestore: None,
        }
    }
}

impl PlayOptions {
    /// Whether `/clock` is published before each message of `topic`.
    pub fn clock_before(&self, topic: &str) -> bool {
        self.clock_topics_all || self.clock_topics.iter().any(|t| t == topic)
    }

    /// Whether the player publishes `/clock` at all.
    pub fn publishes_clock(&self) -> bool {
        !self.use_sim_time
            && (self.clock_publish_frequency > 0.0
                || self.clock_topics_all
                || !self.clock_topics.is_empty())
    }

    /// The name a bag topic is published under.
    pub fn remapped<'a>(&'a self, topic: &'a str) -> &'a str {
        self.remap
            .iter()
            .find(|(from, _)| from == topic)
            .map_or(topic, |(_, to)| to.as_str())
    }
}
