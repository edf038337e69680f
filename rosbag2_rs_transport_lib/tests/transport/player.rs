//! The player on the in-process backend with virtual time: rosbag2's playback test cases
//! (timing at several rates, pause/resume, seek, play-next, burst, services, /clock, bounds,
//! loop, delay, stop, filters, remap, QoS) plus sim-time synchronisation of two players.
//!
//! Nothing here sleeps or reads the wall clock: the player's clock runs on a blocking
//! `VirtualTimeSource`, and the test advances virtual time only once every time-waiting thread
//! is asleep (`wait_settled`), so each message's receive time is exactly its scheduled time.

use crate::common;

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration as StdDuration;

use bytes::Bytes;
use rosbag2_rs_clock::{Duration, PlaybackRate, Time, VirtualTimeSource};
use rosbag2_rs_interfaces::builtin_interfaces::Time as TimeMsg;
use rosbag2_rs_interfaces::from_cdr;
use rosbag2_rs_interfaces::rosbag2_interfaces::msg::ReadSplitEvent;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::{
    SetClockPublishFrequency, SetClockPublishFrequencyRequest,
};
use rosbag2_rs_interfaces::service_msgs::{ServiceEvent, ServiceEventInfo};
use rosbag2_rs_storage::qos::{Durability, Reliability};
use rosbag2_rs_storage::{
    BagWriter, BagWriterOptions, QosProfile, SerializedMessage, TopicFilter, TopicMetadata,
};
use rosbag2_rs_transport_lib::InProcessBus;
use rosbag2_rs_transport_lib::{Client, Handle, Middleware, ReceivedMessage};
use rosbag2_rs_transport_lib::{
    MessageOrder, PlayOptions, PlaybackEnd, PlaybackSummary, Player, PlayerError, CLOCK_TOPIC,
    CLOCK_TYPE,
};

use common::cdr;

const MS: i64 = 1_000_000;
/// Bag time of the first message.
const BAG_T0: i64 = 1_700_000_000 * 1_000_000_000;
/// Virtual steady time when a test starts.
const STEADY_T0: i64 = 5_000 * 1_000_000_000;
const STRING: &str = "std_msgs/msg/String";
const GUARD: StdDuration = StdDuration::from_secs(20);

/// One bag message: topic, offset from BAG_T0 in ms, payload byte.
type Spec = (&'static str, i64, u8);

fn write_bag(
    dir: &std::path::Path,
    name: &str,
    specs: &[Spec],
    qos: &[(&str, QosProfile)],
) -> std::path::PathBuf {
    write_bag_split(dir, name, specs, qos, None)
}

fn write_bag_split(
    dir: &std::path::Path,
    name: &str,
    specs: &[Spec],
    qos: &[(&str, QosProfile)],
    split_after: Option<usize>,
) -> std::path::PathBuf {
    let uri = dir.join(name);
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    for (i, (topic, offset, byte)) in specs.iter().enumerate() {
        let mut meta = TopicMetadata::new(
            *topic,
            if *topic == CLOCK_TOPIC {
                CLOCK_TYPE
            } else {
                STRING
            },
        );
        if let Some((_, q)) = qos.iter().find(|(t, _)| t == topic) {
            meta.offered_qos_profiles = vec![*q];
        }
        writer.create_topic(&meta, None).unwrap();
        writer
            .write(&SerializedMessage::new(
                Arc::from(*topic),
                BAG_T0 + offset * MS,
                cdr(&[*byte]),
            ))
            .unwrap();
        if split_after == Some(i) {
            writer.split().unwrap();
        }
    }
    writer.close().unwrap();
    uri
}

/// A graph, virtual time, and subscribers that record what the player published.
struct Rig {
    bus: InProcessBus,
    time: VirtualTimeSource,
    observer: Arc<dyn Middleware>,
    received: Arc<Mutex<Vec<(String, ReceivedMessage)>>>,
    _subscriptions: Vec<Handle>,
    _dir: tempfile::TempDir,
    dir: std::path::PathBuf,
}

impl Rig {
    fn new() -> Self {
        let time = VirtualTimeSource::new(STEADY_T0);
        let clock = time.clone();
        let bus = InProcessBus::with_clock(Arc::new(move || clock.now_nanos()));
        let observer: Arc<dyn Middleware> = Arc::new(bus.node("observer", "/").unwrap());
        let dir = tempfile::tempdir().unwrap();
        Self {
            bus,
            time,
            observer,
            received: Default::default(),
            _subscriptions: Vec::new(),
            dir: dir.path().to_path_buf(),
            _dir: dir,
        }
    }

    fn subscribe(&mut self, topic: &str, type_name: &str, qos: QosProfile) {
        let store = self.received.clone();
        let name = topic.to_string();
        let handle = self
            .observer
            .create_subscription(
                topic,
                type_name,
                &qos,
                Box::new(move |m| store.lock().unwrap().push((name.clone(), m))),
            )
            .unwrap();
        self._subscriptions.push(handle);
    }

    /// Records `topic` and calls `hook(index)` on the publishing thread after each message.
    fn on_message(&mut self, topic: &str, mut hook: impl FnMut(usize) + Send + 'static) {
        let mut n = 0;
        let store = self.received.clone();
        let name = topic.to_string();
        let handle = self
            .observer
            .create_subscription(
                topic,
                STRING,
                &QosProfile::default(),
                Box::new(move |m| {
                    store.lock().unwrap().push((name.clone(), m));
                    hook(n);
                    n += 1;
                }),
            )
            .unwrap();
        self._subscriptions.push(handle);
    }

    /// A rig recording /a, and a player of `specs` started paused.
    fn started_paused(specs: &[Spec]) -> (Self, Arc<Player>, JoinHandle<PlaybackSummary>) {
        let mut rig = Rig::new();
        rig.subscribe("/a", STRING, QosProfile::default());
        let bag = write_bag(&rig.dir, "bag", specs, &[]);
        let player = rig.player(PlayOptions {
            start_paused: true,
            ..opts(bag)
        });
        let handle = rig.start(&player);
        (rig, player, handle)
    }

    fn player(&self, options: PlayOptions) -> Arc<Player> {
        self.player_named("rosbag2_player", options)
    }

    fn player_named(&self, name: &str, options: PlayOptions) -> Arc<Player> {
        let node = Arc::new(self.bus.node(name, "/").unwrap());
        Arc::new(Player::with_time_source(node, options, self.time.as_source()).unwrap())
    }

    fn start(&self, player: &Arc<Player>) -> JoinHandle<PlaybackSummary> {
        let p = player.clone();
        let handle = std::thread::spawn(move || p.play().unwrap());
        while !player.is_playing() && !handle.is_finished() {
            std::thread::yield_now();
        }
        handle
    }

    /// Advances virtual time deadline by deadline, each time only when all `sleepers` threads
    /// sleep on it, until `done()`.
    fn drive_until(&self, sleepers: usize, done: impl Fn() -> bool) {
        // A safety net for a broken player, not a timing assertion.
        let give_up = std::time::Instant::now() + StdDuration::from_secs(120);
        while !done() {
            assert!(
                std::time::Instant::now() < give_up,
                "playback did not complete"
            );
            if self
                .time
                .wait_settled(sleepers, StdDuration::from_millis(20))
            {
                self.time.advance_to_next_deadline();
            }
        }
    }

    fn drive(&self, sleepers: usize, handle: JoinHandle<PlaybackSummary>) -> PlaybackSummary {
        self.drive_until(sleepers, || handle.is_finished());
        handle.join().unwrap()
    }

    fn play(&self, options: PlayOptions) -> PlaybackSummary {
        let player = self.player(options);
        let handle = self.start(&player);
        self.drive(1, handle)
    }

    /// (topic, payload byte, receive time relative to STEADY_T0 in ms) of everything received.
    fn log(&self) -> Vec<(String, u8, i64)> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, _)| t != CLOCK_TOPIC)
            .map(|(t, m)| (t.clone(), m.data[4], (m.recv_timestamp - STEADY_T0) / MS))
            .collect()
    }

    fn payloads(&self) -> Vec<u8> {
        self.log().into_iter().map(|(_, b, _)| b).collect()
    }

    fn clock_times(&self) -> Vec<(i64, i64)> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, _)| t == CLOCK_TOPIC)
            .map(|(_, m)| {
                let sec = i32::from_le_bytes(m.data[4..8].try_into().unwrap()) as i64;
                let nsec = u32::from_le_bytes(m.data[8..12].try_into().unwrap()) as i64;
                (
                    (m.recv_timestamp - STEADY_T0) / MS,
                    (sec * 1_000_000_000 + nsec - BAG_T0) / MS,
                )
            })
            .collect()
    }

    fn client<S: rosbag2_rs_interfaces::ServiceType>(&self, name: &str) -> Client<S> {
        Client::<S>::new(self.observer.as_ref(), &format!("/rosbag2_player/{name}")).unwrap()
    }
}

fn opts(bag: std::path::PathBuf) -> PlayOptions {
    PlayOptions {
        bags: vec![bag],
        ..Default::default()
    }
}

/// /a at 0, 100, 250, 1000 ms.
const SIMPLE: &[Spec] = &[
    ("/a", 0, 0),
    ("/a", 100, 1),
    ("/a", 250, 2),
    ("/a", 1000, 3),
];

/// Ten messages 100 ms apart on /a.
fn ten() -> Vec<Spec> {
    (0..10).map(|i| ("/a", i * 100, i as u8)).collect()
}

#[test]
fn messages_leave_on_the_bags_schedule_at_every_rate() {
    for (rate, expected) in [
        (1.0, [0, 100, 250, 1000]),
        (2.0, [0, 50, 125, 500]),
        (0.5, [0, 200, 500, 2000]),
    ] {
        let mut rig = Rig::new();
        rig.subscribe("/a", STRING, QosProfile::default());
        let bag = write_bag(&rig.dir, "bag", SIMPLE, &[]);
        let summary = rig.play(PlayOptions {
            rate: PlaybackRate::new(rate).unwrap(),
            ..opts(bag)
        });
        assert_eq!(
            summary,
            PlaybackSummary {
                published: 4,
                end: PlaybackEnd::Finished
            }
        );
        let times: Vec<i64> = rig.log().iter().map(|(_, _, t)| *t).collect();
        assert_eq!(times, expected, "rate {rate}");
    }
}

#[test]
fn invalid_options_are_refused_with_a_reason() {
    let rig = Rig::new();
    let bag = write_bag(&rig.dir, "bag", SIMPLE, &[]);
    let node: Arc<dyn Middleware> = Arc::new(rig.bus.node("p", "/").unwrap());
    for (options, needle) in [
        (
            PlayOptions {
                start_offset: Duration::from_nanos(-1),
                ..opts(bag.clone())
            },
            "start-offset",
        ),
        (
            PlayOptions {
                read_ahead_queue_size: 0,
                ..opts(bag.clone())
            },
            "read-ahead",
        ),
        (
            PlayOptions {
                bags: vec![],
                ..Default::default()
            },
            "no bag",
        ),
        (opts(rig.dir.join("missing")), "missing"),
    ] {
        let err = Player::with_time_source(node.clone(), options, rig.time.as_source())
            .err()
            .unwrap();
        assert!(err.to_string().contains(needle), "{err}");
    }
    // A corrupt bag file is an error, not a panic.
    let junk = rig.dir.join("junk.mcap");
    std::fs::write(&junk, b"\x89MCAP0\r\n garbage").unwrap();
    assert!(Player::with_time_source(node, opts(junk), rig.time.as_source()).is_err());
}

#[test]
fn start_paused_then_resume_over_the_service() {
    let (rig, _player, handle) = Rig::started_paused(SIMPLE);
    // Paused: time may pass, nothing is published.
    for _ in 0..3 {
        assert!(rig.time.wait_settled(1, GUARD));
        rig.time
            .advance(rosbag2_rs_clock::Duration::from_nanos(5_000 * MS));
    }
    assert!(rig.time.wait_settled(1, GUARD));
    assert!(rig.log().is_empty());
    assert!(
        rig.client::<IsPaused>("is_paused")
            .call(&Default::default(), GUARD)
            .unwrap()
            .paused
    );
    rig.client::<Resume>("resume")
        .call(&Default::default(), GUARD)
        .unwrap();
    assert!(
        !rig.client::<IsPaused>("is_paused")
            .call(&Default::default(), GUARD)
            .unwrap()
            .paused
    );
    rig.drive(1, handle);
    let times: Vec<i64> = rig.log().iter().map(|(_, _, t)| *t).collect();
    assert_eq!(times, [15_000, 15_100, 15_250, 16_000]);
}

#[test]
fn pause_holds_time_and_resume_continues_with_the_next_message() {
    let mut rig = Rig::new();
    let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
    let player = rig.player(opts(bag));
    let p = player.clone();
    rig.on_message("/a", move |i| {
        if i == 2 {
            p.pause().unwrap();
        }
    });
    let handle = rig.start(&player);
    rig.drive_until(1, || player.is_paused());
    for _ in 0..4 {
        assert!(rig.time.wait_settled(1, GUARD));
        rig.time
            .advance(rosbag2_rs_clock::Duration::from_nanos(1_000 * MS));
    }
    assert!(rig.time.wait_settled(1, GUARD));
    assert_eq!(player.position(), BAG_T0 + 200 * MS);
    let resumed_at = (rig.time.now_nanos() - STEADY_T0) / MS;
    player.resume().unwrap();
    rig.drive(1, handle);
    let times: Vec<i64> = rig.log().iter().map(|(_, _, t)| *t).collect();
    assert_eq!(times[..3], [0, 100, 200]);
    // Message 3 is due 100 ms of playback time after message 2, counted from the resume.
    let after: Vec<i64> = times[3..].iter().map(|t| t - resumed_at).collect();
    assert_eq!(after, [100, 200, 300, 400, 500, 600, 700]);
}

fn times(rig: &Rig) -> Vec<i64> {
    rig.log().iter().map(|(_, _, t)| *t).collect()
}

#[test]
fn rate_changes_apply_at_once() {
    let mut rig = Rig::new();
    let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
    let player = rig.player(opts(bag));
    let p = player.clone();
    rig.on_message("/a", move |i| {
        if i == 3 {
            p.set_rate(2.0).unwrap();
        }
        if i == 6 {
            p.set_rate(0.5).unwrap();
        }
    });
    let handle = rig.start(&player);
    rig.drive(1, handle);
    assert_eq!(
        times(&rig),
        [0, 100, 200, 300, 350, 400, 450, 650, 850, 1050]
    );
}

#[test]
fn rate_services_refuse_bad_values_and_keep_playing() {
    let (rig, _player, handle) = Rig::started_paused(&ten());
    let set_rate = rig.client::<SetRate>("set_rate");
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            !set_rate
                .call(&SetRateRequest { rate: bad }, GUARD)
                .unwrap()
                .success,
            "{bad}"
        );
    }
    assert!(
        set_rate
            .call(&SetRateRequest { rate: 4.0 }, GUARD)
            .unwrap()
            .success
    );
    assert_eq!(
        rig.client::<GetRate>("get_rate")
            .call(&Default::default(), GUARD)
            .unwrap()
            .rate,
        4.0
    );
    let seek = rig.client::<Seek>("seek");
    let negative = SeekRequest {
        time: TimeMsg {
            sec: -5,
            nanosec: 0,
        },
    };
    assert!(!seek.call(&negative, GUARD).unwrap().success);
    rig.client::<TogglePaused>("toggle_paused")
        .call(&Default::default(), GUARD)
        .unwrap();
    // play_next while playing is refused.
    assert!(
        !rig.client::<PlayNext>("play_next")
            .call(&Default::default(), GUARD)
            .unwrap()
            .success
    );
    rig.drive(1, handle);
    assert_eq!(times(&rig), [0, 25, 50, 75, 100, 125, 150, 175, 200, 225]);
}

#[test]
fn seek_back_forward_before_start_and_past_end() {
    // Back: at message 3, seek to 100 ms → 1, 2, 3 again, then on.
    let mut rig = Rig::new();
    let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
    let player = rig.player(opts(bag.clone()));
    let p = player.clone();
    let mut once = true;
    rig.on_message("/a", move |i| {
        if i == 3 && std::mem::take(&mut once) {
            p.seek(BAG_T0 + 100 * MS).unwrap();
        }
    });
    let handle = rig.start(&player);
    assert_eq!(rig.drive(1, handle).end, PlaybackEnd::Finished);
    assert_eq!(rig.payloads(), [0, 1, 2, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // After the seek, message 1 is due at once and the rest keep their spacing.
    let t = times(&rig);
    assert_eq!(t[4], t[3]);
    assert_eq!(t[5] - t[4], 100);

    // Forward over the service, and before the start (clamps to the first message).
    let mut rig = Rig::new();
    let player = rig.player(opts(bag.clone()));
    let seek = rig.client::<Seek>("seek");
    let p = player.clone();
    let mut step = 0;
    rig.on_message("/a", move |i| {
        let to = match (step, i) {
            (0, 0) => Some(BAG_T0 + 700 * MS),
            (1, 2) => Some(1_000_000_000),
            _ => None,
        };
        if let Some(to) = to {
            step += 1;
            assert!(
                seek.call(
                    &SeekRequest {
                        time: TimeMsg::from_nanos(to)
                    },
                    GUARD
                )
                .unwrap()
                .success
            );
        }
        let _ = &p;
    });
    let handle = rig.start(&player);
    rig.drive(1, handle);
    assert_eq!(rig.payloads(), [0, 7, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    // Past the end: playback finishes.
    let mut rig = Rig::new();
    let player = rig.player(opts(bag));
    let p = player.clone();
    rig.on_message("/a", move |i| {
        if i == 1 {
            p.seek(BAG_T0 + 60_000 * MS).unwrap();
        }
    });
    let handle = rig.start(&player);
    assert_eq!(
        rig.drive(1, handle),
        PlaybackSummary {
            published: 2,
            end: PlaybackEnd::Finished
        }
    );
}

#[test]
fn play_next_and_burst_only_while_paused() {
    let (rig, player, handle) = Rig::started_paused(&ten());
    let play_next = rig.client::<PlayNext>("play_next");
    for _ in 0..3 {
        assert!(play_next.call(&Default::default(), GUARD).unwrap().success);
    }
    assert_eq!(rig.payloads(), [0, 1, 2]);
    // Time moved to the last message played.
    assert_eq!(player.clock().now().nanos(), BAG_T0 + 200 * MS);
    let burst = rig.client::<Burst>("burst");
    assert_eq!(
        burst
            .call(&BurstRequest { num_messages: 4 }, GUARD)
            .unwrap()
            .actually_burst,
        4
    );
    assert_eq!(rig.payloads(), [0, 1, 2, 3, 4, 5, 6]);
    player.resume().unwrap();
    assert_eq!(
        burst
            .call(&BurstRequest { num_messages: 4 }, GUARD)
            .unwrap()
            .actually_burst,
        0
    );
    player.pause().unwrap();
    assert_eq!(
        burst
            .call(&BurstRequest { num_messages: 100 }, GUARD)
            .unwrap()
            .actually_burst,
        3
    );
    assert!(!play_next.call(&Default::default(), GUARD).unwrap().success);
    // Paused at the end, the player waits for a seek; resume lets it finish.
    player.resume().unwrap();
    assert_eq!(
        rig.drive(1, handle),
        PlaybackSummary {
            published: 10,
            end: PlaybackEnd::Finished
        }
    );
}

#[test]
fn stop_ends_playback_while_paused() {
    let (rig, player, handle) = Rig::started_paused(&ten());
    assert!(rig.time.wait_settled(1, GUARD));
    rig.client::<Stop>("stop")
        .call(&Default::default(), GUARD)
        .unwrap();
    assert_eq!(
        handle.join().unwrap(),
        PlaybackSummary {
            published: 0,
            end: PlaybackEnd::Stopped
        }
    );
    // A stop with no playback running is refused as rosbag2 Lyrical refuses it, and is not
    // kept for the next playback.
    let again = rig
        .client::<Stop>("stop")
        .call(&Default::default(), GUARD)
        .unwrap();
    assert_eq!(
        (again.return_code, again.error_string.as_str()),
        (1, "Player is already stopped.")
    );
    // The player can play again afterwards (the `play` service starts a playback).
    let play = rig.client::<Play>("play");
    let request = PlayRequest {
        start_offset: TimeMsg::from_nanos(800 * MS),
        ..Default::default()
    };
    player.resume().unwrap();
    assert!(play.call(&request, GUARD).unwrap().success);
    rig.drive_until(1, || rig.payloads().len() == 2 && !player.is_playing());
    assert_eq!(rig.payloads(), [8, 9]);
}

#[test]
fn a_stop_before_playback_starts_ends_it_at_once_and_only_it() {
    let mut rig = Rig::new();
    rig.subscribe("/a", STRING, QosProfile::default());
    let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
    let player = rig.player(opts(bag));
    // As a `stop` request or a signal between the node's creation and `play`.
    rig.client::<Stop>("stop")
        .call(&Default::default(), GUARD)
        .unwrap();
    assert_eq!(
        rig.drive(1, rig.start(&player)),
        PlaybackSummary {
            published: 0,
            end: PlaybackEnd::Stopped
        }
    );
    // That stop is spent: the next playback plays everything.
    assert_eq!(rig.drive(1, rig.start(&player)).published, 10);
    assert_eq!(rig.payloads(), (0..10).collect::<Vec<u8>>());
}

#[test]
fn a_stop_handle_stops_playback_and_keeps_nothing_alive() {
    let mut rig = Rig::new();
    rig.subscribe("/a", STRING, QosProfile::default());
    let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
    let node: Arc<dyn Middleware> = Arc::new(rig.bus.node("rosbag2_player", "/").unwrap());
    let node_alive = Arc::downgrade(&node);
    let player = Arc::new(Player::with_time_source(node, opts(bag), rig.time.as_source()).unwrap());
    let stopper = player.stop_handle();
    stopper.stop();
    assert_eq!(rig.drive(1, rig.start(&player)).end, PlaybackEnd::Stopped);
    // The handle outlives the player (as a signal thread does) without holding its node.
    drop(player);
    assert!(
        node_alive.upgrade().is_none(),
        "the stop handle kept the node alive"
    );
    stopper.stop();
}

#[test]
fn clock_is_published_at_its_frequency_and_scales_with_rate() {
    for rate in [1.0, 2.0] {
        let mut rig = Rig::new();
        rig.subscribe(
            CLOCK_TOPIC,
            CLOCK_TYPE,
            rosbag2_rs_transport_lib::clock_qos(),
        );
        rig.subscribe("/a", STRING, QosProfile::default());
        // The bag's own /clock must not be replayed.
        let mut specs = ten();
        specs.push((CLOCK_TOPIC, 50, 0));
        let bag = write_bag(&rig.dir, "bag", &specs, &[]);
        let player = rig.player(PlayOptions {
            clock_publish_frequency: 10.0,
            rate: PlaybackRate::new(rate).unwrap(),
            ..opts(bag)
        });
        let handle = rig.start(&player);
        rig.drive(2, handle);
        let clock = rig.clock_times();
        assert!(clock.len() >= 5, "{clock:?}");
        // Every 100 ms of steady time, playback time advanced by 100 ms × rate.
        for (i, (steady, ros)) in clock.iter().enumerate().skip(1) {
            assert_eq!(*steady, i as i64 * 100, "{clock:?}");
            assert_eq!(*ros, (i as f64 * 100.0 * rate) as i64, "{clock:?}");
        }
        assert_eq!(rig.payloads(), (0..10).collect::<Vec<u8>>());
    }
}

#[test]
fn the_bags_clock_is_played_unless_the_player_publishes_its_own() {
    for own_clock in [false, true] {
        let mut rig = Rig::new();
        rig.subscribe(
            CLOCK_TOPIC,
            CLOCK_TYPE,
            rosbag2_rs_transport_lib::clock_qos(),
        );
        let mut specs = ten();
        specs.extend([(CLOCK_TOPIC, 50, 7), (CLOCK_TOPIC, 150, 8)]);
        let bag = write_bag(&rig.dir, "bag", &specs, &[]);
        let summary = rig.play(PlayOptions {
            clock_publish_frequency: if own_clock { 1.0 } else { 0.0 },
            ..opts(bag)
        });
        let recorded: Vec<u8> = rig
            .received
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, m)| t == CLOCK_TOPIC && m.data.len() == 5)
            .map(|(_, m)| m.data[4])
            .collect();
        if own_clock {
            assert!(recorded.is_empty(), "{recorded:?}");
            assert_eq!(summary.published, 10);
        } else {
            assert_eq!(recorded, [7, 8], "the bag's /clock reaches a subscriber");
            assert_eq!(summary.published, 12);
        }
    }
}

#[test]
fn clock_before_chosen_topics_and_after_a_jump() {
    let mut rig = Rig::new();
    rig.subscribe(
        CLOCK_TOPIC,
        CLOCK_TYPE,
        rosbag2_rs_transport_lib::clock_qos(),
    );
    let mut specs = ten();
    specs.push(("/b", 450, 99));
    let bag = write_bag(&rig.dir, "bag", &specs, &[]);
    let player = rig.player(PlayOptions {
        clock_topics: vec!["/b".into()],
        ..opts(bag)
    });
    let p = player.clone();
    let mut once = true;
    rig.on_message("/a", move |i| {
        if i == 6 && std::mem::take(&mut once) {
            p.seek(BAG_T0 + 300 * MS).unwrap();
        }
    });
    let handle = rig.start(&player);
    rig.drive(1, handle);
    let ros: Vec<i64> = rig.clock_times().iter().map(|(_, r)| *r).collect();
    // Before /b's message (450 ms), after the seek (300 ms), before /b again.
    assert_eq!(ros, [450, 300, 450]);
}

#[test]
fn playback_duration_until_and_start_offset_bound_playback() {
    let rig = Rig::new();
    let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
    for (options, expected) in [
        (
            PlayOptions {
                playback_duration: Some(Duration::from_nanos(250 * MS)),
                ..opts(bag.clone())
            },
            vec![0, 1, 2],
        ),
        (
            PlayOptions {
                playback_until: Some(Time::ros(BAG_T0 + 400 * MS)),
                ..opts(bag.clone())
            },
            vec![0, 1, 2, 3, 4],
        ),
        (
            PlayOptions {
                start_offset: Duration::from_nanos(550 * MS),
                playback_duration: Some(Duration::from_nanos(200 * MS)),
                ..opts(bag.clone())
            },
            vec![6, 7],
        ),
        (
            PlayOptions {
                start_offset: Duration::from_nanos(550 * MS),
                playback_until: Some(Time::ros(BAG_T0 + 900 * MS)),
                playback_duration: Some(Duration::from_nanos(10_000 * MS)),
                ..opts(bag.clone())
            },
            vec![6, 7, 8, 9],
        ),
    ] {
        let mut rig = Rig::new();
        rig.subscribe("/a", STRING, QosProfile::default());
        rig.play(options);
        assert_eq!(rig.payloads(), expected);
    }
}

#[test]
fn loop_replays_from_the_start_point() {
    let mut rig = Rig::new();
    let bag = write_bag(&rig.dir, "bag", SIMPLE, &[]);
    let player = rig.player(PlayOptions {
        loop_playback: true,
        start_offset: Duration::from_nanos(100 * MS),
        ..opts(bag)
    });
    let p = player.clone();
    rig.on_message("/a", move |i| {
        if i == 4 {
            // Past the end while looping: refused, playback goes on.
            assert!(p.seek(BAG_T0 + 1_000 * MS + 1).is_err());
        }
        if i == 8 {
            p.stop();
        }
    });
    let handle = rig.start(&player);
    assert_eq!(rig.drive(1, handle).end, PlaybackEnd::Stopped);
    assert_eq!(rig.payloads(), [1, 2, 3, 1, 2, 3, 1, 2, 3]);
}

#[test]
fn delay_postpones_the_first_message() {
    let mut rig = Rig::new();
    rig.subscribe("/a", STRING, QosProfile::default());
    let bag = write_bag(&rig.dir, "bag", SIMPLE, &[]);
    rig.play(PlayOptions {
        delay: Duration::from_nanos(2_000 * MS),
        ..opts(bag)
    });
    assert_eq!(times(&rig), [2_000, 2_100, 2_250, 3_000]);
}

#[test]
fn filters_and_remap_choose_what_is_published_where() {
    let specs: Vec<Spec> = vec![
        ("/a", 0, 0),
        ("/b", 10, 1),
        ("/c/x", 20, 2),
        ("/c/y", 30, 3),
    ];
    let cases: Vec<(TopicFilter, Vec<u8>)> = vec![
        (TopicFilter::topics(["/a", "/c/y"]), vec![0, 3]),
        (
            TopicFilter::from_parts(vec![], Some("/c/.*"), vec![], None).unwrap(),
            vec![2, 3],
        ),
        (
            TopicFilter::from_parts(vec![], None, vec!["/b".into()], Some("/c/x")).unwrap(),
            vec![0, 3],
        ),
    ];
    for (filter, expected) in cases {
        let mut rig = Rig::new();
        for t in ["/a", "/b", "/c/x", "/c/y"] {
            rig.subscribe(t, STRING, QosProfile::default());
        }
        let bag = write_bag(&rig.dir, "bag", &specs, &[]);
        rig.play(PlayOptions {
            filter,
            ..opts(bag)
        });
        assert_eq!(rig.payloads(), expected);
    }
    let mut rig = Rig::new();
    rig.subscribe("/renamed", STRING, QosProfile::default());
    rig.subscribe("/a", STRING, QosProfile::default());
    let bag = write_bag(&rig.dir, "bag", &specs, &[]);
    rig.play(PlayOptions {
        remap: vec![("/a".into(), "/renamed".into())],
        ..opts(bag)
    });
    assert_eq!(rig.log(), [("/renamed".to_string(), 0, 0)]);
}

#[test]
fn recorded_qos_is_offered_unless_overridden_and_latched_topics_survive_a_start_offset() {
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        depth: 1,
        ..QosProfile::default()
    };
    let best_effort = QosProfile {
        reliability: Reliability::BestEffort,
        ..QosProfile::default()
    };
    let specs: Vec<Spec> = vec![
        ("/map", 0, 42),
        ("/map", 5, 43),
        ("/a", 10, 0),
        ("/a", 600, 1),
        ("/a", 700, 2),
    ];
    let rig = Rig::new();
    let bag = write_bag(
        &rig.dir,
        "bag",
        &specs,
        &[("/map", latched), ("/a", best_effort)],
    );

    let mut rig = Rig::new();
    rig.subscribe("/a", STRING, QosProfile::default()); // reliable request: no match with best effort
    let player = rig.player(PlayOptions {
        start_offset: Duration::from_nanos(500 * MS),
        ..opts(bag.clone())
    });
    let offered = |topic: &str| {
        let topics = rig.observer.topics();
        topics.iter().find(|t| t.name == topic).unwrap().publishers[0].qos
    };
    assert_eq!(offered("/map").durability, Durability::TransientLocal);
    assert_eq!(offered("/a").reliability, Reliability::BestEffort);
    let handle = rig.start(&player);
    rig.drive(1, handle);
    assert!(
        rig.log().is_empty(),
        "a reliable subscription does not match a best-effort offer"
    );
    // A late transient-local subscriber still gets the map recorded before the start offset.
    rig.subscribe("/map", STRING, latched);
    assert_eq!(rig.payloads(), [43]);

    // Overrides change the offer.
    let mut rig = Rig::new();
    rig.subscribe("/a", STRING, QosProfile::default());
    let overrides = [
        ("/a".to_string(), QosProfile::default()),
        // The player's own event topic too, as in rosbag2 Lyrical (ros2/rosbag2#2286).
        ("/events/read_split".to_string(), latched),
    ]
    .into_iter()
    .collect();
    let player = rig.player(PlayOptions {
        qos_overrides: overrides,
        ..opts(bag)
    });
    let topics = rig.observer.topics();
    let split = topics.iter().find(|t| t.name == "/events/read_split");
    assert_eq!(split.unwrap().publishers[0].qos, latched);
    rig.drive(1, rig.start(&player));
    assert_eq!(rig.payloads(), [0, 1, 2]);
}

#[test]
fn read_split_events_announce_each_file_change_and_bags_merge_in_time_order() {
    let mut rig = Rig::new();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    rig._subscriptions.push(
        rig.observer
            .create_subscription(
                "/events/read_split",
                "rosbag2_interfaces/msg/ReadSplitEvent",
                &QosProfile::default(),
                Box::new(move |m: ReceivedMessage| {
                    sink.lock()
                        .unwrap()
                        .push(rosbag2_rs_interfaces::from_cdr::<ReadSplitEvent>(&m.data).unwrap())
                }),
            )
            .unwrap(),
    );
    rig.subscribe("/a", STRING, QosProfile::default());
    rig.subscribe("/b", STRING, QosProfile::default());
    let first = write_bag_split(&rig.dir, "split", &ten(), &[], Some(4));
    let other: Vec<Spec> = vec![("/b", 150, 100), ("/b", 450, 101)];
    let second = write_bag(&rig.dir, "other", &other, &[]);
    rig.play(PlayOptions {
        bags: vec![first.clone(), second],
        ..Default::default()
    });
    assert_eq!(rig.payloads(), [0, 1, 100, 2, 3, 4, 101, 5, 6, 7, 8, 9]);
    let events = events.lock().unwrap();
    let files: Vec<(String, String)> = events
        .iter()
        .filter(|e| e.closed_file.contains("split") && e.opened_file.contains("split"))
        .map(|e| (e.closed_file.clone(), e.opened_file.clone()))
        .collect();
    assert_eq!(files.len(), 1, "{events:?}");
    assert!(
        files[0].0.contains("/0_split_") && files[0].1.contains("/1_split_"),
        "{files:?}"
    );
    assert!(events.iter().all(|e| e.node_name == "/rosbag2_player"));
}

#[test]
fn two_players_stay_in_sync_through_clock_and_sim_time_refuses_control() {
    let mut rig = Rig::new();
    rig.subscribe("/a", STRING, QosProfile::default());
    rig.subscribe("/b", STRING, QosProfile::default());
    // Two bags of the same time range, recorded with different topics.
    let a: Vec<Spec> = (0..10).map(|i| ("/a", i * 100, i as u8)).collect();
    // The leader's /clock stops with its last message (900 ms): /b ends before that.
    let b: Vec<Spec> = (0..9)
        .map(|i| ("/b", 35 + i * 100, 100 + i as u8))
        .collect();
    let bag_a = write_bag(&rig.dir, "a", &a, &[]);
    let bag_b = write_bag(&rig.dir, "b", &b, &[]);
    let follower = rig.player_named(
        "follower",
        PlayOptions {
            use_sim_time: true,
            ..opts(bag_b)
        },
    );
    let source = rig.player(PlayOptions {
        clock_publish_frequency: 100.0,
        ..opts(bag_a)
    });
    assert!(follower.set_rate(2.0).is_err());
    assert!(follower.seek(BAG_T0).is_err());
    let follow = rig.start(&follower);
    let lead = rig.start(&source);
    // Three threads sleep on time until the follower's bag ends, then the leader's two.
    rig.drive_until(3, || follow.is_finished());
    assert_eq!(follow.join().unwrap().end, PlaybackEnd::Finished);
    rig.drive(2, lead);
    // /b's messages left when the /clock of the leader passed their time: within one 10 ms tick.
    for (topic, byte, t) in rig.log() {
        if topic == "/b" {
            let due = 35 + (byte as i64 - 100) * 100;
            assert!(
                (due..due + 10).contains(&t),
                "/b #{byte} at {t} ms, due {due}"
            );
        }
    }
    assert_eq!(rig.log().iter().filter(|(t, _, _)| t == "/b").count(), 9);
    let set_rate = Client::<SetRate>::new(rig.observer.as_ref(), "/follower/set_rate").unwrap();
    assert!(
        !set_rate
            .call(&SetRateRequest { rate: 2.0 }, GUARD)
            .unwrap()
            .success
    );
}

#[test]
fn clock_message_bytes_match_rosgraph_msgs() {
    // rosbags: serialize_cdr(Clock(Time(sec=1700000000, nanosec=5)), 'rosgraph_msgs/msg/Clock')
    let mut rig = Rig::new();
    rig.subscribe(
        CLOCK_TOPIC,
        CLOCK_TYPE,
        rosbag2_rs_transport_lib::clock_qos(),
    );
    let bag = write_bag(&rig.dir, "bag", &[("/a", 0, 0)], &[]);
    rig.play(PlayOptions {
        clock_topics_all: true,
        ..opts(bag)
    });
    let received = rig.received.lock().unwrap();
    let expected: Bytes = [
        &[0u8, 1, 0, 0][..],
        &1_700_000_000i32.to_le_bytes(),
        &0u32.to_le_bytes(),
    ]
    .concat()
    .into();
    assert_eq!(received[0].1.data, expected);
}

/// Writes `(offset of receive, offset of send, byte)` messages on /a (offsets in ms from BAG_T0).
fn write_bag_sent(dir: &std::path::Path, specs: &[(i64, i64, u8)]) -> std::path::PathBuf {
    let uri = dir.join("sent");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new("/a", STRING), None)
        .unwrap();
    for (recv, send, byte) in specs {
        let mut message =
            SerializedMessage::new(Arc::from("/a"), BAG_T0 + recv * MS, cdr(&[*byte]));
        message.send_timestamp = BAG_T0 + send * MS;
        writer.write(&message).unwrap();
    }
    writer.close().unwrap();
    uri
}

#[test]
fn message_order_sent_orders_and_schedules_by_publish_time() {
    // Received in the order 0 1 2 3; sent in the order 0 2 1 3.
    let specs = [(0, 0, 0), (100, 150, 1), (200, 50, 2), (300, 300, 3)];
    for (order, payloads, expected) in [
        (MessageOrder::Received, [0, 1, 2, 3], [0, 100, 200, 300]),
        (MessageOrder::Sent, [0, 2, 1, 3], [0, 50, 150, 300]),
    ] {
        for window in [1000, 2] {
            let mut rig = Rig::new();
            rig.subscribe("/a", STRING, QosProfile::default());
            let bag = write_bag_sent(&rig.dir, &specs);
            rig.play(PlayOptions {
                message_order: order,
                read_ahead_queue_size: window,
                ..opts(bag)
            });
            assert_eq!(rig.payloads(), payloads, "{order:?}, window {window}");
            assert_eq!(times(&rig), expected, "{order:?}, window {window}");
        }
    }
    // Where send and receive times are equal (or sent order is receive order), nothing changes.
    let mut rig = Rig::new();
    rig.subscribe("/a", STRING, QosProfile::default());
    let bag = write_bag(&rig.dir, "bag", SIMPLE, &[]);
    rig.play(PlayOptions {
        message_order: MessageOrder::Sent,
        ..opts(bag)
    });
    assert_eq!(rig.payloads(), [0, 1, 2, 3]);
    assert_eq!(times(&rig), [0, 100, 250, 1000]);
}

#[test]
fn message_order_sent_follows_seeks() {
    // Each message received 30 ms after it was sent; the window is emptied by a seek.
    let specs: Vec<(i64, i64, u8)> = (0..10).map(|i| (i * 100 + 30, i * 100, i as u8)).collect();
    let mut rig = Rig::new();
    let bag = write_bag_sent(&rig.dir, &specs);
    let player = rig.player(PlayOptions {
        message_order: MessageOrder::Sent,
        ..opts(bag)
    });
    let p = player.clone();
    rig.on_message("/a", move |i| {
        if i == 0 {
            p.seek(BAG_T0 + 500 * MS).unwrap();
        }
    });
    let handle = rig.start(&player);
    rig.drive(1, handle);
    assert_eq!(rig.payloads(), [0, 5, 6, 7, 8, 9]);
    let t = times(&rig);
    assert_eq!(t[2] - t[1], 100);
}

type SetRateEvent = ServiceEvent<SetRateRequest, SetRateResponse>;

#[test]
fn introspected_services_are_recorded_and_played_back_as_event_topics() {
    use rosbag2_rs_transport_lib::{RecordOptions, Recorder, ServiceIntrospection, TopicSelection};
    const EVENTS: &str = "/rosbag2_player/set_rate/_service_event";
    const EVENT_TYPE: &str = "rosbag2_interfaces/srv/SetRate_Event";
    let mut rig = Rig::new();
    let bag = write_bag(&rig.dir, "bag", SIMPLE, &[]);
    // Off by default: no event topic.
    let quiet = rig.player(opts(bag.clone()));
    assert!(!rig
        .bus
        .node("probe", "/")
        .unwrap()
        .topics()
        .iter()
        .any(|t| t.name == EVENTS));
    drop(quiet);
    let player = rig.player(PlayOptions {
        service_introspection: ServiceIntrospection::Contents,
        start_paused: true,
        ..opts(bag)
    });
    let recorded = rig.dir.join("events");
    let recorder = Recorder::start(
        Arc::new(rig.bus.node("rosbag2_recorder", "/").unwrap()),
        RecordOptions {
            uri: recorded.clone(),
            selection: TopicSelection {
                services: vec!["/rosbag2_player/set_rate".into()],
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(recorder.topics(), [EVENTS]);
    let client = rig.client::<SetRate>("set_rate");
    let response = client
        .call(&SetRateRequest { rate: 2.0 }, StdDuration::from_secs(1))
        .unwrap();
    assert!(response.success);
    recorder.stop().unwrap();
    drop(player);

    let mut reader =
        rosbag2_rs_storage::SequentialReader::open_many(std::slice::from_ref(&recorded)).unwrap();
    let topics = reader.topics();
    assert_eq!(topics.len(), 1);
    assert_eq!(topics[0].topic_metadata.type_name, EVENT_TYPE);
    let mut events = Vec::new();
    while let Some(m) = reader.read_next().unwrap() {
        events.push(from_cdr::<SetRateEvent>(&m.data).unwrap());
    }
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[0].info.event_type,
        ServiceEventInfo::REQUEST_RECEIVED
    );
    assert_eq!(events[0].request, [SetRateRequest { rate: 2.0 }]);
    assert!(events[0].response.is_empty());
    assert_eq!(events[1].info.event_type, ServiceEventInfo::RESPONSE_SENT);
    assert_eq!(events[1].response, [SetRateResponse { success: true }]);
    assert_eq!(events[0].info.client_gid, events[1].info.client_gid);
    assert_eq!(events[0].info.sequence_number, 1);
    assert_eq!(events[1].info.sequence_number, 1);

    // Played back as topics, unless left out with --exclude-services.
    rig.subscribe(EVENTS, EVENT_TYPE, QosProfile::default());
    rig.play(opts(recorded.clone()));
    let played: Vec<SetRateEvent> = rig
        .received
        .lock()
        .unwrap()
        .iter()
        .map(|(_, m)| from_cdr(&m.data).unwrap())
        .collect();
    assert_eq!(played, events);
    rig.received.lock().unwrap().clear();
    let summary = rig.play(PlayOptions {
        filter: TopicFilter::from_parts(vec![], None, vec![EVENTS.into()], None).unwrap(),
        ..opts(recorded)
    });
    assert_eq!(summary.published, 0);
    assert!(rig.received.lock().unwrap().is_empty());
}

/// A bag of `/target/set_rate` events as rosbag2 records them (its `.srv`-text definition):
/// a client's request for rate 0.5, the server's receipt of a request for 2.0, the server's
/// response, and a request event recorded without contents.
fn write_set_rate_events(dir: &std::path::Path) -> std::path::PathBuf {
    const EVENT_TYPE: &str = "rosbag2_interfaces/srv/SetRate_Event";
    let uri = dir.join("set_rate_events");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        ..Default::default()
    })
    .unwrap();
    let meta = TopicMetadata::new("/target/set_rate/_service_event", EVENT_TYPE);
    let srv_text = rosbag2_rs_codec::MessageDefinition {
        topic_type: "rosbag2_interfaces/srv/SetRate".into(),
        encoding: "ros2msg".into(),
        encoded_message_definition: format!(
            "{}\nSRV: rosbag2_interfaces/srv/SetRate\nfloat64 rate\n---\nbool success\n",
            "=".repeat(80)
        ),
        type_description_hash: String::new(),
    };
    writer.create_topic(&meta, Some(srv_text)).unwrap();
    let event = |event_type, request: &[f64], response: &[bool]| SetRateEvent {
        info: ServiceEventInfo {
            event_type,
            sequence_number: 1,
            ..Default::default()
        },
        request: request
            .iter()
            .map(|&rate| SetRateRequest { rate })
            .collect(),
        response: response
            .iter()
            .map(|&success| SetRateResponse { success })
            .collect(),
    };
    let events = [
        event(ServiceEventInfo::REQUEST_SENT, &[0.5], &[]),
        event(ServiceEventInfo::REQUEST_RECEIVED, &[2.0], &[]),
        event(ServiceEventInfo::RESPONSE_SENT, &[], &[true]),
        event(ServiceEventInfo::REQUEST_RECEIVED, &[], &[]),
    ];
    for (i, e) in events.iter().enumerate() {
        writer
            .write(&SerializedMessage::new(
                Arc::from(meta.name.as_str()),
                BAG_T0 + i as i64 * 10 * MS,
                Bytes::from(rosbag2_rs_interfaces::to_cdr(e)),
            ))
            .unwrap();
    }
    writer.close().unwrap();
    uri
}

#[test]
fn recorded_service_requests_are_sent_to_the_service_from_the_chosen_source() {
    use rosbag2_rs_transport_lib::ServiceRequestsSource;
    let rig = Rig::new();
    let target = rig.player_named("target", opts(write_bag(&rig.dir, "bag", SIMPLE, &[])));
    let events = write_set_rate_events(&rig.dir);
    for (source, rate) in [
        (ServiceRequestsSource::ServiceIntrospection, 2.0),
        (ServiceRequestsSource::ClientIntrospection, 0.5),
    ] {
        target.set_rate(1.0).unwrap();
        let replayer = rig.player_named(
            "replayer",
            PlayOptions {
                publish_service_requests: true,
                service_requests_source: source,
                ..opts(events.clone())
            },
        );
        let handle = rig.start(&replayer);
        rig.drive(1, handle);
        assert_eq!(target.rate(), rate, "{source:?}");
    }
    // Without the flag the events are published, and the service is not called.
    target.set_rate(1.0).unwrap();
    let replayer = rig.player_named("replayer", opts(events));
    let handle = rig.start(&replayer);
    rig.drive(1, handle);
    assert_eq!(target.rate(), 1.0);
}

/// `/clock` message bytes for a bag time (rosgraph_msgs/msg/Clock, CDR little endian).
fn clock_bytes(bag_time: i64) -> Bytes {
    let sec = bag_time.div_euclid(1_000_000_000) as i32;
    let nsec = bag_time.rem_euclid(1_000_000_000) as u32;
    [&[0u8, 1, 0, 0][..], &sec.to_le_bytes(), &nsec.to_le_bytes()]
        .concat()
        .into()
}

/// `count` messages on /a, `period_ms` apart from BAG_T0; message i carries byte `i as u8`.
fn steady_topic(period_ms: i64, count: i64) -> Vec<Spec> {
    (0..count).map(|i| ("/a", i * period_ms, i as u8)).collect()
}

/// Plays `specs` with `--use-sim-time` against a `/clock` this test publishes: at each
/// `(steady ms, bag ms)` tick virtual time is set to the steady time, then the bag time is
/// published. Between ticks, virtual time moves deadline by deadline, so a player that
/// extrapolates publishes on its own schedule. Returns the log (topic, byte, receive ms).
fn play_under_sim_time(
    specs: &[Spec],
    options: PlayOptions,
    ticks: impl IntoIterator<Item = (i64, i64)>,
) -> (Vec<(String, u8, i64)>, PlaybackSummary) {
    let mut rig = Rig::new();
    rig.subscribe("/a", STRING, QosProfile::default());
    let bag = write_bag(&rig.dir, "bag", specs, &[]);
    let clock = rig
        .observer
        .create_publisher(
            CLOCK_TOPIC,
            CLOCK_TYPE,
            &rosbag2_rs_transport_lib::clock_qos(),
        )
        .unwrap();
    let player = rig.player(PlayOptions {
        use_sim_time: true,
        ..PlayOptions {
            bags: vec![bag],
            ..options
        }
    });
    let handle = rig.start(&player);
    for (steady_ms, bag_ms) in ticks {
        let at = STEADY_T0 + steady_ms * MS;
        let give_up = std::time::Instant::now() + GUARD;
        while !handle.is_finished() {
            assert!(
                std::time::Instant::now() < give_up,
                "the player did not settle"
            );
            if !rig.time.wait_settled(1, StdDuration::from_millis(20)) {
                continue;
            }
            match rig.time.next_deadline() {
                Some(deadline) if deadline < at => {
                    rig.time.advance_to_next_deadline();
                }
                _ => break,
            }
        }
        rig.time.set(at.max(rig.time.now_nanos()));
        clock.publish(&clock_bytes(BAG_T0 + bag_ms * MS)).unwrap();
    }
    let summary = rig.drive(1, handle);
    (rig.log(), summary)
}

/// A clock advancing at real time: a tick every `period_ms` from 0 to `end_ms`.
fn real_time_ticks(period_ms: i64, end_ms: i64) -> Vec<(i64, i64)> {
    (0..=end_ms / period_ms)
        .map(|k| (k * period_ms, k * period_ms))
        .collect()
}

/// Checks that the log's payload bytes are `expected`, naming the first difference.
fn assert_bytes(log: &[(String, u8, i64)], expected: impl IntoIterator<Item = i64>) {
    let expected: Vec<u8> = expected.into_iter().map(|i| i as u8).collect();
    let got: Vec<u8> = log.iter().map(|(_, b, _)| *b).collect();
    if let Some(i) = (0..got.len().max(expected.len())).find(|&i| got.get(i) != expected.get(i)) {
        panic!(
            "{} messages, expected {}; first difference at #{i}: {:?} (expected {:?}), around {:?}",
            got.len(),
            expected.len(),
            got.get(i),
            expected.get(i),
            &log[i.saturating_sub(3)..(i + 3).min(log.len())]
        );
    }
}

#[test]
fn sim_time_forward_steps_release_every_due_message_in_order_at_the_tick() {
    // 1 kHz against a 10 Hz /clock: each tick releases the 100 messages it passed.
    let specs = steady_topic(1, 2000);
    let (log, summary) =
        play_under_sim_time(&specs, PlayOptions::default(), real_time_ticks(100, 2000));
    assert_eq!(summary.published, 2000);
    assert_bytes(&log, 0..2000);
    for (i, (_, _, t)) in log.iter().enumerate() {
        let tick = (i as i64 + 99) / 100 * 100;
        assert_eq!(
            *t, tick,
            "message {i} left at {t} ms, its tick is {tick} ms"
        );
    }
    // 200 Hz against a 100 Hz /clock.
    let specs = steady_topic(5, 400);
    let (log, summary) =
        play_under_sim_time(&specs, PlayOptions::default(), real_time_ticks(10, 2000));
    assert_eq!(summary.published, 400);
    assert_bytes(&log, 0..400);
}

#[test]
fn sim_time_extrapolation_spreads_a_ticks_backlog_over_the_tick() {
    let specs = steady_topic(1, 2000);
    let (log, summary) = play_under_sim_time(
        &specs,
        PlayOptions {
            extrapolate_ros_time: true,
            ..Default::default()
        },
        real_time_ticks(100, 2000),
    );
    assert_eq!(summary.published, 2000);
    assert_bytes(&log, 0..2000);
    // From the second tick on the rate is known: each message leaves at its own time.
    for (i, (_, _, t)) in log.iter().enumerate().skip(101) {
        assert!(
            (i as i64..=i as i64 + 1).contains(t),
            "message {i} left at {t} ms"
        );
    }
}

#[test]
fn sim_time_backward_steps_and_forward_leaps_beyond_the_threshold_reposition() {
    let specs = steady_topic(1, 2000);
    // Back from 1000 ms to 500 ms: playback continues from 500 ms.
    let ticks = real_time_ticks(100, 1000)
        .into_iter()
        .chain((0..=15).map(|k| (1100 + k * 100, 500 + k * 100)));
    let (log, _) = play_under_sim_time(&specs, PlayOptions::default(), ticks);
    assert_bytes(&log, (0..=1000).chain(500..2000));

    // A leap from 500 ms to 1500 ms: within the threshold every message is played; beyond
    // it, what the leap passed over is skipped.
    let leap = || {
        real_time_ticks(100, 500)
            .into_iter()
            .chain((0..=5).map(|k| (600 + k * 100, 1500 + k * 100)))
    };
    let (log, _) = play_under_sim_time(&specs, PlayOptions::default(), leap());
    assert_bytes(&log, 0..2000);
    let (log, _) = play_under_sim_time(
        &specs,
        PlayOptions {
            sim_time_jump_threshold: Some(Duration::from_nanos(500 * MS)),
            ..Default::default()
        },
        leap(),
    );
    assert_bytes(&log, (0..=500).chain(1500..2000));
}

/// Waits (real time, with a guard: other threads report it) until `done()`.
fn eventually(what: &str, done: impl Fn() -> bool) {
    let give_up = std::time::Instant::now() + GUARD;
    while !done() {
        assert!(
            std::time::Instant::now() < give_up,
            "never happened: {what}"
        );
        std::thread::sleep(StdDuration::from_millis(5));
    }
}

#[test]
fn clock_publishers_are_counted_by_followers_and_time_sources() {
    let rig = Rig::new();
    let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
    let leader = |name| {
        rig.player_named(
            name,
            PlayOptions {
                clock_publish_frequency: 10.0,
                ..opts(bag.clone())
            },
        )
    };
    let follower = rig.player_named(
        "follower",
        PlayOptions {
            use_sim_time: true,
            ..opts(bag.clone())
        },
    );
    let first = leader("leader_1");
    eventually("one /clock publisher seen", || {
        follower.clock().clock_publisher_count() == 1
    });
    let second = leader("leader_2");
    for player in [&follower, &first, &second] {
        eventually("two /clock publishers seen by every player", || {
            player.clock().clock_publisher_count() == 2
        });
    }
    // A player that neither follows nor publishes /clock does not count (nor warn).
    let bystander = rig.player_named("bystander", opts(bag));
    assert_eq!(bystander.clock().clock_publisher_count(), 0);
}

#[test]
fn a_late_clock_subscriber_gets_the_time_at_once() {
    for options in [
        PlayOptions {
            clock_topics: vec!["/a".into()],
            ..Default::default()
        },
        PlayOptions {
            clock_publish_frequency: 0.5,
            ..Default::default()
        },
    ] {
        let mut rig = Rig::new();
        let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
        let player = rig.player(PlayOptions {
            start_paused: true,
            bags: vec![bag],
            ..options
        });
        let handle = rig.start(&player);
        // Virtual time stands still: only the new subscription can make /clock go out.
        rig.subscribe(
            CLOCK_TOPIC,
            CLOCK_TYPE,
            rosbag2_rs_transport_lib::clock_qos(),
        );
        eventually("a /clock sample for the late subscriber", || {
            !rig.clock_times().is_empty()
        });
        assert_eq!(rig.clock_times()[0], (0, 0));
        player.stop();
        handle.join().unwrap();
    }
}

#[test]
fn clock_publishing_starts_changes_and_stops_at_run_time() {
    let mut rig = Rig::new();
    rig.subscribe(
        CLOCK_TOPIC,
        CLOCK_TYPE,
        rosbag2_rs_transport_lib::clock_qos(),
    );
    let bag = write_bag(&rig.dir, "bag", &ten(), &[]);
    let player = rig.player(opts(bag));
    let stopper = player.clone();
    rig.on_message("/a", move |i| {
        if i == 4 {
            stopper.set_clock_publish_frequency(0.0).unwrap();
        }
    });
    let handle = rig.start(&player);
    assert!(rig.clock_times().is_empty());
    let set = rig.client::<SetClockPublishFrequency>("set_clock_publish_frequency");
    let response = set
        .call(&SetClockPublishFrequencyRequest { frequency: 20.0 }, GUARD)
        .unwrap();
    assert!(response.success, "{}", response.message);
    // The playback thread and the /clock thread sleep on time until message 4 (400 ms).
    rig.drive_until(2, || rig.payloads().len() == 5);
    rig.drive(1, handle);
    let ticks = rig.clock_times();
    assert!(ticks.len() >= 8, "{ticks:?}");
    // Each tick at its time, none after publishing stopped at message 4 (400 ms). The tick due at
    // that same instant races the stop on another thread: it may go out, and later than its time
    // (the rig drives on once the playback thread sleeps again).
    assert!(
        ticks
            .iter()
            .all(|&(t, bag)| bag <= 400 && (t == bag || bag == 400)),
        "{ticks:?}"
    );
    // Sim time follows another node's /clock: it does not publish its own.
    let follower = rig.player_named(
        "follower",
        PlayOptions {
            use_sim_time: true,
            ..opts(write_bag(&rig.dir, "b", &ten(), &[]))
        },
    );
    assert!(follower.set_clock_publish_frequency(10.0).is_err());
}

#[test]
fn a_read_error_during_burst_ends_playback_with_the_error() {
    let rig = Rig::new();
    // Many small chunks, and a read-ahead of one message: reading goes on during the burst.
    let uri = rig.dir.join("cut_under_the_reader");
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: uri.clone(),
        storage: rosbag2_rs_storage::WriterOptions {
            chunk_size: 4096,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    writer
        .create_topic(&TopicMetadata::new("/a", STRING), None)
        .unwrap();
    for i in 0..2000 {
        let message = SerializedMessage::new(Arc::from("/a"), BAG_T0 + i * MS, vec![7u8; 100]);
        writer.write(&message).unwrap();
    }
    writer.close().unwrap();
    let player = rig.player(PlayOptions {
        start_paused: true,
        read_ahead_queue_size: 1,
        ..opts(uri.clone())
    });
    let playing = player.clone();
    let handle = std::thread::spawn(move || playing.play());
    while !player.is_playing() && !handle.is_finished() {
        std::thread::yield_now();
    }
    // Served only once the bag is open and the playback thread runs.
    player.play_next().unwrap();
    // Another process cuts the file short while it is played: an error no reader can skip.
    let file = rosbag2_rs_storage::storage_files_in(&uri)
        .unwrap()
        .remove(0);
    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len / 4)
        .unwrap();
    let burst = player.burst(u64::MAX);
    // What the CLI's `burst` does next: stop, and wait for the playback to end.
    player.stop();
    // A safety net for a hanging player, not a timing assertion.
    let give_up = std::time::Instant::now() + StdDuration::from_secs(60);
    while !handle.is_finished() {
        assert!(
            std::time::Instant::now() < give_up,
            "playback waits forever after a read error"
        );
        std::thread::sleep(StdDuration::from_millis(10));
    }
    assert!(
        matches!(&burst, Err(PlayerError::Refused(m)) if m.contains("playback failed")),
        "{burst:?}"
    );
    let error = handle.join().unwrap().unwrap_err();
    assert!(matches!(error, PlayerError::Playback(_)), "{error:?}");
    let cause = std::error::Error::source(&error).unwrap().to_string();
    assert!(cause.contains("truncated"), "{cause}");
}

/// Spins until `condition` holds (the effect of a thread that virtual time just woke); a
/// safety net, not a timing assertion.
fn until(condition: impl Fn() -> bool) {
    let give_up = std::time::Instant::now() + GUARD;
    while !condition() {
        assert!(std::time::Instant::now() < give_up, "never happened");
        std::thread::yield_now();
    }
}

#[test]
fn a_resume_and_a_pause_at_node_times_act_at_those_instants() {
    use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::{PauseAt, PauseAtRequest};
    let (rig, player, handle) = Rig::started_paused(&ten());
    let t0 = rig.time.now_nanos();
    let (resume_at, pause_at) = (t0 + 2_000 * MS, t0 + 2_350 * MS);
    let invalid = rig
        .client::<Resume>("resume")
        .call(
            &ResumeRequest {
                resume_time: TimeMsg::from_nanos(resume_at),
                resume_mode: time_mode::PUBLISH_TIME,
                ..Default::default()
            },
            GUARD,
        )
        .unwrap();
    assert_eq!(
        invalid.return_code,
        ResumeResponse::RETURN_CODE_INVALID_RESUME_MODE
    );
    let resumed = rig
        .client::<Resume>("resume")
        .call(
            &ResumeRequest {
                resume_time: TimeMsg::from_nanos(resume_at),
                ..Default::default()
            },
            GUARD,
        )
        .unwrap();
    assert_eq!(resumed, ResumeResponse::default());
    let paused = rig
        .client::<PauseAt>("pause_at")
        .call(
            &PauseAtRequest {
                pause_time: TimeMsg::from_nanos(pause_at),
            },
            GUARD,
        )
        .unwrap();
    assert!(paused.success, "{}", paused.message);

    // Three sleepers until the resume: playback and both schedules; then two, then one.
    for (sleepers, time, paused_after) in [(3, resume_at, false), (2, pause_at, true)] {
        while rig.time.now_nanos() < time {
            assert!(rig.time.wait_settled(sleepers, GUARD));
            rig.time.advance_to_next_deadline();
        }
        until(|| player.is_paused() == paused_after);
    }
    for _ in 0..3 {
        assert!(rig.time.wait_settled(1, GUARD));
        rig.time.advance(Duration::from_nanos(1_000 * MS));
    }
    assert!(rig.time.wait_settled(1, GUARD));
    player.stop();
    handle.join().unwrap();
    // Played from the resume on, 100 ms apart, until the pause at 350 ms.
    let start = (resume_at - STEADY_T0) / MS;
    let after: Vec<i64> = times(&rig).iter().map(|t| t - start).collect();
    assert_eq!(after, [0, 100, 200, 300]);
}
