//! The SDK 2.58+ rosbag2 `.db3` layout written by `RecordingWriter::create_db3` and by
//! `copy_recording` to a `*.db3` path reads back as it was written: device and sensor info,
//! options (the value at the start and a change at its time), profiles with fps and
//! intrinsics, extrinsics, and every frame (pixels of each format, motion samples, numbers,
//! timestamps, domains, metadata); a cut keeps the option's value from before it. What the
//! layout cannot hold is a typed error, or left out with a warning (log, time stream).
//! (pyrealsense2 plays these files in `tests/interop/test_realsense_copy.py`.)

use bytes::Bytes;
use realsense_bag_rs::*;
use rosbag2_rs_storage::CompressionFormat;

const MS: i64 = 1_000_000;
const W: u32 = 4;
const H: u32 = 3;

fn video(stream: &str, index: u32, format: &str) -> StreamProfile {
    StreamProfile {
        stream: stream.into(),
        index,
        format: format.into(),
        fps: 30,
        intrinsics: Some(Intrinsics {
            width: W,
            height: H,
            ppx: 2.25,
            ppy: 1.5,
            fx: 40.0,
            fy: 41.5,
            model: "brown_conrady".into(),
            coeffs: vec![0.1, -0.05, 0.001, 0.002, 0.0],
        }),
        extrinsics: Some(Extrinsics {
            reference: 1,
            transform: Transform {
                rotation: [0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                translation: [0.015, -0.002, index as f64 * 0.001],
            },
        }),
        ..StreamProfile::default()
    }
}

fn motion(stream: &str) -> StreamProfile {
    StreamProfile {
        stream: stream.into(),
        index: 0,
        format: "motion_xyz32f".into(),
        fps: 200,
        motion_intrinsics: Some(MotionIntrinsics {
            data: (0..12).map(|k| k as f64 * 0.25).collect(),
            noise_variances: vec![0.001, 0.002, 0.003],
            bias_variances: vec![0.004, 0.005, 0.006],
        }),
        ..StreamProfile::default()
    }
}

/// (format, bytes per pixel) of the video streams, one of each way the layout stores images.
const FORMATS: [(&str, u32); 7] = [
    ("z16", 2),
    ("y8", 1),
    ("rgb8", 3),
    ("bgr8", 3),
    ("bgra8", 4),
    ("y16", 2),
    ("yuyv", 2),
];

fn device() -> Device {
    let option = |name: &str, value: f32| SensorOption {
        name: name.into(),
        value,
        description: format!("{name} of the test"),
        history: vec![],
    };
    Device {
        file_version: 4,
        info: vec![
            ("Name".into(), "db3 test camera".into()),
            ("Serial Number".into(), "0123".into()),
        ],
        additional_info: vec![],
        sensors: vec![
            Sensor {
                index: 0,
                info: vec![("Name".into(), "Stereo Module".into())],
                options: vec![
                    option("Exposure", 8500.0),
                    option("Gain", 16.0),
                    option("Depth Units", 0.0001),
                ],
                streams: FORMATS
                    .iter()
                    .enumerate()
                    .map(|(k, (format, _))| {
                        video(if k == 0 { "depth" } else { "color" }, k as u32, format)
                    })
                    .collect(),
            },
            Sensor {
                index: 1,
                info: vec![("Name".into(), "Motion Module".into())],
                options: vec![option("Enable Motion Correction", 1.0)],
                streams: vec![motion("accel"), motion("gyro")],
            },
        ],
    }
}

/// The frames of `n` video periods: one per video stream and two samples per motion stream.
fn frames(n: u64) -> Vec<Frame> {
    let mut out = Vec::new();
    for i in 1..=n {
        let t = i as i64 * 33 * MS;
        for (k, (format, bpp)) in FORMATS.iter().enumerate() {
            let data: Vec<u8> = (0..W * H * bpp)
                .map(|j| (i as u32 * 7 + j * 3 + k as u32) as u8)
                .collect();
            out.push(Frame {
                sensor: 0,
                stream: if k == 0 { "depth" } else { "color" }.into(),
                index: k as u32,
                number: i,
                // Whole nanoseconds: what the .bag layout holds (a ROS 1 time).
                timestamp_ms: 1000.0 + i as f64 * 33.25,
                domain: "hardware_clock".into(),
                recorded_ns: t + k as i64 * 1000,
                metadata: vec![
                    ("frame_counter".into(), i as i64),
                    ("actual_fps".into(), 30),
                ],
                payload: Payload::Video {
                    width: W,
                    height: H,
                    stride: W * bpp,
                    format: format.to_string(),
                    data: Bytes::from(data),
                },
            });
        }
        for s in 0..2u64 {
            for (stream, scale) in [("accel", 9.81), ("gyro", 0.5)] {
                out.push(Frame {
                    sensor: 1,
                    stream: stream.into(),
                    index: 0,
                    number: (i - 1) * 2 + s + 1,
                    timestamp_ms: 1000.0 + ((i - 1) * 2 + s) as f64 * 5.0,
                    domain: "global_time".into(),
                    recorded_ns: t + 100_000 + s as i64 * 5 * MS + (stream == "gyro") as i64,
                    metadata: vec![],
                    payload: Payload::Motion {
                        xyz: [scale * i as f64, scale * s as f64, -scale],
                    },
                });
            }
        }
    }
    out
}

const CHANGE_NS: i64 = 66 * MS + 500_000;

fn write(path: &std::path::Path, events: &[Event]) {
    let mut w = RecordingWriter::create_db3(path, &device()).unwrap();
    for e in events {
        w.write_event(e).unwrap();
    }
    w.finish().unwrap();
}

fn events() -> Vec<Event> {
    let mut events: Vec<Event> = frames(4).into_iter().map(Event::Frame).collect();
    events.push(Event::Option(OptionChange {
        sensor: 0,
        name: "Exposure".into(),
        value: 999.0,
        recorded_ns: CHANGE_NS,
    }));
    events.push(Event::Notification(Notification {
        sensor: 0,
        category: "Frame Corrupted".into(),
        severity: "Warn".into(),
        description: "a test notification".into(),
        timestamp_ns: 1_500 * MS,
        serialized_data: "{\"frame\": 2}".into(),
        recorded_ns: CHANGE_NS + 1,
    }));
    events.sort_by_key(Event::recorded_ns);
    events
}

fn read_all(path: &std::path::Path) -> (Device, Vec<Event>) {
    let mut rec = Recording::open(path).unwrap();
    let device = rec.device().clone();
    let mut events = Vec::new();
    while let Some(e) = rec.next_event().unwrap() {
        events.push(e);
    }
    (device, events)
}

fn same_description(got: &Device, want: &Device) {
    assert_eq!(got.info, want.info);
    assert_eq!(got.sensors.len(), want.sensors.len());
    for (g, w) in got.sensors.iter().zip(&want.sensors) {
        assert_eq!((g.index, &g.info), (w.index, &w.info));
        let names = |s: &Sensor| s.options.iter().map(|o| o.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(g), names(w));
        for (a, b) in g.options.iter().zip(&w.options) {
            assert_eq!(
                (a.value, &a.description),
                (b.value, &b.description),
                "{}",
                a.name
            );
        }
        let key = |p: &StreamProfile| (p.stream.clone(), p.index);
        let mut gs = g.streams.clone();
        gs.sort_by_key(key);
        let mut ws = w.streams.clone();
        ws.sort_by_key(key);
        assert_eq!(gs.len(), ws.len());
        for (a, b) in gs.iter().zip(&ws) {
            assert_eq!((&a.format, a.fps), (&b.format, b.fps), "{}", a.stream);
            let (ai, bi) = (a.intrinsics.as_ref(), b.intrinsics.as_ref());
            assert_eq!(
                ai.map(|i| (i.width, i.height)),
                bi.map(|i| (i.width, i.height))
            );
            if let (Some(ai), Some(bi)) = (ai, bi) {
                for (x, y) in [
                    (ai.fx, bi.fx),
                    (ai.fy, bi.fy),
                    (ai.ppx, bi.ppx),
                    (ai.ppy, bi.ppy),
                ] {
                    assert_eq!(x as f32, y as f32);
                }
                assert_eq!(ai.model, bi.model);
                let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
                assert_eq!(f32s(&ai.coeffs), f32s(&bi.coeffs));
            }
            let m = |p: &StreamProfile| {
                p.motion_intrinsics.as_ref().map(|m| {
                    [&m.data, &m.noise_variances, &m.bias_variances]
                        .map(|v| v.iter().map(|&x| x as f32).collect::<Vec<_>>())
                })
            };
            assert_eq!(m(a), m(b));
            // Within a millionth (a .bag holds the rotation as a quaternion).
            let e = |p: &StreamProfile| {
                let micro = |x: f64| (x * 1e6).round() as i64;
                p.extrinsics.map(|e| {
                    (
                        e.reference,
                        e.transform.rotation.map(micro),
                        e.transform.translation.map(micro),
                    )
                })
            };
            assert_eq!(e(a), e(b), "{} {}", a.stream, a.index);
        }
    }
}

#[test]
fn a_db3_recording_reads_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.db3");
    let written = events();
    write(&path, &written);
    let (device, read) = read_all(&path);
    same_description(&device, &self::device());
    // The change is the option's history; the start value stays.
    let exposure = &device.sensors[0].options[0];
    assert_eq!(
        (exposure.value, &exposure.history),
        (8500.0, &vec![(CHANGE_NS, 999.0)])
    );
    assert_eq!(read, written);
}

#[test]
fn copies_to_db3_keep_everything_and_cuts_keep_the_value_before_them() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.db3");
    let written = events();
    write(&source, &written);
    // From a .bag too: the same recording in the ROS 1 layout first.
    let bag = dir.path().join("source.bag");
    let mut w = RecordingWriter::create(&bag, &device(), CompressionFormat::Lz4).unwrap();
    for e in &written {
        w.write_event(e).unwrap();
    }
    w.finish().unwrap();
    for (name, input) in [("db3", &source), ("bag", &bag)] {
        let copy = dir.path().join(format!("copy_of_{name}.db3"));
        let report = copy_recording(input, &copy, &CopyOptions::default()).unwrap();
        assert_eq!(report.frames, frames(4).len() as u64, "{name}");
        let (device, read) = read_all(&copy);
        same_description(&device, &self::device());
        assert_eq!(read, written, "{name}");
        // Cut after the change: Exposure starts at 999, the frames from the cut on, moved back.
        let cut = dir.path().join(format!("cut_of_{name}.db3"));
        let start = 99 * MS - 1;
        copy_recording(
            input,
            &cut,
            &CopyOptions {
                start_ns: Some(start),
                ..CopyOptions::default()
            },
        )
        .unwrap();
        let (device, read) = read_all(&cut);
        assert_eq!(device.sensors[0].options[0].value, 999.0, "{name}");
        let kept: Vec<Event> = written
            .iter()
            .filter(|e| matches!(e, Event::Frame(_)) && e.recorded_ns() >= start)
            .cloned()
            .map(|mut e| {
                if let Event::Frame(f) = &mut e {
                    f.recorded_ns -= start - 2;
                }
                e
            })
            .collect();
        assert_eq!(read, kept, "{name}");
    }
}

#[test]
fn what_the_layout_cannot_hold_is_refused_or_left_out() {
    let dir = tempfile::tempdir().unwrap();
    // Pose frames: the SDK's .db3 layout has none.
    let mut pose = device();
    pose.sensors[1].streams.push(StreamProfile {
        stream: "pose".into(),
        format: "6dof".into(),
        fps: 200,
        ..StreamProfile::default()
    });
    let path = dir.path().join("pose.db3");
    let e = RecordingWriter::create_db3(&path, &pose).err().unwrap();
    assert!(
        matches!(&e, RealSenseError::Unsupported { what, .. } if what.contains("pose")),
        "{e}"
    );
    assert!(!path.exists());
    // An existing file is not overwritten.
    let path = dir.path().join("exists.db3");
    std::fs::write(&path, b"keep").unwrap();
    assert!(RecordingWriter::create_db3(&path, &device()).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"keep");
    // An image shorter than its size says: a typed image error naming the topic.
    let path = dir.path().join("short.db3");
    let mut w = RecordingWriter::create_db3(&path, &device()).unwrap();
    let mut f = frames(1).remove(1);
    f.payload = Payload::Video {
        width: W,
        height: H,
        stride: W,
        format: "y8".into(),
        data: Bytes::from_static(&[1, 2, 3]),
    };
    let e = w.write_frame(&f).err().unwrap();
    assert!(
        matches!(&e, RealSenseError::Image { topic, .. } if topic.contains("Color_1")),
        "{e}"
    );
    // A sensor without options (SDK 2.59 crashes loading such a .db3 sensor) gets the frame
    // queue size every SDK sensor has.
    let mut bare = device();
    bare.sensors[1].options.clear();
    let path = dir.path().join("bare.db3");
    RecordingWriter::create_db3(&path, &bare)
        .unwrap()
        .finish()
        .unwrap();
    let (read, _) = read_all(&path);
    let options: Vec<(&str, f32)> = read.sensors[1]
        .options
        .iter()
        .map(|o| (o.name.as_str(), o.value))
        .collect();
    assert_eq!(options, [("Frames Queue Size", 16.0)]);
    // Log lines and time samples: no topic in the layout, left out.
    w.write_event(&Event::Log(LogMessage {
        level: 2,
        name: "test".into(),
        msg: "hello".into(),
        recorded_ns: 5 * MS,
    }))
    .unwrap();
    w.finish().unwrap();
    let (_, read) = read_all(&path);
    assert!(read.is_empty(), "{read:?}");
}
