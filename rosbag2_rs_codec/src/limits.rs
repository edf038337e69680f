//! Bounds on lengths read from untrusted input: a count or size taken from a file or the wire is
//! checked against the bytes that remain before anything is allocated for it ([`check_len`]),
//! and the elements a whole message decodes to are counted against a budget ([`ElementBudget`]).
//! A budget is a [`Limit`]: a default, an environment variable, an override.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

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

/// One budget on what untrusted input may make this process hold: a documented default, an
/// environment variable that overrides it, and an override a program sets with [`Limit::set`]
/// (the command line's options). `storage::limits` lists every budget in one place.
#[derive(Debug)]
pub struct Limit {
    /// What the budget bounds, for errors ("decoded elements per message").
    pub what: &'static str,
    /// The environment variable that overrides [`Limit::default`] (a positive integer).
    pub env: &'static str,
    /// The value in force when neither the environment nor [`Limit::set`] says otherwise.
    pub default: u64,
    set: AtomicU64,
    from_env: OnceLock<u64>,
}

impl Limit {
    /// A budget of `default`, overridden by the environment variable `env`.
    pub const fn new(what: &'static str, env: &'static str, default: u64) -> Self {
        Self {
            what,
            env,
            default,
            set: AtomicU64::new(0),
            from_env: OnceLock::new(),
        }
    }

    /// The value in force: set by [`Limit::set`], else from the environment (read once), else
    /// the default.
    pub fn get(&self) -> u64 {
        match self.set.load(Ordering::Relaxed) {
            0 => *self.from_env.get_or_init(|| {
                std::env::var(self.env)
                    .ok()
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .filter(|&n| n > 0)
                    .unwrap_or(self.default)
            }),
            n => n,
        }
    }

    /// Sets the value for this process (0 restores the environment's value or the default).
    pub fn set(&self, value: u64) {
        self.set.store(value, Ordering::Relaxed);
    }
}

/// The budget of elements that take no bytes on the wire (`std_msgs/Empty` in ROS 1, a
/// message of empty fixed arrays), per message, nested arrays included: they cost nothing to
/// send and tens of bytes each to decode (one byte each once converted to CDR), so a few KB
/// could claim billions. Elements that take bytes are bounded by the bytes already. Default
/// 2^20 (about 32 MiB of decoded values), environment variable `ROSBAG2_RS_MAX_EMPTY_ELEMENTS`.
pub static EMPTY_ELEMENTS: Limit = Limit::new(
    "elements of no wire size per message",
    "ROSBAG2_RS_MAX_EMPTY_ELEMENTS",
    1 << 20,
);

/// The budget of pixels of one decoded image frame.
pub static IMAGE_PIXELS: Limit = Limit::new(
    "pixels per image frame",
    "ROSBAG2_RS_MAX_IMAGE_PIXELS",
    1 << 26,
);

/// An image whose header claims more pixels than [`IMAGE_PIXELS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the image claims {width} x {height} pixels, more than the budget of {budget} pixels per frame (set {} to raise it)", IMAGE_PIXELS.env)]
pub struct TooManyPixels {
    /// The width it claims.
    pub width: u32,
    /// The height it claims.
    pub height: u32,
    /// The budget in force.
    pub budget: u64,
}

/// Checks an image's claimed size against [`IMAGE_PIXELS`] before its pixels are allocated.
pub fn check_pixels(width: u32, height: u32) -> Result<(), TooManyPixels> {
    let budget = IMAGE_PIXELS.get();
    match u64::from(width) * u64::from(height) > budget {
        true => Err(TooManyPixels {
            width,
            height,
            budget,
        }),
        false => Ok(()),
    }
}

/// The budget of fields in a type description from another node, its referenced types' fields
/// included, before a type is built from it at run time (the rcl backend). ROS 2's largest
/// messages have a few hundred. Default 10,000, environment variable
/// `ROSBAG2_RS_MAX_DESCRIPTION_FIELDS`.
pub static DESCRIPTION_FIELDS: Limit = Limit::new(
    "fields of a type description from another node",
    "ROSBAG2_RS_MAX_DESCRIPTION_FIELDS",
    10_000,
);

/// The budget of elements of fixed-size arrays in one message of a type described by another
/// node (arrays of nested types multiplied out): a type built at run time allocates them whole
/// for every sample. Default 2^24, environment variable `ROSBAG2_RS_MAX_FIXED_ELEMENTS`.
pub static FIXED_ELEMENTS: Limit = Limit::new(
    "elements of fixed-size arrays per message of a type from another node",
    "ROSBAG2_RS_MAX_FIXED_ELEMENTS",
    1 << 24,
);

/// The budget of types built at run time from other nodes' descriptions, per process: rcl's
/// run-time type supports cannot be freed safely (the rcl backend keeps them for the process's
/// life), so a peer announcing ever new types would grow memory without it. Default 256,
/// environment variable `ROSBAG2_RS_MAX_RUNTIME_TYPES`.
pub static RUNTIME_TYPES: Limit = Limit::new(
    "types built at run time from other nodes' descriptions",
    "ROSBAG2_RS_MAX_RUNTIME_TYPES",
    256,
);

/// A message whose arrays of elements of no wire size claim more than [`EMPTY_ELEMENTS`] in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{claimed} elements of no wire size in all, more than the budget of {budget} per message (set {} to raise it)", EMPTY_ELEMENTS.env)]
pub struct TooManyElements {
    /// The elements counted so far plus those the array at hand claims.
    pub claimed: u64,
    /// The budget in force.
    pub budget: u64,
}

/// Counts the elements of no wire size decoded from one message against [`EMPTY_ELEMENTS`].
#[derive(Debug, Clone, Copy)]
pub struct ElementBudget {
    spent: u64,
    budget: u64,
}

impl ElementBudget {
    /// The budget of one message ([`EMPTY_ELEMENTS`] in force).
    pub fn per_message() -> Self {
        Self {
            spent: 0,
            budget: EMPTY_ELEMENTS.get(),
        }
    }

    /// Counts `n` more elements, before anything is decoded or allocated for them.
    pub fn spend(&mut self, n: usize) -> Result<(), TooManyElements> {
        let claimed = self.spent.saturating_add(n as u64);
        if claimed > self.budget {
            return Err(TooManyElements {
                claimed,
                budget: self.budget,
            });
        }
        self.spent = claimed;
        Ok(())
    }
}
