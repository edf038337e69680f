//! Services over DDS with serialized requests and responses, in either request-id mapping
//! (see [`ServiceMapping`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use parking_lot::Mutex;
use rustdds::no_key::{DataWriter, SimpleDataReader};
use rustdds::{DomainParticipant, RTPSEntity, SampleIdentity, WriteOptionsBuilder};

use super::config::ServiceMapping;
use super::dispatcher::{Drain, Registration};
use super::raw::{RawAdapter, RawCdr};
use crate::error::{Result, TransportError};
use crate::middleware::{RawClient, ServiceHandler};

pub(crate) type Reader = SimpleDataReader<RawCdr, RawAdapter>;
pub(crate) type Writer = DataWriter<RawCdr, RawAdapter>;

/// Bytes of the rmw_cyclonedds request header (client id, sequence number).
const CYCLONE_HEADER: usize = 16;

/// Identifies a request in a response: the Cyclone header, or the request's sample identity.
type RequestKey = Vec<u8>;

fn identity_key(id: &SampleIdentity) -> RequestKey {
    let mut key = id.writer_guid.to_bytes().to_vec();
    key.extend_from_slice(&i64::from(id.sequence_number).to_le_bytes());
    key
}

/// Splits a Cyclone-mapped payload into its header and the plain CDR message.
fn split_cyclone(payload: &[u8]) -> std::result::Result<(RequestKey, Vec<u8>), String> {
    if payload.len() < 4 + CYCLONE_HEADER {
        return Err(format!(
            "{} bytes: too short for the rmw_cyclonedds request header",
            payload.len()
        ));
    }
    let mut message = payload[..4].to_vec();
    message.extend_from_slice(&payload[4 + CYCLONE_HEADER..]);
    Ok((payload[4..4 + CYCLONE_HEADER].to_vec(), message))
}

/// Puts a Cyclone header in front of a plain CDR message.
fn join_cyclone(header: &[u8], message: &[u8]) -> std::result::Result<bytes::Bytes, String> {
    if message.len() < 4 {
        return Err("a CDR message needs its 4-byte encapsulation header".into());
    }
    let mut out = Vec::with_capacity(message.len() + CYCLONE_HEADER);
    out.extend_from_slice(&message[..4]);
    out.extend_from_slice(header);
    out.extend_from_slice(&message[4..]);
    Ok(out.into())
}

/// Serves one service: answers every request on the request topic.
pub(crate) struct ServerDrain {
    pub service: String,
    pub mapping: ServiceMapping,
    pub reader: Reader,
    pub writer: Writer,
    pub handler: ServiceHandler,
}

impl ServerDrain {
    fn answer(
        &mut self,
        sample: rustdds::no_key::DeserializedCacheChange<RawCdr>,
    ) -> std::result::Result<(), String> {
        let payload = &sample.sample.0;
        match self.mapping {
            ServiceMapping::Cyclone => {
                let (header, request) = split_cyclone(payload)?;
                let response = (self.handler)(&request)?;
                let reply = join_cyclone(&header, &response)?;
                self.writer
                    .write(RawCdr(reply), None)
                    .map_err(|e| format!("sending the reply: {e:?}"))
            }
            ServiceMapping::FastRtps => {
                let identity =
                    sample
                        .write_options
                        .related_sample_identity()
                        .unwrap_or(SampleIdentity {
                            writer_guid: sample.writer_guid,
                            sequence_number: sample.sequence_number,
                        });
                let response = (self.handler)(payload)?;
                let options = WriteOptionsBuilder::new()
                    .related_sample_identity(identity)
                    .build();
                self.writer
                    .write_with_options(RawCdr(response.into()), options)
                    .map(drop)
                    .map_err(|e| format!("sending the reply: {e:?}"))
            }
        }
    }
}

impl Drain for ServerDrain {
    fn drain(&mut self) {
        self.reader.drain_read_notifications();
        loop {
            match self.reader.try_take_one() {
                Ok(Some(sample)) => {
                    if let Err(reason) = self.answer(sample) {
                        log::warn!("service '{}': request refused: {reason}", self.service);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    log::warn!("service '{}': unreadable request: {e:?}", self.service);
                }
            }
        }
    }

    fn source(&mut self) -> &mut dyn mio::event::Source {
        &mut self.reader
    }
}

type Pending = Arc<Mutex<HashMap<RequestKey, Sender<Vec<u8>>>>>;

/// Routes replies to the calls waiting for them.
pub(crate) struct ReplyDrain {
    pub mapping: ServiceMapping,
    pub reader: Reader,
    pub pending: Pending,
}

impl Drain for ReplyDrain {
    fn drain(&mut self) {
        self.reader.drain_read_notifications();
        while let Ok(Some(sample)) = self.reader.try_take_one() {
            let routed = match self.mapping {
                ServiceMapping::Cyclone => split_cyclone(&sample.sample.0).ok(),
                ServiceMapping::FastRtps => sample
                    .write_options
                    .related_sample_identity()
                    .map(|id| (identity_key(&id), sample.sample.0.to_vec())),
            };
            if let Some((key, response)) = routed {
                if let Some(tx) = self.pending.lock().remove(&key) {
                    let _ = tx.send(response);
                }
            }
        }
    }

    fn source(&mut self) -> &mut dyn mio::event::Source {
        &mut self.reader
    }
}

/// A client of one service over DDS.
pub(crate) struct DdsClient {
    pub service: String,
    pub request_topic: String,
    pub mapping: ServiceMapping,
    pub writer: Writer,
    pub pending: Pending,
    pub participant: DomainParticipant,
    pub sequence: AtomicI64,
    pub _replies: Registration,
}

impl DdsClient {
    pub fn new_pending() -> Pending {
        Arc::new(Mutex::new(HashMap::new()))
    }
}

impl RawClient for DdsClient {
    fn wait_for_service(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self
                .participant
                .discovered_readers()
                .iter()
                .any(|r| *r.subscription_topic_data.topic_name() == self.request_topic)
            {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn call(&self, request: &[u8], timeout: Duration) -> Result<Vec<u8>> {
        crate::middleware::check_payload(request)?;
        let (tx, rx) = crossbeam_channel::bounded(1);
        let key = {
            let mut pending = self.pending.lock();
            let key = match self.mapping {
                ServiceMapping::Cyclone => {
                    let mut header = self.writer.guid().to_bytes()[8..16].to_vec();
                    header.extend_from_slice(
                        &self.sequence.fetch_add(1, Ordering::Relaxed).to_le_bytes(),
                    );
                    let payload = join_cyclone(&header, request).map_err(|reason| {
                        TransportError::Service {
                            service: self.service.clone(),
                            reason,
                        }
                    })?;
                    self.writer
                        .write(RawCdr(payload), None)
                        .map_err(|e| TransportError::Middleware(format!("{e:?}")))?;
                    header
                }
                ServiceMapping::FastRtps => {
                    let id = self
                        .writer
                        .write_with_options(
                            RawCdr(request.to_vec().into()),
                            WriteOptionsBuilder::new().build(),
                        )
                        .map_err(|e| TransportError::Middleware(format!("{e:?}")))?;
                    identity_key(&id)
                }
            };
            pending.insert(key.clone(), tx);
            key
        };
        match rx.recv_timeout(timeout) {
            Ok(response) => Ok(response),
            Err(_) => {
                self.pending.lock().remove(&key);
                Err(TransportError::Timeout(self.service.clone()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cyclone_header_round_trip_and_short_input() {
        let header = [7u8; 16];
        let message = [0, 1, 0, 0, 42, 0, 0, 0];
        let joined = join_cyclone(&header, &message).unwrap();
        assert_eq!(joined.len(), 24);
        let (h, m) = split_cyclone(&joined).unwrap();
        assert_eq!((h.as_slice(), m.as_slice()), (&header[..], &message[..]));
        assert!(split_cyclone(&[0, 1, 0, 0, 1, 2]).is_err());
        assert!(join_cyclone(&header, &[0, 1]).is_err());
    }
}
