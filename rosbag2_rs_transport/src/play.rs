//! Command-line glue shared by the `player` binary and `ros2bag-rs play|burst|control`: the flags
//! of `ros2 bag play`, keyboard controls, a progress line, and a client for the player's services.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use anyhow::{bail, Result};
use rosbag2_rs_clock::{PlaybackRate, Time};
use rosbag2_rs_interfaces::action_msgs::ActionInterface;
use rosbag2_rs_storage::{Bag, StorageConfig, StorageId};

use crate::choice::choice;
use crate::keyboard::{Key, KeyboardControls};
use crate::ros_args::{Param, ParamTable};
use crate::ros_node;
use rosbag2_rs_tools::flags::{non_negative_seconds, seconds, topic_name, InputArgs, TopicArgs};
use rosbag2_rs_transport_lib::{
    load_qos_overrides, service_event_topic, DeclaredParameter, MessageOrder, PlayOptions, Player,
    ServiceIntrospection, ServiceRequestsSource,
};

/// Flags of `ros2 bag play`.
#[derive(Debug, Clone, clap::Args)]
pub struct PlayArgs {
    /// The bags to play.
    #[command(flatten)]
    pub input: InputArgs,
    /// Storage of the bags (mcap, sqlite3, rosbag_v2): checked against the files, which are
    /// detected from their contents without it.
    #[arg(short, long)]
    pub storage: Option<StorageId>,
    /// A storage configuration file, as rosbag2 takes it; it is checked, but reading needs
    /// nothing from it (rosbag2 applies SQLite3 `read: pragmas`, ours reads without them).
    #[arg(long, value_name = "FILE")]
    pub storage_config_file: Option<PathBuf>,
    /// Playback rate (> 0; --start-paused starts paused).
    #[arg(short, long, default_value = "1.0", allow_hyphen_values = true)]
    pub rate: PlaybackRate,
    /// Start with time paused (space or the `resume` service starts it).
    #[arg(short = 'p', long)]
    pub start_paused: bool,
    /// Skip this many seconds from the start of the bag.
    #[arg(long, default_value_t = 0.0)]
    pub start_offset: f64,
    /// Play this many seconds of bag time, then stop (negative: no limit, as in `ros2 bag`).
    #[arg(long, allow_hyphen_values = true)]
    pub playback_duration: Option<f64>,
    /// Stop at this bag timestamp (seconds; negative: no limit).
    #[arg(
        long,
        conflicts_with = "playback_until_nsec",
        allow_hyphen_values = true
    )]
    pub playback_until_sec: Option<f64>,
    /// Stop at this bag timestamp (nanoseconds; negative: no limit).
    #[arg(long, allow_hyphen_values = true)]
    pub playback_until_nsec: Option<i64>,
    /// Wait this many seconds before playing.
    #[arg(short, long, default_value_t = 0.0)]
    pub delay: f64,
    /// Play again from the start when the end is reached.
    #[arg(short, long = "loop")]
    pub loop_playback: bool,
    /// Which topics to play.
    #[command(flatten)]
    pub topics: TopicArgs,
    /// Rename topics: `from:=to` (several allowed).
    #[arg(short = 'm', long, num_args = 1..)]
    pub remap: Vec<String>,
    /// YAML file with QoS profiles to offer per topic instead of the recorded ones.
    #[arg(long)]
    pub qos_profile_overrides_path: Option<PathBuf>,
    /// Messages read ahead of playback.
    #[arg(long, default_value_t = 1000)]
    pub read_ahead_queue_size: usize,
    /// Publish /clock at this frequency (Hz, > 0); without a value, 40 Hz.
    #[arg(long, num_args = 0..=1, default_missing_value = "40", allow_negative_numbers = true, conflicts_with_all = ["clock_topics", "clock_topics_all"])]
    pub clock: Option<f64>,
    /// Publish /clock before each message of these topics.
    #[arg(long, num_args = 1.., conflicts_with = "clock_topics_all")]
    pub clock_topics: Vec<String>,
    /// Publish /clock before every message.
    #[arg(long)]
    pub clock_topics_all: bool,
    /// Follow an external /clock instead of controlling time.
    #[arg(long)]
    pub use_sim_time: bool,
    /// With --use-sim-time, extrapolate time between /clock messages.
    #[arg(long)]
    pub extrapolate_ros_time: bool,
    /// With --use-sim-time, a forward /clock step of more than this many seconds skips the
    /// messages it passes over (default: every message whose time has come is played).
    #[arg(long, value_name = "SECONDS")]
    pub sim_time_jump_threshold: Option<f64>,
    /// At the end, wait up to this many milliseconds until reliable subscribers acknowledged
    /// every message (0: without limit; negative: do not wait).
    #[arg(long, default_value_t = -1, allow_hyphen_values = true, value_name = "TIMEOUT_MS")]
    pub wait_for_all_acked: i64,
    /// No keyboard controls.
    #[arg(long)]
    pub disable_keyboard_controls: bool,
    /// Accepted for `ros2 bag play` compatibility: messages are never loaned here.
    #[arg(long)]
    pub disable_loan_message: bool,
    /// Node name: the services are `/<node-name>/pause` etc.
    #[arg(long, default_value = "rosbag2_player")]
    pub node_name: String,
    /// Only the recorded events of these services (their `<service>/_service_event` topics;
    /// with --topics, those topics as well).
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub services: Vec<String>,
    /// Leave out the recorded events of these services.
    #[arg(long, num_args = 1.., value_name = "SERVICE")]
    pub exclude_services: Vec<String>,
    /// Only the recorded topics of these actions (with --topics or --services, those as well).
    #[arg(long, num_args = 1.., value_name = "ACTION")]
    pub actions: Vec<String>,
    /// Leave out the recorded topics of these actions.
    #[arg(long, num_args = 1.., value_name = "ACTION")]
    pub exclude_actions: Vec<String>,
    /// Send the requests of each recorded action's send_goal, cancel_goal and get_result events
    /// to the action's server at their times (the source as --service-requests-source says);
    /// its feedback and status topics, which the server publishes, are not played.
    #[arg(long)]
    pub send_actions_as_client: bool,
    /// Order (and schedule) messages by the time they were received (recorded) or sent
    /// (published).
    #[arg(
        long,
        value_parser = choice::<MessageOrder>(),
        ignore_case = true,
        default_value = "received"
    )]
    pub message_order: MessageOrder,
    /// Update the progress line at this frequency in Hz (0: no progress line; negative: as
    /// often as possible, at most 100 Hz). Shown only when stdout is a terminal.
    /// `--progress-bar-update-rate` is rosbag2's (Kilted) spelling.
    #[arg(
        long,
        alias = "progress-bar-update-rate",
        default_value_t = 3.0,
        allow_hyphen_values = true,
        value_name = "HZ"
    )]
    pub progress_bar: f64,
    /// Empty lines printed between the log output and the progress line when it starts
    /// (rosbag2 Kilted).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub progress_bar_separation_lines: u32,
    /// Publish service events of the player's own services (off, metadata or contents).
    #[arg(long, value_parser = choice::<ServiceIntrospection>(), default_value = "off")]
    pub service_introspection: ServiceIntrospection,
    /// Replay recorded service events as requests sent to their services, instead of
    /// publishing the events.
    #[arg(long)]
    pub publish_service_requests: bool,
    /// Which recorded requests --publish-service-requests and --send-actions-as-client send:
    /// those servers received (service_introspection) or those clients sent
    /// (client_introspection).
    #[arg(
        long,
        value_parser = choice::<ServiceRequestsSource>(),
        ignore_case = true,
        default_value = "service_introspection"
    )]
    pub service_requests_source: ServiceRequestsSource,
    /// Message definitions of this ROS 2 distribution (humble, iron, jazzy, kilted) for bags
    /// that store none (recorded before Iron): they give the type hashes and type descriptions
    /// the player announces.
    #[arg(long, value_parser = rosbag2_rs_codec::Typestore::parse)]
    pub typestore: Option<rosbag2_rs_codec::Typestore>,
}

/// rosbag2's player node parameters (`ros2 launch` files for its composable player) and the
/// flags they stand for.
pub const PLAY_PARAMETERS: ParamTable = ParamTable {
    node: "player",
    params: &[
        ("use_sim_time", Param::Switch("--use-sim-time")),
        ("storage.uri", Param::Positional),
        ("storage.storage_id", Param::Value("--storage")),
        (
            "play.read_ahead_queue_size",
            Param::Value("--read-ahead-queue-size"),
        ),
        ("play.rate", Param::Value("--rate")),
        ("play.topics_to_filter", Param::List("--topics")),
        ("play.regex_to_filter", Param::Value("--regex")),
        (
            "play.exclude_topics_to_filter",
            Param::List("--exclude-topics"),
        ),
        (
            "play.exclude_regex_to_filter",
            Param::Value("--exclude-regex"),
        ),
        ("play.loop", Param::Switch("--loop")),
        ("play.clock_publish_frequency", Param::Positive("--clock")),
        (
            "play.clock_publish_on_topic_publish",
            Param::Switch("--clock-topics-all"),
        ),
        ("play.clock_trigger_topics", Param::List("--clock-topics")),
        ("play.delay", Param::Seconds("--delay")),
        (
            "play.playback_duration",
            Param::Seconds("--playback-duration"),
        ),
        (
            "play.playback_until_timestamp",
            Param::Nanoseconds("--playback-until-nsec"),
        ),
        ("play.start_paused", Param::Switch("--start-paused")),
        ("play.start_offset", Param::Seconds("--start-offset")),
        (
            "play.disable_keyboard_controls",
            Param::Switch("--disable-keyboard-controls"),
        ),
        (
            "play.qos_profile_overrides_path",
            Param::Value("--qos-profile-overrides-path"),
        ),
        (
            "play.wait_acked_timeout",
            Param::Milliseconds("--wait-for-all-acked"),
        ),
        ("play.node_prefix", Param::Unused),
        ("play.services_to_filter", Param::List("--services")),
        (
            "play.exclude_services_to_filter",
            Param::List("--exclude-services"),
        ),
        ("play.actions_to_filter", Param::List("--actions")),
        (
            "play.exclude_actions_to_filter",
            Param::List("--exclude-actions"),
        ),
        (
            "play.send_actions_as_client",
            Param::Switch("--send-actions-as-client"),
        ),
        (
            "play.disable_loan_message",
            Param::Switch("--disable-loan-message"),
        ),
        (
            "play.publish_service_requests",
            Param::Switch("--publish-service-requests"),
        ),
        // rosbag2's own spelling of the parameter (singular).
        (
            "play.publish_service_request",
            Param::Switch("--publish-service-requests"),
        ),
        (
            "play.progress_bar_update_rate",
            Param::Value("--progress-bar"),
        ),
        (
            "play.progress_bar_separation_lines",
            Param::Value("--progress-bar-separation-lines"),
        ),
        (
            "play.service_requests_source",
            Param::Value("--service-requests-source"),
        ),
        ("play.message_order", Param::Value("--message-order")),
        ("play.topic_remapping_options", Param::Unsupported),
        (
            "storage.storage_config_uri",
            Param::Value("--storage-config-file"),
        ),
        // rosbag2's player declares every storage option and reads only `uri`, `storage_id` and
        // `storage_config_uri`.
        ("storage.max_bagfile_size", Param::Unused),
        ("storage.max_bagfile_duration", Param::Unused),
        ("storage.max_bag_files", Param::Unused),
        ("storage.max_cache_size", Param::Unused),
        ("storage.max_cache_duration", Param::Unused),
        ("storage.storage_preset_profile", Param::Unused),
        ("storage.snapshot_mode", Param::Unused),
        ("storage.start_time_ns", Param::Unused),
        ("storage.end_time_ns", Param::Unused),
        ("storage.custom_data", Param::Unused),
    ],
    default_node_name: "rosbag2_player",
    node_name_flag: "--node-name",
    remap_flag: Some("--remap"),
};

impl PlayArgs {
    /// The player options these flags describe.
    pub fn options(&self) -> Result<PlayOptions> {
        let bags = self.input.resolve(self.storage)?;
        let storage_config = match &self.storage_config_file {
            Some(file) => {
                let first = Bag::locate(&bags[0])?;
                StorageConfig::load(file, StorageId::detect(&first.files[0])?)?
            }
            None => StorageConfig::default(),
        };
        if let Some(hz) = self.clock {
            anyhow::ensure!(
                hz.is_finite() && hz > 0.0,
                "--clock takes a frequency above 0 Hz (leave it out to publish no /clock), got {hz}"
            );
        }
        let mut topics = self.topics.clone();
        topics.topics.extend(
            self.services
                .iter()
                .map(|s| service_event_topic(&topic_name(s))),
        );
        topics.exclude_topics.extend(
            self.exclude_services
                .iter()
                .map(|s| service_event_topic(&topic_name(s))),
        );
        let action_topics = |actions: &[String]| -> Vec<String> {
            actions
                .iter()
                .flat_map(|a| ActionInterface::ALL.map(|i| i.topic(&topic_name(a))))
                .collect()
        };
        topics.topics.extend(action_topics(&self.actions));
        topics
            .exclude_topics
            .extend(action_topics(&self.exclude_actions));
        let filter = topics.filter()?;
        let remap = self
            .remap
            .iter()
            .map(|rule| match rule.split_once(":=") {
                Some((from, to)) if !from.is_empty() && !to.is_empty() => {
                    Ok((topic_name(from), topic_name(to)))
                }
                _ => bail!("--remap takes from:=to, got '{rule}'"),
            })
            .collect::<Result<_>>()?;
        let qos_overrides = match &self.qos_profile_overrides_path {
            Some(path) => load_qos_overrides(path)?,
            None => Default::default(),
        };
        // As in `ros2 bag play`, a negative time or duration means "not set".
        let playback_until = match (self.playback_until_sec, self.playback_until_nsec) {
            (Some(s), _) if s >= 0.0 => Some(seconds(s, "--playback-until-sec")?.as_nanos()),
            (_, n) => n.filter(|n| *n >= 0),
        }
        .map(Time::ros);
        Ok(PlayOptions {
            bags,
            storage_config,
            rate: self.rate,
            start_paused: self.start_paused,
            start_offset: seconds(self.start_offset, "--start-offset")?,
            playback_duration: self
                .playback_duration
                .filter(|d| *d >= 0.0)
                .map(|d| seconds(d, "--playback-duration"))
                .transpose()?,
            playback_until,
            delay: seconds(self.delay, "--delay")?,
            loop_playback: self.loop_playback,
            filter,
            remap,
            qos_overrides,
            read_ahead_queue_size: self.read_ahead_queue_size,
            clock_publish_frequency: self.clock.unwrap_or(0.0),
            clock_topics: self.clock_topics.iter().map(|t| topic_name(t)).collect(),
            clock_topics_all: self.clock_topics_all,
            use_sim_time: self.use_sim_time,
            extrapolate_ros_time: self.extrapolate_ros_time,
            sim_time_jump_threshold: self
                .sim_time_jump_threshold
                .map(|s| non_negative_seconds(s, "--sim-time-jump-threshold"))
                .transpose()?,
            node_name: self.node_name.clone(),
            keep_all_history: false,
            message_order: self.message_order,
            service_introspection: self.service_introspection,
            publish_service_requests: self.publish_service_requests,
            send_actions_as_client: self.send_actions_as_client,
            service_requests_source: self.service_requests_source,
            typestore: self.typestore,
        })
    }

    /// How long to wait for acknowledgements at the end (`None`: do not wait).
    fn ack_timeout(&self) -> Option<StdDuration> {
        match self.wait_for_all_acked {
            ms if ms < 0 => None,
            0 => Some(StdDuration::MAX),
            ms => Some(StdDuration::from_millis(ms as u64)),
        }
    }
}

/// `ros2 bag play`: plays until the end, a `stop` request or SIGINT/SIGTERM.
pub fn run_play(
    args: &PlayArgs,
    namespace: &str,
    parameters: Vec<DeclaredParameter>,
) -> Result<()> {
    let options = args.options()?;
    let node = ros_node(&options.node_name, namespace)?;
    let _services = crate::node_services(&*node, parameters)?;
    let player = Arc::new(Player::new(node, options)?);
    let controls = attach(
        &player,
        !args.disable_keyboard_controls,
        progress_interval(args.progress_bar)?
            .map(|every| (every, args.progress_bar_separation_lines)),
    )?;
    let summary = player.play()?;
    drop(controls);
    if let Some(timeout) = args.ack_timeout() {
        if !player.wait_for_acks(timeout) {
            log::warn!("not every message was acknowledged within --wait-for-all-acked");
        }
    }
    log::info!("{} messages played", summary.published);
    Ok(())
}

/// `ros2 bag burst`'s flags: those of `play`, and how many messages.
#[derive(Debug, Clone, clap::Args)]
pub struct BurstArgs {
    /// The playback flags.
    #[command(flatten)]
    pub play: PlayArgs,
    /// How many messages (0 = all).
    #[arg(short, long, default_value_t = 0)]
    pub num_messages: u64,
    /// Before publishing, wait up to this many seconds until every topic has a subscriber (a
    /// recorder started just before needs a moment to discover the topics); afterwards, wait as
    /// long for reliable subscribers to acknowledge every message.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub wait_for_subscribers: f64,
}

/// `ros2 bag burst`: publishes up to `num_messages` (0 = all) as fast as possible, then exits
/// once subscribers have acknowledged them (or after `--wait-for-subscribers`); the node in
/// `namespace` declares `parameters` (the player's).
pub fn run_burst(
    args: &BurstArgs,
    namespace: &str,
    parameters: Vec<DeclaredParameter>,
) -> Result<()> {
    let mut options = args.play.options()?;
    options.start_paused = true;
    options.keep_all_history = true;
    anyhow::ensure!(
        args.wait_for_subscribers.is_finite() && args.wait_for_subscribers >= 0.0,
        "--wait-for-subscribers takes seconds >= 0"
    );
    let wait = StdDuration::from_secs_f64(args.wait_for_subscribers);
    let node = ros_node(&options.node_name, namespace)?;
    let _services = crate::node_services(&*node, parameters)?;
    let player = Arc::new(Player::new(node, options)?);
    let lonely = player.wait_for_subscribers(wait);
    if !lonely.is_empty() {
        log::warn!(
            "no subscriber after {:.1} s on {}: bursting anyway",
            wait.as_secs_f64(),
            lonely.join(", ")
        );
    }
    // SIGINT/SIGTERM stop the burst and leave through the normal path (node torn down).
    let controls = attach(&player, false, None)?;
    let playing = player.clone();
    let playback = std::thread::spawn(move || playing.play());
    while !player.is_playing() && !playback.is_finished() {
        std::thread::sleep(StdDuration::from_millis(1));
    }
    let limit = match args.num_messages {
        0 => u64::MAX,
        n => n,
    };
    let burst = player.burst(limit);
    player.stop();
    let summary = playback
        .join()
        .map_err(|_| anyhow::anyhow!("playback thread panicked"))??;
    if !player.wait_for_acks(args.play.ack_timeout().unwrap_or(wait)) {
        log::warn!("not every message was acknowledged by the subscribers in time");
    }
    drop(controls);
    log::info!("burst {} messages", burst.unwrap_or(summary.published));
    Ok(())
}

/// Keyboard controls, the progress line and signal handling for an interactive player. Dropping
/// it ends the progress line, so that what is logged next starts on a line of its own.
struct Attached {
    _keyboard: Option<KeyboardControls>,
    progress: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl Drop for Attached {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.progress.take() {
            stop.store(true, Ordering::SeqCst);
            let _ = thread.join();
        }
    }
}

/// The pause between two updates of the progress line at `hz` (`None`: no progress line).
fn progress_interval(hz: f64) -> Result<Option<StdDuration>> {
    anyhow::ensure!(!hz.is_nan(), "--progress-bar takes a frequency in Hz");
    Ok(if hz == 0.0 {
        None
    } else if !(0.0..=100.0).contains(&hz) {
        Some(StdDuration::from_millis(10))
    } else {
        Some(StdDuration::from_secs_f64(1.0 / hz))
    })
}

/// Starts the keyboard controls (`keyboard`), the progress line (`progress`: its period and
/// the empty lines before it) and the signal handling of an interactive player.
fn attach(
    player: &Arc<Player>,
    keyboard: bool,
    progress: Option<(StdDuration, u32)>,
) -> Result<Attached> {
    let signals = crate::shutdown::shutdown_requested()?;
    // Not the player: the thread outlives playback (it waits for a signal that may never come),
    // and the player it held, even for a moment, could be dropped there, with its node (and its
    // participant's goodbye to the graph) cut short by the main thread's exit.
    let on_signal = player.stop_handle();
    std::thread::spawn(move || {
        if signals.recv().is_ok() {
            on_signal.stop();
        }
        // A second signal while stopping: leave at once.
        if signals.recv().is_ok() {
            std::process::exit(130);
        }
    });
    let keyboard = if keyboard {
        let keys = player.clone();
        let controls = KeyboardControls::spawn(move |key| on_key(&keys, key));
        if controls.is_some() {
            log::info!("keys: space pause/resume, right arrow play next, up/down rate ±10%");
        }
        controls
    } else {
        None
    };
    let progress =
        progress
            .filter(|_| std::io::stdout().is_terminal())
            .map(|(every, separation)| {
                let stop = Arc::new(AtomicBool::new(false));
                let (player, flag) = (player.clone(), stop.clone());
                (
                    stop,
                    std::thread::spawn(move || show_progress(&player, &flag, every, separation)),
                )
            });
    Ok(Attached {
        _keyboard: keyboard,
        progress,
    })
}

/// What the Up and Down keys add to or take from the rate (rosbag2's `PlayerImpl`).
const RATE_STEP: f64 = 0.1;

fn on_key(player: &Player, key: Key) {
    let result = match key {
        Key::Space => player.toggle_paused(),
        Key::Right => player.play_next(),
        // As rosbag2's player: 0.1 up or down (a rate that would not be positive is refused).
        Key::Up => player.set_rate(player.rate() + RATE_STEP),
        Key::Down => player.set_rate(player.rate() - RATE_STEP),
        _ => Ok(()),
    };
    if let Err(e) = result {
        log::warn!("{e}");
    }
}

/// Rewrites one terminal line with the position, rate and state, `every` so often, until
/// `stop`, `separation` empty lines below the log output; then ends the line. Log lines clear
/// it first (see `logging`).
fn show_progress(player: &Player, stop: &AtomicBool, every: StdDuration, separation: u32) {
    let (start, end) = player.bag_range();
    let mut out = std::io::stdout();
    let _ = write!(out, "{}", "\n".repeat(separation as usize));
    rosbag2_rs_tools::console::set_progress_line(true);
    // Sleeps in slices of at most 100 ms, so that the end is noticed soon at a low frequency.
    let slice = every.min(StdDuration::from_millis(100));
    let mut next = std::time::Instant::now();
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(slice);
        if std::time::Instant::now() < next {
            continue;
        }
        next += every;
        let position = (player.position() - start) as f64 * 1e-9;
        let state = if !player.is_playing() {
            "stopped"
        } else if player.is_paused() {
            "paused "
        } else {
            "playing"
        };
        let _ = write!(
            out,
            "\r\x1b[K[{state}] {position:9.3} / {:.3} s   rate {:.2}",
            (end - start) as f64 * 1e-9,
            player.rate()
        );
        let _ = out.flush();
    }
    rosbag2_rs_tools::console::set_progress_line(false);
    let _ = writeln!(out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        play: PlayArgs,
    }

    fn options(args: &[&str]) -> PlayOptions {
        let cli = Cli::try_parse_from(["play", "bag"].iter().chain(args)).unwrap();
        cli.play.options().unwrap()
    }

    #[test]
    fn the_rate_keys_step_by_a_tenth_as_in_rosbag2() {
        let bag = tempfile::tempdir().unwrap();
        let uri = bag.path().join("bag");
        let mut writer =
            rosbag2_rs_storage::BagWriter::create(rosbag2_rs_storage::BagWriterOptions {
                uri: uri.clone(),
                ..Default::default()
            })
            .unwrap();
        writer
            .create_topic(
                &rosbag2_rs_storage::TopicMetadata::new("/a", "std_msgs/msg/String"),
                None,
            )
            .unwrap();
        writer.close().unwrap();
        let bus = rosbag2_rs_transport_lib::InProcessBus::new();
        let node = bus.node("player", "/").unwrap();
        let opts = PlayOptions {
            bags: vec![uri],
            ..Default::default()
        };
        let player = Player::new(Arc::new(node), opts).unwrap();
        on_key(&player, Key::Up);
        assert!((player.rate() - 1.1).abs() < 1e-9);
        for _ in 0..10 {
            on_key(&player, Key::Down);
        }
        // 1.1 - 1.0 = 0.1: the next step down would reach 0, which is refused.
        assert!((player.rate() - 0.1).abs() < 1e-9, "{}", player.rate());
    }

    #[test]
    fn negative_limits_mean_not_set_and_a_rate_is_checked_as_it_is_parsed() {
        let o = options(&["--playback-until-sec", "-1", "--playback-duration", "-1"]);
        assert_eq!((o.playback_until, o.playback_duration), (None, None));
        let o = options(&["--playback-until-nsec", "-1"]);
        assert_eq!(o.playback_until, None);
        let o = options(&["--playback-until-sec", "2", "--playback-duration", "1.5"]);
        assert_eq!(o.playback_until, Some(Time::ros(2_000_000_000)));
        assert_eq!(
            o.playback_duration,
            Some(rosbag2_rs_clock::Duration::from_nanos(1_500_000_000))
        );
        let err = Cli::try_parse_from(["play", "bag", "--rate", "-1"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("--rate") && err.contains("> 0"), "{err}");
        assert_eq!(options(&["--rate", "2"]).rate.get(), 2.0);
    }

    #[test]
    fn services_filter_their_event_topics_and_flags_reach_the_options() {
        let o = options(&["--services", "/p/set_rate", "q/pause"]);
        assert!(o.filter.matches("/p/set_rate/_service_event"));
        assert!(o.filter.matches("/q/pause/_service_event"));
        assert!(!o.filter.matches("/chatter"));
        let o = options(&["--exclude-services", "/p/set_rate"]);
        assert!(!o.filter.matches("/p/set_rate/_service_event"));
        assert!(o.filter.matches("/chatter"));
        assert_eq!(o.message_order, MessageOrder::Received);
        let o = options(&[
            "--message-order",
            "sent",
            "--service-introspection",
            "contents",
        ]);
        assert_eq!(o.message_order, MessageOrder::Sent);
        assert_eq!(o.service_introspection, ServiceIntrospection::Contents);
        assert_eq!(progress_interval(0.0).unwrap(), None);
        assert_eq!(
            progress_interval(4.0).unwrap(),
            Some(StdDuration::from_millis(250))
        );
        assert_eq!(
            progress_interval(-1.0).unwrap(),
            Some(StdDuration::from_millis(10))
        );
        assert!(progress_interval(f64::NAN).is_err());
    }

    #[test]
    fn service_requests_flags_take_rosbag2s_spellings() {
        let o = options(&[]);
        assert!(!o.publish_service_requests);
        assert_eq!(
            o.service_requests_source,
            ServiceRequestsSource::ServiceIntrospection
        );
        // As `ros2 bag play` spells the value, and as the parameter does (what
        // `-p play.service_requests_source:=CLIENT_INTROSPECTION` becomes).
        for value in ["client_introspection", "CLIENT_INTROSPECTION"] {
            let o = options(&[
                "--publish-service-requests",
                "--service-requests-source",
                value,
            ]);
            assert!(o.publish_service_requests);
            assert_eq!(
                o.service_requests_source,
                ServiceRequestsSource::ClientIntrospection
            );
        }
        assert!(Cli::try_parse_from(["play", "bag", "--service-requests-source", "x"]).is_err());
    }

    #[test]
    fn kilted_and_humble_spellings_are_taken() {
        let parse = |args: &[&str]| Cli::try_parse_from(["play", "bag"].iter().chain(args));
        let cli = parse(&["--progress-bar-update-rate", "0", "--exclude", "/a.*"]).unwrap();
        assert_eq!(cli.play.progress_bar, 0.0);
        let o = cli.play.options().unwrap();
        assert!(!o.filter.matches("/abc") && o.filter.matches("/b"));
        // rosbag2's parameter names, as a launch file gives them.
        let (own, ros) = crate::split_ros_args(
            [
                "player",
                "bag",
                "--ros-args",
                "-p",
                "play.publish_service_request:=true",
                "-p",
                "play.progress_bar_update_rate:=0",
            ]
            .map(String::from),
        );
        let (argv, warnings) = ros.command_line(own, &PLAY_PARAMETERS).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let cli = Cli::try_parse_from(argv).unwrap();
        assert!(cli.play.publish_service_requests);
        assert_eq!(cli.play.progress_bar, 0.0);
    }
}
