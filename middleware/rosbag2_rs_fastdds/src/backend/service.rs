//! Services as rmw_fastrtps_cpp maps them (`rmw_request.cpp`, `rmw_response.cpp`): no header in
//! the payload; a request's identity is its RTPS sample identity (request writer GUID and
//! sequence number), and the client puts its reply reader's GUID in the request's
//! `related_sample_identity`. The server answers with `related_sample_identity` = (reply reader
//! GUID, request sequence number), after waiting (bounded) until its reply writer has matched
//! that reader; the client takes the replies whose related identity names its reader (or its
//! writer) and matches them to calls by sequence number.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::{Receiver, Sender};

use super::sys::{Reader, Sample, SampleCallback, SampleIdentity, Writer};
use rosbag2_rs_dds_common::announcer::Announced;
use rosbag2_rs_dds_common::Guid;
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::{RawClient, RequestId, ServiceHandler, REPLY_FLUSH_TIMEOUT};

/// How long a server waits for its reply writer to match a client's reply reader before it
/// replies anyway (rmw_fastrtps waits the writer's `max_blocking_time`, 100 ms, then drops the
/// reply; a fresh client on a loaded machine may need longer).
pub const REPLY_MATCH_WAIT: Duration = Duration::from_secs(1);

/// The most requests of one server waiting for its worker; beyond it a request is dropped and
/// counted (a peer sending requests faster than they are answered, or whose reply reader never
/// matches so that each waits [`REPLY_MATCH_WAIT`], would otherwise queue them without end).
pub const MAX_QUEUED_REQUESTS: usize = 256;

/// RTPS entity kinds with this bit are readers (RTPS 9.3.1.2), as rmw_fastrtps tests it.
const ENTITY_IS_READER: u8 = 0x04;

/// A request as the server takes it.
struct Request {
    data: Vec<u8>,
    identity: SampleIdentity,
    related: SampleIdentity,
}

/// Where the reply goes and the identity the handler sees: the client's reply reader (from
/// the related identity) if it gave one, its request writer otherwise; the request's sequence
/// number.
fn reply_identity(identity: &SampleIdentity, related: &SampleIdentity) -> SampleIdentity {
    let guid = if related.guid != Guid::default() {
        related.guid
    } else {
        identity.guid
    };
    SampleIdentity {
        guid,
        sequence_number: identity.sequence_number,
    }
}

/// The request queue of a server: at most [`MAX_QUEUED_REQUESTS`] requests wait for its worker.
pub fn request_queue() -> (Sender<RequestParts>, Receiver<RequestParts>) {
    rosbag2_rs_middleware::crossbeam_channel::bounded(MAX_QUEUED_REQUESTS)
}

/// The request reader's callback: hands requests to the server's worker thread through
/// `requests` (from [`request_queue`]); a request that finds the queue full is dropped, counted
/// and logged (the first, then at every power of two).
pub fn request_callback(service: String, requests: Sender<RequestParts>) -> SampleCallback {
    let mut dropped: u64 = 0;
    Box::new(move |sample: Sample<'_>| {
        let request = RequestParts(Request {
            data: sample.data.to_vec(),
            identity: sample.identity,
            related: sample.related,
        });
        if let Err(rosbag2_rs_middleware::crossbeam_channel::TrySendError::Full(_)) =
            requests.try_send(request)
        {
            dropped += 1;
            if dropped.is_power_of_two() {
                log::warn!(
                    "service {service}: {dropped} requests dropped so far: \
                     {MAX_QUEUED_REQUESTS} were waiting to be answered"
                );
            }
        }
    })
}

/// A taken request, opaque outside this module.
pub struct RequestParts(Request);

/// Serves requests from `requests` on a thread until the request reader is gone.
pub struct ServerWorker {
    /// The reply writer (dropped before the participant it holds).
    pub writer: Writer,
    /// The reply writer's entry on `ros_discovery_info`, kept while the worker serves.
    pub _announced: Announced,
    /// The user's handler.
    pub handler: ServiceHandler,
    /// The service, for messages.
    pub service: String,
}

impl ServerWorker {
    /// Starts the worker thread; it serves until `requests` closes (its reader is dropped).
    pub fn spawn(mut self, requests: Receiver<RequestParts>) -> Result<JoinHandle<()>> {
        std::thread::Builder::new()
            .name("fastdds-service".into())
            .spawn(move || {
                for RequestParts(request) in requests {
                    self.serve(request);
                }
                // The server is going away (often on the `stop` it just answered): the last
                // replies are acknowledged before the writer and the participant go.
                self.writer.wait_for_acks(REPLY_FLUSH_TIMEOUT);
            })
            .map_err(|source| TransportError::Spawn {
                what: "Fast DDS service",
                source,
            })
    }

    fn serve(&mut self, request: Request) {
        let reply = reply_identity(&request.identity, &request.related);
        let id = RequestId {
            client_gid: reply.guid,
            sequence_number: reply.sequence_number,
        };
        let response = match (self.handler)(&id, &request.data) {
            Ok(response) => response,
            Err(e) => {
                log::warn!("service {}: request refused: {e}", self.service);
                return;
            }
        };
        if reply.guid[15] & ENTITY_IS_READER != 0
            && !self.writer.wait_matched(&reply.guid, REPLY_MATCH_WAIT)
        {
            log::debug!(
                "service {}: the client's reply reader is not matched after {REPLY_MATCH_WAIT:?}; replying anyway",
                self.service
            );
        }
        if let Err(e) = self.writer.write(&response, Some(&reply)) {
            log::warn!("service {}: cannot send the reply: {e}", self.service);
        }
    }
}

/// A served service: dropping it deletes the request reader, which ends the worker, and waits
/// for the worker to finish its last request (so that no Fast DDS entity outlives the node).
pub struct Server {
    /// The request reader's entry on `ros_discovery_info`.
    pub _announced: Announced,
    /// The request reader.
    pub reader: Option<Reader>,
    /// The worker thread.
    pub worker: Option<JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.reader.take());
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Calls waiting for their reply, by request sequence number.
type Pending = Mutex<HashMap<i64, Sender<Vec<u8>>>>;

/// The reply reader's callback: passes the replies addressed to this client (by reader or
/// writer GUID, as rmw_fastrtps's `__rmw_take_response` accepts them) to their calls.
pub fn reply_callback(pending: Arc<Pending>, guids: Arc<OnceLock<(Guid, Guid)>>) -> SampleCallback {
    Box::new(move |sample: Sample<'_>| {
        let Some((reader, writer)) = guids.get() else {
            return;
        };
        if sample.related.guid != *reader && sample.related.guid != *writer {
            return;
        }
        if let Some(tx) = pending.lock().remove(&sample.related.sequence_number) {
            let _ = tx.send(sample.data.to_vec());
        }
    })
}

/// A client of one service.
pub struct FastDdsClient {
    // Fields drop in order: the reader stops calling back before the rest goes.
    reader: Reader,
    writer: Writer,
    service: String,
    reader_guid: Guid,
    pending: Arc<Pending>,
    _announced: [Announced; 2],
}

impl FastDdsClient {
    /// A client writing requests with `writer` and taking replies with `reader` (created with
    /// [`reply_callback`] over `pending` and `guids`).
    pub fn new(
        service: String,
        writer: Writer,
        reader: Reader,
        pending: Arc<Pending>,
        guids: &OnceLock<(Guid, Guid)>,
        announced: [Announced; 2],
    ) -> Self {
        let reader_guid = reader.guid();
        let _ = guids.set((reader_guid, writer.guid()));
        Self {
            reader,
            writer,
            service,
            reader_guid,
            pending,
            _announced: announced,
        }
    }

    /// A new empty table of pending calls.
    pub fn pending() -> Arc<Pending> {
        Arc::new(Mutex::new(HashMap::new()))
    }

    fn related(&self) -> SampleIdentity {
        SampleIdentity {
            guid: self.reader_guid,
            sequence_number: SampleIdentity::UNKNOWN_SEQUENCE,
        }
    }

    fn service_error(&self, e: TransportError) -> TransportError {
        TransportError::Service {
            service: self.service.clone(),
            source: Box::new(e),
        }
    }
}

impl RawClient for FastDdsClient {
    fn wait_for_service(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.writer.matched() > 0 && self.reader.matched() > 0 {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn call(&self, request: &[u8], timeout: Duration) -> Result<Vec<u8>> {
        rosbag2_rs_middleware::check_payload(request).map_err(|e| self.service_error(e))?;
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::bounded(1);
        let sequence = {
            // Held while writing, so that a reply cannot come before its call is listed.
            let mut pending = self.pending.lock();
            let written = self
                .writer
                .write(request, Some(&self.related()))
                .map_err(|e| self.service_error(e))?;
            pending.insert(written.sequence_number, tx);
            written.sequence_number
        };
        rx.recv_timeout(timeout).map_err(|_| {
            self.pending.lock().remove(&sequence);
            TransportError::Timeout(self.service.clone())
        })
    }

    fn send(&self, request: &[u8]) -> Result<()> {
        rosbag2_rs_middleware::check_payload(request).map_err(|e| self.service_error(e))?;
        self.writer
            .write(request, Some(&self.related()))
            .map(drop)
            .map_err(|e| self.service_error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_go_to_the_reply_reader_when_the_client_names_it() {
        let writer = SampleIdentity {
            guid: [1; 16],
            sequence_number: 7,
        };
        let mut reader_guid = [1u8; 16];
        reader_guid[12..].copy_from_slice(&[0, 0, 0x12, 0x04]);
        let related = SampleIdentity {
            guid: reader_guid,
            sequence_number: SampleIdentity::UNKNOWN_SEQUENCE,
        };
        let reply = reply_identity(&writer, &related);
        assert_eq!(reply.guid, reader_guid);
        assert_eq!(reply.sequence_number, 7);
        assert_ne!(reply.guid[15] & ENTITY_IS_READER, 0);
        // A client that names no reader (all-zero related GUID) is answered by its writer GUID.
        let reply = reply_identity(&writer, &SampleIdentity::default());
        assert_eq!((reply.guid, reply.sequence_number), ([1; 16], 7));
        assert_eq!(
            SampleIdentity::UNKNOWN_SEQUENCE as u64,
            0xFFFF_FFFF_0000_0000
        );
    }

    #[test]
    fn requests_beyond_the_queue_are_dropped_not_queued() {
        let (tx, rx) = request_queue();
        let mut callback = request_callback("/s".into(), tx);
        for i in 0..MAX_QUEUED_REQUESTS as i64 + 100 {
            callback(Sample {
                data: &[0, 1, 0, 0],
                identity: SampleIdentity {
                    guid: [1; 16],
                    sequence_number: i,
                },
                related: SampleIdentity::default(),
                source_timestamp: 0,
            });
        }
        let queued: Vec<i64> = rx
            .try_iter()
            .map(|RequestParts(r)| r.identity.sequence_number)
            .collect();
        assert_eq!(queued, (0..MAX_QUEUED_REQUESTS as i64).collect::<Vec<_>>());
    }
}
