//! Steady, system and ROS clocks behind the one `Clock` interface; Rate and Timer.

use rosbag2_rs_clock::{
    Clock, ClockChange, ClockType, Duration, JumpThreshold, PlaybackRate, PlayerClock, Rate,
    RosClock, SimTimeClock, SimTimeConfig, SteadyClock, SystemClock, Time, TimeControllerClock,
    TimeControllerConfig, TimeJump, Timer, VirtualTimeSource,
};
use std::sync::{Arc, Mutex};
use std::thread;

/// Recorded jump-handler calls: (which handler, time it saw, jump).
type JumpLog = Arc<Mutex<Vec<(&'static str, Time, TimeJump)>>>;
const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;
const GUARD: std::time::Duration = std::time::Duration::from_secs(30);

#[test]
fn one_interface_for_all_clocks() {
    let steady = VirtualTimeSource::auto_advancing(5);
    let system = VirtualTimeSource::auto_advancing(1_700_000_000 * S);
    let clocks: Vec<(Arc<dyn Clock>, ClockType)> = vec![
        (
            Arc::new(SteadyClock::with_source(steady.as_source())),
            ClockType::Steady,
        ),
        (
            Arc::new(SystemClock::with_source(system.as_source())),
            ClockType::System,
        ),
        (
            Arc::new(RosClock::with_sources(
                system.as_source(),
                steady.as_source(),
            )),
            ClockType::Ros,
        ),
    ];
    for (clock, ty) in clocks {
        assert_eq!(clock.clock_type(), ty);
        let t0 = clock.now();
        assert_eq!(t0.clock_type(), ty);
        assert!(clock.sleep_for(Duration::from_millis(10), Duration::from_secs(1)));
        assert_eq!(
            clock.now().checked_duration_since(t0).unwrap(),
            Duration::from_millis(10)
        );
        // Times of another clock type are refused, not silently mixed.
        let other = if ty == ClockType::Steady {
            Time::system(0)
        } else {
            Time::steady(0)
        };
        assert!(!clock.sleep_until(other, Duration::ZERO));
    }
}

#[test]
fn real_steady_clock_sleeps_at_least_until_deadline() {
    // Only checks ordering (never a wall-clock window).
    let clock = SteadyClock::new();
    let until = clock.now().checked_add(Duration::from_micros(200)).unwrap();
    assert!(clock.sleep_until(until, Duration::from_secs(10)));
    assert!(clock.now() >= until);
    let sys = SystemClock::new();
    assert!(sys.now().nanos() > 1_600_000_000 * S);
}

#[test]
fn steady_clock_wakeup_interrupts() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(SteadyClock::with_source(src.as_source()));
    let c = Arc::clone(&clock);
    let h = thread::spawn(move || c.sleep_until(Time::steady(S), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    clock.wakeup();
    assert!(!h.join().unwrap());
}

#[test]
fn ros_clock_falls_back_to_system_time() {
    let system = VirtualTimeSource::new(1_000 * S);
    let steady = VirtualTimeSource::new(0);
    let clock = RosClock::with_sources(system.as_source(), steady.as_source());
    assert_eq!(clock.now(), Time::ros(1_000 * S));
    // Messages without the override do not change ROS time.
    clock.on_clock_message(Time::ros(5 * S));
    assert!(!clock.is_ros_time_active());
    assert_eq!(clock.now(), Time::ros(1_000 * S));
    // Override enabled with a message received: the latest /clock value.
    clock.set_ros_time_override(true);
    assert!(clock.is_ros_time_active());
    assert_eq!(clock.now(), Time::ros(5 * S));
    system.advance(Duration::from_secs(3));
    assert_eq!(clock.now(), Time::ros(5 * S));
    clock.on_clock_message(Time::ros(6 * S));
    assert_eq!(clock.now(), Time::ros(6 * S));
    // Disabled: back to system time.
    clock.set_ros_time_override(false);
    assert_eq!(clock.now(), Time::ros(1_003 * S));
    assert!(clock.set_clock_publisher_count(2));
}

#[test]
fn ros_clock_jump_callbacks() {
    let system = VirtualTimeSource::new(1_000 * S);
    let steady = VirtualTimeSource::new(0);
    let clock = Arc::new(RosClock::with_sources(
        system.as_source(),
        steady.as_source(),
    ));
    let log: JumpLog = Arc::default();
    let (c1, l1) = (Arc::clone(&clock), Arc::clone(&log));
    let (c2, l2) = (Arc::clone(&clock), Arc::clone(&log));
    let _h = clock
        .create_jump_callback(
            Some(Box::new(move |j| {
                l1.lock().unwrap().push(("pre", c1.now(), *j))
            })),
            Some(Box::new(move |j| {
                l2.lock().unwrap().push(("post", c2.now(), *j))
            })),
            JumpThreshold {
                on_clock_change: true,
                min_forward: Duration::from_secs(10),
                min_backward: Duration::from_nanos(-1),
            },
        )
        .unwrap();
    clock.set_ros_time_override(true); // no message yet: still system time, no change
    assert!(log.lock().unwrap().is_empty());
    clock.on_clock_message(Time::ros(100 * S)); // activation
    clock.on_clock_message(Time::ros(101 * S)); // small forward step: below threshold
    clock.on_clock_message(Time::ros(200 * S)); // forward jump >= 10 s
    clock.on_clock_message(Time::ros(150 * S)); // backward jump
    clock.set_ros_time_override(false); // deactivation
    let log = log.lock().unwrap();
    let kinds: Vec<(&str, ClockChange, i64)> = log
        .iter()
        .map(|(k, _, j)| (*k, j.clock_change, j.delta.as_nanos()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("pre", ClockChange::RosTimeActivated, -900 * S),
            ("post", ClockChange::RosTimeActivated, -900 * S),
            ("pre", ClockChange::RosTimeNoChange, 99 * S),
            ("post", ClockChange::RosTimeNoChange, 99 * S),
            ("pre", ClockChange::RosTimeNoChange, -50 * S),
            ("post", ClockChange::RosTimeNoChange, -50 * S),
            ("pre", ClockChange::RosTimeDeactivated, 850 * S),
            ("post", ClockChange::RosTimeDeactivated, 850 * S),
        ]
    );
    // Pre handlers saw the old time, post handlers the new one.
    assert_eq!(log[0].1, Time::ros(1_000 * S));
    assert_eq!(log[1].1, Time::ros(100 * S));
    assert_eq!(log[4].1, Time::ros(200 * S));
    assert_eq!(log[5].1, Time::ros(150 * S));
}

#[test]
fn ros_clock_sleep_waits_for_clock_messages() {
    let system = VirtualTimeSource::new(1_000 * S);
    let steady = VirtualTimeSource::new(0);
    let clock = Arc::new(RosClock::with_sources(
        system.as_source(),
        steady.as_source(),
    ));
    clock.set_ros_time_override(true);
    clock.on_clock_message(Time::ros(0));
    let c = Arc::clone(&clock);
    let h = thread::spawn(move || c.sleep_until(Time::ros(20 * MS), Duration::MAX));
    assert!(steady.wait_for_waiters(1, GUARD));
    clock.on_clock_message(Time::ros(10 * MS));
    system.advance(Duration::from_secs(100)); // system time is irrelevant now
    assert!(steady.wait_for_waiters(1, GUARD));
    clock.on_clock_message(Time::ros(20 * MS));
    assert!(h.join().unwrap());
    // Backward jump interrupts a sleeper.
    let c = Arc::clone(&clock);
    let h = thread::spawn(move || c.sleep_until(Time::ros(S), Duration::MAX));
    assert!(steady.wait_for_waiters(1, GUARD));
    clock.on_clock_message(Time::ros(0));
    assert!(!h.join().unwrap());
}

#[test]
fn rate_keeps_phase_and_resets_after_falling_behind() {
    let src = VirtualTimeSource::auto_advancing(0);
    let clock: Arc<dyn Clock> = Arc::new(SteadyClock::with_source(src.as_source()));
    let mut rate = Rate::from_hz(Arc::clone(&clock), 100.0).unwrap();
    assert_eq!(rate.period(), Duration::from_millis(10));
    for k in 1..=5 {
        assert!(rate.sleep(Duration::from_secs(1)));
        assert_eq!(src.now_nanos(), k * 10 * MS);
    }
    src.advance(Duration::from_millis(3)); // work inside the cycle: no drift
    assert!(rate.sleep(Duration::from_secs(1)));
    assert_eq!(src.now_nanos(), 60 * MS);
    src.advance(Duration::from_millis(35)); // fell behind by more than a period
    assert!(rate.sleep(Duration::from_secs(1)));
    assert_eq!(src.now_nanos(), 95 * MS);
    assert_eq!(rate.next_deadline(), Time::steady(105 * MS));
    assert!(Rate::new(clock, Duration::ZERO).is_err());
}

#[test]
fn rate_on_paused_player_clock_does_not_tick() {
    let src = VirtualTimeSource::auto_advancing(0);
    let clock = Arc::new(
        TimeControllerClock::with_source(
            Time::ros(0),
            TimeControllerConfig::default(), // starts paused
            src.as_source(),
        )
        .unwrap(),
    );
    let mut rate = Rate::new(clock.clone(), Duration::from_millis(10)).unwrap();
    assert!(!rate.sleep(Duration::from_millis(50)));
    assert_eq!(clock.now(), Time::ros(0));
    clock.resume().unwrap();
    assert!(rate.sleep(Duration::from_millis(50)));
    assert_eq!(clock.now(), Time::ros(10 * MS));
}

#[test]
fn timer_on_sim_time_that_pauses() {
    let steady = VirtualTimeSource::new(0);
    let clock = Arc::new(SimTimeClock::with_source(
        SimTimeConfig::default(),
        steady.as_source(),
    ));
    clock.on_clock_message(Time::ros(0));
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut timer = Timer::spawn(clock.clone(), Duration::from_millis(10), move |t| {
        tx.send(t).unwrap();
    })
    .unwrap();
    // Each /clock sample crossing a period boundary fires the timer once.
    for k in 1..=3 {
        assert!(steady.wait_for_waiters(1, GUARD));
        clock.on_clock_message(Time::ros(k * 10 * MS));
        assert_eq!(rx.recv().unwrap(), Time::ros(k * 10 * MS));
    }
    // Source paused: steady time passes (the timer's sleeps time out), no tick.
    for _ in 0..3 {
        assert!(steady.wait_for_waiters(1, GUARD));
        steady.advance_to_next_deadline();
    }
    assert!(steady.wait_for_waiters(1, GUARD));
    assert!(rx.try_recv().is_err());
    // Resumed.
    clock.on_clock_message(Time::ros(40 * MS));
    assert_eq!(rx.recv().unwrap(), Time::ros(40 * MS));
    timer.cancel();
    assert!(!timer.is_active());
}

#[test]
fn timer_on_time_controller_with_rate() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(
        TimeControllerClock::with_source(
            Time::ros(0),
            TimeControllerConfig {
                start_paused: false,
                rate: PlaybackRate::new(2.0).unwrap(),
                ..TimeControllerConfig::default()
            },
            src.as_source(),
        )
        .unwrap(),
    );
    let (tx, rx) = crossbeam_channel::unbounded();
    let timer = Timer::spawn(clock.clone(), Duration::from_millis(100), move |t| {
        tx.send(t).unwrap();
    })
    .unwrap();
    for k in 1..=3 {
        assert!(src.wait_for_waiters(1, GUARD));
        // 100 ms of ROS time at rate 2 is 50 ms of steady time.
        assert_eq!(src.advance_to_next_deadline(), Some(k * 50 * MS));
        assert_eq!(rx.recv().unwrap(), Time::ros(k * 100 * MS));
    }
    drop(timer); // cancels and joins
}

/// Sets the system clock to the time it shows (a step of a few microseconds at most) and checks
/// that a real `SystemClock` calls its jump handler. It changes the machine's clock, so it runs
/// only when asked: `ROSBAG2_RS_TEST_STEP_WALL_CLOCK=1` (needs CAP_SYS_TIME, e.g. root).
#[test]
fn a_step_of_the_system_clock_calls_the_jump_handlers() {
    if std::env::var_os("ROSBAG2_RS_TEST_STEP_WALL_CLOCK").is_none() {
        eprintln!("skipped: set ROSBAG2_RS_TEST_STEP_WALL_CLOCK=1 to let it set the system clock");
        return;
    }
    let clock = SystemClock::new();
    let (tx, rx) = crossbeam_channel::unbounded();
    let _handle = clock
        .create_jump_callback(
            None,
            Some(Box::new(move |jump: &TimeJump| tx.send(*jump).unwrap())),
            JumpThreshold {
                on_clock_change: false,
                min_forward: Duration::from_nanos(1),
                min_backward: Duration::from_nanos(-1),
            },
        )
        .unwrap();
    // The watching thread arms its timer before it reads the offset; give it a moment.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and out pointer; setting the clock needs CAP_SYS_TIME.
    let set = unsafe {
        libc::clock_gettime(libc::CLOCK_REALTIME, &mut now);
        libc::clock_settime(libc::CLOCK_REALTIME, &now)
    };
    assert_eq!(set, 0, "clock_settime: {}", std::io::Error::last_os_error());
    let jump = rx.recv_timeout(GUARD).expect("no jump reported");
    assert_eq!(jump.clock_change, ClockChange::SystemTimeNoChange);
    assert!(jump.delta.as_nanos().abs() < 10 * MS, "{jump:?}");
}
