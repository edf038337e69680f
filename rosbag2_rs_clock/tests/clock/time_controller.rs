//! Ports of rosbag2's `test_time_controller_clock.cpp`, on a virtual steady source.

use rosbag2_rs_clock::{
    Clock, ClockError, Duration, JumpThreshold, PlayerClock, Time, TimeControllerClock,
    TimeControllerConfig, TimeJump, VirtualTimeSource,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// Recorded jump-handler calls: (which handler, time it saw, jump).
type JumpLog = Arc<Mutex<Vec<(String, Time, TimeJump)>>>;
const S: i64 = 1_000_000_000;
const GUARD: std::time::Duration = std::time::Duration::from_secs(30);

fn running(start: i64, src: &VirtualTimeSource) -> TimeControllerClock {
    let cfg = TimeControllerConfig {
        start_paused: false,
        ..TimeControllerConfig::default()
    };
    TimeControllerClock::with_source(Time::ros(start), cfg, src.as_source()).unwrap()
}

#[test]
fn steadytime_precision() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    assert_eq!(clock.now(), Time::ros(0));
    src.set(10 * S);
    assert_eq!(clock.now().nanos(), 10 * S);
    src.set(100 * S);
    assert_eq!(clock.now().nanos(), 100 * S);
    let near_limit = 1i64 << 61;
    src.set(near_limit);
    assert_eq!(clock.now().nanos(), near_limit);
    // rosbag2 loses exact equality here (double * int); the integer mapping does not.
    let over_limit = (1i64 << 61) + 1;
    src.set(over_limit);
    assert!((clock.now().nanos() - over_limit).abs() < 10);
    assert_eq!(clock.now().nanos(), over_limit);
}

#[test]
fn steadytime_precision_with_rate() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    clock.set_rate(2.5).unwrap();
    src.set(1i64 << 61);
    assert_eq!(clock.now().nanos(), (1i64 << 61) / 2 * 5);
}

#[test]
fn starts_paused_by_default() {
    let src = VirtualTimeSource::new(0);
    let clock = TimeControllerClock::with_source(
        Time::ros(7),
        TimeControllerConfig::default(),
        src.as_source(),
    )
    .unwrap();
    assert!(clock.is_paused());
    src.advance(Duration::from_secs(5));
    assert_eq!(clock.now(), Time::ros(7));
    clock.resume().unwrap();
    src.advance(Duration::from_secs(1));
    assert_eq!(clock.now(), Time::ros(7 + S));
}

#[test]
fn nonzero_start_time() {
    let src = VirtualTimeSource::new(0);
    let start = 1_234_567_890;
    let clock = running(start, &src);
    clock.set_rate(1.0).unwrap();
    assert_eq!(clock.now().nanos(), start);
    src.set(S);
    assert_eq!(clock.now().nanos(), start + S);
}

#[test]
fn fast_rate() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    clock.set_rate(2.5).unwrap();
    assert_eq!(clock.now().nanos(), 0);
    src.set(3 * S);
    assert_eq!(clock.now().nanos(), 7_500_000_000);
}

#[test]
fn slow_rate() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    clock.set_rate(0.4).unwrap();
    assert_eq!(clock.now().nanos(), 0);
    src.set(12 * S);
    assert_eq!(clock.now().nanos(), 4_800_000_000);
}

#[test]
fn invalid_rate() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    for r in [-5.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(
            matches!(clock.set_rate(r), Err(ClockError::InvalidRate(_))),
            "{r}"
        );
    }
    assert_eq!(clock.get_rate(), 1.0);
    assert!(TimeControllerClock::with_source(
        Time::system(0),
        TimeControllerConfig::default(),
        src.as_source()
    )
    .is_err());
}

#[test]
fn is_paused() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    assert!(!clock.is_paused());
    clock.pause().unwrap();
    assert!(clock.is_paused());
    clock.resume().unwrap();
    assert!(!clock.is_paused());
}

#[test]
fn unpaused_sleep_returns_true() {
    // Run twice to check that it also works after pause and resume.
    let src = VirtualTimeSource::auto_advancing(0);
    let clock = running(0, &src);
    for i in 0..2 {
        clock.resume().unwrap();
        let ros_start = clock.now();
        let steady_start = src.now_nanos();
        let until = ros_start.checked_add(Duration::from_secs(1)).unwrap();
        assert!(clock.sleep_until(until, Duration::from_secs(2)));
        assert_eq!(clock.now(), until);
        // Slept exactly the steady time needed, not more.
        assert_eq!(src.now_nanos() - steady_start, S);
        clock.pause().unwrap();
        if i == 0 {
            src.advance(Duration::from_millis(200));
        }
    }
}

#[test]
fn sleep_with_rate_takes_scaled_steady_time() {
    let src = VirtualTimeSource::auto_advancing(0);
    let clock = running(0, &src);
    clock.set_rate(4.0).unwrap();
    assert!(clock.sleep_until(Time::ros(2 * S), Duration::from_secs(10)));
    assert_eq!(src.now_nanos(), S / 2);
    assert_eq!(
        clock.ros_to_steady(Time::ros(3 * S)),
        Some(Time::steady(S / 2 + S / 4))
    );
}

#[test]
fn sleep_times_out() {
    let src = VirtualTimeSource::auto_advancing(0);
    let clock = running(0, &src);
    assert!(!clock.sleep_until(Time::ros(10 * S), Duration::from_millis(10)));
    assert_eq!(src.now_nanos(), 10_000_000);
    assert!(clock.sleep_until(Time::ros(-5), Duration::ZERO));
    assert!(!clock.sleep_until(Time::steady(0), Duration::ZERO));
}

#[test]
fn paused_sleep_returns_false_quickly() {
    let src = VirtualTimeSource::auto_advancing(0);
    let clock = running(0, &src);
    clock.pause().unwrap();
    let until = clock.now().checked_add(Duration::from_secs(10)).unwrap();
    assert!(!clock.sleep_until(until, Duration::from_millis(100)));
    // Waited only the real-time timeout, not the 10 s.
    assert_eq!(src.now_nanos(), 100_000_000);
}

#[test]
fn paused_now_always_same() {
    let src = VirtualTimeSource::auto_advancing(0);
    let clock = running(0, &src);
    src.advance(Duration::from_secs(3));
    clock.pause().unwrap();
    let now_start = clock.now();
    assert_eq!(now_start, clock.now());
    clock.sleep_until(
        now_start.checked_add(Duration::from_secs(1)).unwrap(),
        Duration::from_secs(1),
    );
    assert_eq!(now_start, clock.now());
    clock.resume().unwrap();
    src.advance(Duration::from_nanos(1));
    assert_ne!(now_start, clock.now());
}

#[test]
fn interrupted_sleep_returns_false_immediately() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(running(0, &src));
    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(10 * S), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    assert!(clock.is_sleeping());
    clock.pause().unwrap(); // interrupts the long sleep
    assert!(!sleeper.join().unwrap());
    assert_eq!(src.now_nanos(), 0, "no virtual time had to pass");
    assert!(!clock.is_sleeping());
}

#[test]
fn jump_interrupts_sleeper() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(running(0, &src));
    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(10 * S), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    clock.jump(Time::ros(20 * S)).unwrap();
    assert!(!sleeper.join().unwrap());
}

#[test]
fn wakeup_sleep_returns_immediately() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(running(0, &src));
    clock.pause().unwrap();
    assert!(!clock.is_sleeping());
    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || {
        let until = c.now().checked_add(Duration::from_secs(10)).unwrap();
        c.sleep_until(until, Duration::from_secs(30))
    });
    assert!(src.wait_for_waiters(1, GUARD));
    assert!(clock.is_sleeping());
    clock.wakeup();
    assert!(!sleeper.join().unwrap());
    assert!(!clock.is_sleeping());
    assert_eq!(
        src.now_nanos(),
        0,
        "returned without waiting for the 30 s timeout"
    );
}

#[test]
fn resume_wakes_paused_sleeper_with_false() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(running(0, &src));
    clock.pause().unwrap();
    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(S), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    clock.resume().unwrap();
    assert!(!sleeper.join().unwrap());
}

#[test]
fn rate_change_keeps_sleeper_asleep_with_new_deadline() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(running(0, &src));
    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(10 * S), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    assert_eq!(src.next_deadline(), Some(10 * S));
    src.advance(Duration::from_secs(2)); // ROS 2 s
    clock.set_rate(2.0).unwrap(); // 8 s of ROS time left -> 4 s of steady time
                                  // The sleeper re-registers with the new deadline.
    let deadline = loop {
        assert!(src.wait_for_waiters(1, GUARD));
        if let Some(d) = src.next_deadline() {
            if d != 10 * S {
                break d;
            }
        }
        thread::yield_now();
    };
    assert_eq!(deadline, 6 * S);
    src.advance_to_next_deadline();
    assert!(sleeper.join().unwrap());
    assert_eq!(clock.now(), Time::ros(10 * S));
}

#[test]
fn spurious_wakeups_do_not_end_sleep() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(running(0, &src));
    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(S), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    for _ in 0..3 {
        // Time moves, but not to the deadline: every poke is a spurious wake-up.
        src.advance(Duration::from_millis(100));
        clock.set_clock_publish_frequency(0.0).unwrap();
    }
    assert!(src.wait_for_waiters(1, GUARD));
    src.advance_to_next_deadline();
    assert!(sleeper.join().unwrap());
    assert_eq!(src.now_nanos(), S);
}

#[test]
fn resumes_at_correct_ros_time() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    clock.pause().unwrap();
    src.set(S);
    clock.resume().unwrap();
    assert_eq!(clock.now().nanos(), 0);
    src.set(2 * S);
    assert_eq!(clock.now().nanos(), S);
    clock.pause().unwrap();
    src.set(10 * S);
    clock.resume().unwrap();
    assert_eq!(clock.now().nanos(), S);
}

#[test]
fn change_rate() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    let mut expected = 0;
    src.advance(Duration::from_secs(1));
    expected += S;
    assert_eq!(clock.now().nanos(), expected);

    clock.set_rate(2.0).unwrap();
    src.advance(Duration::from_secs(1));
    expected += 2 * S;
    assert_eq!(clock.now().nanos(), expected);

    clock.pause().unwrap();
    clock.set_rate(0.5).unwrap(); // rate change while paused
    src.advance(Duration::from_secs(1));
    assert_eq!(clock.now().nanos(), expected);

    clock.resume().unwrap();
    src.advance(Duration::from_secs(2));
    expected += S;
    assert_eq!(clock.now().nanos(), expected);
    assert_eq!(clock.get_rate(), 0.5);
}

#[test]
fn jump() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    let mut expected = 10 * S;
    clock.jump(Time::ros(expected)).unwrap();
    assert_eq!(clock.now().nanos(), expected);

    src.advance(Duration::from_secs(10));
    expected += 10 * S;
    assert_eq!(clock.now().nanos(), expected);

    clock.jump(Time::ros(100 * S)).unwrap();
    src.advance(Duration::from_secs(1));
    assert_eq!(clock.now().nanos(), 101 * S);

    clock.jump(Time::ros(50 * S)).unwrap(); // backward
    src.advance(Duration::from_secs(2));
    assert_eq!(clock.now().nanos(), 52 * S);

    assert!(clock.jump(Time::steady(0)).is_err());
}

#[test]
fn jump_while_paused_stays_paused() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    clock.pause().unwrap();
    clock.jump(Time::ros(5 * S)).unwrap();
    src.advance(Duration::from_secs(3));
    assert!(clock.is_paused());
    assert_eq!(clock.now().nanos(), 5 * S);
}

fn jump_with_rate(start: i64, offset: i64) {
    let src = VirtualTimeSource::new(2 * S);
    let clock = running(start, &src);
    let rate = 1.5;
    clock.set_rate(rate).unwrap();
    let target = start + offset;
    clock.jump(Time::ros(target)).unwrap();
    src.set(7 * S);
    // The jump itself ignores the rate; time after it runs at the rate.
    let expected = target + (rate * (5 * S) as f64) as i64;
    assert_eq!(clock.now().nanos(), expected);
}

#[test]
fn jump_forward_with_playback_rate() {
    jump_with_rate(S, 3 * S);
}

#[test]
fn jump_backward_with_playback_rate() {
    jump_with_rate(5 * S, -3 * S);
}

#[test]
fn jump_fires_callbacks_pre_before_new_time_is_visible() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(running(0, &src));
    src.advance(Duration::from_secs(4));
    let seen: JumpLog = Arc::default();
    let (c1, s1) = (Arc::clone(&clock), Arc::clone(&seen));
    let (c2, s2) = (Arc::clone(&clock), Arc::clone(&seen));
    let handle = clock
        .create_jump_callback(
            Some(Box::new(move |j| {
                s1.lock().unwrap().push(("pre".into(), c1.now(), *j))
            })),
            Some(Box::new(move |j| {
                s2.lock().unwrap().push(("post".into(), c2.now(), *j))
            })),
            JumpThreshold::any(),
        )
        .unwrap();
    clock.jump(Time::ros(S)).unwrap();
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].0, "pre");
        assert_eq!(seen[0].1, Time::ros(4 * S), "pre sees the old time");
        assert_eq!(seen[0].2.delta, Duration::from_secs(-3));
        assert_eq!(seen[1].0, "post");
        assert_eq!(seen[1].1, Time::ros(S), "post sees the new time");
    }
    // Threshold filtering: only backward jumps of at least 10 s.
    drop(handle);
    let hits = Arc::new(AtomicBool::new(false));
    let h = Arc::clone(&hits);
    let _handle = clock
        .create_jump_callback(
            None,
            Some(Box::new(move |_| h.store(true, Ordering::SeqCst))),
            JumpThreshold {
                on_clock_change: false,
                min_forward: Duration::ZERO,
                min_backward: Duration::from_secs(-10),
            },
        )
        .unwrap();
    clock.jump(Time::ros(100 * S)).unwrap();
    clock.jump(Time::ros(95 * S)).unwrap();
    assert!(!hits.load(Ordering::SeqCst));
    clock.jump(Time::ros(80 * S)).unwrap();
    assert!(hits.load(Ordering::SeqCst));
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "dropped handle is unregistered"
    );
}

#[test]
fn pre_jump_completes_before_a_reader_sees_new_time() {
    // A reader polling now() on another thread never observes the new time
    // while the pre-jump callback is still running.
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(running(0, &src));
    clock.pause().unwrap();
    let in_pre = Arc::new(AtomicBool::new(false));
    let (tx_entered, rx_entered) = crossbeam_channel::bounded::<()>(0);
    let (tx_release, rx_release) = crossbeam_channel::bounded::<()>(0);
    let flag = Arc::clone(&in_pre);
    let _h = clock
        .create_jump_callback(
            Some(Box::new(move |_| {
                flag.store(true, Ordering::SeqCst);
                tx_entered.send(()).unwrap();
                rx_release.recv().unwrap();
                flag.store(false, Ordering::SeqCst);
            })),
            None,
            JumpThreshold::any(),
        )
        .unwrap();
    let c = Arc::clone(&clock);
    let jumper = thread::spawn(move || c.jump(Time::ros(42 * S)).unwrap());
    rx_entered.recv().unwrap();
    for _ in 0..1000 {
        assert!(in_pre.load(Ordering::SeqCst));
        assert_eq!(clock.now(), Time::ros(0));
    }
    tx_release.send(()).unwrap();
    jumper.join().unwrap();
    assert_eq!(clock.now(), Time::ros(42 * S));
}

#[test]
fn invalid_jump_threshold_is_rejected() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    let bad = JumpThreshold {
        on_clock_change: false,
        min_forward: Duration::from_nanos(-1),
        min_backward: Duration::ZERO,
    };
    assert!(matches!(
        clock.create_jump_callback(None, None, bad),
        Err(ClockError::InvalidThreshold(_))
    ));
}

#[test]
fn clock_publish_schedule() {
    let src = VirtualTimeSource::auto_advancing(0);
    let clock = running(0, &src);
    assert_eq!(clock.get_clock_publish_frequency(), 0.0);
    assert_eq!(clock.take_clock_publish_due(), None);
    assert_eq!(clock.wait_clock_publish_due(Duration::from_millis(5)), None);
    assert!(clock.set_clock_publish_frequency(f64::NAN).is_err());
    clock.set_clock_publish_frequency(100.0).unwrap();
    assert_eq!(clock.get_clock_publish_frequency(), 100.0);
    // Due at once, then every 10 ms of steady time.
    let t0 = clock.take_clock_publish_due().unwrap();
    assert_eq!(clock.take_clock_publish_due(), None);
    let t1 = clock
        .wait_clock_publish_due(Duration::from_secs(1))
        .unwrap();
    assert_eq!(t1.nanos() - t0.nanos(), 10_000_000);
    // Paused: still published at the frequency, with a constant time.
    clock.pause().unwrap();
    let p0 = clock
        .wait_clock_publish_due(Duration::from_secs(1))
        .unwrap();
    let p1 = clock
        .wait_clock_publish_due(Duration::from_secs(1))
        .unwrap();
    assert_eq!(p0, p1);
    // A jump makes a message due immediately with the new time.
    let before = src.now_nanos();
    clock.jump(Time::ros(77 * S)).unwrap();
    assert_eq!(
        clock.wait_clock_publish_due(Duration::from_secs(1)),
        Some(Time::ros(77 * S))
    );
    assert_eq!(src.now_nanos(), before);
    clock.set_clock_publish_frequency(0.0).unwrap();
    assert_eq!(
        clock.wait_clock_publish_due(Duration::from_millis(50)),
        None
    );
}

#[test]
fn publisher_count_warning() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    assert!(!clock.set_clock_publisher_count(1));
    assert!(clock.set_clock_publisher_count(2));
    clock.on_clock_message(Time::ros(5)); // ignored: this clock is the source
    assert_eq!(clock.now(), Time::ros(0));
    assert!(!clock.uses_sim_time());
}

#[test]
fn no_drift_over_many_hours_with_many_reanchors() {
    let src = VirtualTimeSource::new(0);
    let clock = running(0, &src);
    clock.set_rate(0.4).unwrap();
    let mut expected: i128 = 0;
    // 10 000 cycles of 1 s at 0.4 and 1 s at 2.5, with a pause in between: ~5.5 hours.
    for _ in 0..10_000 {
        clock.set_rate(0.4).unwrap();
        src.advance(Duration::from_secs(1));
        expected += 400_000_000;
        clock.pause().unwrap();
        src.advance(Duration::from_millis(1));
        clock.resume().unwrap();
        clock.set_rate(2.5).unwrap();
        src.advance(Duration::from_secs(1));
        expected += 2_500_000_000;
    }
    let err = (clock.now().nanos() as i128 - expected).abs();
    // Each re-anchor may floor at most 1 ns: 0.4 is not exact in binary.
    assert!(err <= 10_000, "drift {err} ns");
}
