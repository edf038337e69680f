//! Free space on the file system of a path.

use std::path::Path;

/// Bytes available to an unprivileged writer on the file system holding `dir` (`None` when
/// it cannot be asked, e.g. the path does not exist).
pub fn free_space(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data, for which all zeros is a valid value.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct we own.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stats) } != 0 {
        return None;
    }
    #[allow(clippy::useless_conversion)] // the field types differ between platforms
    Some(u64::from(stats.f_bavail).saturating_mul(u64::from(stats.f_frsize)))
}
