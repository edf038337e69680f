//! Definitions against payloads: each topic's definition must parse, and its first messages
//! (as many as asked) must decode with it. Payloads are decoded as they are read; of a topic
//! whose payloads do not decode (or that has no definition) one is kept, to find a bundled
//! typestore (`--typestore`) that decodes it.

use std::collections::BTreeMap;

use super::{Problem, ProblemKind};
use rosbag2_rs_codec::msg::{CodecError, TopicDecoder};
use rosbag2_rs_codec::{MessageDefinitionCache, Typestore};
use rosbag2_rs_storage::storage::StorageReader;

/// A payload larger than this is not kept for the typestore check.
const MAX_KEPT_PAYLOAD: usize = 1 << 20;

/// One topic's decoder and what decoding its messages gave.
struct Topic {
    type_name: String,
    /// `None`: not decoded (not CDR, no definition, or the definition does not parse).
    decoder: Option<TopicDecoder>,
    /// Whether the definition is the bag's own (else bundled, installed or a typestore's).
    stored: bool,
    /// Whether a typestore might decode its payloads: CDR without a definition stored in the
    /// bag, and none known or one that failed.
    typestore_candidate: bool,
    tried: usize,
    failed: u64,
    first_failure: Option<(i64, CodecError)>,
    /// A payload that did not decode (or had no definition to decode with).
    kept: Option<Vec<u8>>,
}

/// Decodes the first messages of every topic against its definition.
pub(super) struct PayloadCheck {
    samples: usize,
    typestore: Option<Typestore>,
    cache: MessageDefinitionCache,
    topics: BTreeMap<String, Topic>,
    /// Messages that decoded.
    pub decoded: u64,
    problems: Vec<Problem>,
    notes: Vec<String>,
}

impl PayloadCheck {
    /// Decodes up to `samples` messages per topic, with the definitions of `typestore` for
    /// topics the bag stores none for.
    pub fn new(samples: usize, typestore: Option<Typestore>) -> Self {
        Self {
            samples,
            typestore,
            cache: MessageDefinitionCache::new().with_typestore(typestore),
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
            let cdr = format.is_empty() || format == "cdr";
            let stored = reader
                .message_definitions()
                .iter()
                .find(|d| d.topic_type == t.type_name && !d.encoded_message_definition.is_empty());
            let decoder = if !cdr {
                self.notes.push(format!(
                    "topic '{}': serialization '{format}' is not CDR; its payloads are not decoded",
                    t.name
                ));
                None
            } else if let Some(d) = stored {
                self.check_hash(&t.name, &t.type_name, &t.type_description_hash, d);
                self.decoder(&t.name, &t.type_name, d)
            } else if self.cache.knows(&t.type_name) {
                let d = self.cache.definition(&t.type_name);
                self.notes.push(format!(
                    "topic '{}': the bag stores no definition of {}; checked against {}",
                    t.name,
                    t.type_name,
                    match self.typestore {
                        Some(ts) => format!("the {} typestore", ts.as_str()),
                        None => "the bundled or installed one".into(),
                    }
                ));
                self.decoder(&t.name, &t.type_name, &d)
            } else {
                self.problems.push(Problem::bag(
                    ProblemKind::Definition,
                    Some(&t.name),
                    format!(
                        "{}: no definition stored in the bag, bundled or installed{}",
                        t.type_name,
                        self.typestore
                            .map(|ts| format!(" or in the {} typestore", ts.as_str()))
                            .unwrap_or_default()
                    ),
                ));
                None
            };
            self.topics.insert(
                t.name.clone(),
                Topic {
                    type_name: t.type_name.clone(),
                    stored: stored.is_some(),
                    typestore_candidate: cdr && stored.is_none(),
                    decoder,
                    tried: 0,
                    failed: 0,
                    first_failure: None,
                    kept: None,
                },
            );
        }
    }

    /// The decoder of `topic` from `definition`; a definition that does not parse is a remark.
    fn decoder(
        &mut self,
        topic: &str,
        type_name: &str,
        definition: &rosbag2_rs_codec::MessageDefinition,
    ) -> Option<TopicDecoder> {
        TopicDecoder::new(type_name, definition)
            .map_err(|e| {
                self.problems.push(Problem::bag(
                    ProblemKind::Definition,
                    Some(topic),
                    e.to_string(),
                ))
            })
            .ok()
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
        let keep = |t: &mut Topic| {
            if t.typestore_candidate && t.kept.is_none() && data.len() <= MAX_KEPT_PAYLOAD {
                t.kept = Some(data.to_vec());
            }
        };
        let Some(decoder) = &t.decoder else {
            keep(t);
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
                keep(t);
            }
        }
    }

    /// The problems and notes found; returns the number of messages decoded.
    pub fn finish(self, problems: &mut Vec<Problem>, notes: &mut Vec<String>) -> u64 {
        let mut found = self.problems;
        for (name, t) in &self.topics {
            if let Some((time, e)) = &t.first_failure {
                found.push(Problem::bag(
                    ProblemKind::Payload,
                    Some(name),
                    format!(
                        "{} of {} sampled messages do not decode with the {} definition of {}; \
                         the first, at {time} ns: {e}",
                        t.failed,
                        t.tried,
                        if t.stored { "stored" } else { "known" },
                        t.type_name
                    ),
                ));
            }
        }
        // Name the typestore that decodes what did not (or had no definition).
        for problem in &mut found {
            let Some(t) = problem.topic.as_ref().and_then(|n| self.topics.get(n)) else {
                continue;
            };
            if let Some(typestore) = t.kept.as_deref().and_then(|p| decoding_typestore(t, p)) {
                problem.message.push_str(&format!(
                    " (`--typestore {}` decodes them)",
                    typestore.as_str()
                ));
            }
        }
        problems.extend(found);
        notes.extend(self.notes);
        self.decoded
    }
}

/// The first bundled typestore whose definition of the topic's type decodes `payload`.
fn decoding_typestore(topic: &Topic, payload: &[u8]) -> Option<Typestore> {
    Typestore::ALL.into_iter().find(|&typestore| {
        let mut cache = MessageDefinitionCache::new().with_typestore(Some(typestore));
        typestore.text(&topic.type_name).is_some()
            && cache.knows(&topic.type_name)
            && TopicDecoder::new(&topic.type_name, &cache.definition(&topic.type_name))
                .is_ok_and(|d| d.decode(payload).is_ok())
    })
}
