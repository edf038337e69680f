//! `convert`'s progress line on stderr, only when stderr is a terminal: bytes written, rate, the
//! input's size and messages, and an ETA. The storage's `convert` has no progress callback, so the
//! line follows the output's size on disk, polled a few times a second; the share done and the ETA
//! assume the output grows like the input (a change of compression makes them estimates).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const EVERY: Duration = Duration::from_millis(333);

/// The progress line of one conversion; dropping it ends the line.
pub struct ConvertProgress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Bytes of the files at `path` (a file, or a directory and everything under it).
fn bytes_at(path: &Path) -> u64 {
    let Ok(meta) = std::fs::metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| bytes_at(&e.path())).sum())
        .unwrap_or(0)
}

/// What is known of the input before converting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputSize {
    /// Bytes on disk.
    pub bytes: u64,
    /// Messages, from the bags' metadata.
    pub messages: u64,
}

impl InputSize {
    /// The size of `inputs` (0 messages where their metadata cannot be read).
    pub fn of(inputs: &[PathBuf]) -> Self {
        let messages = rosbag2_rs_storage::SequentialReader::open_many(inputs)
            .map(|r| r.topics().iter().map(|t| t.message_count).sum())
            .unwrap_or(0);
        Self {
            bytes: inputs.iter().map(|p| bytes_at(p)).sum(),
            messages,
        }
    }
}

/// The line for `written` bytes after `elapsed`.
pub fn line(written: u64, elapsed: Duration, input: InputSize) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    let rate = written as f64 / elapsed.as_secs_f64().max(1e-3);
    let share = if input.bytes == 0 {
        0.0
    } else {
        (written as f64 / input.bytes as f64).min(1.0)
    };
    let eta = if rate > 0.0 && share > 0.0 {
        let left = input.bytes.saturating_sub(written) as f64 / rate;
        format!("ETA {left:.0} s")
    } else {
        "ETA -".to_string()
    };
    format!(
        "converting {} messages: ~{:.0}% ({:.1} of {:.1} MB), {:.1} MB/s, {eta}",
        input.messages,
        share * 100.0,
        written as f64 / MB,
        input.bytes as f64 / MB,
        rate / MB,
    )
}

impl ConvertProgress {
    /// Starts the line for a conversion of `inputs` into `output`, when stderr is a terminal;
    /// `None` (quiet) otherwise.
    pub fn start(inputs: &[PathBuf], output: &Path) -> Option<Self> {
        Self::start_if(std::io::stderr().is_terminal(), inputs, output)
    }

    /// [`Self::start`] with the terminal test given.
    pub fn start_if(terminal: bool, inputs: &[PathBuf], output: &Path) -> Option<Self> {
        if !terminal {
            return None;
        }
        let input = InputSize::of(inputs);
        let output = output.to_path_buf();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut err = std::io::stderr();
            while !flag.load(Ordering::SeqCst) {
                std::thread::sleep(EVERY);
                let text = line(bytes_at(&output), started.elapsed(), input);
                let _ = write!(err, "\r\x1b[K{text}");
                let _ = err.flush();
            }
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        });
        Some(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for ConvertProgress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_unless_a_terminal_and_the_line_says_bytes_rate_and_eta() {
        let dir = std::env::temp_dir();
        assert!(ConvertProgress::start_if(false, &[], &dir).is_none());
        let input = InputSize {
            bytes: 100 * 1024 * 1024,
            messages: 1000,
        };
        assert_eq!(
            line(25 * 1024 * 1024, Duration::from_secs(5), input),
            "converting 1000 messages: ~25% (25.0 of 100.0 MB), 5.0 MB/s, ETA 15 s"
        );
        assert!(line(0, Duration::ZERO, input).ends_with("ETA -"));
    }
}
