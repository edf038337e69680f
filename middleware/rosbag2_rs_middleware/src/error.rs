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
    /// `ROS_SECURITY_ENABLE=true` on a backend that cannot honour it.
    #[error(
        "ROS_SECURITY_ENABLE=true: the native backends do not speak DDS Security, and will not \
         run unsecured where security was asked for; run in a sourced ROS 2 (the rcl backend \
         and its rmw's security), or unset ROS_SECURITY_ENABLE"
    )]
    SecurityUnsupported,
    /// A type name that is not `package/msg/Type` or `package/srv/Type`.
    #[error("invalid type name '{0}': expected 'package/msg/Type' or 'package/srv/Type'")]
    InvalidTypeName(String),
    /// A payload that is not CDR with a 4-byte encapsulation header, or that the backend cannot send.
    #[error("invalid payload: {0}")]
    InvalidPayload(String),
    /// A service call or request that failed, with why.
    #[error("service '{service}': {source}")]
    Service {
        /// The service.
        service: String,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A service called with another type than it is served with.
    #[error("service '{service}': served with type '{served}', called with '{called}'")]
    ServiceTypeMismatch {
        /// The service.
        service: String,
        /// The type it is served with.
        served: String,
        /// The type of the call.
        called: String,
    },
    /// A service request that does not decode as the service's request type.
    #[error("malformed {service_type} request: {source}")]
    MalformedRequest {
        /// The service type.
        service_type: &'static str,
        /// What the CDR codec found.
        #[source]
        source: rosbag2_rs_interfaces::InterfaceError,
    },
    /// A message that does not decode as its type, or does not encode.
    #[error("{type_name}: {source}")]
    Codec {
        /// The message type.
        type_name: String,
        /// What the CDR codec found.
        #[source]
        source: rosbag2_rs_interfaces::InterfaceError,
    },
    /// `ros_discovery_info` bytes that do not decode (the DDS backends' `DecodeError`).
    #[error("ros_discovery_info: {0}")]
    DiscoveryInfo(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// No response arrived in time.
    #[error("service '{0}': no response within the timeout")]
    Timeout(String),
    /// An option value or option file that cannot be used.
    #[error("{0}")]
    InvalidArgument(String),
    /// A QoS override file that cannot be read.
    #[error("QoS overrides {path}: {source}")]
    QosOverridesFile {
        /// The file.
        path: std::path::PathBuf,
        /// The read error.
        #[source]
        source: std::io::Error,
    },
    /// A QoS override file that does not parse.
    #[error("QoS overrides {path}: {source}")]
    QosOverrides {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong in it.
        #[source]
        source: rosbag2_rs_storage::qos::QosError,
    },
    /// A thread of the middleware could not be started.
    #[error("cannot start the {what} thread")]
    Spawn {
        /// Which thread.
        what: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The middleware itself failed (DDS entity creation, sockets, ...).
    #[error("middleware: {0}")]
    Middleware(String),
    /// An rcl or rmw call of the rcl backend that failed.
    #[error("rcl: {what}")]
    Rcl {
        /// What was being done.
        what: String,
        /// The return code and rcl's error string.
        #[source]
        source: RclError,
    },
    /// An rmw function the rcl backend looks up in the process and did not find.
    #[error("rcl: the rmw's {symbol} is not in the process")]
    RmwSymbol {
        /// The function.
        symbol: &'static str,
        /// What the dynamic loader said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A type whose type support is not installed (the rcl backend loads it at run time).
    #[error(
        "type '{type_name}' is not installed: install the ROS 2 package '{package}' \
         (no {library} in the ament index of AMENT_PREFIX_PATH)"
    )]
    TypeSupportMissing {
        /// The type, `pkg/msg/Type` or `pkg/srv/Type`.
        type_name: String,
        /// The package to install.
        package: String,
        /// The library looked for.
        library: String,
    },
    /// A type that is not installed, whose type support the rcl backend could not build from
    /// its description either (an rmw without run-time type support, or a description it
    /// refuses).
    #[error("{missing}; nor could rcl subscribe with its description: {refused}")]
    NotInstalled {
        /// Which package to install.
        missing: Box<TransportError>,
        /// Why the run-time type support was not built or refused.
        refused: Box<TransportError>,
    },
    /// A type support library that does not load, or lacks the type's symbol.
    #[error("type support of '{type_name}' in {}", library.display())]
    TypeSupportLoad {
        /// The type.
        type_name: String,
        /// The library.
        library: std::path::PathBuf,
        /// What the dynamic loader said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A failed rcl or rmw call: its return code and the error string rcl set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (return code {code})")]
pub struct RclError {
    /// The `rcl_ret_t` / `rmw_ret_t`.
    pub code: i32,
    /// rcl's error string (`rcl_get_error_string`), or a description of the code.
    pub message: String,
}

impl TransportError {
    /// A message of `type_name` that the CDR codec refused.
    pub fn codec(type_name: &str, source: rosbag2_rs_interfaces::InterfaceError) -> Self {
        Self::Codec {
            type_name: type_name.to_string(),
            source,
        }
    }

    /// A name ROS 2 does not accept, with the rule it breaks.
    pub fn invalid_name(name: &str, reason: impl Into<String>) -> Self {
        Self::InvalidName {
            name: name.to_string(),
            reason: reason.into(),
        }
    }
}
