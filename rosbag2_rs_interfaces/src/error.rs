//! The error type of this crate.

/// What can go wrong when encoding, decoding or naming an interface type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterfaceError {
    /// The input is shorter than the 4-byte CDR encapsulation header.
    #[error("CDR payload too short: {len} bytes, need at least 4 for the encapsulation header")]
    TooShort {
        /// Length of the input in bytes.
        len: usize,
    },
    /// The encapsulation identifier is not plain CDR (`00 00` big-endian or
    /// `00 01` little-endian), e.g. XCDR2 or a corrupted header.
    #[error("unsupported CDR encapsulation identifier {0:02x?}, expected [00, 00] or [00, 01]")]
    UnsupportedEncapsulation([u8; 2]),
    /// The payload after the header does not decode as the requested type
    /// (truncated data, invalid bool or UTF-8, ...).
    #[error("cannot decode CDR payload: {0}")]
    Decode(String),
    /// The value could not be encoded as CDR.
    #[error("cannot encode value as CDR: {0}")]
    Encode(String),
    /// A type name is not of the form `package/msg/Name` or `package/srv/Name`.
    #[error(
        "invalid ROS 2 type name {0:?}, expected \"package/msg/Name\" or \"package/srv/Name\""
    )]
    InvalidTypeName(String),
}
