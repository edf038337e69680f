//! How the Cyclone DDS backend joins the graph, read from the ROS 2 environment variables as
//! rmw_cyclonedds reads them (`ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE`,
//! `ROS_LOCALHOST_ONLY=1`, `ROS_STATIC_PEERS`: [`RosDiscovery`]), and the user's own
//! `CYCLONEDDS_URI`, which is applied after what the ROS variables require.
//! Two settings of ours tune large data: `ROSBAG2_RS_DDS_RECEIVE_BUFFER` (the socket receive
//! buffer to ask for, default 16MiB, quietly less where the kernel allows less) and
//! `ROSBAG2_RS_DDS_FRAGMENT_SIZE` (Cyclone's `FragmentSize`, default Cyclone's 1344B).

pub use rosbag2_rs_dds_common::config::DiscoveryRange;
use rosbag2_rs_dds_common::config::{env_error, non_empty, RosDiscovery};
use rosbag2_rs_middleware::error::Result;

/// The socket receive buffer asked for by default: enough for a few camera frames in flight.
pub const DEFAULT_RECEIVE_BUFFER: u64 = 16 << 20;

/// Settings of the DDS backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdsConfig {
    /// DDS domain.
    pub domain_id: u16,
    /// Discovery range.
    pub range: DiscoveryRange,
    /// Static peers (`ROS_STATIC_PEERS`: host names or addresses), used with `Subnet` and
    /// `Localhost`.
    pub static_peers: Vec<String>,
    /// Socket receive buffer to request, in bytes. The kernel may give less
    /// (`net.core.rmem_max`); that is accepted quietly.
    pub receive_buffer: u64,
    /// Cyclone's `FragmentSize` in bytes, if set.
    pub fragment_size: Option<u32>,
    /// The user's Cyclone configuration (`CYCLONEDDS_URI`: file URIs or XML), applied last.
    pub user_config: Option<String>,
}

impl Default for DdsConfig {
    fn default() -> Self {
        Self {
            domain_id: 0,
            range: DiscoveryRange::Subnet,
            static_peers: Vec::new(),
            receive_buffer: DEFAULT_RECEIVE_BUFFER,
            fragment_size: None,
            user_config: None,
        }
    }
}

/// Parses a size like `16MiB`, `8MB`, `65536` or `64kB` into bytes.
fn parse_size(name: &str, text: &str) -> Result<u64> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text[digits.len()..];
    let factor: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "kib" => 1 << 10,
        "mb" | "mib" => 1 << 20,
        "gb" | "gib" => 1 << 30,
        _ => return Err(env_error(format!("{name}='{text}': unknown unit '{unit}'"))),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .ok_or_else(|| env_error(format!("{name}='{text}' is not a size (e.g. 16MiB)")))
}

impl DdsConfig {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Reads settings through `var` (for tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let RosDiscovery {
            domain_id,
            range,
            static_peers,
        } = RosDiscovery::from_vars(&var)?;
        let non_empty = |name: &str| non_empty(&var, name);
        let receive_buffer = match non_empty("ROSBAG2_RS_DDS_RECEIVE_BUFFER") {
            Some(v) => parse_size("ROSBAG2_RS_DDS_RECEIVE_BUFFER", &v)?,
            None => DEFAULT_RECEIVE_BUFFER,
        };
        let fragment_size = match non_empty("ROSBAG2_RS_DDS_FRAGMENT_SIZE") {
            Some(v) => {
                let size = parse_size("ROSBAG2_RS_DDS_FRAGMENT_SIZE", &v)?;
                Some(
                    u32::try_from(size)
                        .ok()
                        .filter(|s| (512..=65_000).contains(s))
                        .ok_or_else(|| {
                            env_error(format!(
                                "ROSBAG2_RS_DDS_FRAGMENT_SIZE='{v}': 512B to 65000B"
                            ))
                        })?,
                )
            }
            None => None,
        };
        Ok(Self {
            domain_id,
            range,
            static_peers,
            receive_buffer,
            fragment_size,
            user_config: non_empty("CYCLONEDDS_URI"),
        })
    }

    /// What the ROS 2 variables said: domain, range and static peers.
    pub fn discovery(&self) -> RosDiscovery {
        RosDiscovery {
            domain_id: self.domain_id,
            range: self.range,
            static_peers: self.static_peers.clone(),
        }
    }

    /// The Cyclone configuration string for `dds_create_domain`: our fragment (what the ROS
    /// variables require, as rmw_cyclonedds writes it, plus the large-data settings), then the
    /// user's `CYCLONEDDS_URI`, which Cyclone applies on top.
    pub fn cyclone_xml(&self) -> String {
        let mut general = String::new();
        let mut discovery = String::new();
        let (localhost, multicast, peers) = match self.range {
            DiscoveryRange::Subnet => (false, true, true),
            DiscoveryRange::SystemDefault => (false, true, false),
            DiscoveryRange::Localhost => (true, false, true),
            DiscoveryRange::Off => (false, false, false),
        };
        // LOCALHOST selects no interface, as rmw_cyclonedds: multicast off and `localhost` as a
        // peer keep discovery on the machine, and a user's own interface selection
        // (CYCLONEDDS_URI) stays possible.
        if !multicast {
            general.push_str("<AllowMulticast>false</AllowMulticast>");
        }
        if let Some(size) = self.fragment_size {
            general.push_str(&format!(
                "<FragmentSize>{size}B</FragmentSize><MaxMessageSize>{}B</MaxMessageSize>",
                size.max(14_720)
            ));
        }
        match self.range {
            DiscoveryRange::Off => discovery.push_str(&format!(
                "<ParticipantIndex>none</ParticipantIndex><Tag>ros_discovery_off_{}</Tag>",
                std::process::id()
            )),
            DiscoveryRange::Localhost => discovery.push_str(
                "<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>",
            ),
            DiscoveryRange::Subnet if !self.static_peers.is_empty() => discovery.push_str(
                "<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>",
            ),
            _ => {}
        }
        if peers && (localhost || !self.static_peers.is_empty()) {
            discovery.push_str("<Peers>");
            if localhost {
                discovery.push_str("<Peer address=\"localhost\"/>");
            }
            for peer in &self.static_peers {
                discovery.push_str(&format!("<Peer address=\"{peer}\"/>"));
            }
            discovery.push_str("</Peers>");
        }
        let mut xml = String::from("<CycloneDDS><Domain Id=\"any\">");
        if !general.is_empty() {
            xml.push_str(&format!("<General>{general}</General>"));
        }
        if !discovery.is_empty() {
            xml.push_str(&format!("<Discovery>{discovery}</Discovery>"));
        }
        xml.push_str(&format!(
            "<Internal><SocketReceiveBufferSize min=\"default\" max=\"{}B\"/></Internal>",
            self.receive_buffer
        ));
        xml.push_str("</Domain></CycloneDDS>");
        if let Some(user) = &self.user_config {
            xml.push(',');
            xml.push_str(user);
        }
        xml
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
        assert!(cfg(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "PLANET")]).is_err());
        assert_eq!(
            cfg(&[("ROSBAG2_RS_DDS_RECEIVE_BUFFER", "8MiB")])
                .unwrap()
                .receive_buffer,
            8 << 20
        );
        assert!(cfg(&[("ROSBAG2_RS_DDS_RECEIVE_BUFFER", "8 parsecs")]).is_err());
        assert_eq!(
            cfg(&[("ROSBAG2_RS_DDS_FRAGMENT_SIZE", "8000")])
                .unwrap()
                .fragment_size,
            Some(8000)
        );
        assert!(cfg(&[("ROSBAG2_RS_DDS_FRAGMENT_SIZE", "100000")]).is_err());
    }

    #[test]
    fn cyclone_configuration_follows_rmw_cyclonedds() {
        let subnet = cfg(&[]).unwrap().cyclone_xml();
        assert!(
            !subnet.contains("AllowMulticast") && !subnet.contains("Peers"),
            "{subnet}"
        );
        assert!(subnet.contains(r#"<SocketReceiveBufferSize min="default" max="16777216B"/>"#));
        let local = cfg(&[
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
            ("ROS_STATIC_PEERS", "10.0.0.2"),
        ])
        .unwrap()
        .cyclone_xml();
        assert!(!local.contains("Interface"), "{local}");
        for part in [
            "<AllowMulticast>false</AllowMulticast>",
            "<ParticipantIndex>auto</ParticipantIndex>",
            r#"<Peers><Peer address="localhost"/><Peer address="10.0.0.2"/></Peers>"#,
        ] {
            assert!(local.contains(part), "{part} missing in {local}");
        }
        let off = cfg(&[
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF"),
            ("ROS_STATIC_PEERS", "10.0.0.2"),
        ])
        .unwrap()
        .cyclone_xml();
        assert!(
            off.contains("<Tag>ros_discovery_off_") && !off.contains("Peer"),
            "{off}"
        );
        let user = cfg(&[("CYCLONEDDS_URI", "file:///etc/cyclone.xml")])
            .unwrap()
            .cyclone_xml();
        assert!(
            user.ends_with("</CycloneDDS>,file:///etc/cyclone.xml"),
            "the user's file comes last: {user}"
        );
    }
}
