//! Helpers shared by the transport tests.
#![allow(dead_code)] // each test binary uses a subset

use std::process::Command;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rosbag2_rs_transport_lib::{MessageCallback, ReceivedMessage};

/// CDR bytes: the little-endian encapsulation header, then `payload`.
pub fn cdr(payload: &[u8]) -> Bytes {
    [&[0u8, 1, 0, 0][..], payload].concat().into()
}

/// A subscription callback that stores every message, and the store.
pub fn collector() -> (Arc<Mutex<Vec<ReceivedMessage>>>, MessageCallback) {
    let store = Arc::new(Mutex::new(Vec::new()));
    let sink = store.clone();
    (store, Box::new(move |m| sink.lock().unwrap().push(m)))
}

/// Puts the calling test thread (and every thread it starts, such as the DDS threads) into a
/// fresh network namespace with only the loopback interface up and multicast routed to it, so
/// that DDS traffic of a test never reaches the machine's real interfaces. Needs CAP_SYS_ADMIN (root); panics with a clear message
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

/// Waits for a condition that depends on discovery (which takes real time on a network).
pub fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The configuration of Zenoh sessions that reach the router of [`start_zenoh_router`]
/// (everything on loopback).
#[cfg(feature = "zenoh")]
pub fn zenoh_session_config() -> rosbag2_rs_transport_lib::zenoh::ZenohConfig {
    use rosbag2_rs_transport_lib::zenoh::{Role, ZenohConfig};
    ZenohConfig::from_vars(Role::Session, &zenoh_env()).unwrap()
}

#[cfg(feature = "zenoh")]
fn zenoh_env() -> rosbag2_rs_transport_lib::zenoh::ZenohEnv {
    rosbag2_rs_transport_lib::zenoh::ZenohEnv {
        config_override: Some(
            r#"connect/endpoints=["tcp/127.0.0.1:7447"];listen/endpoints=["tcp/127.0.0.1:0"]"#
                .into(),
        ),
        ..Default::default()
    }
}

/// The crate's router, configured as rmw_zenohd, on loopback port 7447 (call it in the private
/// network namespace the test entered).
#[cfg(feature = "zenoh")]
pub fn start_zenoh_router() -> rosbag2_rs_transport_lib::zenoh::router::Router {
    use rosbag2_rs_transport_lib::zenoh::{Role, ZenohConfig};
    let mut router = ZenohConfig::from_vars(Role::Router, &zenoh_env()).unwrap();
    router
        .zenoh
        .insert_json5("listen/endpoints", r#"["tcp/127.0.0.1:7447"]"#)
        .unwrap();
    rosbag2_rs_transport_lib::zenoh::router::Router::start(router).unwrap()
}
