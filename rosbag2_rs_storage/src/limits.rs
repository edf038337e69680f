//! Bounds on what a size read from a file or the wire may make this process allocate.
//!
//! A size found in untrusted input (a record length, an element count, a chunk's declared
//! decompressed size) never reserves memory by itself:
//!
//! - [`check_len`] checks a length against the bytes that can still hold it (the rest of the
//!   enclosing record, chunk or file) and [`vec_for`] reserves only after that check: the one
//!   place every parser goes through to turn a parsed count into a reservation.
//! - [`read_declared`] streams a decoder into a buffer that grows with what actually
//!   decompresses (`take(declared + 1)`), so a header lying about its size costs no more than the
//!   data really decodes to, and one byte past the declared size reveals the lie.
//! - [`check_chunk_size`] refuses a declared decompressed chunk (MCAP or ROS 1 chunk, zstd
//!   message) larger than [`max_chunk_bytes`]: [`DEFAULT_MAX_CHUNK_BYTES`] (1 GiB, well under a
//!   small robot's memory, and far above what recorders write: rosbag2 and `rosbag record`
//!   chunks are a few MiB), overridden by the environment variable [`MAX_CHUNK_ENV`] or by
//!   [`set_max_chunk_bytes`].
//! - [`load_yaml`] loads YAML (`metadata.yaml`, QoS profiles and overrides, storage config
//!   files) only when its aliases would not expand beyond [`MAX_YAML_NODES`] nodes nor nest
//!   deeper than [`MAX_YAML_DEPTH`]: the loader copies an aliased node at every use (a "billion
//!   laughs" file of a few hundred bytes would otherwise expand to gigabytes), and drops nested
//!   nodes recursively.

use std::collections::HashMap;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The length checks every parser goes through (shared with the codec, which decodes messages).
pub use rosbag2_rs_codec::limits::{check_len, vec_for, LengthPastEnd};

/// The default cap on one decompressed chunk or message: 1 GiB.
pub const DEFAULT_MAX_CHUNK_BYTES: u64 = 1 << 30;

/// The environment variable that overrides [`DEFAULT_MAX_CHUNK_BYTES`] (a number of bytes).
pub const MAX_CHUNK_ENV: &str = "ROSBAG2_RS_MAX_CHUNK_BYTES";

/// Bytes reserved up front for a decompression, at most: beyond that the buffer grows with
/// what decompresses.
const INITIAL_RESERVE: usize = 8 << 20;

/// A cap set by [`set_max_chunk_bytes`] (0: none set).
static OVERRIDE: AtomicU64 = AtomicU64::new(0);

/// The cap on one decompressed chunk or message, in bytes (see the module documentation).
pub fn max_chunk_bytes() -> u64 {
    match OVERRIDE.load(Ordering::Relaxed) {
        0 => *FROM_ENV.get_or_init(|| {
            std::env::var(MAX_CHUNK_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&n| n > 0)
                .unwrap_or(DEFAULT_MAX_CHUNK_BYTES)
        }),
        n => n,
    }
}

static FROM_ENV: OnceLock<u64> = OnceLock::new();

/// Sets the cap on one decompressed chunk or message for this process (0 restores the default
/// or the environment's value).
pub fn set_max_chunk_bytes(bytes: u64) {
    OVERRIDE.store(bytes, Ordering::Relaxed);
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

/// Appends what `decoder` produces to `out`, at most `declared + 1` bytes (one more than
/// declared shows a size field that lies; the caller compares). The buffer grows with what
/// actually decodes: at most `min(declared, 8 MiB)` is reserved up front.
pub fn read_declared(decoder: impl Read, declared: usize, out: &mut Vec<u8>) -> io::Result<()> {
    out.reserve(declared.min(INITIAL_RESERVE));
    decoder
        .take((declared as u64).saturating_add(1))
        .read_to_end(out)
        .map(drop)
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
