//! CDR encoding with the 4-byte encapsulation header of a DDS serialized payload.
//!
//! A ROS 2 message on the wire is a 4-byte header (2-byte encapsulation
//! identifier, 2 option bytes) followed by the plain-CDR body. Alignment in the
//! body is relative to its own start, right after the header.

use byteorder::{BigEndian, ByteOrder, LittleEndian};
use serde::{de::DeserializeOwned, Serialize};

use crate::InterfaceError;

/// Encapsulation identifier of plain CDR, big-endian (`CDR_BE`).
pub const ENCAPSULATION_CDR_BE: [u8; 2] = [0x00, 0x00];
/// Encapsulation identifier of plain CDR, little-endian (`CDR_LE`), the one
/// [`to_cdr`] writes.
pub const ENCAPSULATION_CDR_LE: [u8; 2] = [0x00, 0x01];
/// Length of the encapsulation header (identifier plus options) in bytes.
pub const ENCAPSULATION_HEADER_LEN: usize = 4;

/// Encodes `value` as little-endian CDR, header `00 01 00 00` first.
///
/// # Panics
///
/// Only if the `Serialize` implementation of `T` itself fails or uses a shape
/// CDR cannot express (e.g. a map or sequence of unknown length). The types of
/// this crate never do; use [`try_to_cdr`] for other types.
pub fn to_cdr<T: Serialize>(value: &T) -> Vec<u8> {
    match try_to_cdr(value) {
        Ok(bytes) => bytes,
        Err(err) => panic!("value cannot be encoded as CDR: {err}"),
    }
}

/// Encodes `value` as little-endian CDR, header `00 01 00 00` first, and
/// returns an error where [`to_cdr`] would panic.
pub fn try_to_cdr<T: Serialize>(value: &T) -> Result<Vec<u8>, InterfaceError> {
    let mut bytes = Vec::with_capacity(ENCAPSULATION_HEADER_LEN + 2 * std::mem::size_of_val(value));
    bytes.extend_from_slice(&ENCAPSULATION_CDR_LE);
    bytes.extend_from_slice(&[0, 0]);
    // The serializer counts alignment from its own start, i.e. right after the header.
    cdr_encoding::to_writer::<T, LittleEndian, _>(&mut bytes, value)
        .map_err(|err| InterfaceError::Encode(err.to_string()))?;
    Ok(bytes)
}

/// Decodes a CDR payload with its encapsulation header, little- (`00 01`) or
/// big-endian (`00 00`).
///
/// The two option bytes of the header are ignored, and so are bytes left over
/// after the value (DDS pads payloads to a multiple of 4 bytes). Short or
/// malformed input gives an error, never a panic.
pub fn from_cdr<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, InterfaceError> {
    if bytes.len() < ENCAPSULATION_HEADER_LEN {
        return Err(InterfaceError::TooShort { len: bytes.len() });
    }
    let (header, body) = bytes.split_at(ENCAPSULATION_HEADER_LEN);
    match [header[0], header[1]] {
        ENCAPSULATION_CDR_LE => decode_body::<T, LittleEndian>(body),
        ENCAPSULATION_CDR_BE => decode_body::<T, BigEndian>(body),
        other => Err(InterfaceError::UnsupportedEncapsulation(other)),
    }
}

fn decode_body<T: DeserializeOwned, BO: ByteOrder>(body: &[u8]) -> Result<T, InterfaceError> {
    cdr_encoding::from_bytes::<T, BO>(body)
        .map(|(value, _consumed)| value)
        .map_err(|err| InterfaceError::Decode(err.to_string()))
}
