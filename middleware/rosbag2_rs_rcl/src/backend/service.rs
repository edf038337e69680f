//! Services: rcl has no serialized take for requests, so a request is taken into its C struct
//! (allocated through the introspection type support), converted to CDR with `rmw_serialize`
//! for our handler, and the handler's CDR response converted back with `rmw_deserialize` into
//! the response struct that `rcl_send_response` sends. No hand-written C layouts.
//!
//! The wait thread only takes requests (a bounded number per round) and queues them (a bounded
//! queue: what does not fit is dropped and counted); each service's own worker thread runs the
//! handler and sends the response, retries included. So a handler that blocks (a burst, a bag
//! closed on `stop`) holds neither the node's other services nor its topics.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rosbag2_rs_middleware::crossbeam_channel::{Receiver, Sender, TrySendError};

use parking_lot::Mutex;

use super::entity::NodeEntity;
use super::ffi::{self, SerializedBuffer};
use super::typesupport::{CMessage, Introspected, ServiceType};
use super::{exit, sys, NodeHandle};
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::{RequestId, ServiceHandler};

/// How many times a response is sent while the client's reply reader is not matched (each
/// attempt waits 100 ms in rmw_fastrtps): 5 s, for discovery on a loaded machine.
const SEND_ATTEMPTS: u32 = 50;

/// How many requests the wait thread takes from one service in one round.
const REQUESTS_PER_ROUND: usize = 64;

/// How many requests wait for a service's worker at most; more are dropped (and counted).
const QUEUED_REQUESTS: usize = 1024;

/// How long dropping a service waits, at most, for its worker to finish the requests it has (a
/// handler still running then finishes on its own, and the service goes after it); the node's
/// teardown window ([`NodeHandle::linger_left`](super::NodeHandle::linger_left)) bounds it too.
const WORKER_JOIN: Duration = Duration::from_secs(2);

/// A C message struct as CDR bytes (encapsulation header included).
pub(crate) fn to_cdr(message: &CMessage, introspected: &Introspected) -> Result<SerializedBuffer> {
    let rmw = ffi::rmw()?;
    let mut buffer = SerializedBuffer::new(64)?;
    // SAFETY: `message` is an initialised struct of the type `introspected` describes, whose C
    // type support handle it holds; rmw grows `buffer` with its allocator.
    let ret = unsafe {
        (rmw.serialize)(
            message.as_ptr(),
            introspected.message.handle,
            buffer.as_mut_ptr(),
        )
    };
    ffi::check(ret, || "rmw_serialize failed".into())?;
    Ok(buffer)
}

/// CDR bytes as a C message struct of the introspected type.
pub(crate) fn from_cdr(data: &[u8], introspected: &Introspected) -> Result<CMessage> {
    rosbag2_rs_middleware::check_payload(data)?;
    let rmw = ffi::rmw()?;
    let mut message = CMessage::new(introspected)?;
    let serialized = ffi::borrowed_serialized(data);
    // SAFETY: `message` is an initialised struct of the type whose C type support is passed;
    // rmw only reads `serialized` (bytes borrowed for the call) and fills the struct's members
    // with its allocator (freed by the struct's fini).
    let ret = unsafe {
        (rmw.deserialize)(
            &serialized,
            introspected.message.handle,
            message.as_mut_ptr(),
        )
    };
    ffi::check(ret, || {
        "rmw_deserialize failed: the bytes are not the type's CDR".into()
    })?;
    Ok(message)
}

/// The first 16 bytes of a GID as rmw gives it.
pub(crate) fn gid16<T: Copy + Into<i16>>(bytes: &[T]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (o, b) in out.iter_mut().zip(bytes) {
        *o = (*b).into() as u8;
    }
    out
}

/// How long a service stays after its last reply, so that the middleware can repair the reply
/// if it was lost (a client flooded with our data drops datagrams): rmw has no call that waits
/// for a reply's acknowledgement, and a DDS writer resends a lost sample only after its next
/// heartbeat (Fast DDS and Connext: every 3 s by default). rmw_zenoh replies on the session's
/// reliable link: nothing to wait for.
fn reply_linger(rmw: &str) -> Duration {
    if rmw.starts_with("rmw_zenoh") {
        Duration::ZERO
    } else {
        Duration::from_millis(3500)
    }
}

/// When a service may go: [`reply_linger`] after its last reply.
#[derive(Debug)]
struct Linger {
    linger: Duration,
    last_reply: Mutex<Option<Instant>>,
}

impl Linger {
    fn replied(&self, at: Instant) {
        *self.last_reply.lock() = Some(at);
    }

    /// How long, at `now`, the service still has to stay.
    fn remaining(&self, now: Instant) -> Duration {
        self.last_reply.lock().map_or(Duration::ZERO, |last| {
            (last + self.linger).saturating_duration_since(now)
        })
    }
}

/// What a service's handle, type and linger are, shared by the wait thread (taking requests)
/// and the worker (answering them); finalised when both let go.
struct Core {
    // Field order is drop order: finalised before its type support goes.
    entity: NodeEntity<sys::rcl_service_t>,
    name: String,
    type_support: ServiceType,
    linger: Linger,
}

/// A request taken, for the worker.
struct Request {
    id: RequestId,
    header: sys::rmw_request_id_t,
    cdr: SerializedBuffer,
}

/// An rcl service with its handler on a worker thread of its own.
pub(crate) struct Service {
    core: Arc<Core>,
    requests: Option<Sender<Request>>,
    worker: Option<JoinHandle<()>>,
    /// Requests dropped because the queue was full.
    dropped: AtomicU64,
}

impl Service {
    pub fn new(
        node: Arc<NodeHandle>,
        type_support: ServiceType,
        name: &str,
        handler: ServiceHandler,
    ) -> Result<Self> {
        let c_name = ffi::cstring(name)?;
        let linger = Linger {
            linger: reply_linger(&ffi::rmw()?.identifier),
            last_reply: Mutex::new(None),
        };
        // SAFETY: returns the default options by value.
        let options = unsafe { sys::rcl_service_get_default_options() };
        let entity = NodeEntity::init(node, format!("service {name}"), |handle, node| {
            // SAFETY: a zero-initialised service, the live node, a type support its library keeps
            // valid (held in `type_support`), a name and options that outlive the call.
            unsafe {
                sys::rcl_service_init(handle, node, type_support.handle, c_name.as_ptr(), &options)
            }
        })?;
        let core = Arc::new(Core {
            entity,
            name: name.to_string(),
            type_support,
            linger,
        });
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::bounded(QUEUED_REQUESTS);
        let worker_core = core.clone();
        let worker = std::thread::Builder::new()
            .name(format!(
                "rcl-srv{}",
                name.rsplit('/').next().unwrap_or_default()
            ))
            .spawn(move || answer_all(&worker_core, handler, &rx))
            .map_err(|source| TransportError::Spawn {
                what: "rcl service worker",
                source,
            })?;
        Ok(Self {
            core,
            requests: Some(tx),
            worker: Some(worker),
            dropped: AtomicU64::new(0),
        })
    }

    pub fn handle(&self) -> *const sys::rcl_service_t {
        self.core.entity.handle()
    }

    /// Takes the requests waiting, at most [`REQUESTS_PER_ROUND`] (the wait set wakes the
    /// thread again at once for the rest), and queues them for the worker.
    pub fn take_round(&self) {
        let Some(requests) = &self.requests else {
            return;
        };
        for _ in 0..REQUESTS_PER_ROUND {
            let request = match take(&self.core) {
                Ok(Some(request)) => request,
                Ok(None) => return,
                Err(e) => {
                    log::warn!("service {}: {e}", self.core.name);
                    return;
                }
            };
            match requests.try_send(request) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    if self.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                        log::warn!(
                            "service {}: {QUEUED_REQUESTS} requests wait already; dropping more",
                            self.core.name
                        );
                    }
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
    }
}

/// Takes one request; `None` when none was waiting.
fn take(core: &Core) -> Result<Option<Request>> {
    let mut request = CMessage::new(&core.type_support.request)?;
    let mut header = sys::rmw_service_info_t::default();
    // SAFETY: the service is valid (registered, not finalised); `request` is an initialised
    // struct of the service's request type.
    let ret = unsafe {
        sys::rcl_take_request_with_info(core.entity.handle(), &mut header, request.as_mut_ptr())
    };
    match ret {
        ffi::RET_OK => {}
        ffi::RET_SERVICE_TAKE_FAILED => return Ok(None),
        code => return Err(ffi::error(code, "cannot take a request".into())),
    }
    Ok(Some(Request {
        id: RequestId {
            client_gid: gid16(&header.request_id.writer_guid),
            sequence_number: header.request_id.sequence_number,
        },
        header: header.request_id,
        cdr: to_cdr(&request, &core.type_support.request)?,
    }))
}

/// The worker: answers each request queued, until the queue closes.
fn answer_all(core: &Core, mut handler: ServiceHandler, requests: &Receiver<Request>) {
    for request in requests {
        if exit::exiting() {
            return;
        }
        if let Err(e) = answer(core, &mut handler, request) {
            log::warn!("service {}: {e}", core.name);
        }
    }
}

/// Runs the handler on one request and sends its response.
fn answer(core: &Core, handler: &mut ServiceHandler, mut request: Request) -> Result<()> {
    let reply = match handler(&request.id, request.cdr.as_ref()) {
        Ok(reply) => reply,
        Err(e) => {
            log::warn!("service {}: request refused: {e}", core.name);
            return Ok(());
        }
    };
    let mut response = from_cdr(&reply, &core.type_support.response)?;
    // A fresh client's reply reader may not be matched yet (discovery is not symmetric):
    // rmw_fastrtps waits 100 ms for it, then gives up with RMW_RET_TIMEOUT. Try for up to
    // SEND_ATTEMPTS of those (a reply lost on a loaded machine after 1 s was seen once).
    let mut attempts = 0;
    loop {
        attempts += 1;
        // SAFETY: the service is valid while `core` lives; the request id is the one rcl gave
        // with the request; `response` is an initialised struct of the response type.
        let ret = exit::teardown(|| unsafe {
            sys::rcl_send_response(
                core.entity.handle(),
                &mut request.header,
                response.as_mut_ptr(),
            )
        });
        let Some(ret) = ret else { return Ok(()) };
        if ret == ffi::RET_TIMEOUT && attempts < SEND_ATTEMPTS {
            let _ = ffi::error(ret, String::new()); // resets rcl's error state
            continue;
        }
        ffi::check(ret, || {
            format!("cannot send the response ({attempts} attempts)")
        })?;
        core.linger.replied(Instant::now());
        log::debug!("service {}: replied ({attempts} attempts)", core.name);
        return Ok(());
    }
}

impl Drop for Service {
    /// Closes the queue and lets the worker answer what it has, for at most [`WORKER_JOIN`].
    fn drop(&mut self) {
        drop(self.requests.take());
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            log::warn!(
                "service {}: dropped {dropped} requests that found the queue full",
                self.core.name
            );
        }
        // A handler that drops its own service (on the worker): it ends after the handler.
        if let Some(worker) = self
            .worker
            .take()
            .filter(|w| w.thread().id() != std::thread::current().id())
        {
            // Within the node's one teardown window: services and publishers going together
            // wait once in all, not once each.
            let deadline = Instant::now() + self.core.entity.node().linger_left(WORKER_JOIN);
            while !worker.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if worker.is_finished() {
                let _ = worker.join();
            } else {
                log::debug!("service {}: its handler still runs", self.core.name);
            }
        }
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        let stay = self.linger.remaining(Instant::now());
        if !stay.is_zero() && !exit::exiting() {
            log::debug!("service {}: staying {stay:?} for its last reply", self.name);
            std::thread::sleep(stay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_stays_for_the_linger_after_its_last_reply_only() {
        let dds = Linger {
            linger: reply_linger("rmw_fastrtps_cpp"),
            last_reply: Mutex::new(None),
        };
        let t0 = Instant::now();
        assert_eq!(
            dds.remaining(t0),
            Duration::ZERO,
            "no reply: nothing to wait for"
        );
        dds.replied(t0);
        assert_eq!(
            dds.remaining(t0 + Duration::from_secs(1)),
            Duration::from_millis(2500)
        );
        assert_eq!(dds.remaining(t0 + Duration::from_secs(4)), Duration::ZERO);
        let zenoh = Linger {
            linger: reply_linger("rmw_zenoh_cpp"),
            last_reply: Mutex::new(Some(t0)),
        };
        assert_eq!(zenoh.remaining(t0), Duration::ZERO);
    }
}
