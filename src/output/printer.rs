//! One printer per report format, chosen once (`choose`): each holds its
//! own state and says a report's parts its way. The emitter (`mod.rs`)
//! keeps what every format shares: `--limit`, the input's name, the
//! command's result words, and where the bytes go. A printer writes; it
//! decides nothing: which findings count and what the exit status is were
//! settled before a printer sees them.
//!
//! Every method has a default that writes nothing, so a format says only
//! what it carries; `-q` is a printer that keeps them all.

use std::io::{self, Write};

use crate::check::{Finding, OpenRun, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use serde::Serialize;

use crate::output::reconcile::Account;
use crate::output::style::Style;
use crate::output::summary::Counted;

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

/// How `run`'s command ended once, as every format is told it.
pub struct Ended<'a> {
    pub attempt: &'a Attempt<'a>,
    /// "exited 0 after 1.2 s; again in 2 s".
    pub message: &'a str,
}

/// One run's accounting from `reconcile`.
pub struct Reconciled<'a> {
    pub account: &'a Account<'a>,
    /// "run R", or "run from line N".
    pub who: &'a str,
    pub name: Option<&'a str>,
    /// The checker's verdict on the run, when it judged it.
    pub judged: Option<&'a RunVerdict>,
    pub ok: bool,
    pub verdict: Verdict,
}

/// One run's summary from `summarize`.
pub struct Summarized<'a> {
    pub run: &'a RunVerdict,
    pub counted: &'a Counted<'a>,
    /// The terminal's width, when it has one.
    pub width: Option<usize>,
}

pub trait Printer {
    /// The report's head (a version line, a document's opening, `aoi:meta`).
    fn begin(&mut self, _out: &mut dyn Write, _at: &At<'_>) -> io::Result<()> {
        Ok(())
    }

    /// Text for a person: written, a comment, or nothing.
    fn text(&mut self, _out: &mut dyn Write, _at: &At<'_>, _text: &str) -> io::Result<()> {
        Ok(())
    }

    /// Whether the format carries a command's own events (`domain`).
    fn takes_events(&self) -> bool {
        false
    }

    /// One of the command's own events: `body` is its fields as one JSON
    /// object; `about_file` puts the input's name in it.
    fn event(
        &mut self,
        _out: &mut dyn Write,
        _at: &At<'_>,
        _ty: &str,
        _about_file: bool,
        _body: &[u8],
    ) -> io::Result<()> {
        Ok(())
    }

    /// Whether a failure of aoitap itself is written into the report,
    /// rather than said on stderr.
    fn carries_errors(&self) -> bool {
        false
    }

    /// A failure of aoitap itself; called whether or not it is carried
    /// (a format may count what it does not write).
    fn local_error(
        &mut self,
        _out: &mut dyn Write,
        _at: &At<'_>,
        _category: &str,
        _code: &str,
        _message: &str,
    ) -> io::Result<()> {
        Ok(())
    }

    /// Something aoitap goes on despite; returns whether it was written
    /// (else it is said on stderr).
    fn local_warning(
        &mut self,
        _out: &mut dyn Write,
        _category: &str,
        _code: &str,
        _message: &str,
    ) -> io::Result<bool> {
        Ok(false)
    }

    /// `run`'s command was stopped at `--timeout`.
    fn timed_out(&mut self, _out: &mut dyn Write, _message: &str) -> io::Result<()> {
        Ok(())
    }

    /// Whether the format shows this finding at all; one it leaves out is
    /// not counted against `--limit`.
    fn shows(&self, _at: &At<'_>, _f: &Finding) -> bool {
        true
    }

    /// Whether the findings of summarize's and reconcile's runs, which
    /// they otherwise only count, are given to `run_finding` (a page
    /// shows each run's with it).
    fn lists_run_findings(&self) -> bool {
        false
    }

    /// A finding of a run summarize or reconcile reports its own way:
    /// every one is given, `listed` when `--limit` lets it be written out.
    fn run_finding(&mut self, _f: &Finding, _listed: bool) {}

    fn finding(&mut self, _out: &mut dyn Write, _at: &At<'_>, _f: &Finding) -> io::Result<()> {
        Ok(())
    }

    /// A run reading left open; `text` says it for a person.
    fn open_run(
        &mut self,
        out: &mut dyn Write,
        at: &At<'_>,
        _run: &OpenRun,
        text: &str,
    ) -> io::Result<()> {
        self.text(out, at, text)
    }

    /// A run's verdict, and the file that holds its lines (split-by-run).
    fn run(
        &mut self,
        _out: &mut dyn Write,
        _at: &At<'_>,
        _r: &RunVerdict,
        _path: Option<&str>,
    ) -> io::Result<()> {
        Ok(())
    }

    /// `lint`: one check's result.
    fn check(&mut self, _out: &mut dyn Write, _at: &At<'_>, _c: &Check<'_>) -> io::Result<()> {
        Ok(())
    }

    /// `run`: how one attempt ended.
    fn attempt(&mut self, _out: &mut dyn Write, _at: &At<'_>, _a: &Ended<'_>) -> io::Result<()> {
        Ok(())
    }

    /// `summarize`: one run's block.
    fn summarized(
        &mut self,
        _out: &mut dyn Write,
        _at: &At<'_>,
        _s: &Summarized<'_>,
    ) -> io::Result<()> {
        Ok(())
    }

    /// `reconcile`: one run's accounting.
    fn reconciled(
        &mut self,
        _out: &mut dyn Write,
        _at: &At<'_>,
        _r: &Reconciled<'_>,
    ) -> io::Result<()> {
        Ok(())
    }

    /// `run`: hold the points that follow, to be released once the attempt
    /// is known to be the last.
    fn hold(&mut self) {}

    /// `run`: write what was held, failures marked `todo`.
    fn release(&mut self, _out: &mut dyn Write, _todo: Option<&str>) -> io::Result<()> {
        Ok(())
    }

    /// The report's end: the result line, the document's close, the
    /// terminal `aoi:summary`.
    fn end(
        &mut self,
        _out: &mut dyn Write,
        _at: &At<'_>,
        _exit: Exit,
        _tally: &Tally,
    ) -> io::Result<()> {
        Ok(())
    }

    /// `summarize --output json`: the one document's close, after the
    /// last input.
    fn close(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    /// Whether a report that failed on I/O still gets its end; a person's
    /// report then ends with the error on stderr, not a result line.
    fn ends_after_failure(&self) -> bool {
        true
    }

    /// Whether a person reads the report: the one beside which a progress
    /// display may be drawn (`progress.rs`).
    fn for_a_person(&self) -> bool {
        false
    }
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
