//! Traits that describe messages and services to the middleware.

use std::fmt::Debug;

use serde::{de::DeserializeOwned, Serialize};

use crate::names;

/// A ROS 2 message type: a topic message, or the request or response half of
/// a service. Its serde representation is its CDR wire format.
pub trait MessageType:
    Serialize + DeserializeOwned + Debug + Clone + PartialEq + Default + Send + Sync + 'static
{
    /// Fully qualified ROS 2 type name, e.g. `"rosbag2_interfaces/msg/WriteSplitEvent"`
    /// or, for the halves of a service, `"rosbag2_interfaces/srv/SetRate_Request"`.
    const TYPE_NAME: &'static str;

    /// The DDS type name ROS 2 uses on the wire, e.g.
    /// `"rosbag2_interfaces::msg::dds_::WriteSplitEvent_"`.
    fn dds_type_name() -> String {
        names::dds_type_name(Self::TYPE_NAME).expect("TYPE_NAME of a MessageType is well formed")
    }

    /// Decodes a CDR payload of this type ([`from_cdr`](crate::from_cdr)). Types whose fields
    /// grew across ROS 2 releases (the rosbag2 services' `Stop`, `Resume`, `SplitBagfile`) also
    /// read the layouts of older releases, with the fields those lack at their defaults, so
    /// that a Jazzy client and a Lyrical one are both understood.
    fn from_wire(bytes: &[u8]) -> Result<Self, crate::InterfaceError> {
        crate::from_cdr(bytes)
    }
}

/// A ROS 2 service type: its name and its request and response types.
pub trait ServiceType: 'static {
    /// The request sent by the client.
    type Request: MessageType;
    /// The response sent back by the server.
    type Response: MessageType;

    /// Fully qualified ROS 2 type name, e.g. `"rosbag2_interfaces/srv/SetRate"`.
    const TYPE_NAME: &'static str;

    /// The DDS type name of the request, e.g.
    /// `"rosbag2_interfaces::srv::dds_::SetRate_Request_"`.
    fn dds_request_type_name() -> String {
        names::dds_request_type_name(Self::TYPE_NAME)
            .expect("TYPE_NAME of a ServiceType is well formed")
    }

    /// The DDS type name of the response, e.g.
    /// `"rosbag2_interfaces::srv::dds_::SetRate_Response_"`.
    fn dds_response_type_name() -> String {
        names::dds_response_type_name(Self::TYPE_NAME)
            .expect("TYPE_NAME of a ServiceType is well formed")
    }
}
