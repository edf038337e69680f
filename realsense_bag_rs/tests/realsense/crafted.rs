//! A crafted RealSense recording: a frame whose PNG header claims gigapixels (issue 48). Also
//! written for the command-line proof by the `crafted_png_bomb` example.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use realsense_bag_rs::*;

/// A RealSense SDK `.db3` recording (2.58 and newer) of one 4 x 2 colour frame whose PNG
/// header claims 60000 x 60000 pixels (3.6 Gpx, its CRC fixed): decoding it (`convert`, which
/// bridges RealSense recordings) sized its buffer from the header. Refused by the pixel budget
/// (`ROSBAG2_RS_MAX_IMAGE_PIXELS`).
pub fn png_bomb(dir: &Path) -> PathBuf {
    let stream = StreamProfile {
        stream: "color".into(),
        format: "rgb8".into(),
        fps: 30,
        intrinsics: Some(Intrinsics {
            width: 4,
            height: 2,
            model: "brown_conrady".into(),
            coeffs: vec![0.0; 5],
            ..Intrinsics::default()
        }),
        ..StreamProfile::default()
    };
    let device = Device {
        file_version: 4,
        info: vec![("Name".into(), "crafted".into())],
        sensors: vec![Sensor {
            index: 0,
            info: vec![("Name".into(), "RGB Camera".into())],
            options: vec![],
            streams: vec![stream],
        }],
        ..Device::default()
    };
    let path = dir.join("realsense_png_bomb.db3");
    let mut writer = RecordingWriter::create_db3(&path, &device).unwrap();
    writer
        .write_frame(&Frame {
            sensor: 0,
            stream: "color".into(),
            index: 0,
            number: 1,
            timestamp_ms: 33.0,
            domain: "hardware_clock".into(),
            recorded_ns: 33_000_000,
            metadata: vec![],
            payload: Payload::Video {
                width: 4,
                height: 2,
                stride: 12,
                format: "rgb8".into(),
                data: Bytes::from(vec![7u8; 24]),
            },
        })
        .unwrap();
    writer.finish().unwrap();
    let mut data = std::fs::read(&path).unwrap();
    let signature = b"\x89PNG\r\n\x1a\n";
    let at = data
        .windows(signature.len())
        .position(|w| w == signature)
        .expect("the frame's PNG")
        + signature.len();
    assert_eq!(&data[at + 4..at + 8], b"IHDR");
    data[at + 8..at + 12].copy_from_slice(&60_000u32.to_be_bytes());
    data[at + 12..at + 16].copy_from_slice(&60_000u32.to_be_bytes());
    let crc = crc32fast::hash(&data[at + 4..at + 21]);
    data[at + 21..at + 25].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(&path, data).unwrap();
    path
}

/// A RealSense `.db3` recording whose PNG frame claims 60000 x 60000 pixels (28 KB): its
/// frame is refused by the pixel budget, naming it, before its pixels are allocated.
#[test]
fn a_realsense_png_frame_claiming_gigapixels_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = png_bomb(dir.path());
    assert!(std::fs::metadata(&path).unwrap().len() < 32 << 10);
    let mut recording = Recording::open(&path).unwrap();
    let err = loop {
        match recording.next_frame() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the frame was read"),
            Err(e) => break e,
        }
    };
    let text = format!("{err:#}");
    assert!(text.contains("60000 x 60000"), "{text}");
    assert!(text.contains("ROSBAG2_RS_MAX_IMAGE_PIXELS"), "{text}");
}
