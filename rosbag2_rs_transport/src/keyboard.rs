//! Keyboard controls for a terminal: single key presses (no Enter needed, no echo) delivered to a
//! handler on a background thread. Ctrl-C still raises SIGINT.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A key the controls understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// The space bar.
    Space,
    /// Left arrow.
    Left,
    /// Right arrow.
    Right,
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Any other printable key.
    Char(char),
}

/// Splits terminal input into keys; arrow keys arrive as `ESC [ A..D`.
#[derive(Debug, Default)]
pub struct KeyDecoder {
    pending: Vec<u8>,
}

impl KeyDecoder {
    /// Feeds one byte; returns a key when one is complete.
    pub fn push(&mut self, byte: u8) -> Option<Key> {
        self.pending.push(byte);
        let key = match self.pending.as_slice() {
            [0x1b] | [0x1b, b'['] | [0x1b, b'O'] => return None,
            [0x1b, b'[' | b'O', code] => match code {
                b'A' => Some(Key::Up),
                b'B' => Some(Key::Down),
                b'C' => Some(Key::Right),
                b'D' => Some(Key::Left),
                _ => None,
            },
            [b' '] => Some(Key::Space),
            [c] if c.is_ascii_graphic() => Some(Key::Char(*c as char)),
            _ => None,
        };
        self.pending.clear();
        key
    }
}

/// Reads keys from the terminal until dropped; dropping restores the terminal settings.
pub struct KeyboardControls {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    saved: libc::termios,
}

impl KeyboardControls {
    /// Starts reading keys from stdin and calls `handler` for each. Returns `None` when stdin is
    /// not a terminal (e.g. under `ros2 launch` or in a pipe).
    pub fn spawn(mut handler: impl FnMut(Key) + Send + 'static) -> Option<Self> {
        let fd = std::io::stdin().as_raw_fd();
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(fd) } != 1 {
            return None;
        }
        // SAFETY: termios is plain data, for which all zeros is a valid value.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: tcgetattr writes into the termios struct we own.
        if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return None;
        }
        let mut raw = saved;
        raw.c_lflag &= !(libc::ICANON | libc::ECHO);
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // SAFETY: tcsetattr reads the termios struct we own.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("keyboard".into())
            .spawn(move || {
                let mut decoder = KeyDecoder::default();
                let mut stdin = std::io::stdin();
                let mut byte = [0u8; 1];
                while !stopping.load(Ordering::Relaxed) {
                    let mut poll = libc::pollfd {
                        fd,
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd.
                    if unsafe { libc::poll(&mut poll, 1, 100) } <= 0 {
                        continue;
                    }
                    match stdin.read(&mut byte) {
                        Ok(1) => {
                            if let Some(key) = decoder.push(byte[0]) {
                                handler(key);
                            }
                        }
                        _ => break,
                    }
                }
            })
            .ok()?;
        Some(Self {
            stop,
            thread: Some(thread),
            saved,
        })
    }
}

impl Drop for KeyboardControls {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // SAFETY: tcsetattr reads the settings saved in `spawn`.
        unsafe { libc::tcsetattr(std::io::stdin().as_raw_fd(), libc::TCSANOW, &self.saved) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_keys_and_arrow_sequences() {
        let mut d = KeyDecoder::default();
        let keys: Vec<Key> = b" \x1b[C\x1b[A\x1b[Bq\x1b[D\x1bOC\x1b[Z\n"
            .iter()
            .filter_map(|b| d.push(*b))
            .collect();
        assert_eq!(
            keys,
            [
                Key::Space,
                Key::Right,
                Key::Up,
                Key::Down,
                Key::Char('q'),
                Key::Left,
                Key::Right
            ]
        );
    }
}
