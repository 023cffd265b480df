//! aoitap: check, relay and inspect AOI-CLI event streams.
//!
//! The binary is `src/main.rs`; the modules live here so that benchmarks
//! can drive the scanner and the checker directly.

pub mod check;
pub mod cli;
pub mod cmd;
pub mod discover;
pub mod emit;
pub mod event;
pub mod exit;
pub mod man;
pub mod pipeline;
pub mod redact;
pub mod rules;
pub mod scan;
pub mod signal;
pub mod source;
