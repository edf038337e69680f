//! RealSense recordings: a crafted recording, the .db3 layout, options, playback and topic kinds
//! (one test binary, one module per concern).

pub mod crafted;
mod db3_layout;
mod options;
mod playback;
mod topic_kinds;
