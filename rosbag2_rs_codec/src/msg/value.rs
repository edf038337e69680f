//! The value tree both serializations decode to and encode from.

/// One decoded value. Structs are positional: field `i` of the type's definition is element `i`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `bool`.
    Bool(bool),
    /// `int8`.
    Int8(i8),
    /// `uint8`, `byte`, `char`.
    UInt8(u8),
    /// `int16`.
    Int16(i16),
    /// `uint16`.
    UInt16(u16),
    /// `int32`.
    Int32(i32),
    /// `uint32`.
    UInt32(u32),
    /// `int64`.
    Int64(i64),
    /// `uint64`.
    UInt64(u64),
    /// `float32`.
    Float32(f32),
    /// `float64`.
    Float64(f64),
    /// ROS 1 `time`.
    Time {
        /// Seconds.
        sec: u32,
        /// Nanoseconds.
        nsec: u32,
    },
    /// ROS 1 `duration`.
    Duration {
        /// Seconds.
        sec: i32,
        /// Nanoseconds.
        nsec: i32,
    },
    /// `string`: the bytes as stored (normally UTF-8; kept as bytes so that round trips are
    /// exact).
    String(Vec<u8>),
    /// An array or sequence of `uint8`, `byte` or `char`.
    Bytes(Vec<u8>),
    /// Any other array or sequence.
    Array(Vec<Value>),
    /// A nested message.
    Struct(Vec<Value>),
}

impl Value {
    /// The string's text (lossy for non-UTF-8 bytes), if this is a string.
    pub fn as_str(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            Self::String(b) => Some(String::from_utf8_lossy(b)),
            _ => None,
        }
    }

    /// A string value.
    pub fn string(s: &str) -> Self {
        Self::String(s.as_bytes().to_vec())
    }

    /// Fields of a struct.
    pub fn fields(&self) -> Option<&[Value]> {
        match self {
            Self::Struct(v) => Some(v),
            _ => None,
        }
    }

    /// Integer value of any integer kind.
    pub fn as_i128(&self) -> Option<i128> {
        Some(match *self {
            Self::Bool(b) => b as i128,
            Self::Int8(v) => v as i128,
            Self::UInt8(v) => v as i128,
            Self::Int16(v) => v as i128,
            Self::UInt16(v) => v as i128,
            Self::Int32(v) => v as i128,
            Self::UInt32(v) => v as i128,
            Self::Int64(v) => v as i128,
            Self::UInt64(v) => v as i128,
            _ => return None,
        })
    }

    /// Any number (integer or float) as `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Self::Float32(v) => Some(v as f64),
            Self::Float64(v) => Some(v),
            _ => self.as_i128().map(|v| v as f64),
        }
    }

    /// An array of numbers as `f64`s (a byte array included).
    pub fn as_f64s(&self) -> Option<Vec<f64>> {
        match self {
            Self::Bytes(b) => Some(b.iter().map(|&x| x as f64).collect()),
            Self::Array(items) => items.iter().map(Self::as_f64).collect(),
            _ => None,
        }
    }

    /// A short name of the variant, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Bool(_) => "bool",
            Self::Int8(_) => "int8",
            Self::UInt8(_) => "uint8",
            Self::Int16(_) => "int16",
            Self::UInt16(_) => "uint16",
            Self::Int32(_) => "int32",
            Self::UInt32(_) => "uint32",
            Self::Int64(_) => "int64",
            Self::UInt64(_) => "uint64",
            Self::Float32(_) => "float32",
            Self::Float64(_) => "float64",
            Self::Time { .. } => "time",
            Self::Duration { .. } => "duration",
            Self::String(_) => "string",
            Self::Bytes(_) => "bytes",
            Self::Array(_) => "array",
            Self::Struct(_) => "struct",
        }
    }
}
