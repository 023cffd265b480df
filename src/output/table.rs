//! summarize's and reconcile's report: a block, an event or a row per
//! run, beside the stream every command writes (`printer.rs`). The
//! formats that draw one are `table/`: a person's blocks (`human.rs`),
//! aoitap's own events (`jsonl.rs`), the one document (`json.rs`) and
//! the page (`html.rs`).

use std::io;

use crate::check::{Finding, RunVerdict, Verdict};
use crate::output::printer::At;
use crate::output::reconcile::Account;
use crate::output::summary::Counted;

pub mod html;
pub mod human;
pub mod json;
pub mod jsonl;

/// One run's summary from `summarize`.
pub struct Summarized<'a> {
    pub run: &'a RunVerdict,
    pub counted: &'a Counted<'a>,
    /// The terminal's width, when it has one.
    pub width: Option<usize>,
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

/// The per-run table of a report, as one format draws it.
pub trait Table {
    /// `summarize`: one run's block.
    fn summarized(&mut self, _at: &At<'_>, _s: &Summarized<'_>) -> io::Result<()> {
        Ok(())
    }

    /// `reconcile`: one run's accounting.
    fn reconciled(&mut self, _at: &At<'_>, _r: &Reconciled<'_>) -> io::Result<()> {
        Ok(())
    }

    /// A finding of a run, where `Carries::run_findings`: every one is
    /// given, `listed` when `--limit` lets it be written out.
    fn run_finding(&mut self, _f: &Finding, _listed: bool) {}

    /// The table's close after the last input (the one document's).
    fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
}
