//! aoitap: check, relay and inspect AOI-CLI event streams.
//!
//! The binary is `src/main.rs`; the modules live here so that benchmarks
//! can drive the scanner and the checker directly.

/// A line on stderr that never panics: a closed or full stderr loses the
/// message, never the exit status (docs/contract.md §3.2).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// As `say!`, without the line end (progress displays).
#[macro_export]
macro_rules! say_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// How many cases each property test tries: `AOITAP_PROPTEST_CASES`,
/// default 256 (the integration tests read the same variable).
#[cfg(test)]
pub(crate) fn proptest_cases() -> u32 {
    std::env::var("AOITAP_PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

pub mod check;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod exit;
pub mod input;
pub mod json;
pub mod output;
pub mod signal;
pub mod stream;
pub mod text;
