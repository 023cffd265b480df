//! `aoitap upgrade [FILE]`: any stream aoitap reads, written out as one
//! conforming AOI 1.0 stream (docs/contract.md §1.6), as a transformer of
//! spec §13.1 must: aoitap's own meta first, each upstream event
//! forwarded under aoitap's envelope (`forward.rs`), no upstream meta or
//! summary, and aoitap's own terminal summary (`own.rs`) saying the
//! upstream's verdict, its retry fields (`caused_by`) and its identity
//! (`upstream`). Downstream, `aoitap verify` then finds any cut made
//! after aoitap. The exit status is the upstream's verdict; the findings
//! go to stderr. `run --upgrade` writes the same stream of CMD's output.
//!
//! One upstream run is one run of aoitap's; without `--multi-run` the
//! whole input is one, and with it each upstream run becomes a run of
//! its own, begun at its first line and ended at its verdict.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::check::{
    Checker, Decision, Finding, LineKind, OpenRun, Passed, RunVerdict, Sink, Tally, Verdict,
};
use crate::config::{ReportTo, UpgradeOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::Line;
use crate::input::source;
use crate::stream::{self, Consumer, PerRun, Report};

mod codes;
mod forward;
mod own;
mod shapes;
mod splice;

use forward::{Became, Upstream};
use own::{Outcome, OwnRun};
use splice::Spliced;

/// Whose errors they are, when the upstream names no tool.
const UNNAMED: &str = "upstream";

pub fn run(opts: &UpgradeOptions) -> Result<Exit> {
    let out = BufWriter::with_capacity(256 * 1024, source::stdout_file()?);
    let mut consumer = Upgrade {
        up: Upgrader::new(
            opts.stream.check.multi_run,
            &opts.stream.check.type_field,
            None,
        ),
        out,
        cancelled: false,
    };
    consumer.up.begin(&mut consumer.out)?;
    // stdout carries the upgraded stream; the findings go to stderr.
    let exit = stream::run(&opts.stream, "upgrade", ReportTo::Stderr, &mut consumer);
    if exit.is_err() {
        // What is buffered is dropped, not flushed: a command that could
        // not start says so as a whole stream of its own (main.rs).
        drop(consumer.out.into_parts());
    }
    exit
}

/// The upgraded stream of what is read: one run of aoitap's per upstream
/// run (`--multi-run`), or one for the whole input.
pub struct Upgrader {
    type_field: String,
    /// The tool an error names when the upstream names none (`run`'s
    /// CMD).
    origin: String,
    /// Without `--multi-run`: aoitap's one run, and what its verdict is
    /// made of (every finding and run verdict, as verify weighs them).
    single: Option<(OwnRun, Weighed)>,
    runs: PerRun<OwnRun>,
    /// With `--multi-run`: every finding, and whether a run of aoitap's
    /// ended non-conforming. A finding that belongs to no run (a line
    /// after its run was judged) makes the stream non-conforming with no
    /// run to say so: a run of aoitap's own then does (`end_as`).
    stray: Weighed,
    said_nonconforming: bool,
    line: Vec<u8>,
}

/// What the summary of a run of aoitap's says, gathered as the upstream
/// is judged.
#[derive(Default)]
struct Weighed {
    tally: Tally,
    lost: Option<String>,
    nonconforming: Option<String>,
}

impl Weighed {
    fn finding(&mut self, f: &Finding) {
        self.tally.finding(f);
        if f.severity == crate::check::rules::Severity::Error {
            let first = |k: &mut Option<String>| {
                k.get_or_insert_with(|| f.message.clone());
            };
            if f.lost {
                first(&mut self.lost);
            }
            first(&mut self.nonconforming);
        }
    }

    fn run(&mut self, r: &RunVerdict) {
        self.tally.run(r);
        if let Some(why) = &r.lost {
            self.lost.get_or_insert_with(|| why.clone());
        }
        if r.verdict == Verdict::Nonconforming {
            self.nonconforming.get_or_insert_with(|| r.message.clone());
        }
    }

    /// The summary's outcome, for the exit status `exit` (its verdict, or
    /// a signal's).
    fn outcome<'a>(&'a self, exit: Exit, origin: &'a str, timed_out: bool) -> Outcome<'a> {
        let ok = exit == Exit::Pass;
        let judged = matches!(
            exit,
            Exit::Pass | Exit::Failed | Exit::Retryable | Exit::Nonconforming
        );
        // The cause of a failure the verdict is: a retryable one for 75, a
        // final one for 1 (docs/contract.md §4.1), none for 65.
        let cause = self
            .tally
            .cause
            .as_ref()
            .filter(|c| exit == Exit::Retryable || (exit == Exit::Failed && !c.retryable));
        Outcome {
            ok,
            reason: match () {
                _ if timed_out => "timeout",
                _ if exit.cancelled() => "cancelled",
                _ => "failed",
            },
            timed_out,
            cause,
            retryable: exit == Exit::Retryable,
            identity: self.tally.identity.as_ref(),
            lost: self.lost.as_deref().filter(|_| exit == Exit::Nonconforming),
            nonconforming: self
                .nonconforming
                .as_deref()
                .filter(|_| exit == Exit::Nonconforming),
            unread: !judged && !exit.cancelled() && !timed_out,
            failure: None,
            origin,
        }
    }
}

impl Upgrader {
    /// `origin`: the name an error is said to come from when the upstream
    /// names no tool.
    pub fn new(multi_run: bool, type_field: &str, origin: Option<String>) -> Upgrader {
        Upgrader {
            type_field: type_field.to_string(),
            origin: origin.unwrap_or_else(|| UNNAMED.to_string()),
            single: (!multi_run).then(|| (OwnRun::new(), Weighed::default())),
            runs: PerRun::default(),
            stray: Weighed::default(),
            said_nonconforming: false,
            line: Vec::with_capacity(4096),
        }
    }

    /// The one run's meta, before anything is read (`--multi-run`: each
    /// run's at its first line).
    pub fn begin(&mut self, out: &mut dyn Write) -> io::Result<()> {
        match &mut self.single {
            Some((own, _)) => own.begin(out, "upgrade"),
            None => Ok(()),
        }
    }

    /// One judged line, written as what it becomes.
    pub fn line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        decided: &Decision<'_>,
    ) -> io::Result<()> {
        // What is not an event, or names a run already judged, is the
        // upstream's fault: a finding, never output.
        if !decided.kind.event || decided.kind.late {
            return Ok(());
        }
        decided.each_event(line, |passed| self.event(out, decided, passed))
    }

    /// One event the line gave, written as what it becomes.
    fn event(
        &mut self,
        out: &mut dyn Write,
        decided: &Decision<'_>,
        passed: &Passed<'_>,
    ) -> io::Result<()> {
        let up = Upstream {
            protocol: decided.kind.protocol,
            document: passed.document,
            type_field: &self.type_field,
            origin: &self.origin,
        };
        let own = match &mut self.single {
            Some((own, _)) => own,
            None => self.runs.of(decided, OwnRun::new),
        };
        if !own.begun() {
            own.begin(out, "upgrade")?;
        }
        // An exposed secret is written over, as `--redact` writes it
        // (docs/contract.md §3.3): an upstream that exposed one does not
        // conform, and the stream written of it must (a rare line, so it
        // is made again and parsed again).
        let (mut redacted, mut arena, index);
        let ev = match passed.exposures {
            [] => passed.event,
            exposures => {
                let line = passed.event.line();
                redacted = Vec::with_capacity(line.len());
                crate::check::redact(line, (0, line.len()), None, exposures, &mut redacted)?;
                arena = crate::json::Arena::default();
                index = crate::json::Parser::new()
                    .parse(&redacted, &mut arena)
                    .map_err(|_| io::Error::other("a redacted line that does not parse"))?;
                index.event(&redacted, &arena)
            }
        };
        let mut made = Spliced::new(std::mem::take(&mut self.line));
        let became = forward::forward(&ev, &up, own, &mut made);
        let written = written(own, became, &mut made, out);
        self.line = made.into_room();
        written
    }

    /// A line just judged, and the runs its judging ended: a run handed
    /// back past the open-run cap (never the line's own) ends before the
    /// line is written, the line's own run after it. aoitap's stream then
    /// never has more runs open than the cap, or its own `verify` would
    /// cut the oldest of them apart (docs/contract.md §3.2, §1.6).
    pub fn judged_line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        decided: &Decision<'_>,
        ended: &[RunVerdict],
    ) -> io::Result<()> {
        if ended.is_empty() {
            return self.line(out, line, decided);
        }
        let own = |r: &&RunVerdict| decided.serial() == Some(r.hint.serial);
        for r in ended.iter().filter(|r| !own(r)) {
            self.verdict(out, r)?;
        }
        self.line(out, line, decided)?;
        for r in ended.iter().filter(own) {
            self.verdict(out, r)?;
        }
        Ok(())
    }

    pub fn finding(&mut self, f: &Finding) {
        match &mut self.single {
            Some((_, weighed)) => weighed.finding(f),
            None => self.stray.finding(f),
        }
    }

    /// A run judged: with `--multi-run`, its run of aoitap's ends.
    pub fn verdict(&mut self, out: &mut dyn Write, r: &RunVerdict) -> io::Result<()> {
        if let Some((_, weighed)) = &mut self.single {
            weighed.run(r);
            return Ok(());
        }
        let own = self.runs.remove_judged(r).unwrap_or_else(OwnRun::new);
        let mut weighed = Weighed::default();
        weighed.run(r);
        let exit = weighed.tally.exit();
        self.said_nonconforming |= exit == Exit::Nonconforming;
        own.end(out, "upgrade", &weighed.outcome(exit, &self.origin, false))
    }

    /// Reading is over, and `exit` is the verdict (or a signal's status):
    /// the one run ends with it; with `--multi-run`, runs left open (a
    /// signal stopped the reading) end cancelled.
    pub fn end(&mut self, out: &mut dyn Write, exit: Exit) -> io::Result<()> {
        self.end_as(out, exit, false)
    }

    /// Runs left open by a signal or `run --timeout`: the upstream's
    /// identity they read, for the summary's `upstream` when no verdict
    /// gave one (spec §13.1). (With `--multi-run` each open run ends
    /// cancelled under its own summary, which names no upstream.)
    pub fn left_open(&mut self, open: &[OpenRun]) {
        if let Some((_, w)) = &mut self.single
            && w.tally.identity.is_none()
        {
            w.tally.identity = open.iter().find_map(|r| r.identity.clone());
        }
    }

    /// The command could not start (`exit`, 126 or 127, `why`): the
    /// run begun for it ends failed on aoitap's own error.
    pub fn not_started(&mut self, out: &mut dyn Write, exit: Exit, why: &str) -> io::Result<()> {
        let (category, code) = crate::output::jsonl::failure_of(exit);
        let own = match self.single.take() {
            Some((own, _)) => {
                self.single = Some((OwnRun::new(), Weighed::default()));
                own
            }
            None => OwnRun::new(),
        };
        own.end(
            out,
            "upgrade",
            &Outcome::failed(category, code, why.to_string()),
        )
    }

    /// As `end`; `timed_out`: `run --timeout` stopped the command, and the
    /// summary says so (a retryable `aoi:error` of aoitap's, reason
    /// timeout). A next run (`run`'s next attempt) begins at its first
    /// line.
    pub fn end_as(&mut self, out: &mut dyn Write, exit: Exit, timed_out: bool) -> io::Result<()> {
        if let Some((own, weighed)) = self.single.take() {
            self.single = Some((OwnRun::new(), Weighed::default()));
            return own.end(
                out,
                "upgrade",
                &weighed.outcome(exit, &self.origin, timed_out),
            );
        }
        for key in self.runs.keys() {
            if let Some(own) = self.runs.remove(key.as_ref()) {
                let weighed = Weighed::default();
                let gone = if exit.cancelled() || timed_out {
                    exit
                } else {
                    Exit::Nonconforming
                };
                self.said_nonconforming |= gone == Exit::Nonconforming;
                own.end(
                    out,
                    "upgrade",
                    &weighed.outcome(gone, &self.origin, timed_out),
                )?;
            }
        }
        if exit == Exit::Nonconforming && !std::mem::take(&mut self.said_nonconforming) {
            let stray = std::mem::take(&mut self.stray);
            let outcome = stray.outcome(exit, &self.origin, false);
            OwnRun::new().end(out, "upgrade", &outcome)?;
        }
        Ok(())
    }
}

/// Count what `made` became in `own`, and write it.
fn written(
    own: &mut OwnRun,
    became: Became,
    made: &mut Spliced<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    match became {
        Became::Domain => {
            own.count += 1;
            own.input += 1;
        }
        Became::Error => {
            own.errors += 1;
            own.forwarded(made.whole());
        }
        Became::Warning => own.warnings += 1,
        Became::Framework | Became::Dropped => {}
    }
    match became {
        Became::Dropped => Ok(()),
        _ => made.write_to(out),
    }
}

/// A whole upgraded stream for a command line refused, or a command that
/// could not start (docs/contract.md §1.6: stdout is a whole stream
/// whatever happens): aoitap's meta, its error, its failed summary.
pub fn refused(out: &mut dyn Write, exit: Exit, message: &str) -> io::Result<()> {
    let (category, code) = crate::output::jsonl::failure_of(exit);
    let outcome = Outcome::failed(category, code, message.to_string());
    OwnRun::new().end(out, "upgrade", &outcome)?;
    out.flush()
}

/// `aoitap upgrade`: the stream engine's consumer.
struct Upgrade {
    up: Upgrader,
    out: BufWriter<File>,
    /// A signal stopped the reading.
    cancelled: bool,
}

/// The report's sink, with every finding shown to the upgrader too, and
/// each verdict held until the line that brought it is written (an
/// AFDATA run's last event before its summary).
struct Both<'r, 'u> {
    report: &'r mut Report,
    up: &'u mut Upgrader,
    held: Vec<RunVerdict>,
}

impl Sink for Both<'_, '_> {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.up.finding(f);
        self.report.finding(f)
    }

    fn run(&mut self, r: RunVerdict) -> io::Result<()> {
        self.held.push(r);
        Ok(())
    }
}

impl Upgrade {
    /// Judged runs: each reported, and its run of aoitap's ended.
    fn judged(&mut self, held: Vec<RunVerdict>, report: &mut Report) -> io::Result<()> {
        for r in held {
            self.up.verdict(&mut self.out, &r)?;
            report.run(r)?;
        }
        Ok(())
    }
}

impl Consumer for Upgrade {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        let mut both = Both {
            report,
            up: &mut self.up,
            held: vec![],
        };
        let decided = check.judge(line, &mut both)?;
        let Both { report, held, .. } = both;
        self.up.judged_line(&mut self.out, line, &decided, &held)?;
        for r in held {
            report.run(r)?;
        }
        Ok(decided.kind)
    }

    fn input_read(
        &mut self,
        check: &mut Checker,
        _report: &mut Report,
        cancelled: bool,
    ) -> Result<Option<&'static str>> {
        self.cancelled |= cancelled;
        if cancelled {
            self.up.left_open(&check.open_runs());
        }
        Ok(cancelled.then_some("cancelled"))
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        let mut both = Both {
            report,
            up: &mut self.up,
            held: vec![],
        };
        check.finish(&mut both)?;
        let Both { report, held, .. } = both;
        self.judged(held, report)?;
        Ok(())
    }

    fn end_all(&mut self, report: &mut Report) -> Result<()> {
        // The exit status as the report will decide it; a signal's is
        // decided after this, so a cancel is told by `input_read`.
        let exit = match self.cancelled {
            true => Exit::Interrupted,
            false => report.tally.decide(None, |v| v),
        };
        self.up.end(&mut self.out, exit)?;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(self.out.flush()?)
    }
}
