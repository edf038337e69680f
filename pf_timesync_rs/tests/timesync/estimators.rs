//! The envelope and bounds estimators on hand-made samples, and all
//! estimators on the simulator against the targets.

use pf_timesync_rs::bounds::BoundsEstimator;
use pf_timesync_rs::envelope::EnvelopeEstimator;
use pf_timesync_rs::metrics::{evaluate, pooled};
use pf_timesync_rs::sample::{ActiveSample, PassiveSample};
use pf_timesync_rs::sim::{simulate, SimConfig, SplitMix64};
use pf_timesync_rs::{Estimator, EstimatorKind, Params};

const BASE: i64 = 1_700_000_000_000_000_000;

/// True ROS time of sensor time `x` (ns): offset plus 40 ppm.
fn truth(x: i64) -> i64 {
    BASE + x + (x as f64 * 40e-6).round() as i64
}

/// Passive samples every 5 ms over `secs`, one-sided delays of 80 µs plus
/// 0–3 ms, every 40th at the minimum, some stalled by 30 ms.
fn passive(est: &mut dyn Estimator, secs: i64, rng: &mut SplitMix64) {
    for i in 0..secs * 200 {
        let x = i * 5_000_000;
        let mut delay = 80_000 + (rng.unit() * 3e6) as i64;
        if i % 40 == 0 {
            delay = 80_000;
        }
        if i % 97 == 0 {
            delay += 30_000_000;
        }
        est.add_passive(PassiveSample {
            sensor_ns: x,
            ros_ns: truth(x) + delay,
        });
    }
}

#[test]
fn envelope_finds_the_minimum_delay_line() {
    let mut rng = SplitMix64::new(7);
    let mut est = EnvelopeEstimator::new(10_000_000_000, 200e-6);
    assert_eq!(est.convert(0), None);
    passive(&mut est, 20, &mut rng);
    let line = est.line().unwrap();
    assert!((line.skew - 40e-6).abs() < 1e-9, "{}", line.skew);
    for x in [19_000_000_000i64, 20_000_000_000, 20_500_000_000] {
        let err = est.convert(x).unwrap() - truth(x) - 80_000;
        assert!(err.abs() <= 2, "x {x}: {err}");
    }
    // A soft reset keeps the line until the new window is long enough.
    est.reset_passive();
    assert_eq!(
        est.convert(21_000_000_000),
        Some(truth(21_000_000_000) + 80_000)
    );
    est.reset();
    assert_eq!(est.convert(21_000_000_000), None);
}

#[test]
fn envelope_skew_is_bounded() {
    // A clock running 500 ppm fast is physically implausible: 200 ppm is used.
    let mut est = EnvelopeEstimator::new(10_000_000_000, 200e-6);
    for i in 0..1000 {
        let x = i * 10_000_000;
        est.add_passive(PassiveSample {
            sensor_ns: x,
            ros_ns: x + (x as f64 * 500e-6) as i64,
        });
    }
    let line = est.line().unwrap();
    assert!((line.skew - 200e-6).abs() < 1e-12, "{}", line.skew);
    // Still at or below every point.
    let x = 9_990_000_000;
    assert!(est.convert(x).unwrap() <= x + (x as f64 * 500e-6) as i64);
}

#[test]
fn bounds_takes_the_middle_of_the_feasible_band() {
    // Active samples only, brackets 100 µs either side: the truth.
    let mut est = BoundsEstimator::new(10_000_000_000, 200e-6);
    for i in 0..40 {
        let x = i * 250_000_000;
        let extra = if i % 3 == 0 { 20_000_000 } else { 0 };
        est.add_active(ActiveSample {
            sensor_ns: x,
            before_ns: truth(x) - 100_000 - extra,
            after_ns: truth(x) + 100_000 + 2 * extra,
        });
    }
    let x = 10_000_000_000;
    let err = est.convert(x).unwrap() - truth(x);
    assert!(err.abs() <= 50, "{err}");
    assert!((est.band_width().unwrap() - 200_000.0).abs() < 100.0);
    // Passive samples 80 µs above the truth tighten the band's top: the
    // middle of [truth - 100 µs, truth + 80 µs] is truth - 10 µs.
    let mut rng = SplitMix64::new(3);
    passive(&mut est, 10, &mut rng);
    let err = est.convert(x).unwrap() - truth(x);
    assert!((err + 10_000).abs() <= 50, "{err}");
    est.reset();
    assert_eq!(est.convert(x), None);
}

#[test]
fn max_separation_uses_the_requests_alone() {
    // The same brackets: the truth, and passive samples change nothing.
    let mut est = BoundsEstimator::requests_only(60_000_000_000, 200e-6);
    assert_eq!(est.name(), "max-separation");
    let mut rng = SplitMix64::new(3);
    passive(&mut est, 10, &mut rng);
    assert_eq!(est.convert(0), None);
    for i in 0..40 {
        let x = i * 250_000_000;
        let extra = if i % 3 == 0 { 20_000_000 } else { 0 };
        est.add_active(ActiveSample {
            sensor_ns: x,
            before_ns: truth(x) - 100_000 - extra,
            after_ns: truth(x) + 100_000 + 2 * extra,
        });
    }
    passive(&mut est, 10, &mut rng);
    let x = 10_000_000_000;
    let err = est.convert(x).unwrap() - truth(x);
    assert!(err.abs() <= 50, "{err}");
}

#[test]
fn bounds_at_a_read_position_ignores_the_floor_inside_the_band() {
    // Brackets 100 µs either side, packets 80 µs late: the middle of the
    // brackets is the truth (the band's middle would be truth − 10 µs); at
    // read position 1 the answer edge, held at the floor.
    for (position, expected) in [(0.5, 0), (0.0, -100_000), (1.0, 80_000)] {
        let mut est = BoundsEstimator::new(10_000_000_000, 200e-6).with_read_position(position);
        let mut rng = SplitMix64::new(3);
        passive(&mut est, 10, &mut rng);
        for i in 0..40 {
            let x = i * 250_000_000;
            est.add_active(ActiveSample {
                sensor_ns: x,
                before_ns: truth(x) - 100_000,
                after_ns: truth(x) + 100_000,
            });
        }
        let x = 9_000_000_000;
        let err = est.convert(x).unwrap() - truth(x);
        assert!((err - expected).abs() <= 50, "{position}: {err}");
    }
}

fn short_run(http: u32) -> Vec<pf_timesync_rs::sim::SimEvent> {
    simulate(&SimConfig {
        seed: 11,
        duration_s: 40.0,
        http_interval_ms: http,
        reset_interval_s: 20.0,
        wrap_at_s: Some(15.0),
        ..SimConfig::default()
    })
}

#[test]
fn passive_only_targets() {
    let events = short_run(0);
    let params = Params::default();
    let env = evaluate(EstimatorKind::Envelope, params, &events).unwrap();
    let all = pooled(std::slice::from_ref(&env)).all.unwrap();
    assert!(all.jitter_p99 <= 20_000, "envelope jitter {all:?}");
    assert_eq!(env.backward_jumps, 0);
    for kind in [EstimatorKind::PfMean, EstimatorKind::PfRegression] {
        let pf = evaluate(kind, params, &events).unwrap();
        let pf_all = pooled(std::slice::from_ref(&pf)).all.unwrap();
        assert!(pf_all.jitter_p99 > 5 * all.jitter_p99, "{kind}: {pf_all:?}");
    }
}

#[test]
fn active_targets() {
    let events = short_run(250);
    let bounds = evaluate(EstimatorKind::Bounds, Params::default(), &events).unwrap();
    // Skip the first 3 s of the run: a single first sample cannot be exact.
    let settled: Vec<i64> = bounds.all[60..].to_vec();
    let mut abs: Vec<i64> = settled.iter().map(|e| e.abs()).collect();
    abs.sort_unstable();
    let p99 = abs[(abs.len() - 1) * 99 / 100];
    assert!(p99 <= 150_000, "bounds p99 {p99}");
    assert_eq!(bounds.backward_jumps, 0);
    assert_eq!(bounds.unanswered, 0);
}

#[test]
fn envelope_keeps_the_learnt_skew_after_a_soft_reset_until_the_window_is_long() {
    let mut est = EnvelopeEstimator::new(10_000_000_000, 200e-6);
    // Ten seconds at the minimum delay: the skew is learnt exactly.
    for i in 0..=1000 {
        let x = i * 10_000_000;
        est.add_passive(PassiveSample {
            sensor_ns: x,
            ros_ns: truth(x) + 80_000,
        });
    }
    assert!((est.line().unwrap().skew - 40e-6).abs() < 1e-9);
    est.reset_passive();
    // Five seconds after the soft reset; from 2 s on every packet is 100 µs
    // late (a loaded host): this window's own middle hull edge climbs by
    // about 33 ppm too much.
    let start = 10_050_000_000;
    for i in 0..=500 {
        let x = start + i * 10_000_000;
        let late = if i >= 200 { 100_000 } else { 0 };
        est.add_passive(PassiveSample {
            sensor_ns: x,
            ros_ns: truth(x) + 80_000 + late,
        });
    }
    let line = est.line().unwrap();
    assert!((line.skew - 40e-6).abs() < 1e-9, "{}", line.skew);
    let x = start + 5_000_000_000;
    assert!((est.convert(x).unwrap() - truth(x) - 80_000).abs() <= 2);
}

#[test]
fn envelope_skew_over_a_long_baseline() {
    let mut est = EnvelopeEstimator::new(10_000_000_000, 200e-6);
    // 20 s of packets every 10 ms, converted every 50 ms. From 14.5 s on a
    // loaded host: a stall until 15.5 s, then every packet at least 20 µs
    // late. The hull edge spanning the window's middle runs from 14.5 s to
    // the end and climbs 3.6 ppm too steeply.
    for i in 0..=2_000 {
        let x = i * 10_000_000;
        let late = match i {
            ..=1_450 => 0,
            1_451..=1_549 => 500_000,
            _ => 20_000,
        };
        est.add_passive(PassiveSample {
            sensor_ns: x,
            ros_ns: truth(x) + 80_000 + late,
        });
        if i % 5 == 0 {
            est.convert(x);
        }
    }
    // The skew between the hull's middle now and ten seconds ago is right
    // to 0.2 ppm, the stamp at the newest packet to a few µs.
    let line = est.line().unwrap();
    assert!((line.skew - 40e-6).abs() < 0.2e-6, "{}", line.skew);
    let x = 20_000_000_000;
    let err = est.convert(x).unwrap() - truth(x) - 80_000;
    assert!(err.abs() <= 4_000, "{err}");
}

#[test]
fn envelope_long_baseline_across_a_soft_reset_corrects_the_floor_step() {
    let mut est = EnvelopeEstimator::new(10_000_000_000, 200e-6);
    let feed = |est: &mut EnvelopeEstimator, from: i64, to: i64, delay: i64| {
        for i in from..to {
            let x = i * 10_000_000;
            est.add_passive(PassiveSample {
                sensor_ns: x,
                ros_ns: truth(x) + delay,
            });
            if i % 5 == 0 {
                est.convert(x);
            }
        }
    };
    feed(&mut est, 0, 2_000, 80_000);
    est.reset_passive();
    // After the reset every packet is 50 µs later (the scanner changed its
    // packets): the floor steps up. Fifteen seconds later the skew comes
    // from the middle of the window and a middle from before the reset,
    // which must be shifted by the step.
    feed(&mut est, 2_000, 3_500, 130_000);
    let line = est.line().unwrap();
    assert!((line.skew - 40e-6).abs() < 0.1e-6, "{}", line.skew);
    let x = 35_000_000_000;
    assert!((est.convert(x).unwrap() - truth(x) - 130_000).abs() <= 2);
}
