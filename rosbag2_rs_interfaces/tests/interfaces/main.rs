//! The interface types and their CDR: every type, golden bytes from rosbags, malformed input (one
//! test binary, one module per concern).

mod all_types;
mod cdr_golden;
mod malformed;
