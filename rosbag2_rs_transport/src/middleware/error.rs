//! Typed errors of the transport layer.

/// Result alias of the transport layer.
pub type Result<T, E = TransportError> = std::result::Result<T, E>;

/// What went wrong talking to the ROS 2 graph.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// A topic, service or node name that ROS 2 does not accept.
    #[error("invalid name '{name}': {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// A type name that is not `package/msg/Type` or `package/srv/Type`.
    #[error("invalid type name '{0}': expected 'package/msg/Type' or 'package/srv/Type'")]
    InvalidTypeName(String),
    /// A payload that is not CDR with a 4-byte encapsulation header, or that the backend cannot send.
    #[error("invalid payload: {0}")]
    InvalidPayload(String),
    /// A service request or response that could not be decoded or encoded.
    #[error("service '{service}': {reason}")]
    Service {
        /// The service.
        service: String,
        /// What failed.
        reason: String,
    },
    /// No response arrived in time.
    #[error("service '{0}': no response within the timeout")]
    Timeout(String),
    /// An option value or option file that cannot be used.
    #[error("{0}")]
    InvalidArgument(String),
    /// The middleware itself failed (DDS entity creation, sockets, ...).
    #[error("middleware: {0}")]
    Middleware(String),
}

impl TransportError {
    pub(crate) fn invalid_name(name: &str, reason: impl Into<String>) -> Self {
        Self::InvalidName {
            name: name.to_string(),
            reason: reason.into(),
        }
    }
}
