//! `service_msgs`: the messages of ROS 2 service introspection. A server (or client) with
//! introspection on publishes a `<pkg>/srv/<Name>_Event` on `<service>/_service_event` for each
//! request and response; [`ServiceEvent`] is that message for any service.
//!
//! Also reachable as `service_msgs::msg::ServiceEventInfo`, the ROS 2 path.

use serde::{Deserialize, Serialize};

use crate::builtin_interfaces::Time;

/// `service_msgs/msg/ServiceEventInfo`: what happened, when, and to which request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct ServiceEventInfo {
    /// One of [`ServiceEventInfo::REQUEST_SENT`] .. [`ServiceEventInfo::RESPONSE_RECEIVED`].
    pub event_type: u8,
    /// When the event happened.
    pub stamp: Time,
    /// The GID of the client that sent the request.
    pub client_gid: [u8; 16],
    /// The client's sequence number of the request.
    pub sequence_number: i64,
}

impl ServiceEventInfo {
    /// A client sent a request.
    pub const REQUEST_SENT: u8 = 0;
    /// A server received a request.
    pub const REQUEST_RECEIVED: u8 = 1;
    /// A server sent a response.
    pub const RESPONSE_SENT: u8 = 2;
    /// A client received a response.
    pub const RESPONSE_RECEIVED: u8 = 3;
}

impl_message!(ServiceEventInfo, "service_msgs/msg/ServiceEventInfo");

/// `<pkg>/srv/<Name>_Event`: one service event with the request or the response (at most one
/// each; none when introspection publishes metadata only).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServiceEvent<Req, Resp> {
    /// What happened.
    pub info: ServiceEventInfo,
    /// The request, on request events with contents.
    pub request: Vec<Req>,
    /// The response, on response events with contents.
    pub response: Vec<Resp>,
}

/// The type name of `service`'s events: `pkg/srv/Name` → `pkg/srv/Name_Event`.
pub fn event_type_name(service: &str) -> String {
    format!("{service}_Event")
}

/// The topic of `service`'s events: `<service>/_service_event`.
pub fn event_topic(service: &str) -> String {
    format!("{service}{EVENT_TOPIC_SUFFIX}")
}

/// What introspection appends to a service name to name its event topic.
pub const EVENT_TOPIC_SUFFIX: &str = "/_service_event";

/// The service whose events `topic` carries: `<service>/_service_event` → `<service>`.
pub fn service_of_event_topic(topic: &str) -> Option<&str> {
    topic
        .strip_suffix(EVENT_TOPIC_SUFFIX)
        .filter(|s| !s.is_empty())
}

/// The service type of an event type: `pkg/srv/Name_Event` → `pkg/srv/Name`; an action's
/// `pkg/action/Name_SendGoal_Event` → `pkg/action/Name_SendGoal` (and `_GetResult`).
pub fn service_type_of_event_type(type_name: &str) -> Option<&str> {
    type_name.strip_suffix("_Event").filter(|s| {
        !s.ends_with('/')
            && (s.contains("/srv/")
                || (s.contains("/action/")
                    && (s.ends_with("_SendGoal") || s.ends_with("_GetResult"))))
    })
}

/// The ROS 2 path of these types: `service_msgs::msg::ServiceEventInfo`.
pub mod msg {
    pub use super::ServiceEventInfo;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{from_cdr, to_cdr};

    #[test]
    fn event_names_lead_back_to_their_service() {
        assert_eq!(service_of_event_topic(&event_topic("/a/b")), Some("/a/b"));
        assert_eq!(service_of_event_topic("/a/b"), None);
        assert_eq!(service_of_event_topic(EVENT_TOPIC_SUFFIX), None);
        let event = event_type_name("pkg/srv/Do");
        assert_eq!(service_type_of_event_type(&event), Some("pkg/srv/Do"));
        assert_eq!(service_type_of_event_type("pkg/msg/Do_Event"), None);
        assert_eq!(service_type_of_event_type("pkg/srv/_Event"), None);
        assert_eq!(
            service_type_of_event_type("pkg/action/Do_SendGoal_Event"),
            Some("pkg/action/Do_SendGoal")
        );
        assert_eq!(service_type_of_event_type("pkg/action/Do_Event"), None);
    }

    #[test]
    fn an_event_is_its_info_then_two_bounded_sequences() {
        let event: ServiceEvent<f64, bool> = ServiceEvent {
            info: ServiceEventInfo {
                event_type: ServiceEventInfo::REQUEST_RECEIVED,
                stamp: Time { sec: 1, nanosec: 2 },
                client_gid: [7; 16],
                sequence_number: 3,
            },
            request: vec![2.5],
            response: vec![],
        };
        let bytes = to_cdr(&event);
        // header, u8 + 3 pad, time 8, gid 16, pad 4, i64 8, len 4 + pad 4, f64 8, len 4
        assert_eq!(bytes.len(), 4 + 4 + 8 + 16 + 4 + 8 + 8 + 8 + 4);
        assert_eq!(&bytes[4..8], &[1, 0, 0, 0]);
        assert_eq!(from_cdr::<ServiceEvent<f64, bool>>(&bytes).unwrap(), event);
        assert_eq!(
            event_topic("/rosbag2_player/pause"),
            "/rosbag2_player/pause/_service_event"
        );
    }
}
