//! Typed services on top of the serialized ones of [`Middleware`]: requests and responses are
//! the `rosbag2_rs_interfaces` types, encoded as CDR the way ROS 2 encodes them.

use std::marker::PhantomData;
use std::time::Duration;

use rosbag2_rs_interfaces::{from_cdr, try_to_cdr, MessageType, ServiceType};

use crate::middleware::error::{Result, TransportError};
use crate::middleware::{Handle, Middleware, RawClient};

/// Serves `S` on `name` (e.g. `~/set_rate`). A request that does not decode is refused with a
/// warning and the service keeps serving.
pub fn serve<S: ServiceType>(
    middleware: &dyn Middleware,
    name: &str,
    mut handler: impl FnMut(S::Request) -> S::Response + Send + 'static,
) -> Result<Handle> {
    middleware.create_service(
        name,
        S::TYPE_NAME,
        Box::new(move |request: &[u8]| {
            let request = from_cdr::<S::Request>(request).map_err(|source| {
                TransportError::MalformedRequest {
                    service_type: S::TYPE_NAME,
                    source,
                }
            })?;
            try_to_cdr(&handler(request))
                .map_err(|e| TransportError::codec(S::Response::TYPE_NAME, e))
        }),
    )
}

/// A typed client of one service.
pub struct Client<S: ServiceType> {
    raw: Box<dyn RawClient>,
    _type: PhantomData<fn() -> S>,
}

impl<S: ServiceType> Client<S> {
    /// A client of `name`.
    pub fn new(middleware: &dyn Middleware, name: &str) -> Result<Self> {
        Ok(Self {
            raw: middleware.create_client(name, S::TYPE_NAME)?,
            _type: PhantomData,
        })
    }

    /// Whether a server is available, waiting up to `timeout`.
    pub fn wait_for_service(&self, timeout: Duration) -> bool {
        self.raw.wait_for_service(timeout)
    }

    /// Calls the service and decodes the response.
    pub fn call(&self, request: &S::Request, timeout: Duration) -> Result<S::Response> {
        let bytes =
            try_to_cdr(request).map_err(|e| TransportError::codec(S::Request::TYPE_NAME, e))?;
        let response = self.raw.call(&bytes, timeout)?;
        from_cdr(&response).map_err(|e| TransportError::codec(S::Response::TYPE_NAME, e))
    }
}
