//! The report writer. The `Emitter` keeps what every format shares: the
//! input's name, `--limit` and what it left out, the command's own result
//! words; it holds one printer, chosen once from the style, which owns
//! the writer and says each part of the report its format's way: the
//! stream every command writes (`printer.rs`): `human.rs` (colour:
//! `style.rs`), `jsonl.rs` (aoitap's own AOI stream, docs/contract.md
//! §5.1), `tap.rs`, and what CI systems read (docs/contract.md §5.2):
//! `junit/`, `sarif.rs`, `github.rs`; and summarize's and reconcile's
//! block per run (`table.rs`: human, jsonl, summarize's one JSON document
//! and the HTML page in `table/`). It writes; it decides nothing: the
//! exit status is made from `check::Tally`, which the writer only reads
//! for the summary.

use std::io::{self, Write};

use serde::Serialize;

use crate::check::{Finding, OpenRun, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::text::{one_line, seconds};
use github::Github;
use human::Human;
use jsonl::Jsonl;
use junit::Junit;
use printer::{At, Carries, Ended, Item, Local, Printer};
pub use printer::{Attempt, CallStderr, Check, CheckProperties};
use reconcile::Account;
use sarif::Sarif;
use style::{Format, Style};
use summary::Counted;
use table::html::Html;
use table::json::Json;
use table::{Reconciled, Summarized, Table};
use tap::Tap;

pub mod discover;
mod github;
pub mod human;
mod identity;
pub mod jsonl;
pub mod junit;
pub mod printer;
pub mod progress;
pub mod reconcile;
pub mod relay;
pub mod sarif;
pub mod style;
pub mod summary;
pub mod table;
pub mod tap;
mod words;

pub use identity::{AOI_VERSION, INFORMATION_URI, SCHEMA_NAME, SCHEMA_VERSION, TOOL, TOOL_VERSION};

/// A report's format: its stream and its per-run table, one value.
pub trait Report: Printer + Table {}

impl<P: Printer + Table> Report for P {}

pub struct Emitter {
    style: Style,
    command: String,
    /// The input being read, as findings name it.
    pub file: String,
    /// Findings written, and those left out because of --limit.
    shown: u64,
    dropped: u64,
    printer: Box<dyn Report>,
    /// What the printer's format carries.
    carries: Carries,
    /// The summary's `reason` when it is not the exit's own (`timeout`).
    pub reason: Option<&'static str>,
    /// The human and TAP result line, when the command words its own
    /// (lint), in place of verify's.
    pub result: Option<String>,
}

impl Emitter {
    /// A report in `style` of `command`, written to `out`.
    pub fn new(out: impl Write + 'static, style: Style, command: impl Into<String>) -> Emitter {
        let printer = choose(&style, out);
        Emitter {
            carries: printer.carries(),
            printer,
            style,
            command: command.into(),
            file: String::new(),
            shown: 0,
            dropped: 0,
            reason: None,
            result: None,
        }
    }

    /// The printer, and what it is told.
    fn parts(&mut self) -> (&mut dyn Report, At<'_>) {
        let at = At {
            command: &self.command,
            file: &self.file,
            style: &self.style,
            dropped: self.dropped,
            reason: self.reason,
            result: self.result.as_deref(),
        };
        (self.printer.as_mut(), at)
    }

    /// Write a domain event of a command's own, where the printer takes
    /// events.
    pub fn domain<T: Serialize>(&mut self, ty: &str, body: T) -> io::Result<()> {
        if !self.carries.events {
            return Ok(());
        }
        let body = serde_json::to_vec(&body).map_err(io::Error::other)?;
        let (p, at) = self.parts();
        p.event(&at, ty, true, &body)
    }

    /// Write text for a person, which each printer places its way (or
    /// leaves out).
    pub fn text(&mut self, text: &str) -> io::Result<()> {
        let (p, at) = self.parts();
        p.text(&at, text)
    }

    pub fn color(&self) -> bool {
        self.style.color
    }

    /// What the report's format carries: whether `local_error` writes
    /// into the report rather than on stderr, whether a report that
    /// failed on I/O is still ended, whether a person reads it.
    pub fn carries(&self) -> Carries {
        self.carries
    }

    /// Start the report (an event stream's `aoi:meta`, a document's head).
    pub fn begin(&mut self) -> io::Result<()> {
        let (p, at) = self.parts();
        p.begin(&at)
    }

    /// One of a command's own items (lint's checks, run's attempts), as
    /// the printer says it.
    fn item(&mut self, item: Item<'_>) -> io::Result<()> {
        let (p, at) = self.parts();
        p.item(&at, item)
    }

    /// `run`: the command was stopped at `--timeout`. An event stream
    /// carries it as a local, retryable `aoi:error`, so a second `aoitap
    /// verify` of the report finds the same 75 (docs/contract.md §3.3;
    /// spec §9.2: `timeout` is retryable); the text formats say it in the
    /// attempt.
    pub fn timed_out(&mut self, message: &str) -> io::Result<()> {
        self.item(Item::TimedOut(message))
    }

    /// A failure of aoitap itself (unreadable input, I/O): in the report
    /// where the printer carries errors, a message on stderr otherwise.
    pub fn local_error(&mut self, category: &str, code: &str, message: &str) -> io::Result<()> {
        let error = Local {
            warning: false,
            category,
            code,
            message,
        };
        let (p, at) = self.parts();
        p.local(&at, &error)?;
        if !self.carries.errors {
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
        if !self.carries.warnings {
            crate::say!("aoitap: {message}");
            return Ok(());
        }
        let warning = Local {
            warning: true,
            category,
            code,
            message: &message,
        };
        let (p, at) = self.parts();
        p.local(&at, &warning)
    }

    /// End the report with the printer's closing words (a result line, a
    /// terminal `aoi:summary` whose `ok` is the exit status being 0).
    pub fn end(&mut self, exit: Exit, tally: &Tally) -> io::Result<()> {
        let (p, at) = self.parts();
        p.end(&at, exit, tally)?;
        self.printer.flush()
    }

    /// `summarize --output json`: close the one document.
    pub fn close(&mut self) -> io::Result<()> {
        self.printer.close()
    }

    /// `lint`: one check's result (an `aoi:check` event, spec §8.3; a
    /// line; a test point), as the printer says it.
    pub fn check(&mut self, c: &Check<'_>) -> io::Result<()> {
        self.item(Item::Check(c))
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
        self.item(Item::Attempt(&ended))
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
        let (p, at) = self.parts();
        p.summarized(&at, &s)
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
        let (p, at) = self.parts();
        p.reconciled(&at, &r)
    }

    /// `run`: hold the points that follow (TAP's, until the attempt is
    /// known to be the last).
    pub fn hold(&mut self) -> io::Result<()> {
        self.item(Item::Hold)
    }

    /// `run`: write the held points, failures marked `# TODO why`.
    pub fn release(&mut self, todo: Option<&str>) -> io::Result<()> {
        self.item(Item::Release(todo))
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.printer.flush()
    }

    /// A finding, unless --limit has been reached (then only counted).
    pub fn finding(&mut self, f: &Finding) -> io::Result<()> {
        let shows = {
            let (p, at) = self.parts();
            p.shows(&at, f)
        };
        if !shows {
            // Left out, not cut: --limit counts only what could be shown.
            return Ok(());
        }
        if !self.admit() {
            return Ok(());
        }
        let (p, at) = self.parts();
        p.finding(&at, f)
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
        let (p, at) = self.parts();
        p.open_run(&at, run, text)
    }

    /// A run's verdict, and the file that holds its lines (split-by-run).
    pub fn run_at(&mut self, r: &RunVerdict, path: Option<&str>) -> io::Result<()> {
        let (p, at) = self.parts();
        p.run(&at, r, path)
    }
}

/// `-q`: no report at all.
struct Quiet;

impl Printer for Quiet {
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Table for Quiet {}

/// The text formats draw no per-run table: summarize and reconcile write
/// human, jsonl, json and html (`table/`).
impl<W: Write> Table for Tap<W> {}
impl<W: Write> Table for Junit<W> {}
impl<W: Write> Table for Sarif<W> {}
impl<W: Write> Table for Github<W> {}

/// The printer for a report in `style`, writing to `out`.
fn choose(style: &Style, out: impl Write + 'static) -> Box<dyn Report> {
    if style.quiet {
        return Box::new(Quiet);
    }
    match style.format {
        Format::Human => Box::new(Human::new(out)),
        Format::Jsonl => Box::new(Jsonl::new(out)),
        Format::Json => Box::new(Json::new(out)),
        Format::Tap => Box::new(Tap::new(out)),
        Format::Junit => Box::new(Junit::new(out)),
        Format::Sarif => Box::new(Sarif::new(out)),
        Format::Github => Box::new(Github::new(out)),
        Format::Html => Box::new(Html::new(out)),
    }
}
