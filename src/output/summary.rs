//! What summarize counted of a run (docs/contract.md §1.2), and the serialized run
//! (`RunSummary`) the machine formats write, run by run, so that no
//! report holds more than one run at a time (docs/contract.md §3.3).

use std::io::{self, IsTerminal};

use serde::Serialize;

use crate::check::{Identity, RunVerdict};

/// What summarize counted of one run, as its reports show it.
pub struct Counted<'a> {
    pub lines: u64,
    /// The number of the run's last line (its first's is the verdict's).
    pub last_line: u64,
    pub bytes: u64,
    /// Counts by type name, sorted by name.
    pub domain: &'a [(&'a str, u64)],
    pub framework: &'a [(&'a str, u64)],
    pub warnings: &'a [Problem],
    pub errors: &'a [Problem],
    pub outcome: Option<&'a Ending>,
}

/// A warning or error code of a run: how often, and where first.
#[derive(Serialize)]
pub struct Problem {
    pub category: String,
    pub code: String,
    pub count: u64,
    pub first_message: String,
    pub first_line: u64,
}

/// How the run said it ended: its `aoi:summary`, or AFDATA's terminal
/// event.
#[derive(Default, Serialize)]
pub struct Ending {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    pub next_cursor: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
}

/// The width of the terminal on standard output, if it is one.
pub fn terminal_width() -> Option<usize> {
    let out = io::stdout();
    if !out.is_terminal() {
        return None;
    }
    let cols = rustix::termios::tcgetwinsize(&out).map_or(0, |w| usize::from(w.ws_col));
    Some(if cols > 0 { cols } else { 80 })
}

/// A `run_summary` event (also each run of `--output json`, with `file`).
#[derive(Serialize)]
pub struct RunSummary<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a str>,
    first_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aoi_version: Option<&'a str>,
    lines: u64,
    bytes: u64,
    domain_types: ByName<'a>,
    framework_types: ByName<'a>,
    warnings: &'a [Problem],
    errors: &'a [Problem],
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<&'a Ending>,
    seq: SeqShape,
    protocol: &'a str,
    verdict: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct SeqShape {
    numbered: bool,
    complete: bool,
    missing: u64,
    repeats: u64,
}

impl<'a> RunSummary<'a> {
    pub fn of(file: Option<&'a str>, r: &'a RunVerdict, c: &Counted<'a>) -> RunSummary<'a> {
        let id =
            |f: fn(&Identity) -> &Option<String>| r.identity.as_ref().and_then(|i| f(i).as_deref());
        RunSummary {
            file,
            run: r.run.as_deref(),
            first_line: r.first_line,
            tool: id(|i| &i.tool),
            tool_version: id(|i| &i.tool_version),
            command: id(|i| &i.command),
            schema_name: id(|i| &i.schema_name),
            schema_version: id(|i| &i.schema_version),
            aoi_version: id(|i| &i.aoi_version),
            lines: c.lines,
            bytes: c.bytes,
            domain_types: ByName(c.domain),
            framework_types: ByName(c.framework),
            warnings: c.warnings,
            errors: c.errors,
            outcome: c.outcome,
            seq: SeqShape {
                numbered: r.uses_seq,
                complete: r.uses_seq && r.missing == 0 && r.repeats == 0,
                missing: r.missing,
                repeats: r.repeats,
            },
            protocol: r.protocol.name(),
            verdict: r.verdict.name(),
            message: &r.message,
        }
    }
}

/// Counts by name, sorted by it, written as a JSON object.
struct ByName<'a>(&'a [(&'a str, u64)]);

impl Serialize for ByName<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, n)| (k, n)))
    }
}
