//! How a DDS backend joins the graph, from the ROS 2 environment variables every ROS 2 DDS rmw
//! reads: `ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE` (`OFF`, `LOCALHOST`, `SUBNET`,
//! `SYSTEM_DEFAULT`), the older `ROS_LOCALHOST_ONLY=1` and `ROS_STATIC_PEERS`. Each backend adds
//! its own middleware's settings on top.

use rosbag2_rs_middleware::error::{Result, TransportError};

/// Which peers discovery reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryRange {
    /// No discovery traffic at all: the node only talks to participants of its own process.
    Off,
    /// Discovery and data stay on the loopback interface.
    Localhost,
    /// Every interface (the ROS 2 default).
    Subnet,
    /// The middleware's own defaults (or the user's configuration file), untouched.
    SystemDefault,
}

/// What the ROS 2 variables say about discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosDiscovery {
    /// DDS domain.
    pub domain_id: u16,
    /// Discovery range.
    pub range: DiscoveryRange,
    /// Static peers (`ROS_STATIC_PEERS`: host names or addresses), used with `Subnet` and
    /// `Localhost`.
    pub static_peers: Vec<String>,
}

impl Default for RosDiscovery {
    fn default() -> Self {
        Self {
            domain_id: 0,
            range: DiscoveryRange::Subnet,
            static_peers: Vec::new(),
        }
    }
}

/// An environment variable with a value that cannot be used.
pub fn env_error(message: String) -> TransportError {
    TransportError::InvalidArgument(message)
}

/// `var(name)`, trimmed, when it is set and not empty.
pub fn non_empty(var: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    var(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

impl RosDiscovery {
    /// Reads the ROS 2 variables through `var` (the process environment: `std::env::var(k).ok()`).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let domain_id = match non_empty(&var, "ROS_DOMAIN_ID") {
            None => 0,
            Some(v) => v.parse::<u16>().ok().filter(|d| *d <= 232).ok_or_else(|| {
                env_error(format!("ROS_DOMAIN_ID='{v}' is not a domain id (0 to 232)"))
            })?,
        };
        let localhost_only = non_empty(&var, "ROS_LOCALHOST_ONLY").is_some_and(|v| v == "1");
        let range = match non_empty(&var, "ROS_AUTOMATIC_DISCOVERY_RANGE")
            .map(|v| v.to_ascii_uppercase())
            .as_deref()
        {
            None if localhost_only => DiscoveryRange::Localhost,
            None | Some("SUBNET") => DiscoveryRange::Subnet,
            Some("SYSTEM_DEFAULT") => DiscoveryRange::SystemDefault,
            Some("LOCALHOST") => DiscoveryRange::Localhost,
            Some("OFF") => DiscoveryRange::Off,
            Some(other) => {
                return Err(env_error(format!(
                    "ROS_AUTOMATIC_DISCOVERY_RANGE='{other}' (expected OFF, LOCALHOST, SUBNET or SYSTEM_DEFAULT)"
                )))
            }
        };
        let static_peers: Vec<String> = non_empty(&var, "ROS_STATIC_PEERS")
            .map(|v| {
                v.split(';')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(bad) = static_peers
            .iter()
            .find(|p| p.contains(['<', '>', '"', '&']))
        {
            return Err(env_error(format!(
                "ROS_STATIC_PEERS: '{bad}' is not an address"
            )));
        }
        Ok(Self {
            domain_id,
            range,
            static_peers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(vars: &[(&str, &str)]) -> Result<RosDiscovery> {
        RosDiscovery::from_vars(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn environment_rules() {
        assert_eq!(cfg(&[]).unwrap(), RosDiscovery::default());
        assert_eq!(cfg(&[("ROS_DOMAIN_ID", "42")]).unwrap().domain_id, 42);
        assert!(cfg(&[("ROS_DOMAIN_ID", "300")]).is_err());
        assert!(cfg(&[("ROS_DOMAIN_ID", "x")]).is_err());
        assert_eq!(
            cfg(&[("ROS_LOCALHOST_ONLY", "1")]).unwrap().range,
            DiscoveryRange::Localhost
        );
        assert_eq!(
            cfg(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")])
                .unwrap()
                .range,
            DiscoveryRange::Localhost
        );
        assert_eq!(
            cfg(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")])
                .unwrap()
                .range,
            DiscoveryRange::Off
        );
        assert_eq!(
            cfg(&[
                ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET"),
                ("ROS_LOCALHOST_ONLY", "1")
            ])
            .unwrap()
            .range,
            DiscoveryRange::Subnet,
            "an explicit range wins over the deprecated variable"
        );
        assert!(cfg(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "PLANET")]).is_err());
        assert_eq!(
            cfg(&[("ROS_STATIC_PEERS", "192.168.0.7; robot2 ;")])
                .unwrap()
                .static_peers,
            vec!["192.168.0.7", "robot2"]
        );
        assert!(cfg(&[("ROS_STATIC_PEERS", "a\"/><x")]).is_err());
    }
}
