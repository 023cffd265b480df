//! The checker's plain configuration, made from the command line in
//! `cli`: what the rules are told beyond the lines themselves.

use std::sync::Arc;

use super::protocol::Protocol;
use super::rules::Levels;
use super::schema::EventSchema;

/// The checker's plain configuration (made from the command line in `cli::lower`).
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub multi_run: bool,
    pub unbounded: bool,
    pub accept_partial: bool,
    pub continue_on_error: bool,
    pub expect_schema: Option<SchemaPin>,
    pub levels: Levels,
    /// `--marker` patterns, beside the built-in elision markers.
    pub markers: Vec<String>,
    /// `--max-line-bytes`, named in `line.too-long` (0: not given).
    pub max_line_bytes: usize,
    /// `--protocol`: `None` is `auto`, decided per run (docs/contract.md §9).
    pub protocol: Option<Protocol>,
    /// The ndjson discriminator (`--type-field`).
    pub type_field: String,
    /// ndjson: the types that open and end a run (`--first`, `--last`).
    pub first: Option<String>,
    pub last: Option<String>,
    /// `--names afdata`: AFDATA's suffix types held in every run, not only
    /// AFDATA's (docs/contract.md §18).
    pub afdata_names: bool,
    /// `--secret-name`: more names whose values are secrets (exact).
    pub secret_names: Vec<String>,
    /// `--redact`: the command writes lines out redacted, so a finding
    /// about a line it withholds says so.
    pub redact: bool,
    /// `verify --schema`: the events' JSON Schema, compiled.
    pub schema: Option<Arc<EventSchema>>,
}

/// `--expect-schema NAME[@MAJOR]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaPin {
    pub name: String,
    pub major: Option<u64>,
}
