//! Reads a RealSense recording (either format) and writes it again with `RecordingWriter`
//! (frames, option changes, notifications) as a ROS 1 `.bag`, or in the SDK's rosbag2 layout
//! when OUT ends in `.db3`: the SDK should play the copy exactly as the original.
//!
//! `cargo run -p realsense_bag_rs --example rs_rewrite -- IN OUT.bag|OUT.db3 [lz4|none]`

use rosbag2_rs_storage::CompressionFormat;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        return Err("usage: rs_rewrite IN OUT.bag|OUT.db3 [lz4|none]".into());
    };
    let compression = CompressionFormat::parse(args.get(3).map_or("lz4", String::as_str))?;
    let mut rec = realsense_bag_rs::Recording::open(input.as_ref())?;
    let mut out = realsense_bag_rs::RecordingWriter::create_for_path(
        output.as_ref(),
        &rec.device().clone(),
        compression,
    )?;
    while let Some(event) = rec.next_event()? {
        out.write_event(&event)?;
    }
    out.finish()?;
    Ok(())
}
