//! Typed errors of the ROS 1 bag layer: records that do not parse, chunks that do not
//! decompress, an index that contradicts the data. Each says what is wrong and, through
//! [`Ros1FormatError::At`], [`Ros1FormatError::InChunk`] and [`Ros1FormatError::Message`],
//! where.

use crate::formats::{CompressionFormat, UnknownName};

/// What is wrong with the bytes of a ROS 1 bag.
#[derive(Debug, thiserror::Error)]
pub enum Ros1FormatError {
    /// Fewer than 4 bytes left where a little-endian `u32` (a length) is expected.
    #[error("needs 4 bytes at offset {at}, only {left} left")]
    ShortU32 {
        /// Where the `u32` should be.
        at: usize,
        /// Bytes left from there.
        left: usize,
    },
    /// A header field whose length runs past the end of its header.
    #[error("header field of {0} bytes overruns its header")]
    FieldOverrun(usize),
    /// A header field that is not `name=value`.
    #[error("header field without '='")]
    FieldWithoutEquals,
    /// A header without a field the record needs.
    #[error("header lacks the '{0}' field")]
    MissingField(String),
    /// A fixed-size header field of another size.
    #[error("'{name}' field of {len} bytes, expected {expected}")]
    FieldSize {
        /// The field.
        name: String,
        /// Its size.
        len: usize,
        /// The size its type has.
        expected: usize,
    },
    /// A record header longer than the bytes left.
    #[error("record header of {0} bytes is cut short")]
    HeaderCut(usize),
    /// A record's data longer than the bytes left.
    #[error("record data of {0} bytes is cut short")]
    DataCut(usize),
    /// The first record is not the bag header.
    #[error("first record is not the bag header")]
    NotBagHeader,
    /// A message was expected at an index entry.
    #[error("not a message record")]
    NotMessage,
    /// A message record lacking its connection or its time.
    #[error("message record without 'conn' and 'time'")]
    MessageWithoutConnTime,
    /// A chunk was expected (from a chunk info or a scan).
    #[error("not a chunk record")]
    NotChunk,
    /// A chunk record whose header the end of the file cuts.
    #[error("chunk header cut short")]
    ChunkHeaderCut,
    /// A chunk with an unknown compression.
    #[error(transparent)]
    Compression(#[from] UnknownName),
    /// A chunk whose data the decoder rejects.
    #[error("{} chunk does not decompress: {source}", compression.as_str())]
    Decompress {
        /// The chunk's compression.
        compression: CompressionFormat,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// A chunk declaring more decompressed bytes than the cap
    /// ([`crate::limits::max_chunk_bytes`]).
    #[error(transparent)]
    ChunkTooLarge(#[from] crate::limits::ChunkTooLarge),
    /// An LZ4 chunk whose frames are malformed (checked while decoding them).
    #[error("lz4 chunk does not decompress: {0}")]
    Lz4Frame(&'static str),
    /// A chunk that decompresses to another size than its header says.
    #[error("{} chunk holds {len} bytes, its header says {size}", compression.as_str())]
    ChunkSize {
        /// The chunk's compression.
        compression: CompressionFormat,
        /// Bytes it decompressed to (at most one more than announced).
        len: usize,
        /// Bytes its header announces.
        size: usize,
    },
    /// An index record of a version other than 1.
    #[error("unknown version {0}")]
    IndexVersion(u32),
    /// An index record whose data does not hold its entries.
    #[error("{count} entries in {len} bytes")]
    IndexSize {
        /// Entries announced.
        count: usize,
        /// Bytes of data.
        len: usize,
    },
    /// An index entry pointing outside its chunk.
    #[error("entry at {offset} lies beyond the chunk's {size} bytes")]
    IndexEntryBeyond {
        /// The entry's offset in the chunk.
        offset: u32,
        /// The chunk's uncompressed size.
        size: usize,
    },
    /// A message record of another connection than its index entry says.
    #[error("the index says connection {index}, the message says {message}")]
    ConnectionMismatch {
        /// The index entry's connection.
        index: u32,
        /// The message record's connection.
        message: u32,
    },
    /// An error in the record at `offset`.
    #[error("{what} at offset {offset}: {source}")]
    At {
        /// The kind of record (`index record`, `chunk`, `bag header`...).
        what: &'static str,
        /// Its file offset.
        offset: u64,
        /// What is wrong there.
        #[source]
        source: Box<Ros1FormatError>,
    },
    /// An error in the record at `offset` of a decompressed chunk.
    #[error("record at chunk offset {offset}: {source}")]
    InChunk {
        /// Its offset in the chunk.
        offset: u64,
        /// What is wrong there.
        #[source]
        source: Box<Ros1FormatError>,
    },
    /// A message that cannot be read.
    #[error(
        "chunk at offset {chunk}, topic '{topic}', message at chunk offset {offset}: {source}"
    )]
    Message {
        /// File offset of its chunk.
        chunk: u64,
        /// Its topic (`?` when the connection is unknown).
        topic: String,
        /// Its offset in the uncompressed chunk.
        offset: u32,
        /// What is wrong.
        #[source]
        source: Box<Ros1FormatError>,
    },
}

impl Ros1FormatError {
    /// This error, as found in the `what` at `offset`.
    pub(crate) fn at(self, what: &'static str, offset: usize) -> Self {
        Self::At {
            what,
            offset: offset as u64,
            source: Box::new(self),
        }
    }
}
