//! The synchronizer: wrap-around, out-of-order samples, clock jumps, resets,
//! scan stamping.

use pf_timesync_rs::sensor_time::{nanos_to_raw, WRAP_NANOS};
use pf_timesync_rs::{
    EstimatorKind, PacketHeader, Params, ScanStamper, Synchronizer, Time, TimeSyncError,
};
use rosbag2_rs_clock::{RosClock, VirtualTimeSource};

const BASE: i64 = 1_700_000_000_000_000_000;
const MS: i64 = 1_000_000;

fn envelope() -> Synchronizer {
    Synchronizer::new(EstimatorKind::Envelope, Params::default()).unwrap()
}

#[test]
fn converts_across_the_wrap_with_out_of_order_samples() {
    // Passive samples only: every estimator but the requests-only one.
    for kind in EstimatorKind::ALL
        .into_iter()
        .filter(|&k| k != EstimatorKind::MaxSeparation)
    {
        let mut sync = Synchronizer::new(kind, Params::default()).unwrap();
        // Sensor time starts 2 s before the 31-bit wrap; ROS = sensor + offset, 100 µs delay.
        let start = WRAP_NANOS - 2_000 * MS;
        let mut order: Vec<i64> = (0..400).map(|i| i * 10 * MS).collect();
        // Swap two samples around the wrap (at 2 s).
        order.swap(199, 201);
        for dt in order {
            let s = start + dt;
            sync.add_passive(nanos_to_raw(s), Time::ros(BASE + dt + 100_000))
                .unwrap();
        }
        assert_eq!(sync.reset_counts().clock_jump, 0, "{kind}");
        for dt in [3_000 * MS, 3_995 * MS, 4_100 * MS] {
            let got = sync.to_ros(nanos_to_raw(start + dt)).unwrap().unwrap();
            assert_eq!(got.nanos(), BASE + dt + 100_000, "{kind} at {dt}");
        }
        // A raw time from just before the wrap still converts before it.
        let got = sync
            .to_ros(nanos_to_raw(start + 1_990 * MS))
            .unwrap()
            .unwrap();
        assert_eq!(got.nanos(), BASE + 1_990 * MS + 100_000, "{kind}");
    }
}

#[test]
fn ros_clock_jump_resets() {
    let system = VirtualTimeSource::new(BASE);
    let steady = VirtualTimeSource::new(0);
    let clock = RosClock::with_sources(system.as_source(), steady.as_source());
    let mut sync = envelope();
    let handle = sync.watch_clock(&clock).unwrap();
    clock.set_ros_time_override(true);
    // Activation of sim time is a clock change: reset.
    clock.on_clock_message(Time::ros(5_000 * MS));
    assert_eq!(sync.to_ros(0).unwrap(), None);
    assert_eq!(sync.reset_counts().ros_jump, 1);
    for i in 0..100 {
        sync.add_passive(
            nanos_to_raw(i * 10 * MS),
            Time::ros(5_000 * MS + i * 10 * MS),
        )
        .unwrap();
    }
    // Small forward steps of /clock are no jump.
    clock.on_clock_message(Time::ros(5_500 * MS));
    assert!(sync.to_ros(nanos_to_raw(990 * MS)).unwrap().is_some());
    // A backward jump (bag loop) resets.
    clock.on_clock_message(Time::ros(1_000 * MS));
    assert_eq!(sync.to_ros(nanos_to_raw(990 * MS)).unwrap(), None);
    assert_eq!(sync.reset_counts().ros_jump, 2);
    // A large forward jump too.
    sync.add_passive(nanos_to_raw(0), Time::ros(0)).unwrap();
    clock.on_clock_message(Time::ros(60_000 * MS));
    assert_eq!(sync.to_ros(nanos_to_raw(0)).unwrap(), None);
    // Dropping the handle stops watching.
    drop(handle);
    sync.add_passive(nanos_to_raw(0), Time::ros(0)).unwrap();
    clock.on_clock_message(Time::ros(0));
    assert!(sync.to_ros(nanos_to_raw(0)).unwrap().is_some());
    assert_eq!(sync.reset_counts().ros_jump, 3);
}

#[test]
fn clock_jumps_detected_from_samples() {
    let mut sync = envelope();
    for i in 0..50 {
        sync.add_passive(nanos_to_raw(i * 10 * MS), Time::ros(BASE + i * 10 * MS))
            .unwrap();
    }
    // The sensor clock jumps 10 s ahead while ROS time advances 10 ms.
    let jumped = 10_500 * MS;
    sync.add_passive(nanos_to_raw(jumped), Time::ros(BASE + 500 * MS))
        .unwrap();
    assert_eq!(sync.reset_counts().clock_jump, 1);
    assert_eq!(
        sync.to_ros(nanos_to_raw(jumped)).unwrap(),
        Some(Time::ros(BASE + 500 * MS))
    );
    // Within tolerance (a 300 ms host stall) is no jump.
    sync.add_passive(nanos_to_raw(jumped + 10 * MS), Time::ros(BASE + 810 * MS))
        .unwrap();
    assert_eq!(sync.reset_counts().clock_jump, 1);
}

#[test]
fn resets_and_errors() {
    let mut sync = Synchronizer::new(EstimatorKind::PfMean, Params::default()).unwrap();
    sync.add_passive(nanos_to_raw(0), Time::ros(BASE)).unwrap();
    assert!(sync.to_ros(0).unwrap().is_some());
    assert!(!sync.scan_status(0));
    assert!(sync.scan_status(0x10));
    assert_eq!(sync.to_ros(0).unwrap(), None);
    assert_eq!(sync.reset_counts().scan_status, 1);
    // Clock types do not mix.
    sync.add_passive(nanos_to_raw(0), Time::ros(BASE)).unwrap();
    assert!(matches!(
        sync.add_passive(nanos_to_raw(0), Time::system(BASE)),
        Err(TimeSyncError::ClockMismatch { .. })
    ));
    assert!(matches!(
        sync.add_active(0, Time::ros(10), Time::ros(9)),
        Err(TimeSyncError::AnswerBeforeRequest { .. })
    ));
    assert!(sync.add_packet(0, Time::ros(BASE), 10, 0.0).is_err());
    // New parameters reset, the same ones do not.
    assert_eq!(sync.set_params(Params::default()), Ok(false));
    assert!(sync.to_ros(0).unwrap().is_some());
    let p = Params {
        period_ms: 5_000,
        ..Params::default()
    };
    assert_eq!(sync.set_params(p), Ok(true));
    assert_eq!(sync.to_ros(0).unwrap(), None);
    assert!(sync
        .set_params(Params {
            max_skew_ppm: -1.0,
            ..p
        })
        .is_err());
    assert!(Synchronizer::new(
        EstimatorKind::Bounds,
        Params {
            jump_tolerance_ms: 0,
            ..Params::default()
        }
    )
    .is_err());
}

#[test]
fn scan_stamper_fills_a_laserscan() {
    let mut sync = envelope();
    let mut stamper = ScanStamper::new();
    // 20 Hz (20000 mHz), 3600 samples per scan: 50 ms scans, 13.889 µs per sample.
    let ti = 50_000_000.0 / 3600.0;
    let mut stamps = Vec::new();
    for scan in 0..40u16 {
        for packet in 0..10u32 {
            let first = packet * 360;
            let sensor = i64::from(scan) * 50 * MS + (f64::from(first) * ti).round() as i64;
            let header = PacketHeader {
                timestamp_raw: nanos_to_raw(sensor),
                scan_number: scan,
                packet_number: packet as u16 + 1,
                first_index: first,
                num_points_packet: 360,
                num_points_scan: 3600,
                scan_frequency_mhz: 20_000,
                samples_per_scan: 3600,
                status_flags: 0,
            };
            if scan == 5 && packet == 0 {
                continue; // lost first packet
            }
            // Evaluated 120 µs after the packet's last point.
            let evaluated = Time::ros(BASE + sensor + (360.0 * ti).round() as i64 + 120_000);
            let out = stamper.on_packet(&mut sync, &header, evaluated).unwrap();
            assert_eq!(out.is_some(), packet == 0 || (scan == 5 && packet == 1));
            if let Some(t) = out {
                assert_eq!(t.scan_number, scan);
                assert!((t.scan_time - 0.05).abs() < 1e-9);
                assert!((f64::from(t.time_increment) - ti * 1e-9).abs() < 1e-12);
                stamps.push((scan, t.stamp.unwrap()));
            }
        }
    }
    for (scan, stamp) in stamps {
        // Stamp of the scan's first sample, up to the 120 µs minimum delay.
        let err = stamp.nanos() - (BASE + i64::from(scan) * 50 * MS) - 120_000;
        assert!(err.abs() <= 2, "scan {scan}: {err}");
    }
    let bad = PacketHeader {
        num_points_packet: 1,
        scan_frequency_mhz: 0,
        ..PacketHeader::default()
    };
    assert!(stamper.on_packet(&mut sync, &bad, Time::ros(BASE)).is_err());
}
