//! Zenoh session and router configuration, read from the environment as rmw_zenoh reads it:
//! `ZENOH_SESSION_CONFIG_URI` (or `ZENOH_ROUTER_CONFIG_URI` for the router) names a JSON5
//! configuration file that replaces rmw_zenoh's defaults, `ZENOH_CONFIG_OVERRIDE`
//! (`key=json5 value;key=value;...`) changes single keys of it, `ROS_DOMAIN_ID` prefixes every
//! key expression, and `ROS_AUTOMATIC_DISCOVERY_RANGE=OFF` keeps the session to itself.

use ::zenoh::Config;

use rosbag2_rs_middleware::error::{Result, TransportError};

/// What a node's session sets, from rmw_zenoh's `DEFAULT_RMW_ZENOH_SESSION_CONFIG.json5`:
/// a peer that connects to the router on localhost:7447, listens on localhost only, finds the
/// other peers through the router's gossip (no multicast), timestamps data (needed by
/// transient-local caches), and tolerates many nodes starting at once.
const SESSION_DEFAULTS: &str = r#"{
  mode: "peer",
  connect: {
    timeout_ms: { router: -1, peer: -1, client: 0 },
    endpoints: ["tcp/localhost:7447"],
    exit_on_failure: { router: false, peer: false, client: true },
    retry: { period_init_ms: 1000, period_max_ms: 4000, period_increase_factor: 2 },
  },
  listen: { timeout_ms: 0, endpoints: ["tcp/localhost:0"] },
  open: { return_conditions: { connect_scouted: true, declares: true } },
  scouting: {
    delay: 500,
    multicast: { enabled: false },
    gossip: {
      enabled: true,
      multihop: false,
      target: { router: ["router", "peer"], peer: ["router"] },
      autoconnect: { router: [], peer: ["router", "peer"] },
      autoconnect_strategy: { peer: { to_router: "always", to_peer: "greater-zid" } },
    },
  },
  timestamping: { enabled: { router: true, peer: true, client: true }, drop_future_timestamp: false },
  queries_default_timeout: 60000,
  routing: { router: { peers_failover_brokering: true } },
  transport: {
    unicast: { open_timeout: 60000, accept_timeout: 60000, accept_pending: 10000, max_sessions: 10000, max_links: 1 },
    link: { tx: { lease: 60000, keep_alive: 2, queue: { congestion_control: { block: { wait_before_close: 60000000 } } } } },
  },
}"#;

/// What rmw_zenohd sets, from rmw_zenoh's `DEFAULT_RMW_ZENOH_ROUTER_CONFIG.json5`: a router
/// listening on port 7447 of every interface, gossip without multicast, forwarding between
/// peers that cannot reach each other.
const ROUTER_DEFAULTS: &str = r#"{
  mode: "router",
  connect: { endpoints: [] },
  listen: { endpoints: ["tcp/[::]:7447"] },
  scouting: {
    multicast: { enabled: false },
    gossip: {
      enabled: true,
      multihop: false,
      target: { router: ["router", "peer"], peer: ["router"] },
      autoconnect: { router: [], peer: ["router", "peer"] },
    },
  },
  timestamping: { enabled: { router: true, peer: true, client: true }, drop_future_timestamp: false },
  queries_default_timeout: 60000,
  routing: { router: { peers_failover_brokering: true } },
  transport: {
    unicast: { open_timeout: 60000, accept_timeout: 60000, accept_pending: 10000, max_sessions: 10000, max_links: 1 },
    link: { tx: { lease: 60000, keep_alive: 2, queue: { congestion_control: { block: { wait_before_close: 60000000 } } } } },
  },
}"#;

/// Which configuration: a node's session or the router.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A node (`ZENOH_SESSION_CONFIG_URI`).
    Session,
    /// The router (`ZENOH_ROUTER_CONFIG_URI`).
    Router,
}

impl Role {
    /// The variable naming a configuration file.
    pub const fn uri_variable(self) -> &'static str {
        match self {
            Role::Session => "ZENOH_SESSION_CONFIG_URI",
            Role::Router => "ZENOH_ROUTER_CONFIG_URI",
        }
    }
}

/// The environment variables this configuration reads, captured once (tests pass their own).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZenohEnv {
    /// `ZENOH_SESSION_CONFIG_URI` or `ZENOH_ROUTER_CONFIG_URI`.
    pub config_uri: Option<String>,
    /// `ZENOH_CONFIG_OVERRIDE`.
    pub config_override: Option<String>,
    /// `ROS_DOMAIN_ID`.
    pub domain_id: Option<String>,
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE`.
    pub discovery_range: Option<String>,
}

impl ZenohEnv {
    /// Reads the process environment for `role`.
    pub fn from_env(role: Role) -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self {
            config_uri: var(role.uri_variable()),
            config_override: var("ZENOH_CONFIG_OVERRIDE"),
            domain_id: var("ROS_DOMAIN_ID"),
            discovery_range: var("ROS_AUTOMATIC_DISCOVERY_RANGE"),
        }
    }
}

/// A node's or router's configuration.
#[derive(Debug, Clone)]
pub struct ZenohConfig {
    /// The Zenoh configuration.
    pub zenoh: Config,
    /// `ROS_DOMAIN_ID` (0 when unset).
    pub domain_id: u32,
}

fn invalid(what: String) -> TransportError {
    TransportError::InvalidArgument(what)
}

impl ZenohConfig {
    /// From the process environment.
    pub fn from_env(role: Role) -> Result<Self> {
        Self::from_vars(role, &ZenohEnv::from_env(role))
    }

    /// From given variables.
    pub fn from_vars(role: Role, env: &ZenohEnv) -> Result<Self> {
        let mut zenoh = match &env.config_uri {
            Some(path) => Config::from_file(path).map_err(|e| {
                invalid(format!(
                    "{}={path}: not a usable Zenoh configuration: {e}",
                    role.uri_variable()
                ))
            })?,
            None => Config::from_json5(match role {
                Role::Session => SESSION_DEFAULTS,
                Role::Router => ROUTER_DEFAULTS,
            })
            .map_err(|e| {
                TransportError::Middleware(format!("built-in Zenoh configuration: {e}"))
            })?,
        };
        let domain_id = match env.domain_id.as_deref().map(str::trim) {
            None => 0,
            Some(text) => text
                .parse::<u32>()
                .map_err(|_| invalid(format!("ROS_DOMAIN_ID='{text}' is not a domain id")))?,
        };
        if role == Role::Session {
            apply_discovery_range(&mut zenoh, env.discovery_range.as_deref())?;
        }
        if let Some(pairs) = &env.config_override {
            apply_override(&mut zenoh, pairs)?;
        }
        Ok(Self { zenoh, domain_id })
    }

    /// The endpoints the session connects to, for messages.
    pub fn connect_endpoints(&self) -> String {
        self.zenoh
            .get_json("connect/endpoints")
            .unwrap_or_else(|_| "[]".into())
    }
}

/// `ROS_AUTOMATIC_DISCOVERY_RANGE`: `OFF` talks to no one (no router, no scouting, listening on
/// loopback); `LOCALHOST` is rmw_zenoh's default already (listen on loopback, the router on
/// localhost); `SUBNET` and `SYSTEM_DEFAULT` leave the configuration alone (reaching other
/// machines is the router's job, as in rmw_zenoh).
fn apply_discovery_range(config: &mut Config, range: Option<&str>) -> Result<()> {
    match range.map(str::trim) {
        None | Some("LOCALHOST" | "SUBNET" | "SYSTEM_DEFAULT") => Ok(()),
        Some("OFF") => {
            for (key, value) in [
                ("connect/endpoints", "[]"),
                ("listen/endpoints", r#"["tcp/127.0.0.1:0"]"#),
                ("scouting/multicast/enabled", "false"),
                ("scouting/gossip/enabled", "false"),
            ] {
                config
                    .insert_json5(key, value)
                    .map_err(|e| TransportError::Middleware(format!("{key}: {e}")))?;
            }
            Ok(())
        }
        Some(other) => Err(invalid(format!(
            "ROS_AUTOMATIC_DISCOVERY_RANGE='{other}': expected OFF, LOCALHOST, SUBNET or SYSTEM_DEFAULT"
        ))),
    }
}

/// `ZENOH_CONFIG_OVERRIDE`: `key=value` pairs separated by `;`, each value JSON5, e.g.
/// `connect/endpoints=["tcp/10.0.0.2:7447"];scouting/multicast/enabled=false`. rmw_zenoh skips a
/// pair it cannot apply with a warning; so do we, but a pair without `=` is an error.
fn apply_override(config: &mut Config, pairs: &str) -> Result<()> {
    for pair in split_override(pairs) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(invalid(format!(
                "ZENOH_CONFIG_OVERRIDE: '{pair}' is not key=value"
            )));
        };
        if let Err(e) = config.insert_json5(key.trim(), value.trim()) {
            log::warn!("ZENOH_CONFIG_OVERRIDE: ignoring the invalid pair ({key}, {value}): {e}");
        }
    }
    Ok(())
}

/// Splits on `;` outside brackets and quotes (a JSON5 list may contain `;`-free endpoints,
/// but an endpoint's own `;`-separated metadata sits inside quotes).
fn split_override(pairs: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in pairs.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '[' | '{' if !quoted => depth += 1,
            ']' | '}' if !quoted => depth -= 1,
            ';' if !quoted && depth == 0 => {
                out.push(&pairs[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&pairs[start..]);
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(config: &ZenohConfig, key: &str) -> String {
        config.zenoh.get_json(key).unwrap()
    }

    #[test]
    fn defaults_are_rmw_zenohs() {
        let c = ZenohConfig::from_vars(Role::Session, &ZenohEnv::default()).unwrap();
        assert_eq!(c.domain_id, 0);
        assert_eq!(get(&c, "mode"), r#""peer""#);
        assert_eq!(get(&c, "connect/endpoints"), r#"["tcp/localhost:7447"]"#);
        assert_eq!(get(&c, "listen/endpoints"), r#"["tcp/localhost:0"]"#);
        assert_eq!(get(&c, "scouting/multicast/enabled"), "false");
        let r = ZenohConfig::from_vars(Role::Router, &ZenohEnv::default()).unwrap();
        assert_eq!(get(&r, "mode"), r#""router""#);
        assert_eq!(get(&r, "listen/endpoints"), r#"["tcp/[::]:7447"]"#);
        assert_eq!(get(&r, "scouting/multicast/enabled"), "false");
    }

    #[test]
    fn environment_as_rmw_zenoh_reads_it() {
        let env = ZenohEnv {
            config_override: Some(
                r#"connect/endpoints=["tcp/10.0.0.2:7447","tcp/10.0.0.3:7447"];listen/endpoints=["tcp/127.0.0.1:0"]"#
                    .into(),
            ),
            domain_id: Some("42".into()),
            ..ZenohEnv::default()
        };
        let c = ZenohConfig::from_vars(Role::Session, &env).unwrap();
        assert_eq!(c.domain_id, 42);
        assert_eq!(
            get(&c, "connect/endpoints"),
            r#"["tcp/10.0.0.2:7447","tcp/10.0.0.3:7447"]"#
        );
        assert_eq!(get(&c, "listen/endpoints"), r#"["tcp/127.0.0.1:0"]"#);
        let off = ZenohEnv {
            discovery_range: Some("OFF".into()),
            ..ZenohEnv::default()
        };
        let c = ZenohConfig::from_vars(Role::Session, &off).unwrap();
        assert_eq!(get(&c, "connect/endpoints"), "[]");
        assert_eq!(get(&c, "scouting/gossip/enabled"), "false");
    }

    #[test]
    fn bad_environment_is_a_clear_error() {
        let cases = [
            ZenohEnv {
                domain_id: Some("x".into()),
                ..ZenohEnv::default()
            },
            ZenohEnv {
                discovery_range: Some("EVERYWHERE".into()),
                ..ZenohEnv::default()
            },
            ZenohEnv {
                config_override: Some("connect/endpoints".into()),
                ..ZenohEnv::default()
            },
            ZenohEnv {
                config_uri: Some("/nonexistent/zenoh.json5".into()),
                ..ZenohEnv::default()
            },
        ];
        for env in cases {
            let err = ZenohConfig::from_vars(Role::Session, &env).unwrap_err();
            assert!(matches!(err, TransportError::InvalidArgument(_)), "{err}");
        }
    }

    #[test]
    fn a_config_file_replaces_the_defaults_and_overrides_apply_on_top() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.json5");
        std::fs::write(
            &path,
            r#"{ mode: "client", connect: { endpoints: ["tcp/192.0.2.1:7447"] } }"#,
        )
        .unwrap();
        let env = ZenohEnv {
            config_uri: Some(path.display().to_string()),
            config_override: Some("scouting/multicast/enabled=false".into()),
            ..ZenohEnv::default()
        };
        let c = ZenohConfig::from_vars(Role::Session, &env).unwrap();
        assert_eq!(get(&c, "mode"), r#""client""#);
        assert_eq!(get(&c, "connect/endpoints"), r#"["tcp/192.0.2.1:7447"]"#);
        assert_eq!(get(&c, "scouting/multicast/enabled"), "false");
    }

    #[test]
    fn override_pairs_split_outside_lists() {
        assert_eq!(
            split_override(r#"a=["x;y"];b=1;"#),
            vec![r#"a=["x;y"]"#, "b=1"]
        );
    }
}
