//! SimTimeClock: sampled `/clock` sources at 10 Hz and 100 Hz with rate
//! changes, pauses and a backward jump, on a virtual steady source.
//!
//! Checks the error bound of the playback-time design ("at most the amount of
//! time represented by one clock sample"), that time never goes backwards
//! because of extrapolation, and that the watchdog pauses time.

use rosbag2_rs_clock::{
    Clock, ClockError, Duration, JumpThreshold, PlayerClock, SimTimeClock, SimTimeConfig, Time,
    TimeJump, VirtualTimeSource,
};
use std::sync::{Arc, Mutex};
use std::thread;

/// Recorded jump-handler calls: (which handler, time it saw, jump).
type JumpLog = Arc<Mutex<Vec<(&'static str, i64, TimeJump)>>>;
const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;
const GUARD: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(Debug, Clone, Copy)]
enum Event {
    /// Source real-time factor changes.
    Rate(f64),
    /// Source stops publishing (simulator paused / node stalled); its time stops too.
    Pause,
    /// Source resumes publishing and time.
    Resume,
    /// Source time jumps by this many ns (negative: backward).
    JumpBy(i64),
}

struct Scenario {
    period: i64,
    tick: i64,
    end: i64,
    /// Max arrival latency (deterministic pseudo-random in [0, latency]).
    latency: i64,
    events: Vec<(i64, Event)>,
}

/// One published sample: value, publish time and arrival time.
#[derive(Debug, Clone, Copy)]
struct Sample {
    value: i64,
    arrival: i64,
    /// ROS time since the previous sample (0 for the first / after a jump).
    step: i64,
}

struct Trajectory {
    /// True source time at each tick.
    truth: Vec<i64>,
    samples: Vec<Sample>,
    /// Ticks at which a backward jump happens.
    jump_ticks: Vec<usize>,
    max_rate: f64,
}

fn build(sc: &Scenario) -> Trajectory {
    let mut t: i64 = 1_000 * S;
    let mut rate = 1.0f64;
    let mut max_rate = rate;
    let mut running = true;
    let mut truth = Vec::new();
    let mut samples: Vec<Sample> = Vec::new();
    let mut jump_ticks = Vec::new();
    let mut lcg: u64 = 12345;
    let mut last_value: Option<i64> = None;
    let n = (sc.end / sc.tick) as usize;
    for i in 0..n {
        let s = i as i64 * sc.tick;
        for (at, ev) in &sc.events {
            if *at == s {
                match *ev {
                    Event::Rate(r) => {
                        rate = r;
                        max_rate = max_rate.max(r);
                    }
                    Event::Pause => running = false,
                    Event::Resume => running = true,
                    Event::JumpBy(d) => {
                        t += d;
                        if d < 0 {
                            jump_ticks.push(i);
                        }
                        last_value = None;
                    }
                }
            }
        }
        if i > 0 && running {
            t += (rate * sc.tick as f64).round() as i64;
        }
        truth.push(t);
        if running && s % sc.period == 0 {
            lcg = lcg
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lat = if sc.latency > 0 {
                ((lcg >> 33) as i64 % (sc.latency / sc.tick + 1)) * sc.tick
            } else {
                0
            };
            samples.push(Sample {
                value: t,
                arrival: s + lat,
                step: last_value.map_or(0, |v| (t - v).max(0)),
            });
            last_value = Some(t);
        }
    }
    samples.sort_by_key(|x| x.arrival);
    Trajectory {
        truth,
        samples,
        jump_ticks,
        max_rate,
    }
}

#[derive(Debug, Default)]
struct Report {
    max_ahead: i64,
    max_behind: i64,
    sum_abs_err: i128,
    ticks: i64,
    watchdog_ticks: i64,
}

/// Replay the trajectory into a clock and check the invariants at every tick.
fn run(sc: &Scenario, extrapolate: bool) -> Report {
    let traj = build(sc);
    let src = VirtualTimeSource::new(0);
    let cfg = SimTimeConfig {
        extrapolate,
        ..SimTimeConfig::default()
    };
    let clock = SimTimeClock::with_source(cfg, src.as_source());
    let mut next_sample = 0;
    let mut prev: Option<i64> = None;
    let mut jump_pending = false;
    let mut report = Report::default();
    let latency_slack = (traj.max_rate * sc.latency as f64).ceil() as i64;
    for (i, &truth) in traj.truth.iter().enumerate() {
        let s = i as i64 * sc.tick;
        src.set(s);
        if traj.jump_ticks.contains(&i) {
            jump_pending = true;
        }
        let mut jumped = false;
        while next_sample < traj.samples.len() && traj.samples[next_sample].arrival <= s {
            let smp = traj.samples[next_sample];
            if jump_pending && smp.step == 0 {
                jump_pending = false;
                jumped = true;
            }
            clock.on_clock_message(Time::ros(smp.value));
            next_sample += 1;
        }
        if next_sample == 0 {
            continue; // no time yet
        }
        let now = clock.now().nanos();
        // Never backwards, except at a backward jump of the source.
        if let Some(p) = prev {
            if !jumped {
                assert!(now >= p, "tick {i}: time went back {p} -> {now}");
            }
        }
        prev = Some(now);
        // Error bound: one sample step. Behind: the step of the last sample
        // received or of the next one. Ahead: extrapolation adds at most the
        // step of one sample and, as time never goes back, that lead can only
        // shrink as the source catches up, so take the largest step among the
        // last three samples and those received within the last second.
        let last = next_sample - 1;
        let recent = |from: usize, to: usize| {
            traj.samples[from..to.min(traj.samples.len())]
                .iter()
                .map(|x| x.step)
                .max()
                .unwrap_or(0)
        };
        let behind_bound = recent(last, last + 2) + latency_slack + 1;
        let first_recent = traj.samples[..=last]
            .iter()
            .position(|x| x.arrival >= s - S)
            .unwrap_or(last)
            .min(last.saturating_sub(2));
        let ahead_bound = recent(first_recent, last + 1) + latency_slack + 1;
        if jump_pending {
            continue; // the source jumped but no sample told us yet
        }
        let err = now - truth;
        assert!(
            err <= ahead_bound && -err <= behind_bound,
            "tick {i} (steady {} ms): reported {now}, true {truth}, error {err}, \
             bounds ahead {ahead_bound} behind {behind_bound}",
            s / MS
        );
        report.max_ahead = report.max_ahead.max(err);
        report.max_behind = report.max_behind.max(-err);
        report.sum_abs_err += err.unsigned_abs() as i128;
        report.ticks += 1;
        if clock.is_paused() {
            report.watchdog_ticks += 1;
        }
    }
    eprintln!(
        "period {} ms, extrapolate {extrapolate}: max ahead {} us, max behind {} us, mean |err| {} us, watchdog ticks {}",
        sc.period / MS,
        report.max_ahead / 1000,
        report.max_behind / 1000,
        report.sum_abs_err / report.ticks.max(1) as i128 / 1000,
        report.watchdog_ticks
    );
    report
}

fn scenario(period: i64, tick: i64) -> Scenario {
    // 0-3 s rate 1, 3-6 s rate 2.5, 6-9 s rate 0.4, 9-11 s paused,
    // 11-13 s rate 1, jump back 5 s at 13 s, run to 16 s.
    Scenario {
        period,
        tick,
        end: 16 * S,
        latency: period / 20,
        events: vec![
            (3 * S, Event::Rate(2.5)),
            (6 * S, Event::Rate(0.4)),
            (9 * S, Event::Pause),
            (11 * S, Event::Resume),
            (11 * S, Event::Rate(1.0)),
            (13 * S, Event::JumpBy(-5 * S)),
        ],
    }
}

#[test]
fn error_bound_10hz_without_extrapolation() {
    let r = run(&scenario(100 * MS, MS), false);
    assert_eq!(r.max_ahead, 0, "latest sample is never ahead of the source");
    assert_eq!(r.watchdog_ticks, 0, "no watchdog without extrapolation");
}

#[test]
fn error_bound_10hz_with_extrapolation() {
    let with = run(&scenario(100 * MS, MS), true);
    let without = run(&scenario(100 * MS, MS), false);
    // The watchdog paused time during the 2 s source pause.
    assert!(with.watchdog_ticks >= 1800, "{with:?}");
    // Extrapolation cuts the mean error several-fold.
    let mean_with = with.sum_abs_err / with.ticks as i128;
    let mean_without = without.sum_abs_err / without.ticks as i128;
    assert!(
        mean_with * 3 < mean_without,
        "with {mean_with} ns, without {mean_without} ns"
    );
}

#[test]
fn error_bound_100hz_without_extrapolation() {
    run(&scenario(10 * MS, MS / 10), false);
}

#[test]
fn error_bound_100hz_with_extrapolation() {
    let with = run(&scenario(10 * MS, MS / 10), true);
    let without = run(&scenario(10 * MS, MS / 10), false);
    assert!(with.watchdog_ticks >= 19_000, "{with:?}");
    assert!(with.sum_abs_err * 3 < without.sum_abs_err);
}

fn feed(clock: &SimTimeClock, src: &VirtualTimeSource, steady: i64, ros: i64) {
    src.set(steady);
    clock.on_clock_message(Time::ros(ros));
}

#[test]
fn no_time_before_first_message_then_latest_value() {
    let src = VirtualTimeSource::new(0);
    let clock = SimTimeClock::with_source(SimTimeConfig::default(), src.as_source());
    assert!(!clock.has_time());
    assert_eq!(clock.now(), Time::ros(0));
    feed(&clock, &src, 0, 5 * S);
    feed(&clock, &src, 100 * MS, 5 * S + 100 * MS);
    src.set(150 * MS);
    assert_eq!(clock.now(), Time::ros(5 * S + 100 * MS));
    assert!(clock.uses_sim_time());
    assert_eq!(clock.ros_to_steady(Time::ros(6 * S)), None);
    assert!(!clock.is_paused());
}

#[test]
fn extrapolation_interpolates_caps_and_watchdog_pauses() {
    let src = VirtualTimeSource::new(0);
    let cfg = SimTimeConfig {
        extrapolate: true,
        ..SimTimeConfig::default()
    };
    let clock = SimTimeClock::with_source(cfg, src.as_source());
    // 10 Hz source running at 2x.
    for k in 0..5 {
        feed(&clock, &src, k * 100 * MS, k * 200 * MS);
    }
    assert!((clock.get_rate() - 2.0).abs() < 1e-9);
    src.set(450 * MS);
    assert_eq!(clock.now().nanos(), 900 * MS, "interpolated at rate 2");
    assert_eq!(
        clock.ros_to_steady(Time::ros(1_000 * MS)),
        Some(Time::steady(500 * MS))
    );
    // Next sample is late: time stops at one step (200 ms ROS) past the last sample.
    src.set(520 * MS);
    assert_eq!(clock.now().nanos(), 1_000 * MS);
    assert!(!clock.is_paused());
    // Overdue (> 1.5 periods): the watchdog pauses time.
    src.set(551 * MS);
    assert!(clock.is_paused());
    src.set(5 * S);
    assert_eq!(clock.now().nanos(), 1_000 * MS);
    // The source resumes (it had paused): restart estimation, never go back.
    feed(&clock, &src, 5 * S, 900 * MS);
    assert!(!clock.is_paused());
    assert_eq!(clock.now().nanos(), 1_000 * MS, "held, not backwards");
    feed(&clock, &src, 5 * S + 100 * MS, 1_000 * MS);
    src.set(5 * S + 150 * MS);
    assert_eq!(clock.now().nanos(), 1_050 * MS);
}

#[test]
fn control_is_refused() {
    let src = VirtualTimeSource::new(0);
    let clock = SimTimeClock::with_source(SimTimeConfig::default(), src.as_source());
    assert_eq!(clock.pause(), Err(ClockError::SimTimeReadOnly("pause")));
    assert_eq!(clock.resume(), Err(ClockError::SimTimeReadOnly("resume")));
    assert_eq!(
        clock.set_rate(2.0),
        Err(ClockError::SimTimeReadOnly("set_rate"))
    );
    assert_eq!(
        clock.jump(Time::ros(1)),
        Err(ClockError::SimTimeReadOnly("jump"))
    );
    assert!(clock.set_clock_publish_frequency(10.0).is_err());
    assert!(clock.set_clock_publish_frequency(0.0).is_ok());
    assert_eq!(clock.get_clock_publish_frequency(), 0.0);
    assert_eq!(clock.take_clock_publish_due(), None);
    assert_eq!(clock.get_rate(), 1.0);
}

#[test]
fn multiple_clock_publishers_are_detected() {
    let src = VirtualTimeSource::new(0);
    let clock = SimTimeClock::with_source(SimTimeConfig::default(), src.as_source());
    assert!(!clock.set_clock_publisher_count(1));
    assert!(clock.set_clock_publisher_count(2));
    assert!(!clock.set_clock_publisher_count(1));
}

#[test]
fn backward_jump_fires_callbacks_and_interrupts_sleepers() {
    let src = VirtualTimeSource::new(0);
    let cfg = SimTimeConfig {
        extrapolate: true,
        ..SimTimeConfig::default()
    };
    let clock = Arc::new(SimTimeClock::with_source(cfg, src.as_source()));
    let log: JumpLog = Arc::default();
    let (c1, l1) = (Arc::clone(&clock), Arc::clone(&log));
    let (c2, l2) = (Arc::clone(&clock), Arc::clone(&log));
    let _h = clock
        .create_jump_callback(
            Some(Box::new(move |j| {
                l1.lock().unwrap().push(("pre", c1.now().nanos(), *j))
            })),
            Some(Box::new(move |j| {
                l2.lock().unwrap().push(("post", c2.now().nanos(), *j))
            })),
            JumpThreshold::backward_only(),
        )
        .unwrap();
    for k in 0..5 {
        feed(&clock, &src, k * 10 * MS, 50 * S + k * 10 * MS);
    }
    // First message activated ROS time (on_clock_change); forward steps did not match.
    assert_eq!(log.lock().unwrap().len(), 2);
    log.lock().unwrap().clear();

    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(60 * S), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    feed(&clock, &src, 50 * MS, 10 * S);
    assert!(!sleeper.join().unwrap(), "backward jump ends the sleep");
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].0, "pre");
    // Extrapolated one step past the last sample (50.04 s) at steady 50 ms.
    let old = 50 * S + 50 * MS;
    assert_eq!(log[0].1, old, "pre-jump handler sees the old time");
    assert_eq!(log[0].2.delta, Duration::from_nanos(10 * S - old));
    assert_eq!(log[1].0, "post");
    assert_eq!(log[1].1, 10 * S);
    assert_eq!(clock.now(), Time::ros(10 * S));
}

#[test]
fn sleep_wakes_on_samples_without_extrapolation() {
    let src = VirtualTimeSource::new(0);
    let clock = Arc::new(SimTimeClock::with_source(
        SimTimeConfig::default(),
        src.as_source(),
    ));
    feed(&clock, &src, 0, 0);
    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(150 * MS), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    feed(&clock, &src, 100 * MS, 100 * MS); // not yet
    assert!(src.wait_for_waiters(1, GUARD));
    feed(&clock, &src, 200 * MS, 200 * MS);
    assert!(sleeper.join().unwrap());
}

#[test]
fn sleep_wakes_between_samples_with_extrapolation() {
    let src = VirtualTimeSource::new(0);
    let cfg = SimTimeConfig {
        extrapolate: true,
        ..SimTimeConfig::default()
    };
    let clock = Arc::new(SimTimeClock::with_source(cfg, src.as_source()));
    for k in 0..3 {
        feed(&clock, &src, k * 100 * MS, k * 100 * MS);
    }
    let c = Arc::clone(&clock);
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(250 * MS), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    assert_eq!(
        src.next_deadline(),
        Some(250 * MS),
        "wakes when extrapolation reaches it"
    );
    src.advance_to_next_deadline();
    assert!(sleeper.join().unwrap());
    assert_eq!(src.now_nanos(), 250 * MS);
}

#[test]
fn sleep_returns_false_when_watchdog_pauses() {
    let src = VirtualTimeSource::new(0);
    let cfg = SimTimeConfig {
        extrapolate: true,
        ..SimTimeConfig::default()
    };
    let clock = Arc::new(SimTimeClock::with_source(cfg, src.as_source()));
    for k in 0..3 {
        feed(&clock, &src, k * 100 * MS, k * 100 * MS);
    }
    let c = Arc::clone(&clock);
    // Beyond the cap (300 ms): only a new sample could get there.
    let sleeper = thread::spawn(move || c.sleep_until(Time::ros(400 * MS), Duration::MAX));
    assert!(src.wait_for_waiters(1, GUARD));
    // The only deadline is the watchdog's.
    let d = src.next_deadline().unwrap();
    assert!(d > 300 * MS && d <= 351 * MS, "{d}");
    src.advance_to_next_deadline();
    assert!(!sleeper.join().unwrap());
    assert!(clock.is_paused());
}

#[test]
fn sleep_times_out_on_steady_time() {
    let src = VirtualTimeSource::auto_advancing(0);
    let clock = SimTimeClock::with_source(SimTimeConfig::default(), src.as_source());
    clock.on_clock_message(Time::ros(0));
    assert!(!clock.sleep_until(Time::ros(S), Duration::from_millis(30)));
    assert_eq!(src.now_nanos(), 30 * MS);
    assert!(clock.sleep_until(Time::ros(0), Duration::ZERO));
    assert_eq!(clock.wait_clock_publish_due(Duration::from_millis(5)), None);
}
