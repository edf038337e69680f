//! `play`: a bag onto the ROS 2 graph with time control; a RealSense recording plays in the
//! realsense2_camera layout, converted first.

use std::path::PathBuf;

use anyhow::Result;
use rosbag2_rs_storage::BagWriterOptions;
use rosbag2_rs_transport::{run_play, PlayArgs};
use rosbag2_rs_transport_lib::DeclaredParameter;

/// Runs `play` on a node in `namespace` that declares `parameters`.
pub fn run(mut args: PlayArgs, namespace: &str, parameters: Vec<DeclaredParameter>) -> Result<()> {
    let converted = realsense_input(&args.input.bags)?;
    if let Some(dir) = &converted {
        args.input.bags = vec![dir.path().join("bag")];
    }
    run_play(&args, namespace, parameters)
}

/// When the only input is a RealSense recording, its realsense2_camera-layout conversion in a
/// temporary directory (removed when dropped).
fn realsense_input(bags: &[PathBuf]) -> Result<Option<TempDir>> {
    let [input] = bags else {
        return Ok(None);
    };
    if !realsense_bag_rs::is_recording(input) {
        return Ok(None);
    }
    let dir = TempDir::new()?;
    log::info!(
        "{}: a RealSense recording; converting it to the realsense2_camera layout first",
        input.display()
    );
    realsense_bag_rs::bridge::convert(
        input,
        BagWriterOptions {
            uri: dir.path().join("bag"),
            ..Default::default()
        },
    )?;
    Ok(Some(dir))
}

/// A directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!("ros2bag-rs-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(Self(path))
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
