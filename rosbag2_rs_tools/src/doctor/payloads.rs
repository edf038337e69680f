//! Definitions against payloads: each topic's definition must parse, and its first messages
//! (as many as asked) must decode with it. Payloads are decoded as they are read, so that
//! nothing is kept in memory.

use std::collections::BTreeMap;

use super::{Problem, ProblemKind};
use rosbag2_rs_codec::msg::{CodecError, TopicDecoder};
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::storage::StorageReader;

/// One topic's decoder and what decoding its messages gave.
struct Topic {
    type_name: String,
    /// `None`: not decoded (not CDR, or the definition does not parse).
    decoder: Option<TopicDecoder>,
    tried: usize,
    failed: u64,
    first_failure: Option<(i64, CodecError)>,
}

/// Decodes the first messages of every topic against its definition.
pub(super) struct PayloadCheck {
    samples: usize,
    cache: MessageDefinitionCache,
    topics: BTreeMap<String, Topic>,
    /// Messages that decoded.
    pub decoded: u64,
    problems: Vec<Problem>,
    notes: Vec<String>,
}

impl PayloadCheck {
    /// Decodes up to `samples` messages per topic.
    pub fn new(samples: usize) -> Self {
        Self {
            samples,
            cache: MessageDefinitionCache::new(),
            topics: BTreeMap::new(),
            decoded: 0,
            problems: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Registers the topics of a file not seen before, with the definitions it stores (else
    /// the bundled or installed ones).
    pub fn add_topics(&mut self, reader: &dyn StorageReader) {
        for info in reader.topics() {
            let t = &info.topic_metadata;
            if self.topics.contains_key(&t.name) {
                continue;
            }
            let format = &t.serialization_format;
            let decoder = if !format.is_empty() && format != "cdr" {
                self.notes.push(format!(
                    "topic '{}': serialization '{format}' is not CDR; its payloads are not decoded",
                    t.name
                ));
                None
            } else {
                let stored = reader.message_definitions().iter().find(|d| {
                    d.topic_type == t.type_name && !d.encoded_message_definition.is_empty()
                });
                if let Some(d) = stored {
                    self.check_hash(&t.name, &t.type_name, &t.type_description_hash, d);
                }
                let definition = match stored {
                    Some(d) => d.clone(),
                    None => {
                        let d = self.cache.definition(&t.type_name);
                        if !d.encoded_message_definition.is_empty() {
                            self.notes.push(format!(
                                "topic '{}': the bag stores no definition of {}; checked against \
                                 the bundled one",
                                t.name, t.type_name
                            ));
                        }
                        d
                    }
                };
                match TopicDecoder::new(&t.type_name, &definition) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        self.problems.push(Problem::bag(
                            ProblemKind::Definition,
                            Some(&t.name),
                            e.to_string(),
                        ));
                        None
                    }
                }
            };
            self.topics.insert(
                t.name.clone(),
                Topic {
                    type_name: t.type_name.clone(),
                    decoder,
                    tried: 0,
                    failed: 0,
                    first_failure: None,
                },
            );
        }
    }

    /// A recorded RIHS01 type hash must be the hash of the stored definition: else the
    /// definition does not describe the type the publisher announced.
    fn check_hash(
        &mut self,
        topic: &str,
        type_name: &str,
        recorded: &str,
        definition: &rosbag2_rs_codec::MessageDefinition,
    ) {
        if !rosbag2_rs_codec::type_hash::is_rihs01(recorded) {
            return;
        }
        match rosbag2_rs_codec::type_hash::rihs01(type_name, definition) {
            Ok(computed) if computed != recorded => self.problems.push(Problem::bag(
                ProblemKind::Definition,
                Some(topic),
                format!(
                    "the recorded type hash {recorded} is not the hash of the stored definition \
                     of {type_name} ({computed})"
                ),
            )),
            Ok(_) => {}
            Err(e) => self.notes.push(format!(
                "topic '{topic}': the type hash of the stored definition cannot be computed: {e}"
            )),
        }
    }

    /// Decodes one message of `topic` unless enough of its messages were.
    pub fn check(&mut self, topic: &str, time: i64, data: &[u8]) {
        let Some(t) = self.topics.get_mut(topic) else {
            return;
        };
        let Some(decoder) = &t.decoder else {
            return;
        };
        if t.tried >= self.samples {
            return;
        }
        t.tried += 1;
        match decoder.decode(data) {
            Ok(_) => self.decoded += 1,
            Err(e) => {
                t.failed += 1;
                t.first_failure.get_or_insert((time, e));
            }
        }
    }

    /// The problems and notes found; returns the number of messages decoded.
    pub fn finish(self, problems: &mut Vec<Problem>, notes: &mut Vec<String>) -> u64 {
        problems.extend(self.problems);
        notes.extend(self.notes);
        for (name, t) in self.topics {
            if let Some((time, e)) = t.first_failure {
                problems.push(Problem::bag(
                    ProblemKind::Payload,
                    Some(&name),
                    format!(
                        "{} of {} sampled messages do not decode with the {} definition; the \
                         first, at {time} ns: {e}",
                        t.failed, t.tried, t.type_name
                    ),
                ));
            }
        }
        self.decoded
    }
}
