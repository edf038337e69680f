//! The graph as rmw_zenoh's graph cache keeps it: every live token of the domain, parsed, kept
//! by its key expression (puts add, deletes remove), and turned into the topic listing the other
//! backends give.

use std::collections::BTreeMap;

use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Sender;

use super::keys;
use super::liveliness::{Entity, EntityKind};
use rosbag2_rs_middleware::{group_by_topic, EndpointInfo, GraphEvent, TopicInfo};

/// Live entities by token.
#[derive(Default)]
pub struct Graph {
    entities: Mutex<BTreeMap<String, Entity>>,
    listeners: Mutex<Vec<Sender<GraphEvent>>>,
}

impl Graph {
    /// A token appeared (a liveliness put or a reply to the initial query).
    pub fn put(&self, token: &str) {
        let entity = match Entity::parse(token) {
            Ok(entity) => entity,
            Err(e) => {
                log::debug!("{e}");
                return;
            }
        };
        let event = match (&entity.kind, &entity.topic) {
            (EntityKind::Publisher, Some(topic)) => {
                keys::ros_type(&topic.dds_type).map(|t| GraphEvent::PublisherAppeared {
                    topic: topic.name.clone(),
                    type_name: t,
                })
            }
            _ => None,
        };
        let new = self
            .entities
            .lock()
            .insert(token.to_string(), entity)
            .is_none();
        if let (true, Some(event)) = (new, event) {
            self.listeners
                .lock()
                .retain(|tx| tx.send(event.clone()).is_ok());
        }
    }

    /// A token went away.
    pub fn delete(&self, token: &str) {
        self.entities.lock().remove(token);
    }

    /// Sends graph events to `tx` from now on.
    pub fn listen(&self, tx: Sender<GraphEvent>) {
        self.listeners.lock().push(tx);
    }

    /// Entities of `kind` on the topic or service `name`, by their type.
    pub fn endpoints(&self, kind: EntityKind, name: &str) -> Vec<Entity> {
        self.entities
            .lock()
            .values()
            .filter(|e| e.kind == kind && e.topic.as_ref().is_some_and(|t| t.name == name))
            .cloned()
            .collect()
    }

    /// The type hash announced by any endpoint of `kinds` on `name` with DDS type `dds_type`.
    pub fn announced_hash(
        &self,
        kinds: &[EntityKind],
        name: &str,
        dds_type: &str,
    ) -> Option<String> {
        self.entities
            .lock()
            .values()
            .filter(|e| kinds.contains(&e.kind))
            .filter_map(|e| e.topic.as_ref())
            .find(|t| t.name == name && t.dds_type == dds_type)
            .map(|t| t.type_hash.clone())
    }

    /// The type hash announced anywhere on the graph for DDS type `dds_type`.
    pub fn any_hash_of_type(&self, dds_type: &str) -> Option<String> {
        self.entities
            .lock()
            .values()
            .filter_map(|e| e.topic.as_ref())
            .find(|t| t.dds_type == dds_type && keys::is_rihs01(&t.type_hash))
            .map(|t| t.type_hash.clone())
    }

    /// Whether no token is known.
    pub fn is_empty(&self) -> bool {
        self.entities.lock().is_empty()
    }

    /// Every entity (for node listings and tests).
    pub fn entities(&self) -> Vec<Entity> {
        self.entities.lock().values().cloned().collect()
    }

    /// Topics with their publishers and subscriptions.
    pub fn topics(&self) -> Vec<TopicInfo> {
        let endpoints: Vec<(String, bool, EndpointInfo)> = self
            .entities
            .lock()
            .values()
            .filter_map(|e| {
                let is_publisher = match e.kind {
                    EntityKind::Publisher => true,
                    EntityKind::Subscription => false,
                    _ => return None,
                };
                let topic = e.topic.as_ref()?;
                let type_name = keys::ros_type(&topic.dds_type)?;
                Some((
                    topic.name.clone(),
                    is_publisher,
                    EndpointInfo {
                        type_name,
                        qos: topic.qos,
                        node: Some(e.node.fully_qualified_name()),
                        type_hash: keys::is_rihs01(&topic.type_hash)
                            .then(|| topic.type_hash.clone()),
                    },
                ))
            })
            .collect();
        group_by_topic(endpoints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUB: &str = "@ros2_lv/0/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%robot/talker/%chatter/std_msgs::msg::dds_::String_/RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18/:1:,1:,:,:,,";
    const SUB: &str = "@ros2_lv/0/aac3178e146ba6f1fc6e6a4085e77f21/0/10/MS/%/%/listener/%chatter/std_msgs::msg::dds_::String_/TypeHashNotSupported/2::,10:,:,:,,";

    #[test]
    fn tokens_become_topics_and_events() {
        let graph = Graph::default();
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::unbounded();
        graph.listen(tx);
        graph.put(PUB);
        graph.put(PUB);
        graph.put(SUB);
        graph.put("@ros2_lv/0/garbage");
        let topics = graph.topics();
        assert_eq!(topics.len(), 1);
        let t = &topics[0];
        assert_eq!(t.name, "/chatter");
        let p = &t.publishers[0];
        assert_eq!(p.type_name, "std_msgs/msg/String");
        assert_eq!(p.node.as_deref(), Some("/robot/talker"));
        assert_eq!(p.qos.depth, 1);
        assert_eq!(
            p.qos.durability,
            rosbag2_rs_middleware::qos::Durability::TransientLocal
        );
        assert!(p.type_hash.as_deref().unwrap().starts_with("RIHS01_df66"));
        let s = &t.subscriptions[0];
        assert_eq!(s.type_hash, None);
        assert_eq!(
            s.qos.reliability,
            rosbag2_rs_middleware::qos::Reliability::BestEffort
        );
        assert_eq!(
            rx.try_iter().collect::<Vec<_>>(),
            vec![GraphEvent::PublisherAppeared {
                topic: "/chatter".into(),
                type_name: "std_msgs/msg/String".into()
            }]
        );
        assert!(graph
            .announced_hash(
                &[EntityKind::Publisher],
                "/chatter",
                "std_msgs::msg::dds_::String_"
            )
            .is_some());
        graph.delete(PUB);
        assert!(graph.topics()[0].publishers.is_empty());
    }
}
