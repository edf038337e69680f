//! File mode: storage files compressed as a whole (`bag_0.mcap.zstd`, `bag_0.db3.zstd`).
//!
//! Reading: the file is decompressed as a stream into a temporary file in the system's
//! temporary directory (`TMPDIR`), so memory does not grow with what it decompresses to (a
//! small file that claims or expands to gigabytes costs disk, never the process), at most the
//! lesser of [`crate::limits::FILE_MODE_BYTES`] and the space free there: a file whose frame
//! header declares more is refused before anything is decompressed, one that decompresses to
//! more is refused when it has (a typed error names both bounds). An MCAP file is then memory-mapped from an unnamed temporary file
//! (gone when the reader is dropped); SQLite can only open a file by name, so a `.db3` goes to
//! a named one, removed when the reader is dropped. The bag directory is never written to, so
//! read-only bags open too.
//!
//! Writing: [`FileCompressor`] compresses closed storage files on background threads (into a
//! `.tmp` file renamed when complete); the uncompressed file is removed only once the bag's
//! metadata names the compressed one. A crash in between leaves both: the uncompressed file is
//! the one read (see [`crate::bag::storage_files_in`]).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::{set_thread_priority, zstd, AdaptedReader, CompressionFormat, ReaderAdapter};
use crate::error::{Result, StorageError};
pub use crate::formats::uncompressed_name;
use crate::formats::StorageId;
use crate::limits;
use crate::metadata::FileInformation;
use crate::storage::mapped_file;
use crate::storage::mcap_reader::McapReader;
use crate::storage::plugin::{OpenMode, StorageReader};
use crate::storage::sqlite_reader::SqliteReader;

/// Whether `path` is a file-mode compressed storage file (by its first bytes).
pub fn is_compressed_file(path: &Path) -> Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| StorageError::io(path, e))?;
    Ok(zstd::is_zstd(&head[..n]))
}

/// The storage format of the compressed file `path`, from its decompressed first bytes, else
/// from the extension under `.zstd`. A file whose frame declares more than may be decompressed
/// is refused first, naming the bound (zstd itself refuses a single-segment frame larger than
/// its window limit, naming neither the size nor the bound).
pub fn detect_inner_storage(path: &Path) -> Result<StorageId> {
    let _within_bound = decompression_bound(path)?;
    let head = zstd::decompressed_head(path, 16).map_err(|e| decompress_error(path, e))?;
    if head.starts_with(mcap::MAGIC) {
        return Ok(StorageId::Mcap);
    }
    if head.starts_with(b"SQLite format 3\0") {
        return Ok(StorageId::Sqlite3);
    }
    let name = path.to_string_lossy();
    match Path::new(uncompressed_name(&name))
        .extension()
        .and_then(|e| e.to_str())
    {
        Some("mcap") => Ok(StorageId::Mcap),
        Some("db3") => Ok(StorageId::Sqlite3),
        _ => Err(StorageError::corrupt(
            path,
            "a zstd-compressed file holding neither an MCAP nor an SQLite3 file",
        )),
    }
}

fn decompress_error(path: &Path, source: std::io::Error) -> StorageError {
    StorageError::Decompress {
        path: path.to_path_buf(),
        format: CompressionFormat::Zstd,
        source,
    }
}

/// How much the file-mode compressed file `path` may take decompressed in the temporary
/// directory: checks what its frame header declares, returns the bound for the stream.
fn decompression_bound(path: &Path) -> Result<(u64, impl Fn(u64) -> Result<()> + '_)> {
    let dir = std::env::temp_dir();
    let cap = limits::FILE_MODE_BYTES.get();
    let free = crate::disk::free_space(&dir);
    let limit = cap.min(free.unwrap_or(u64::MAX));
    let too_large = move |claimed: Option<u64>| StorageError::FileModeTooLarge {
        path: path.to_path_buf(),
        source: limits::FileModeTooLarge {
            claimed,
            limit,
            cap,
            free,
            dir: dir.clone(),
        },
    };
    let claimed = zstd::declared_file_size(path).map_err(|e| decompress_error(path, e))?;
    if claimed.is_some_and(|n| n > limit) {
        return Err(too_large(claimed));
    }
    let check = move |written: u64| match written > limit {
        true => Err(too_large(None)),
        false => Ok(()),
    };
    Ok((limit, check))
}

/// Opens the file-mode compressed storage file `path` for reading (see the module
/// documentation); the reader reports `path` as its file.
pub fn open_compressed(path: &Path, mode: OpenMode) -> Result<Box<dyn StorageReader>> {
    let inner = detect_inner_storage(path)?;
    let (limit, check) = decompression_bound(path)?;
    match inner {
        StorageId::Mcap => {
            let temp_dir = std::env::temp_dir();
            let mut temp = tempfile::tempfile().map_err(|e| StorageError::io(&temp_dir, e))?;
            let written = zstd::decompress_file_into(path, &mut temp, limit)
                .map_err(|e| decompress_error(path, e))?;
            check(written)?;
            log::debug!(
                "{}: decompressed {written} bytes into a temporary file",
                path.display()
            );
            let mapped = mapped_file::map(&temp).map_err(|e| StorageError::io(&temp_dir, e))?;
            Ok(Box::new(McapReader::from_mapping(path, mapped, mode)?))
        }
        StorageId::Sqlite3 => {
            let mut temp = tempfile::Builder::new()
                .prefix("rosbag2-rs-")
                .suffix(".db3")
                .tempfile()
                .map_err(|e| StorageError::io(std::env::temp_dir(), e))?;
            let written = zstd::decompress_file_into(path, temp.as_file_mut(), limit)
                .map_err(|e| decompress_error(path, e))?;
            check(written)?;
            log::debug!(
                "{}: decompressed {written} bytes into {}",
                path.display(),
                temp.path().display()
            );
            let temp = temp.into_temp_path();
            let inner = SqliteReader::open(&temp).map_err(|e| match e {
                StorageError::Corrupt { reason, .. } => StorageError::corrupt(path, reason),
                other => other,
            })?;
            Ok(Box::new(AdaptedReader::wrap(
                Box::new(inner),
                DecompressedSqlite {
                    path: path.to_path_buf(),
                    _temp: temp,
                },
            )))
        }
        StorageId::Rosbag1 => Err(StorageError::corrupt(
            path,
            "a compressed ROS 1 bag is not a rosbag2 storage file",
        )),
    }
}

/// What makes an SQLite3 reader on a decompressed temporary copy report the compressed file:
/// its path, and the uncompressed file name in its statistics. Owns the temporary copy.
struct DecompressedSqlite {
    path: PathBuf,
    _temp: tempfile::TempPath,
}

impl ReaderAdapter for DecompressedSqlite {
    fn path<'a>(&'a self, _inner: &'a Path) -> &'a Path {
        &self.path
    }
    fn file_information(&self, mut info: FileInformation) -> FileInformation {
        info.path = self
            .path
            .file_name()
            .map(|n| uncompressed_name(&n.to_string_lossy()).to_string())
            .unwrap_or_default();
        info
    }
}

/// Compresses `source` into `<target>.tmp`, then renames it to `target`: a crash leaves no
/// partial compressed file under a storage file's name.
fn compress_then_rename(source: &Path, target: &Path) -> std::io::Result<()> {
    let mut partial = target.as_os_str().to_owned();
    partial.push(".tmp");
    let partial = PathBuf::from(partial);
    let _ = std::fs::remove_file(&partial);
    let result =
        zstd::compress_file(source, &partial).and_then(|()| std::fs::rename(&partial, target));
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

/// A closed storage file that was compressed.
#[derive(Debug)]
pub struct CompressedFile {
    /// The uncompressed file (still present: remove it once the metadata names the other).
    pub source: PathBuf,
    /// The compressed file.
    pub target: PathBuf,
}

type Job = (PathBuf, PathBuf);
type Done = (PathBuf, PathBuf, std::io::Result<()>);

/// Compresses closed storage files on a pool of background threads.
pub struct FileCompressor {
    format: CompressionFormat,
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    pending: VecDeque<PathBuf>,
    threads: Vec<JoinHandle<()>>,
}

impl FileCompressor {
    /// Starts `threads` (at least one) compression threads, at the nice value `priority` if
    /// given.
    pub fn new(
        format: CompressionFormat,
        threads: usize,
        priority: Option<i32>,
    ) -> std::io::Result<Self> {
        let (jobs, job_rx) = channel::<Job>();
        let (done_tx, done) = channel::<Done>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let threads = (0..threads.max(1))
            .map(|i| {
                let job_rx = Arc::clone(&job_rx);
                let done_tx = done_tx.clone();
                std::thread::Builder::new()
                    .name(format!("bag-compress-{i}"))
                    .spawn(move || {
                        if let Some(priority) = priority {
                            set_thread_priority(priority);
                        }
                        loop {
                            let job = job_rx.lock().map(|rx| rx.recv());
                            let Ok(Ok((source, target))) = job else {
                                return;
                            };
                            let result = compress_then_rename(&source, &target);
                            if done_tx.send((source, target, result)).is_err() {
                                return;
                            }
                        }
                    })
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Self {
            format,
            jobs: Some(jobs),
            done,
            pending: VecDeque::new(),
            threads,
        })
    }

    /// The compressed name of `path`: `bag_0.mcap` -> `bag_0.mcap.zstd`.
    pub fn target_of(&self, path: &Path) -> PathBuf {
        let mut name = path.as_os_str().to_owned();
        name.push(".");
        name.push(self.format.extension());
        PathBuf::from(name)
    }

    /// Queues the closed file `path` for compression.
    pub fn submit(&mut self, path: PathBuf) -> Result<()> {
        let target = self.target_of(&path);
        if target.exists() {
            return Err(StorageError::AlreadyExists(target));
        }
        self.pending.push_back(path.clone());
        self.jobs
            .as_ref()
            .and_then(|jobs| jobs.send((path.clone(), target)).ok())
            .ok_or_else(|| {
                StorageError::io(
                    &path,
                    std::io::Error::other("the compression threads have stopped"),
                )
            })
    }

    /// Files not yet reported by [`FileCompressor::collect`].
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The files compressed since the last call; with `wait`, waits for every queued file.
    /// A failed compression is an error naming the file (its uncompressed file is kept).
    pub fn collect(&mut self, wait: bool) -> Vec<Result<CompressedFile>> {
        let mut out = Vec::new();
        while !self.pending.is_empty() {
            let next = if wait {
                self.done.recv().ok()
            } else {
                self.done.try_recv().ok()
            };
            let Some((source, target, result)) = next else {
                if wait {
                    // Every thread is gone: report what is left as failed.
                    for source in self.pending.drain(..) {
                        out.push(Err(StorageError::io(
                            &source,
                            std::io::Error::other("compression thread died"),
                        )));
                    }
                }
                break;
            };
            self.pending.retain(|p| *p != source);
            out.push(match result {
                Ok(()) => Ok(CompressedFile { source, target }),
                Err(e) => Err(StorageError::Compress {
                    path: source,
                    format: self.format,
                    source: e,
                }),
            });
        }
        out
    }
}

impl Drop for FileCompressor {
    fn drop(&mut self) {
        self.jobs = None;
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
