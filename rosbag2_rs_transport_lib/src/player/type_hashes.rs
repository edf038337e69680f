//! The type hash (RIHS01, REP-2011) each played topic announces: the one the bag records,
//! checked against its definition; for bags that record none (Humble, ROS 1, RealSense, older
//! MCAP), one computed from the bag's definition or, when the bag has no usable one, from
//! `AMENT_PREFIX_PATH` and the bundled definitions.

use std::collections::HashMap;

use rosbag2_rs_codec::{type_hash, MessageDefinitionCache};
use rosbag2_rs_storage::{SequentialReader, TopicMetadata};

/// Hashes computed from definitions, once per type.
pub(crate) struct PlayedTypeHashes<'a> {
    reader: &'a SequentialReader,
    computed: HashMap<String, Option<(String, Source)>>,
}

/// Where a computed hash's definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Bag,
    Local,
}

impl<'a> PlayedTypeHashes<'a> {
    pub(crate) fn new(reader: &'a SequentialReader) -> Self {
        Self {
            reader,
            computed: HashMap::new(),
        }
    }

    /// The hash to announce for `topic`: the recorded one (a computed one that differs is a
    /// warning), else the computed one, else none.
    pub(crate) fn for_topic(
        &mut self,
        topic: &TopicMetadata,
        definitions: &mut MessageDefinitionCache,
    ) -> Option<String> {
        let recorded = type_hash::announced(Some(&topic.type_description_hash))
            .map(str::to_string)
            .or_else(|| self.recorded_with_definition(&topic.type_name));
        let computed = self.computed(&topic.type_name, definitions);
        match (recorded, computed) {
            (Some(recorded), Some((computed, source))) => {
                if computed != recorded {
                    let from = match source {
                        Source::Bag => "its definition in the bag",
                        Source::Local => "the local definition",
                    };
                    log::warn!(
                        "topic '{}': the bag records type hash {recorded} for {}, but {from} \
                         hashes to {computed}; announcing the recorded one",
                        topic.name,
                        topic.type_name
                    );
                }
                Some(recorded)
            }
            (Some(recorded), None) => Some(recorded),
            (None, computed) => computed.map(|(hash, _)| hash),
        }
    }

    /// A hash stored with the type's definition (SQLite `message_definitions`).
    fn recorded_with_definition(&self, type_name: &str) -> Option<String> {
        let stored = self.reader.stored_definition(type_name)?;
        type_hash::announced(Some(&stored.type_description_hash)).map(str::to_string)
    }

    fn computed(
        &mut self,
        type_name: &str,
        definitions: &mut MessageDefinitionCache,
    ) -> Option<(String, Source)> {
        if let Some(done) = self.computed.get(type_name) {
            return done.clone();
        }
        let from_bag = match self.reader.stored_definition(type_name) {
            Some(stored) => type_hash::rihs01(type_name, stored),
            None => Err(type_hash::TypeHashError::NoDefinition(
                type_name.to_string(),
            )),
        };
        let computed = match from_bag {
            Ok(hash) => Some((hash, Source::Bag)),
            Err(bag_error) => match definitions.type_hash(type_name) {
                Ok(hash) => Some((hash, Source::Local)),
                Err(e) => {
                    log::debug!(
                        "no type hash for {type_name}: from the bag's definition: {bag_error}; \
                         from local definitions: {e}"
                    );
                    None
                }
            },
        };
        self.computed
            .insert(type_name.to_string(), computed.clone());
        computed
    }
}
