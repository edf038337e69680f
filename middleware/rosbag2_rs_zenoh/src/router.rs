//! A Zenoh router configured as rmw_zenoh's `rmw_zenohd` configures it
//! (`DEFAULT_RMW_ZENOH_ROUTER_CONFIG.json5`, or `ZENOH_ROUTER_CONFIG_URI`, then
//! `ZENOH_CONFIG_OVERRIDE`): the rendezvous nodes use to find each other, and the bridge
//! between machines. It is Zenoh's own router, from the `zenoh` crate.

use ::zenoh::{Session, Wait};

use super::config::{Role, ZenohConfig};
use super::zenoh_error;
use rosbag2_rs_middleware::error::Result;

/// A running router; dropping it stops it.
pub struct Router {
    session: Session,
    config: ZenohConfig,
}

impl Router {
    /// Starts a router configured from the environment.
    pub fn from_env() -> Result<Self> {
        Self::start(ZenohConfig::from_env(Role::Router)?)
    }

    /// Starts a router with `config` (its mode should be `router`).
    pub fn start(config: ZenohConfig) -> Result<Self> {
        let session = ::zenoh::open(config.zenoh.clone())
            .wait()
            .map_err(|e| zenoh_error("cannot start the router", e))?;
        Ok(Self { session, config })
    }

    /// The router's Zenoh id.
    pub fn zid(&self) -> String {
        self.session.zid().to_string()
    }

    /// The endpoints it listens on, as configured (JSON).
    pub fn listen_endpoints(&self) -> String {
        self.config
            .zenoh
            .get_json("listen/endpoints")
            .unwrap_or_else(|_| "[]".into())
    }
}
