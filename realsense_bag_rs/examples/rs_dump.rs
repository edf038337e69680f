//! Prints a RealSense recording as JSON in the shape `tests/realsense/sdk_peer.py dump` prints
//! the SDK's own playback of it, so the two can be compared field by field.
//!
//! `cargo run -p realsense_bag_rs --example rs_dump -- FILE`

use serde_json::{json, Map, Value};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: rs_dump FILE")?;
    let mut rec = realsense_bag_rs::Recording::open(path.as_ref())?;
    let device = rec.device().clone();
    let info: Map<String, Value> = device
        .info
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase().replace(' ', "_"), json!(v)))
        .collect();
    let sensors: Vec<Value> = device
        .sensors
        .iter()
        .map(|s| {
            let options: Map<String, Value> = s
                .options
                .iter()
                .map(|o| (o.name.clone(), json!({"value": o.value, "description": o.description})))
                .collect();
            let profiles: Vec<Value> = s
                .streams
                .iter()
                .map(|p| {
                    let mut v = json!({"stream": p.stream, "index": p.index, "format": p.format, "fps": p.fps});
                    if let Some(i) = &p.intrinsics {
                        v["width"] = json!(i.width);
                        v["height"] = json!(i.height);
                        v["intrinsics"] = json!({"ppx": i.ppx, "ppy": i.ppy, "fx": i.fx, "fy": i.fy, "model": i.model, "coeffs": i.coeffs});
                    }
                    if let Some(m) = &p.motion_intrinsics {
                        let rows: Vec<&[f64]> = m.data.chunks(4).collect();
                        v["motion_intrinsics"] = json!({"data": rows, "noise_variances": m.noise_variances, "bias_variances": m.bias_variances});
                    }
                    v
                })
                .collect();
            json!({"name": s.name(), "options": options, "profiles": profiles})
        })
        .collect();
    let streams: Vec<(String, u32)> = device
        .sensors
        .iter()
        .flat_map(|s| &s.streams)
        .map(|p| (p.stream.clone(), p.index))
        .collect();
    let mut extrinsics = Vec::new();
    for a in &streams {
        for b in &streams {
            if let Some(t) = device.extrinsics((&a.0, a.1), (&b.0, b.1)) {
                extrinsics.push(json!({"from": [a.0, a.1], "to": [b.0, b.1], "rotation": t.rotation, "translation": t.translation}));
            }
        }
    }
    let mut frames = Vec::new();
    while let Some(f) = rec.next_frame()? {
        let metadata: Map<String, Value> = f
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let mut v = json!({"stream": f.stream, "index": f.index, "number": f.number,
                           "timestamp": f.timestamp_ms, "domain": f.domain, "metadata": metadata});
        match &f.payload {
            realsense_bag_rs::Payload::Video {
                width,
                height,
                stride,
                format,
                data,
            } => {
                v["format"] = json!(format);
                v["width"] = json!(width);
                v["height"] = json!(height);
                v["stride"] = json!(stride);
                v["crc32"] = json!(crc32fast::hash(data));
            }
            realsense_bag_rs::Payload::Motion { xyz } => {
                let format = device.profile(&f.stream, f.index).map(|p| p.format.clone());
                v["format"] = json!(format);
                v["xyz"] = json!(xyz);
            }
            realsense_bag_rs::Payload::Pose(p) => {
                // pyrealsense2 names RS2_FORMAT_6DOF `six_dof`.
                v["format"] = json!("six_dof");
                v["pose"] = json!({
                    "translation": p.translation, "rotation": p.rotation, "velocity": p.velocity,
                    "angular_velocity": p.angular_velocity, "acceleration": p.acceleration,
                    "angular_acceleration": p.angular_acceleration,
                    "tracker_confidence": p.tracker_confidence, "mapper_confidence": p.mapper_confidence,
                });
            }
        }
        frames.push(v);
    }
    println!(
        "{}",
        json!({"info": info, "file_version": device.file_version, "sensors": sensors, "extrinsics": extrinsics, "frames": frames})
    );
    Ok(())
}
