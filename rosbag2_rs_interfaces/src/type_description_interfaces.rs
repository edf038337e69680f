//! `type_description_interfaces`: how a ROS 2 node (Jazzy and later) describes the types it
//! uses. Every rclcpp/rclpy node serves `~/get_type_description`
//! ([`srv::GetTypeDescription`]): given a type name and its RIHS01 hash it answers the type's
//! description (fields of the type and of every type it refers to) and, when asked, the
//! `.msg`/`.idl` sources it was generated from.

/// `type_description_interfaces/msg`.
pub mod msg {
    use serde::{Deserialize, Serialize};

    /// `type_description_interfaces/msg/FieldType`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct FieldType {
        /// A `FIELD_TYPE_*` id: the element type, plus 48 (array), 96 (bounded sequence) or
        /// 144 (unbounded sequence).
        pub type_id: u8,
        /// Array size or sequence bound (0: none).
        pub capacity: u64,
        /// String bound (0: none).
        pub string_capacity: u64,
        /// `pkg/msg/Type` of a nested type; empty for builtins.
        pub nested_type_name: String,
    }
    impl_message!(FieldType, "type_description_interfaces/msg/FieldType");

    /// `type_description_interfaces/msg/Field`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct Field {
        /// Field name.
        pub name: String,
        /// Its type.
        #[serde(rename = "type")]
        pub field_type: FieldType,
        /// The default value as written in the source, if any.
        pub default_value: String,
    }
    impl_message!(Field, "type_description_interfaces/msg/Field");

    /// `type_description_interfaces/msg/IndividualTypeDescription`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct IndividualTypeDescription {
        /// `pkg/msg/Type`.
        pub type_name: String,
        /// Fields in wire order.
        pub fields: Vec<Field>,
    }
    impl_message!(
        IndividualTypeDescription,
        "type_description_interfaces/msg/IndividualTypeDescription"
    );

    /// `type_description_interfaces/msg/TypeDescription`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct TypeDescription {
        /// The type itself.
        pub type_description: IndividualTypeDescription,
        /// Every type it refers to, directly or not, sorted by name.
        pub referenced_type_descriptions: Vec<IndividualTypeDescription>,
    }
    impl_message!(
        TypeDescription,
        "type_description_interfaces/msg/TypeDescription"
    );

    /// `type_description_interfaces/msg/TypeSource`: a source file a type was generated from.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct TypeSource {
        /// `pkg/msg/Type`.
        pub type_name: String,
        /// `msg`, `srv`, `action`, `idl` or `implicit` (a type with no file of its own).
        pub encoding: String,
        /// The file's text (empty for `implicit`).
        pub raw_file_contents: String,
    }
    impl_message!(TypeSource, "type_description_interfaces/msg/TypeSource");

    /// `type_description_interfaces/msg/KeyValue`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct KeyValue {
        /// Key.
        pub key: String,
        /// Value.
        pub value: String,
    }
    impl_message!(KeyValue, "type_description_interfaces/msg/KeyValue");
}

/// `type_description_interfaces/srv`.
pub mod srv {
    use serde::{Deserialize, Serialize};

    use super::msg::{KeyValue, TypeDescription, TypeSource};

    /// `type_description_interfaces/srv/GetTypeDescription`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct GetTypeDescription;

    /// `type_description_interfaces/srv/GetTypeDescription_Request`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct GetTypeDescriptionRequest {
        /// `pkg/msg/Type`.
        pub type_name: String,
        /// The RIHS01 hash of the version asked for.
        pub type_hash: String,
        /// Whether to send the sources too.
        pub include_type_sources: bool,
    }

    /// `type_description_interfaces/srv/GetTypeDescription_Response`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct GetTypeDescriptionResponse {
        /// Whether the type (with that hash) is known here.
        pub successful: bool,
        /// Why not, when not.
        pub failure_reason: String,
        /// The description.
        pub type_description: TypeDescription,
        /// The sources, when asked for and known.
        pub type_sources: Vec<TypeSource>,
        /// Anything else the node wants to say.
        pub extra_information: Vec<KeyValue>,
    }

    impl_service!(
        GetTypeDescription,
        GetTypeDescriptionRequest,
        GetTypeDescriptionResponse,
        "type_description_interfaces/srv/GetTypeDescription"
    );
}
