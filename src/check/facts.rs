//! What the checker tells the commands: its configuration, findings,
//! verdicts, and what it learned of each line and run.

use std::io;
use std::sync::Arc;

use super::Protocol;
use super::schema::EventSchema;
use crate::check::rules::{Levels, Rule, Severity};

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

pub use crate::input::line_check::SchemaPlace;

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
pub struct RunVerdict {
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
    fn run(&mut self, r: &RunVerdict) -> io::Result<()>;
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
    /// How the checker stepped the run's seq on this line: reconcile keeps
    /// its account in the same steps, so the two count the same gaps.
    pub seq: SeqSeen,
}

/// A line's place in its run's seq (AOI 1.x, spec §8.1).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum SeqSeen {
    /// Not followed (another protocol, or ids past the per-run cap).
    #[default]
    Untracked,
    /// It takes a step, but carries no seq that can be counted (none, or
    /// not an integer in 64 bits): one step, as for an unreadable line.
    Skipped,
    /// At this seq.
    At(u64),
}

/// A run as the commands tell runs apart: by its `aoi.run` id (decoded
/// bytes), by the line of the `aoi:meta` that opened an id-less run, or
/// nowhere (lines no id or meta claims). The id is borrowed while a line is
/// judged (`RunRef`) and owned where a command keeps per-run state
/// (`RunKey`): one shape, so the two cannot drift apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Run<Id> {
    Id(Id),
    FromLine(u64),
    Nowhere,
}

/// The run of the line being judged.
pub type RunRef<'a> = Run<&'a [u8]>;

/// A run as a key of per-run state.
pub type RunKey = Run<Box<[u8]>>;

impl<'a> RunRef<'a> {
    pub(crate) fn of(id: Option<&'a [u8]>, first_line: u64, meta: bool) -> RunRef<'a> {
        match id {
            Some(id) => Run::Id(id),
            None if meta => Run::FromLine(first_line),
            None => Run::Nowhere,
        }
    }

    pub fn to_key(self) -> RunKey {
        match self {
            Run::Id(id) => Run::Id(id.into()),
            Run::FromLine(n) => Run::FromLine(n),
            Run::Nowhere => Run::Nowhere,
        }
    }
}

impl RunKey {
    pub fn as_ref(&self) -> RunRef<'_> {
        match self {
            Run::Id(id) => Run::Id(id),
            Run::FromLine(n) => Run::FromLine(*n),
            Run::Nowhere => Run::Nowhere,
        }
    }

    pub fn of_report(r: &RunVerdict) -> RunKey {
        match &r.id {
            Some(id) => Run::Id(id.clone()),
            None if r.identity.is_some() || r.protocol.runs_by_position() => {
                Run::FromLine(r.first_line)
            }
            None => Run::Nowhere,
        }
    }
}
