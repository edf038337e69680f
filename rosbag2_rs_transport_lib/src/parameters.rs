//! A node's parameter services, as every rclcpp and rclpy node serves them (`~/list_parameters`,
//! `~/get_parameters`, `~/get_parameter_types`, `~/describe_parameters`, `~/set_parameters`,
//! `~/set_parameters_atomically`), so that `ros2 param list|get|describe|dump` answer for the
//! player and recorder as for rosbag2's nodes. The parameters are those the node was started
//! with; they are read-only: a set is refused with the reason.

use std::collections::BTreeMap;
use std::sync::Arc;

use rosbag2_rs_interfaces::rcl_interfaces::msg::{
    parameter_type, ListParametersResult, ParameterDescriptor, ParameterValue, SetParametersResult,
};
use rosbag2_rs_interfaces::rcl_interfaces::srv::{
    DescribeParameters, DescribeParametersResponse, GetParameterTypes, GetParameterTypesResponse,
    GetParameters, GetParametersResponse, ListParameters, ListParametersRequest,
    ListParametersResponse, SetParameters, SetParametersAtomically,
    SetParametersAtomicallyResponse, SetParametersResponse,
};

use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::services::serve;
use rosbag2_rs_middleware::{Handle, Middleware};

/// One parameter a node declares.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredParameter {
    /// Its name (`play.rate`).
    pub name: String,
    /// Its value (its type is the value's).
    pub value: ParameterValue,
    /// What it does, for `ros2 param describe`.
    pub description: String,
}

/// Keeps a node's parameter services up; dropping it removes them.
#[derive(Debug)]
pub struct ParameterServices {
    _handles: Vec<Handle>,
}

/// Parameters by name.
type Table = Arc<BTreeMap<String, DeclaredParameter>>;

/// Serves the parameter services of `parameters` on `middleware`'s node (a later parameter of
/// the same name replaces an earlier one).
pub fn serve_parameters(
    middleware: &dyn Middleware,
    parameters: impl IntoIterator<Item = DeclaredParameter>,
) -> Result<ParameterServices> {
    let table: Table = Arc::new(
        parameters
            .into_iter()
            .map(|p| (p.name.clone(), p))
            .collect(),
    );
    let t = table.clone();
    let list = serve::<ListParameters>(middleware, "~/list_parameters", move |request| {
        ListParametersResponse {
            result: list(t.keys(), &request),
        }
    })?;
    let t = table.clone();
    let get = serve::<GetParameters>(middleware, "~/get_parameters", move |request| {
        GetParametersResponse {
            values: lookup(&t, &request.names, |p| p.value.clone()),
        }
    })?;
    let t = table.clone();
    let types = serve::<GetParameterTypes>(middleware, "~/get_parameter_types", move |request| {
        GetParameterTypesResponse {
            types: lookup(&t, &request.names, |p| p.value.value_type),
        }
    })?;
    let t = table.clone();
    let describe = serve::<DescribeParameters>(middleware, "~/describe_parameters", move |r| {
        DescribeParametersResponse {
            descriptors: lookup(&t, &r.names, descriptor),
        }
    })?;
    let t = table.clone();
    let set = serve::<SetParameters>(middleware, "~/set_parameters", move |request| {
        SetParametersResponse {
            results: request
                .parameters
                .iter()
                .map(|p| refusal(&t, &p.name))
                .collect(),
        }
    })?;
    let t = table;
    let set_atomically = serve::<SetParametersAtomically>(
        middleware,
        "~/set_parameters_atomically",
        move |request| SetParametersAtomicallyResponse {
            result: match request.parameters.first() {
                Some(p) => refusal(&t, &p.name),
                None => SetParametersResult {
                    successful: true,
                    reason: String::new(),
                },
            },
        },
    )?;
    Ok(ParameterServices {
        _handles: vec![list, get, types, describe, set, set_atomically],
    })
}

/// `f` of each parameter named, in order; nothing at all when one is not declared (rclcpp's
/// services answer so, and `ros2 param get` then says the parameter is not set).
fn lookup<T>(
    table: &BTreeMap<String, DeclaredParameter>,
    names: &[String],
    f: impl Fn(&DeclaredParameter) -> T,
) -> Vec<T> {
    names
        .iter()
        .map(|name| table.get(name).map(&f))
        .collect::<Option<Vec<T>>>()
        .unwrap_or_default()
}

/// The descriptor `ros2 param describe` shows.
fn descriptor(parameter: &DeclaredParameter) -> ParameterDescriptor {
    ParameterDescriptor {
        name: parameter.name.clone(),
        value_type: parameter.value.value_type,
        description: parameter.description.clone(),
        additional_constraints: "set when the node starts (--ros-args -p, --params-file)".into(),
        read_only: true,
        ..ParameterDescriptor::default()
    }
}

/// Why setting `name` fails.
fn refusal(table: &BTreeMap<String, DeclaredParameter>, name: &str) -> SetParametersResult {
    let reason = if table.contains_key(name) {
        format!("parameter '{name}' cannot be set because it is read-only")
    } else {
        format!("parameter '{name}' is not declared")
    };
    SetParametersResult {
        successful: false,
        reason,
    }
}

/// rclcpp's `list_parameters`: the names under one of the prefixes (a name equal to a prefix, or
/// starting with it and a `.`), at most `depth` levels below it (or below the root without
/// prefixes; [`ListParametersRequest::DEPTH_RECURSIVE`]: any depth), and the prefixes of the
/// names found.
fn list<'a>(
    names: impl Iterator<Item = &'a String>,
    request: &ListParametersRequest,
) -> ListParametersResult {
    let within = |rest: &str| {
        request.depth == ListParametersRequest::DEPTH_RECURSIVE
            || (rest.matches('.').count() as u64) < request.depth
    };
    let mut result = ListParametersResult::default();
    for name in names {
        let selected = if request.prefixes.is_empty() {
            within(name)
        } else {
            request.prefixes.iter().any(|prefix| {
                name == prefix
                    || name
                        .strip_prefix(prefix.as_str())
                        .and_then(|rest| rest.strip_prefix('.'))
                        .is_some_and(|rest| within(&format!(".{rest}")))
            })
        };
        if !selected {
            continue;
        }
        if let Some((prefix, _)) = name.rsplit_once('.') {
            if !result.prefixes.iter().any(|p| p == prefix) {
                result.prefixes.push(prefix.to_string());
            }
        }
        result.names.push(name.clone());
    }
    result
}

/// The value of a parameter of `value_type` given as text (as `--ros-args -p` or a flag takes
/// it); `None` when the text is not of that type. An empty text is the type's zero.
pub fn parse_value(value_type: u8, text: &str) -> Option<ParameterValue> {
    let text = text.trim();
    Some(match value_type {
        parameter_type::BOOL => ParameterValue::bool(match text {
            "" => false,
            t => t.to_ascii_lowercase().parse().ok()?,
        }),
        parameter_type::INTEGER => ParameterValue::integer(match text {
            "" => 0,
            t => t.parse().ok()?,
        }),
        parameter_type::DOUBLE => ParameterValue::double(match text {
            "" => 0.0,
            t => t.parse().ok()?,
        }),
        parameter_type::STRING => ParameterValue::string(text),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rosbag2_rs_interfaces::rcl_interfaces::msg::Parameter;
    use rosbag2_rs_interfaces::rcl_interfaces::srv::{
        DescribeParametersRequest, GetParameterTypesRequest, GetParametersRequest,
        SetParametersRequest,
    };

    use super::*;
    use rosbag2_rs_middleware::inprocess::InProcessBus;
    use rosbag2_rs_middleware::services::Client;

    const TIMEOUT: Duration = Duration::from_secs(5);

    fn declared(name: &str, value: ParameterValue) -> DeclaredParameter {
        DeclaredParameter {
            name: name.into(),
            value,
            description: format!("--{name}"),
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn another_node_lists_gets_and_describes_the_parameters_and_cannot_set_them() {
        let bus = InProcessBus::new();
        let node = bus.node("rosbag2_player", "/").unwrap();
        let _services = serve_parameters(
            &node,
            [
                declared("play.rate", ParameterValue::double(2.0)),
                declared("play.loop", ParameterValue::bool(true)),
                declared("play.delay.sec", ParameterValue::integer(1)),
                declared("use_sim_time", ParameterValue::bool(false)),
            ],
        )
        .unwrap();
        let other = bus.node("ros2cli", "/").unwrap();

        let client =
            Client::<ListParameters>::new(&other, "/rosbag2_player/list_parameters").unwrap();
        let all = client
            .call(&ListParametersRequest::default(), TIMEOUT)
            .unwrap()
            .result;
        assert_eq!(
            all.names,
            names(&["play.delay.sec", "play.loop", "play.rate", "use_sim_time"])
        );
        assert_eq!(all.prefixes, names(&["play.delay", "play"]));

        let get = Client::<GetParameters>::new(&other, "/rosbag2_player/get_parameters").unwrap();
        let values = get
            .call(
                &GetParametersRequest {
                    names: names(&["play.rate", "play.loop"]),
                },
                TIMEOUT,
            )
            .unwrap()
            .values;
        assert_eq!(
            values,
            [ParameterValue::double(2.0), ParameterValue::bool(true)]
        );
        let unknown = GetParametersRequest {
            names: names(&["play.rate", "play.nope"]),
        };
        assert!(get.call(&unknown, TIMEOUT).unwrap().values.is_empty());

        let types = Client::<GetParameterTypes>::new(&other, "/rosbag2_player/get_parameter_types")
            .unwrap();
        let request = GetParameterTypesRequest {
            names: names(&["play.delay.sec", "play.rate"]),
        };
        assert_eq!(
            types.call(&request, TIMEOUT).unwrap().types,
            [parameter_type::INTEGER, parameter_type::DOUBLE]
        );

        let describe =
            Client::<DescribeParameters>::new(&other, "/rosbag2_player/describe_parameters")
                .unwrap();
        let request = DescribeParametersRequest {
            names: names(&["play.rate"]),
        };
        let descriptors = describe.call(&request, TIMEOUT).unwrap().descriptors;
        assert_eq!(descriptors.len(), 1);
        assert_eq!(descriptors[0].name, "play.rate");
        assert_eq!(descriptors[0].value_type, parameter_type::DOUBLE);
        assert_eq!(descriptors[0].description, "--play.rate");
        assert!(descriptors[0].read_only);

        let set = Client::<SetParameters>::new(&other, "/rosbag2_player/set_parameters").unwrap();
        let request = SetParametersRequest {
            parameters: vec![
                Parameter {
                    name: "play.rate".into(),
                    value: ParameterValue::double(3.0),
                },
                Parameter {
                    name: "play.nope".into(),
                    value: ParameterValue::double(3.0),
                },
            ],
        };
        let results = set.call(&request, TIMEOUT).unwrap().results;
        assert!(results.iter().all(|r| !r.successful));
        assert!(results[0].reason.contains("read-only"), "{results:?}");
        assert!(results[1].reason.contains("not declared"), "{results:?}");
        assert_eq!(
            get.call(
                &GetParametersRequest {
                    names: names(&["play.rate"])
                },
                TIMEOUT
            )
            .unwrap()
            .values,
            [ParameterValue::double(2.0)]
        );
    }

    #[test]
    fn listing_by_prefix_and_depth_follows_rclcpp() {
        let all = names(&[
            "a",
            "play.delay.nsec",
            "play.delay.sec",
            "play.rate",
            "playx",
        ]);
        let ask = |prefixes: &[&str], depth| {
            let request = ListParametersRequest {
                prefixes: names(prefixes),
                depth,
            };
            list(all.iter(), &request)
        };
        assert_eq!(ask(&[], 1).names, names(&["a", "playx"]));
        assert_eq!(
            ask(&[], 2).names,
            names(&["a", "play.rate", "playx"]),
            "two levels from the root"
        );
        // rclcpp counts the `.` after the prefix as a level.
        assert!(ask(&["play"], 1).names.is_empty());
        let play = ask(&["play"], 2);
        assert_eq!(play.names, names(&["play.rate"]));
        assert_eq!(play.prefixes, names(&["play"]));
        let deep = ask(&["play"], 0);
        assert_eq!(
            deep.names,
            names(&["play.delay.nsec", "play.delay.sec", "play.rate"]),
            "'playx' is not under 'play'"
        );
        assert_eq!(deep.prefixes, names(&["play.delay", "play"]));
        assert_eq!(
            ask(&["play.delay.sec"], 1).names,
            names(&["play.delay.sec"])
        );
        assert_eq!(ask(&["play.delay"], 2).names.len(), 2);
    }

    #[test]
    fn values_parse_as_their_type() {
        use parameter_type::*;
        assert_eq!(parse_value(BOOL, "True"), Some(ParameterValue::bool(true)));
        assert_eq!(
            parse_value(INTEGER, "-3"),
            Some(ParameterValue::integer(-3))
        );
        assert_eq!(parse_value(DOUBLE, "2"), Some(ParameterValue::double(2.0)));
        assert_eq!(parse_value(DOUBLE, ""), Some(ParameterValue::double(0.0)));
        assert_eq!(
            parse_value(STRING, " x "),
            Some(ParameterValue::string("x"))
        );
        assert_eq!(parse_value(INTEGER, "2.5"), None);
        assert_eq!(parse_value(STRING_ARRAY, "[a]"), None);
    }
}
