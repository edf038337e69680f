//! A deterministic simulator of scanner, network and host, for the
//! accuracy benchmark and tests.
//!
//! - **Sensor clock**: ROS time of sensor time σ is
//!   `R0 + σ (1 + skew) + wander(σ)`, skew drawn within ±`skew_ppm_max`,
//!   wander a slow sinusoidal frequency error (`wander_ppm`, `wander_period_s`).
//!   The raw timestamps wrap their 31-bit seconds at `wrap_at_s` of the run.
//! - **Scans and packets**: `scan_frequency_hz` revolutions of
//!   `samples_per_scan` samples, paced by the sensor clock, sent in packets of
//!   `points_per_packet` once their last point is measured.
//! - **Packet delays** (one-sided): `net_min_us` plus an exponential of mean
//!   `net_mean_us`, with probability `tail_prob` a Pareto tail (scale
//!   `tail_scale_us`, α 1.5, capped at 50 ms); host stalls (Poisson, rate
//!   `stall_rate_hz`, 5–50 ms) hold every packet arriving meanwhile until the
//!   stall ends, then the queue is evaluated in order, 20 µs apart.
//! - **HTTP requests** every `http_interval_ms` (0: none): the clock is read
//!   `http_up_min_us` + Exp(`http_up_mean_us`) after sending, the answer
//!   arrives `http_down_min_us` + Exp(`http_down_mean_us`) later, with
//!   probability `http_long_prob` one side takes 5–`http_long_max_ms` ms
//!   longer; stalls delay sending and noticing the answer.
//! - **Resets**: every `reset_interval_s` one scan's packets carry a
//!   non-zero `scan_status`.
//!
//! The error of an estimator is the converted stamp of each scan's first
//! point minus its true ROS time.

use crate::replay::Record;
use crate::sensor_time::{nanos_to_raw, WRAP_NANOS};
use std::f64::consts::PI;

/// splitmix64: a tiny, seeded, deterministic generator.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[a, b)`.
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.unit()
    }

    /// Exponential with mean `mean`.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// Simulation parameters (times in the unit their name says).
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Seed of the random generator.
    pub seed: u64,
    /// Length of the run, seconds.
    pub duration_s: f64,
    /// ROS time at the start, ns.
    pub ros_start_ns: i64,
    /// Revolutions per second.
    pub scan_frequency_hz: f64,
    /// Samples per revolution.
    pub samples_per_scan: u32,
    /// Points per packet.
    pub points_per_packet: u32,
    /// Skew is drawn uniformly within ±this, ppm.
    pub skew_ppm_max: f64,
    /// Amplitude of the frequency wander, ppm.
    pub wander_ppm: f64,
    /// Period of the frequency wander, s.
    pub wander_period_s: f64,
    /// Time of the run at which the 31-bit seconds wrap (`None`: no wrap).
    pub wrap_at_s: Option<f64>,
    /// Minimum packet delay (transmission, stacks), µs.
    pub net_min_us: f64,
    /// Mean of the exponential part of the packet delay, µs.
    pub net_mean_us: f64,
    /// Probability of a heavy-tail delay.
    pub tail_prob: f64,
    /// Scale of the Pareto tail, µs.
    pub tail_scale_us: f64,
    /// Host stalls per second.
    pub stall_rate_hz: f64,
    /// Interval of HTTP `system_time_raw` requests, ms (0: none).
    pub http_interval_ms: u32,
    /// Minimum time from sending to the clock read, µs.
    pub http_up_min_us: f64,
    /// Mean exponential part of it, µs.
    pub http_up_mean_us: f64,
    /// Minimum time from the clock read to the answer, µs.
    pub http_down_min_us: f64,
    /// Mean exponential part of it, µs.
    pub http_down_mean_us: f64,
    /// Probability of a long request.
    pub http_long_prob: f64,
    /// Longest extra duration of a long request, ms.
    pub http_long_max_ms: f64,
    /// Interval of `scan_status` resets, s (0: none).
    pub reset_interval_s: f64,
    /// Conversions this long after a reset (or the start) count as "after reset", s.
    pub after_reset_s: f64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            duration_s: 300.0,
            ros_start_ns: 1_700_000_000_000_000_000,
            scan_frequency_hz: 20.0,
            samples_per_scan: 3600,
            points_per_packet: 360,
            skew_ppm_max: 50.0,
            wander_ppm: 1.0,
            wander_period_s: 400.0,
            wrap_at_s: Some(100.0),
            net_min_us: 150.0,
            net_mean_us: 200.0,
            tail_prob: 0.01,
            tail_scale_us: 500.0,
            stall_rate_hz: 0.2,
            http_interval_ms: 0,
            http_up_min_us: 200.0,
            http_up_mean_us: 150.0,
            http_down_min_us: 300.0,
            http_down_mean_us: 400.0,
            http_long_prob: 0.03,
            http_long_max_ms: 80.0,
            reset_interval_s: 60.0,
            after_reset_s: 3.0,
        }
    }
}

/// What the simulator knows about a conversion (`c` record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truth {
    /// True ROS time of the converted sensor time, ns.
    pub truth_ns: i64,
    /// Within `after_reset_s` of a reset or the start.
    pub after_reset: bool,
}

/// One event as the host sees it, in order of host time: a replay record
/// (see [`replay`](crate::replay)), with the truth of a conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimEvent {
    /// The record, as `pf-timesync replay` reads it.
    pub record: Record,
    /// The truth, for `c` records only.
    pub truth: Option<Truth>,
}

impl SimEvent {
    fn of(record: Record) -> Self {
        SimEvent {
            record,
            truth: None,
        }
    }
}

/// The true clock relation of one run.
#[derive(Debug, Clone, Copy)]
struct TrueClock {
    ros_start: i64,
    sensor_start: i64,
    skew: f64,
    wander: f64,
    wander_period_ns: f64,
}

impl TrueClock {
    /// ROS ns (relative to the start) of relative sensor time σ (ns).
    fn ros_rel(&self, sigma: f64) -> f64 {
        let w = 2.0 * PI / self.wander_period_ns;
        sigma * (1.0 + self.skew) + self.wander / w * (1.0 - (w * sigma).cos())
    }

    fn rate(&self, sigma: f64) -> f64 {
        let w = 2.0 * PI / self.wander_period_ns;
        1.0 + self.skew + self.wander * (w * sigma).sin()
    }

    fn ros(&self, sigma: f64) -> i64 {
        self.ros_start + self.ros_rel(sigma).round() as i64
    }

    /// Relative sensor time at absolute ROS time `ros` (Newton).
    fn sensor_at(&self, ros: i64) -> f64 {
        let target = (ros - self.ros_start) as f64;
        let mut sigma = target / (1.0 + self.skew);
        for _ in 0..4 {
            sigma -= (self.ros_rel(sigma) - target) / self.rate(sigma);
        }
        sigma
    }

    fn raw(&self, sigma: f64) -> u64 {
        nanos_to_raw(self.sensor_start + sigma.round() as i64)
    }
}

/// Host stalls: sorted, disjoint `[start, end)` intervals of ROS ns.
struct Stalls(Vec<(i64, i64)>);

impl Stalls {
    /// End of the stall covering `t`, or `t`.
    fn release(&self, t: i64) -> i64 {
        let i = self.0.partition_point(|s| s.1 <= t);
        match self.0.get(i) {
            Some(&(start, end)) if start <= t => end,
            _ => t,
        }
    }
}

/// Run the simulation: events in host order.
pub fn simulate(cfg: &SimConfig) -> Vec<SimEvent> {
    let mut rng = SplitMix64::new(cfg.seed ^ 0x5eed_0f9f_7135);
    let duration_ns = cfg.duration_s * 1e9;
    let sensor_start = match cfg.wrap_at_s {
        Some(at) => WRAP_NANOS - (at * 1e9) as i64,
        None => 1_000_000 * 1_000_000_000,
    };
    let clock = TrueClock {
        ros_start: cfg.ros_start_ns,
        sensor_start,
        skew: rng.uniform(-cfg.skew_ppm_max, cfg.skew_ppm_max) * 1e-6,
        wander: cfg.wander_ppm * 1e-6,
        wander_period_ns: cfg.wander_period_s.max(1.0) * 1e9,
    };
    // Host stalls.
    let mut stalls = Vec::new();
    if cfg.stall_rate_hz > 0.0 {
        let mut t = rng.exp(1e9 / cfg.stall_rate_hz);
        while t < duration_ns + 1e9 {
            let len = rng.uniform(5e6, 50e6);
            stalls.push((
                cfg.ros_start_ns + t as i64,
                cfg.ros_start_ns + (t + len) as i64,
            ));
            t += len + rng.exp(1e9 / cfg.stall_rate_hz);
        }
    }
    let stalls = Stalls(stalls);
    // (host time, sequence, event)
    let mut timeline: Vec<(i64, usize, SimEvent)> = Vec::new();
    let push = |t: i64, e: SimEvent, timeline: &mut Vec<(i64, usize, SimEvent)>| {
        let seq = timeline.len();
        timeline.push((t, seq, e));
    };

    let scan_period = 1e9 / cfg.scan_frequency_hz;
    let t_pt = scan_period / f64::from(cfg.samples_per_scan.max(1));
    let ppp = cfg.points_per_packet.clamp(1, cfg.samples_per_scan.max(1));
    let packets = cfg.samples_per_scan.max(1).div_ceil(ppp);
    let scans = (cfg.duration_s * cfg.scan_frequency_hz) as u64;
    let reset_every = if cfg.reset_interval_s > 0.0 {
        (cfg.reset_interval_s * cfg.scan_frequency_hz)
            .round()
            .max(1.0) as u64
    } else {
        u64::MAX
    };
    let mut last_eval = i64::MIN;
    let mut last_reset_ros = cfg.ros_start_ns;
    for k in 0..scans {
        let sigma_scan = k as f64 * scan_period;
        let status = k > 0 && k % reset_every == 0;
        for j in 0..packets {
            let first = j * ppp;
            let n = ppp.min(cfg.samples_per_scan - first);
            let sigma_first = sigma_scan + f64::from(first) * t_pt;
            let measuring = f64::from(n) * t_pt;
            let sent = clock.ros(sigma_first + measuring);
            let mut delay = cfg.net_min_us + rng.exp(cfg.net_mean_us);
            if rng.chance(cfg.tail_prob) {
                let pareto = cfg.tail_scale_us / (1.0 - rng.unit()).powf(1.0 / 1.5);
                delay += pareto.min(50_000.0);
            }
            let arrival = sent + (delay * 1e3) as i64;
            let held = stalls.release(arrival);
            let eval = if held != arrival { held } else { arrival }.max(last_eval + 20_000);
            last_eval = eval;
            let raw = clock.raw(sigma_first);
            if status {
                push(eval, SimEvent::of(Record::Reset), &mut timeline);
                last_reset_ros = eval;
            }
            push(
                eval,
                SimEvent::of(Record::Passive {
                    raw,
                    ros_ns: eval - measuring.round() as i64,
                }),
                &mut timeline,
            );
            if j == 0 {
                let truth = clock.ros(sigma_first);
                push(
                    eval,
                    SimEvent {
                        record: Record::Convert { raw },
                        truth: Some(Truth {
                            truth_ns: truth,
                            after_reset: (eval - last_reset_ros) as f64 <= cfg.after_reset_s * 1e9,
                        }),
                    },
                    &mut timeline,
                );
            }
        }
    }
    if cfg.http_interval_ms > 0 {
        let interval = f64::from(cfg.http_interval_ms) * 1e6;
        let mut t = interval;
        while t < duration_ns {
            let planned = cfg.ros_start_ns + (t + rng.uniform(0.0, 2e6)) as i64;
            let before = stalls.release(planned);
            let mut up = cfg.http_up_min_us + rng.exp(cfg.http_up_mean_us);
            let mut down = cfg.http_down_min_us + rng.exp(cfg.http_down_mean_us);
            if rng.chance(cfg.http_long_prob) {
                let extra = rng.uniform(5_000.0, cfg.http_long_max_ms.max(5.0) * 1e3);
                if rng.chance(0.5) {
                    up += extra;
                } else {
                    down += extra;
                }
            }
            let read = before + (up * 1e3) as i64;
            let answered = read + (down * 1e3) as i64;
            let after = stalls.release(answered);
            let raw = clock.raw(clock.sensor_at(read));
            push(
                after,
                SimEvent::of(Record::Active {
                    raw,
                    before_ns: before,
                    after_ns: after,
                }),
                &mut timeline,
            );
            t += interval;
        }
    }
    timeline.sort_by_key(|(t, seq, _)| (*t, *seq));
    timeline.into_iter().map(|(_, _, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensor_time::raw_to_nanos;

    #[test]
    fn deterministic_and_one_sided() {
        let cfg = SimConfig {
            duration_s: 5.0,
            http_interval_ms: 250,
            wrap_at_s: Some(2.0),
            ..SimConfig::default()
        };
        let a = simulate(&cfg);
        assert_eq!(a, simulate(&cfg));
        let other = simulate(&SimConfig {
            seed: 2,
            ..cfg.clone()
        });
        assert_ne!(a, other);
        let converts = a
            .iter()
            .filter(|e| matches!(e.record, Record::Convert { .. }))
            .count();
        assert_eq!(converts, 100);
        assert!(a.iter().any(|e| matches!(e.record, Record::Active { .. })));
        // The wrap happens: raw seconds go from near 2^31 to near 0.
        let secs: Vec<i64> = a
            .iter()
            .filter_map(|e| match e.record {
                Record::Passive { raw, .. } => Some(raw_to_nanos(raw) / 1_000_000_000),
                _ => None,
            })
            .collect();
        assert!(secs.iter().any(|&s| s < 10) && secs.iter().any(|&s| s > 2_000_000_000));
        // Each scan's first passive sample is later than its truth.
        let truths: std::collections::HashMap<u64, i64> = a
            .iter()
            .filter_map(|e| match (e.record, e.truth) {
                (Record::Convert { raw }, Some(t)) => Some((raw, t.truth_ns)),
                _ => None,
            })
            .collect();
        let mut checked = 0;
        for e in &a {
            if let Record::Passive { raw, ros_ns } = e.record {
                if let Some(t) = truths.get(&raw) {
                    assert!(ros_ns - t >= 149_000, "{ros_ns} {t}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 100);
    }

    #[test]
    fn inverse_clock() {
        let c = TrueClock {
            ros_start: 0,
            sensor_start: 0,
            skew: 40e-6,
            wander: 1e-6,
            wander_period_ns: 400e9,
        };
        for sigma in [0.0, 1e9, 123.456e9] {
            let r = c.ros(sigma);
            assert!((c.sensor_at(r) - sigma).abs() < 2.0);
        }
    }
}
