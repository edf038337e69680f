//! Clients: a CDR request becomes the request's C struct (`rmw_deserialize`), sent with
//! `rcl_send_request`; responses taken on the wait thread become CDR again (`rmw_serialize`)
//! and go to the caller waiting for that sequence number.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Sender;

use super::entity::NodeEntity;
use super::service::{from_cdr, to_cdr};
use super::typesupport::{CMessage, ServiceType};
use super::{ffi, sys, Entity, Executor, NodeHandle, Registration};
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::RawClient;

/// How many responses the wait thread takes from one client in one round: a server answering
/// faster than its replies are handed on cannot hold the thread from the node's other work.
const RESPONSES_PER_ROUND: usize = 64;

/// How often `wait_for_service` asks rcl whether a server is there.
const AVAILABILITY_POLL: Duration = Duration::from_millis(10);

/// An rcl client and the calls waiting for their responses.
pub(crate) struct ClientInner {
    // Field order is drop order: finalised before its type support goes.
    entity: NodeEntity<sys::rcl_client_t>,
    name: String,
    type_support: ServiceType,
    pending: Mutex<HashMap<i64, Sender<Vec<u8>>>>,
}

impl ClientInner {
    pub fn new(node: Arc<NodeHandle>, type_support: ServiceType, name: &str) -> Result<Self> {
        let c_name = ffi::cstring(name)?;
        // SAFETY: returns the default options by value.
        let options = unsafe { sys::rcl_client_get_default_options() };
        let entity = NodeEntity::init(node, format!("client of {name}"), |handle, node| {
            // SAFETY: a zero-initialised client, the live node, a type support its library keeps
            // valid (held in `type_support`), a name and options that outlive the call.
            unsafe {
                sys::rcl_client_init(handle, node, type_support.handle, c_name.as_ptr(), &options)
            }
        })?;
        Ok(Self {
            entity,
            name: name.to_string(),
            type_support,
            pending: Mutex::new(HashMap::new()),
        })
    }

    pub fn handle(&self) -> *const sys::rcl_client_t {
        self.entity.handle()
    }

    /// Sends `request`; its response goes to `reply` (when given).
    fn send(&self, request: &[u8], reply: Option<Sender<Vec<u8>>>) -> Result<i64> {
        let mut message =
            from_cdr(request, &self.type_support.request).map_err(|e| self.error(e))?;
        // Registered before the response can be taken (the wait thread takes it under this
        // lock).
        let mut pending = self.pending.lock();
        let mut sequence = 0i64;
        // SAFETY: the client is valid until Drop; `message` is an initialised request struct.
        let ret = unsafe {
            sys::rcl_send_request(self.entity.handle(), message.as_mut_ptr(), &mut sequence)
        };
        ffi::check(ret, || "cannot send the request".into()).map_err(|e| self.error(e))?;
        if let Some(reply) = reply {
            pending.insert(sequence, reply);
        }
        Ok(sequence)
    }

    fn error(&self, e: TransportError) -> TransportError {
        TransportError::Service {
            service: self.name.clone(),
            source: Box::new(e),
        }
    }

    /// Takes the responses waiting, at most [`RESPONSES_PER_ROUND`] (the wait set wakes the
    /// thread again at once for the rest), and hands each to its caller.
    pub fn take_round(&self) {
        for _ in 0..RESPONSES_PER_ROUND {
            let mut response = match CMessage::new(&self.type_support.response) {
                Ok(m) => m,
                Err(e) => {
                    log::warn!("client of {}: {e}", self.name);
                    return;
                }
            };
            let mut header = sys::rmw_service_info_t::default();
            // SAFETY: the client is valid (registered, not finalised); `response` is an
            // initialised struct of the response type.
            let ret = unsafe {
                sys::rcl_take_response_with_info(
                    self.entity.handle(),
                    &mut header,
                    response.as_mut_ptr(),
                )
            };
            match ret {
                ffi::RET_OK => {}
                ffi::RET_CLIENT_TAKE_FAILED => return,
                code => {
                    log::warn!(
                        "{}",
                        ffi::error(code, format!("client of {}: take", self.name))
                    );
                    return;
                }
            }
            let Some(reply) = self
                .pending
                .lock()
                .remove(&header.request_id.sequence_number)
            else {
                continue; // a call that timed out, or a request sent without waiting
            };
            match to_cdr(&response, &self.type_support.response) {
                Ok(cdr) => {
                    let _ = reply.send(cdr.as_ref().to_vec());
                }
                Err(e) => log::warn!("client of {}: {e}", self.name),
            }
        }
    }

    fn server_available(&self) -> bool {
        let mut available = false;
        // SAFETY: node and client are valid; `available` outlives the call.
        let ret = unsafe {
            sys::rcl_service_server_is_available(
                self.entity.node().node(),
                self.entity.handle(),
                &mut available,
            )
        };
        ret == ffi::RET_OK && available
    }
}

/// A client in the node's wait set.
pub(crate) struct RclClient {
    // Field order is drop order: out of the wait set first.
    _registration: Registration,
    inner: Arc<ClientInner>,
}

impl RclClient {
    /// Registers `inner` with `executor`'s wait set.
    pub fn new(executor: &Arc<Executor>, inner: ClientInner) -> Self {
        let inner = Arc::new(inner);
        Self {
            _registration: executor.register(Entity::Client(inner.clone())),
            inner,
        }
    }

    fn inner(&self) -> &ClientInner {
        &self.inner
    }
}

impl RawClient for RclClient {
    fn wait_for_service(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.inner().server_available() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            std::thread::sleep(AVAILABILITY_POLL.min(deadline - now));
        }
    }

    fn call(&self, request: &[u8], timeout: Duration) -> Result<Vec<u8>> {
        let inner = self.inner();
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::bounded(1);
        let sequence = inner.send(request, Some(tx))?;
        match rx.recv_timeout(timeout) {
            Ok(reply) => Ok(reply),
            Err(_) => {
                inner.pending.lock().remove(&sequence);
                Err(TransportError::Timeout(inner.name.clone()))
            }
        }
    }

    fn send(&self, request: &[u8]) -> Result<()> {
        self.inner().send(request, None).map(|_| ())
    }
}
