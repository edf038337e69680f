//! What every rcl call of the backend needs: return codes as typed errors with rcl's error
//! string, C strings, the default allocator, byte arrays owned by rcutils, and the rmw functions
//! that live in whichever rmw library rcl loaded (looked up in the process, not linked).

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::OnceLock;

use super::sys;
use rosbag2_rs_middleware::error::{RclError, Result, TransportError};

/// rcl's and rmw's success code.
pub(crate) const RET_OK: i32 = sys::RCL_RET_OK;
/// A wait that ended without anything ready.
pub(crate) const RET_TIMEOUT: i32 = sys::RCL_RET_TIMEOUT;
/// A take that found nothing.
pub(crate) const RET_SUBSCRIPTION_TAKE_FAILED: i32 = sys::RCL_RET_SUBSCRIPTION_TAKE_FAILED;
/// A take of a request that found nothing.
pub(crate) const RET_SERVICE_TAKE_FAILED: i32 = sys::RCL_RET_SERVICE_TAKE_FAILED;
/// A take of a response that found nothing.
pub(crate) const RET_CLIENT_TAKE_FAILED: i32 = sys::RCL_RET_CLIENT_TAKE_FAILED;
/// An rmw that does not implement the call.
pub(crate) const RET_UNSUPPORTED: i32 = sys::RCL_RET_UNSUPPORTED;

/// rcl's error string, reset afterwards (rcl keeps one per thread).
fn take_error_string() -> String {
    // SAFETY: rcutils_get_error_string returns a struct by value holding a NUL-terminated
    // string (an empty one when no error is set); resetting the thread's error state is always
    // allowed.
    unsafe {
        let e = sys::rcutils_get_error_string();
        let text = CStr::from_ptr(e.str_.as_ptr())
            .to_string_lossy()
            .into_owned();
        sys::rcutils_reset_error();
        text
    }
}

/// Turns an rcl or rmw return code into a result, with rcl's error string.
pub(crate) fn check(ret: i32, what: impl FnOnce() -> String) -> Result<()> {
    if ret == RET_OK {
        return Ok(());
    }
    Err(error(ret, what()))
}

/// The error for return code `code` while doing `what`.
pub(crate) fn error(code: i32, what: String) -> TransportError {
    let mut message = take_error_string();
    if message.is_empty() {
        message = "no error string set".into();
    }
    TransportError::Rcl {
        what,
        source: RclError { code, message },
    }
}

/// A name as a C string (names never hold NUL: they were validated).
pub(crate) fn cstring(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| TransportError::invalid_name(name, "holds a NUL byte"))
}

/// A C string rcl owns, copied.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string alive for the call.
pub(crate) unsafe fn string(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// rcutils' default allocator (malloc and free).
pub(crate) fn allocator() -> sys::rcutils_allocator_t {
    // SAFETY: returns a struct of function pointers by value; no preconditions.
    unsafe { sys::rcutils_get_default_allocator() }
}

/// A byte array allocated by rcutils, as rmw fills it (serialized messages). Freed on drop.
pub(crate) struct SerializedBuffer(sys::rcutils_uint8_array_t);

// SAFETY: the array owns its buffer exclusively and the default allocator (malloc/free) may be
// used from any thread.
unsafe impl Send for SerializedBuffer {}
// SAFETY: shared references only read the bytes.
unsafe impl Sync for SerializedBuffer {}

impl SerializedBuffer {
    /// An empty array with `capacity` bytes reserved (rmw grows it as it needs).
    pub fn new(capacity: usize) -> Result<Self> {
        // SAFETY: a zero-initialised array is what rcutils_uint8_array_init expects; the
        // allocator is valid for the array's life.
        unsafe {
            let mut array = sys::rcutils_get_zero_initialized_uint8_array();
            let alloc = allocator();
            check(
                sys::rcutils_uint8_array_init(&mut array, capacity, &alloc),
                || format!("cannot allocate a {capacity}-byte serialized message"),
            )?;
            Ok(Self(array))
        }
    }

    /// The array, for rmw to fill.
    pub fn as_mut_ptr(&mut self) -> *mut sys::rcutils_uint8_array_t {
        &mut self.0
    }
}

impl AsRef<[u8]> for SerializedBuffer {
    fn as_ref(&self) -> &[u8] {
        if self.0.buffer.is_null() || self.0.buffer_length == 0 {
            return &[];
        }
        // SAFETY: rmw wrote `buffer_length` bytes (at most the capacity) into `buffer`, which
        // lives as long as self.
        unsafe { std::slice::from_raw_parts(self.0.buffer, self.0.buffer_length) }
    }
}

impl Drop for SerializedBuffer {
    fn drop(&mut self) {
        // SAFETY: initialised by rcutils_uint8_array_init with its allocator, freed once.
        let ret = unsafe { sys::rcutils_uint8_array_fini(&mut self.0) };
        if ret != RET_OK {
            log::debug!(
                "rcl: {}",
                error(ret, "cannot free a serialized message".into())
            );
        }
    }
}

/// Borrowed bytes seen as an rmw serialized message (for rmw to read, never to grow).
pub(crate) fn borrowed_serialized(data: &[u8]) -> sys::rcutils_uint8_array_t {
    sys::rcutils_uint8_array_t {
        buffer: data.as_ptr().cast_mut(),
        buffer_length: data.len(),
        buffer_capacity: data.len(),
        allocator: allocator(),
    }
}

type SerializeFn = unsafe extern "C" fn(
    *const c_void,
    *const sys::rosidl_message_type_support_t,
    *mut sys::rcutils_uint8_array_t,
) -> i32;
type DeserializeFn = unsafe extern "C" fn(
    *const sys::rcutils_uint8_array_t,
    *const sys::rosidl_message_type_support_t,
    *mut c_void,
) -> i32;
type IdentifierFn = unsafe extern "C" fn() -> *const c_char;

/// The rmw functions rcl does not wrap, from the rmw library rcl loaded.
pub(crate) struct Rmw {
    /// `rmw_serialize`: a C message to CDR.
    pub serialize: SerializeFn,
    /// `rmw_deserialize`: CDR to a C message.
    pub deserialize: DeserializeFn,
    /// The rmw's name (`rmw_fastrtps_cpp`, ...).
    pub identifier: String,
}

/// Looks the rmw functions up in the process (once found, kept): rcl's rmw (through
/// `rmw_implementation`, or linked directly as in PyPI's wheels) is loaded with rcl and exports
/// them.
pub(crate) fn rmw() -> Result<&'static Rmw> {
    static RMW: OnceLock<Rmw> = OnceLock::new();
    if let Some(rmw) = RMW.get() {
        return Ok(rmw);
    }
    let this = libloading::os::unix::Library::this();
    let missing = |symbol: &'static str| {
        move |e: libloading::Error| TransportError::RmwSymbol {
            symbol,
            source: Box::new(e),
        }
    };
    // SAFETY: the symbols have these C signatures in every rmw (rmw/rmw.h), and the rmw library
    // stays loaded for the process's life (rcl links it).
    let rmw = unsafe {
        let serialize = *this
            .get::<SerializeFn>(b"rmw_serialize\0")
            .map_err(missing("rmw_serialize"))?;
        let deserialize = *this
            .get::<DeserializeFn>(b"rmw_deserialize\0")
            .map_err(missing("rmw_deserialize"))?;
        let identifier = *this
            .get::<IdentifierFn>(b"rmw_get_implementation_identifier\0")
            .map_err(missing("rmw_get_implementation_identifier"))?;
        Rmw {
            serialize,
            deserialize,
            identifier: string(identifier()),
        }
    };
    Ok(RMW.get_or_init(|| rmw))
}
