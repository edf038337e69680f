//! rmw_zenoh's liveliness tokens: every node, publisher, subscription, service and client
//! declares one, and the graph is whatever tokens are alive.
//!
//! Node: `@ros2_lv/<domain>/<zid>/<nid>/<nid>/NN/<enclave>/<namespace>/<node>`; endpoints:
//! `@ros2_lv/<domain>/<zid>/<nid>/<id>/<MP|MS|SS|SC>/<enclave>/<namespace>/<node>/<name>/<DDS type>/<type hash>/<qos>`,
//! names mangled (`/` → `%`). An entity's GID is the XXH3-128 hash of its token (low 64 bits
//! then high 64 bits, little-endian), as rmw_zenoh computes it.

use rosbag2_rs_middleware::QosProfile;

use super::keys::{demangle, mangle, topic_key};
use super::qos;

/// The admin space prefix of every token.
pub const ADMIN_SPACE: &str = "@ros2_lv";

/// The key expression that matches every token of a domain.
pub fn domain_tokens(domain_id: u32) -> String {
    format!("{ADMIN_SPACE}/{domain_id}/**")
}

/// What a token is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntityKind {
    /// `NN`: a node.
    Node,
    /// `MP`: a message publisher.
    Publisher,
    /// `MS`: a message subscription.
    Subscription,
    /// `SS`: a service server.
    Service,
    /// `SC`: a service client.
    Client,
}

impl EntityKind {
    /// The token's two letters.
    pub const fn code(self) -> &'static str {
        match self {
            EntityKind::Node => "NN",
            EntityKind::Publisher => "MP",
            EntityKind::Subscription => "MS",
            EntityKind::Service => "SS",
            EntityKind::Client => "SC",
        }
    }

    fn parse(code: &str) -> Option<Self> {
        [
            EntityKind::Node,
            EntityKind::Publisher,
            EntityKind::Subscription,
            EntityKind::Service,
            EntityKind::Client,
        ]
        .into_iter()
        .find(|k| k.code() == code)
    }
}

/// A token that is not in rmw_zenoh's format.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("liveliness token '{token}': {reason}")]
pub struct TokenError {
    /// The token.
    pub token: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// The node a token belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeInfo {
    /// `ROS_DOMAIN_ID`.
    pub domain_id: u32,
    /// SROS enclave, `/` when unset.
    pub enclave: String,
    /// Namespace, `/` or `/a/b`.
    pub namespace: String,
    /// Node name.
    pub name: String,
}

impl NodeInfo {
    /// `/namespace/name`.
    pub fn fully_qualified_name(&self) -> String {
        if self.namespace == "/" {
            format!("/{}", self.name)
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
}

/// The topic or service part of an endpoint's token.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicInfo {
    /// Fully qualified ROS name.
    pub name: String,
    /// DDS type name (`pkg::msg::dds_::Type_`; services without `Request_`/`Response_`).
    pub dds_type: String,
    /// `RIHS01_…` (or `TypeHashNotSupported`).
    pub type_hash: String,
    /// QoS as rmw_zenoh adapted it.
    pub qos: QosProfile,
}

impl TopicInfo {
    /// The data key expression of this topic or service.
    pub fn key(&self, domain_id: u32) -> String {
        topic_key(domain_id, &self.name, &self.dds_type, &self.type_hash)
    }
}

/// One entity of the graph, as its token describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    /// The Zenoh session id of its process's context.
    pub zid: String,
    /// Its node's id within that context.
    pub node_id: String,
    /// Its own id (a node's is its node id).
    pub id: String,
    /// What it is.
    pub kind: EntityKind,
    /// Its node.
    pub node: NodeInfo,
    /// Topic or service, for every kind but nodes.
    pub topic: Option<TopicInfo>,
}

impl Entity {
    /// The token's key expression.
    pub fn token(&self) -> String {
        let mut parts = vec![
            ADMIN_SPACE.to_string(),
            self.node.domain_id.to_string(),
            self.zid.clone(),
            self.node_id.clone(),
            self.id.clone(),
            self.kind.code().to_string(),
            mangle(&self.node.enclave),
            mangle(&self.node.namespace),
            mangle(&self.node.name),
        ];
        if let Some(topic) = &self.topic {
            parts.push(mangle(&topic.name));
            parts.push(mangle(&topic.dds_type));
            parts.push(mangle(&topic.type_hash));
            parts.push(qos::to_token_string(&topic.qos));
        }
        parts.join("/")
    }

    /// The entity's GID: XXH3-128 of its token, low half first, both little-endian.
    pub fn gid(&self) -> [u8; 16] {
        gid_of_token(&self.token())
    }

    /// Reads a token.
    pub fn parse(token: &str) -> Result<Entity, TokenError> {
        let err = |reason| TokenError {
            token: token.to_string(),
            reason,
        };
        let parts: Vec<&str> = token.split('/').collect();
        if parts.len() < 9 {
            return Err(err("fewer than 9 chunks"));
        }
        if parts.iter().any(|p| p.is_empty()) {
            return Err(err("an empty chunk"));
        }
        if parts[0] != ADMIN_SPACE {
            return Err(err("not under @ros2_lv"));
        }
        let kind = EntityKind::parse(parts[5]).ok_or_else(|| err("unknown entity kind"))?;
        let domain_id = parts[1]
            .parse()
            .map_err(|_| err("the domain id is not a number"))?;
        let topic = if kind == EntityKind::Node {
            None
        } else {
            if parts.len() < 13 {
                return Err(err("an endpoint token needs 13 chunks"));
            }
            Some(TopicInfo {
                name: demangle(parts[9]),
                dds_type: demangle(parts[10]),
                type_hash: demangle(parts[11]),
                qos: qos::from_token_string(parts[12]).map_err(|_| err("invalid QoS"))?,
            })
        };
        Ok(Entity {
            zid: parts[2].to_string(),
            node_id: parts[3].to_string(),
            id: parts[4].to_string(),
            kind,
            node: NodeInfo {
                domain_id,
                enclave: demangle(parts[6]),
                namespace: demangle(parts[7]),
                name: demangle(parts[8]),
            },
            topic,
        })
    }
}

/// rmw_zenoh's GID of the entity with this token.
pub fn gid_of_token(token: &str) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(token.as_bytes()).to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRING_HASH: &str =
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

    fn node(name: &str) -> NodeInfo {
        NodeInfo {
            domain_id: 2,
            enclave: "/".into(),
            namespace: "/".into(),
            name: name.into(),
        }
    }

    fn endpoint(zid: &str, kind: EntityKind, node_name: &str, depth: u64) -> Entity {
        Entity {
            zid: zid.into(),
            node_id: "0".into(),
            id: "10".into(),
            kind,
            node: node(node_name),
            topic: Some(TopicInfo {
                name: "/chatter".into(),
                dds_type: "std_msgs::msg::dds_::String_".into(),
                type_hash: STRING_HASH.into(),
                qos: qos::adapt(&QosProfile {
                    depth,
                    ..QosProfile::default()
                }),
            }),
        }
    }

    #[test]
    fn tokens_match_rmw_zenoh_design_doc() {
        // Golden tokens from rmw_zenoh's docs/design.md (demo_nodes_cpp, ROS_DOMAIN_ID=2).
        let listener = Entity {
            zid: "aac3178e146ba6f1fc6e6a4085e77f21".into(),
            node_id: "0".into(),
            id: "0".into(),
            kind: EntityKind::Node,
            node: node("listener"),
            topic: None,
        };
        assert_eq!(
            listener.token(),
            "@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/0/NN/%/%/listener"
        );
        let sub = endpoint(
            "aac3178e146ba6f1fc6e6a4085e77f21",
            EntityKind::Subscription,
            "listener",
            10,
        );
        assert_eq!(
            sub.token(),
            format!("@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/10/MS/%/%/listener/%chatter/std_msgs::msg::dds_::String_/{STRING_HASH}/::,10:,:,:,,")
        );
        let publisher = endpoint(
            "8b20917502ee955ac4476e0266340d5c",
            EntityKind::Publisher,
            "talker",
            7,
        );
        let golden = format!("@ros2_lv/2/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/{STRING_HASH}/::,7:,:,:,,");
        assert_eq!(publisher.token(), golden);
        assert_eq!(Entity::parse(&golden).unwrap(), publisher);
        assert_eq!(
            publisher.topic.as_ref().unwrap().key(2),
            format!("2/chatter/std_msgs::msg::dds_::String_/{STRING_HASH}")
        );
        let server = "@ros2_lv/2/f9980ee0495eaafb3e38f0d19e2eae12/0/10/SS/%/%/add_two_ints_server/%add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a/::,10:,:,:,,";
        let parsed = Entity::parse(server).unwrap();
        assert_eq!(parsed.kind, EntityKind::Service);
        assert_eq!(parsed.token(), server);
        assert_eq!(
            Entity::parse(&listener.token())
                .unwrap()
                .node
                .fully_qualified_name(),
            "/listener"
        );
    }

    #[test]
    fn namespaces_are_mangled() {
        let mut e = endpoint("1", EntityKind::Publisher, "player", 10);
        e.node.namespace = "/robot1".into();
        e.topic.as_mut().unwrap().name = "/robot1/camera/image".into();
        let token = e.token();
        assert!(
            token.contains("/%/%robot1/player/%robot1%camera%image/"),
            "{token}"
        );
        let back = Entity::parse(&token).unwrap();
        assert_eq!(back.node.fully_qualified_name(), "/robot1/player");
        assert_eq!(back.topic.unwrap().name, "/robot1/camera/image");
    }

    #[test]
    fn gid_is_xxh3_128_of_the_token() {
        // XXH3-128 reference vector (xxHash's test suite): the empty input hashes to
        // 0x99aa06d3014798d86001c324468d497f; rmw_zenoh copies low64 then high64.
        let mut golden = 0x6001c324468d497fu64.to_le_bytes().to_vec();
        golden.extend_from_slice(&0x99aa06d3014798d8u64.to_le_bytes());
        assert_eq!(gid_of_token("").to_vec(), golden);
        let a = endpoint("1", EntityKind::Publisher, "a", 10);
        let mut b = a.clone();
        b.id = "11".into();
        assert_ne!(a.gid(), b.gid());
        assert_eq!(a.gid(), gid_of_token(&a.token()));
    }

    #[test]
    fn bad_tokens_are_typed_errors() {
        for bad in [
            "",
            "@ros2_lv/0/z/0/0/NN/%/%",
            "@other/0/z/0/0/NN/%/%/n",
            "@ros2_lv/x/z/0/0/NN/%/%/n",
            "@ros2_lv/0/z/0/0/XX/%/%/n",
            "@ros2_lv/0/z/0/1/MP/%/%/n/%t/T_/H",
            "@ros2_lv/0/z/0/1/MP/%/%/n/%t/T_/H/bad",
            "@ros2_lv/0/z//0/NN/%/%/n",
        ] {
            assert!(Entity::parse(bad).is_err(), "{bad}");
        }
    }
}
