//! The `brackets` estimator's rules on deterministic sample sets, and its
//! targets on the simulator's hosts.

use pf_timesync_rs::bounds::BoundsEstimator;
use pf_timesync_rs::brackets::{BracketsEstimator, MAX_WINDOW_FACTOR};
use pf_timesync_rs::metrics::evaluate;
use pf_timesync_rs::sample::{ActiveSample, PassiveSample};
use pf_timesync_rs::sim::{cases, simulate, Phase, SimConfig};
use pf_timesync_rs::{Estimator, EstimatorKind, Params};

const BASE: i64 = 1_700_000_000_000_000_000;
const WINDOW: i64 = 10_000_000_000;
const SKEW: f64 = 37e-6;
/// Minimum packet delay of the hand-made sets, ns.
const FLOOR: i64 = 80_000;

/// True ROS time of sensor time `x` (ns).
fn truth(x: i64) -> i64 {
    BASE + x + (x as f64 * SKEW).round() as i64
}

/// Passive samples every 5 ms from `from_s` to `to_s`: the minimum delay
/// [`FLOOR`] every 10th, up to 300 µs more otherwise (a fixed pattern).
fn passive(est: &mut dyn Estimator, from_s: i64, to_s: i64) {
    passive_with_floor(est, from_s, to_s, FLOOR);
}

/// [`passive`] with a minimum delay of `floor` ns.
fn passive_with_floor(est: &mut dyn Estimator, from_s: i64, to_s: i64, floor: i64) {
    for i in from_s * 200..to_s * 200 {
        let x = i * 5_000_000;
        let extra = if i % 10 == 0 {
            0
        } else {
            (i * 7_919) % 300_000
        };
        est.add_passive(PassiveSample {
            sensor_ns: x,
            ros_ns: truth(x) + floor + extra,
        });
    }
}

/// A request read at sensor time `x`, `up` ns after sending and `down` ns
/// before the answer.
fn bracket(x: i64, up: i64, down: i64) -> ActiveSample {
    ActiveSample::new(x, truth(x) - up, truth(x) + down).unwrap()
}

/// Requests every 250 ms from `from_s` to `to_s`, up leg 100 µs plus
/// 0–80 µs, down leg 150 µs plus 0–60 µs (the minimum every 5th).
fn requests(est: &mut dyn Estimator, from_s: i64, to_s: i64) {
    for i in from_s * 4..to_s * 4 {
        let x = i * 250_000_000 + 1_000_000;
        est.add_active(bracket(
            x,
            100_000 + 20_000 * (i % 5),
            150_000 + 30_000 * (i % 3),
        ));
    }
}

fn settled() -> BracketsEstimator {
    let mut est = BracketsEstimator::new(WINDOW, 200e-6);
    passive(&mut est, 0, 20);
    requests(&mut est, 0, 20);
    est
}

#[test]
fn middle_of_the_estimated_limits() {
    let mut est = settled();
    // Relative to the floor (truth + 80 µs) the lower edge is −180 µs
    // (reached by every 5th request: no shortfall), the upper edge +70 µs
    // (every 3rd answer): the middle is −55 µs, truth + 25 µs, the middle of
    // the fastest legs (100 µs up, 150 µs down). The floor only bounds it.
    let e = est.estimate().unwrap();
    assert_eq!(e.lower.max, -180_000);
    assert_eq!(e.lower.shortfall, 0.0);
    assert_eq!((e.upper.max, e.upper.shortfall), (-70_000, 0.0));
    assert_eq!(e.upper_ns, 0);
    assert_eq!(e.window_ns, WINDOW);
    let x = 19_990_000_000;
    assert!((est.convert(x).unwrap() - truth(x) - 25_000).abs() <= 2);
}

/// Requests every 250 ms from `from_s` to `to_s` with both legs 100 µs
/// plus 0–80 µs (the minimum every 5th): the clock read mid-request.
fn symmetric_requests(est: &mut dyn Estimator, from_s: i64, to_s: i64) {
    for i in from_s * 4..to_s * 4 {
        let leg = 100_000 + 20_000 * (i % 5);
        est.add_active(bracket(i * 250_000_000 + 1_000_000, leg, leg));
    }
}

#[test]
fn symmetric_brackets_are_unbiased_whatever_the_packets_minimum() {
    // The packets' minimum delay is no evidence of where the clock is read:
    // below, at and above the request legs' 100 µs, the estimate is the truth.
    for floor in [0, 20_000, 100_000, 400_000] {
        let mut est = BracketsEstimator::new(WINDOW, 200e-6);
        passive_with_floor(&mut est, 0, 20, floor);
        symmetric_requests(&mut est, 0, 20);
        for x in [15_000_000_000, 19_990_000_000] {
            let err = est.convert(x).unwrap() - truth(x);
            assert!(err.abs() <= 2, "floor {floor}: error {err}");
        }
    }
}

#[test]
fn read_position_places_the_estimate_in_the_bracket() {
    // Fastest legs 100 µs up, 150 µs down; the floor at truth + 80 µs.
    let x = 19_990_000_000;
    for (position, expected) in [
        (0.0, -100_000),
        (0.4, 0),
        (0.5, 25_000),
        // Past the floor: held at it, a hard bound.
        (0.9, FLOOR),
        (1.0, FLOOR),
    ] {
        let params = Params {
            read_position: position,
            ..Params::default()
        };
        let mut est = EstimatorKind::Brackets.build(&params);
        passive(est.as_mut(), 0, 20);
        requests(est.as_mut(), 0, 20);
        let err = est.convert(x).unwrap() - truth(x);
        assert!((err - expected).abs() <= 2, "{position}: {err}");
    }
}

#[test]
fn the_estimate_stays_inside_every_bracket() {
    // Whatever the packets' minimum and the read position, the error stays
    // within the tightest bracket (−100 µs ..= +150 µs) and under the floor.
    let x = 19_990_000_000;
    for floor in [0, 20_000, 80_000, 400_000] {
        for position in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let mut est = BracketsEstimator::new(WINDOW, 200e-6).with_read_position(position);
            passive_with_floor(&mut est, 0, 20, floor);
            requests(&mut est, 0, 20);
            let err = est.convert(x).unwrap() - truth(x);
            assert!(
                (-100_002..=150_002.min(floor + 2)).contains(&err),
                "floor {floor}, position {position}: {err}"
            );
        }
    }
}

#[test]
fn a_loose_bracket_does_not_move_the_estimate() {
    let mut est = settled();
    let x = 19_990_000_000;
    let before = est.convert(x).unwrap();
    // A request that took 6 ms, 3 ms each way, and one with a 40 ms answer
    // leg: both contain the estimate with room to spare.
    est.add_active(bracket(19_500_000_000, 3_000_000, 3_000_000));
    est.add_active(bracket(19_600_000_000, 250_000, 40_000_000));
    assert_eq!(est.convert(x), Some(before));
}

#[test]
fn a_tight_bracket_moves_the_estimate() {
    let mut est = settled();
    let x = 19_990_000_000;
    let before = est.convert(x).unwrap();
    // A request read 40 µs after sending: the true line is at most 40 µs
    // above its request time, the old estimate 10 µs below the truth is
    // still feasible but the lower edge moved up by 40 µs.
    let tight = bracket(19_500_000_000, 40_000, 5_000_000);
    est.add_active(tight);
    let after = est.convert(x).unwrap();
    assert!(after - before >= 20_000, "{before} -> {after}");
    assert!(after - truth(x) >= -40_000 && after - truth(x) <= FLOOR);
    assert_eq!(est.estimate().unwrap().lower.max, -120_000);
}

#[test]
fn skew_from_the_hulls_on_noiseless_sets() {
    // Requests only, 50 µs each way: the maximum-separation line of the two hulls.
    let mut est = BracketsEstimator::new(WINDOW, 200e-6);
    for i in 0..80 {
        est.add_active(bracket(i * 250_000_000, 50_000, 50_000));
    }
    let skew = est.line().unwrap().skew;
    assert!((skew - SKEW).abs() < 0.1e-6, "{skew}");
    // With passive samples at their minimum delay: the passive lower hull.
    let mut est = BracketsEstimator::new(WINDOW, 200e-6);
    for i in 0..4_000 {
        let x = i * 5_000_000;
        est.add_passive(PassiveSample {
            sensor_ns: x,
            ros_ns: truth(x) + FLOOR,
        });
    }
    requests(&mut est, 0, 20);
    let skew = est.line().unwrap().skew;
    assert!((skew - SKEW).abs() < 0.1e-6, "{skew}");
}

#[test]
fn older_tight_brackets_still_bound_the_estimate() {
    // Packets 400 µs late at least. For 20 s tight answers (150 µs down
    // leg) but widely spread request legs (100 µs, then 1 ms more each): the
    // request edge's estimated limit lies far above the answers. Then 20 s
    // of loose requests (5 ms and more either way), so the last 10 s bound
    // nothing but the floor.
    let mut est = BracketsEstimator::new(WINDOW, 200e-6);
    passive_with_floor(&mut est, 0, 40, 400_000);
    for i in 0..80 {
        est.add_active(bracket(
            i * 250_000_000 + 1_000_000,
            100_000 + 1_000_000 * i,
            150_000,
        ));
    }
    for i in 80..160 {
        let loose = 5_000_000 + (i * 7_919) % 997 * 1_000;
        est.add_active(bracket(i * 250_000_000 + 1_000_000, loose, loose));
    }
    // Still at or under the tightest answer, 150 µs after the truth.
    let x = 39_990_000_000;
    let err = est.convert(x).unwrap() - truth(x);
    assert!(
        (-100_000..=150_002).contains(&err),
        "{err} {:?}",
        est.estimate()
    );
}

#[test]
fn the_window_grows_while_the_lower_edge_is_loose() {
    let mut est = BracketsEstimator::new(WINDOW, 200e-6);
    passive(&mut est, 0, 40);
    // Tight requests (100 µs up leg) for 20 s, then a loaded host: the up
    // leg 0.5–5 ms, spread out.
    requests(&mut est, 0, 20);
    for i in 80..160 {
        let x = i * 250_000_000 + 1_000_000;
        est.add_active(bracket(x, 500_000 + 61_000 * (i % 74), 150_000));
    }
    let e = est.estimate().unwrap();
    assert!(e.window_ns > WINDOW && e.window_ns <= WINDOW * MAX_WINDOW_FACTOR);
    assert_eq!(e.lower.max, -180_000);
    let x = 39_990_000_000;
    assert!((est.convert(x).unwrap() - truth(x) - 25_000).abs() <= 2);
}

#[test]
fn the_asymmetry_of_the_edges_shortfalls_is_corrected() {
    let mut est = BracketsEstimator::new(WINDOW, 200e-6);
    passive(&mut est, 0, 20);
    // Up legs 100, 130, 160, ... µs: the tightest lower bound falls 30 µs
    // (one spacing) short of its extrapolated limit, the answers (150 µs,
    // all alike) none.
    for i in 0..40 {
        let x = 10_001_000_000 + i * 250_000_000;
        est.add_active(bracket(x, 100_000 + 30_000 * (39 - i), 150_000));
    }
    let e = est.estimate().unwrap();
    assert_eq!(e.lower.max, -180_000);
    assert!((e.lower.shortfall - 30_000.0).abs() < 1e-6);
    // The observed edges' middle would be −55 µs; the limits' middle is
    // (−150 + 70) / 2 = −40 µs.
    assert!((e.asymmetry_ns - 15_000.0).abs() < 1.0, "{e:?}");
    assert!((e.offset_ns + 40_000.0).abs() < 1.0);
}

#[test]
fn bounded_right_after_a_reset_and_without_a_trusted_floor() {
    let mut est = settled();
    est.reset();
    assert_eq!(est.convert(0), None);
    // One request and a second of passive samples (the floor's skew not yet
    // trusted): the answer is the bracket's middle, clamped into the hard
    // band (what `bounds` answers at the same read position).
    let mut bounds = BoundsEstimator::new(WINDOW, 200e-6).with_read_position(0.5);
    for e in [&mut est as &mut dyn Estimator, &mut bounds] {
        passive(e, 30, 31);
        e.add_active(bracket(30_500_000_000, 100_000, 150_000));
    }
    // At the request's own sensor time (the skew is not known yet).
    let x = 30_500_000_000;
    let y = est.convert(x).unwrap();
    assert!(est.estimate().is_none());
    assert_eq!(Some(y), bounds.convert(x));
    assert!((y - truth(x) - 25_000).abs() <= 2, "{}", y - truth(x));
    let x = 30_990_000_000;
    let y = est.convert(x).unwrap();
    assert_eq!(Some(y), bounds.convert(x));
}

#[test]
fn targets_on_the_simulated_cases() {
    for case in cases() {
        let events = simulate(&SimConfig {
            seed: 5,
            duration_s: 90.0,
            ..case.config.clone()
        });
        let run = evaluate(EstimatorKind::Brackets, Params::default(), &events).unwrap();
        let errors: Vec<i64> = run
            .all
            .iter()
            .zip(&run.phase)
            .filter(|(_, p)| **p != Phase::Start)
            .map(|(e, _)| *e)
            .collect();
        let bias = errors.iter().sum::<i64>() as f64 / errors.len() as f64 / 1e3;
        let mut abs: Vec<i64> = errors.iter().map(|e| e.abs()).collect();
        abs.sort_unstable();
        let p99 = abs[(abs.len() - 1) * 99 / 100];
        let name = &case.name;
        let light = name.starts_with("light");
        if case.config.midpoint_bias_us() == 0.0 {
            // The clock read mid-request: no bias, whatever the packets (one
            // short run: ±5 µs light, ±10 µs loaded; the benchmark's 5 × 300 s
            // give ±5 µs on both hosts).
            let tolerance = if light { 5.0 } else { 10.0 };
            assert!(bias.abs() <= tolerance, "{name}: bias {bias} µs");
            let limit = if light { 30_000 } else { 100_000 };
            assert!(p99 <= limit, "{name}: p99 {p99}");
        } else {
            // Elsewhere the bracket midpoint's bias, not more.
            let mid = case.config.midpoint_bias_us();
            assert!((bias - mid).abs() <= 10.0, "{name}: bias {bias} µs");
        }
        assert_eq!(run.outside_brackets, 0, "{name}");
        assert_eq!(run.backward_jumps, 0, "{name}");
        assert_eq!(run.unanswered, 0, "{name}");
    }
}

#[test]
fn brackets_follow_a_step_of_the_floor_at_a_soft_reset() {
    let mut est = settled();
    est.reset_passive();
    // From 20 s on every packet is 50 µs later (the scanner changed its
    // packets) and the requests are loose (1–2 ms up leg): the brackets of
    // before the reset, relative to the old floor, are still the tightest
    // and must follow the step.
    for i in 4_000..8_000 {
        let x = i * 5_000_000;
        let extra = if i % 10 == 0 {
            0
        } else {
            (i * 7_919) % 300_000
        };
        est.add_passive(PassiveSample {
            sensor_ns: x,
            ros_ns: truth(x) + FLOOR + 50_000 + extra,
        });
        if i % 50 == 0 {
            let x = x + 1_000_000;
            est.add_active(bracket(x, 1_000_000 + (i * 7_919) % 997 * 1_000, 150_000));
            est.convert(x);
        }
    }
    // The middle between the tightest request time (truth − 100 µs) and
    // answer time (truth + 150 µs): truth + 25 µs. Left relative to the old
    // floor, the old brackets would put the request edge 50 µs higher and
    // the estimate 25 µs later.
    let x = 39_990_000_000;
    let err = est.convert(x).unwrap() - truth(x);
    assert!((err - 25_000).abs() <= 2_000, "{err} {:?}", est.estimate());
}
