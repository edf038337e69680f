//! Memory-mapped storage files that another process may truncate while we read them.
//!
//! Reading a finished bag through a memory mapping is the fast path: no copy, no system call
//! per chunk. Its hazard is the kernel's answer to touching a mapped page beyond the end of a
//! file that shrank since it was mapped: `SIGBUS`, which kills the process. Bags are normally
//! not modified while read, but nothing stops another process from truncating one (a tool
//! rewriting it in place, a user, a full disk being cleaned up).
//!
//! The contract here: a mapping made by [`map`] is registered with a process-wide `SIGBUS`
//! handler (installed once, chaining to any handler installed before it). When a read faults
//! inside a registered mapping, the handler maps zero-filled pages over the rest of the
//! mapping, flags it as truncated and lets the read continue; the reader then checks
//! [`Watch::truncated`] and reports an error instead of the data. Faults anywhere else go to the
//! previous handler (or the default action) as before. Consequences:
//!
//! * a file truncated under a reader gives an error, never a crash;
//! * message data already handed out as slices of the mapping reads as zeros from then on (the
//!   reader's next call reports the truncation);
//! * at most [`SLOTS`] mappings are guarded at a time; beyond that a file is read into memory
//!   instead (safe, slower to open, and costs its size in memory).
//!
//! On non-Unix targets files are read into memory.

use std::fs::File;
use std::path::Path;

use bytes::Bytes;

/// How many mappings can be guarded at the same time.
pub const SLOTS: usize = 1024;

/// Tells whether a mapping was truncated under the reader.
#[derive(Debug, Clone, Copy)]
pub struct Watch(Option<usize>);

impl Watch {
    /// A watch for data that is not mapped (never truncated).
    pub const NONE: Self = Self(None);

    /// Whether the file was truncated (or became unreadable) while mapped.
    pub fn truncated(&self) -> bool {
        #[cfg(unix)]
        if let Some(slot) = self.0 {
            return guard::REGIONS[slot]
                .truncated
                .load(std::sync::atomic::Ordering::Acquire);
        }
        false
    }
}

/// Maps `file` (opened from `path`) read-only, guarded as the module documentation describes.
pub fn map(file: &File) -> std::io::Result<(Bytes, Watch)> {
    #[cfg(unix)]
    {
        // SAFETY: the mapping is read-only; a truncation of the file under it is caught by the
        // guard (see the module documentation) instead of killing the process.
        let map = unsafe { memmap2::Mmap::map(file) }?;
        if map.is_empty() {
            return Ok((Bytes::new(), Watch::NONE));
        }
        if let Some(slot) = guard::register(map.as_ptr() as usize, map.len()) {
            let watch = Watch(Some(slot));
            return Ok((Bytes::from_owner(Guarded { map, slot }), watch));
        }
        log::debug!("all {SLOTS} guarded mappings in use: reading the file into memory");
    }
    read_into_memory(file)
}

/// Reads the whole file into memory (the fallback of [`map`]).
fn read_into_memory(mut file: &File) -> std::io::Result<(Bytes, Watch)> {
    use std::io::Read;
    let mut data = Vec::new();
    file.read_to_end(&mut data)?;
    Ok((Bytes::from(data), Watch::NONE))
}

/// Opens and maps `path`.
pub fn map_path(path: &Path) -> std::io::Result<(Bytes, Watch)> {
    map(&File::open(path)?)
}

/// A registered mapping; unregistered before it is unmapped.
#[cfg(unix)]
struct Guarded {
    map: memmap2::Mmap,
    slot: usize,
}

#[cfg(unix)]
impl AsRef<[u8]> for Guarded {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

#[cfg(unix)]
impl Drop for Guarded {
    fn drop(&mut self) {
        guard::unregister(self.slot);
    }
}

#[cfg(unix)]
mod guard {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Once, OnceLock};

    use super::SLOTS;

    /// Marks a slot being set up (not yet valid for the handler).
    const RESERVED: usize = usize::MAX;

    pub(super) struct Region {
        start: AtomicUsize,
        /// 0: free.
        len: AtomicUsize,
        pub(super) truncated: AtomicBool,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const FREE: Region = Region {
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        truncated: AtomicBool::new(false),
    };

    pub(super) static REGIONS: [Region; SLOTS] = [FREE; SLOTS];
    static INSTALL: Once = Once::new();
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
    static PAGE: AtomicUsize = AtomicUsize::new(4096);

    fn install() {
        // SAFETY: sysconf and sigaction are called with valid arguments: zeroed `sigaction`
        // structs (a valid bit pattern for this C struct), null where no old action is wanted,
        // and a handler of the SA_SIGINFO signature. Run once, before any region is registered.
        INSTALL.call_once(|| unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return;
            }
            let _ = PREVIOUS.set(previous);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0 {
                INSTALLED.store(true, Ordering::Release);
            }
        });
    }

    /// Registers `[start, start + len)`; `None` when no slot is free or no handler could be
    /// installed.
    pub(super) fn register(start: usize, len: usize) -> Option<usize> {
        install();
        if !INSTALLED.load(Ordering::Acquire) {
            return None;
        }
        for (slot, region) in REGIONS.iter().enumerate() {
            let free = region
                .len
                .compare_exchange(0, RESERVED, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok();
            if free {
                region.truncated.store(false, Ordering::Relaxed);
                region.start.store(start, Ordering::Relaxed);
                region.len.store(len, Ordering::Release);
                return Some(slot);
            }
        }
        None
    }

    pub(super) fn unregister(slot: usize) {
        REGIONS[slot].len.store(0, Ordering::Release);
    }

    /// The `SIGBUS` handler: only atomics and `mmap`, both safe in a signal handler.
    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let addr = unsafe { (*info).si_addr() } as usize;
        for region in REGIONS.iter() {
            let len = region.len.load(Ordering::Acquire);
            if len == 0 || len == RESERVED {
                continue;
            }
            let start = region.start.load(Ordering::Relaxed);
            if addr < start || addr - start >= len {
                continue;
            }
            let page = PAGE.load(Ordering::Relaxed);
            let from = addr & !(page - 1);
            let end = start + len;
            // SAFETY: replaces pages of our own read-only mapping (page-aligned, inside it) by
            // zero-filled anonymous ones; nothing else is mapped there.
            let zeros = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if zeros != libc::MAP_FAILED {
                region.truncated.store(true, Ordering::Release);
                return;
            }
        }
        // Not ours: what would have happened without this handler.
        // SAFETY: calls the handler that was installed before ours with the same arguments, or
        // restores the default action so that the faulting access raises it again on return.
        unsafe {
            match PREVIOUS.get() {
                Some(previous)
                    if previous.sa_sigaction != libc::SIG_DFL
                        && previous.sa_sigaction != libc::SIG_IGN =>
                {
                    if previous.sa_flags & libc::SA_SIGINFO != 0 {
                        let handler: extern "C" fn(
                            libc::c_int,
                            *mut libc::siginfo_t,
                            *mut libc::c_void,
                        ) = std::mem::transmute(previous.sa_sigaction);
                        handler(sig, info, ctx);
                    } else {
                        let handler: extern "C" fn(libc::c_int) =
                            std::mem::transmute(previous.sa_sigaction);
                        handler(sig);
                    }
                }
                _ => {
                    let mut default: libc::sigaction = std::mem::zeroed();
                    default.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(sig, &default, std::ptr::null_mut());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_truncated_mapping_reads_zeros_and_is_flagged_not_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        drop(f);
        let (data, watch) = map_path(&path).unwrap();
        assert_eq!(data[12345], 7);
        assert!(!watch.truncated());
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        // Beyond the new end: SIGBUS without the guard.
        let tail: u64 = data[(1 << 20) - 100..].iter().map(|&b| b as u64).sum();
        assert_eq!(tail, 0);
        assert!(watch.truncated());
        assert_eq!(data[10], 7);
        drop(data);
        // The slot is free again, and a new mapping is not flagged.
        let (again, watch) = map_path(&path).unwrap();
        assert_eq!(again.len(), 4096);
        assert!(!watch.truncated());
    }
}
