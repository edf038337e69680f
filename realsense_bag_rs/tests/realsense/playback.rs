//! The playback device on virtual time: the real-time schedule at several speeds, pause and
//! resume, seeks, non-real time and the stream filter. Nothing sleeps on the wall clock: the test
//! advances virtual time only while the playback thread waits on it.

use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use realsense_bag_rs::*;
use rosbag2_rs_clock::{Time, TimeControllerClock, TimeControllerConfig, VirtualTimeSource};
use rosbag2_rs_storage::CompressionFormat;

const MS: i64 = 1_000_000;

/// A recording with a 30 Hz depth stream and a 200 Hz gyro (no two frames at the same time).
fn recording(dir: &std::path::Path) -> std::path::PathBuf {
    let device = Device {
        additional_info: vec![],
        file_version: 4,
        info: vec![("Name".into(), "test".into())],
        sensors: vec![
            Sensor {
                index: 0,
                info: vec![("Name".into(), "Stereo Module".into())],
                options: vec![],
                streams: vec![StreamProfile {
                    stream: "depth".into(),
                    index: 0,
                    format: "z16".into(),
                    fps: 30,
                    intrinsics: Some(Intrinsics {
                        width: 4,
                        height: 2,
                        model: "brown_conrady".into(),
                        coeffs: vec![0.0; 5],
                        ..Intrinsics::default()
                    }),
                    ..StreamProfile::default()
                }],
            },
            Sensor {
                index: 1,
                info: vec![("Name".into(), "Motion Module".into())],
                options: vec![],
                streams: vec![StreamProfile {
                    stream: "gyro".into(),
                    index: 0,
                    format: "motion_xyz32f".into(),
                    fps: 200,
                    motion_intrinsics: Some(MotionIntrinsics::default()),
                    ..StreamProfile::default()
                }],
            },
        ],
    };
    let path = dir.join("synthetic.bag");
    let mut w = RecordingWriter::create(&path, &device, CompressionFormat::Lz4).unwrap();
    let mut frames = Vec::new();
    for k in 0..30u64 {
        frames.push((10 * MS + k as i64 * 33 * MS, 0, "depth", k + 1));
    }
    for k in 0..200u64 {
        frames.push((10 * MS + 1 + k as i64 * 5 * MS, 1, "gyro", k + 1));
    }
    frames.sort();
    for (t, sensor, stream, number) in frames {
        let payload = if stream == "depth" {
            Payload::Video {
                width: 4,
                height: 2,
                stride: 8,
                format: "z16".into(),
                data: bytes::Bytes::from(vec![number as u8; 16]),
            }
        } else {
            Payload::Motion {
                xyz: [number as f64, 0.0, 0.0],
            }
        };
        w.write_frame(&Frame {
            sensor,
            stream: stream.into(),
            index: 0,
            number,
            timestamp_ms: t as f64 / 1e6,
            domain: "hardware_clock".into(),
            recorded_ns: t,
            metadata: vec![("frame_counter".into(), number as i64)],
            payload,
        })
        .unwrap();
    }
    w.finish().unwrap();
    path
}

/// (steady ns when delivered, stream, number, recorded ns)
type Log = Arc<Mutex<Vec<(i64, String, u64, i64)>>>;

struct Rig {
    time: VirtualTimeSource,
    handle: PlaybackHandle,
    log: Log,
    thread: std::thread::JoinHandle<()>,
    start: i64,
}

fn rig(path: &std::path::Path, speed: f64, setup: impl FnOnce(&mut Playback)) -> Rig {
    let time = VirtualTimeSource::new(0);
    let rec = Recording::open(path).unwrap();
    let start = rec.time_range().0;
    let clock = Arc::new(
        TimeControllerClock::with_source(
            Time::ros(start),
            TimeControllerConfig {
                rate: rosbag2_rs_clock::PlaybackRate::new(speed).unwrap(),
                start_paused: false,
                clock_publish_frequency: 0.0,
            },
            time.as_source(),
        )
        .unwrap(),
    );
    let mut playback = Playback::new(rec, clock);
    setup(&mut playback);
    let handle = playback.handle();
    let log: Log = Arc::default();
    let (l, t) = (log.clone(), time.clone());
    let thread = std::thread::spawn(move || {
        while let Some(f) = playback.next_frame().unwrap() {
            l.lock()
                .unwrap()
                .push((t.now_nanos(), f.stream, f.number, f.recorded_ns));
        }
    });
    Rig {
        time,
        handle,
        log,
        thread,
        start,
    }
}

impl Rig {
    fn delivered(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// Advances virtual time while the playback waits, calling `hook` each time it is settled,
    /// until playback ends.
    fn drive(self, mut hook: impl FnMut(&Rig)) -> (Vec<(i64, String, u64, i64)>, i64) {
        let give_up = std::time::Instant::now() + StdDuration::from_secs(120);
        while !self.thread.is_finished() {
            assert!(
                std::time::Instant::now() < give_up,
                "playback did not complete"
            );
            if self.time.wait_settled(1, StdDuration::from_millis(20)) {
                hook(&self);
                if self.time.wait_settled(1, StdDuration::from_millis(20)) {
                    self.time.advance_to_next_deadline();
                }
            }
        }
        self.thread.join().unwrap();
        let log = self.log.lock().unwrap().clone();
        (log, self.start)
    }
}

fn all_frames(path: &std::path::Path) -> Vec<(String, u64, i64)> {
    let mut rec = Recording::open(path).unwrap();
    std::iter::from_fn(|| rec.next_frame().unwrap())
        .map(|f| (f.stream, f.number, f.recorded_ns))
        .collect()
}

fn frames(log: &[(i64, String, u64, i64)]) -> Vec<(String, u64, i64)> {
    log.iter().map(|(_, s, n, t)| (s.clone(), *n, *t)).collect()
}

#[test]
fn real_time_follows_the_recording_at_every_speed_with_every_frame_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path());
    let expected = all_frames(&path);
    assert_eq!(expected.len(), 230);
    for speed in [0.5, 1.0, 2.0] {
        let (log, start) = rig(&path, speed, |_| {}).drive(|_| {});
        assert_eq!(frames(&log), expected, "speed {speed}");
        for (steady, _, _, recorded) in &log {
            let due = ((recorded - start) as f64 / speed).round() as i64;
            assert!(
                (steady - due).abs() <= 1,
                "speed {speed}: {steady} vs {due}"
            );
        }
    }
}

#[test]
fn pause_and_resume_lose_and_repeat_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path());
    let mut paused_at = None;
    let (log, _) = rig(&path, 1.0, |_| {}).drive(|rig| {
        let now = rig.time.now_nanos();
        match paused_at {
            None if rig.delivered() >= 50 => {
                rig.handle.pause().unwrap();
                assert_eq!(rig.handle.status(), Status::Paused);
                paused_at = Some((now, rig.delivered()));
            }
            Some((at, count))
                if now - at >= 1_000 * MS && rig.handle.status() == Status::Paused =>
            {
                assert_eq!(rig.delivered(), count, "a frame was delivered while paused");
                rig.handle.resume().unwrap();
            }
            _ => {}
        }
    });
    assert_eq!(
        frames(&log),
        all_frames(&path),
        "every frame once, in order"
    );
    // The frame after the pause came a second later than its schedule.
    let (at, count) = paused_at.unwrap();
    assert!(log[count].0 >= at + 1_000 * MS, "{:?}", log[count]);
}

#[test]
fn seeking_back_and_forward_continues_from_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path());
    let expected = all_frames(&path);
    let mut seeks = 0;
    let (log, start) = rig(&path, 1.0, |_| {}).drive(|rig| {
        if seeks == 0 && rig.delivered() == 100 {
            rig.handle.seek(0).unwrap();
            seeks = 1;
        } else if seeks == 1 && rig.delivered() == 150 {
            rig.handle.seek(800 * MS).unwrap();
            seeks = 2;
        }
    });
    let got = frames(&log);
    assert_eq!(got[..100], expected[..100]);
    assert_eq!(got[100..150], expected[..50], "after seeking to the start");
    let after = expected
        .iter()
        .position(|f| f.2 >= start + 800 * MS)
        .unwrap();
    assert_eq!(got[150..], expected[after..], "after seeking forward");
}

#[test]
fn non_real_time_delivers_everything_without_waiting_and_filters_streams() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path());
    let (log, _) = rig(&path, 1.0, |p| {
        p.set_real_time(false);
        p.set_filter(|stream, _| stream == "depth");
    })
    .drive(|_| {});
    let depth: Vec<_> = all_frames(&path)
        .into_iter()
        .filter(|f| f.0 == "depth")
        .collect();
    assert_eq!(frames(&log), depth);
    assert!(
        log.iter().all(|(steady, ..)| *steady == 0),
        "no virtual time passed"
    );
}
