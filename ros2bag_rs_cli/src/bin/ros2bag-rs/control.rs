//! `ros2bag-rs control`: one request to a running player's services (pause, resume, rate,
//! seek, ...) or recorder's (snapshot, split, snapshot buffer limits, clear), without a ROS 2
//! installation; to several nodes at once with `--node A,B,...` (with `--at`, they all act at
//! that one time).

use std::time::Duration as StdDuration;

use anyhow::{bail, Result};
use rosbag2_rs_interfaces::builtin_interfaces::Time as TimeMsg;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::*;
use rosbag2_rs_interfaces::ServiceType;

use rosbag2_rs_tools::flags::seconds;
use rosbag2_rs_transport::{ros_node, shutdown_requested};
use rosbag2_rs_transport_lib::{Client, Middleware};

/// `ros2bag-rs control`: one request to a running player or recorder.
#[derive(Debug, Clone, clap::Args)]
pub struct ControlArgs {
    /// The node's name (with namespace if it has one); default /rosbag2_player, or
    /// /rosbag2_recorder for the recorder's requests (snapshot, split, set-memory,
    /// set-duration, clear-buffer). Several (`--node /a,/b` or `--node /a --node /b`): the same
    /// request to each, in order.
    #[arg(long, global = true, value_delimiter = ',')]
    pub node: Vec<String>,
    /// Seconds to wait for the node.
    #[arg(long, default_value_t = 5.0, global = true)]
    pub timeout: f64,
    /// What to ask.
    #[command(subcommand)]
    pub action: ControlAction,
}

/// A request to a running player.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ControlAction {
    /// Pause, at once or when the node's clock reaches a time (`--at`).
    Pause {
        /// At this time, seconds since the epoch (the node's clock: ROS time under sim time);
        /// default: at once.
        #[arg(long)]
        at: Option<f64>,
    },
    /// Resume, at once or at a time (`--at`; a recorder also by the messages' time).
    Resume {
        #[command(flatten)]
        at: AtTime,
    },
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
    /// Stop playback; a recorder (`--node`): stop recording and close the bag.
    Stop,
    /// Recorder: start recording again after `stop`, at once or from a time (`--at`).
    Record {
        /// The new bag (default: the one given at start, numbered `(1)`, `(2)`, ... if it
        /// exists).
        uri: Option<String>,
        /// From this time, seconds since the epoch (the recorder's clock): the bag is opened at
        /// once and its first message is the first received at or after it. Default: at once.
        #[arg(long)]
        at: Option<f64>,
    },
    /// Recorder: look for new topics to record.
    StartDiscovery,
    /// Recorder: record only the topics subscribed so far.
    StopDiscovery,
    /// Recorder: print whether it looks for new topics.
    IsDiscoveryRunning,
    /// Recorder: print whether it is recording.
    IsRecording,
    /// Recorder: print the bag being recorded.
    GetUri,
    /// Recorder: record these topics too, whatever its selection.
    Subscribe {
        /// Topic names.
        #[arg(required = true)]
        topics: Vec<String>,
        /// Their types, in the same order (default: the one on the graph).
        #[arg(long, num_args = 1..)]
        types: Vec<String>,
    },
    /// Recorder: print the topics it records.
    SubscribedTopics,
    /// Recorder in snapshot mode: write a snapshot. Without options, the plain
    /// `snapshot` service (rosbag2_interfaces/srv/Snapshot); with any, `snapshot/trigger`.
    Snapshot {
        /// Bag directory to write (relative: next to the recorder's output prefix).
        #[arg(long)]
        filename: Option<String>,
        /// Only these topics.
        #[arg(long, num_args = 1..)]
        topics: Vec<String>,
        /// Earliest receive time written, seconds since the epoch.
        #[arg(long)]
        start: Option<f64>,
        /// Latest receive time written, seconds since the epoch.
        #[arg(long)]
        stop: Option<f64>,
        /// Keep recording this many seconds after the trigger into the snapshot.
        #[arg(long, default_value_t = 0.0)]
        post_trigger: f64,
    },
    /// Recorder: close the current file and continue in a new one, at once or at a time
    /// (`--at`): just before the first message that reaches it.
    Split {
        #[command(flatten)]
        at: AtTime,
    },
    /// Recorder in snapshot mode: bytes buffered per topic (non-positive: no limit by size).
    SetMemory {
        /// Bytes.
        #[arg(allow_hyphen_values = true)]
        bytes: f64,
    },
    /// Recorder in snapshot mode: seconds buffered (non-positive: no limit by duration).
    SetDuration {
        /// Seconds.
        #[arg(allow_hyphen_values = true)]
        seconds: f64,
    },
    /// Recorder in snapshot mode: drop every buffered message.
    ClearBuffer,
}

/// When a recorder's `resume` or `split` happens.
#[derive(Debug, Clone, clap::Args)]
pub struct AtTime {
    /// At this time, seconds since the epoch (ROS time under sim time); default: at once.
    #[arg(long)]
    at: Option<f64>,
    /// Which time reaches it: the recorder's clock (`node`, default), or the messages'
    /// `publish` or `receive` time.
    #[arg(long, value_enum, default_value = "node", requires = "at")]
    by: TimeBy,
    /// Only this topic's messages count (with `--by publish|receive`).
    #[arg(long, requires = "at")]
    tracking_topic: Option<String>,
}

/// `--by`: the `resume_mode` / `split_mode` of the request.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum TimeBy {
    Node,
    Publish,
    Receive,
}

impl AtTime {
    /// The request's time (zero: at once), mode and tracking topic.
    fn request(&self) -> Result<(TimeMsg, i32, String)> {
        let time = match self.at {
            Some(t) => TimeMsg::from_nanos(seconds(t, "--at")?.as_nanos()),
            None => TimeMsg::default(),
        };
        let mode = match self.by {
            TimeBy::Node => time_mode::NODE_TIME,
            TimeBy::Publish => time_mode::PUBLISH_TIME,
            TimeBy::Receive => time_mode::RECEIVE_TIME,
        };
        Ok((time, mode, self.tracking_topic.clone().unwrap_or_default()))
    }
}

/// Whether a response says its request was done: `None`, or why not.
trait Outcome {
    fn refusal(&self) -> Option<String>;
}

/// Responses with `success` alone.
macro_rules! success {
    ($($response:ty),*) => {$(
        impl Outcome for $response {
            fn refusal(&self) -> Option<String> {
                (!self.success).then(|| "see its log for why".to_string())
            }
        }
    )*};
}

/// Responses with `success` and a `message`.
macro_rules! success_message {
    ($($response:ty),*) => {$(
        impl Outcome for $response {
            fn refusal(&self) -> Option<String> {
                (!self.success).then(|| self.message.clone())
            }
        }
    )*};
}

/// Responses with `return_code` (0: done) and `error_string`.
macro_rules! return_code {
    ($($response:ty),*) => {$(
        impl Outcome for $response {
            fn refusal(&self) -> Option<String> {
                (self.return_code != 0)
                    .then(|| format!("code {}: {}", self.return_code, self.error_string))
            }
        }
    )*};
}

success!(
    SetRateResponse,
    SeekResponse,
    PlayNextResponse,
    SnapshotResponse,
    SetMemoryResponse,
    SetDurationResponse
);
success_message!(
    PauseAtResponse,
    SetClockPublishFrequencyResponse,
    TriggerSnapshotResponse,
    ClearBufferResponse
);
return_code!(
    ResumeResponse,
    StopResponse,
    RecordResponse,
    StartDiscoveryResponse,
    StopDiscoveryResponse,
    SubscribeToTopicsResponse,
    SplitBagfileResponse
);

impl ControlAction {
    /// True for the requests a recorder serves (and a player does not).
    fn is_recorder_request(&self) -> bool {
        matches!(
            self,
            Self::Snapshot { .. }
                | Self::Split { .. }
                | Self::Record { .. }
                | Self::StartDiscovery
                | Self::StopDiscovery
                | Self::IsDiscoveryRunning
                | Self::IsRecording
                | Self::GetUri
                | Self::Subscribe { .. }
                | Self::SubscribedTopics
                | Self::SetMemory { .. }
                | Self::SetDuration { .. }
                | Self::ClearBuffer
        )
    }
}

/// How often a wait for the player looks for SIGINT/SIGTERM.
const SIGNAL_CHECK: StdDuration = StdDuration::from_millis(50);

/// One running player's or recorder's services, each waited for at most `timeout`.
struct Target<'a> {
    node: &'a dyn Middleware,
    name: &'a str,
    timeout: StdDuration,
}

impl Target<'_> {
    /// The response of the node's service `service` to `request`.
    fn call<S: ServiceType>(&self, service: &str, request: &S::Request) -> Result<S::Response> {
        let service = format!("{}/{service}", self.name.trim_end_matches('/'));
        let client = Client::<S>::new(self.node, &service)?;
        // A signal ends the wait through the normal path, so that the node leaves the graph at
        // once instead of lingering as a ghost until its lease expires.
        let signals = shutdown_requested()?;
        let deadline = std::time::Instant::now() + self.timeout;
        while !client.wait_for_service(SIGNAL_CHECK) {
            if signals.try_recv().is_ok() {
                bail!("interrupted while waiting for {service}");
            }
            if std::time::Instant::now() >= deadline {
                bail!("no node answers on {service} (is it running, with the same ROS_DOMAIN_ID?)");
            }
        }
        Ok(client.call(request, self.timeout)?)
    }

    /// [`Target::call`] with the empty request.
    fn ask<S: ServiceType>(&self, service: &str) -> Result<S::Response>
    where
        S::Request: Default,
    {
        self.call::<S>(service, &S::Request::default())
    }

    /// [`Target::call`], an error when the response says the request (`what`) was refused.
    fn get<S: ServiceType>(
        &self,
        service: &str,
        request: &S::Request,
        what: &str,
    ) -> Result<S::Response>
    where
        S::Response: Outcome,
    {
        let response = self.call::<S>(service, request)?;
        match response.refusal() {
            Some(why) => bail!("{} refused {what} ({why})", self.name),
            None => Ok(response),
        }
    }

    /// [`Target::get`] of the empty request.
    fn done<S: ServiceType>(&self, service: &str) -> Result<S::Response>
    where
        S::Request: Default,
        S::Response: Outcome,
    {
        self.get::<S>(service, &S::Request::default(), service)
    }
}

/// Sends the request to each running player or recorder named and prints the answers.
pub fn run_control(args: &ControlArgs) -> Result<()> {
    let node = ros_node(&format!("ros2bag_rs_control_{}", std::process::id()), "/")?;
    let default_node = if args.action.is_recorder_request() {
        "/rosbag2_recorder"
    } else {
        "/rosbag2_player"
    };
    let targets = match args.node.as_slice() {
        [] => vec![default_node.to_string()],
        named => named.to_vec(),
    };
    let timeout = StdDuration::from_secs_f64(args.timeout.max(0.1));
    for target in &targets {
        if targets.len() > 1 {
            println!("{target}:");
        }
        let target = Target {
            node: node.as_ref(),
            name: target,
            timeout,
        };
        control(&target, &args.action)?;
    }
    Ok(())
}

/// Sends `action` to `target` and prints the answer.
fn control(target: &Target, action: &ControlAction) -> Result<()> {
    let time = |t: Option<f64>, what: &str| -> Result<TimeMsg> {
        Ok(match t {
            Some(t) => TimeMsg::from_nanos(seconds(t, what)?.as_nanos()),
            None => TimeMsg::default(),
        })
    };
    match action {
        ControlAction::Pause { at: None } => {
            target.ask::<Pause>("pause")?;
        }
        ControlAction::Pause { at: Some(at) } => {
            let pause_time = time(Some(*at), "--at")?;
            target.get::<PauseAt>("pause_at", &PauseAtRequest { pause_time }, "the pause")?;
        }
        ControlAction::Resume { at } => {
            let (resume_time, resume_mode, tracking_topic_name) = at.request()?;
            let request = ResumeRequest {
                resume_time,
                resume_mode,
                tracking_topic_name,
            };
            target.get::<Resume>("resume", &request, "resume")?;
        }
        ControlAction::Toggle => {
            target.ask::<TogglePaused>("toggle_paused")?;
        }
        ControlAction::IsPaused => println!("{}", target.ask::<IsPaused>("is_paused")?.paused),
        ControlAction::Rate { rate: None } => {
            println!("{}", target.ask::<GetRate>("get_rate")?.rate)
        }
        ControlAction::Rate { rate: Some(rate) } => {
            let request = SetRateRequest { rate: *rate };
            target.get::<SetRate>("set_rate", &request, &format!("rate {rate}"))?;
        }
        ControlAction::Seek { time: at } => {
            let request = SeekRequest {
                time: time(Some(*at), "seek time")?,
            };
            target.get::<Seek>("seek", &request, &format!("seek to {at}"))?;
        }
        ControlAction::PlayNext => {
            target.done::<PlayNext>("play_next")?;
        }
        ControlAction::Burst { num_messages } => {
            let request = BurstRequest {
                num_messages: *num_messages,
            };
            println!(
                "{}",
                target.call::<Burst>("burst", &request)?.actually_burst
            );
        }
        ControlAction::ClockFrequency { hz } => {
            let request = SetClockPublishFrequencyRequest { frequency: *hz };
            let what = format!("/clock at {hz} Hz");
            target.get::<SetClockPublishFrequency>(
                "set_clock_publish_frequency",
                &request,
                &what,
            )?;
        }
        ControlAction::Stop => {
            target.done::<Stop>("stop")?;
        }
        ControlAction::Record { uri, at } => {
            let request = RecordRequest {
                uri: uri.clone().unwrap_or_default(),
                start_time: time(*at, "--at")?,
            };
            target.get::<Record>("record", &request, "record")?;
        }
        ControlAction::StartDiscovery => {
            target.done::<StartDiscovery>("start_discovery")?;
        }
        ControlAction::StopDiscovery => {
            target.done::<StopDiscovery>("stop_discovery")?;
        }
        ControlAction::IsDiscoveryRunning => {
            let r = target.ask::<IsDiscoveryRunning>("is_discovery_running")?;
            println!("{}", r.running);
        }
        ControlAction::IsRecording => {
            println!("{}", target.ask::<IsRecording>("is_recording")?.recording)
        }
        ControlAction::Subscribe { topics, types } => {
            let request = SubscribeToTopicsRequest {
                topics: topics.clone(),
                topic_types: types.clone(),
            };
            let r = target.call::<SubscribeToTopics>("subscribe_to_topics", &request)?;
            for topic in &r.subscribed_topics {
                println!("{topic}");
            }
            for topic in &r.unavailable_topics {
                eprintln!("not available: {topic}");
            }
            if let Some(why) = r.refusal() {
                bail!("{} refused subscribe_to_topics ({why})", target.name);
            }
        }
        ControlAction::SubscribedTopics => {
            for topic in target
                .ask::<GetSubscribedTopics>("get_subscribed_topics")?
                .topics
            {
                println!("{topic}");
            }
        }
        ControlAction::GetUri => println!("{}", target.ask::<GetUri>("get_uri")?.uri),
        ControlAction::Snapshot {
            filename: None,
            topics,
            start: None,
            stop: None,
            post_trigger,
        } if topics.is_empty() && *post_trigger <= 0.0 => {
            let request = Default::default();
            target.get::<Snapshot>("snapshot", &request, "the snapshot (empty buffers?)")?;
        }
        ControlAction::Snapshot {
            filename,
            topics,
            start,
            stop,
            post_trigger,
        } => {
            let request = TriggerSnapshotRequest {
                filename: filename.clone().unwrap_or_default(),
                topics: topics.clone(),
                start_time: time(*start, "--start")?,
                stop_time: time(*stop, "--stop")?,
                post_trigger_seconds: *post_trigger,
            };
            let r = target.get::<TriggerSnapshot>("snapshot/trigger", &request, "the snapshot")?;
            println!("{}", r.message);
        }
        ControlAction::Split { at } => {
            let (split_time, split_mode, tracking_topic_name) = at.request()?;
            let request = SplitBagfileRequest {
                split_time,
                split_mode,
                tracking_topic_name,
            };
            target.get::<SplitBagfile>("split_bagfile", &request, "split_bagfile")?;
        }
        ControlAction::SetMemory { bytes } => {
            let request = SetMemoryRequest { memory: *bytes };
            target.get::<SetMemory>("snapshot/memory", &request, &format!("memory {bytes}"))?;
        }
        ControlAction::SetDuration { seconds } => {
            let request = SetDurationRequest { duration: *seconds };
            let what = format!("duration {seconds}");
            target.get::<SetDuration>("snapshot/duration", &request, &what)?;
        }
        ControlAction::ClearBuffer => {
            println!(
                "{}",
                target.done::<ClearBuffer>("snapshot/clear_buffer")?.message
            )
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_options_go_before_or_after_the_request() {
        use clap::Parser;
        #[derive(Parser)]
        struct Control {
            #[command(flatten)]
            control: ControlArgs,
        }
        for args in [
            &["control", "--timeout", "2", "--node", "/p", "is-paused"][..],
            &["control", "is-paused", "--timeout", "2", "--node", "/p"],
        ] {
            let c = Control::try_parse_from(args).unwrap().control;
            assert_eq!(
                (c.timeout, c.node.as_slice()),
                (2.0, &["/p".to_string()][..]),
                "{args:?}"
            );
            assert!(matches!(c.action, ControlAction::IsPaused));
        }
        // Several nodes, one time.
        for args in [
            &["control", "--node", "/a,/b", "pause", "--at", "12.5"][..],
            &[
                "control", "--node", "/a", "--node", "/b", "pause", "--at", "12.5",
            ],
        ] {
            let c = Control::try_parse_from(args).unwrap().control;
            assert_eq!(c.node, ["/a", "/b"], "{args:?}");
            assert!(matches!(c.action, ControlAction::Pause { at: Some(t) } if t == 12.5));
        }
        // The recorder's requests, with negative limits (no limit on that axis).
        let c = Control::try_parse_from([
            "control",
            "snapshot",
            "--filename",
            "crash",
            "--topics",
            "/a",
            "/b",
            "--start",
            "1.5",
            "--post-trigger",
            "2",
        ])
        .unwrap()
        .control;
        assert!(
            c.node.is_empty(),
            "the recorder's default node is chosen later"
        );
        match c.action {
            ControlAction::Snapshot {
                filename,
                topics,
                start,
                stop,
                post_trigger,
            } => {
                assert_eq!(filename.as_deref(), Some("crash"));
                assert_eq!(topics, ["/a", "/b"]);
                assert_eq!((start, stop, post_trigger), (Some(1.5), None, 2.0));
            }
            other => panic!("{other:?}"),
        }
        for (args, check) in [
            (&["control", "set-memory", "-5"][..], -5.0),
            (&["control", "set-duration", "-1"], -1.0),
        ] {
            let c = Control::try_parse_from(args).unwrap().control;
            match c.action {
                ControlAction::SetMemory { bytes: v }
                | ControlAction::SetDuration { seconds: v } => {
                    assert_eq!(v, check)
                }
                other => panic!("{other:?}"),
            }
        }
        for verb in ["split", "clear-buffer"] {
            assert!(Control::try_parse_from(["control", verb]).is_ok());
        }
    }
}
