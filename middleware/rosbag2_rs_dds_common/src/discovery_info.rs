//! `rmw_dds_common/msg/ParticipantEntitiesInfo`, the message every ROS 2 participant publishes
//! on `ros_discovery_info` to say which nodes it holds and which readers and writers belong to
//! each (what `ros2 node list` and `ros2 node info` read). Jazzy's layout: GIDs of 16 bytes.

use super::Guid;

/// The DDS topic (no `rt/` prefix: ROS namespace conventions are avoided for it).
pub const TOPIC: &str = "ros_discovery_info";
/// The DDS type name.
pub const TYPE: &str = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_";

/// One node and its endpoints.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeEntities {
    /// Namespace, e.g. `/`.
    pub namespace: String,
    /// Node name.
    pub name: String,
    /// GIDs of its readers (subscriptions, service request readers, client reply readers).
    pub readers: Vec<Guid>,
    /// GIDs of its writers (publishers, service reply writers, client request writers).
    pub writers: Vec<Guid>,
}

impl NodeEntities {
    /// `/ns/name`.
    pub fn fully_qualified_name(&self) -> String {
        if self.namespace.ends_with('/') {
            format!("{}{}", self.namespace, self.name)
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
}

/// A participant's nodes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParticipantEntities {
    /// The participant's GID.
    pub gid: Guid,
    /// Its nodes.
    pub nodes: Vec<NodeEntities>,
}

struct Writer(Vec<u8>);

impl Writer {
    fn align(&mut self, n: usize) {
        while !(self.0.len() - 4).is_multiple_of(n) {
            self.0.push(0);
        }
    }
    fn u32(&mut self, v: u32) {
        self.align(4);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
    }
    fn gids(&mut self, gids: &[Guid]) {
        self.u32(gids.len() as u32);
        for gid in gids {
            self.0.extend_from_slice(gid);
        }
    }
}

/// Why `ros_discovery_info` bytes do not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The data does not start with a CDR encapsulation header.
    #[error("no CDR encapsulation header")]
    NoHeader,
    /// The data ends inside a field.
    #[error("truncated at {field} (offset {offset})")]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Where it started.
        offset: usize,
    },
    /// A sequence length larger than the bytes left could hold.
    #[error("{field}: {count} elements cannot fit")]
    TooLong {
        /// The sequence.
        field: &'static str,
        /// Its announced length.
        count: usize,
    },
    /// A string that is not UTF-8.
    #[error("{field}: not UTF-8")]
    NotUtf8 {
        /// The string field.
        field: &'static str,
    },
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    little: bool,
}

impl Reader<'_> {
    fn bytes(&mut self, n: usize, what: &'static str) -> Result<&[u8], DecodeError> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.data.len());
        let end = end.ok_or(DecodeError::Truncated {
            field: what,
            offset: self.pos,
        })?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        self.pos += (4 - (self.pos - 4) % 4) % 4;
        let b: [u8; 4] = self.bytes(4, what)?.try_into().expect("4 bytes");
        Ok(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }
    fn count(&mut self, what: &'static str, min_element: usize) -> Result<usize, DecodeError> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(min_element) > self.data.len() - self.pos {
            return Err(DecodeError::TooLong {
                field: what,
                count: n,
            });
        }
        Ok(n)
    }
    fn gid(&mut self, what: &'static str) -> Result<Guid, DecodeError> {
        Ok(self.bytes(16, what)?.try_into().expect("16 bytes"))
    }
    fn gids(&mut self, what: &'static str) -> Result<Vec<Guid>, DecodeError> {
        let n = self.count(what, 16)?;
        (0..n).map(|_| self.gid(what)).collect()
    }
    fn string(&mut self, what: &'static str) -> Result<String, DecodeError> {
        let n = self.count(what, 1)?;
        let raw = self.bytes(n, what)?;
        let text = raw.strip_suffix(&[0]).unwrap_or(raw);
        String::from_utf8(text.to_vec()).map_err(|_| DecodeError::NotUtf8 { field: what })
    }
}

impl ParticipantEntities {
    /// CDR (little endian) with its encapsulation header.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(vec![0, 1, 0, 0]);
        w.0.extend_from_slice(&self.gid);
        w.u32(self.nodes.len() as u32);
        for node in &self.nodes {
            w.string(&node.namespace);
            w.string(&node.name);
            w.gids(&node.readers);
            w.gids(&node.writers);
        }
        w.0
    }

    /// Decodes CDR of either byte order; a clear reason for bad bytes.
    pub fn decode(data: &[u8]) -> Result<Self, DecodeError> {
        let little = match data.get(..2) {
            Some([0, 1]) => true,
            Some([0, 0]) => false,
            _ => return Err(DecodeError::NoHeader),
        };
        let mut r = Reader {
            data,
            pos: 4,
            little,
        };
        let gid = r.gid("gid")?;
        let n = r.count("node_entities_info_seq", 16)?;
        let nodes = (0..n)
            .map(|_| {
                Ok(NodeEntities {
                    namespace: r.string("node_namespace")?,
                    name: r.string("node_name")?,
                    readers: r.gids("reader_gid_seq")?,
                    writers: r.gids("writer_gid_seq")?,
                })
            })
            .collect::<Result<_, DecodeError>>()?;
        Ok(Self { gid, nodes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let info = ParticipantEntities {
            gid: [1; 16],
            nodes: vec![NodeEntities {
                namespace: "/".into(),
                name: "rosbag2_player".into(),
                readers: vec![[2; 16]],
                writers: vec![[3; 16], [4; 16]],
            }],
        };
        let bytes = info.encode();
        assert_eq!(ParticipantEntities::decode(&bytes).unwrap(), info);
        assert_eq!(info.nodes[0].fully_qualified_name(), "/rosbag2_player");
        for cut in 0..bytes.len() {
            assert!(ParticipantEntities::decode(&bytes[..cut]).is_err(), "{cut}");
        }
        let mut huge = bytes.clone();
        huge[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(ParticipantEntities::decode(&huge).is_err());
    }
}
