//! What the checker tells the commands: its configuration, findings,
//! verdicts, and what it learned of each line and run.

use std::io;
use std::sync::Arc;

use super::Protocol;
use super::schema::EventSchema;
use crate::rules::{Levels, Rule, Severity};

/// The checker's plain configuration (made from the command line in cli.rs).
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
    /// `--protocol`: `None` is `auto`, decided per run (DESIGN §9).
    pub protocol: Option<Protocol>,
    /// The ndjson discriminator (`--type-field`).
    pub type_field: String,
    /// ndjson: the types that open and end a run (`--first`, `--last`).
    pub first: Option<String>,
    pub last: Option<String>,
    /// `--secret-name`: more names whose values are secrets (exact).
    pub secret_names: Vec<String>,
    /// `verify --schema`: the events' JSON Schema, compiled.
    pub schema: Option<Arc<EventSchema>>,
}

/// `--expect-schema NAME[@MAJOR]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaPin {
    pub name: String,
    pub major: Option<u64>,
}

/// One finding: a rule broken at a line.
#[derive(Clone, Debug)]
pub struct Finding {
    pub rule: Rule,
    pub severity: Severity,
    /// 1-based; 0 when the finding is about the input as a whole.
    pub line: u64,
    pub run: Option<String>,
    pub seq: Option<u64>,
    pub message: String,
    pub column: Option<usize>,
    /// `seq.gap` / `seq.not-from-zero`: first, last and count of the missing.
    pub missing: Option<(u64, u64, u64)>,
    /// `event.schema-invalid`: where in the event and the schema.
    pub place: Option<Box<SchemaPlace>>,
}

/// Where an event failed its schema (DESIGN §11).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaPlace {
    /// A JSON pointer into the event ("" is the whole event).
    pub instance_path: String,
    /// The JSON Schema keyword that failed (`type`, `required`, ...).
    pub keyword: String,
    /// A JSON pointer to that keyword in the schema document.
    pub schema_path: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Failed,
    Retryable,
    Nonconforming,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Failed => "failed",
            Verdict::Retryable => "retryable",
            Verdict::Nonconforming => "nonconforming",
        }
    }
}

/// The retry-critical fields of the error that decided a failure (§13.1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cause {
    pub origin: Option<String>,
    pub category: Option<String>,
    pub code: Option<String>,
    pub retryable: bool,
    pub retry_after_ms: Option<u64>,
}

/// What a stream says it is (§5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub tool: Option<String>,
    pub tool_version: Option<String>,
    pub aoi_version: Option<String>,
    pub schema_name: Option<String>,
    pub schema_version: Option<String>,
    pub command: Option<String>,
}

/// A judged run.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub run: Option<String>,
    /// The run id's raw bytes (the JSON string's inside), if it has one.
    pub id: Option<Box<[u8]>>,
    pub first_line: u64,
    pub lines: u64,
    pub verdict: Verdict,
    /// One sentence a person understands without the spec.
    pub message: String,
    pub cause: Option<Cause>,
    pub identity: Option<Identity>,
    pub domain_events: u64,
    pub warnings: u64,
    pub errors: u64,
    /// Events missing by seq (gaps and a cut head), repeated seqs, and
    /// whether the run numbers its events at all.
    pub missing: u64,
    pub repeats: u64,
    pub uses_seq: bool,
    pub error_findings: u64,
    pub protocol: Protocol,
}

/// Where findings and verdicts go.
pub trait Sink {
    fn finding(&mut self, f: &Finding) -> io::Result<()>;
    fn run(&mut self, r: &RunReport) -> io::Result<()>;
}

/// What the checker learned of a line, for commands that pass lines on.
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    /// A JSON object with a string `type` and no reserved key twice: an
    /// event that can be passed on.
    pub event: bool,
    /// Its decoded type is `aoi:*`.
    pub framework: bool,
    /// The protocol of the run the line went to.
    pub protocol: Protocol,
    /// The line names a run already judged (multi-run): it is reported,
    /// and belongs to no open run.
    pub late: bool,
}

/// The run a line went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOf<'a> {
    /// A run with an `aoi.run` id (its decoded bytes).
    Named(&'a [u8]),
    /// A run without an id, opened by an `aoi:meta` at this line.
    Anonymous { first_line: u64 },
    /// Lines that no run id or meta claims.
    Nowhere,
}

impl RunOf<'_> {
    pub(crate) fn of(id: Option<&[u8]>, first_line: u64, meta: bool) -> RunOf<'_> {
        match id {
            Some(id) => RunOf::Named(id),
            None if meta => RunOf::Anonymous { first_line },
            None => RunOf::Nowhere,
        }
    }
}

/// A run as commands file it: by id, by the line of the meta that opened
/// it, or nowhere.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RunKey {
    Id(Box<[u8]>),
    FromLine(u64),
    Nowhere,
}

impl RunKey {
    pub fn of(run: RunOf<'_>) -> RunKey {
        match run {
            RunOf::Named(id) => RunKey::Id(id.into()),
            RunOf::Anonymous { first_line } => RunKey::FromLine(first_line),
            RunOf::Nowhere => RunKey::Nowhere,
        }
    }

    /// Is this the key of `run`? (Without building one.)
    pub fn is(&self, run: RunOf<'_>) -> bool {
        match (self, run) {
            (RunKey::Id(a), RunOf::Named(b)) => &a[..] == b,
            (RunKey::FromLine(a), RunOf::Anonymous { first_line }) => *a == first_line,
            (RunKey::Nowhere, RunOf::Nowhere) => true,
            _ => false,
        }
    }

    pub fn of_report(r: &RunReport) -> RunKey {
        match &r.id {
            Some(id) => RunKey::Id(id.clone()),
            None if r.identity.is_some() || r.protocol.runs_by_position() => {
                RunKey::FromLine(r.first_line)
            }
            None => RunKey::Nowhere,
        }
    }
}
