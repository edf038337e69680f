//! The ROS arguments as rcl parses them (`rcl_parse_arguments`): the node's name and namespace
//! (`rcl_remap_node_name`, `rcl_remap_node_namespace`), its parameter overrides
//! (`rcl_arguments_get_param_overrides`, resolved as rclcpp resolves them) and the log levels
//! (`rcl_arguments_get_log_levels`). The argv is kept: every context this process initialises
//! gets it (`rcl_init`), so rcl applies the remaps, the enclave and the rest to its nodes itself,
//! and rcl's logging is configured from the same parse ([`super::logging`]).

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use parking_lot::Mutex;

use super::ffi::{self, check};
use super::sys;
use rosbag2_rs_middleware::ros_arguments::{
    fully_qualified, LoggingArguments, RosArguments, RosArgumentsError, Severity,
};

/// The process's argv as C strings, for `rcl_init`; and rcl's parse of it, for logging.
pub(crate) struct ProcessArguments {
    argv: Vec<CString>,
    parsed: Mutex<sys::rcl_arguments_t>,
}

// SAFETY: the parsed arguments are only read after parsing, under the mutex; rcl's arguments
// hold no thread-bound state.
unsafe impl Send for ProcessArguments {}
// SAFETY: as above.
unsafe impl Sync for ProcessArguments {}

static PROCESS: OnceLock<ProcessArguments> = OnceLock::new();

/// The arguments [`parse`] kept for the process, if it ran.
pub(crate) fn process() -> Option<&'static ProcessArguments> {
    PROCESS.get()
}

impl ProcessArguments {
    /// `argv` as `rcl_init` takes it; the pointers live as long as `self`.
    pub fn argv(&self) -> Vec<*const c_char> {
        self.argv.iter().map(|a| a.as_ptr()).collect()
    }

    /// Runs `f` with rcl's parse of the arguments.
    pub fn with_parsed<T>(&self, f: impl FnOnce(&sys::rcl_arguments_t) -> T) -> T {
        f(&self.parsed.lock())
    }
}

fn rcl_error(ret: i32, what: &str) -> RosArgumentsError {
    RosArgumentsError::Rcl(ffi::error(ret, what.to_string()).to_string())
}

/// Parses `argv` with rcl for the node named `node_name` in the code, and keeps it for the
/// contexts and the logging of this process (the first call's argv; later calls parse their
/// own but keep the first).
pub fn parse(argv: &[String], node_name: &str) -> Result<RosArguments, RosArgumentsError> {
    let argv: Vec<CString> = argv
        .iter()
        .map(|a| {
            CString::new(a.as_str()).map_err(|_| RosArgumentsError::Invalid {
                argument: a.clone(),
                reason: "holds a NUL byte".into(),
            })
        })
        .collect::<Result<_, _>>()?;
    let pointers: Vec<*const c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    let argc = i32::try_from(pointers.len()).map_err(|_| RosArgumentsError::Invalid {
        argument: format!("{} arguments", pointers.len()),
        reason: "too many".into(),
    })?;
    // SAFETY: a zero-initialised arguments struct filled by rcl_parse_arguments from argv's
    // NUL-terminated strings (alive for the call); finalised on failure, else kept.
    let parsed = unsafe {
        let mut parsed = sys::rcl_get_zero_initialized_arguments();
        let ret = sys::rcl_parse_arguments(argc, pointers.as_ptr(), ffi::allocator(), &mut parsed);
        if ret != ffi::RET_OK {
            let e = rcl_error(ret, "rcl_parse_arguments");
            let _ = sys::rcl_arguments_fini(&mut parsed);
            return Err(e);
        }
        parsed
    };
    let kept = ProcessArguments {
        argv,
        parsed: Mutex::new(parsed),
    };
    let result = kept.with_parsed(|args| resolve(args, &kept.argv, node_name));
    if result.is_ok() {
        // The first parse is the process's; a later one (tests) is dropped with its arguments.
        if let Err(unused) = PROCESS.set(kept) {
            drop(unused);
        }
    }
    result
}

impl Drop for ProcessArguments {
    fn drop(&mut self) {
        // SAFETY: initialised by rcl_parse_arguments; finalised once.
        let _ = unsafe { sys::rcl_arguments_fini(self.parsed.get_mut()) };
    }
}

/// What rcl's parse says to the node `node_name`.
fn resolve(
    args: &sys::rcl_arguments_t,
    argv: &[CString],
    node_name: &str,
) -> Result<RosArguments, RosArgumentsError> {
    unknown(args, argv)?;
    let name = ffi::cstring(node_name).map_err(|e| RosArgumentsError::Invalid {
        argument: node_name.to_string(),
        reason: e.to_string(),
    })?;
    // SAFETY: `args` is an initialised parse; rcl allocates the outputs with the default
    // allocator (or leaves them null when no rule matches), and they are freed with it.
    let (node_name, namespace) = unsafe {
        let remapped = |f: unsafe extern "C" fn(
            *const sys::rcl_arguments_t,
            *const sys::rcl_arguments_t,
            *const c_char,
            sys::rcl_allocator_t,
            *mut *mut c_char,
        ) -> i32,
                        what: &str| {
            let mut out: *mut c_char = std::ptr::null_mut();
            let ret = f(
                std::ptr::null(),
                args,
                name.as_ptr(),
                ffi::allocator(),
                &mut out,
            );
            if ret != ffi::RET_OK {
                return Err(rcl_error(ret, what));
            }
            let text = (!out.is_null()).then(|| ffi::string(out));
            free(out.cast());
            Ok(text)
        };
        let node = remapped(sys::rcl_remap_node_name, "rcl_remap_node_name")?;
        let ns = remapped(sys::rcl_remap_node_namespace, "rcl_remap_node_namespace")?;
        (
            node.unwrap_or_else(|| node_name.to_string()),
            ns.map_or_else(|| "/".to_string(), |ns| absolute(&ns)),
        )
    };
    let params = params(args, &fully_qualified(&node_name, &namespace))?;
    let logging = log_levels(args)?;
    Ok(RosArguments {
        node_name,
        namespace,
        remaps: Vec::new(),
        params,
        enclave: None,
        logging,
        by_rcl: true,
    })
}

fn absolute(name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/{name}")
    }
}

/// Frees what rcl allocated with the default allocator.
///
/// # Safety
/// `p` is null or was allocated by the default allocator and is not used again.
unsafe fn free(p: *mut std::ffi::c_void) {
    if p.is_null() {
        return;
    }
    let allocator = ffi::allocator();
    if let Some(deallocate) = allocator.deallocate {
        // SAFETY: allocated by this allocator (caller).
        unsafe { deallocate(p, allocator.state) };
    }
}

/// ROS arguments rcl did not recognise: an error, as in rclcpp and rclpy.
fn unknown(args: &sys::rcl_arguments_t, argv: &[CString]) -> Result<(), RosArgumentsError> {
    // SAFETY: `args` is an initialised parse; the index array rcl allocates holds `count`
    // indexes into argv and is freed with the default allocator.
    unsafe {
        let count = sys::rcl_arguments_get_count_unparsed_ros(args);
        if count <= 0 {
            return Ok(());
        }
        let mut indexes: *mut i32 = std::ptr::null_mut();
        let ret = sys::rcl_arguments_get_unparsed_ros(args, ffi::allocator(), &mut indexes);
        if ret != ffi::RET_OK {
            return Err(rcl_error(ret, "rcl_arguments_get_unparsed_ros"));
        }
        let words = (0..count as usize)
            .filter_map(|i| {
                let index = usize::try_from(*indexes.add(i)).ok()?;
                Some(argv.get(index)?.to_string_lossy().into_owned())
            })
            .collect();
        free(indexes.cast());
        Err(RosArgumentsError::Unknown(words))
    }
}

/// The log levels rcl parsed.
fn log_levels(args: &sys::rcl_arguments_t) -> Result<LoggingArguments, RosArgumentsError> {
    // (An enum: `u32` or `i32` as the distribution's headers and bindgen give it.)
    let severity = |level: i64| match level {
        10 => Some(Severity::Debug),
        20 => Some(Severity::Info),
        30 => Some(Severity::Warn),
        40 => Some(Severity::Error),
        50 => Some(Severity::Fatal),
        _ => None,
    };
    // SAFETY: a zero-initialised levels struct that rcl fills (a copy, with the arguments'
    // allocator) and we finalise once; its entries are read within `num_logger_settings`.
    unsafe {
        let mut levels = sys::rcl_get_zero_initialized_log_levels();
        let ret = sys::rcl_arguments_get_log_levels(args, &mut levels);
        let mut out = LoggingArguments {
            default_level: severity(levels.default_logger_level.into()),
            ..LoggingArguments::default()
        };
        if ret == ffi::RET_OK {
            for i in 0..levels.num_logger_settings {
                let setting = &*levels.logger_settings.add(i);
                if let Some(level) = severity(setting.level.into()) {
                    out.logger_levels.push((ffi::string(setting.name), level));
                }
            }
        }
        let _ = sys::rcl_log_levels_fini(&mut levels);
        check(ret, || "rcl_arguments_get_log_levels".into())
            .map_err(|e| RosArgumentsError::Rcl(e.to_string()))?;
        Ok(out)
    }
}

/// The parameter overrides for the node `fqn`, resolved as rclcpp resolves them: every `/**`
/// value, then every value of the node's own section, the later replacing the earlier.
fn params(
    args: &sys::rcl_arguments_t,
    fqn: &str,
) -> Result<Vec<(String, String)>, RosArgumentsError> {
    let mut overrides: *mut sys::rcl_params_t = std::ptr::null_mut();
    // SAFETY: `args` is an initialised parse; rcl hands over a copy (or null when there are
    // none) that is finalised below.
    let ret = unsafe { sys::rcl_arguments_get_param_overrides(args, &mut overrides) };
    if ret != ffi::RET_OK {
        return Err(rcl_error(ret, "rcl_arguments_get_param_overrides"));
    }
    if overrides.is_null() {
        return Ok(Vec::new());
    }
    let mut out: Vec<(String, String)> = Vec::new();
    // SAFETY: rcl's params struct holds `num_nodes` names and parameter sets, each with
    // `num_params` names and values; each value has exactly one non-null member.
    unsafe {
        let p = &*overrides;
        for wanted in ["/**", fqn] {
            for n in 0..p.num_nodes {
                if absolute(&ffi::string(*p.node_names.add(n))) != wanted {
                    continue;
                }
                let node = &*p.params.add(n);
                for i in 0..node.num_params {
                    let name = ffi::string(*node.parameter_names.add(i));
                    let Some(value) = value_text(&*node.parameter_values.add(i)) else {
                        continue;
                    };
                    match out.iter_mut().find(|(n, _)| *n == name) {
                        Some(slot) => slot.1 = value,
                        None => out.push((name, value)),
                    }
                }
            }
        }
        sys::rcl_yaml_node_struct_fini(overrides);
    }
    Ok(out)
}

/// A parameter value as YAML text (`true`, `2`, `2.0`, `text`, `[a, b]`).
///
/// # Safety
/// `v` is a value rcl's parameter parser filled (its non-null member valid).
unsafe fn value_text(v: &sys::rcl_variant_t) -> Option<String> {
    fn list<T>(values: *const T, size: usize, each: impl Fn(&T) -> String) -> String {
        let items: Vec<String> = (0..size)
            // SAFETY: `values` holds `size` items (caller).
            .map(|i| each(unsafe { &*values.add(i) }))
            .collect();
        format!("[{}]", items.join(", "))
    }
    // SAFETY: each member is null or valid (caller).
    unsafe {
        Some(if let Some(b) = v.bool_value.as_ref() {
            b.to_string()
        } else if let Some(i) = v.integer_value.as_ref() {
            i.to_string()
        } else if let Some(d) = v.double_value.as_ref() {
            format!("{d:?}")
        } else if !v.string_value.is_null() {
            ffi::string(v.string_value)
        } else if let Some(a) = v.bool_array_value.as_ref() {
            list(a.values, a.size, |b| b.to_string())
        } else if let Some(a) = v.integer_array_value.as_ref() {
            list(a.values, a.size, |i| i.to_string())
        } else if let Some(a) = v.double_array_value.as_ref() {
            list(a.values, a.size, |d| format!("{d:?}"))
        } else if let Some(a) = v.string_array_value.as_ref() {
            list(a.data, a.size, |s| ffi::string(*s))
        } else if let Some(a) = v.byte_array_value.as_ref() {
            list(a.values, a.size, |b| b.to_string())
        } else {
            return None;
        })
    }
}
