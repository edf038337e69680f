//! Macros that implement the interface traits for generated-style types.

/// Implements [`crate::MessageType`] for a message struct; with a list of older layouts, for a
/// type whose fields grew across ROS 2 releases: it also decodes from those (newest first, each
/// converting `Into` it, missing fields left at their defaults).
macro_rules! impl_message {
    ($ty:ty, $type_name:expr) => {
        impl $crate::MessageType for $ty {
            const TYPE_NAME: &'static str = $type_name;
        }
    };
    ($ty:ty, $type_name:expr, older: [$($older:ty),*]) => {
        impl $crate::MessageType for $ty {
            const TYPE_NAME: &'static str = $type_name;

            fn from_wire(bytes: &[u8]) -> Result<Self, $crate::InterfaceError> {
                let decoded = $crate::from_cdr::<Self>(bytes);
                $(
                    let decoded = decoded.or_else(|newest| {
                        $crate::from_cdr::<$older>(bytes).map(Self::from).map_err(|_| newest)
                    });
                )*
                decoded
            }
        }
    };
}

/// Implements [`crate::ServiceType`] for a service marker, and
/// [`crate::MessageType`] for its request and response (`<name>_Request`,
/// `<name>_Response`), each optionally with the older layouts it also decodes from.
macro_rules! impl_service {
    ($service:ident, $request:ident, $response:ident, $type_name:literal) => {
        impl_service!($service, $request, $response, $type_name, older: [], []);
    };
    ($service:ident, $request:ident, $response:ident, $type_name:literal,
     older: [$($old_request:ty),*], [$($old_response:ty),*]) => {
        impl $crate::ServiceType for $service {
            type Request = $request;
            type Response = $response;
            const TYPE_NAME: &'static str = $type_name;
        }
        impl_message!($request, concat!($type_name, "_Request"), older: [$($old_request),*]);
        impl_message!($response, concat!($type_name, "_Response"), older: [$($old_response),*]);
    };
}

/// A service without request fields that answers one value.
macro_rules! query_service {
    ($service:ident, $request:ident, $response:ident, $type_name:literal, $doc:literal,
     $field:ident: $ty:ty, $field_doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $service;

        empty_request!($request, $type_name);

        #[doc = concat!("`", $type_name, "_Response`.")]
        #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub struct $response {
            #[doc = $field_doc]
            pub $field: $ty,
        }

        impl_service!($service, $request, $response, $type_name);
    };
}

/// The request of a service without request fields: one placeholder byte, as rosidl makes it.
macro_rules! empty_request {
    ($request:ident, $type_name:literal) => {
        #[doc = concat!("`", $type_name, "_Request`: no fields; one placeholder byte.")]
        #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub struct $request {
            /// Placeholder rosidl generates for types without fields; always 0.
            pub structure_needs_at_least_one_member: u8,
        }
    };
}
