//! The record layer of the ROS 1 bag format v2.0: a record is a length-prefixed header of
//! `name=value` fields followed by length-prefixed data, all little endian.

use std::collections::HashMap;

use super::error::Ros1FormatError;

/// Result of parsing records.
type Result<T> = std::result::Result<T, Ros1FormatError>;

/// `#ROSBAG V2.0\n`, the first 13 bytes of every bag.
pub const MAGIC: &[u8] = b"#ROSBAG V2.0\n";
/// Message data.
pub const OP_MESSAGE: u8 = 0x02;
/// The bag header (first record, padded to 4096 bytes).
pub const OP_BAG_HEADER: u8 = 0x03;
/// The index of one connection's messages in the preceding chunk.
pub const OP_INDEX: u8 = 0x04;
/// A chunk of (possibly compressed) connection and message records.
pub const OP_CHUNK: u8 = 0x05;
/// Where a chunk is and what it holds.
pub const OP_CHUNK_INFO: u8 = 0x06;
/// A connection: topic, type, md5sum, definition.
pub const OP_CONNECTION: u8 = 0x07;
/// Size the bag header record's header and data are padded to.
pub const BAG_HEADER_LEN: usize = 4096;

/// A record's header fields by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields(pub HashMap<String, Vec<u8>>);

impl Fields {
    /// Parses a header block (the bytes after its length prefix).
    pub fn parse(mut bytes: &[u8]) -> Result<Self> {
        let mut map = HashMap::new();
        while !bytes.is_empty() {
            let len = read_u32(bytes, 0)? as usize;
            let field = bytes
                .get(4..4 + len)
                .ok_or(Ros1FormatError::FieldOverrun(len))?;
            let eq = field
                .iter()
                .position(|&b| b == b'=')
                .ok_or(Ros1FormatError::FieldWithoutEquals)?;
            let name = String::from_utf8_lossy(&field[..eq]).into_owned();
            map.insert(name, field[eq + 1..].to_vec());
            bytes = &bytes[4 + len..];
        }
        Ok(Self(map))
    }

    /// The raw value of `name`.
    pub fn get(&self, name: &str) -> Result<&[u8]> {
        self.0
            .get(name)
            .map(Vec::as_slice)
            .ok_or_else(|| Ros1FormatError::MissingField(name.to_string()))
    }

    /// `name` as text (lossy UTF-8).
    pub fn string(&self, name: &str) -> Result<String> {
        Ok(String::from_utf8_lossy(self.get(name)?).into_owned())
    }

    /// `name` as text, if present.
    pub fn opt_string(&self, name: &str) -> Option<String> {
        self.0
            .get(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// The `op` code.
    pub fn op(&self) -> Result<u8> {
        fixed::<1>(self.get("op")?, "op").map(|[op]| op)
    }

    /// A little-endian `u32` field.
    pub fn u32(&self, name: &str) -> Result<u32> {
        fixed::<4>(self.get(name)?, name).map(u32::from_le_bytes)
    }

    /// A little-endian `u64` field.
    pub fn u64(&self, name: &str) -> Result<u64> {
        fixed::<8>(self.get(name)?, name).map(u64::from_le_bytes)
    }

    /// A ROS 1 `time` field (`u32` seconds, `u32` nanoseconds) in ns.
    pub fn time(&self, name: &str) -> Result<i64> {
        let b = fixed::<8>(self.get(name)?, name)?;
        Ok(time_ns(
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        ))
    }
}

fn fixed<const N: usize>(v: &[u8], name: &str) -> Result<[u8; N]> {
    v.try_into().map_err(|_| Ros1FormatError::FieldSize {
        name: name.to_string(),
        len: v.len(),
        expected: N,
    })
}

/// ROS 1 `time` to ns.
pub fn time_ns(sec: u32, nsec: u32) -> i64 {
    sec as i64 * 1_000_000_000 + nsec as i64
}

/// ns to ROS 1 `time` bytes (clamped to the representable range).
pub fn time_bytes(ns: i64) -> [u8; 8] {
    let ns = ns.clamp(0, u32::MAX as i64 * 1_000_000_000 + 999_999_999);
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    out[4..].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    out
}

/// A little-endian `u32` at `at`.
pub fn read_u32(bytes: &[u8], at: usize) -> Result<u32> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(Ros1FormatError::ShortU32 {
            at,
            left: bytes.len().saturating_sub(at),
        })
}

/// One record, borrowed from a buffer.
#[derive(Debug)]
pub struct Record<'a> {
    /// Its header fields.
    pub fields: Fields,
    /// Its data.
    pub data: &'a [u8],
    /// Offset of the data within the buffer.
    pub data_offset: usize,
    /// Total length of the record (both length prefixes included).
    pub len: usize,
}

/// Parses the record that starts at `at` in `buf`.
pub fn parse_record(buf: &[u8], at: usize) -> Result<Record<'_>> {
    let header_len = read_u32(buf, at)? as usize;
    let header_end = (at + 4)
        .checked_add(header_len)
        .filter(|&e| e <= buf.len())
        .ok_or(Ros1FormatError::HeaderCut(header_len))?;
    let fields = Fields::parse(&buf[at + 4..header_end])?;
    let data_len = read_u32(buf, header_end)? as usize;
    let data_offset = header_end + 4;
    let data = data_offset
        .checked_add(data_len)
        .and_then(|e| buf.get(data_offset..e))
        .ok_or(Ros1FormatError::DataCut(data_len))?;
    Ok(Record {
        fields,
        data,
        data_offset,
        len: data_offset + data_len - at,
    })
}

/// A message record's connection, time (ns) and data range, parsed without allocating (the hot
/// path of reading).
pub fn parse_message_record(buf: &[u8], at: usize) -> Result<(u32, i64, std::ops::Range<usize>)> {
    let header_len = read_u32(buf, at)? as usize;
    let header = buf
        .get(at + 4..(at + 4).saturating_add(header_len))
        .ok_or(Ros1FormatError::HeaderCut(header_len))?;
    let (mut op, mut conn, mut time) = (None, None, None);
    let mut rest = header;
    while !rest.is_empty() {
        let len = read_u32(rest, 0)? as usize;
        let field = rest
            .get(4..4 + len)
            .ok_or(Ros1FormatError::FieldOverrun(len))?;
        match field {
            [b'o', b'p', b'=', value] => op = Some(*value),
            [b'c', b'o', b'n', b'n', b'=', v @ ..] if v.len() == 4 => {
                conn = Some(u32::from_le_bytes([v[0], v[1], v[2], v[3]]))
            }
            [b't', b'i', b'm', b'e', b'=', v @ ..] if v.len() == 8 => {
                time = Some(time_ns(
                    u32::from_le_bytes([v[0], v[1], v[2], v[3]]),
                    u32::from_le_bytes([v[4], v[5], v[6], v[7]]),
                ))
            }
            _ => {}
        }
        rest = &rest[4 + len..];
    }
    if op != Some(OP_MESSAGE) {
        return Err(Ros1FormatError::NotMessage);
    }
    let (Some(conn), Some(time)) = (conn, time) else {
        return Err(Ros1FormatError::MessageWithoutConnTime);
    };
    let data_at = at + 4 + header_len;
    let data_len = read_u32(buf, data_at)? as usize;
    let start = data_at + 4;
    if start.saturating_add(data_len) > buf.len() {
        return Err(Ros1FormatError::DataCut(data_len));
    }
    Ok((conn, time, start..start + data_len))
}

/// True when the record at `at` claims more bytes than the buffer holds (a file cut short).
pub fn runs_past_end(buf: &[u8], at: usize) -> bool {
    let Ok(header_len) = read_u32(buf, at) else {
        return true;
    };
    let data_at = at + 4 + header_len as usize;
    match read_u32(buf, data_at) {
        Ok(data_len) => data_at + 4 + data_len as usize > buf.len(),
        Err(_) => true,
    }
}

/// Builds a header block from `(name, value)` pairs, without its length prefix.
pub fn header_bytes(fields: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in fields {
        out.extend_from_slice(&((name.len() + 1 + value.len()) as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.push(b'=');
        out.extend_from_slice(value);
    }
    out
}

/// Appends a whole record to `out`.
pub fn write_record(out: &mut Vec<u8>, fields: &[(&str, &[u8])], data: &[u8]) {
    let header = header_bytes(fields);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips_and_truncation_is_an_error() {
        let mut buf = Vec::new();
        write_record(
            &mut buf,
            &[("op", &[OP_MESSAGE]), ("conn", &7u32.to_le_bytes())],
            b"xyz",
        );
        let r = parse_record(&buf, 0).unwrap();
        assert_eq!(r.fields.op().unwrap(), OP_MESSAGE);
        assert_eq!(r.fields.u32("conn").unwrap(), 7);
        assert_eq!(r.data, b"xyz");
        assert_eq!(r.len, buf.len());
        for cut in 0..buf.len() {
            assert!(parse_record(&buf[..cut], 0).is_err(), "cut at {cut}");
        }
        assert_eq!(
            parse_record(&buf[..buf.len() - 1], 0)
                .unwrap_err()
                .to_string(),
            "record data of 3 bytes is cut short"
        );
        assert_eq!(
            r.fields.u64("conn").unwrap_err().to_string(),
            "'conn' field of 4 bytes, expected 8"
        );
        assert!(matches!(
            r.fields.get("topic"),
            Err(Ros1FormatError::MissingField(name)) if name == "topic"
        ));
    }

    #[test]
    fn time_fields() {
        assert_eq!(time_bytes(1_500_000_001), [1, 0, 0, 0, 1, 0x65, 0xcd, 0x1d]);
        let mut buf = Vec::new();
        write_record(&mut buf, &[("time", &time_bytes(1_500_000_001))], b"");
        let r = parse_record(&buf, 0).unwrap();
        assert_eq!(r.fields.time("time").unwrap(), 1_500_000_001);
    }
}
