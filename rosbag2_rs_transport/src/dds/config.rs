//! How the DDS backend joins the graph, read from the ROS 2 environment variables:
//! `ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE` (`OFF`, `LOCALHOST`, `SUBNET`,
//! `SYSTEM_DEFAULT`), the older `ROS_LOCALHOST_ONLY=1`, and `RMW_IMPLEMENTATION` (which decides
//! the service request-id mapping, so that clients and servers of that RMW understand us).

use crate::error::{Result, TransportError};

/// Which peers discovery reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryRange {
    /// No discovery traffic at all: the node only talks to itself.
    Off,
    /// Discovery and data stay on the loopback interface.
    Localhost,
    /// Every interface (the ROS 2 default).
    Subnet,
}

/// How a service request is tied to its response on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceMapping {
    /// rmw_cyclonedds_cpp: a 16-byte header (client id, sequence number) before the payload,
    /// echoed in the response.
    Cyclone,
    /// rmw_fastrtps_cpp: the request's sample identity, returned in the response's
    /// `related_sample_identity` inline QoS.
    FastRtps,
}

/// Settings of the DDS backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DdsConfig {
    /// DDS domain.
    pub domain_id: u16,
    /// Discovery range.
    pub range: DiscoveryRange,
    /// Service request-id mapping.
    pub service_mapping: ServiceMapping,
}

impl Default for DdsConfig {
    fn default() -> Self {
        Self {
            domain_id: 0,
            range: DiscoveryRange::Subnet,
            service_mapping: ServiceMapping::Cyclone,
        }
    }
}

impl DdsConfig {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Reads settings through `var` (for tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let non_empty = |k: &str| {
            var(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let domain_id = match non_empty("ROS_DOMAIN_ID") {
            None => 0,
            Some(v) => v.parse::<u16>().ok().filter(|d| *d <= 232).ok_or_else(|| {
                TransportError::Middleware(format!(
                    "ROS_DOMAIN_ID='{v}' is not a domain id (0 to 232)"
                ))
            })?,
        };
        let localhost_only = non_empty("ROS_LOCALHOST_ONLY").is_some_and(|v| v == "1");
        let range = match non_empty("ROS_AUTOMATIC_DISCOVERY_RANGE").map(|v| v.to_ascii_uppercase()).as_deref() {
            None | Some("SYSTEM_DEFAULT") if localhost_only => DiscoveryRange::Localhost,
            None | Some("SYSTEM_DEFAULT") | Some("SUBNET") => DiscoveryRange::Subnet,
            Some("LOCALHOST") => DiscoveryRange::Localhost,
            Some("OFF") => DiscoveryRange::Off,
            Some(other) => {
                return Err(TransportError::Middleware(format!(
                    "ROS_AUTOMATIC_DISCOVERY_RANGE='{other}' (expected OFF, LOCALHOST, SUBNET or SYSTEM_DEFAULT)"
                )))
            }
        };
        let service_mapping = match non_empty("RMW_IMPLEMENTATION").as_deref() {
            None | Some("rmw_cyclonedds_cpp") => ServiceMapping::Cyclone,
            Some(rmw) if rmw.starts_with("rmw_fastrtps") => ServiceMapping::FastRtps,
            Some(other) => {
                log::warn!("RMW_IMPLEMENTATION='{other}' is not emulated; using the rmw_cyclonedds_cpp service mapping");
                ServiceMapping::Cyclone
            }
        };
        Ok(Self {
            domain_id,
            range,
            service_mapping,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(vars: &[(&str, &str)]) -> Result<DdsConfig> {
        DdsConfig::from_vars(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn environment_rules() {
        assert_eq!(cfg(&[]).unwrap(), DdsConfig::default());
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
            cfg(&[("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")])
                .unwrap()
                .service_mapping,
            ServiceMapping::FastRtps
        );
        assert_eq!(
            cfg(&[("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp")])
                .unwrap()
                .service_mapping,
            ServiceMapping::Cyclone
        );
    }
}
