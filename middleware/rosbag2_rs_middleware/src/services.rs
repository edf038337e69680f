//! Typed services on top of the serialized ones of [`Middleware`]: requests and responses are
//! the `rosbag2_rs_interfaces` types, encoded as CDR the way ROS 2 encodes them.

use std::marker::PhantomData;
use std::time::Duration;

use rosbag2_rs_interfaces::builtin_interfaces::Time as TimeMsg;
use rosbag2_rs_interfaces::service_msgs::{
    event_topic, event_type_name, ServiceEvent, ServiceEventInfo,
};
use rosbag2_rs_interfaces::{try_to_cdr, MessageType, ServiceType};
use rosbag2_rs_storage::QosProfile;

use crate::error::{Result, TransportError};
use crate::{Handle, Middleware, RawClient, RawPublisher, RequestId};

/// Service introspection of a server, as rcl's `rcl_service_introspection_state_t`: whether it
/// publishes a `<pkg>/srv/<Name>_Event` on `<service>/_service_event` when it receives a request
/// (`REQUEST_RECEIVED`) and when it sends the response (`RESPONSE_SENT`), and with what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServiceIntrospection {
    /// No events (rclcpp's default).
    #[default]
    Off,
    /// Events with their metadata only (type, time, client, sequence number).
    Metadata,
    /// Events with the request or the response.
    Contents,
}

/// Serves `S` on `name` (e.g. `~/set_rate`), without introspection. A request that does not
/// decode is refused with a warning and the service keeps serving.
pub fn serve<S: ServiceType>(
    middleware: &dyn Middleware,
    name: &str,
    handler: impl FnMut(S::Request) -> S::Response + Send + 'static,
) -> Result<Handle> {
    serve_introspected::<S>(middleware, ServiceIntrospection::Off, name, handler)
}

/// The services of a node, served one by one. A service whose type the middleware cannot load
/// (the rcl backend, with the type's package not installed, or installed in an older version
/// without the type) is left out, and [`Self::finish`] names what was left out in one line per
/// package, so that the node still plays or records. Any other error is returned.
pub struct ServiceSet<'a> {
    middleware: &'a dyn Middleware,
    introspection: ServiceIntrospection,
    handles: Vec<Handle>,
    /// Services left out, by package, with whether the package is missing altogether.
    left_out: std::collections::BTreeMap<(String, bool), Vec<String>>,
}

impl<'a> ServiceSet<'a> {
    /// An empty set, whose services publish events as `introspection` says.
    pub fn new(middleware: &'a dyn Middleware, introspection: ServiceIntrospection) -> Self {
        Self {
            middleware,
            introspection,
            handles: Vec::new(),
            left_out: Default::default(),
        }
    }

    /// Serves `S` on `name` (see [`serve_introspected`]), or leaves it out if its type cannot
    /// be loaded.
    pub fn serve<S: ServiceType>(
        &mut self,
        name: &str,
        handler: impl FnMut(S::Request) -> S::Response + Send + 'static,
    ) -> Result<()> {
        let package = |type_name: &str| type_name.split('/').next().unwrap_or_default().to_string();
        let key = match serve_introspected::<S>(self.middleware, self.introspection, name, handler)
        {
            Ok(handle) => {
                self.handles.push(handle);
                return Ok(());
            }
            Err(TransportError::TypeSupportMissing { package, .. }) => (package, true),
            Err(TransportError::TypeSupportLoad { type_name, .. }) => (package(&type_name), false),
            Err(e) => return Err(e),
        };
        self.left_out.entry(key).or_default().push(name.to_string());
        Ok(())
    }

    /// The handles of the services served, after logging those left out: a warning for a
    /// package that is not installed, a note for one whose installed version lacks the types
    /// (an older ROS 2's `rosbag2_interfaces`).
    pub fn finish(self) -> Vec<Handle> {
        for ((package, missing), names) in self.left_out {
            let names = names.join(", ");
            if missing {
                log::warn!(
                    "not served: {names}: install the ROS 2 package '{package}' (not in the \
                     ament index of AMENT_PREFIX_PATH)"
                );
            } else {
                log::info!("not served: {names}: the installed '{package}' has no such service");
            }
        }
        self.handles
    }
}

/// [`serve`] with service introspection: unless `introspection` is off, each request and its
/// response are published as service events on `<name>/_service_event`.
pub fn serve_introspected<S: ServiceType>(
    middleware: &dyn Middleware,
    introspection: ServiceIntrospection,
    name: &str,
    mut handler: impl FnMut(S::Request) -> S::Response + Send + 'static,
) -> Result<Handle> {
    let events = match introspection {
        ServiceIntrospection::Off => None,
        _ => Some(EventPublisher {
            publisher: middleware.create_publisher(
                &event_topic(name),
                &event_type_name(S::TYPE_NAME),
                &QosProfile::default(),
            )?,
            contents: introspection == ServiceIntrospection::Contents,
            topic: event_topic(name),
        }),
    };
    middleware.create_service(
        name,
        S::TYPE_NAME,
        Box::new(move |id: &RequestId, request: &[u8]| {
            let request = S::Request::from_wire(request).map_err(|source| {
                TransportError::MalformedRequest {
                    service_type: S::TYPE_NAME,
                    source,
                }
            })?;
            if let Some(events) = &events {
                events.publish::<S>(id, ServiceEventInfo::REQUEST_RECEIVED, Some(&request), None);
            }
            let response = handler(request);
            let bytes = try_to_cdr(&response)
                .map_err(|e| TransportError::codec(S::Response::TYPE_NAME, e))?;
            if let Some(events) = &events {
                events.publish::<S>(id, ServiceEventInfo::RESPONSE_SENT, None, Some(&response));
            }
            Ok(bytes)
        }),
    )
}

/// Publishes a server's introspection events.
struct EventPublisher {
    publisher: Box<dyn RawPublisher>,
    /// With the request and response, not only the metadata.
    contents: bool,
    topic: String,
}

impl EventPublisher {
    fn publish<S: ServiceType>(
        &self,
        id: &RequestId,
        event_type: u8,
        request: Option<&S::Request>,
        response: Option<&S::Response>,
    ) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        fn keep<T: Clone>(x: Option<&T>, contents: bool) -> Vec<T> {
            x.filter(|_| contents).into_iter().cloned().collect()
        }
        let event = ServiceEvent::<S::Request, S::Response> {
            info: ServiceEventInfo {
                event_type,
                stamp: TimeMsg::from_nanos(now),
                client_gid: id.client_gid,
                sequence_number: id.sequence_number,
            },
            request: keep(request, self.contents),
            response: keep(response, self.contents),
        };
        let result = try_to_cdr(&event)
            .map_err(|e| TransportError::codec("service event", e))
            .and_then(|bytes| self.publisher.publish(&bytes.into()));
        if let Err(e) = result {
            log::warn!("cannot publish on {}: {e}", self.topic);
        }
    }
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
        S::Response::from_wire(&response)
            .map_err(|e| TransportError::codec(S::Response::TYPE_NAME, e))
    }
}
