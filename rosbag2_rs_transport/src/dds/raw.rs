//! Serialized samples for RustDDS: bytes pass through without decode/encode. A sample keeps its
//! 4-byte CDR encapsulation header; RustDDS carries the representation id separately on the
//! wire, so the header is split off when sending and rebuilt when receiving.

use bytes::{BufMut, Bytes, BytesMut};
use rustdds::no_key::{Decode, DefaultDecoder, DeserializerAdapter, SerializerAdapter};
use rustdds::RepresentationIdentifier;

/// CDR bytes with their encapsulation header.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCdr(pub Bytes);

/// The adapter that moves [`RawCdr`] in and out of RustDDS.
pub struct RawAdapter;

/// Error of the raw adapter (never produced for well-formed input).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RawError(pub String);

impl SerializerAdapter<RawCdr> for RawAdapter {
    type Error = RawError;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &RawCdr) -> Result<Bytes, RawError> {
        match value.0.get(..2) {
            Some([0, 1]) => Ok(value.0.slice(4..)),
            _ => Err(RawError(
                "only little-endian CDR payloads (header 00 01) can be published".into(),
            )),
        }
    }
}

impl DeserializerAdapter<RawCdr> for RawAdapter {
    type Error = RawError;
    type Decoded = RawCdr;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &[
            RepresentationIdentifier::CDR_LE,
            RepresentationIdentifier::CDR_BE,
        ]
    }

    fn transform_decoded(decoded: RawCdr) -> RawCdr {
        decoded
    }
}

/// Rebuilds the encapsulation header in front of the received bytes.
#[derive(Clone)]
pub struct RawDecoder;

impl Decode<'_, RawCdr> for RawDecoder {
    type Error = RawError;

    fn decode_bytes(
        self,
        input: &[u8],
        encoding: RepresentationIdentifier,
    ) -> Result<RawCdr, RawError> {
        let mut out = BytesMut::with_capacity(input.len() + 4);
        out.put_slice(&encoding.to_bytes());
        out.put_slice(&[0, 0]);
        out.put_slice(input);
        Ok(RawCdr(out.freeze()))
    }
}

impl DefaultDecoder<RawCdr> for RawAdapter {
    type Decoder = RawDecoder;
    const DECODER: RawDecoder = RawDecoder;
}
