//! Thin ownership wrappers over the Cyclone DDS C API (`cyclors`): entities deleted on drop,
//! QoS objects, return codes as errors, GUIDs and the `key=value;` USER_DATA that ROS 2 puts on
//! endpoints. Everything `unsafe` about handles lives here.

use std::ffi::{CStr, CString};

use cyclors::*;

use rosbag2_rs_middleware::error::{Result, TransportError};

/// A DDS GUID: 12-byte participant prefix and 4-byte entity id. ROS 2 uses it as the GID.
pub type Guid = [u8; 16];

/// A Cyclone return code (negative) as an error, with what was being done.
pub fn check(ret: dds_return_t, what: &str) -> Result<dds_return_t> {
    if ret >= 0 {
        return Ok(ret);
    }
    // SAFETY: dds_strretcode returns a static string for every code.
    let reason = unsafe { CStr::from_ptr(dds_strretcode(ret)) }.to_string_lossy();
    Err(TransportError::Middleware(format!("{what}: {reason}")))
}

/// A C string for the API; names with NUL bytes are refused.
pub fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| TransportError::invalid_name(s, "contains a NUL byte"))
}

/// An entity (participant, topic, reader, writer, condition, waitset) deleted on drop, together
/// with its children.
#[derive(Debug)]
pub struct Entity(dds_entity_t);

impl Entity {
    /// Takes ownership of a handle returned by a `dds_create_*` call.
    pub fn new(handle: dds_entity_t, what: &str) -> Result<Self> {
        check(handle, what).map(Self)
    }

    /// The raw handle.
    pub fn handle(&self) -> dds_entity_t {
        self.0
    }

    /// The entity's GUID.
    pub fn guid(&self) -> Guid {
        let mut guid = dds_guid_t { v: [0; 16] };
        // SAFETY: `guid` is a valid out pointer; on error it stays zero.
        unsafe { dds_get_guid(self.0, &mut guid) };
        guid.v
    }

    /// The entity's local instance handle (how matched endpoints refer to it).
    pub fn instance_handle(&self) -> dds_instance_handle_t {
        let mut handle = 0;
        // SAFETY: `handle` is a valid out pointer; on error it stays zero.
        unsafe { dds_get_instance_handle(self.0, &mut handle) };
        handle
    }
}

impl Drop for Entity {
    fn drop(&mut self) {
        // SAFETY: deleting a handle that is already gone (its parent was deleted first) only
        // returns an error code.
        unsafe { dds_delete(self.0) };
    }
}

/// A QoS object, freed on drop.
pub struct Qos(*mut dds_qos_t);

// SAFETY: a dds_qos_t is plain data owned by this wrapper.
unsafe impl Send for Qos {}

impl Qos {
    /// An empty QoS (every policy at its default).
    pub fn new() -> Self {
        // SAFETY: dds_create_qos allocates a fresh object.
        Self(unsafe { dds_create_qos() })
    }

    /// The pointer for the C API.
    pub fn as_ptr(&self) -> *mut dds_qos_t {
        self.0
    }

    /// Sets USER_DATA.
    pub fn set_user_data(&mut self, data: &str) {
        // SAFETY: the value pointer and size describe `data`, which Cyclone copies.
        unsafe { dds_qset_userdata(self.0, data.as_ptr().cast(), data.len()) };
    }
}

impl Default for Qos {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Qos {
    fn drop(&mut self) {
        // SAFETY: the object was created by dds_create_qos and is freed once.
        unsafe { dds_delete_qos(self.0) };
    }
}

/// The value of `key` in USER_DATA of the form `k1=v1;k2=v2;`, as ROS 2 writes it.
///
/// # Safety
/// `qos` must be null or a valid QoS object.
pub unsafe fn user_data_value(qos: *const dds_qos_t, key: &str) -> Option<String> {
    if qos.is_null() {
        return None;
    }
    let mut value: *mut std::os::raw::c_void = std::ptr::null_mut();
    let mut size = 0usize;
    if !dds_qget_userdata(qos, &mut value, &mut size) || value.is_null() {
        return None;
    }
    let bytes = std::slice::from_raw_parts(value as *const u8, size).to_vec();
    dds_free(value);
    parse_key_value(&String::from_utf8_lossy(&bytes), key)
}

/// The value of `key` in `k1=v1;k2=v2;`.
pub fn parse_key_value(text: &str, key: &str) -> Option<String> {
    text.split(';')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn user_data_pairs() {
        let text = "clientid=1.f.2;typehash=RIHS01_ab;";
        assert_eq!(
            super::parse_key_value(text, "clientid").as_deref(),
            Some("1.f.2")
        );
        assert_eq!(
            super::parse_key_value(text, "typehash").as_deref(),
            Some("RIHS01_ab")
        );
        assert_eq!(super::parse_key_value(text, "serviceid"), None);
        assert_eq!(super::parse_key_value("", "x"), None);
    }
}
