//! Bounds on what a size read from a file or the wire may make this process allocate, and the
//! budgets that bound what a whole file may make it hold: the one place that lists them.
//!
//! A size found in untrusted input (a record length, an element count, a chunk's declared
//! decompressed size) never reserves memory by itself:
//!
//! - [`check_len`] checks a length against the bytes that can still hold it (the rest of the
//!   enclosing record, chunk or file) and [`vec_for`] reserves only after that check: the one
//!   place every parser goes through to turn a parsed count into a reservation.
//! - [`read_declared`] streams a decoder into a buffer that grows with what actually
//!   decompresses, never beyond `declared + 1` bytes of capacity, so a header lying about its
//!   size costs no more than the data really decodes to, and one byte past the declared size
//!   reveals the lie.
//! - [`load_yaml`] loads YAML (`metadata.yaml`, QoS profiles and overrides, storage config
//!   files) only when its aliases would not expand beyond [`MAX_YAML_NODES`] nodes nor nest
//!   deeper than [`MAX_YAML_DEPTH`]: the loader copies an aliased node at every use (a "billion
//!   laughs" file of a few hundred bytes would otherwise expand to gigabytes), and drops nested
//!   nodes recursively.
//!
//! The budgets, each a [`Limit`] (a default, an environment variable, [`Limit::set`]):
//!
//! | budget | bounds | default | environment |
//! |---|---|---|---|
//! | [`MAX_CHUNK`] | one decompressed chunk (MCAP, ROS 1) or zstd message | 1 GiB | `ROSBAG2_RS_MAX_CHUNK_BYTES` |
//! | [`ALIVE_BYTES`] | decompressed chunk bytes held at once per open file (chunks overlapping in time are decoded together and share it; ROS 1's chunk cache too) | 1 GiB | `ROSBAG2_RS_MAX_ALIVE_BYTES` |
//! | [`EMPTY_ELEMENTS`] | elements of no wire size per decoded or converted message | 2^20 | `ROSBAG2_RS_MAX_EMPTY_ELEMENTS` |
//! | [`SALVAGE_BYTES`] | payload bytes the SQLite salvage copies out of one file | 4 GiB | `ROSBAG2_RS_MAX_SALVAGE_BYTES` |
//! | [`IMAGE_PIXELS`] | pixels of one decoded image frame (PNG: `export`, RealSense) | 2^26 (64 Mi: 512 MiB at 8 bytes a pixel; an 8K frame is 33 Mi) | `ROSBAG2_RS_MAX_IMAGE_PIXELS` |
//! | [`DESCRIPTION_FIELDS`] | fields of a type description from another node (referenced types included), before a type is built from it at run time (rcl backend; also: no type containing itself, nesting at most 32 deep) | 10,000 | `ROSBAG2_RS_MAX_DESCRIPTION_FIELDS` |
//! | [`FIXED_ELEMENTS`] | elements of fixed-size arrays in one message of such a type (arrays of nested types multiplied out) | 2^24 | `ROSBAG2_RS_MAX_FIXED_ELEMENTS` |
//! | [`RUNTIME_TYPES`] | types built at run time from other nodes' descriptions, per process (never freed) | 256 | `ROSBAG2_RS_MAX_RUNTIME_TYPES` |
//! | [`FILE_MODE_BYTES`] | a file-mode `.zstd` bag decompressed to a temporary file | 64 GiB, and the free space of the temporary directory | `ROSBAG2_RS_MAX_FILE_MODE_BYTES` |
//!
//! Chunk sizes are far above what recorders write (rosbag2 and `rosbag record` chunks are a
//! few MiB); the defaults stay well under a small robot's memory.

use std::collections::HashMap;
use std::io::{self, Read};

/// The length checks every parser goes through (shared with the codec, which decodes messages).
pub use rosbag2_rs_codec::limits::{check_len, vec_for, LengthPastEnd};
/// The codec's budget of pixels of one decoded image (PNG: `export`, RealSense).
pub use rosbag2_rs_codec::limits::{check_pixels, TooManyPixels, IMAGE_PIXELS};
/// The budget type, and the codec's budget of elements of no wire size per message.
pub use rosbag2_rs_codec::limits::{Limit, TooManyElements, EMPTY_ELEMENTS};
/// The codec's budgets on type descriptions from other nodes.
pub use rosbag2_rs_codec::limits::{DESCRIPTION_FIELDS, FIXED_ELEMENTS, RUNTIME_TYPES};

/// The cap on one decompressed chunk or message.
pub static MAX_CHUNK: Limit = Limit::new(
    "decompressed bytes per chunk",
    "ROSBAG2_RS_MAX_CHUNK_BYTES",
    1 << 30,
);

/// The budget of decompressed chunk bytes one open file holds at once.
pub static ALIVE_BYTES: Limit = Limit::new(
    "decompressed bytes held at once per open file",
    "ROSBAG2_RS_MAX_ALIVE_BYTES",
    1 << 30,
);

/// The budget of payload bytes the SQLite salvage copies out of one file.
pub static SALVAGE_BYTES: Limit = Limit::new(
    "payload bytes salvaged per file",
    "ROSBAG2_RS_MAX_SALVAGE_BYTES",
    4 << 30,
);

/// The cap on a file-mode `.zstd` bag once decompressed (the free space of the temporary
/// directory bounds it too).
pub static FILE_MODE_BYTES: Limit = Limit::new(
    "bytes of a file-mode .zstd bag once decompressed",
    "ROSBAG2_RS_MAX_FILE_MODE_BYTES",
    64 << 30,
);

/// The default cap on one decompressed chunk or message: 1 GiB.
pub const DEFAULT_MAX_CHUNK_BYTES: u64 = 1 << 30;

/// The environment variable that overrides [`DEFAULT_MAX_CHUNK_BYTES`] (a number of bytes).
pub const MAX_CHUNK_ENV: &str = "ROSBAG2_RS_MAX_CHUNK_BYTES";

/// Bytes reserved up front for a decompression, at most: beyond that the buffer grows with
/// what decompresses.
const INITIAL_RESERVE: usize = 8 << 20;

/// The cap on one decompressed chunk or message, in bytes ([`MAX_CHUNK`] in force).
pub fn max_chunk_bytes() -> u64 {
    MAX_CHUNK.get()
}

/// Sets the cap on one decompressed chunk or message for this process (0 restores the default
/// or the environment's value).
pub fn set_max_chunk_bytes(bytes: u64) {
    MAX_CHUNK.set(bytes);
}

/// A file-mode `.zstd` storage file that decompresses (or whose frame header says it
/// decompresses) to more than it may take in the temporary directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} more than the {limit} bytes it may take decompressed in {} (the lesser of the cap of {cap} bytes, set {} to raise it, and the {} bytes free there)", match claimed { Some(n) => format!("declares {n} bytes once decompressed,"), None => "decompresses to".to_string() }, dir.display(), FILE_MODE_BYTES.env, free.map_or("unknown".to_string(), |f| f.to_string()))]
pub struct FileModeTooLarge {
    /// The decompressed size its frame header declares, when it declares one.
    pub claimed: Option<u64>,
    /// What it may take: the lesser of `cap` and `free`.
    pub limit: u64,
    /// [`FILE_MODE_BYTES`] in force.
    pub cap: u64,
    /// The bytes free in `dir`, when known.
    pub free: Option<u64>,
    /// The temporary directory.
    pub dir: std::path::PathBuf,
}

/// A declared decompressed size above [`max_chunk_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("declares {size} bytes once decompressed, more than the cap of {cap} bytes (set {MAX_CHUNK_ENV} to raise it)")]
pub struct ChunkTooLarge {
    /// The declared size.
    pub size: u64,
    /// The cap in force.
    pub cap: u64,
}

/// `size` as a `usize` when it is within [`max_chunk_bytes`].
pub fn check_chunk_size(size: u64) -> Result<usize, ChunkTooLarge> {
    let cap = max_chunk_bytes();
    usize::try_from(size)
        .ok()
        .filter(|_| size <= cap)
        .ok_or(ChunkTooLarge { size, cap })
}

/// Decompressed bytes that would be held at once beyond [`ALIVE_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{chunks} chunks decoded together (they overlap in time) declare {claimed} bytes once decompressed, more than the budget of {budget} bytes held at once per file (set {} to raise it)", ALIVE_BYTES.env)]
pub struct OverAliveBudget {
    /// The chunks that would be held at once.
    pub chunks: usize,
    /// What they declare in all.
    pub claimed: u64,
    /// The budget in force.
    pub budget: u64,
}

/// Checks that chunks declaring `sizes` once decompressed may be held at once.
pub fn check_alive(sizes: impl IntoIterator<Item = u64>) -> Result<(), OverAliveBudget> {
    let (mut chunks, mut claimed) = (0, 0u64);
    for size in sizes {
        chunks += 1;
        claimed = claimed.saturating_add(size);
    }
    let budget = ALIVE_BYTES.get();
    match claimed > budget {
        true => Err(OverAliveBudget {
            chunks,
            claimed,
            budget,
        }),
        false => Ok(()),
    }
}

/// Appends what `decoder` produces to `out`, at most `declared + 1` bytes (one more than
/// declared shows a size field that lies; the caller compares). The buffer grows with what
/// actually decodes (at most `min(declared, 8 MiB)` is reserved up front, then it doubles) but
/// its capacity never exceeds `declared + 1` bytes past what `out` held.
pub fn read_declared(decoder: impl Read, declared: usize, out: &mut Vec<u8>) -> io::Result<()> {
    read_bounded(decoder, (declared as u64).saturating_add(1), out)
}

/// Appends at most `limit` bytes of what `reader` produces to `out`, growing `out` with what
/// is read (doubling from at most 8 MiB) and never reserving past `limit` bytes more than it
/// held: the capacity is bounded exactly, not within a factor of two.
pub fn read_bounded(mut reader: impl Read, limit: u64, out: &mut Vec<u8>) -> io::Result<()> {
    let base = out.len();
    let cap_at = base.saturating_add(usize::try_from(limit).unwrap_or(usize::MAX));
    out.reserve_exact((cap_at - base).min(INITIAL_RESERVE));
    while out.len() < cap_at {
        if out.len() == out.capacity() {
            let grown = out.capacity().saturating_mul(2).min(cap_at);
            out.reserve_exact(grown - out.len());
        }
        // Reads into the room there is: `read_to_end` grows a full buffer only when the reader
        // has more, which `take` forbids.
        let room = out.capacity().min(cap_at) - out.len();
        let n = (&mut reader).take(room as u64).read_to_end(out)?;
        if n < room {
            break;
        }
    }
    Ok(())
}

/// The most YAML nodes a document may expand to (aliases counted at every use).
pub const MAX_YAML_NODES: u64 = 1_000_000;

/// The deepest YAML nesting accepted.
pub const MAX_YAML_DEPTH: usize = 256;

/// YAML text that cannot be loaded within the bounds of [`load_yaml`].
#[derive(Debug, thiserror::Error)]
pub enum YamlLoadError {
    /// Not YAML.
    #[error(transparent)]
    Scan(#[from] yaml_rust2::ScanError),
    /// Aliases that would expand the document beyond [`MAX_YAML_NODES`] nodes.
    #[error(
        "the document expands to more than {MAX_YAML_NODES} nodes (aliases counted at every use)"
    )]
    TooLarge,
    /// Nesting deeper than [`MAX_YAML_DEPTH`].
    #[error("the document nests deeper than {MAX_YAML_DEPTH} levels")]
    TooDeep,
}

/// Counts the nodes a document expands to and its depth, from the parser's events.
#[derive(Default)]
struct YamlBudget {
    nodes: u64,
    /// Open collections: their anchor and the node count when they started.
    open: Vec<(usize, u64)>,
    /// Nodes behind each anchor.
    anchors: HashMap<usize, u64>,
}

impl YamlBudget {
    /// Counts one parser event.
    fn count(&mut self, event: yaml_rust2::Event) -> Result<(), YamlLoadError> {
        use yaml_rust2::Event;
        match event {
            Event::Scalar(_, _, anchor, _) => {
                self.nodes += 1;
                if anchor > 0 {
                    self.anchors.insert(anchor, 1);
                }
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                self.open.push((anchor, self.nodes));
                self.nodes += 1;
                if self.open.len() > MAX_YAML_DEPTH {
                    return Err(YamlLoadError::TooDeep);
                }
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, start)) = self.open.pop() {
                    if anchor > 0 {
                        self.anchors.insert(anchor, self.nodes - start);
                    }
                }
            }
            Event::Alias(id) => {
                let behind = self.anchors.get(&id).copied().unwrap_or(1);
                self.nodes = self.nodes.saturating_add(behind);
            }
            _ => {}
        }
        match self.nodes > MAX_YAML_NODES {
            true => Err(YamlLoadError::TooLarge),
            false => Ok(()),
        }
    }
}

/// Loads the YAML documents of `text` once a first pass over the parser's events has found
/// that they stay within [`MAX_YAML_NODES`] and [`MAX_YAML_DEPTH`]. (The pass pulls the events
/// one by one: the parser's own `load` and the loader recurse once per nesting level, so a
/// deeply nested document would overflow the stack before anything could count it.)
pub fn load_yaml(text: &str) -> Result<Vec<yaml_rust2::Yaml>, YamlLoadError> {
    let mut budget = YamlBudget::default();
    let mut parser = yaml_rust2::parser::Parser::new_from_str(text);
    loop {
        let (event, _) = parser.next_token()?;
        if event == yaml_rust2::Event::StreamEnd {
            break;
        }
        budget.count(event)?;
    }
    Ok(yaml_rust2::YamlLoader::load_from_str(text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_checked_against_the_bytes_left() {
        assert_eq!(check_len(4, 2, 8), Ok(4));
        assert_eq!(check_len(0, 8, 0), Ok(0));
        assert_eq!(check_len(3, 0, 3), Ok(3));
        let e = check_len(5, 2, 8).unwrap_err();
        assert_eq!((e.len, e.elem_size, e.remaining), (5, 2, 8));
        assert!(check_len(u64::MAX, 8, usize::MAX).is_err());
        assert!(check_len(1 << 62, 16, usize::MAX).is_err());
        assert!(vec_for::<u64>(1 << 40, 8, 100).is_err());
        assert!(vec_for::<u64>(12, 8, 100).unwrap().capacity() >= 12);
    }

    #[test]
    fn chunk_sizes_are_capped_and_the_cap_is_overridable() {
        assert_eq!(check_chunk_size(1024), Ok(1024));
        let e = check_chunk_size(15 << 30).unwrap_err();
        assert_eq!(e.size, 15 << 30);
        assert!(e.to_string().contains(MAX_CHUNK_ENV), "{e}");
    }

    /// The buffer doubles as it fills but stops at the declared size plus one: 10 MB declared
    /// used to take 16 MiB (8 MiB reserved, doubled once), 2 GiB declared could take 4.
    #[test]
    fn the_decompression_buffer_never_exceeds_its_bound() {
        let declared = 10_000_000;
        let mut out = Vec::new();
        read_declared(io::repeat(0).take(20 << 20), declared, &mut out).unwrap();
        assert_eq!(out.len(), declared + 1);
        assert_eq!(out.capacity(), declared + 1);
        // What was there stays; the bound counts from it.
        let mut out = vec![1u8; 100];
        read_bounded(io::repeat(0).take(20 << 20), 9 << 20, &mut out).unwrap();
        assert_eq!(
            (out.len(), out.capacity()),
            (100 + (9 << 20), 100 + (9 << 20))
        );
        // A short stream ends the read.
        let mut out = Vec::new();
        read_bounded(&[5u8; 3][..], 1 << 40, &mut out).unwrap();
        assert_eq!(out, [5, 5, 5]);
    }

    #[test]
    fn decoding_stops_one_byte_past_the_declared_size() {
        let data = vec![7u8; 1000];
        let mut out = Vec::new();
        read_declared(&data[..], 10, &mut out).unwrap();
        assert_eq!(out.len(), 11);
        out.clear();
        read_declared(&data[..], usize::MAX - 1, &mut out).unwrap();
        assert_eq!(out.len(), 1000);
        assert!(out.capacity() < 1 << 24, "reserved {}", out.capacity());
    }

    /// A "billion laughs" document of a few hundred bytes is refused before it is expanded; the
    /// loader alone would copy the first anchor 10^9 times.
    #[test]
    fn yaml_aliases_are_counted_at_every_use() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        assert!(text.len() < 1000);
        assert!(matches!(load_yaml(&text), Err(YamlLoadError::TooLarge)));
        let deep = "- ".repeat(10_000) + "x\n";
        assert!(matches!(load_yaml(&deep), Err(YamlLoadError::TooDeep)));
        let fine = load_yaml("a: &x [1, 2]\nb: *x\n").unwrap();
        assert_eq!(fine[0]["b"][1].as_i64(), Some(2));
        assert!(matches!(load_yaml("a: [1"), Err(YamlLoadError::Scan(_))));
    }
}
