#![allow(non_upper_case_globals)] // the XTypes constants as bindgen names them
//! XTypes type information of remote writers, through Cyclone DDS's type library: the hash of
//! the complete type object a publication announces, and the type objects themselves, fetched
//! with Cyclone's type lookup client (`dds_get_typeobj`) and read into the shared model
//! ([`rosbag2_rs_dds_common::xtypes`]).

use std::ffi::CStr;
use std::time::Duration;

use cyclors::*;

use rosbag2_rs_dds_common::xtypes::{hash_hex, StructType, TypeHash, TypeIdentifier, XTypesError};

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

/// A type object as the type lookup service sends it (XCDR2 little-endian, without the
/// encapsulation header), deserialized as Cyclone DDS deserializes what it receives
/// (normalized, which checks every length against the bytes, then read) and read into the
/// shared model as [`struct_type`] reads what Cyclone's type library returns; `None` when
/// Cyclone refuses the bytes or the object is not a complete structure without base. The
/// decoding of a hostile peer's type object, for the fuzz targets (`fuzz/`).
#[doc(hidden)]
pub fn decode_type_object(cdr: &[u8]) -> Option<StructType> {
    let size = u32::try_from(cdr.len()).ok()?;
    // Normalized in place (byte order, lengths checked); an aligned copy.
    let mut words = vec![0u64; cdr.len().div_ceil(8)];
    // SAFETY: `words` holds at least `cdr.len()` bytes; the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(cdr.as_ptr(), words.as_mut_ptr().cast::<u8>(), cdr.len())
    };
    let data = words.as_mut_ptr().cast::<std::os::raw::c_char>();
    // SAFETY: the generated descriptor of `DDS_XTypes_TypeObject`, a static of the library.
    let ops = unsafe { DDS_XTypes_TypeObject_desc.m_ops };
    let mut offset = 0u32;
    // SAFETY: as Cyclone's `ddsi_typeinfo_deser`: `data` holds `size` bytes.
    let normalized = unsafe {
        dds_stream_normalize_xcdr2_data(data, &mut offset, size, cfg!(target_endian = "big"), ops)
    };
    if normalized.is_null() {
        return None;
    }
    let mut stream = dds_istream_t {
        m_buffer: data.cast(),
        m_size: size,
        m_index: 0,
        m_xcdr_version: DDSI_RTPS_CDR_ENC_VERSION_2,
    };
    // SAFETY: a zeroed type object is an empty sample; the stream was normalized against the
    // same operations, so the read stays within it; the sample is read, then freed once.
    unsafe {
        let mut object: TypeObject = std::mem::zeroed();
        let sample = (&mut object as *mut TypeObject).cast();
        dds_stream_read(&mut stream, sample, &dds_cdrstream_default_allocator, ops);
        let result = read_struct(&object);
        dds_stream_free_sample(sample.cast(), &dds_cdrstream_default_allocator, ops);
        result
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_dds_common::xtypes::describe;

    /// The type objects of a seed of the `xtypes` fuzz target (Python cyclonedds's, for
    /// `fuzz_msgs::msg::dds_::Everything_` and the types it nests): a byte, then each object's
    /// length and bytes.
    fn seed_objects() -> Vec<&'static [u8]> {
        let mut rest = &include_bytes!("../../../fuzz/seeds/xtypes/wire-Everything")[1..];
        let mut objects = Vec::new();
        while rest.len() >= 2 {
            let len = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
            objects.push(&rest[2..2 + len]);
            rest = &rest[2 + len..];
        }
        objects
    }

    /// Type objects from the wire decode as Cyclone decodes them, and describe the message:
    /// nested types resolve by their XTypes hash.
    #[test]
    fn type_objects_from_the_wire_describe_the_message() {
        let objects: Vec<StructType> = seed_objects()
            .into_iter()
            .map(|o| decode_type_object(o).expect("a type object decodes"))
            .collect();
        assert_eq!(objects[0].name, "fuzz_msgs::msg::dds_::Everything_");
        // The header's hash is named by the root, the time's by the header.
        let header_hash = match objects[0].members.iter().find(|(n, _)| n == "header") {
            Some((_, TypeIdentifier::Complete(h))) => *h,
            other => panic!("the header member: {other:?}"),
        };
        let mut resolve = |hash: &TypeHash| {
            let name = if *hash == header_hash {
                "Header_"
            } else {
                "Time_"
            };
            Ok(objects
                .iter()
                .find(|o| o.name.contains(name))
                .unwrap()
                .clone())
        };
        let description = describe("fuzz_msgs/msg/Everything", &objects[0], &mut resolve)
            .expect("the objects describe the message");
        let definition = description.definition(&|_| None, None).unwrap();
        assert!(definition
            .encoded_message_definition
            .starts_with("std_msgs/Header header\nbool b\n"));
        assert!(definition
            .encoded_message_definition
            .contains("string<=3[<=2] bstrs\n"));
    }

    /// Bytes Cyclone's normalizer refuses (cut short, or a length beyond the bytes) decode to
    /// nothing.
    #[test]
    fn truncated_and_overlong_type_objects_decode_to_nothing() {
        let object = seed_objects()[0];
        for len in [0, 3, 8, object.len() / 2, object.len() - 1] {
            assert_eq!(decode_type_object(&object[..len]), None, "{len} bytes");
        }
        let mut overlong = object.to_vec();
        overlong[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decode_type_object(&overlong), None);
    }
}
