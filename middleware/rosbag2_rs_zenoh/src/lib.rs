//! ROS 2 over Zenoh, wire-compatible with rmw_zenoh_cpp (Jazzy, Kilted, Rolling).
//!
//! Always built: the wire formats other nodes send, parsed here — rmw_zenoh's [`attachment`] on
//! every sample, query and reply, the [`keys`] of topics and services, the graph's
//! [`liveliness`] tokens under `@ros2_lv`, and the [`qos`] they carry.
//!
//! With the `zenoh` feature, the backend: data on `<domain>/<topic>/<DDS type>/<type hash>` key
//! expressions, services as complete queryables, the graph from the liveliness tokens, and the
//! session configured from `ZENOH_SESSION_CONFIG_URI`, `ZENOH_CONFIG_OVERRIDE`, `ROS_DOMAIN_ID`
//! and `ROS_AUTOMATIC_DISCOVERY_RANGE` (`config`). Each `ZenohMiddleware` is one Zenoh session
//! (one rmw context) with one node in it; a router like `rmw_zenohd` is `router::Router`.

pub mod attachment;
pub mod keys;
pub mod liveliness;
pub mod qos;

#[cfg(feature = "zenoh")]
mod client;
#[cfg(feature = "zenoh")]
pub mod config;
#[cfg(feature = "zenoh")]
mod graph;
#[cfg(feature = "zenoh")]
mod publisher;
#[cfg(feature = "zenoh")]
pub mod router;
#[cfg(feature = "zenoh")]
mod service;
#[cfg(feature = "zenoh")]
mod session;
#[cfg(feature = "zenoh")]
mod subscriber;

#[cfg(feature = "zenoh")]
pub use session::*;
