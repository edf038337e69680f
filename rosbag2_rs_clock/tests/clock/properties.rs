//! Property tests: under any sequence of pause/resume/set_rate/jump and steady
//! time advances, playback time is continuous except at jumps and never
//! decreases without a jump.

use proptest::prelude::*;
use rosbag2_rs_clock::{
    Clock, Duration, PlaybackRate, PlayerClock, Time, TimeControllerClock, TimeControllerConfig,
    VirtualTimeSource,
};

#[derive(Debug, Clone)]
enum Op {
    Advance(i64),
    Pause,
    Resume,
    SetRate(f64),
    Jump(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0i64..5_000_000_000).prop_map(Op::Advance),
        1 => Just(Op::Pause),
        1 => Just(Op::Resume),
        2 => prop_oneof![
            0.01f64..100.0,
            Just(0.0),
            Just(-1.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
        ]
        .prop_map(Op::SetRate),
        1 => (-(1i64 << 62)..(1i64 << 62)).prop_map(Op::Jump),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn continuous_and_monotonic_except_at_jumps(
        start in -(1i64 << 62)..(1i64 << 62),
        start_paused in any::<bool>(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let src = VirtualTimeSource::new(0);
        let cfg = TimeControllerConfig { start_paused, ..TimeControllerConfig::default() };
        let clock = TimeControllerClock::with_source(Time::ros(start), cfg, src.as_source()).unwrap();
        let mut prev = clock.now();
        prop_assert_eq!(prev, Time::ros(start));
        let mut paused = start_paused;
        let mut rate = 1.0f64;
        // Highest rate in force since `prev` was observed (bounds the growth).
        let mut max_rate = rate;
        let mut steady_since_prev: i64 = 0;
        for op in ops {
            let mut jumped_to = None;
            match op {
                Op::Advance(ns) => {
                    src.advance(Duration::from_nanos(ns));
                    if !paused {
                        steady_since_prev += ns;
                    }
                }
                Op::Pause => { clock.pause().unwrap(); paused = true; }
                Op::Resume => { clock.resume().unwrap(); paused = false; }
                Op::SetRate(r) => {
                    let valid = r.is_finite() && r > 0.0;
                    prop_assert_eq!(clock.set_rate(r).is_ok(), valid);
                    if valid {
                        rate = r;
                        max_rate = max_rate.max(r);
                    }
                    prop_assert_eq!(clock.get_rate(), rate);
                }
                Op::Jump(t) => {
                    clock.jump(Time::ros(t)).unwrap();
                    jumped_to = Some(t);
                }
            }
            prop_assert_eq!(clock.is_paused(), paused);
            let now = clock.now();
            if let Some(t) = jumped_to {
                prop_assert_eq!(now, Time::ros(t));
            } else {
                // Never decreases without a jump.
                prop_assert!(now >= prev, "time went back: {:?} -> {:?}", prev, now);
                let grown = now.nanos() as i128 - prev.nanos() as i128;
                if paused && steady_since_prev == 0 {
                    prop_assert_eq!(grown, 0);
                }
                // Continuous: growth bounded by the steady time elapsed at the highest rate.
                let bound = (max_rate * steady_since_prev as f64).ceil() as i128 + 1;
                prop_assert!(grown <= bound, "grew {} > {}", grown, bound);
            }
            prev = now;
            max_rate = rate;
            steady_since_prev = 0;
        }
    }

    #[test]
    fn sleep_until_reaches_exactly_the_target(
        rate in 0.01f64..100.0,
        start in -(1i64 << 60)..(1i64 << 60),
        ahead in 0i64..(1i64 << 40),
    ) {
        let src = VirtualTimeSource::auto_advancing(0);
        let cfg = TimeControllerConfig { start_paused: false, rate: PlaybackRate::new(rate).unwrap(), ..TimeControllerConfig::default() };
        let clock = TimeControllerClock::with_source(Time::ros(start), cfg, src.as_source()).unwrap();
        let until = Time::ros(start + ahead);
        prop_assert!(clock.sleep_until(until, Duration::MAX));
        let reached = clock.now();
        prop_assert!(reached >= until);
        // Woke at the first steady nanosecond at which the target is reached.
        let one_ns_of_ros = rate.ceil() as i64;
        prop_assert!(reached.nanos() - until.nanos() <= one_ns_of_ros);
    }
}
