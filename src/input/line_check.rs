//! Work done on each line where its batch is parsed, on whichever thread
//! parses it (`--schema` validation is the heavier side of a batch, so both
//! cores share it). input defines the trait and what it finds; check's
//! event schema implements it, so input never imports check (STYLE,
//! layers).

use crate::json::Event;

/// A check of one parsed object line.
pub trait LineCheck: Send + Sync {
    fn check(&self, ev: &Event<'_>) -> Validity;
}

/// What checking one event found.
pub enum Validity {
    Valid,
    Invalid(Invalid),
    /// Not checked, and why (for `--schema`: nested past its depth, or a
    /// `pattern` the regex engine gave up on).
    Unchecked(String),
}

/// Why an event does not validate: its most specific error.
pub struct Invalid {
    /// `hit: /rank: "1" is not of type "integer"`, with `(and N more)`.
    pub message: String,
    pub place: SchemaPlace,
}

/// Where an event failed its schema (docs/contract.md §3.5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaPlace {
    /// A JSON pointer into the event ("" is the whole event).
    pub instance_path: String,
    /// The JSON Schema keyword that failed (`type`, `required`, ...).
    pub keyword: String,
    /// A JSON pointer to that keyword in the schema document.
    pub schema_path: String,
}
