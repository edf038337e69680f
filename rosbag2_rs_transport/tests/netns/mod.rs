//! Puts the calling test thread (and every thread it starts, such as the DDS threads) into a
//! private network namespace with only the loopback interface up and multicast routed to it, so
//! that DDS traffic of a test never reaches the machine's real interfaces.

use std::process::Command;

/// Enters a fresh network namespace. Needs CAP_SYS_ADMIN (root); panics with a clear message
/// otherwise, since the alternative would be DDS traffic on real interfaces.
pub fn enter_private_network() {
    // SAFETY: unshare affects only the calling thread's namespace membership.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        panic!(
            "DDS tests run in a private network namespace and need CAP_SYS_ADMIN: {} (run as root, or `unshare -rn cargo test`)",
            std::io::Error::last_os_error()
        );
    }
    for args in [
        &["link", "set", "lo", "up"][..],
        &["link", "set", "lo", "multicast", "on"],
        &["route", "add", "224.0.0.0/4", "dev", "lo"],
    ] {
        let status = Command::new("ip")
            .args(args)
            .status()
            .expect("the `ip` command (iproute2) is required");
        assert!(status.success(), "ip {args:?} failed");
    }
}
