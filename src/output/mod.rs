//! The report writer. The `Emitter` keeps what every format shares: the
//! input's name, `--limit` and what it left out, the command's own result
//! words, and where the bytes go; it holds one `Printer` (`printer.rs`),
//! chosen once from the style, which says each part of the report its
//! format's way: `human.rs` (colour: `style.rs`), `jsonl.rs` (aoitap's own
//! AOI stream, docs/contract.md §5.1), `json.rs` (summarize's one document), `tap.rs`,
//! and what CI systems read (docs/contract.md §5.2): `junit/`, `sarif.rs`,
//! `github.rs`. It writes; it decides nothing: the exit status is made
//! from `check::Tally`, which the writer only reads for the summary.

use std::io::{self, Write};

use serde::Serialize;

use crate::check::{Finding, OpenRun, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::text::{one_line, seconds};
use github::Github;
use html::Html;
use human::Human;
use json::Json;
use jsonl::Jsonl;
use junit::Junit;
use printer::{At, Ended, Printer, Reconciled, Summarized};
pub use printer::{Attempt, CallStderr, Check, CheckProperties};
use reconcile::Account;
use sarif::Sarif;
use style::{Format, Style};
use summary::Counted;
use tap::Tap;

pub mod discover;
mod github;
mod html;
pub mod human;
mod identity;
mod json;
pub mod jsonl;
pub mod junit;
pub mod printer;
pub mod progress;
pub mod reconcile;
pub mod relay;
pub mod sarif;
pub mod style;
pub mod summary;
pub mod tap;
mod words;

pub use identity::{AOI_VERSION, INFORMATION_URI, SCHEMA_NAME, SCHEMA_VERSION, TOOL, TOOL_VERSION};

pub struct Emitter<W: Write> {
    out: W,
    style: Style,
    command: String,
    /// The input being read, as findings name it.
    pub file: String,
    /// Findings written, and those left out because of --limit.
    shown: u64,
    dropped: u64,
    printer: Box<dyn Printer>,
    /// The summary's `reason` when it is not the exit's own (`timeout`).
    pub reason: Option<&'static str>,
    /// The human and TAP result line, when the command words its own
    /// (lint), in place of verify's.
    pub result: Option<String>,
}

impl<W: Write> Emitter<W> {
    pub fn new(out: W, style: Style, command: impl Into<String>) -> Emitter<W> {
        Emitter {
            out,
            printer: choose(&style),
            style,
            command: command.into(),
            file: String::new(),
            shown: 0,
            dropped: 0,
            reason: None,
            result: None,
        }
    }

    /// The printer, the bytes' way out, and what the printer is told.
    fn parts(&mut self) -> (&mut dyn Printer, &mut dyn Write, At<'_>) {
        let at = At {
            command: &self.command,
            file: &self.file,
            style: &self.style,
            dropped: self.dropped,
            reason: self.reason,
            result: self.result.as_deref(),
        };
        (self.printer.as_mut(), &mut self.out, at)
    }

    /// Write a domain event of a command's own, where the printer takes
    /// events.
    pub fn domain<T: Serialize>(&mut self, ty: &str, body: T) -> io::Result<()> {
        if !self.printer.takes_events() {
            return Ok(());
        }
        let body = serde_json::to_vec(&body).map_err(io::Error::other)?;
        let (p, out, at) = self.parts();
        p.event(out, &at, ty, true, &body)
    }

    /// Write text for a person, which each printer places its way (or
    /// leaves out).
    pub fn text(&mut self, text: &str) -> io::Result<()> {
        let (p, out, at) = self.parts();
        p.text(out, &at, text)
    }

    pub fn color(&self) -> bool {
        self.style.color
    }

    /// Start the report (an event stream's `aoi:meta`, a document's head).
    pub fn begin(&mut self) -> io::Result<()> {
        let (p, out, at) = self.parts();
        p.begin(out, &at)
    }

    /// `run`: the command was stopped at `--timeout`. An event stream
    /// carries it as a local, retryable `aoi:error`, so a second `aoitap
    /// verify` of the report finds the same 75 (docs/contract.md §3.3; spec §9.2:
    /// `timeout` is retryable); the text formats say it in the attempt.
    pub fn timed_out(&mut self, message: &str) -> io::Result<()> {
        self.printer.timed_out(&mut self.out, message)
    }

    /// Whether `local_error` writes into the report rather than on
    /// stderr (every format but a person's and summarize's document).
    pub fn carries_errors(&self) -> bool {
        self.printer.carries_errors()
    }

    /// Whether the findings raised while runs are summarized or
    /// reconciled reach the printer, which lists each run's (a page).
    pub fn lists_run_findings(&self) -> bool {
        self.printer.lists_run_findings()
    }

    /// Whether a report that failed on I/O is still ended (every format
    /// but a person's).
    pub fn ends_after_failure(&self) -> bool {
        self.printer.ends_after_failure()
    }

    /// Whether a person reads the report (human, not `-q`), so a progress
    /// display may be drawn beside it.
    pub fn for_a_person(&self) -> bool {
        self.printer.for_a_person()
    }

    /// A failure of aoitap itself (unreadable input, I/O): in the report
    /// where the printer carries errors, a message on stderr otherwise.
    pub fn local_error(&mut self, category: &str, code: &str, message: &str) -> io::Result<()> {
        let carried = self.printer.carries_errors();
        let (p, out, at) = self.parts();
        p.local_error(out, &at, category, code, message)?;
        if !carried {
            crate::say!("aoitap: {}", one_line(message));
        }
        Ok(())
    }

    /// Something aoitap goes on despite (`--follow` waiting for a name):
    /// in the report where the printer says warnings (an event stream
    /// counts it in its summary's `warning_count`, spec §8.3), a message
    /// on stderr otherwise. Never the exit status.
    pub fn local_warning(&mut self, category: &str, code: &str, message: &str) -> io::Result<()> {
        let message = one_line(message);
        if !self
            .printer
            .local_warning(&mut self.out, category, code, &message)?
        {
            crate::say!("aoitap: {message}");
        }
        Ok(())
    }

    /// End the report with the printer's closing words (a result line, a
    /// terminal `aoi:summary` whose `ok` is the exit status being 0).
    pub fn end(&mut self, exit: Exit, tally: &Tally) -> io::Result<()> {
        let (p, out, at) = self.parts();
        p.end(out, &at, exit, tally)?;
        self.out.flush()
    }

    /// `summarize --output json`: close the one document.
    pub fn close(&mut self) -> io::Result<()> {
        self.printer.close(&mut self.out)
    }

    /// `lint`: one check's result (an `aoi:check` event, spec §8.3; a
    /// line; a test point), as the printer says it.
    pub fn check(&mut self, c: &Check<'_>) -> io::Result<()> {
        let (p, out, at) = self.parts();
        p.check(out, &at, c)
    }

    /// `run`: how one attempt of the command ended (docs/contract.md §1.3).
    pub fn attempt(&mut self, a: &Attempt<'_>) -> io::Result<()> {
        // The input's label names the attempt ("tool (attempt 2 of 4)").
        let mut message = format!("{} after {}", a.ended, seconds(a.elapsed_ms));
        if let Some(ms) = a.retry_in_ms {
            message.push_str(&format!("; again in {}", seconds(ms)));
        }
        if let Some(why) = a.note {
            message.push_str(&format!("; {why}"));
        }
        let ended = Ended {
            attempt: a,
            message: &message,
        };
        let (p, out, at) = self.parts();
        p.attempt(out, &at, &ended)
    }

    /// `summarize`: one run's block, event or document entry.
    pub fn summarized(
        &mut self,
        run: &RunVerdict,
        counted: &Counted<'_>,
        width: Option<usize>,
    ) -> io::Result<()> {
        let s = Summarized {
            run,
            counted,
            width,
        };
        let (p, out, at) = self.parts();
        p.summarized(out, &at, &s)
    }

    /// `reconcile`: one run's accounting, as a block or as events.
    pub fn reconciled(
        &mut self,
        account: &Account<'_>,
        who: &str,
        name: Option<&str>,
        judged: Option<&RunVerdict>,
        ok: bool,
        verdict: Verdict,
    ) -> io::Result<()> {
        let r = Reconciled {
            account,
            who,
            name,
            judged,
            ok,
            verdict,
        };
        let (p, out, at) = self.parts();
        p.reconciled(out, &at, &r)
    }

    /// TAP: hold the points that follow (see `Tap::hold`).
    pub fn tap_hold(&mut self) {
        self.printer.hold();
    }

    /// TAP: write the held points, failures marked `# TODO why`.
    pub fn tap_release(&mut self, todo: Option<&str>) -> io::Result<()> {
        self.printer.release(&mut self.out, todo)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// A finding, unless --limit has been reached (then only counted).
    pub fn finding(&mut self, f: &Finding) -> io::Result<()> {
        let shows = {
            let (p, _, at) = self.parts();
            p.shows(&at, f)
        };
        if !shows {
            // Left out, not cut: --limit counts only what could be shown.
            return Ok(());
        }
        if !self.admit() {
            return Ok(());
        }
        let (p, out, at) = self.parts();
        p.finding(out, &at, f)
    }

    /// Whether `--limit` lets one finding more be written: counted as
    /// shown, or else as left out.
    fn admit(&mut self) -> bool {
        let room = self.style.limit.is_none_or(|n| self.shown < n);
        if room {
            self.shown += 1;
        } else {
            self.dropped += 1;
        }
        room
    }

    /// A finding of a run summarize or reconcile reports its own way,
    /// for a printer that shows it with the run (a page): every one is
    /// given, and `--limit` says which may be written out.
    pub fn run_finding(&mut self, f: &Finding) {
        let listed = self.admit();
        self.printer.run_finding(f, listed);
    }

    /// A run that reading left open: `text` for a person (a comment in TAP),
    /// an `open_run` event for a program.
    pub fn open_run(&mut self, run: &OpenRun, text: &str) -> io::Result<()> {
        let (p, out, at) = self.parts();
        p.open_run(out, &at, run, text)
    }

    /// A run's verdict, and the file that holds its lines (split-by-run).
    pub fn run_at(&mut self, r: &RunVerdict, path: Option<&str>) -> io::Result<()> {
        let (p, out, at) = self.parts();
        p.run(out, &at, r, path)
    }
}

/// `-q`: no report at all.
struct Quiet;

impl Printer for Quiet {}

/// The printer for a report in `style`.
fn choose(style: &Style) -> Box<dyn Printer> {
    if style.quiet {
        return Box::new(Quiet);
    }
    match style.format {
        Format::Human => Box::new(Human::default()),
        Format::Jsonl => Box::new(Jsonl::default()),
        Format::Json => Box::new(Json::default()),
        Format::Tap => Box::new(Tap::default()),
        Format::Junit => Box::new(Junit::default()),
        Format::Sarif => Box::new(Sarif::default()),
        Format::Github => Box::new(Github),
        Format::Html => Box::new(Html::default()),
    }
}
