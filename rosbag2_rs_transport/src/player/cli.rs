//! Command-line glue shared by the `player` binary and `ros2bag-rs play|burst|control`: the flags
//! of `ros2 bag play`, keyboard controls, a progress line, and a client for the player's services.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use anyhow::{bail, Context, Result};
use rosbag2_rs_interfaces::builtin_interfaces::Time as TimeMsg;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::ServiceType;
use rosbag2_rs_storage::TopicFilter;

use super::{PlayOptions, Player};
use crate::dds::{DdsConfig, DdsMiddleware};
use crate::keyboard::{Key, KeyboardControls};
use crate::middleware::Middleware;
use crate::qos_overrides::load_qos_overrides;
use crate::services::Client;

/// Flags of `ros2 bag play`.
#[derive(Debug, Clone, clap::Args)]
pub struct PlayArgs {
    /// Bags to play (directories or .mcap/.db3 files), merged in time order.
    #[arg(required = true)]
    pub bags: Vec<PathBuf>,
    /// Playback rate (> 0).
    #[arg(short, long, default_value_t = 1.0, allow_hyphen_values = true)]
    pub rate: f64,
    /// Start with time paused (space or the `resume` service starts it).
    #[arg(long)]
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
    /// Play only these topics.
    #[arg(long, num_args = 1..)]
    pub topics: Vec<String>,
    /// Play only topics matching this regular expression (whole name).
    #[arg(short = 'e', long)]
    pub regex: Option<String>,
    /// Do not play topics matching this regular expression.
    #[arg(short = 'x', long)]
    pub exclude_regex: Option<String>,
    /// Do not play these topics.
    #[arg(long, num_args = 1..)]
    pub exclude_topics: Vec<String>,
    /// Rename topics: `from:=to` (several allowed).
    #[arg(short = 'm', long, num_args = 1..)]
    pub remap: Vec<String>,
    /// YAML file with QoS profiles to offer per topic instead of the recorded ones.
    #[arg(long)]
    pub qos_profile_overrides_path: Option<PathBuf>,
    /// Messages read ahead of playback.
    #[arg(long, default_value_t = 1000)]
    pub read_ahead_queue_size: usize,
    /// Publish /clock at this frequency (Hz); without a value, 40 Hz.
    #[arg(long, num_args = 0..=1, default_missing_value = "40")]
    pub clock: Option<f64>,
    /// Publish /clock before each message of these topics.
    #[arg(long, num_args = 1..)]
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
    /// No keyboard controls.
    #[arg(long)]
    pub disable_keyboard_controls: bool,
    /// Node name: the services are /<node-name>/pause etc.
    #[arg(long, default_value = "rosbag2_player")]
    pub node_name: String,
}

fn nanos(seconds: f64, flag: &str) -> Result<i64> {
    if !seconds.is_finite() {
        bail!("{flag} must be a number of seconds, not {seconds}");
    }
    Ok((seconds * 1e9).round() as i64)
}

fn topic_name(name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/{name}")
    }
}

impl PlayArgs {
    /// The player options these flags describe.
    pub fn options(&self) -> Result<PlayOptions> {
        let filter = TopicFilter::from_parts(
            self.topics.iter().map(|t| topic_name(t)).collect(),
            self.regex.as_deref(),
            self.exclude_topics.iter().map(|t| topic_name(t)).collect(),
            self.exclude_regex.as_deref(),
        )?;
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
            (Some(s), _) if s >= 0.0 => Some(nanos(s, "--playback-until-sec")?),
            (_, n) => n.filter(|n| *n >= 0),
        };
        Ok(PlayOptions {
            bags: self.bags.clone(),
            rate: self.rate,
            start_paused: self.start_paused,
            start_offset: nanos(self.start_offset, "--start-offset")?,
            playback_duration: self
                .playback_duration
                .filter(|d| *d >= 0.0)
                .map(|d| nanos(d, "--playback-duration"))
                .transpose()?,
            playback_until,
            delay: nanos(self.delay, "--delay")?,
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
            node_name: self.node_name.clone(),
        })
    }
}

/// The DDS node of a command-line tool, configured from the ROS 2 environment variables.
pub fn dds_node(name: &str, namespace: &str) -> Result<Arc<dyn Middleware>> {
    let config = DdsConfig::from_env()?;
    let node = DdsMiddleware::with_config(name, namespace, config)
        .with_context(|| format!("cannot create the ROS 2 node {name}"))?;
    Ok(Arc::new(node))
}

/// `ros2 bag play`: plays until the end, a `stop` request or SIGINT/SIGTERM.
pub fn run_play(args: &PlayArgs, namespace: &str) -> Result<()> {
    let options = args.options()?;
    let node = dds_node(&options.node_name, namespace)?;
    let player = Arc::new(Player::new(node, options)?);
    let _controls = attach(&player, !args.disable_keyboard_controls)?;
    let summary = player.play()?;
    log::info!("{} messages played", summary.published);
    Ok(())
}

/// `ros2 bag burst`: publishes up to `num_messages` (0 = all) as fast as possible, then exits.
pub fn run_burst(args: &PlayArgs, num_messages: u64, namespace: &str) -> Result<()> {
    let mut options = args.options()?;
    options.start_paused = true;
    let node = dds_node(&options.node_name, namespace)?;
    let player = Arc::new(Player::new(node, options)?);
    let playing = player.clone();
    let playback = std::thread::spawn(move || playing.play());
    while !player.is_playing() && !playback.is_finished() {
        std::thread::sleep(StdDuration::from_millis(1));
    }
    let limit = if num_messages == 0 {
        u64::MAX
    } else {
        num_messages
    };
    let burst = player.burst(limit);
    player.stop();
    let summary = playback
        .join()
        .map_err(|_| anyhow::anyhow!("playback thread panicked"))??;
    log::info!("burst {} messages", burst.unwrap_or(summary.published));
    Ok(())
}

/// Keyboard controls, the progress line and signal handling for an interactive player.
struct Attached {
    _keyboard: Option<KeyboardControls>,
}

fn attach(player: &Arc<Player>, keyboard: bool) -> Result<Attached> {
    let signals = crate::shutdown::shutdown_requested()?;
    let on_signal = player.clone();
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
    if std::io::stdout().is_terminal() {
        let progress = player.clone();
        std::thread::spawn(move || show_progress(&progress));
    }
    Ok(Attached {
        _keyboard: keyboard,
    })
}

fn on_key(player: &Player, key: Key) {
    let result = match key {
        Key::Space => player.toggle_paused(),
        Key::Right => player.play_next(),
        Key::Up => player.set_rate(player.rate() * 1.1),
        Key::Down => player.set_rate(player.rate() * 0.9),
        _ => Ok(()),
    };
    if let Err(e) = result {
        log::warn!("{e}");
    }
}

/// Rewrites one terminal line with the position, rate and state, ten times a second.
fn show_progress(player: &Player) {
    let (start, end) = player.bag_range();
    let mut out = std::io::stdout();
    loop {
        std::thread::sleep(StdDuration::from_millis(100));
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
}

/// `ros2bag-rs control`: one request to a running player.
#[derive(Debug, Clone, clap::Args)]
pub struct ControlArgs {
    /// The player's node name (with namespace if it has one).
    #[arg(long, default_value = "/rosbag2_player")]
    pub node: String,
    /// Seconds to wait for the player.
    #[arg(long, default_value_t = 5.0)]
    pub timeout: f64,
    /// What to ask.
    #[command(subcommand)]
    pub action: ControlAction,
}

/// A request to a running player.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ControlAction {
    /// Pause time.
    Pause,
    /// Resume time.
    Resume,
    /// Pause when playing, resume when paused.
    Toggle,
    /// Print whether the player is paused.
    IsPaused,
    /// Print the rate, or set it.
    Rate {
        /// New rate (> 0).
        rate: Option<f64>,
    },
    /// Continue from this bag time (seconds since the epoch).
    Seek {
        /// Bag time in seconds.
        time: f64,
    },
    /// While paused, play the next message.
    PlayNext,
    /// While paused, play the next N messages at once.
    Burst {
        /// How many.
        num_messages: u64,
    },
    /// Stop playback.
    Stop,
}

fn call<S: ServiceType>(
    node: &dyn Middleware,
    player: &str,
    name: &str,
    request: &S::Request,
    timeout: StdDuration,
) -> Result<S::Response> {
    let service = format!("{}/{name}", player.trim_end_matches('/'));
    let client = Client::<S>::new(node, &service)?;
    if !client.wait_for_service(timeout) {
        bail!("no player answers on {service} (is it running, with the same ROS_DOMAIN_ID?)");
    }
    Ok(client.call(request, timeout)?)
}

/// Sends one request to a running player and prints the answer.
pub fn run_control(args: &ControlArgs) -> Result<()> {
    let node = dds_node(&format!("ros2bag_rs_control_{}", std::process::id()), "/")?;
    let node = node.as_ref();
    let player = args.node.as_str();
    let timeout = StdDuration::from_secs_f64(args.timeout.max(0.1));
    let refused = |what: &str| anyhow::anyhow!("the player refused {what} (see its log for why)");
    match &args.action {
        ControlAction::Pause => {
            call::<Pause>(node, player, "pause", &Default::default(), timeout)?;
        }
        ControlAction::Resume => {
            call::<Resume>(node, player, "resume", &Default::default(), timeout)?;
        }
        ControlAction::Toggle => {
            call::<TogglePaused>(node, player, "toggle_paused", &Default::default(), timeout)?;
        }
        ControlAction::IsPaused => {
            let r = call::<IsPaused>(node, player, "is_paused", &Default::default(), timeout)?;
            println!("{}", r.paused);
        }
        ControlAction::Rate { rate: None } => {
            let r = call::<GetRate>(node, player, "get_rate", &Default::default(), timeout)?;
            println!("{}", r.rate);
        }
        ControlAction::Rate { rate: Some(rate) } => {
            let r = call::<SetRate>(
                node,
                player,
                "set_rate",
                &SetRateRequest { rate: *rate },
                timeout,
            )?;
            if !r.success {
                return Err(refused(&format!("rate {rate}")));
            }
        }
        ControlAction::Seek { time } => {
            let request = SeekRequest {
                time: TimeMsg::from_nanos(nanos(*time, "seek time")?),
            };
            if !call::<Seek>(node, player, "seek", &request, timeout)?.success {
                return Err(refused(&format!("seek to {time}")));
            }
        }
        ControlAction::PlayNext => {
            if !call::<PlayNext>(node, player, "play_next", &Default::default(), timeout)?.success {
                return Err(refused("play_next"));
            }
        }
        ControlAction::Burst { num_messages } => {
            let request = BurstRequest {
                num_messages: *num_messages,
            };
            let r = call::<Burst>(node, player, "burst", &request, timeout)?;
            println!("{}", r.actually_burst);
        }
        ControlAction::Stop => {
            call::<Stop>(node, player, "stop", &Default::default(), timeout)?;
        }
    }
    Ok(())
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
    fn negative_limits_mean_not_set_and_a_negative_rate_reaches_the_range_check() {
        let o = options(&["--playback-until-sec", "-1", "--playback-duration", "-1"]);
        assert_eq!((o.playback_until, o.playback_duration), (None, None));
        let o = options(&["--playback-until-nsec", "-1"]);
        assert_eq!(o.playback_until, None);
        let o = options(&["--playback-until-sec", "2", "--playback-duration", "1.5"]);
        assert_eq!(o.playback_until, Some(2_000_000_000));
        assert_eq!(o.playback_duration, Some(1_500_000_000));
        assert_eq!(options(&["--rate", "-1"]).rate, -1.0);
    }
}
