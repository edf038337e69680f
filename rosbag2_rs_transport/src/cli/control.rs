//! `ros2bag-rs control`: one request to a running player's services (pause, resume, rate,
//! seek, ...), without a ROS 2 installation.

use std::time::Duration as StdDuration;

use anyhow::{bail, Result};
use rosbag2_rs_interfaces::builtin_interfaces::Time as TimeMsg;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::{
    SetClockPublishFrequency, SetClockPublishFrequencyRequest,
};
use rosbag2_rs_interfaces::ServiceType;

use super::args::seconds;
use super::ros_node;
use super::shutdown::shutdown_requested;
use crate::{Client, Middleware};

/// `ros2bag-rs control`: one request to a running player.
#[derive(Debug, Clone, clap::Args)]
pub struct ControlArgs {
    /// The player's node name (with namespace if it has one).
    #[arg(long, default_value = "/rosbag2_player", global = true)]
    pub node: String,
    /// Seconds to wait for the player.
    #[arg(long, default_value_t = 5.0, global = true)]
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
    /// Publish /clock at this frequency (Hz) from now on; 0 stops it.
    ClockFrequency {
        /// Hz (0 stops).
        hz: f64,
    },
    /// Stop playback.
    Stop,
}

/// How often a wait for the player looks for SIGINT/SIGTERM.
const SIGNAL_CHECK: StdDuration = StdDuration::from_millis(50);

fn call<S: ServiceType>(
    node: &dyn Middleware,
    player: &str,
    name: &str,
    request: &S::Request,
    timeout: StdDuration,
) -> Result<S::Response> {
    let service = format!("{}/{name}", player.trim_end_matches('/'));
    let client = Client::<S>::new(node, &service)?;
    // A signal ends the wait through the normal path, so that the node leaves the graph at
    // once instead of lingering as a ghost until its lease expires.
    let signals = shutdown_requested()?;
    let deadline = std::time::Instant::now() + timeout;
    while !client.wait_for_service(SIGNAL_CHECK) {
        if signals.try_recv().is_ok() {
            bail!("interrupted while waiting for {service}");
        }
        if std::time::Instant::now() >= deadline {
            bail!("no player answers on {service} (is it running, with the same ROS_DOMAIN_ID?)");
        }
    }
    Ok(client.call(request, timeout)?)
}

/// Sends one request to a running player and prints the answer.
pub fn run_control(args: &ControlArgs) -> Result<()> {
    let node = ros_node(&format!("ros2bag_rs_control_{}", std::process::id()), "/")?;
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
                time: TimeMsg::from_nanos(seconds(*time, "seek time")?.as_nanos()),
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
        ControlAction::ClockFrequency { hz } => {
            let request = SetClockPublishFrequencyRequest { frequency: *hz };
            let r = call::<SetClockPublishFrequency>(
                node,
                player,
                "set_clock_publish_frequency",
                &request,
                timeout,
            )?;
            if !r.success {
                bail!("the player refused /clock at {hz} Hz: {}", r.message);
            }
        }
        ControlAction::Stop => {
            call::<Stop>(node, player, "stop", &Default::default(), timeout)?;
        }
    }
    Ok(())
}
