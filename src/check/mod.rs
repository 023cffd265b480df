//! The checker and the rules it applies (docs/contract.md §3.1, §4.1): every line
//! through the line rules, every event through its run's protocol, every
//! run to one verdict.
//!
//! A line travels `checker.rs` (what the line is: the line rules, then for
//! an event the secrets and `--schema` checks every protocol shares; the
//! lines of a pretty-printed document are held by `document.rs` until it
//! closes, and judged as one event) ->
//! `runs.rs` (which run it belongs to) -> `protocols/` (the rules of the
//! run's protocol, which keep `run_state.rs`: what every protocol shares,
//! and a part whose type is the protocol's own) -> `finding.rs` (each
//! finding, filled in and sent); a run's end goes to `verdict.rs`, in
//! the words its protocol's `Contract::end` gives.
//! `config.rs` is what the command line tells the checker, the names of
//! the protocols among it (`protocols/` holds their rules, and
//! `protocols/detect.rs` tells which one a run's first object reads as);
//! `id.rs` bounds run ids in bytes. `rules.rs` is the catalogue: a rule is
//! raised as `Rule::Variant` where it is checked (`grep -rn Rule::SeqGap`),
//! in `protocols/` or, for line rules, `checker.rs`. `seq.rs` (seq steps,
//! shared with reconcile), `secrets/`, `marker.rs` and `schema.rs` are the
//! checks the rules call; `tally.rs` is what a command's exit status is
//! made from. `secrets/` is also what `--redact` writes (`redaction`) and
//! what a report may quote (`quotable`).

mod checker;
mod common;
mod config;
mod decision;
mod document;
mod finding;
mod id;
pub mod lint_checks;
mod marker;
pub mod profiles;
mod protocols;
pub mod rules;
mod run_state;
mod runs;
pub mod schema;
mod secrets;
mod seq;
mod tally;
mod verdict;

pub use checker::{Checker, Stalls};
pub use config::{Config, Protocol, SchemaPin};
pub use decision::Decision;
pub use document::Passed;
pub use finding::{Discard, Finding, SchemaPlace, Sink};
pub use id::{ByDigest, digest, id_key};
pub use marker::Markers;
pub use profiles::ProfileRef;
pub use protocols::detect::major;
pub use protocols::{
    Captured, Exited, LineKind, Mapping, OKF_MAX_ERROR_BYTES, Outcomes, Payload, Problem, Reading,
    SeqPlace, identity, identity_text, payload_retry_after_ms, protocol_names, protocols_named_for,
};
pub use run_state::{Cause, Identity};
pub use runs::{OpenRun, Run, RunKey, RunRef};
pub use secrets::{
    Exposure, Withholding, is_secret_name, is_sensitive_name, quotable, redact, redaction,
};
pub use seq::{SeqStep, SeqTrack};
pub use tally::Tally;
pub use verdict::{Hint, RunVerdict, Verdict};
