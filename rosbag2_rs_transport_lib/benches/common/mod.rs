//! What the middleware benchmarks share: the wall clock the send times are stamped with, and the
//! private network namespace every one of them runs in.

use std::process::Command;

/// Nanoseconds since the epoch (the send time written into each sample).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

/// Moves the calling thread (and the threads it starts) into a new network namespace with only
/// `lo` up and multicast routed to it, so that no benchmark traffic leaves the machine.
pub fn enter_private_network() {
    // SAFETY: unshare takes flags only; it moves this thread into a new network namespace.
    let unshared = unsafe { libc::unshare(libc::CLONE_NEWNET) };
    assert_eq!(
        unshared,
        0,
        "needs root: {}",
        std::io::Error::last_os_error()
    );
    for args in [
        &["link", "set", "lo", "up"][..],
        &["link", "set", "lo", "multicast", "on"],
        &["route", "add", "224.0.0.0/4", "dev", "lo"],
    ] {
        assert!(Command::new("ip").args(args).status().unwrap().success());
    }
}
