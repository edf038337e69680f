#![allow(non_upper_case_globals)] // the XTypes constants as bindgen names them
//! XTypes type information of remote writers, through Cyclone DDS's type library: the hash of
//! the complete type object a publication announces, and the type objects themselves, fetched
//! with Cyclone's type lookup client (`dds_get_typeobj`) and read into the shared model
//! ([`crate::middleware::dds_common::xtypes`]).

use std::ffi::CStr;
use std::time::Duration;

use cyclors::*;

use crate::middleware::dds_common::xtypes::{
    hash_hex, StructType, TypeHash, TypeIdentifier, XTypesError,
};

/// `struct ddsi_typeinfo`, `ddsi_typeid` and `ddsi_typeobj` are, in Cyclone, single-member
/// wrappers of these generated XTypes structures (opaque in the public headers).
type TypeInformation = DDS_XTypes_TypeInformation;
type TypeObject = DDS_XTypes_TypeObject;

/// The hash of the complete type object a built-in endpoint sample announces, if any.
///
/// # Safety
/// `ep` must point to a valid `dds_builtintopic_endpoint_t`.
pub unsafe fn complete_type_hash(ep: *const dds_builtintopic_endpoint_t) -> Option<TypeHash> {
    let mut info: *const dds_typeinfo_t = std::ptr::null();
    if dds_builtintopic_get_endpoint_type_info(ep.cast_mut(), &mut info) != 0 || info.is_null() {
        return None;
    }
    let id = &(*info.cast::<TypeInformation>())
        .complete
        .typeid_with_size
        .type_id;
    if u32::from(id._d) == DDS_XTypes_EK_COMPLETE {
        Some(id._u.equivalence_hash)
    } else {
        None
    }
}

/// The complete structure type object of `hash`, asked of the writers that announced it
/// (waiting up to `timeout`).
pub fn struct_type(
    participant: dds_entity_t,
    hash: &TypeHash,
    timeout: Duration,
) -> Result<StructType, XTypesError> {
    let unresolved = |reason: String| XTypesError::Unresolved {
        hash: hash_hex(hash),
        reason,
    };
    // SAFETY: a zeroed identifier is TK_NONE; it becomes EK_COMPLETE with its hash.
    let mut id: DDS_XTypes_TypeIdentifier = unsafe { std::mem::zeroed() };
    id._d = DDS_XTypes_EK_COMPLETE as u8;
    id._u.equivalence_hash = *hash;
    let mut object: *mut dds_typeobj_t = std::ptr::null_mut();
    // SAFETY: `id` has the layout of `ddsi_typeid`; `object` receives an owned type object.
    let rc = unsafe {
        dds_get_typeobj(
            participant,
            (&id as *const DDS_XTypes_TypeIdentifier).cast(),
            timeout.as_nanos() as i64,
            &mut object,
        )
    };
    if rc != 0 || object.is_null() {
        return Err(unresolved(format!(
            "the type lookup gave none (return code {rc})"
        )));
    }
    // SAFETY: a type object Cyclone returned, read then freed once.
    let result = unsafe { read_struct(&*object.cast::<TypeObject>()) }
        .ok_or_else(|| unresolved("not a complete structure type object without base".into()));
    // SAFETY: as above.
    unsafe { dds_free_typeobj(object) };
    result
}

/// A complete structure type object without base type (what ROS 2 messages are) in the
/// shared model; `None` for any other type object.
///
/// # Safety
/// `object` must be a valid type object (its sequences and identifiers point to valid data).
unsafe fn read_struct(object: &TypeObject) -> Option<StructType> {
    let complete = &object._u.complete;
    if u32::from(object._d) != DDS_XTypes_EK_COMPLETE
        || u32::from(complete._d) != DDS_XTypes_TK_STRUCTURE
    {
        return None;
    }
    let st = &complete._u.struct_type;
    if u32::from(st.header.base_type._d) != DDS_XTypes_TK_NONE {
        return None;
    }
    let members = slice(st.member_seq._buffer, st.member_seq._length)
        .iter()
        .map(|m| (text(&m.detail.name), identifier(&m.common.member_type_id)))
        .collect();
    Some(StructType {
        name: text(&st.header.detail.type_name),
        members,
    })
}

/// A member's type identifier in the shared model.
///
/// # Safety
/// `id` must be a valid identifier (element identifiers point to valid identifiers).
unsafe fn identifier(id: &DDS_XTypes_TypeIdentifier) -> TypeIdentifier {
    let kind = u32::from(id._d);
    let element = |e: *mut DDS_XTypes_TypeIdentifier| match e.as_ref() {
        Some(e) => Box::new(identifier(e)),
        None => Box::new(TypeIdentifier::Other(0)),
    };
    match kind {
        DDS_XTypes_TK_BOOLEAN..=DDS_XTypes_TK_CHAR16 => TypeIdentifier::Primitive(id._d),
        DDS_XTypes_TI_STRING8_SMALL | DDS_XTypes_TI_STRING16_SMALL => TypeIdentifier::String {
            wide: kind == DDS_XTypes_TI_STRING16_SMALL,
            bound: u32::from(id._u.string_sdefn.bound),
        },
        DDS_XTypes_TI_STRING8_LARGE | DDS_XTypes_TI_STRING16_LARGE => TypeIdentifier::String {
            wide: kind == DDS_XTypes_TI_STRING16_LARGE,
            bound: id._u.string_ldefn.bound,
        },
        DDS_XTypes_TI_PLAIN_SEQUENCE_SMALL => TypeIdentifier::Sequence {
            bound: u32::from(id._u.seq_sdefn.bound),
            element: element(id._u.seq_sdefn.element_identifier),
        },
        DDS_XTypes_TI_PLAIN_SEQUENCE_LARGE => TypeIdentifier::Sequence {
            bound: id._u.seq_ldefn.bound,
            element: element(id._u.seq_ldefn.element_identifier),
        },
        DDS_XTypes_TI_PLAIN_ARRAY_SMALL => {
            let a = &id._u.array_sdefn;
            TypeIdentifier::Array {
                bounds: slice(a.array_bound_seq._buffer, a.array_bound_seq._length)
                    .iter()
                    .map(|&b| u32::from(b))
                    .collect(),
                element: element(a.element_identifier),
            }
        }
        DDS_XTypes_TI_PLAIN_ARRAY_LARGE => {
            let a = &id._u.array_ldefn;
            TypeIdentifier::Array {
                bounds: slice(a.array_bound_seq._buffer, a.array_bound_seq._length).to_vec(),
                element: element(a.element_identifier),
            }
        }
        DDS_XTypes_EK_COMPLETE => TypeIdentifier::Complete(id._u.equivalence_hash),
        _ => TypeIdentifier::Other(id._d),
    }
}

/// A C sequence's elements (empty for a null buffer).
///
/// # Safety
/// A non-null `buffer` must hold `length` valid elements.
unsafe fn slice<'a, T>(buffer: *const T, length: u32) -> &'a [T] {
    if buffer.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(buffer, length as usize)
    }
}

/// A NUL-terminated name in a fixed-size C array.
fn text(chars: &[std::os::raw::c_char]) -> String {
    // SAFETY: c_char and u8 have the same size.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(chars.as_ptr().cast(), chars.len()) };
    CStr::from_bytes_until_nul(bytes)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}
