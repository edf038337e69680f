//! Writes the crafted RealSense recording of the tests (`tests/realsense/crafted.rs`: a PNG frame
//! claiming 60000 x 60000 pixels) into a directory and adds its line to the directory's
//! `manifest.tsv` (as `rosbag2_rs_tools`'s `crafted_files` example writes it), for
//! `tools/hostile_cli.sh`.
//!
//! `cargo run -p realsense_bag_rs --example crafted_png_bomb -- DIR`

#[allow(dead_code)]
#[path = "../tests/realsense/crafted.rs"]
mod crafted;

use std::io::Write;
use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: crafted_png_bomb DIR");
        std::process::exit(2);
    };
    std::fs::create_dir_all(&dir).expect("create the directory");
    let path = crafted::png_bomb(&dir);
    let mut manifest = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("manifest.tsv"))
        .expect("open manifest.tsv");
    writeln!(
        manifest,
        "{}\t{}\t/device_0/sensor_0/Color_0/image/data/compressed\t-\tROSBAG2_RS_MAX_IMAGE_PIXELS",
        path.file_name().unwrap().to_string_lossy(),
        path.display()
    )
    .expect("write manifest.tsv");
}
