//! One printer per report format, chosen once (`choose`), each owning
//! its writer and its own state. A printer says a report's parts its
//! format's way; the emitter (`mod.rs`) keeps what every format shares:
//! `--limit`, the input's name, the command's result words. A printer
//! writes; it decides nothing: which findings count and what the exit
//! status is were settled before a printer sees them.
//!
//! Two traits, by what a report is made of: `Printer`, the stream every
//! command writes (findings, verdicts, a command's own items), and
//! `Table` (`table.rs`), the block per run of summarize and reconcile.
//! Every method has a default that writes nothing, so a format says only
//! what it carries; `-q` is a printer that keeps them all.

use std::io;

use crate::check::{Finding, OpenRun, RunVerdict, Tally};
use crate::exit::Exit;
use serde::Serialize;

use crate::output::style::Style;

/// What the emitter tells a printer with every call.
pub struct At<'a> {
    pub command: &'a str,
    /// The input being read, as findings name it.
    pub file: &'a str,
    pub style: &'a Style,
    /// Findings `--limit` has left out so far.
    pub dropped: u64,
    /// The summary's `reason` when it is not the exit's own (`timeout`).
    pub reason: Option<&'static str>,
    /// The result line, when the command words its own (lint).
    pub result: Option<&'a str>,
}

impl At<'_> {
    pub fn timed_out(&self) -> bool {
        self.reason == Some("timeout")
    }

    /// Under `run` the input is a command, which no annotation can name.
    pub fn input_file(&self) -> Option<&str> {
        (self.command != "run").then_some(self.file)
    }
}

/// What a format carries, settled once per format: the emitter asks it
/// of the value, not of each call.
#[derive(Clone, Copy, Default)]
pub struct Carries {
    /// A command's own events (`domain`).
    pub events: bool,
    /// aoitap's own failures, written into the report rather than said
    /// on stderr.
    pub errors: bool,
    /// Its warnings (`--follow` waiting for a name), the same way.
    pub warnings: bool,
    /// The findings of summarize's and reconcile's runs, which they
    /// otherwise only count (a page lists each run's: `Table::run_finding`).
    pub run_findings: bool,
    /// A person's report: one that fails on I/O ends with the error on
    /// stderr, not a result line, and a progress display may be drawn
    /// beside it (`progress.rs`).
    pub for_a_person: bool,
}

impl Carries {
    /// A log read in order (TAP, GitHub's): aoitap's own failures and
    /// warnings are said in it, where they happened.
    pub const LOG: Carries = Carries {
        events: false,
        errors: true,
        warnings: true,
        run_findings: false,
        for_a_person: false,
    };
}

/// aoitap's own failure or warning, as a report is told it.
pub struct Local<'a> {
    /// A warning is something aoitap goes on despite; never the exit
    /// status.
    pub warning: bool,
    pub category: &'a str,
    pub code: &'a str,
    pub message: &'a str,
}

/// What one command says of its own, beside the findings and verdicts
/// every command has.
pub enum Item<'a> {
    /// `lint`: one check's result.
    Check(&'a Check<'a>),
    /// `run`: how one attempt ended.
    Attempt(&'a Ended<'a>),
    /// `run`: its command was stopped at `--timeout`.
    TimedOut(&'a str),
    /// `run`: hold the points that follow, to be released once the
    /// attempt is known to be the last (TAP's `# TODO`).
    Hold,
    /// `run`: write what was held, failures marked `todo`.
    Release(Option<&'a str>),
}

/// How `run`'s command ended once, as every format is told it.
pub struct Ended<'a> {
    pub attempt: &'a Attempt<'a>,
    /// "exited 0 after 1.2 s; again in 2 s".
    pub message: &'a str,
}

/// The stream of a report, as one format writes it.
pub trait Printer {
    /// What this format carries.
    fn carries(&self) -> Carries {
        Carries::default()
    }

    /// The report's head (a version line, a document's opening, `aoi:meta`).
    fn begin(&mut self, _at: &At<'_>) -> io::Result<()> {
        Ok(())
    }

    /// Text for a person: written, a comment, or nothing.
    fn text(&mut self, _at: &At<'_>, _text: &str) -> io::Result<()> {
        Ok(())
    }

    /// One of the command's own events, where `Carries::events`: `body`
    /// is its fields as one JSON object; `about_file` puts the input's
    /// name in it.
    fn event(
        &mut self,
        _at: &At<'_>,
        _ty: &str,
        _about_file: bool,
        _body: &[u8],
    ) -> io::Result<()> {
        Ok(())
    }

    /// aoitap's own failure, given whether or not the format carries it
    /// (a format may count what it does not write); a warning only where
    /// `Carries::warnings`.
    fn local(&mut self, _at: &At<'_>, _local: &Local<'_>) -> io::Result<()> {
        Ok(())
    }

    /// Whether the format shows this finding at all; one it leaves out is
    /// not counted against `--limit`.
    fn shows(&self, _at: &At<'_>, _f: &Finding) -> bool {
        true
    }

    fn finding(&mut self, _at: &At<'_>, _f: &Finding) -> io::Result<()> {
        Ok(())
    }

    /// A run reading left open; `text` says it for a person.
    fn open_run(&mut self, at: &At<'_>, _run: &OpenRun, text: &str) -> io::Result<()> {
        self.text(at, text)
    }

    /// A run's verdict, and the file that holds its lines (split-by-run).
    fn run(&mut self, _at: &At<'_>, _r: &RunVerdict, _path: Option<&str>) -> io::Result<()> {
        Ok(())
    }

    /// What one command says of its own: lint's checks, run's attempts.
    fn item(&mut self, _at: &At<'_>, _item: Item<'_>) -> io::Result<()> {
        Ok(())
    }

    /// The report's end: the result line, the document's close, the
    /// terminal `aoi:summary`.
    fn end(&mut self, _at: &At<'_>, _exit: Exit, _tally: &Tally) -> io::Result<()> {
        Ok(())
    }

    /// Out with what the writer holds.
    fn flush(&mut self) -> io::Result<()>;
}

/// How one attempt of `run`'s command ended.
pub struct Attempt<'a> {
    pub attempt: u32,
    pub attempts: u32,
    pub command: &'a str,
    /// "exited 0", "was killed by SIGKILL", "timed out (--timeout 2s)".
    pub ended: &'a str,
    pub exit_status: Option<i32>,
    pub signal: Option<&'a str>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub elapsed_ms: u64,
    /// The attempt's own verdict as an exit status.
    pub exit: Exit,
    pub retry_in_ms: Option<u64>,
    /// Why there is no retry, when one was wanted.
    pub note: Option<&'a str>,
}

/// `aoi:check` (spec §8.3): one lint check's result (docs/contract.md §1.4).
#[derive(Serialize)]
pub struct Check<'a> {
    pub name: &'a str,
    pub ok: bool,
    pub severity: &'static str,
    pub detail: &'a str,
    pub properties: CheckProperties<'a>,
}

#[derive(Serialize)]
pub struct CheckProperties<'a> {
    /// The check's number in spec §18.2.
    pub check: u8,
    pub factor: &'a str,
    pub result: &'a str,
    /// The command of CMD the check was made on (spec §18.1: per factor
    /// and per command).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<&'a str>,
    /// A failed check's calls, each with the last lines of its stderr.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<CallStderr<'a>>,
}

/// The last lines of one call's stderr, under the check that failed on
/// it (docs/contract.md §1.4).
#[derive(Serialize)]
pub struct CallStderr<'a> {
    /// Which call: "CMD", "CMD with stdout closed after the first line".
    pub call: &'a str,
    /// Its last lines, when they may be quoted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail: Option<&'a str>,
    /// Why they are not quoted, when they may not be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld: Option<&'a str>,
    /// Earlier lines were left out.
    pub cut: bool,
    pub stack_trace: bool,
}

impl CallStderr<'_> {
    /// Its heading and its lines, as a person reads them, each line made
    /// safe for a terminal (docs/contract.md §3.2).
    pub fn lines(&self) -> Vec<String> {
        let call = crate::text::clean(self.call);
        match (self.tail, self.withheld) {
            (Some(tail), _) => {
                let last = if self.cut { ", its last lines" } else { "" };
                std::iter::once(format!("stderr of {call}{last}:"))
                    .chain(tail.lines().map(|l| format!("| {}", crate::text::clean(l))))
                    .collect()
            }
            (None, why) => vec![format!(
                "stderr of {call}: not quoted ({})",
                why.unwrap_or_default()
            )],
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! What the printers' own tests share: a style, what the emitter
    //! would tell them, and a finding.

    use super::At;
    use crate::check::Finding;
    use crate::check::rules::{Rule, Severity};
    use crate::output::style::Style;

    pub(crate) fn at<'a>(command: &'a str, file: &'a str, style: &'a Style) -> At<'a> {
        At {
            command,
            file,
            style,
            dropped: 0,
            reason: None,
            result: None,
        }
    }

    /// A `seq.gap` error at `line` of run `r1`.
    pub(crate) fn gap(line: u64) -> Finding {
        Finding {
            rule: Rule::SeqGap,
            severity: Severity::Error,
            line,
            run: Some("r1".to_string()),
            run_line: Some(1),
            seq: Some(3),
            message: "seq jumped from 1 to 3".to_string(),
            column: None,
            missing: Some((2, 2, 1)),
            place: None,
            lost: true,
        }
    }
}
