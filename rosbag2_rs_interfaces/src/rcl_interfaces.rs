//! `rcl_interfaces`: what every ROS 2 node serves and publishes besides its own interfaces: its
//! parameters (`~/list_parameters`, `~/get_parameters`, `~/get_parameter_types`,
//! `~/describe_parameters`, `~/set_parameters`, `~/set_parameters_atomically`) and its log lines
//! ([`msg::Log`] on `/rosout`).

/// `rcl_interfaces/msg`.
pub mod msg {
    use serde::{Deserialize, Serialize};

    use crate::builtin_interfaces::Time;

    /// `rcl_interfaces/msg/ParameterType`: the `type` of a [`ParameterValue`].
    pub mod parameter_type {
        /// No value (an undeclared parameter).
        pub const NOT_SET: u8 = 0;
        /// `bool_value`.
        pub const BOOL: u8 = 1;
        /// `integer_value`.
        pub const INTEGER: u8 = 2;
        /// `double_value`.
        pub const DOUBLE: u8 = 3;
        /// `string_value`.
        pub const STRING: u8 = 4;
        /// `byte_array_value`.
        pub const BYTE_ARRAY: u8 = 5;
        /// `bool_array_value`.
        pub const BOOL_ARRAY: u8 = 6;
        /// `integer_array_value`.
        pub const INTEGER_ARRAY: u8 = 7;
        /// `double_array_value`.
        pub const DOUBLE_ARRAY: u8 = 8;
        /// `string_array_value`.
        pub const STRING_ARRAY: u8 = 9;
    }

    /// `rcl_interfaces/msg/ParameterValue`: a value and its type; only the field the type names
    /// is meaningful.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct ParameterValue {
        /// One of [`parameter_type`].
        #[serde(rename = "type")]
        pub value_type: u8,
        /// `BOOL`.
        pub bool_value: bool,
        /// `INTEGER`.
        pub integer_value: i64,
        /// `DOUBLE`.
        pub double_value: f64,
        /// `STRING`.
        pub string_value: String,
        /// `BYTE_ARRAY`.
        pub byte_array_value: Vec<u8>,
        /// `BOOL_ARRAY`.
        pub bool_array_value: Vec<bool>,
        /// `INTEGER_ARRAY`.
        pub integer_array_value: Vec<i64>,
        /// `DOUBLE_ARRAY`.
        pub double_array_value: Vec<f64>,
        /// `STRING_ARRAY`.
        pub string_array_value: Vec<String>,
    }
    impl_message!(ParameterValue, "rcl_interfaces/msg/ParameterValue");

    impl ParameterValue {
        /// A `BOOL` value.
        pub fn bool(value: bool) -> Self {
            Self {
                value_type: parameter_type::BOOL,
                bool_value: value,
                ..Self::default()
            }
        }

        /// An `INTEGER` value.
        pub fn integer(value: i64) -> Self {
            Self {
                value_type: parameter_type::INTEGER,
                integer_value: value,
                ..Self::default()
            }
        }

        /// A `DOUBLE` value.
        pub fn double(value: f64) -> Self {
            Self {
                value_type: parameter_type::DOUBLE,
                double_value: value,
                ..Self::default()
            }
        }

        /// A `STRING` value.
        pub fn string(value: impl Into<String>) -> Self {
            Self {
                value_type: parameter_type::STRING,
                string_value: value.into(),
                ..Self::default()
            }
        }

        /// A `STRING_ARRAY` value.
        pub fn strings(values: Vec<String>) -> Self {
            Self {
                value_type: parameter_type::STRING_ARRAY,
                string_array_value: values,
                ..Self::default()
            }
        }
    }

    /// `rcl_interfaces/msg/Parameter`: a named value.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct Parameter {
        /// The parameter's name (`play.rate`).
        pub name: String,
        /// Its value.
        pub value: ParameterValue,
    }
    impl_message!(Parameter, "rcl_interfaces/msg/Parameter");

    /// `rcl_interfaces/msg/FloatingPointRange`.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct FloatingPointRange {
        /// Least value.
        pub from_value: f64,
        /// Greatest value.
        pub to_value: f64,
        /// Step between values (0: any).
        pub step: f64,
    }
    impl_message!(FloatingPointRange, "rcl_interfaces/msg/FloatingPointRange");

    /// `rcl_interfaces/msg/IntegerRange`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct IntegerRange {
        /// Least value.
        pub from_value: i64,
        /// Greatest value.
        pub to_value: i64,
        /// Step between values (0: any).
        pub step: u64,
    }
    impl_message!(IntegerRange, "rcl_interfaces/msg/IntegerRange");

    /// `rcl_interfaces/msg/ParameterDescriptor`: what a parameter is and what it accepts.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct ParameterDescriptor {
        /// The parameter's name.
        pub name: String,
        /// One of [`parameter_type`].
        #[serde(rename = "type")]
        pub value_type: u8,
        /// What it does.
        pub description: String,
        /// Constraints in words.
        pub additional_constraints: String,
        /// Whether it can only be set at start.
        pub read_only: bool,
        /// Whether its type may change.
        pub dynamic_typing: bool,
        /// Range of a `DOUBLE` (at most one).
        pub floating_point_range: Vec<FloatingPointRange>,
        /// Range of an `INTEGER` (at most one).
        pub integer_range: Vec<IntegerRange>,
    }
    impl_message!(
        ParameterDescriptor,
        "rcl_interfaces/msg/ParameterDescriptor"
    );

    /// `rcl_interfaces/msg/ListParametersResult`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct ListParametersResult {
        /// The names found.
        pub names: Vec<String>,
        /// The prefixes (all but the last `.`-separated part) of those names, once each.
        pub prefixes: Vec<String>,
    }
    impl_message!(
        ListParametersResult,
        "rcl_interfaces/msg/ListParametersResult"
    );

    /// `rcl_interfaces/msg/SetParametersResult`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct SetParametersResult {
        /// Whether the parameter was set.
        pub successful: bool,
        /// Why not, when not.
        pub reason: String,
    }
    impl_message!(
        SetParametersResult,
        "rcl_interfaces/msg/SetParametersResult"
    );

    /// `rcl_interfaces/msg/Log`: one log line of a node, as published on `/rosout`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct Log {
        /// When it was logged.
        pub stamp: Time,
        /// [`Log::DEBUG`] to [`Log::FATAL`].
        pub level: u8,
        /// The logger's name (a node's: its namespace and name joined by dots, no leading one).
        pub name: String,
        /// The text.
        pub msg: String,
        /// The source file.
        pub file: String,
        /// The function (or module).
        pub function: String,
        /// The line in the file.
        pub line: u32,
    }
    impl_message!(Log, "rcl_interfaces/msg/Log");

    impl Log {
        /// Debug level.
        pub const DEBUG: u8 = 10;
        /// Info level.
        pub const INFO: u8 = 20;
        /// Warning level.
        pub const WARN: u8 = 30;
        /// Error level.
        pub const ERROR: u8 = 40;
        /// Fatal level.
        pub const FATAL: u8 = 50;
    }
}

/// `rcl_interfaces/srv`: a node's parameter services.
pub mod srv {
    use serde::{Deserialize, Serialize};

    use super::msg::{
        ListParametersResult, Parameter, ParameterDescriptor, ParameterValue, SetParametersResult,
    };

    /// `rcl_interfaces/srv/ListParameters`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct ListParameters;

    /// `rcl_interfaces/srv/ListParameters_Request`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct ListParametersRequest {
        /// Only names equal to one of these or under it (`prefix.`); none: every name.
        pub prefixes: Vec<String>,
        /// How many `.`-separated levels below a prefix (or the root) to go;
        /// [`ListParametersRequest::DEPTH_RECURSIVE`]: all.
        pub depth: u64,
    }

    impl ListParametersRequest {
        /// Every level.
        pub const DEPTH_RECURSIVE: u64 = 0;
    }

    /// `rcl_interfaces/srv/ListParameters_Response`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct ListParametersResponse {
        /// The names and prefixes found.
        pub result: ListParametersResult,
    }

    impl_service!(
        ListParameters,
        ListParametersRequest,
        ListParametersResponse,
        "rcl_interfaces/srv/ListParameters"
    );

    /// `rcl_interfaces/srv/GetParameters`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct GetParameters;

    /// `rcl_interfaces/srv/GetParameters_Request`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct GetParametersRequest {
        /// The parameters asked for.
        pub names: Vec<String>,
    }

    /// `rcl_interfaces/srv/GetParameters_Response`.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct GetParametersResponse {
        /// Their values, in the order asked (none at all if one is not declared, as rclcpp).
        pub values: Vec<ParameterValue>,
    }

    impl_service!(
        GetParameters,
        GetParametersRequest,
        GetParametersResponse,
        "rcl_interfaces/srv/GetParameters"
    );

    /// `rcl_interfaces/srv/GetParameterTypes`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct GetParameterTypes;

    /// `rcl_interfaces/srv/GetParameterTypes_Request`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct GetParameterTypesRequest {
        /// The parameters asked for.
        pub names: Vec<String>,
    }

    /// `rcl_interfaces/srv/GetParameterTypes_Response`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct GetParameterTypesResponse {
        /// Their types (`parameter_type`), in the order asked.
        pub types: Vec<u8>,
    }

    impl_service!(
        GetParameterTypes,
        GetParameterTypesRequest,
        GetParameterTypesResponse,
        "rcl_interfaces/srv/GetParameterTypes"
    );

    /// `rcl_interfaces/srv/DescribeParameters`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct DescribeParameters;

    /// `rcl_interfaces/srv/DescribeParameters_Request`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct DescribeParametersRequest {
        /// The parameters asked for.
        pub names: Vec<String>,
    }

    /// `rcl_interfaces/srv/DescribeParameters_Response`.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct DescribeParametersResponse {
        /// Their descriptors, in the order asked (none at all if one is not declared).
        pub descriptors: Vec<ParameterDescriptor>,
    }

    impl_service!(
        DescribeParameters,
        DescribeParametersRequest,
        DescribeParametersResponse,
        "rcl_interfaces/srv/DescribeParameters"
    );

    /// `rcl_interfaces/srv/SetParameters`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct SetParameters;

    /// `rcl_interfaces/srv/SetParameters_Request`.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct SetParametersRequest {
        /// The parameters to set.
        pub parameters: Vec<Parameter>,
    }

    /// `rcl_interfaces/srv/SetParameters_Response`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct SetParametersResponse {
        /// One result per parameter, in order.
        pub results: Vec<SetParametersResult>,
    }

    impl_service!(
        SetParameters,
        SetParametersRequest,
        SetParametersResponse,
        "rcl_interfaces/srv/SetParameters"
    );

    /// `rcl_interfaces/srv/SetParametersAtomically`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct SetParametersAtomically;

    /// `rcl_interfaces/srv/SetParametersAtomically_Request`.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct SetParametersAtomicallyRequest {
        /// The parameters to set, all or none.
        pub parameters: Vec<Parameter>,
    }

    /// `rcl_interfaces/srv/SetParametersAtomically_Response`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct SetParametersAtomicallyResponse {
        /// One result for them all.
        pub result: SetParametersResult,
    }

    impl_service!(
        SetParametersAtomically,
        SetParametersAtomicallyRequest,
        SetParametersAtomicallyResponse,
        "rcl_interfaces/srv/SetParametersAtomically"
    );
}
