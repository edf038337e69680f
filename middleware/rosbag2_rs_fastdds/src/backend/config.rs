//! How the Fast DDS backend joins the graph: the ROS 2 variables every DDS backend reads
//! (`ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE`, `ROS_LOCALHOST_ONLY`, `ROS_STATIC_PEERS`:
//! [`RosDiscovery`]) and rmw_fastrtps's own: `RMW_FASTRTPS_USE_QOS_FROM_XML=1` (the XML profile's
//! publish mode, memory policy and data sharing are kept) and `RMW_FASTRTPS_PUBLICATION_MODE`
//! (`SYNCHRONOUS`, Jazzy's default, or `ASYNCHRONOUS`). Fast DDS itself reads its XML profiles
//! (`FASTRTPS_DEFAULT_PROFILES_FILE`, and `FASTDDS_DEFAULT_PROFILES_FILE` from 2.10 on) and
//! `ROS_DISCOVERY_SERVER`, as under rmw_fastrtps.

use rosbag2_rs_dds_common::config::{DiscoveryRange, RosDiscovery};
use rosbag2_rs_middleware::error::{Result, TransportError};

/// Settings of the Fast DDS backend.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FastDdsConfig {
    /// Domain, discovery range and static peers.
    pub dds: RosDiscovery,
    /// `RMW_FASTRTPS_USE_QOS_FROM_XML=1`.
    pub qos_from_xml: bool,
    /// `RMW_FASTRTPS_PUBLICATION_MODE=ASYNCHRONOUS`.
    pub asynchronous: bool,
}

impl FastDdsConfig {
    /// Reads the settings from the process environment.
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Reads settings through `var` (for tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let dds = RosDiscovery::from_vars(&var)?;
        let qos_from_xml = var("RMW_FASTRTPS_USE_QOS_FROM_XML").is_some_and(|v| v.trim() == "1");
        let asynchronous = match var("RMW_FASTRTPS_PUBLICATION_MODE")
            .map(|v| v.trim().to_string())
            .as_deref()
        {
            None | Some("") | Some("SYNCHRONOUS") | Some("AUTO") => false,
            Some("ASYNCHRONOUS") => true,
            Some(other) => {
                return Err(TransportError::InvalidArgument(format!(
                    "RMW_FASTRTPS_PUBLICATION_MODE='{other}' (expected SYNCHRONOUS, ASYNCHRONOUS or AUTO)"
                )))
            }
        };
        Ok(Self {
            dds,
            qos_from_xml,
            asynchronous,
        })
    }

    /// The range as the shim numbers it.
    pub(crate) fn range_code(&self) -> i32 {
        match self.dds.range {
            DiscoveryRange::Off => 0,
            DiscoveryRange::Localhost => 1,
            DiscoveryRange::Subnet => 2,
            DiscoveryRange::SystemDefault => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(vars: &[(&str, &str)]) -> Result<FastDdsConfig> {
        FastDdsConfig::from_vars(|k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn rmw_fastrtps_variables() {
        let c = cfg(&[]).unwrap();
        assert!(!c.qos_from_xml && !c.asynchronous);
        assert_eq!(c.range_code(), 2, "SUBNET is ROS 2's default");
        let c = cfg(&[
            ("RMW_FASTRTPS_USE_QOS_FROM_XML", "1"),
            ("RMW_FASTRTPS_PUBLICATION_MODE", "ASYNCHRONOUS"),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
            ("ROS_DOMAIN_ID", "7"),
        ])
        .unwrap();
        assert!(c.qos_from_xml && c.asynchronous);
        assert_eq!((c.range_code(), c.dds.domain_id), (1, 7));
        assert!(cfg(&[("RMW_FASTRTPS_PUBLICATION_MODE", "FAST")])
            .unwrap_err()
            .to_string()
            .contains("FAST"));
    }
}
