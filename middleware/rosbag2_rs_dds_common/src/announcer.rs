//! This node's own entry on `ros_discovery_info` (rmw_dds_common's `ParticipantEntitiesInfo`),
//! republished whenever one of its endpoints comes or goes: the same for every DDS backend.

use std::collections::BTreeSet;
use std::sync::Arc;

use parking_lot::Mutex;

use super::discovery_info::{NodeEntities, ParticipantEntities};
use super::Guid;
use rosbag2_rs_middleware::error::Result;

/// Writes one serialized `ros_discovery_info` sample.
pub type WriteFn = Box<dyn Fn(&[u8]) -> Result<()> + Send + Sync>;

/// Publishes this node's entry on `ros_discovery_info` whenever its endpoints change.
pub struct Announcer {
    write: WriteFn,
    gid: Guid,
    node: Mutex<(NodeEntities, BTreeSet<Guid>, BTreeSet<Guid>)>,
}

impl Announcer {
    /// Announces the node `namespace`/`name` of the participant `gid` through `write` (a
    /// `ros_discovery_info` writer of the backend).
    pub fn new(write: WriteFn, gid: Guid, namespace: &str, name: &str) -> Self {
        let node = NodeEntities {
            namespace: namespace.to_string(),
            name: name.to_string(),
            ..Default::default()
        };
        let announcer = Self {
            write,
            gid,
            node: Mutex::new((node, BTreeSet::new(), BTreeSet::new())),
        };
        announcer.update(|_, _| {});
        announcer
    }

    fn update(&self, change: impl FnOnce(&mut BTreeSet<Guid>, &mut BTreeSet<Guid>)) {
        let mut guard = self.node.lock();
        let (node, readers, writers) = &mut *guard;
        change(readers, writers);
        node.readers = readers.iter().copied().collect();
        node.writers = writers.iter().copied().collect();
        let info = ParticipantEntities {
            gid: self.gid,
            nodes: vec![node.clone()],
        };
        if let Err(e) = (self.write)(&info.encode()) {
            log::warn!("cannot announce the node on ros_discovery_info: {e}");
        }
    }

    /// Lists an endpoint of the node until the returned guard is dropped.
    pub fn add(self: &Arc<Self>, guid: Guid, is_writer: bool) -> Announced {
        self.update(|readers, writers| {
            if is_writer { writers } else { readers }.insert(guid);
        });
        Announced {
            announcer: self.clone(),
            guid,
            is_writer,
        }
    }
}

/// An endpoint listed in the node's announcement; dropping it removes it.
pub struct Announced {
    announcer: Arc<Announcer>,
    guid: Guid,
    is_writer: bool,
}

impl Drop for Announced {
    fn drop(&mut self) {
        let (guid, is_writer) = (self.guid, self.is_writer);
        self.announcer.update(|readers, writers| {
            if is_writer { writers } else { readers }.remove(&guid);
        });
    }
}
