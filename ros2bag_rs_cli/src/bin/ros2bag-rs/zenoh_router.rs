//! `ros2bag-rs zenoh-router`: a Zenoh router configured as rmw_zenoh's `rmw_zenohd`, for
//! machines without ROS 2. Runs until SIGINT/SIGTERM.

use anyhow::{Context, Result};

use rosbag2_rs_transport::shutdown_requested;
use rosbag2_rs_transport_lib::zenoh::router::Router;

/// Starts the router from the environment (`ZENOH_ROUTER_CONFIG_URI`,
/// `ZENOH_CONFIG_OVERRIDE`) and serves until a signal.
pub fn run_zenoh_router() -> Result<()> {
    let signals = shutdown_requested()?;
    let router = Router::from_env().context("cannot start the Zenoh router")?;
    log::info!(
        "Zenoh router {} listening on {} (Ctrl-C to stop)",
        router.zid(),
        router.listen_endpoints()
    );
    let _ = signals.recv();
    log::info!("Zenoh router stopping");
    Ok(())
}
