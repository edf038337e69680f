//! The attachment rmw_zenoh puts on every sample, query and reply: the sender's sequence
//! number, its source timestamp and the GID of the publisher or client.
//!
//! Written in today's layout (rmw_zenoh #600/#601, zenoh-ext serialization of
//! `(i64, i64, [u8; 16])`): 8 bytes little-endian sequence number, 8 bytes little-endian
//! timestamp (ns since the epoch), the GID's length as a LEB128 varint (16) and its 16 bytes.
//! Read in that layout and in the one of Jazzy's rmw_zenoh up to 0.2.3, where each value
//! follows its name as a zenoh-serialized string (`"sequence_number"`, `"source_timestamp"`,
//! `"source_gid"`).

/// Bytes of a GID (`RMW_GID_STORAGE_SIZE`).
pub const GID_SIZE: usize = 16;

/// Bytes of an attachment in today's layout.
pub const ENCODED_SIZE: usize = 8 + 8 + 1 + GID_SIZE;

/// An attachment that is neither layout.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AttachmentError {
    /// It ended before the value named.
    #[error("rmw_zenoh attachment: truncated before {0}")]
    Truncated(&'static str),
    /// A Jazzy-layout attachment whose field names are not rmw_zenoh's.
    #[error("rmw_zenoh attachment: expected the key '{expected}', found '{found}'")]
    UnexpectedKey {
        /// The key rmw_zenoh writes there.
        expected: &'static str,
        /// What the attachment has.
        found: String,
    },
    /// A GID that is not 16 bytes.
    #[error("rmw_zenoh attachment: a GID of {0} bytes (16 expected)")]
    GidSize(u64),
    /// Bytes left over after the GID.
    #[error("rmw_zenoh attachment: {0} unexpected bytes after the GID")]
    Trailing(usize),
}

/// Sequence number, source timestamp and GID of one sample, query or reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment {
    /// The sender's sequence number, from 1 per publisher or client.
    pub sequence_number: i64,
    /// When it was sent, ns since the epoch.
    pub source_timestamp: i64,
    /// The publisher's or client's GID.
    pub source_gid: [u8; GID_SIZE],
}

impl Attachment {
    /// Today's layout (33 bytes).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(ENCODED_SIZE);
        out.extend_from_slice(&self.sequence_number.to_le_bytes());
        out.extend_from_slice(&self.source_timestamp.to_le_bytes());
        out.push(GID_SIZE as u8);
        out.extend_from_slice(&self.source_gid);
        out
    }

    /// Jazzy's layout up to rmw_zenoh 0.2.3 (for tests and old peers).
    pub fn encode_jazzy(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(80);
        let mut key = |name: &str| {
            out.push(name.len() as u8);
            out.extend_from_slice(name.as_bytes());
        };
        key("sequence_number");
        out.extend_from_slice(&self.sequence_number.to_le_bytes());
        out.push(16);
        out.extend_from_slice(b"source_timestamp");
        out.extend_from_slice(&self.source_timestamp.to_le_bytes());
        out.push(10);
        out.extend_from_slice(b"source_gid");
        out.push(GID_SIZE as u8);
        out.extend_from_slice(&self.source_gid);
        out
    }

    /// Reads either layout.
    pub fn decode(bytes: &[u8]) -> Result<Self, AttachmentError> {
        let mut reader = Reader(bytes);
        // Jazzy's layout starts with the length of "sequence_number" (15) and its text; today's
        // with a sequence number. A sequence number whose first byte is 15 and whose next
        // bytes spell "sequence_number" would be the only ambiguity.
        if bytes.len() > 16 && bytes[0] == 15 && &bytes[1..16] == b"sequence_number" {
            return Self::decode_jazzy(reader);
        }
        let sequence_number = reader.i64("sequence_number")?;
        let source_timestamp = reader.i64("source_timestamp")?;
        let source_gid = reader.gid()?;
        reader.finish()?;
        Ok(Self {
            sequence_number,
            source_timestamp,
            source_gid,
        })
    }

    fn decode_jazzy(mut reader: Reader<'_>) -> Result<Self, AttachmentError> {
        reader.key("sequence_number")?;
        let sequence_number = reader.i64("sequence_number")?;
        reader.key("source_timestamp")?;
        let source_timestamp = reader.i64("source_timestamp")?;
        reader.key("source_gid")?;
        let source_gid = reader.gid()?;
        reader.finish()?;
        Ok(Self {
            sequence_number,
            source_timestamp,
            source_gid,
        })
    }
}

/// A cursor over zenoh-serialized bytes.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&[u8], AttachmentError> {
        if self.0.len() < n {
            return Err(AttachmentError::Truncated(what));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn i64(&mut self, what: &'static str) -> Result<i64, AttachmentError> {
        let bytes = self.take(8, what)?;
        Ok(i64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// A LEB128 length, as zenoh serializes sequence lengths.
    fn varint(&mut self, what: &'static str) -> Result<u64, AttachmentError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1, what)?[0];
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(AttachmentError::Truncated(what))
    }

    fn key(&mut self, expected: &'static str) -> Result<(), AttachmentError> {
        let len = self.varint(expected)?;
        let len = usize::try_from(len).map_err(|_| AttachmentError::Truncated(expected))?;
        let found = self.take(len, expected)?;
        if found != expected.as_bytes() {
            return Err(AttachmentError::UnexpectedKey {
                expected,
                found: String::from_utf8_lossy(found).into_owned(),
            });
        }
        Ok(())
    }

    fn gid(&mut self) -> Result<[u8; GID_SIZE], AttachmentError> {
        let len = self.varint("source_gid")?;
        if len != GID_SIZE as u64 {
            return Err(AttachmentError::GidSize(len));
        }
        Ok(self
            .take(GID_SIZE, "source_gid")?
            .try_into()
            .expect("16 bytes"))
    }

    fn finish(&self) -> Result<(), AttachmentError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(AttachmentError::Trailing(self.0.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GID: [u8; 16] = [
        0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae,
        0xaf,
    ];

    fn sample() -> Attachment {
        Attachment {
            sequence_number: 1,
            source_timestamp: 0x0102_0304_0506_0708,
            source_gid: GID,
        }
    }

    #[test]
    fn todays_layout_byte_for_byte() {
        // rmw_zenoh docs/design.md: 8 bytes LE sequence number, 8 bytes LE timestamp, 1 byte
        // GID length (16), 16 bytes GID.
        let mut golden = vec![1, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1, 16];
        golden.extend_from_slice(&GID);
        assert_eq!(sample().encode(), golden);
        assert_eq!(Attachment::decode(&golden).unwrap(), sample());
    }

    #[test]
    fn jazzy_layout_byte_for_byte() {
        // rmw_zenoh 0.2.x attachment_helpers.cpp: ze_serializer_serialize_str(key), int64,
        // ..., ze_serializer_serialize_buf(gid): strings and buffers carry a LEB128 length.
        let mut golden = vec![15];
        golden.extend_from_slice(b"sequence_number");
        golden.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 16]);
        golden.extend_from_slice(b"source_timestamp");
        golden.extend_from_slice(&[8, 7, 6, 5, 4, 3, 2, 1, 10]);
        golden.extend_from_slice(b"source_gid");
        golden.push(16);
        golden.extend_from_slice(&GID);
        assert_eq!(sample().encode_jazzy(), golden);
        assert_eq!(Attachment::decode(&golden).unwrap(), sample());
    }

    #[test]
    fn bad_attachments_are_typed_errors() {
        let good = sample().encode();
        assert_eq!(
            Attachment::decode(&good[..10]),
            Err(AttachmentError::Truncated("source_timestamp"))
        );
        let mut long = good.clone();
        long.push(0);
        assert_eq!(Attachment::decode(&long), Err(AttachmentError::Trailing(1)));
        let mut short_gid = good[..16].to_vec();
        short_gid.push(4);
        short_gid.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(
            Attachment::decode(&short_gid),
            Err(AttachmentError::GidSize(4))
        );
        let mut jazzy = sample().encode_jazzy();
        jazzy[17 + 8 + 1] = b'X';
        assert!(matches!(
            Attachment::decode(&jazzy),
            Err(AttachmentError::UnexpectedKey { .. })
        ));
        assert!(Attachment::decode(&[]).is_err());
    }
}
