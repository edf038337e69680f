//! A video from exported frames, made by the `ffmpeg` program when it is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::ExportError;

/// The `ffmpeg` on the `PATH` (or named by `FFMPEG`), or [`ExportError::FfmpegMissing`].
pub fn find_ffmpeg() -> Result<PathBuf, ExportError> {
    if let Some(path) = std::env::var_os("FFMPEG").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("ffmpeg"))
        .find(|p| p.is_file())
        .ok_or(ExportError::FfmpegMissing)
}

/// Encodes `frames` (numbered files `frame_NNNNNN.ext` in one directory) at `rate` frames per
/// second into `video` (H.264 in the container its extension names).
pub fn make_video(frames: &[PathBuf], rate: f64, video: &Path) -> Result<(), ExportError> {
    let ffmpeg = find_ffmpeg()?;
    let first = frames
        .first()
        .ok_or_else(|| ExportError::Ffmpeg("no frames".into()))?;
    let extension = first.extension().and_then(|e| e.to_str()).unwrap_or("png");
    let pattern = first
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("frame_%06d.{extension}"));
    let output = Command::new(&ffmpeg)
        .args(["-hide_banner", "-loglevel", "error", "-y", "-framerate"])
        .arg(format!("{rate:.6}"))
        .arg("-i")
        .arg(&pattern)
        .args([
            "-vf",
            "pad=ceil(iw/2)*2:ceil(ih/2)*2",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
        ])
        .arg(video)
        .output()
        .map_err(|e| ExportError::Ffmpeg(format!("{}: {e}", ffmpeg.display())))?;
    if !output.status.success() {
        return Err(ExportError::Ffmpeg(format!(
            "{} ({})",
            String::from_utf8_lossy(&output.stderr).trim(),
            output.status
        )));
    }
    Ok(())
}
