//! `aoitap reconcile`: account for every event (docs/contract.md §1.2). Per run: the
//! seq space present and missing, repeats and reorderings, lines received
//! against `event_count`, the summary's counters against what was seen,
//! harness elision markers against the gaps they stand for, and with
//! `--against` a reference capture event by event.
//!
//! Lines that are not JSON are counted, never fatal: a harness transcript
//! is exactly what this reads. Memory is bounded: each run's accounting
//! (`account.rs`) lists a bounded number of missing ranges, and the
//! reference (`against.rs`) keeps one 8-byte digest per event.

use std::io;

use crate::check::{
    Checker, Decision, LineKind, Markers, Run, RunRef, RunVerdict, SeqPlace, Verdict,
};
use crate::config::{ReconcileOptions, ReportTo};
use crate::exit::{Error, Exit, Result};
use crate::input::scan::Line;
use crate::json::Event;
use crate::output::reconcile::Counters;
use crate::stream::{self, Consumer, Holder, PerRun, Report};
use crate::text::clean;

mod account;
mod against;

use account::Recon;
use against::Reference;

pub fn run(opts: &ReconcileOptions) -> Result<Exit> {
    let markers = Markers::new(&opts.stream.check.markers);
    let against = match &opts.against {
        None => None,
        Some(path) => match Reference::read(path, opts.stream.max_line_bytes) {
            Ok(r) => Some(r),
            Err(e) => {
                let what = format!("cannot read the reference {}", path.display());
                return Err(if e.kind() == io::ErrorKind::NotFound {
                    Error::NoInput(format!("{what}: {e}"))
                } else {
                    Error::io(what, e)
                });
            }
        },
    };
    let mut consumer = Reconcile {
        markers,
        unbounded: opts.stream.check.unbounded,
        runs: PerRun::default(),
        wrong: false,
        against,
        ended: vec![],
    };
    stream::run(&opts.stream, "reconcile", ReportTo::Stdout, &mut consumer)
}

struct Reconcile {
    markers: Markers,
    unbounded: bool,
    /// Per run; the run of the last event is the one a marker speaks of.
    runs: PerRun<Recon>,
    wrong: bool,
    against: Option<Reference>,
    /// Runs a line ended, as the checker gave them: kept empty between
    /// lines.
    ended: Vec<RunVerdict>,
}

impl Consumer for Reconcile {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        // The checker attributes each line and its findings count toward
        // the exit status; its verdicts are held, for reconcile reports
        // each run its own way once the line is accounted for.
        let mut closed = std::mem::take(&mut self.ended);
        let runs = &self.runs;
        let judged = Holder::judge(check, line, report, &mut closed, &|s| runs.touch(s));
        let Ok(decided) = &judged else {
            return judged.map(|d| d.kind).map_err(Into::into);
        };
        let seen = decided.kind;
        let number = decided.line;
        // A late line of a judged run is the checker's finding; it opens
        // no run of reconcile's own.
        if let Line::Complete { bytes, .. } = *line
            && !seen.late
            && !seen.held
        {
            match line.event() {
                Some(ev) => {
                    self.event(decided, &ev, bytes, number, &seen, report)?;
                }
                // Events judged from inside the line (a one-document
                // producer's array): the checker's to account for.
                None if seen.event => {
                    let r = self.runs.of(decided, || Recon::new(number));
                    r.protocol = seen.protocol;
                    r.lines += 1;
                    r.last_line = number;
                }
                None => self.text(bytes, number),
            }
        }
        for r in closed.drain(..) {
            report.tally.run(&r);
            self.close(RunRef::of_report(&r), Some(&r), report)?;
        }
        self.ended = closed;
        Ok(seen)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        for r in Holder::finish(check, report)? {
            report.tally.run(&r);
            self.close(RunRef::of_report(&r), Some(&r), report)?;
        }
        // Runs the checker never opened (only text lines).
        let rest = self.runs.keys();
        for key in rest {
            self.close(key.as_ref(), None, report)?;
        }
        if let Some(reference) = &mut self.against {
            self.wrong |= reference.differences(report)?;
        }
        Ok(())
    }

    /// The checker's verdict (docs/contract.md §3.2), and 65 where reconciling found
    /// more: reconcile adds findings, never removes one.
    fn exit(&self, verdict: Exit) -> Exit {
        if self.wrong {
            Exit::Nonconforming
        } else {
            verdict
        }
    }
}

impl Reconcile {
    fn text(&mut self, bytes: &[u8], number: u64) {
        let claims = self.markers.claims(bytes);
        // A marker speaks of the gap in the run of the event before it.
        let r = self.runs.last_or(Run::Nowhere, || Recon::new(number));
        match claims {
            Some(n) => {
                r.unmatched_marker();
                r.marker = Some((n, number));
            }
            // Not an event, but a line the producer wrote: it counts as
            // received and takes one seq step, as in the checker (docs/contract.md §3.1).
            None => {
                r.rest_mut().other_lines += 1;
                r.lines += 1;
                r.seq.skip();
            }
        }
    }

    /// An event of the run `decided` names.
    fn event(
        &mut self,
        decided: &Decision<'_>,
        ev: &Event<'_>,
        bytes: &[u8],
        number: u64,
        seen: &LineKind,
        report: &mut Report,
    ) -> io::Result<()> {
        // Compared, never shown: the decoded bytes, with no UTF-8 pass.
        let ty = ev.ty_bytes();
        let r = self.runs.of(decided, || Recon::new(number));
        r.protocol = seen.protocol;
        r.lines += 1;
        // Stepped as the checker stepped it: the two count one gap.
        match seen.seq {
            SeqPlace::At(n) => r.seq(n, r.last_line),
            SeqPlace::Skipped => r.seq.skip(),
            SeqPlace::Untracked => {}
        }
        r.last_line = number;
        match ty.as_deref() {
            Some(b"aoi:warning") => r.rest_mut().warnings += 1,
            Some(b"aoi:error") => r.rest_mut().errors += 1,
            Some(b"aoi:summary") => {
                let [event_count, count, warning_count, error_count] = ev
                    .get_each(["event_count", "count", "warning_count", "error_count"])
                    .map(|v| v.and_then(|v| v.uint()));
                r.rest_mut().summary = Some(Counters {
                    event_count,
                    count,
                    warning_count,
                    error_count,
                });
            }
            Some(t) if !t.starts_with(b"aoi:") => r.domain += 1,
            _ => {}
        }
        if let Some(reference) = &mut self.against {
            self.wrong |= reference.event(ev, bytes, number, report)?;
        }
        Ok(())
    }

    /// Report a run and let it go; `judged` is the checker's report of it.
    fn close(
        &mut self,
        key: RunRef<'_>,
        judged: Option<&RunVerdict>,
        report: &mut Report,
    ) -> io::Result<()> {
        let held = match judged {
            Some(j) => self.runs.remove_judged(j),
            None => self.runs.remove(key),
        };
        let Some(r) = held else {
            return Ok(());
        };
        let ok = r.reconciles(self.unbounded);
        // The checker's verdict is the verdict (docs/contract.md §3.2): each way a run
        // fails to reconcile is a finding of its rules, and one the user
        // allowed (`--allow seq.gap`) does not fail here either. Only runs
        // the checker never saw are judged by the accounting alone.
        let verdict = match judged {
            Some(j) => j.verdict,
            None if !ok => Verdict::Nonconforming,
            None => Verdict::Pass,
        };
        self.wrong |= judged.is_none() && !ok;
        if judged.is_none() {
            report.tally.verdict(verdict);
        }
        let name = judged.and_then(|j| j.run.clone()).or_else(|| match key {
            Run::Id(id) => Some(String::from_utf8_lossy(id).into_owned()),
            _ => None,
        });
        let who = match &name {
            Some(n) => format!("run {}", clean(n)),
            None => format!("run from line {}", r.first_line),
        };
        let account = r.account();
        report
            .out
            .reconciled(&account, &who, name.as_deref(), judged, ok, verdict)
    }
}
