//! An append-only file sink for long sequential writes (bags of large messages).
//!
//! Plain buffered writes let dirty pages pile up until the kernel throttles the writer hard,
//! which caps throughput well below the disk's. This sink hands the kernel large blocks, starts
//! writeback of each window as soon as it is complete (`sync_file_range`), waits for the window
//! before it and drops those clean pages from the cache. Dirty data stays bounded to about two
//! windows, the writer runs at the disk's pace, and everything written is in the kernel (so it
//! survives the process being killed) as soon as a block is handed over.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;

use parking_lot::Mutex;

/// Small writes are gathered up to this size before they go to the kernel.
const BUFFER: usize = 1 << 20;
/// Writes at least this large bypass the buffer.
const DIRECT: usize = 128 << 10;
/// Writeback is started for every window of this many bytes.
const WINDOW: u64 = 16 << 20;

/// The sink; see the module documentation.
pub struct BlockFile {
    file: File,
    buffer: Vec<u8>,
    /// Bytes handed to the kernel.
    written: u64,
    /// Start of the window whose writeback has been started but not waited for.
    kicked: u64,
    /// Everything below this offset is on disk and dropped from the cache.
    settled: u64,
    writeback: bool,
}

impl BlockFile {
    /// Wraps a newly created, empty file.
    pub fn new(file: File) -> Self {
        Self {
            file,
            buffer: Vec::with_capacity(BUFFER),
            written: 0,
            kicked: 0,
            settled: 0,
            writeback: true,
        }
    }

    /// The logical file size: bytes written, including those still buffered.
    pub fn position(&self) -> u64 {
        self.written + self.buffer.len() as u64
    }

    /// Writes buffered bytes to the kernel and waits until the whole file is on disk.
    pub fn sync(&mut self) -> io::Result<()> {
        self.drain_buffer()?;
        self.file.sync_data()
    }

    /// Hands buffered bytes to the kernel, after which they survive the process being killed.
    pub fn drain_buffer(&mut self) -> io::Result<()> {
        if !self.buffer.is_empty() {
            self.file.write_all(&self.buffer)?;
            self.written += self.buffer.len() as u64;
            self.buffer.clear();
            self.start_writeback();
        }
        Ok(())
    }

    fn write_direct(&mut self, data: &[u8]) -> io::Result<()> {
        self.file.write_all(data)?;
        self.written += data.len() as u64;
        self.start_writeback();
        Ok(())
    }

    fn start_writeback(&mut self) {
        if !self.writeback || self.written - self.kicked < WINDOW {
            return;
        }
        let fd = self.file.as_raw_fd();
        // SAFETY: plain syscalls on a file descriptor we own, with in-range offsets.
        unsafe {
            if libc::sync_file_range(
                fd,
                self.kicked as i64,
                (self.written - self.kicked) as i64,
                libc::SYNC_FILE_RANGE_WRITE,
            ) != 0
            {
                log::debug!(
                    "sync_file_range unsupported here ({}); using plain writes",
                    io::Error::last_os_error()
                );
                self.writeback = false;
                return;
            }
            if self.kicked > self.settled {
                let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
                    | libc::SYNC_FILE_RANGE_WRITE
                    | libc::SYNC_FILE_RANGE_WAIT_AFTER;
                let len = (self.kicked - self.settled) as i64;
                libc::sync_file_range(fd, self.settled as i64, len, flags);
                libc::posix_fadvise(fd, self.settled as i64, len, libc::POSIX_FADV_DONTNEED);
                self.settled = self.kicked;
            }
        }
        self.kicked = self.written;
    }
}

impl Write for BlockFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.len() >= DIRECT {
            self.drain_buffer()?;
            self.write_direct(data)?;
        } else {
            if self.buffer.len() + data.len() > BUFFER {
                self.drain_buffer()?;
            }
            self.buffer.extend_from_slice(data);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain_buffer()
    }
}

/// A [`BlockFile`] shared between the MCAP writer that owns the stream and the storage plugin,
/// which drains it at durability points without finishing a chunk early.
#[derive(Clone)]
pub struct SharedBlockFile(Arc<Mutex<BlockFile>>);

impl SharedBlockFile {
    /// Wraps a newly created, empty file.
    pub fn new(file: File) -> Self {
        Self(Arc::new(Mutex::new(BlockFile::new(file))))
    }

    /// See [`BlockFile::position`].
    pub fn position(&self) -> u64 {
        self.0.lock().position()
    }

    /// See [`BlockFile::drain_buffer`].
    pub fn drain_buffer(&self) -> io::Result<()> {
        self.0.lock().drain_buffer()
    }

    /// See [`BlockFile::sync`].
    pub fn sync(&self) -> io::Result<()> {
        self.0.lock().sync()
    }
}

impl Write for SharedBlockFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.0.lock().write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.lock().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_arrive_in_order_across_buffer_and_direct_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut sink = BlockFile::new(File::create(&path).unwrap());
        let mut expected = Vec::new();
        for i in 0..200u32 {
            let len = if i % 7 == 0 {
                300_000
            } else {
                (i as usize * 37) % 5000
            };
            let chunk: Vec<u8> = (0..len).map(|j| (i as usize + j) as u8).collect();
            sink.write_all(&chunk).unwrap();
            expected.extend_from_slice(&chunk);
        }
        assert_eq!(sink.position(), expected.len() as u64);
        sink.sync().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }
}
