//! Services over DDS with serialized requests and responses, in rmw_cyclonedds's mapping: a
//! 16-byte header (client id, sequence number) in front of the payload, echoed in the reply.
//!
//! A reply is sent only once the reply writer has matched the requesting client's reply reader
//! (found by the `clientid=` USER_DATA rmw_cyclonedds clients put on both their endpoints, or
//! else by the client's participant); until then it waits, bounded, without holding up other
//! requests. Otherwise a client whose reader is discovered a moment after its request would
//! never get the answer: the race every rmw implementation had to close. At most
//! [`MAX_WAITING_REPLIES`] replies wait (a peer that sends requests without a reply reader
//! could queue them without end, each checked every dispatcher period): beyond it the oldest
//! is sent at once, unwaited, and counted. A server that goes away first delivers what it owes
//! (see [`REPLY_FLUSH_TIMEOUT`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cyclors::*;
use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Sender;

use super::dispatcher::{Dispatcher, Drain, Registration};
use super::endpoint;
use super::raw::{self, RawWriter};
use super::sys::Entity;
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::{RawClient, RequestId, ServiceHandler, REPLY_FLUSH_TIMEOUT};

/// Bytes of the rmw_cyclonedds request header (client id, sequence number).
const HEADER: usize = 16;

/// How long a reply waits for its client's reply reader to be matched.
pub const REPLY_MATCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The most replies of one server that wait for their client's reply reader; beyond it the
/// oldest is sent at once (and counted in [`ServerDrain`]'s log).
pub const MAX_WAITING_REPLIES: usize = 256;

/// Why a request could not be answered.
#[derive(Debug, thiserror::Error)]
enum AnswerError {
    /// Fewer bytes than the encapsulation and request headers.
    #[error("{0} bytes: too short for the rmw_cyclonedds request header")]
    NoHeader(usize),
    /// The handler's response lacks its 4-byte encapsulation header.
    #[error("a CDR message needs its 4-byte encapsulation header")]
    NoEncapsulation,
    /// The handler failed.
    #[error(transparent)]
    Handler(#[from] TransportError),
}

/// Splits a request or reply into its header and the plain CDR message.
fn split(payload: &[u8]) -> std::result::Result<([u8; HEADER], Vec<u8>), AnswerError> {
    if payload.len() < 4 + HEADER {
        return Err(AnswerError::NoHeader(payload.len()));
    }
    let mut message = payload[..4].to_vec();
    message.extend_from_slice(&payload[4 + HEADER..]);
    let header = payload[4..4 + HEADER].try_into().expect("16 bytes");
    Ok((header, message))
}

/// Puts a header in front of a plain CDR message.
fn join(header: &[u8; HEADER], message: &[u8]) -> std::result::Result<Vec<u8>, AnswerError> {
    if message.len() < 4 {
        return Err(AnswerError::NoEncapsulation);
    }
    let mut out = Vec::with_capacity(message.len() + HEADER);
    out.extend_from_slice(&message[..4]);
    out.extend_from_slice(header);
    out.extend_from_slice(&message[4..]);
    Ok(out)
}

/// The request's identity as rmw_cyclonedds reports it: the 8-byte client id in front of a
/// zeroed GID, and the sequence number.
fn request_id(header: &[u8; HEADER]) -> RequestId {
    let mut client_gid = [0u8; 16];
    client_gid[..8].copy_from_slice(&header[..8]);
    RequestId {
        client_gid,
        sequence_number: i64::from_le_bytes(header[8..].try_into().expect("8 bytes")),
    }
}

/// `clientid=…;` USER_DATA for a client's endpoints, formatted as rmw_cyclonedds formats it
/// (hex bytes joined by dots, the first right-aligned in two columns).
pub fn client_user_data(id: &[u8; 16]) -> String {
    id_user_data("clientid", id)
}

/// `serviceid=…;` USER_DATA for a server's endpoints, formatted as [`client_user_data`].
pub fn service_user_data(id: &[u8; 16]) -> String {
    id_user_data("serviceid", id)
}

fn id_user_data(key: &str, id: &[u8; 16]) -> String {
    let rest: String = id[1..].iter().map(|b| format!(".{b:x}")).collect();
    format!("{key}={:>2x}{rest};", id[0])
}

/// Whether the requesting client can receive a reply yet.
enum ClientState {
    /// Its reply reader is matched.
    Ready,
    /// Its request writer is known but its reply reader is not matched yet.
    NotYet,
    /// Its request writer is gone: nobody to answer.
    Gone,
}

/// A reply waiting for its client's reader.
struct PendingReply {
    reply: Vec<u8>,
    writer_handle: dds_instance_handle_t,
    deadline: Instant,
}

/// Serves one service: answers every request on the request topic.
pub struct ServerDrain {
    /// Fully qualified service name.
    pub service: String,
    /// The request reader.
    pub reader: Entity,
    /// The reply writer.
    pub writer: RawWriter,
    /// Computes responses.
    pub handler: ServiceHandler,
    /// Replies waiting for their client (at most [`MAX_WAITING_REPLIES`]).
    waiting: std::collections::VecDeque<PendingReply>,
    /// Replies sent before their client's reader was matched because too many were waiting.
    sent_unwaited: u64,
}

impl ServerDrain {
    /// A server reading requests from `reader` and replying through `writer`.
    pub fn new(
        service: String,
        reader: Entity,
        writer: RawWriter,
        handler: ServiceHandler,
    ) -> Self {
        Self {
            service,
            reader,
            writer,
            handler,
            waiting: std::collections::VecDeque::new(),
            sent_unwaited: 0,
        }
    }

    fn client_state(&self, writer_handle: dds_instance_handle_t) -> ClientState {
        let Some(requester) = endpoint::matched_publication(self.reader.handle(), writer_handle)
        else {
            return ClientState::Gone;
        };
        let reply_writer = self.writer.entity().handle();
        let matched = endpoint::matched_handles(reply_writer, true)
            .into_iter()
            .any(|h| {
                endpoint::matched_subscription(reply_writer, h).is_some_and(|reader| {
                    match &requester.service_id {
                        Some(id) => reader.service_id.as_ref() == Some(id),
                        None => reader.participant == requester.participant,
                    }
                })
            });
        if matched {
            ClientState::Ready
        } else {
            ClientState::NotYet
        }
    }

    fn send(&self, reply: &[u8]) {
        if let Err(e) = self.writer.write(reply, None) {
            log::warn!("service '{}': cannot send the reply: {e}", self.service);
        }
    }

    fn answer(
        &mut self,
        payload: &[u8],
        writer_handle: dds_instance_handle_t,
    ) -> std::result::Result<(), AnswerError> {
        let (header, request) = split(payload)?;
        let response = (self.handler)(&request_id(&header), &request)?;
        let reply = join(&header, &response)?;
        match self.client_state(writer_handle) {
            ClientState::Ready => self.send(&reply),
            ClientState::Gone => {
                log::debug!(
                    "service '{}': the client left before its reply",
                    self.service
                )
            }
            ClientState::NotYet => {
                if self.waiting.len() >= MAX_WAITING_REPLIES {
                    if let Some(oldest) = self.waiting.pop_front() {
                        self.send(&oldest.reply);
                        self.sent_unwaited += 1;
                        if self.sent_unwaited.is_power_of_two() {
                            log::warn!(
                                "service '{}': {} replies sent before their client's reader \
                                 was matched ({MAX_WAITING_REPLIES} were waiting)",
                                self.service,
                                self.sent_unwaited
                            );
                        }
                    }
                }
                self.waiting.push_back(PendingReply {
                    reply,
                    writer_handle,
                    deadline: Instant::now() + REPLY_MATCH_TIMEOUT,
                });
            }
        }
        Ok(())
    }
}

impl Drain for ServerDrain {
    fn drain(&mut self) {
        let mut samples = Vec::new();
        raw::take_round(self.reader.handle(), 16, |s| samples.push(s));
        for sample in samples {
            if let Err(reason) = self.answer(&sample.data, sample.publication_handle) {
                log::warn!("service '{}': request refused: {reason}", self.service);
            }
        }
        self.tick();
    }

    fn tick(&mut self) {
        if self.waiting.is_empty() {
            return;
        }
        let now = Instant::now();
        let waiting = std::mem::take(&mut self.waiting);
        for pending in waiting {
            match self.client_state(pending.writer_handle) {
                ClientState::Ready => self.send(&pending.reply),
                ClientState::Gone => {}
                ClientState::NotYet if now >= pending.deadline => {
                    log::warn!(
                        "service '{}': the client's reply reader was not discovered in time; replying anyway",
                        self.service
                    );
                    self.send(&pending.reply);
                }
                ClientState::NotYet => self.waiting.push_back(pending),
            }
        }
    }
}

impl Drop for ServerDrain {
    /// The server is going away, often because its node ends on the request it just answered
    /// (`stop`): replies still waiting for their client's reader are sent as soon as it is
    /// matched, and every reply sent is acknowledged, before the writer (and then the
    /// participant) goes; all within [`REPLY_FLUSH_TIMEOUT`].
    fn drop(&mut self) {
        let deadline = Instant::now() + REPLY_FLUSH_TIMEOUT;
        for pending in &mut self.waiting {
            pending.deadline = pending.deadline.min(deadline);
        }
        while !self.waiting.is_empty() {
            std::thread::sleep(Duration::from_millis(2));
            self.tick();
        }
        self.writer
            .wait_for_acks(deadline.saturating_duration_since(Instant::now()));
    }
}

type Pending = Arc<Mutex<HashMap<[u8; HEADER], Sender<Vec<u8>>>>>;

/// Routes replies to the calls waiting for them.
pub struct ReplyDrain {
    /// The reply reader.
    pub reader: Entity,
    /// Calls waiting, by request header.
    pub pending: Pending,
}

impl Drain for ReplyDrain {
    fn drain(&mut self) {
        let pending = &self.pending;
        raw::take_round(self.reader.handle(), 16, |sample| {
            if let Ok((header, response)) = split(&sample.data) {
                if let Some(tx) = pending.lock().remove(&header) {
                    let _ = tx.send(response);
                }
            }
        });
    }
}

/// A client of one service over DDS.
pub struct DdsClient {
    service: String,
    writer: RawWriter,
    reply_reader: dds_entity_t,
    client_id: u64,
    pending: Pending,
    sequence: AtomicI64,
    _replies: Registration,
    _keep_alive: Box<dyn Send + Sync>,
}

impl DdsClient {
    /// A client writing requests through `writer` and reading replies with `reply_reader`,
    /// which `dispatcher` watches from now on; `keep_alive` lives as long as the client.
    pub fn new(
        service: String,
        writer: RawWriter,
        reply_reader: Entity,
        dispatcher: &Dispatcher,
        keep_alive: impl Send + Sync + 'static,
    ) -> Result<Self> {
        let pending: Pending = Arc::default();
        let reader_handle = reply_reader.handle();
        let client_id = writer.entity().instance_handle();
        let drain = ReplyDrain {
            reader: reply_reader,
            pending: pending.clone(),
        };
        let replies = dispatcher.register(reader_handle, Box::new(drain))?;
        Ok(Self {
            service,
            writer,
            reply_reader: reader_handle,
            client_id,
            pending,
            sequence: AtomicI64::new(1),
            _replies: replies,
            _keep_alive: Box::new(keep_alive),
        })
    }
}

impl RawClient for DdsClient {
    fn wait_for_service(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if !endpoint::matched_handles(self.writer.entity().handle(), true).is_empty()
                && !endpoint::matched_handles(self.reply_reader, false).is_empty()
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
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::bounded(1);
        let header = self.write_request(request, Some(tx))?;
        rx.recv_timeout(timeout).map_err(|_| {
            self.pending.lock().remove(&header);
            TransportError::Timeout(self.service.clone())
        })
    }

    fn send(&self, request: &[u8]) -> Result<()> {
        self.write_request(request, None).map(drop)
    }
}

impl DdsClient {
    /// Writes `request` behind a new (client id, sequence number) header; its reply goes to
    /// `reply` (without one, the reply is dropped when it comes). Returns the header.
    fn write_request(
        &self,
        request: &[u8],
        reply: Option<rosbag2_rs_middleware::crossbeam_channel::Sender<Vec<u8>>>,
    ) -> Result<[u8; HEADER]> {
        rosbag2_rs_middleware::check_payload(request)?;
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(&self.client_id.to_le_bytes());
        header[8..].copy_from_slice(&self.sequence.fetch_add(1, Ordering::Relaxed).to_le_bytes());
        let payload = join(&header, request).map_err(|e| TransportError::Service {
            service: self.service.clone(),
            source: Box::new(e),
        })?;
        if let Some(reply) = reply {
            self.pending.lock().insert(header, reply);
        }
        if let Err(e) = self.writer.write(&payload, None) {
            self.pending.lock().remove(&header);
            return Err(e);
        }
        Ok(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_short_input() {
        let header = [7u8; 16];
        let message = [0, 1, 0, 0, 42, 0, 0, 0];
        let joined = join(&header, &message).unwrap();
        assert_eq!(joined.len(), 24);
        let (h, m) = split(&joined).unwrap();
        assert_eq!((h, m.as_slice()), (header, &message[..]));
        assert!(split(&[0, 1, 0, 0, 1, 2]).is_err());
        assert!(join(&header, &[0, 1]).is_err());
        assert_eq!(
            client_user_data(&[1, 0xab, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10]),
            "clientid= 1.ab.0.0.0.0.0.0.0.0.0.0.0.0.0.10;"
        );
    }
}
