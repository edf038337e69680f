//! Option values over time: the recording writer records an option set while recording as the
//! SDK's recorder does; the reader gives its history and an event in the frame stream; playback
//! applies it at its time; a copy cut after it starts with the new value.

use std::sync::Arc;

use realsense_bag_rs::*;
use rosbag2_rs_clock::{Time, TimeControllerClock, TimeControllerConfig, VirtualTimeSource};
use rosbag2_rs_storage::CompressionFormat;

const MS: i64 = 1_000_000;

fn device() -> Device {
    Device {
        additional_info: vec![("program".into(), "options test".into())],
        file_version: 4,
        info: vec![("Name".into(), "options test".into())],
        sensors: vec![Sensor {
            index: 0,
            info: vec![("Name".into(), "Stereo Module".into())],
            options: vec![
                SensorOption {
                    name: "Exposure".into(),
                    value: 8500.0,
                    description: "Depth exposure".into(),
                    history: vec![],
                },
                SensorOption {
                    name: "Gain".into(),
                    value: 16.0,
                    description: "Gain".into(),
                    history: vec![],
                },
            ],
            streams: vec![StreamProfile {
                stream: "depth".into(),
                index: 0,
                format: "z16".into(),
                fps: 30,
                intrinsics: Some(Intrinsics {
                    width: 2,
                    height: 1,
                    model: "brown_conrady".into(),
                    coeffs: vec![0.0; 5],
                    ..Intrinsics::default()
                }),
                ..StreamProfile::default()
            }],
        }],
    }
}

fn frame(number: u64, recorded_ns: i64) -> Frame {
    Frame {
        sensor: 0,
        stream: "depth".into(),
        index: 0,
        number,
        timestamp_ms: recorded_ns as f64 / 1e6,
        domain: "hardware_clock".into(),
        recorded_ns,
        metadata: vec![],
        payload: Payload::Video {
            width: 2,
            height: 1,
            stride: 4,
            format: "z16".into(),
            data: bytes::Bytes::from(vec![number as u8; 4]),
        },
    }
}

/// Ten frames 33 ms apart; Exposure set to 999 at 150 ms (between frames 5 and 6) and Gain to
/// 32 then 48 at 200 and 250 ms.
fn record(path: &std::path::Path) {
    let mut w = RecordingWriter::create(path, &device(), CompressionFormat::Lz4).unwrap();
    let change = |name: &str, value: f32, t: i64| {
        Event::Option(OptionChange {
            sensor: 0,
            name: name.into(),
            value,
            recorded_ns: t,
        })
    };
    let mut events: Vec<Event> = (0..10)
        .map(|k| Event::Frame(frame(k + 1, 10 * MS + k as i64 * 33 * MS)))
        .collect();
    events.push(change("Exposure", 999.0, 150 * MS));
    events.push(change("Gain", 32.0, 200 * MS));
    events.push(change("Gain", 48.0, 250 * MS));
    events.sort_by_key(Event::recorded_ns);
    for e in &events {
        w.write_event(e).unwrap();
    }
    w.finish().unwrap();
}

fn option<'a>(device: &'a Device, name: &str) -> &'a SensorOption {
    device.sensors[0]
        .options
        .iter()
        .find(|o| o.name == name)
        .unwrap()
}

#[test]
fn the_reader_gives_each_options_history_and_its_changes_as_events() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("options.bag");
    record(&path);
    let mut rec = Recording::open(&path).unwrap();
    let exposure = option(rec.device(), "Exposure").clone();
    assert_eq!(exposure.value, 8500.0);
    assert_eq!(exposure.description, "Depth exposure");
    assert_eq!(exposure.history, vec![(150 * MS, 999.0)]);
    assert_eq!(exposure.value_at(150 * MS - 1), 8500.0);
    assert_eq!(exposure.value_at(150 * MS), 999.0);
    assert_eq!(
        option(rec.device(), "Gain").history,
        vec![(200 * MS, 32.0), (250 * MS, 48.0)]
    );
    // In the event stream, between the frames, at their time.
    let mut order = Vec::new();
    while let Some(e) = rec.next_event().unwrap() {
        order.push(match e {
            Event::Frame(f) => format!("frame {}", f.number),
            Event::Option(o) => format!("{}={}", o.name, o.value),
            Event::Notification(n) => n.category,
            other => format!("{other:?}"),
        });
    }
    assert_eq!(
        order.join(", "),
        "frame 1, frame 2, frame 3, frame 4, frame 5, Exposure=999, frame 6, Gain=32, frame 7, \
         frame 8, Gain=48, frame 9, frame 10"
    );
    // Frames alone, as before.
    rec.rewind().unwrap();
    let numbers: Vec<u64> = rec.by_ref().map(|f| f.unwrap().number).collect();
    assert_eq!(numbers, (1..=10).collect::<Vec<_>>());
    // The device as at 210 ms: Exposure 999 and Gain 32 from the start, Gain's last change left.
    let at = rec.device().at(210 * MS);
    assert_eq!(option(&at, "Exposure").value, 999.0);
    assert!(option(&at, "Exposure").history.is_empty());
    assert_eq!(option(&at, "Gain").value, 32.0);
    assert_eq!(option(&at, "Gain").history, vec![(250 * MS, 48.0)]);
}

#[test]
fn playback_applies_option_changes_at_their_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("options.bag");
    record(&path);
    let rec = Recording::open(&path).unwrap();
    let start = rec.time_range().0;
    let clock = Arc::new(
        TimeControllerClock::with_source(
            Time::ros(start),
            TimeControllerConfig {
                rate: rosbag2_rs_clock::PlaybackRate::REAL_TIME,
                start_paused: false,
                clock_publish_frequency: 0.0,
            },
            VirtualTimeSource::new(0).as_source(),
        )
        .unwrap(),
    );
    let mut playback = Playback::new(rec, clock);
    playback.set_real_time(false);
    let handle = playback.handle();
    assert_eq!(handle.option(0, "Exposure"), Some(8500.0));
    assert_eq!(handle.option(0, "Missing"), None);
    let mut seen = Vec::new();
    while let Some(f) = playback.next_frame().unwrap() {
        seen.push((
            f.number,
            handle.option(0, "Exposure").unwrap(),
            handle.option(0, "Gain").unwrap(),
        ));
    }
    assert_eq!(seen[4], (5, 8500.0, 16.0));
    assert_eq!(seen[5], (6, 999.0, 16.0));
    assert_eq!(seen[6], (7, 999.0, 32.0));
    assert_eq!(seen[9], (10, 999.0, 48.0));
    // A seek back restores the values of that time.
    handle.seek(0).unwrap();
    let f = playback.next_frame().unwrap().unwrap();
    assert_eq!(f.number, 1);
    assert_eq!(handle.option(0, "Exposure"), Some(8500.0));
    assert_eq!(handle.option(0, "Gain"), Some(16.0));
}

#[test]
fn a_copy_cut_after_a_change_starts_with_the_new_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("options.bag");
    record(&path);
    for (start, exposure, gain, gain_changes) in [
        (None, 8500.0, 16.0, 2),
        (Some(140 * MS), 8500.0, 16.0, 2),
        (Some(160 * MS), 999.0, 16.0, 2),
        (Some(210 * MS), 999.0, 32.0, 1),
    ] {
        let out = dir.path().join(format!("cut_{start:?}.bag"));
        let report = copy_bag(
            &path,
            &out,
            &CopyOptions {
                start_ns: start,
                ..CopyOptions::default()
            },
        )
        .unwrap();
        let rec = Recording::open(&out).unwrap();
        let d = rec.device();
        assert_eq!(option(d, "Exposure").value, exposure, "{start:?}");
        assert_eq!(option(d, "Gain").value, gain, "{start:?}");
        assert_eq!(option(d, "Gain").history.len(), gain_changes, "{start:?}");
        assert_eq!(option(d, "Exposure").description, "Depth exposure");
        let first =
            10 * MS + 33 * MS * ((start.unwrap_or(0) - 10 * MS + 33 * MS - 1) / (33 * MS)).max(0);
        let frames: Vec<Frame> = Recording::open(&out).unwrap().map(Result::unwrap).collect();
        assert_eq!(report.frames, frames.len() as u64);
        assert_eq!(frames[0].timestamp_ms, first as f64 / 1e6, "{start:?}");
        // Moved back by the cut: the copy starts at the cut.
        if let Some(s) = start {
            assert_eq!(frames[0].recorded_ns, first - s + 2);
        }
    }
}
