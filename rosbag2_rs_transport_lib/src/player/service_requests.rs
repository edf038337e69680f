//! Recorded service events replayed as calls of their services (`--publish-service-requests`),
//! as rosbag2's player does: the request carried by each event of the chosen
//! [source](ServiceRequestsSource) is sent to the service when its time comes; responses, other
//! events and the service's answers are dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use rosbag2_rs_codec::msg::definition::BaseType;
use rosbag2_rs_codec::msg::{
    decode_cdr_at, encode_cdr_at, CodecError, Dialect, MessageView, Registry, Value,
};
use rosbag2_rs_codec::{MessageDefinition, MessageDefinitionCache};
use rosbag2_rs_interfaces::service_msgs::{service_of_event_topic, service_type_of_event_type};
use rosbag2_rs_storage::SequentialReader;

use super::options::ServiceRequestsSource;
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::{Middleware, RawClient, RawPublisher};

/// Why a service's recorded events cannot be split into their info and request.
#[derive(Debug, thiserror::Error)]
pub(super) enum EventCodecError {
    /// A definition in another encoding than `ros2msg` (the parser reads only that).
    #[error("its definition is not a ros2msg one (encoding '{0}')")]
    NotRos2Msg(String),
    /// The definition does not parse, or an event does not decode or its request encode.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// A definition that does not describe the event type.
    #[error("the definition lacks {0}")]
    MissingEvent(String),
    /// An event type without the `info` and `request` fields of a service event.
    #[error("{0} has no 'info' and 'request' fields")]
    NotAnEvent(String),
    /// An event whose `info.event_type` is missing.
    #[error("the event has no info.event_type")]
    NoEventType,
}

/// Why the requests of a recorded event topic cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub(super) enum RequestReplayError {
    /// A topic or type that names no service event.
    #[error("'{topic}' of '{event_type}' is no service event topic")]
    NotServiceEvent {
        /// The recorded topic.
        topic: String,
        /// Its type.
        event_type: String,
    },
    /// Neither the bag's definition of the event nor the one looked up can be used.
    #[error("cannot read its events")]
    Events(#[source] EventCodecError),
    /// The client of the service cannot be created.
    #[error(transparent)]
    Client(#[from] TransportError),
}

/// Splits one service's events into their info and request, through the event's definition.
struct EventCodec {
    registry: Registry,
    event: usize,
    request: usize,
}

impl EventCodec {
    fn new(event_type: &str, definition: &MessageDefinition) -> Result<Self, EventCodecError> {
        if definition.encoding != "ros2msg" {
            return Err(EventCodecError::NotRos2Msg(definition.encoding.clone()));
        }
        let mut registry = Registry::new();
        registry.parse_concatenated(
            event_type,
            &definition.encoded_message_definition,
            Dialect::Ros2,
        )?;
        let event = registry
            .index_of(event_type)
            .ok_or_else(|| EventCodecError::MissingEvent(event_type.to_string()))?;
        let ty = registry.by_index(event);
        let request = ty
            .field_index("info")
            .and(ty.field_index("request"))
            .and_then(|i| match &ty.fields[i].base {
                BaseType::Message(name) => registry.index_of(name),
                _ => None,
            })
            .ok_or_else(|| EventCodecError::NotAnEvent(event_type.to_string()))?;
        Ok(Self {
            registry,
            event,
            request,
        })
    }

    /// The event's `info.event_type`, and its request as a CDR message when it carries one.
    fn split(&self, event: &[u8]) -> Result<(u8, Option<Vec<u8>>), EventCodecError> {
        let (value, header) = decode_cdr_at(&self.registry, self.event, event)?;
        let view = MessageView::new(&self.registry, self.event, &value);
        let kind = view
            .message("info")
            .and_then(|info| info.number("event_type"))
            .ok_or(EventCodecError::NoEventType)? as u8;
        let request = match view.field("request") {
            Some(Value::Array(items)) => items.first(),
            _ => None,
        };
        let request = request
            .map(|r| encode_cdr_at(&self.registry, self.request, r, header))
            .transpose()?;
        Ok((kind, request))
    }
}

/// Sends the requests of one service's recorded events; to the playback thread it is the
/// publisher of the event topic.
pub(super) struct RequestReplayer {
    service: String,
    codec: EventCodec,
    /// The event type whose requests are sent.
    source: u8,
    client: Box<dyn RawClient>,
    warned_metadata_only: AtomicBool,
    /// Whether the service has been available once (the first request waits for discovery).
    discovered: AtomicBool,
    /// Wait for each response (up to this long) before playback goes on: an action's goals,
    /// so that a cancel or result request recorded after the goal's acceptance cannot reach
    /// the server before the goal.
    await_response: Option<Duration>,
}

/// How long a replayed action goal waits for the server to accept or reject it.
pub(super) const GOAL_RESPONSE_WAIT: Duration = Duration::from_secs(5);

/// How long the player waits for the services it calls before playing, and the first request
/// of a service for the service to be discovered: a player started together with the server it
/// calls would otherwise lose the first requests.
pub(super) const DISCOVERY_WAIT: Duration = Duration::from_secs(5);

impl RequestReplayer {
    /// A replayer for the recorded event topic `topic` of `event_type` (its service remapped by
    /// `remap`). The event's definition is the bag's, else one looked up in `cache`.
    pub(super) fn new(
        middleware: &dyn Middleware,
        reader: &SequentialReader,
        cache: &mut MessageDefinitionCache,
        (topic, event_type): (&str, &str),
        remap: impl Fn(&str) -> String,
        source: ServiceRequestsSource,
        await_response: Option<Duration>,
    ) -> Result<Self, RequestReplayError> {
        let (Some(service), Some(service_type)) = (
            service_of_event_topic(topic),
            service_type_of_event_type(event_type),
        ) else {
            return Err(RequestReplayError::NotServiceEvent {
                topic: topic.to_string(),
                event_type: event_type.to_string(),
            });
        };
        // rosbag2 stores the `.srv` text, which is no message definition: then the lookup's.
        let codec = EventCodec::new(event_type, &reader.message_definition(event_type, cache))
            .or_else(|_| EventCodec::new(event_type, &cache.definition(event_type)))
            .map_err(RequestReplayError::Events)?;
        let service = remap(service);
        let client = middleware.create_client(&service, service_type)?;
        Ok(Self {
            service,
            codec,
            source: source.event_type(),
            client,
            warned_metadata_only: AtomicBool::new(false),
            discovered: AtomicBool::new(false),
            await_response,
        })
    }
}

impl RawPublisher for RequestReplayer {
    /// Sends the request of an event of the chosen source; anything else is dropped, and so is
    /// a request for a service that is not on the graph, with an error logged (the first
    /// request waits up to [`DISCOVERY_WAIT`] for the service to be discovered).
    fn publish(&self, event: &Bytes) -> Result<()> {
        let (kind, request) = match self.codec.split(event) {
            Ok(split) => split,
            Err(e) => {
                log::error!(
                    "{}: a recorded service event does not decode: {}",
                    self.service,
                    crate::error_chain::Chain(&e)
                );
                return Ok(());
            }
        };
        if kind != self.source {
            return Ok(());
        }
        let Some(request) = request else {
            if !self.warned_metadata_only.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "{}: the recorded events carry no request (introspection recorded metadata only); nothing is sent",
                    self.service
                );
            }
            return Ok(());
        };
        let discovered = self.discovered.load(Ordering::Relaxed);
        if !self.client.wait_for_service(if discovered {
            Duration::ZERO
        } else {
            DISCOVERY_WAIT
        }) {
            log::error!(
                "{}: the service is not available; a recorded request was not sent",
                self.service
            );
            return Ok(());
        }
        self.discovered.store(true, Ordering::Relaxed);
        match self.await_response {
            None => self.client.send(&request),
            Some(timeout) => {
                if let Err(e) = self.client.call(&request, timeout) {
                    log::warn!("{}: no response to a replayed request: {e}", self.service);
                }
                Ok(())
            }
        }
    }

    /// 1 while the service is available, else 0.
    fn subscription_count(&self) -> usize {
        usize::from(self.client.wait_for_service(Duration::ZERO))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_rate_codec() -> EventCodec {
        let event = "rosbag2_interfaces/srv/SetRate_Event";
        EventCodec::new(
            event,
            &MessageDefinitionCache::with_prefixes(vec![]).definition(event),
        )
        .unwrap()
    }

    #[test]
    fn an_event_splits_into_its_type_and_request() {
        use rosbag2_rs_interfaces::service_msgs::{ServiceEvent, ServiceEventInfo};
        let codec = set_rate_codec();
        let event = ServiceEvent::<f64, bool> {
            info: ServiceEventInfo {
                event_type: ServiceEventInfo::REQUEST_SENT,
                sequence_number: 4,
                ..Default::default()
            },
            request: vec![0.25],
            response: vec![],
        };
        let cdr = rosbag2_rs_interfaces::to_cdr(&event);
        let (kind, request) = codec.split(&cdr).unwrap();
        assert_eq!(kind, ServiceEventInfo::REQUEST_SENT);
        assert_eq!(request.unwrap(), rosbag2_rs_interfaces::to_cdr(&0.25f64));

        let response = ServiceEvent::<f64, bool> {
            info: ServiceEventInfo {
                event_type: ServiceEventInfo::RESPONSE_SENT,
                ..Default::default()
            },
            request: vec![],
            response: vec![true],
        };
        let cdr = rosbag2_rs_interfaces::to_cdr(&response);
        assert_eq!(
            codec.split(&cdr).unwrap(),
            (ServiceEventInfo::RESPONSE_SENT, None)
        );
        assert!(codec.split(&cdr[..cdr.len() - 3]).is_err());
    }

    #[test]
    fn definitions_that_describe_no_event_are_refused() {
        let event = "rosbag2_interfaces/srv/SetRate_Event";
        let mut cache = MessageDefinitionCache::with_prefixes(vec![]);
        let not_an_event = MessageDefinition {
            topic_type: event.into(),
            ..cache.definition("rosbag2_interfaces/srv/SetRate_Request")
        };
        assert!(EventCodec::new(event, &not_an_event).is_err());
        // What rosbag2 stores: the `.srv` text.
        let srv_text = MessageDefinition {
            topic_type: event.into(),
            encoding: "ros2msg".into(),
            encoded_message_definition: format!(
                "{}\nSRV: rosbag2_interfaces/srv/SetRate\nfloat64 rate\n---\nbool success\n",
                "=".repeat(80)
            ),
            type_description_hash: String::new(),
        };
        assert!(EventCodec::new(event, &srv_text).is_err());
        assert!(EventCodec::new(event, &MessageDefinition::default()).is_err());
    }
}
