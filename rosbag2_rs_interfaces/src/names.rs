//! ROS 2 type names and the DDS type names derived from them.
//!
//! ROS 2 names a type `package/kind/Name` (e.g. `rosbag2_interfaces/srv/SetRate`);
//! on DDS the same type is registered as `package::kind::dds_::Name_`, and the
//! two halves of a service `Name` as `Name_Request_` and `Name_Response_`.

use std::fmt;

use crate::InterfaceError;

/// The interface kind in a ROS 2 type name (the middle part).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// `msg`: a message.
    Msg,
    /// `srv`: a service, or the request / response message of one.
    Srv,
    /// `action`: an action, or one of the messages and services it is made of.
    Action,
}

impl TypeKind {
    /// The kind as it appears in type names: `"msg"`, `"srv"` or `"action"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TypeKind::Msg => "msg",
            TypeKind::Srv => "srv",
            TypeKind::Action => "action",
        }
    }
}

/// A parsed ROS 2 type name `package/kind/Name`, borrowing from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeName<'a> {
    /// Package, e.g. `rosbag2_interfaces`.
    pub package: &'a str,
    /// Kind, e.g. [`TypeKind::Srv`].
    pub kind: TypeKind,
    /// Type, e.g. `SetRate`.
    pub name: &'a str,
}

impl TypeName<'_> {
    /// The DDS type name, e.g. `rosbag2_interfaces::srv::dds_::SetRate_`.
    pub fn dds(&self) -> String {
        self.dds_with_suffix("")
    }

    fn dds_with_suffix(&self, suffix: &str) -> String {
        format!(
            "{}::{}::dds_::{}{}_",
            self.package,
            self.kind.as_str(),
            self.name,
            suffix
        )
    }
}

impl fmt::Display for TypeName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.package, self.kind.as_str(), self.name)
    }
}

fn is_identifier(part: &str) -> bool {
    !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Parses a fully qualified ROS 2 type name such as `"rosbag2_interfaces/srv/SetRate"`.
///
/// Each part must be a non-empty identifier (ASCII letters, digits, `_`) and the
/// kind must be `msg`, `srv` or `action`.
pub fn parse_type_name(full_name: &str) -> Result<TypeName<'_>, InterfaceError> {
    let invalid = || InterfaceError::InvalidTypeName(full_name.to_owned());
    let mut parts = full_name.split('/');
    let (Some(package), Some(kind), Some(name), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid());
    };
    let kind = match kind {
        "msg" => TypeKind::Msg,
        "srv" => TypeKind::Srv,
        "action" => TypeKind::Action,
        _ => return Err(invalid()),
    };
    if !is_identifier(package) || !is_identifier(name) {
        return Err(invalid());
    }
    Ok(TypeName {
        package,
        kind,
        name,
    })
}

/// The DDS type name of a message type: `"pkg/msg/Name"` becomes
/// `"pkg::msg::dds_::Name_"` (and `"pkg/srv/Name_Request"` becomes
/// `"pkg::srv::dds_::Name_Request_"`).
pub fn dds_type_name(full_name: &str) -> Result<String, InterfaceError> {
    Ok(parse_type_name(full_name)?.dds())
}

fn parse_service_name(service: &str) -> Result<TypeName<'_>, InterfaceError> {
    let parsed = parse_type_name(service)?;
    if parsed.kind == TypeKind::Msg {
        return Err(InterfaceError::InvalidTypeName(service.to_owned()));
    }
    Ok(parsed)
}

/// The DDS type name of a service's request: `"pkg/srv/Name"` becomes
/// `"pkg::srv::dds_::Name_Request_"`.
pub fn dds_request_type_name(service: &str) -> Result<String, InterfaceError> {
    Ok(parse_service_name(service)?.dds_with_suffix("_Request"))
}

/// The DDS type name of a service's response: `"pkg/srv/Name"` becomes
/// `"pkg::srv::dds_::Name_Response_"`.
pub fn dds_response_type_name(service: &str) -> Result<String, InterfaceError> {
    Ok(parse_service_name(service)?.dds_with_suffix("_Response"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names() {
        assert_eq!(
            dds_type_name("rosbag2_interfaces/msg/WriteSplitEvent").unwrap(),
            "rosbag2_interfaces::msg::dds_::WriteSplitEvent_"
        );
        assert_eq!(
            dds_type_name("builtin_interfaces/msg/Time").unwrap(),
            "builtin_interfaces::msg::dds_::Time_"
        );
        assert_eq!(
            dds_type_name("rosbag2_interfaces/srv/SetRate_Request").unwrap(),
            "rosbag2_interfaces::srv::dds_::SetRate_Request_"
        );
    }

    #[test]
    fn service_names() {
        assert_eq!(
            dds_request_type_name("rosbag2_interfaces/srv/SetRate").unwrap(),
            "rosbag2_interfaces::srv::dds_::SetRate_Request_"
        );
        assert_eq!(
            dds_response_type_name("rosbag2_rs_interfaces/srv/SetMemory").unwrap(),
            "rosbag2_rs_interfaces::srv::dds_::SetMemory_Response_"
        );
    }

    #[test]
    fn parse_and_display_round_trip() {
        let parsed = parse_type_name("rosbag2_interfaces/srv/Seek").unwrap();
        assert_eq!(parsed.package, "rosbag2_interfaces");
        assert_eq!(parsed.kind, TypeKind::Srv);
        assert_eq!(parsed.name, "Seek");
        assert_eq!(parsed.to_string(), "rosbag2_interfaces/srv/Seek");
        assert_eq!(
            parse_type_name("example/action/Fibonacci_Goal")
                .unwrap()
                .dds(),
            "example::action::dds_::Fibonacci_Goal_"
        );
    }

    #[test]
    fn malformed_names_are_rejected() {
        for bad in [
            "",
            "SetRate",
            "rosbag2_interfaces/SetRate",
            "rosbag2_interfaces/srv/",
            "/srv/SetRate",
            "rosbag2_interfaces/foo/SetRate",
            "rosbag2_interfaces/srv/SetRate/extra",
            "rosbag2_interfaces::srv::SetRate",
            "rosbag2 interfaces/srv/SetRate",
        ] {
            assert_eq!(
                dds_type_name(bad),
                Err(InterfaceError::InvalidTypeName(bad.to_owned())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn message_names_are_not_services() {
        assert!(dds_request_type_name("rosbag2_interfaces/msg/WriteSplitEvent").is_err());
        assert!(dds_response_type_name("rosbag2_interfaces/msg/WriteSplitEvent").is_err());
    }
}
