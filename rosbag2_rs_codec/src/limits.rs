//! Bounds on lengths read from untrusted input: a count or size taken from a file or the wire is
//! checked against the bytes that remain before anything is allocated for it.

/// A length read from the input that the bytes left cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a length of {len} (of at least {elem_size} bytes each) does not fit in the {remaining} bytes left")]
pub struct LengthPastEnd {
    /// The length read.
    pub len: u64,
    /// The least number of bytes each counted element takes.
    pub elem_size: usize,
    /// The bytes left to hold them.
    pub remaining: usize,
}

/// `len` as a `usize` when `len` elements of at least `elem_size` bytes each (a zero size
/// counts as one byte) fit in the `remaining` bytes.
pub fn check_len(len: u64, elem_size: usize, remaining: usize) -> Result<usize, LengthPastEnd> {
    let error = LengthPastEnd {
        len,
        elem_size,
        remaining,
    };
    let n = usize::try_from(len).map_err(|_| error)?;
    match n.checked_mul(elem_size.max(1)) {
        Some(bytes) if bytes <= remaining => Ok(n),
        _ => Err(error),
    }
}

/// An empty vector with room for `len` elements, once [`check_len`] has found that they fit in
/// the `remaining` bytes.
pub fn vec_for<T>(len: u64, elem_size: usize, remaining: usize) -> Result<Vec<T>, LengthPastEnd> {
    check_len(len, elem_size, remaining).map(Vec::with_capacity)
}
