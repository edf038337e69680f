//! Macros that implement the interface traits for generated-style types.

/// Implements [`crate::MessageType`] for a message struct.
macro_rules! impl_message {
    ($ty:ty, $type_name:expr) => {
        impl $crate::MessageType for $ty {
            const TYPE_NAME: &'static str = $type_name;
        }
    };
}

/// Implements [`crate::ServiceType`] for a service marker, and
/// [`crate::MessageType`] for its request and response (`<name>_Request`,
/// `<name>_Response`).
macro_rules! impl_service {
    ($service:ident, $request:ident, $response:ident, $type_name:literal) => {
        impl $crate::ServiceType for $service {
            type Request = $request;
            type Response = $response;
            const TYPE_NAME: &'static str = $type_name;
        }
        impl_message!($request, concat!($type_name, "_Request"));
        impl_message!($response, concat!($type_name, "_Response"));
    };
}
