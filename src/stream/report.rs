//! The report a stream command writes, and how it ends when the command
//! fails after it began.

use std::io;

use crate::check::{Checker, Decision, Finding, OpenRun, RunVerdict, Sink, Tally};
use crate::exit::{Error, Exit};
use crate::input::scan::Line;
use crate::output::Emitter;

/// A stream command's report: what it writes (`out`) and the tally its
/// exit status is made from. Every finding and verdict goes through here,
/// so the two cannot disagree.
pub struct Report {
    pub tally: Tally,
    pub out: Emitter,
}

impl Report {
    /// A run's verdict, and the file that holds its lines (split-by-run).
    pub fn run_at(&mut self, r: &RunVerdict, path: Option<&str>) -> io::Result<()> {
        self.tally.run(r);
        self.out.run_at(r, path)
    }

    /// End the report with `exit`.
    pub fn end(&mut self, exit: Exit) -> io::Result<()> {
        self.out.end(exit, &self.tally)
    }
}

impl Sink for Report {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.tally.finding(f);
        self.out.finding(f)
    }

    fn run(&mut self, r: RunVerdict) -> io::Result<()> {
        self.run_at(&r, None)
    }
}

impl Report {
    /// An input that could not be opened: said, and its exit status kept
    /// as the tally's trouble.
    pub(super) fn unopened(&mut self, e: &io::Error, exit: Exit) -> io::Result<()> {
        self.tally.trouble(exit);
        let (category, code) = match (exit, e.kind()) {
            (Exit::CantCreate, _) => ("io", "OUTPUT_FAILED"),
            (_, io::ErrorKind::NotFound) => ("not_found", "INPUT_NOT_FOUND"),
            _ => ("io", "INPUT_UNREADABLE"),
        };
        let msg = format!("{}: {e}", self.out.file);
        self.out.local_error(category, code, &msg)
    }

    /// Reading the input failed part way (74).
    pub(super) fn read_failed(&mut self, e: &io::Error) -> io::Result<()> {
        self.tally.trouble(Exit::Io);
        let msg = format!("{}: read failed: {e}", self.out.file);
        self.out.local_error("io", "READ_FAILED", &msg)
    }

    /// `--follow`: a named operand that is there but is no regular file
    /// (a FIFO, a directory with no file in it) is followed once it is one;
    /// said once, and 74.
    pub(super) fn not_a_file(&mut self, dir: bool) -> io::Result<()> {
        self.tally.trouble(Exit::Io);
        let f = &self.out.file;
        let msg = if dir {
            format!("{f}: a directory; to follow the files that come to it, quote a glob: '{f}/*'")
        } else {
            format!("{f}: not a regular file; read once it is one")
        };
        self.out.local_error("io", "NOT_A_FILE", &msg)
    }

    /// `--follow`: a named operand that is not there yet is followed once
    /// it appears, as `tail -F` does; said once, so a mistyped name is not
    /// waited for in silence (docs/contract.md §3.4).
    pub(super) fn waiting_for(&mut self) -> io::Result<()> {
        let f = crate::text::clean(&self.out.file);
        let msg = format!("waiting for {f}: it does not exist yet, and is read once it appears");
        self.out.local_warning("not_found", "INPUT_WAITING", &msg)
    }

    /// `--follow --state FILE` could not be written: a restart would read
    /// again what was read since; said once, and 74.
    pub(super) fn state_unwritten(
        &mut self,
        state: &std::path::Path,
        e: &io::Error,
    ) -> io::Result<()> {
        self.tally.trouble(Exit::Io);
        let msg = format!(
            "{}: the follow state cannot be written: {e}",
            state.display()
        );
        self.out.local_error("io", "STATE_WRITE_FAILED", &msg)
    }

    /// Reading stopped (`why`) with `runs` still open: what was judged is
    /// reported; the runs are not, as they were stopped by us, not cut by
    /// the producer. A person watching is told which were still open.
    pub(super) fn not_judged(&mut self, runs: Vec<OpenRun>, why: &str) -> io::Result<()> {
        for run in &runs {
            // Read, though not judged: counted in the summary, and its
            // upstream named (docs/contract.md §3.3).
            self.tally.input_domain += run.domain;
            if let Some(id) = &run.identity {
                self.tally.upstream(id);
            }
            let who = match &run.name {
                Some(n) => format!("run {}", crate::text::clean(n)),
                None => format!("run from line {}", run.first_line),
            };
            let text = format!(
                "{}: {why}: {who} still open after {}, not judged\n",
                crate::text::clean(&self.out.file),
                crate::text::plural(run.lines, "line")
            );
            self.out.open_run(run, &text)?;
        }
        Ok(())
    }
}

/// Why judging a batch stopped: a command's own failure, which ends the
/// report it began (`fail`), or a failed flush of the report itself.
pub(super) enum Halt {
    Judging(Error),
    Writing(Error),
}

impl Halt {
    /// A failed read or write while judging, ended through `fail`.
    pub(super) fn judging(e: io::Error) -> Halt {
        Halt::Judging(e.into())
    }

    /// A failed write of the report itself.
    pub(super) fn writing(e: io::Error) -> Halt {
        Halt::Writing(e.into())
    }

    /// The error the command ends with.
    pub(super) fn end(self, report: Report) -> Error {
        match self {
            Halt::Judging(e) => fail(report, e),
            Halt::Writing(e) => e,
        }
    }
}

/// A command's own read or write failed after its report began: the
/// report says so where it can (an `aoi:error` in jsonl, a TAP point) and
/// ends, so it still reads as a whole; the error goes to main, which says
/// it on stderr when the report does not (a human report has no Result
/// line then: its one line is main's, docs/contract.md §3.2). A closed downstream
/// ends quietly instead (spec §7).
pub(super) fn fail(mut report: Report, e: Error) -> Error {
    let exit = e.exit();
    if exit == Exit::BrokenPipe {
        return e;
    }
    let message = e.to_string();
    let in_report = report.out.carries().errors;
    if in_report {
        let category = if exit == Exit::CantCreate {
            "conflict"
        } else {
            "io"
        };
        if let Err(e) = report.out.local_error(category, "OUTPUT_FAILED", &message) {
            return e.into();
        }
    }
    if !report.out.carries().for_a_person
        && let Err(e) = report.end(exit)
    {
        return e.into();
    }
    Error::Ended {
        exit,
        message: crate::text::one_line(&message),
        in_report,
    }
}

/// The sink of commands that report runs their own way (summarize,
/// reconcile): verdicts raised while a line is judged are held, so the
/// line can be counted before its run is reported, and findings are only
/// counted into the report's tally.
pub struct Holder<'a> {
    report: &'a mut Report,
    runs: &'a mut Vec<RunVerdict>,
    /// Fetches the command's state for a run in the checker's slot.
    touch: &'a dyn Fn(usize),
}

impl Holder<'_> {
    /// Judge `line`; the runs it ended go to `ended`, which is empty: a
    /// buffer kept from line to line, so a run ending costs no allocation
    /// of its own. The caller reads the decision where it was written,
    /// not a copy (docs/contract.md §8.2).
    /// `touch` is told the checker's slot of the line's run as soon as
    /// it is known (`Sink::placed`).
    pub fn judge<'c>(
        check: &'c mut Checker,
        line: &Line<'_>,
        report: &mut Report,
        ended: &mut Vec<RunVerdict>,
        touch: &dyn Fn(usize),
    ) -> io::Result<Decision<'c>> {
        debug_assert!(ended.is_empty());
        check.judge(
            line,
            &mut Holder {
                report,
                runs: ended,
                touch,
            },
        )
    }

    /// Judge the runs still open at the end of an input: their verdicts.
    pub fn finish(check: Checker, report: &mut Report) -> io::Result<Vec<RunVerdict>> {
        let mut runs = vec![];
        check.finish(&mut Holder {
            report,
            runs: &mut runs,
            touch: &|_| {},
        })?;
        Ok(runs)
    }
}

impl Sink for Holder<'_> {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.report.tally.finding(f);
        if self.report.out.carries().run_findings {
            self.report.out.run_finding(f);
        }
        Ok(())
    }

    fn run(&mut self, r: RunVerdict) -> io::Result<()> {
        self.runs.push(r);
        Ok(())
    }

    fn placed(&mut self, slot: usize) {
        (self.touch)(slot);
    }
}
