//! The low-level MCAP record layout the reader walks itself: the record framing (opcode,
//! length, body), the fixed fields of message and chunk records, and the typed errors of
//! malformed records.
//!
//! Every other record is parsed by the `mcap` crate ([`parse_checked`]: footer, data end, schema,
//! channel, metadata, attachment, the summary's records), after [`check_lengths`] has checked
//! that each length-prefixed field fits, because the crate reserves a length as it reads it.
//! Messages and chunks are read here at their fixed offsets for what the crate does not offer:
//! a message's data as a `Bytes` slice of the memory-mapped file that outlives the read (the
//! crate's messages borrow from its reader), and a chunk's declared sizes checked against the
//! decompression budgets before anything is decompressed (see [`crate::limits`]).

/// Bytes before a record's body: opcode (1) and body length (8).
pub const RECORD_HEADER: usize = 1 + 8;

/// Field offsets in a message record's body.
pub mod message {
    /// `channel_id: u16`.
    pub const CHANNEL_ID: usize = 0;
    /// `sequence: u32`.
    pub const SEQUENCE: usize = 2;
    /// `log_time: u64` (receive time).
    pub const LOG_TIME: usize = 6;
    /// `publish_time: u64` (send time).
    pub const PUBLISH_TIME: usize = 14;
    /// Start of the payload; also the smallest valid body.
    pub const DATA: usize = 22;
}

/// Field offsets in a chunk record's body.
pub mod chunk {
    /// `message_start_time: u64`.
    pub const START_TIME: usize = 0;
    /// `message_end_time: u64`.
    pub const END_TIME: usize = 8;
    /// `uncompressed_size: u64`.
    pub const UNCOMPRESSED_SIZE: usize = 16;
    /// `uncompressed_crc: u32` (0: none).
    pub const UNCOMPRESSED_CRC: usize = 24;
    /// `compression` name length (`u32`), followed by the name.
    pub const COMPRESSION_LEN: usize = 28;
    /// Start of the compression name.
    pub const COMPRESSION: usize = 32;
}

/// A malformed MCAP record or chunk.
#[derive(Debug, thiserror::Error)]
pub enum McapFormatError {
    /// Too short to be an MCAP file.
    #[error("not an MCAP file: only {len} bytes")]
    TooShort {
        /// The file's length.
        len: u64,
    },
    /// The file does not start with the MCAP magic.
    #[error("not an MCAP file: bad magic")]
    BadMagic,
    /// The file has no footer: its writer did not finish it.
    #[error("truncated MCAP file (no footer): the writer did not finish it; `ros2bag-rs reindex` recovers it")]
    NoFooter,
    /// The record before the closing magic is not a footer.
    #[error("no footer record before the closing magic (opcode 0x{opcode:02x})")]
    NotFooter {
        /// The record's opcode.
        opcode: u8,
    },
    /// A footer whose summary or summary offsets lie outside the file before it.
    #[error("the footer's summary start ({summary_start}) or summary offsets ({offsets_start}) lie past the footer ({footer}) or out of order")]
    FooterOutside {
        /// The summary's start (0: none).
        summary_start: u64,
        /// The summary offsets' start (0: none).
        offsets_start: u64,
        /// The footer's offset.
        footer: usize,
    },
    /// No data end record where the data section ends.
    #[error("no data end record before the summary (offset {offset})")]
    NoDataEnd {
        /// Where it should start.
        offset: usize,
    },
    /// The file shrank (or became unreadable) while it was being read.
    #[error("the file was truncated (or became unreadable) while being read")]
    TruncatedWhileReading,
    /// The summary section cannot be read.
    #[error("corrupted MCAP summary ({source}); `ros2bag-rs reindex` recovers the data")]
    BadSummary {
        /// The parser's error.
        #[source]
        source: mcap::McapError,
    },
    /// Fewer than [`RECORD_HEADER`] bytes left for a record header.
    #[error("record header cut off at offset {offset}")]
    RecordHeaderCut {
        /// Where the record starts.
        offset: usize,
    },
    /// A record whose length runs past the end of the data.
    #[error("record (opcode 0x{opcode:02x}) at offset {offset} runs past the end ({len} bytes)")]
    RecordPastEnd {
        /// The record's opcode.
        opcode: u8,
        /// Where the record starts.
        offset: usize,
        /// Its announced body length.
        len: u64,
    },
    /// A message record shorter than its fixed fields, at a file offset.
    #[error("message record at offset {offset} is too short")]
    MessageTooShortAt {
        /// Where the record starts.
        offset: u64,
    },
    /// A message record shorter than its fixed fields, inside a chunk.
    #[error("message record too short")]
    MessageTooShort,
    /// A schema, channel or other record the `mcap` crate cannot parse.
    #[error("bad record (opcode 0x{opcode:02x}): {source}")]
    BadRecord {
        /// The record's opcode.
        opcode: u8,
        /// The parser's error.
        #[source]
        source: mcap::McapError,
    },
    /// A record whose length-prefixed field (string, byte array, map) runs past its body:
    /// refused before the `mcap` crate would reserve the length it reads.
    #[error("record (opcode 0x{opcode:02x}): {source}")]
    FieldPastEnd {
        /// The record's opcode.
        opcode: u8,
        /// The field's length and the bytes left for it.
        #[source]
        source: crate::limits::LengthPastEnd,
    },
    /// A record whose map or array of fixed-size entries has a byte length that is not a
    /// whole number of entries: the `mcap` crate would read its last entry past the field.
    #[error("record (opcode 0x{opcode:02x}): a field of {len} bytes is not a whole number of {entry}-byte entries")]
    PartialEntry {
        /// The record's opcode.
        opcode: u8,
        /// The field's byte length.
        len: usize,
        /// The size of one entry.
        entry: usize,
    },
    /// A record the MCAP specification does not allow in the summary section (a chunk, a
    /// message, ...): the `mcap` crate would read what it holds without the checks here.
    #[error("record (opcode 0x{opcode:02x}) does not belong in the summary section")]
    NotInSummary {
        /// The record's opcode.
        opcode: u8,
    },
    /// A record of the summary section that cannot be parsed.
    #[error("corrupted MCAP summary (record at offset {offset}: {source}); `ros2bag-rs reindex` recovers the data")]
    BadSummaryRecord {
        /// Where the record starts.
        offset: u64,
        /// What is wrong with it.
        #[source]
        source: Box<McapFormatError>,
    },
    /// An entry of a summary index (chunk, attachment or metadata index) whose offset and
    /// length wrap or point outside the file: refused before the `mcap` crate, which adds them
    /// unchecked, or this reader uses it.
    #[error("corrupted MCAP summary: a {kind} index entry claims {length} bytes at offset {offset}, outside the file of {file_len} bytes; `ros2bag-rs reindex` recovers the data")]
    IndexOutsideFile {
        /// `chunk`, `message index`, `attachment` or `metadata`.
        kind: &'static str,
        /// The offset the entry claims.
        offset: u64,
        /// The length the entry claims.
        length: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A metadata or attachment index entry that does not point at a whole record of its kind.
    #[error("a {kind} index entry at offset {offset} ({length} bytes) does not point at a {kind} record of that length")]
    IndexMismatch {
        /// `attachment` or `metadata`.
        kind: &'static str,
        /// The offset the entry claims.
        offset: u64,
        /// The length the entry claims.
        length: u64,
    },
    /// A metadata record the `mcap` crate cannot parse.
    #[error("bad metadata record at offset {offset}: {source}")]
    BadMetadata {
        /// Where the record starts.
        offset: u64,
        /// The parser's error.
        #[source]
        source: mcap::McapError,
    },
    /// The data ends inside a record.
    #[error("truncated MCAP file: {source}")]
    Truncated {
        /// Where and how it ends.
        #[source]
        source: Box<McapFormatError>,
    },
    /// A chunk index or a scan points at something that is not a chunk record.
    #[error("no chunk record at offset {offset}")]
    NoChunk {
        /// The offset.
        offset: u64,
    },
    /// A chunk record longer than the file.
    #[error("chunk at offset {offset} runs past the end of the file")]
    ChunkPastEnd {
        /// Where the chunk starts.
        offset: u64,
    },
    /// Something wrong inside the chunk at `offset`.
    #[error("chunk at offset {offset}: {source}")]
    InChunk {
        /// Where the chunk starts.
        offset: u64,
        /// What is wrong.
        #[source]
        source: Box<McapFormatError>,
    },
    /// A chunk body shorter than its fixed fields.
    #[error("chunk header too short")]
    ChunkHeaderTooShort,
    /// A chunk's compression name runs past its body.
    #[error("chunk compression name out of bounds")]
    CompressionNameOutOfBounds,
    /// A chunk's compression name is not UTF-8.
    #[error("chunk compression name is not UTF-8")]
    CompressionNameNotUtf8,
    /// A chunk whose records length disagrees with its record length.
    #[error("chunk records length {records_len} disagrees with the record size")]
    RecordsLengthMismatch {
        /// The announced records length.
        records_len: u64,
    },
    /// A chunk announcing more decompressed bytes than the cap
    /// ([`crate::limits::max_chunk_bytes`]).
    #[error(transparent)]
    ChunkTooLarge(crate::limits::ChunkTooLarge),
    /// Chunks decoded together (they overlap in time) that declare more decompressed bytes than
    /// a file may hold at once ([`crate::limits::ALIVE_BYTES`]).
    #[error("chunks from offset {offset}: {source}")]
    OverAliveBudget {
        /// Where the first of them starts.
        offset: u64,
        /// What they declare and the budget.
        #[source]
        source: crate::limits::OverAliveBudget,
    },
    /// A chunk compression this reader does not know.
    #[error("unsupported compression '{compression}'")]
    UnsupportedCompression {
        /// The compression's name.
        compression: String,
    },
    /// A chunk's records could not be decompressed.
    #[error("{compression}: {source}")]
    Decompress {
        /// The compression (`zstd`, `lz4`).
        compression: &'static str,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// A chunk that decompressed to another size than announced.
    #[error("{actual} bytes after decompression, header says {expected}")]
    SizeMismatch {
        /// Bytes decompressed.
        actual: u64,
        /// Bytes announced.
        expected: u64,
    },
    /// A chunk whose records do not match their CRC.
    #[error("CRC mismatch (data corrupted)")]
    CrcMismatch,
    /// A chunk cut by the end of the file whose header is not all there.
    #[error("cut chunk at offset {offset}: header not on disk")]
    CutChunkHeaderMissing {
        /// Where the chunk starts.
        offset: usize,
    },
    /// A chunk cut by the end of the file whose records length disagrees with its length.
    #[error("cut chunk at offset {offset}: records length {records_len} disagrees with the record length {record_len}")]
    CutChunkLengthMismatch {
        /// Where the chunk starts.
        offset: usize,
        /// The announced records length.
        records_len: u64,
        /// The announced record length.
        record_len: u64,
    },
}

impl McapFormatError {
    /// This error, located in the chunk at `offset`.
    pub fn in_chunk(self, offset: u64) -> Self {
        Self::InChunk {
            offset,
            source: Box::new(self),
        }
    }
}

/// The little-endian `u16` at `at` (the caller has checked the bounds).
pub fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The little-endian `u32` at `at` (the caller has checked the bounds).
pub fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut v = [0; 4];
    v.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(v)
}

/// The little-endian `u64` at `at` (the caller has checked the bounds).
pub fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut v = [0; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

/// Iterates `(opcode, body start, body end)` over a buffer of records from `pos`; stops with
/// an error at a record that runs past the end.
pub struct Records<'a> {
    /// The records.
    pub buf: &'a [u8],
    /// Where the next record starts.
    pub pos: usize,
}

impl Iterator for Records<'_> {
    type Item = Result<(u8, usize, usize), McapFormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        if self.buf.len() - self.pos < RECORD_HEADER {
            self.pos = self.buf.len();
            return Some(Err(McapFormatError::RecordHeaderCut { offset: self.pos }));
        }
        let opcode = self.buf[self.pos];
        let len = le_u64(self.buf, self.pos + 1);
        let body = self.pos + RECORD_HEADER;
        if len > (self.buf.len() - body) as u64 {
            let offset = self.pos;
            self.pos = self.buf.len();
            return Some(Err(McapFormatError::RecordPastEnd {
                opcode,
                offset,
                len,
            }));
        }
        self.pos = body + len as usize;
        Some(Ok((opcode, body, self.pos)))
    }
}

/// A field of a record body as the MCAP specification lays it out, for [`check_lengths`].
#[derive(Debug, Clone, Copy)]
enum Field {
    /// So many bytes.
    Fixed(usize),
    /// `u32` length, then that many bytes (strings, byte arrays).
    Len32,
    /// `u32` byte length, then entries of this many bytes each (maps of `u16` to `u64`, arrays
    /// of message index entries): the `mcap` crate reads whole entries until the length is
    /// consumed, so one that does not divide runs its last entry past the field.
    Entries(usize),
    /// `u64` length, then that many bytes.
    Len64,
    /// `u32` byte length, then string → string entries.
    StringMap,
}

/// The fields of the records whose bodies the `mcap` crate parses; `None` for records it does
/// not (messages, chunks: parsed here) or does not know.
fn layout(opcode: u8) -> Option<&'static [Field]> {
    use mcap::records::op;
    use Field::*;
    Some(match opcode {
        op::HEADER => &[Len32, Len32],
        op::FOOTER => &[Fixed(20)],
        op::SCHEMA => &[Fixed(2), Len32, Len32, Len32],
        op::CHANNEL => &[Fixed(4), Len32, Len32, StringMap],
        op::MESSAGE_INDEX => &[Fixed(2), Entries(16)],
        op::CHUNK_INDEX => &[Fixed(32), Entries(10), Fixed(8), Len32, Fixed(16)],
        op::ATTACHMENT => &[Fixed(16), Len32, Len32, Len64, Fixed(4)],
        op::ATTACHMENT_INDEX => &[Fixed(40), Len32, Len32],
        op::STATISTICS => &[Fixed(42), Entries(10)],
        op::METADATA => &[Len32, StringMap],
        op::METADATA_INDEX => &[Fixed(16), Len32],
        op::SUMMARY_OFFSET => &[Fixed(17)],
        op::DATA_END => &[Fixed(4)],
        _ => return None,
    })
}

/// Checks that every length-prefixed field of the record body `body` (strings, byte arrays,
/// maps and the strings in them) fits in what is left of the body, before the `mcap` crate,
/// which reserves a field's length as read, parses it.
pub fn check_lengths(opcode: u8, body: &[u8]) -> Result<(), McapFormatError> {
    let Some(fields) = layout(opcode) else {
        return Ok(());
    };
    let fail = |source| McapFormatError::FieldPastEnd { opcode, source };
    let mut at = 0;
    for field in fields {
        let (prefix, len) = match *field {
            Field::Fixed(n) => (0, n as u64),
            Field::Len32 | Field::Entries(_) | Field::StringMap => (
                4,
                body.get(at..at + 4)
                    .map_or(u64::MAX, |b| u64::from(le_u32(b, 0))),
            ),
            Field::Len64 => (8, body.get(at..at + 8).map_or(u64::MAX, |b| le_u64(b, 0))),
        };
        let left = body.len().saturating_sub(at + prefix);
        let n = crate::limits::check_len(len, 1, left).map_err(fail)?;
        if let Field::Entries(entry) = *field {
            if n % entry != 0 {
                return Err(McapFormatError::PartialEntry {
                    opcode,
                    len: n,
                    entry,
                });
            }
        }
        at += prefix;
        if let Field::StringMap = field {
            let map = &body[at..at + n];
            let mut entry = 0;
            while entry < map.len() {
                for _ in 0..2 {
                    let len = map
                        .get(entry..entry + 4)
                        .map_or(u64::MAX, |b| u64::from(le_u32(b, 0)));
                    let left = map.len().saturating_sub(entry + 4);
                    entry += 4 + crate::limits::check_len(len, 1, left).map_err(fail)?;
                }
            }
        }
        at += n;
    }
    Ok(())
}

/// Parses a record body with the `mcap` crate once [`check_lengths`] has passed it: the one way
/// this crate hands a record to the `mcap` crate's parser.
pub fn parse_checked(
    opcode: u8,
    body: &[u8],
) -> Result<mcap::records::Record<'_>, McapFormatError> {
    check_lengths(opcode, body)?;
    mcap::parse_record(opcode, body).map_err(|source| McapFormatError::BadRecord { opcode, source })
}

/// Checks the record starting at `offset` of `data` (framing and [`check_lengths`]).
pub fn check_record_at(data: &[u8], offset: u64) -> Result<(), McapFormatError> {
    let pos = usize::try_from(offset).unwrap_or(usize::MAX);
    match (Records { buf: data, pos }).next() {
        Some(Ok((opcode, body, end))) => check_lengths(opcode, &data[body..end]),
        Some(Err(e)) => Err(e),
        None => Err(McapFormatError::RecordHeaderCut { offset: pos }),
    }
}

/// The records the MCAP specification allows in the summary section.
const SUMMARY_RECORDS: [u8; 7] = [
    mcap::records::op::SCHEMA,
    mcap::records::op::CHANNEL,
    mcap::records::op::STATISTICS,
    mcap::records::op::METADATA_INDEX,
    mcap::records::op::ATTACHMENT_INDEX,
    mcap::records::op::CHUNK_INDEX,
    mcap::records::op::SUMMARY_OFFSET,
];

/// The footer record of a file that ends with one and the closing magic, and its offset.
pub fn footer(data: &[u8]) -> Result<(usize, mcap::records::Footer), McapFormatError> {
    const FOOTER_RECORD: usize = RECORD_HEADER + 20;
    let magic = mcap::MAGIC.len();
    let Some(at) = data
        .len()
        .checked_sub(magic + FOOTER_RECORD)
        .filter(|&at| at >= magic && data.ends_with(mcap::MAGIC))
    else {
        return Err(McapFormatError::NoFooter);
    };
    match (Records {
        buf: &data[..data.len() - magic],
        pos: at,
    })
    .next()
    {
        Some(Ok((mcap::records::op::FOOTER, body, _))) => {
            match parse_checked(mcap::records::op::FOOTER, &data[body..data.len() - magic])? {
                mcap::records::Record::Footer(footer) => Ok((at, footer)),
                _ => Err(McapFormatError::NotFooter { opcode: data[at] }),
            }
        }
        _ => Err(McapFormatError::NotFooter { opcode: data[at] }),
    }
}

/// Where a finished MCAP file's sections lie, from its footer and its data end record (both
/// parsed by the `mcap` crate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sections {
    /// Offset of the footer record.
    pub footer: usize,
    /// The summary section's records, without its summary offsets (`None`: no summary).
    pub summary: Option<std::ops::Range<usize>>,
    /// The footer's summary CRC (0: not computed), of the bytes from the summary's start
    /// through the footer's fields before the CRC.
    pub summary_crc: u32,
    /// Offset of the data end record.
    pub data_end: usize,
    /// Its data section CRC (0: not computed), of every byte before it.
    pub data_crc: u32,
}

impl Sections {
    /// The bytes the footer's summary CRC covers: the summary section and the footer up to the
    /// CRC field (`None` without a summary).
    pub fn summary_crc_range(&self) -> Option<std::ops::Range<usize>> {
        let summary = self.summary.as_ref()?;
        Some(summary.start..self.footer + RECORD_HEADER + 16)
    }
}

/// The sections of a finished MCAP file: [`footer`], then the data end record where the
/// summary (or, without one, the footer) starts.
pub fn sections(data: &[u8]) -> Result<Sections, McapFormatError> {
    const DATA_END_RECORD: usize = RECORD_HEADER + 4;
    let (at, footer) = footer(data)?;
    let outside = || McapFormatError::FooterOutside {
        summary_start: footer.summary_start,
        offsets_start: footer.summary_offset_start,
        footer: at,
    };
    let offset = |n: u64| usize::try_from(n).ok().filter(|&n| n <= at);
    let summary_start = offset(footer.summary_start).ok_or_else(outside)?;
    let summary_end = match footer.summary_offset_start {
        0 => at,
        n => offset(n)
            .filter(|&n| n >= summary_start)
            .ok_or_else(outside)?,
    };
    let data_end_at = match summary_start {
        0 => at,
        n => n,
    };
    let no_data_end = |offset| McapFormatError::NoDataEnd { offset };
    let data_end = data_end_at
        .checked_sub(DATA_END_RECORD)
        .filter(|&d| d >= mcap::MAGIC.len())
        .ok_or(no_data_end(data_end_at))?;
    let data_crc = match (Records {
        buf: &data[..data_end_at],
        pos: data_end,
    })
    .next()
    {
        Some(Ok((mcap::records::op::DATA_END, body, end))) if end == data_end_at => {
            match parse_checked(mcap::records::op::DATA_END, &data[body..end])? {
                mcap::records::Record::DataEnd(end) => end.data_section_crc,
                _ => return Err(no_data_end(data_end)),
            }
        }
        _ => return Err(no_data_end(data_end)),
    };
    Ok(Sections {
        footer: at,
        summary: (summary_start != 0).then_some(summary_start..summary_end),
        summary_crc: footer.summary_crc,
        data_end,
        data_crc,
    })
}

/// Checks every record of the summary section of a file that ends with a footer and the
/// magic, before the `mcap` crate reads the summary: each is a summary record whose fields fit
/// in its body. A file without a summary passes.
pub fn check_summary(data: &[u8]) -> Result<(), McapFormatError> {
    // The footer found as leniently as the `mcap` crate finds it (its opcode, its summary start
    // at its fixed place; not [`footer`], which refuses more): whatever that crate would read
    // as the summary is checked here.
    const FOOTER_BODY: usize = 20;
    let Some(footer) = data.len().checked_sub(8 + RECORD_HEADER + FOOTER_BODY) else {
        return Ok(());
    };
    if data[footer] != mcap::records::op::FOOTER {
        return Ok(());
    }
    let start = le_u64(data, footer + RECORD_HEADER);
    let Some(start) = usize::try_from(start)
        .ok()
        .filter(|&s| s != 0 && s < footer)
    else {
        return Ok(());
    };
    let records = Records {
        buf: &data[..footer],
        pos: start,
    };
    let mut at = start;
    for record in records {
        let wrap = |e| McapFormatError::BadSummaryRecord {
            offset: at as u64,
            source: Box::new(e),
        };
        let (opcode, body, end) = record.map_err(wrap)?;
        if !SUMMARY_RECORDS.contains(&opcode) {
            return Err(wrap(McapFormatError::NotInSummary { opcode }));
        }
        check_lengths(opcode, &data[body..end]).map_err(wrap)?;
        at = end;
    }
    Ok(())
}

/// Checks every entry of the summary's indexes against the file's length with checked
/// arithmetic: chunk indexes (the chunk's range, its message indexes), attachment and metadata
/// indexes. The `mcap` crate computes `offset + length` unchecked when it reads an attachment
/// or a metadata record (a wrapping sum panics), and a chunk index outside the file is no chunk.
pub fn check_summary_indexes(
    summary: &mcap::Summary,
    file_len: u64,
) -> Result<(), McapFormatError> {
    let check = |kind, offset: u64, length: u64| match offset.checked_add(length) {
        Some(end) if end <= file_len => Ok(()),
        _ => Err(McapFormatError::IndexOutsideFile {
            kind,
            offset,
            length,
            file_len,
        }),
    };
    for ci in &summary.chunk_indexes {
        check("chunk", ci.chunk_start_offset, ci.chunk_length)?;
        for &offset in ci.message_index_offsets.values() {
            check("message index", offset, 0)?;
        }
        check("message index", 0, ci.message_index_length)?;
    }
    for ai in &summary.attachment_indexes {
        check("attachment", ai.offset, ai.length)?;
    }
    for mi in &summary.metadata_indexes {
        check("metadata", mi.offset, mi.length)?;
    }
    Ok(())
}

/// The metadata record a metadata index entry points at, parsed through [`parse_checked`]
/// (never the `mcap` crate's unchecked `read::metadata`): the entry must span exactly one
/// metadata record.
pub fn metadata_at(
    data: &[u8],
    index: &mcap::records::MetadataIndex,
) -> Result<mcap::records::Metadata, McapFormatError> {
    let mismatch = || McapFormatError::IndexMismatch {
        kind: "metadata",
        offset: index.offset,
        length: index.length,
    };
    let pos = usize::try_from(index.offset).map_err(|_| mismatch())?;
    let (opcode, body, end) = match (Records { buf: data, pos }).next() {
        Some(Ok(record)) => record,
        Some(Err(e)) => return Err(e),
        None => return Err(mismatch()),
    };
    if opcode != mcap::records::op::METADATA || (end - pos) as u64 != index.length {
        return Err(mismatch());
    }
    match parse_checked(opcode, &data[body..end])? {
        mcap::records::Record::Metadata(m) => Ok(m),
        _ => Err(mismatch()),
    }
}

/// The parsed fixed part of a chunk record body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Earliest log time in the chunk.
    pub start_time: u64,
    /// Latest log time in the chunk.
    pub end_time: u64,
    /// Size of the records once decompressed.
    pub uncompressed_size: u64,
    /// CRC-32 of the decompressed records (0: none).
    pub uncompressed_crc: u32,
    /// `""` (none), `zstd`, `lz4`.
    pub compression: String,
    /// Range of the compressed records within `data`.
    pub records: std::ops::Range<usize>,
}

/// Parses the chunk record whose body is `data[body..end]`.
pub fn parse_chunk_header(
    data: &[u8],
    body: usize,
    end: usize,
) -> Result<ChunkHeader, McapFormatError> {
    let b = &data[body..end];
    if b.len() < chunk::COMPRESSION {
        return Err(McapFormatError::ChunkHeaderTooShort);
    }
    let name_len = le_u32(b, chunk::COMPRESSION_LEN) as usize;
    let after_name = chunk::COMPRESSION
        .checked_add(name_len)
        .filter(|&n| n.checked_add(8).is_some_and(|n| n <= b.len()))
        .ok_or(McapFormatError::CompressionNameOutOfBounds)?;
    let compression = std::str::from_utf8(&b[chunk::COMPRESSION..after_name])
        .map_err(|_| McapFormatError::CompressionNameNotUtf8)?
        .to_string();
    let records_len = le_u64(b, after_name);
    let records_start = after_name + 8;
    if records_len != (b.len() - records_start) as u64 {
        return Err(McapFormatError::RecordsLengthMismatch { records_len });
    }
    Ok(ChunkHeader {
        start_time: le_u64(b, chunk::START_TIME),
        end_time: le_u64(b, chunk::END_TIME),
        uncompressed_size: le_u64(b, chunk::UNCOMPRESSED_SIZE),
        uncompressed_crc: le_u32(b, chunk::UNCOMPRESSED_CRC),
        compression,
        records: body + records_start..end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcap::records::op;

    fn record(opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![opcode];
        r.extend((body.len() as u64).to_le_bytes());
        r.extend_from_slice(body);
        r
    }

    fn chunk_body(compression: &str, records: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(5u64.to_le_bytes());
        b.extend(9u64.to_le_bytes());
        b.extend((records.len() as u64).to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend((compression.len() as u32).to_le_bytes());
        b.extend(compression.as_bytes());
        b.extend((records.len() as u64).to_le_bytes());
        b.extend_from_slice(records);
        b
    }

    #[test]
    fn records_walk_a_buffer_and_stop_at_a_cut_record() {
        let mut buf = record(op::SCHEMA, b"abc");
        buf.extend(record(op::MESSAGE, &[0; message::DATA]));
        let whole: Vec<_> = Records { buf: &buf, pos: 0 }
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            whole,
            vec![(op::SCHEMA, 9, 12), (op::MESSAGE, 21, 21 + message::DATA)]
        );
        // Cut in the second record's body, then in its header.
        let cut = &buf[..buf.len() - 1];
        let got: Vec<_> = Records { buf: cut, pos: 0 }.collect();
        assert!(got[0].is_ok());
        assert!(matches!(
            got[1],
            Err(McapFormatError::RecordPastEnd {
                opcode: op::MESSAGE,
                offset: 12,
                ..
            })
        ));
        assert_eq!(got.len(), 2);
        let got: Vec<_> = Records {
            buf: &buf[..16],
            pos: 0,
        }
        .collect();
        assert!(matches!(
            got[1],
            Err(McapFormatError::RecordHeaderCut { .. })
        ));
        // A length near u64::MAX does not overflow.
        let mut huge = vec![op::MESSAGE];
        huge.extend(u64::MAX.to_le_bytes());
        assert!(Records { buf: &huge, pos: 0 }.next().unwrap().is_err());
    }

    #[test]
    fn chunk_headers_parse_and_reject_damage() {
        let body = chunk_body("zstd", b"xyz");
        let mut data = vec![0u8; 3];
        data.extend(&body);
        let h = parse_chunk_header(&data, 3, data.len()).unwrap();
        assert_eq!((h.start_time, h.end_time, h.uncompressed_size), (5, 9, 3));
        assert_eq!(h.compression, "zstd");
        assert_eq!(&data[h.records], b"xyz");
        // Too short, name out of bounds, records length wrong: errors, never panics.
        for cut in 0..body.len() {
            assert!(parse_chunk_header(&body, 0, cut).is_err(), "cut at {cut}");
        }
        let mut bad_name = body.clone();
        bad_name[chunk::COMPRESSION_LEN..chunk::COMPRESSION]
            .copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            parse_chunk_header(&bad_name, 0, bad_name.len()),
            Err(McapFormatError::CompressionNameOutOfBounds)
        ));
        let mut extra = body.clone();
        extra.push(0);
        assert!(matches!(
            parse_chunk_header(&extra, 0, extra.len()),
            Err(McapFormatError::RecordsLengthMismatch { records_len: 3 })
        ));
        let e = McapFormatError::CrcMismatch.in_chunk(42).to_string();
        assert_eq!(e, "chunk at offset 42: CRC mismatch (data corrupted)");
    }

    /// A channel whose topic length says 1.8 GB in a 40-byte record is refused before the
    /// `mcap` crate parses it (it reserved the 1.8 GB: found by the `mcap_read` fuzz target).
    #[test]
    fn length_prefixed_fields_past_the_body_are_refused() {
        let mut channel = vec![1, 0, 1, 0];
        channel.extend(1_869_700_964u32.to_le_bytes());
        channel.extend(b"/topic and more");
        let err = check_lengths(op::CHANNEL, &channel).unwrap_err();
        assert!(
            matches!(err, McapFormatError::FieldPastEnd { opcode: op::CHANNEL, source } if source.len == 1_869_700_964),
            "{err}"
        );
        // A well-formed channel passes; so does one whose metadata map holds a lying string.
        let mut good = vec![1, 0, 1, 0];
        for s in ["/t", "cdr"] {
            good.extend((s.len() as u32).to_le_bytes());
            good.extend(s.as_bytes());
        }
        let mut map = Vec::new();
        for s in ["k", "v"] {
            map.extend((s.len() as u32).to_le_bytes());
            map.extend(s.as_bytes());
        }
        let mut with_map = good.clone();
        with_map.extend((map.len() as u32).to_le_bytes());
        with_map.extend(&map);
        check_lengths(op::CHANNEL, &with_map).unwrap();
        assert!(mcap::parse_record(op::CHANNEL, &with_map).is_ok());
        map[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut lying = good;
        lying.extend((map.len() as u32).to_le_bytes());
        lying.extend(&map);
        assert!(check_lengths(op::CHANNEL, &lying).is_err());
        // Cut anywhere: an error, never a panic.
        for cut in 0..with_map.len() {
            assert!(
                check_lengths(op::CHANNEL, &with_map[..cut]).is_err(),
                "cut at {cut}"
            );
        }
    }
}
