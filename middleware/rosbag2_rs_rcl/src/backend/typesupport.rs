//! Type supports loaded at run time, as rclcpp's generic publisher and subscription load them:
//! the package is found through the ament index of `AMENT_PREFIX_PATH`
//! (`share/ament_index/resource_index/packages/<pkg>`), its `lib<pkg>__rosidl_typesupport_c.so`
//! (or `__rosidl_typesupport_introspection_c.so`) is `dlopen`ed, and the type's handle is the
//! result of its `rosidl_typesupport_c__get_message_type_support_handle__<pkg>__msg__<Type>`.
//! Libraries stay loaded while the node lives (the handles point into them).

use std::collections::HashMap;
use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::Arc;

use libloading::Library;
use parking_lot::Mutex;

use super::sys;
use rosbag2_rs_middleware::error::{Result, TransportError};

/// The C type support (the dispatcher every rmw understands).
const TYPESUPPORT_C: &str = "rosidl_typesupport_c";
/// The C introspection type support (member layout, size, init and fini of the C struct).
const INTROSPECTION_C: &str = "rosidl_typesupport_introspection_c";

/// A ROS type name split: `pkg/msg/Type` → (`pkg`, `msg`, `Type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypeName<'a> {
    pub package: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
}

impl<'a> TypeName<'a> {
    /// Splits `type_name`, whose middle part must be one of `kinds` (`msg`, `srv`, `action`).
    pub fn parse(type_name: &'a str, kinds: &[&str]) -> Result<Self> {
        let valid =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let mut parts = type_name.split('/');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(package), Some(kind), Some(name), None)
                if kinds.contains(&kind) && valid(package) && valid(name) =>
            {
                Ok(Self {
                    package,
                    kind,
                    name,
                })
            }
            _ => Err(TransportError::InvalidTypeName(type_name.to_string())),
        }
    }
}

/// Where `lib<package>__<typesupport>.so` is: in the `lib` directory of the first prefix of
/// `AMENT_PREFIX_PATH` whose ament index lists the package (as ament_index_cpp finds a
/// package's prefix).
pub(crate) fn library_path(package: &str, typesupport: &str) -> Option<PathBuf> {
    let prefixes = std::env::var_os("AMENT_PREFIX_PATH")?;
    let file = format!("lib{package}__{typesupport}.so");
    std::env::split_paths(&prefixes)
        .filter(|p| !p.as_os_str().is_empty())
        .find(|p| {
            p.join("share/ament_index/resource_index/packages")
                .join(package)
                .is_file()
        })
        .map(|p| p.join("lib").join(file))
        .filter(|l| l.is_file())
}

/// A message type support: the handle rcl takes, and what keeps it valid (the library it lives
/// in, or the type support rcl built at run time).
#[derive(Clone)]
pub(crate) struct MessageType {
    /// `rosidl_message_type_support_t` of the C type support.
    pub handle: *const sys::rosidl_message_type_support_t,
    _owner: Arc<dyn Send + Sync>,
}

impl MessageType {
    /// A handle that stays valid while `owner` lives.
    pub fn new(
        handle: *const sys::rosidl_message_type_support_t,
        owner: Arc<dyn Send + Sync>,
    ) -> Self {
        Self {
            handle,
            _owner: owner,
        }
    }
}

// SAFETY: a type support handle is immutable data of its owner (a loaded library, or a type
// support built at run time), which this keeps alive; rcl and rmw read it from any thread.
unsafe impl Send for MessageType {}
// SAFETY: as above: only read.
unsafe impl Sync for MessageType {}

/// The C struct of one message type, known through its introspection type support: how large
/// it is and how to initialise and finalise it. With [`MessageType`], the means to convert
/// between CDR and the struct (`rmw_serialize` / `rmw_deserialize`) without knowing its layout.
#[derive(Clone)]
pub(crate) struct Introspected {
    /// The C type support of the message (what rmw_serialize takes).
    pub message: MessageType,
    members: *const sys::rosidl_typesupport_introspection_c__MessageMembers,
    _library: Arc<Library>,
}

// SAFETY: the members are immutable static data of a library this keeps loaded.
unsafe impl Send for Introspected {}
// SAFETY: as above: only read.
unsafe impl Sync for Introspected {}

/// A service type support with its request and response structs.
#[derive(Clone)]
pub(crate) struct ServiceType {
    /// `rosidl_service_type_support_t` of the C type support.
    pub handle: *const sys::rosidl_service_type_support_t,
    /// `<Srv>_Request`.
    pub request: Introspected,
    /// `<Srv>_Response`.
    pub response: Introspected,
    _library: Arc<Library>,
}

// SAFETY: immutable static data of libraries this keeps loaded.
unsafe impl Send for ServiceType {}
// SAFETY: as above: only read.
unsafe impl Sync for ServiceType {}

/// The type support libraries a node loaded, by path.
#[derive(Default)]
pub(crate) struct TypeSupports {
    libraries: Mutex<HashMap<PathBuf, Arc<Library>>>,
}

impl TypeSupports {
    fn library(
        &self,
        type_name: &str,
        package: &str,
        typesupport: &str,
    ) -> Result<(PathBuf, Arc<Library>)> {
        let path = library_path(package, typesupport).ok_or_else(|| {
            TransportError::TypeSupportMissing {
                type_name: type_name.to_string(),
                package: package.to_string(),
                library: format!("lib{package}__{typesupport}.so"),
            }
        })?;
        let mut libraries = self.libraries.lock();
        if let Some(lib) = libraries.get(&path) {
            return Ok((path, lib.clone()));
        }
        // SAFETY: a type support library's initialisers only register its type supports; it
        // is a library of the sourced ROS 2 the process already runs rcl from.
        let lib = unsafe { Library::new(&path) }.map_err(|e| TransportError::TypeSupportLoad {
            type_name: type_name.to_string(),
            library: path.clone(),
            source: Box::new(e),
        })?;
        let lib = Arc::new(lib);
        libraries.insert(path.clone(), lib.clone());
        Ok((path, lib))
    }

    /// The handle a `get_*_type_support_handle` symbol of `library` returns.
    fn symbol<T>(
        type_name: &str,
        path: &std::path::Path,
        lib: &Library,
        symbol: &str,
        get: impl FnOnce(libloading::Symbol<'_, unsafe extern "C" fn() -> *const T>) -> *const T,
    ) -> Result<*const T> {
        let load_error = |e: libloading::Error| TransportError::TypeSupportLoad {
            type_name: type_name.to_string(),
            library: path.to_path_buf(),
            source: Box::new(e),
        };
        let mut name = symbol.as_bytes().to_vec();
        name.push(0);
        // SAFETY: rosidl generates these symbols as `const T * f(void)`.
        let f =
            unsafe { lib.get::<unsafe extern "C" fn() -> *const T>(&name) }.map_err(load_error)?;
        let handle = get(f);
        if handle.is_null() {
            return Err(load_error(libloading::Error::DlSymUnknown));
        }
        Ok(handle)
    }

    /// The C type support of message `pkg/kind/Name` (`kind` is `msg`, or `srv` for a service's
    /// `_Request` / `_Response`).
    fn message_of(&self, type_name: &str, t: &TypeName<'_>) -> Result<MessageType> {
        let (path, lib) = self.library(type_name, t.package, TYPESUPPORT_C)?;
        let symbol = format!(
            "{TYPESUPPORT_C}__get_message_type_support_handle__{}__{}__{}",
            t.package, t.kind, t.name
        );
        // SAFETY: the generated function has no preconditions.
        let handle = Self::symbol(type_name, &path, &lib, &symbol, |f| unsafe { f() })?;
        Ok(MessageType::new(handle, lib))
    }

    /// The C type support of message `type_name`: `pkg/msg/Type`, or a message generated for a
    /// service or action (`pkg/srv/Name_Event`, `pkg/action/Name_FeedbackMessage`, ...).
    pub fn message(&self, type_name: &str) -> Result<MessageType> {
        let t = TypeName::parse(type_name, &["msg", "srv", "action"])?;
        self.message_of(type_name, &t)
    }

    /// The message `type_name` (`pkg/msg/Type`) with its introspection.
    #[cfg_attr(not(rosbag2_rs_rcl_dynamic), allow(dead_code))]
    pub fn introspected_message(&self, type_name: &str) -> Result<Introspected> {
        let t = TypeName::parse(type_name, &["msg"])?;
        self.introspected(type_name, &t)
    }

    /// The message `pkg/<kind>/Name` with its introspection.
    fn introspected(&self, type_name: &str, t: &TypeName<'_>) -> Result<Introspected> {
        let message = self.message_of(type_name, t)?;
        let (path, lib) = self.library(type_name, t.package, INTROSPECTION_C)?;
        let symbol = format!(
            "{INTROSPECTION_C}__get_message_type_support_handle__{}__{}__{}",
            t.package, t.kind, t.name
        );
        // SAFETY: the generated function has no preconditions.
        let handle: *const sys::rosidl_message_type_support_t =
            Self::symbol(type_name, &path, &lib, &symbol, |f| unsafe { f() })?;
        // SAFETY: an introspection type support's `data` is its MessageMembers (static data).
        let members = unsafe { (*handle).data }
            .cast::<sys::rosidl_typesupport_introspection_c__MessageMembers>();
        if members.is_null() {
            return Err(TransportError::TypeSupportLoad {
                type_name: type_name.to_string(),
                library: path,
                source: Box::new(libloading::Error::DlSymUnknown),
            });
        }
        Ok(Introspected {
            message,
            members,
            _library: lib,
        })
    }

    /// The C type support of service `type_name` (`pkg/srv/Type`, or an action's
    /// `pkg/action/Name_SendGoal` and the like) with its request and response structs.
    pub fn service(&self, type_name: &str) -> Result<ServiceType> {
        let t = TypeName::parse(type_name, &["srv", "action"])?;
        let (path, lib) = self.library(type_name, t.package, TYPESUPPORT_C)?;
        let symbol = format!(
            "{TYPESUPPORT_C}__get_service_type_support_handle__{}__{}__{}",
            t.package, t.kind, t.name
        );
        // SAFETY: the generated function has no preconditions.
        let handle = Self::symbol(type_name, &path, &lib, &symbol, |f| unsafe { f() })?;
        let part = |suffix: &str| {
            let name = format!("{}_{suffix}", t.name);
            self.introspected(
                type_name,
                &TypeName {
                    package: t.package,
                    kind: t.kind,
                    name: &name,
                },
            )
        };
        Ok(ServiceType {
            handle,
            request: part("Request")?,
            response: part("Response")?,
            _library: lib,
        })
    }
}

/// A C message struct allocated and initialised through its introspection, finalised and freed
/// on drop.
pub(crate) struct CMessage {
    ptr: *mut c_void,
    layout: std::alloc::Layout,
    introspected: Introspected,
}

// SAFETY: the struct is owned exclusively; rosidl's init/fini use the default allocator
// (malloc/free), usable from any thread.
unsafe impl Send for CMessage {}

impl CMessage {
    /// A zero-filled, initialised struct of the introspected type.
    pub fn new(introspected: &Introspected) -> Result<Self> {
        // SAFETY: `members` is the static MessageMembers of a loaded library.
        let members = unsafe { &*introspected.members };
        let layout = std::alloc::Layout::from_size_align(members.size_of_.max(1), 16)
            .map_err(|e| TransportError::InvalidPayload(format!("C message layout: {e}")))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<c_void>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        if let Some(init) = members.init_function {
            // SAFETY: `ptr` is `size_of_` zeroed bytes aligned for any C struct; init_function
            // initialises every member (sequences empty, strings empty, defaults set).
            unsafe {
                init(
                    ptr,
                    sys::rosidl_runtime_c__message_initialization_ROSIDL_RUNTIME_C_MSG_INIT_ALL,
                )
            };
        }
        Ok(Self {
            ptr,
            layout,
            introspected: introspected.clone(),
        })
    }

    /// The struct, for rcl and rmw.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.ptr
    }

    /// The struct, for reading.
    pub fn as_ptr(&self) -> *const c_void {
        self.ptr
    }
}

impl Drop for CMessage {
    fn drop(&mut self) {
        // SAFETY: `members` is static data of a library `introspected` keeps loaded; the struct
        // was initialised by init_function, so fini_function frees what it (or rmw) allocated;
        // then the memory goes back with the layout it was allocated with.
        unsafe {
            let members = &*self.introspected.members;
            if let Some(fini) = members.fini_function {
                fini(self.ptr);
            }
            std::alloc::dealloc(self.ptr.cast(), self.layout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_split_into_package_kind_and_name() {
        let t = TypeName::parse("std_msgs/msg/String", &["msg"]).unwrap();
        assert_eq!((t.package, t.kind, t.name), ("std_msgs", "msg", "String"));
        assert!(TypeName::parse("std_msgs/srv/String", &["msg"]).is_err());
        assert!(TypeName::parse("std_msgs/String", &["msg"]).is_err());
        assert!(TypeName::parse("std_msgs/msg/Str;ing", &["msg"]).is_err());
        assert!(TypeName::parse("a/msg/B/C", &["msg"]).is_err());
        // A service's event and an action's feedback are messages too.
        let t = TypeName::parse(
            "test_msgs/action/Fibonacci_FeedbackMessage",
            &["msg", "action"],
        )
        .unwrap();
        assert_eq!(t.kind, "action");
        assert!(TypeName::parse("test_msgs/action/Fibonacci", &["msg", "srv"]).is_err());
    }
}
