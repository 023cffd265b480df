//! The tests that need more than Rust and what Debian ships with it:
//! headless Chromium (`html`), `cargo install` and maturin with a fresh
//! HOME (`install`), pyspark and duckdb (`spark`). `cargo test` leaves
//! this target out (`test = false` in Cargo.toml); `.ci/run` runs it with
//! every peer required:
//!
//!     AOITAP_PEERS=require cargo test --profile quick --test peers

// Measurements are reported on stderr (`--nocapture`).
#![allow(clippy::print_stderr)]

// The harness the integration tests share; this target uses part of it.
#[allow(dead_code)]
mod util;

mod html;
mod install;
mod spark;
