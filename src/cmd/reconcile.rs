//! `aoitap reconcile`: account for every event (DESIGN §6). Per run: the
//! seq space present and missing, repeats and reorderings, lines received
//! against `event_count`, the summary's counters against what was seen,
//! harness elision markers against the gaps they stand for, and with
//! `--against` a reference capture event by event.
//!
//! Lines that are not JSON are counted, never fatal: a harness transcript
//! is exactly what this reads. Memory is bounded: at most `MAX_GAPS`
//! missing ranges are listed per run (the rest are counted, and the report
//! says so); `--against` keeps one 8-byte digest per reference event.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::Path;

use crate::check::{
    Checker, Markers, Protocol, Run, RunKey, RunRef, RunVerdict, Seen, SeqSeen, SeqTrack, Step,
    Verdict, digest, id_key,
};
use crate::config::{Input, ReconcileOptions, ReportTo};
use crate::exit::{Error, Exit, Result};
use crate::input::scan::{Cutter, Line};
use crate::json::{Aoi, Event, Parser, Uint};
use crate::output::reconcile::{self, Account, Counters, Difference, Gap};
use crate::output::style::Format;
use crate::stream::{self, Consumer, Held, PerRun, Report};
use crate::text::clean;

/// Missing ranges listed per run; more are counted.
const MAX_GAPS: usize = 1000;

/// Differences from the reference listed; more are counted.
const MAX_DIFFS: usize = 1000;

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
    };
    stream::run(&opts.stream, "reconcile", ReportTo::Stdout, &mut consumer)
}

#[derive(Default)]
struct Recon {
    first_line: u64,
    /// Lines of the run: events and unreadable lines (markers are not
    /// lines the producer wrote).
    lines: u64,
    /// The line number of the run's last event.
    last_line: u64,
    other_lines: u64,
    domain: u64,
    warnings: u64,
    errors: u64,
    seq: SeqTrack,
    gaps: Vec<Gap>,
    gaps_unlisted: u64,
    missing: u64,
    repeats: u64,
    reorders: u64,
    /// A marker not yet matched with a gap: (claims, line).
    marker: Option<(u64, u64)>,
    /// Markers whose claim did not match what was missing.
    marker_notes: Vec<String>,
    summary: Option<Counters>,
    /// The run's protocol, as the checker decided it.
    protocol: Protocol,
}

impl Recon {
    fn new(first_line: u64) -> Recon {
        Recon {
            first_line,
            ..Recon::default()
        }
    }

    /// A seq at `line`; `before` is the run's previous event line.
    fn seq(&mut self, n: u64, before: u64) {
        match self.seq.step(n) {
            Step::HeadCut { count } | Step::Gap { count, .. } => {
                let gap = Gap {
                    from: n - count,
                    to: n - 1,
                    after_line: before,
                    marker: self.marker.take(),
                };
                if let Some((claims, at)) = gap.marker
                    && claims != gap.count()
                {
                    self.marker_notes.push(format!(
                        "the marker at line {at} claims {claims} lines, but seq {}..{} is {} missing",
                        gap.from,
                        gap.to,
                        gap.count()
                    ));
                }
                self.missing = self.missing.saturating_add(gap.count());
                if self.gaps.len() < MAX_GAPS {
                    self.gaps.push(gap);
                } else {
                    self.gaps_unlisted += 1;
                }
            }
            Step::InOrder => self.unmatched_marker(),
            Step::Back { .. } => {
                self.unmatched_marker();
                self.late(n);
            }
        }
    }

    /// A seq below the next expected: a late event filling a gap
    /// (reordered), or one seen already (repeated).
    fn late(&mut self, n: u64) {
        let i = self.gaps.partition_point(|g| g.to < n);
        match self.gaps.get(i) {
            Some(g) if g.from <= n => {
                self.reorders += 1;
                self.missing -= 1;
                let g = self.gaps.remove(i);
                let (left, right) = (
                    (g.from < n).then(|| Gap {
                        to: n - 1,
                        ..g.clone()
                    }),
                    (n < g.to).then(|| Gap { from: n + 1, ..g }),
                );
                for part in [right, left].into_iter().flatten() {
                    self.gaps.insert(i, part);
                }
            }
            _ => self.repeats += 1,
        }
    }

    fn unmatched_marker(&mut self) {
        if let Some((claims, at)) = self.marker.take() {
            self.marker_notes.push(format!(
                "the marker at line {at} claims {claims} lines, but nothing is missing there"
            ));
        }
    }

    /// Does every count agree? A run without seq cannot be accounted for
    /// event by event (it says "unverifiable"), yet is no fault of its own;
    /// a run without summary is a fault unless the stream is unbounded.
    fn reconciles(&self, unbounded: bool) -> bool {
        // Without seq there is nothing of reconcile's own to account for:
        // the checker's findings on counts and ends decide (DESIGN §9).
        if self.protocol != Protocol::Aoi {
            return true;
        }
        let Some(s) = &self.summary else {
            return unbounded && self.missing == 0 && self.repeats == 0;
        };
        self.missing == 0
            && self.repeats == 0
            && self.marker_notes.is_empty()
            && self.marker.is_none()
            && s.event_count.is_none_or(|n| n == self.lines)
            && s.count.is_none_or(|c| c == self.domain)
            && s.warning_count.is_none_or(|c| c >= self.warnings)
            && s.error_count.is_none_or(|c| c >= self.errors)
    }

    /// What the reports show of the run.
    fn account(&self) -> Account<'_> {
        Account {
            first_line: self.first_line,
            lines: self.lines,
            other_lines: self.other_lines,
            domain: self.domain,
            warnings: self.warnings,
            errors: self.errors,
            seq: &self.seq,
            gaps: &self.gaps,
            gaps_unlisted: self.gaps_unlisted,
            missing: self.missing,
            repeats: self.repeats,
            reorders: self.reorders,
            marker: self.marker,
            marker_notes: &self.marker_notes,
            summary: self.summary.as_ref(),
            protocol: self.protocol,
        }
    }
}

/// The reference capture of `--against`: a digest per (run, seq).
struct Reference {
    events: HashMap<(RunKey, u64), (u64, bool)>,
    unkeyed: u64,
}

/// The run id and seq of an event, if it carries both.
fn run_seq(ev: &Event<'_>) -> Option<(RunKey, u64)> {
    let Aoi::Object {
        seq: Some(seq),
        run: Some(run),
    } = ev.aoi()
    else {
        return None;
    };
    let Uint::Int(n) = seq.as_uint() else {
        return None;
    };
    Some((Run::Id(id_key(&run.decoded()?).into()), n))
}

impl Reference {
    fn read(path: &Path, max_line: usize) -> io::Result<Reference> {
        let mut cut = Cutter::new(Input::Path(path.to_path_buf()).open()?, max_line);
        let mut parser = Parser::new();
        let mut r = Reference {
            events: HashMap::new(),
            unkeyed: 0,
        };
        while let Some(mut batch) = cut.next_batch()? {
            batch.parse(&mut parser, None);
            for line in batch.lines() {
                let Line::Complete { bytes, json, .. } = line else {
                    continue;
                };
                match json.ok().as_ref().and_then(run_seq) {
                    Some(key) => {
                        r.events.insert(key, (digest(bytes), false));
                    }
                    None => r.unkeyed += 1,
                }
            }
        }
        Ok(r)
    }
}

struct Reconcile {
    markers: Markers,
    unbounded: bool,
    /// Per run; the run of the last event is the one a marker speaks of.
    runs: PerRun<Recon>,
    wrong: bool,
    against: Option<Reference>,
}

impl Consumer for Reconcile {
    fn line(&mut self, check: &mut Checker, line: &Line<'_>, report: &mut Report) -> Result<Seen> {
        // The checker only attributes here; its verdicts are not this
        // command's, and its findings are not counted.
        let mut held = Held {
            tally: Some(report),
            runs: vec![],
        };
        let seen = check.judge(line, &mut held)?;
        let closed = held.runs;
        let number = check.line_number();
        // A late line of a judged run is the checker's finding; it opens
        // no run of reconcile's own.
        if let Line::Complete { bytes, .. } = *line
            && !seen.late
        {
            match line.event() {
                Some(ev) => {
                    let run = check.run_of_last_line();
                    self.event(run, &ev, bytes, number, &seen, report)?;
                }
                None => self.text(bytes, number),
            }
        }
        for r in closed {
            report.tally.run(&r);
            self.close(&RunKey::of_report(&r), Some(&r), report)?;
        }
        Ok(seen)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        let mut held = Held {
            tally: Some(report),
            runs: vec![],
        };
        check.finish(&mut held)?;
        let closed = held.runs;
        for r in closed {
            report.tally.run(&r);
            self.close(&RunKey::of_report(&r), Some(&r), report)?;
        }
        // Runs the checker never opened (only text lines).
        let rest = self.runs.keys();
        for key in rest {
            self.close(&key, None, report)?;
        }
        Ok(self.differences(report)?)
    }

    /// The checker's verdict (DESIGN §8), and 65 where reconciling found
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
            // received and takes one seq step, as in the checker (DESIGN §3).
            None => {
                r.other_lines += 1;
                r.lines += 1;
                r.seq.skip();
            }
        }
    }

    /// An event of `run`.
    fn event(
        &mut self,
        run: RunRef<'_>,
        ev: &Event<'_>,
        bytes: &[u8],
        number: u64,
        seen: &Seen,
        report: &mut Report,
    ) -> io::Result<()> {
        // Compared, never shown: the decoded bytes, with no UTF-8 pass.
        let ty = ev.ty_bytes();
        let r = self.runs.get(run, || Recon::new(number));
        r.protocol = seen.protocol;
        r.lines += 1;
        // Stepped as the checker stepped it: the two count one gap.
        match seen.seq {
            SeqSeen::At(n) => r.seq(n, r.last_line),
            SeqSeen::Skipped => r.seq.skip(),
            SeqSeen::Untracked => {}
        }
        r.last_line = number;
        match ty.as_deref() {
            Some(b"aoi:warning") => r.warnings += 1,
            Some(b"aoi:error") => r.errors += 1,
            Some(b"aoi:summary") => {
                let num = |k: &str| ev.get(k).and_then(|v| v.uint());
                r.summary = Some(Counters {
                    event_count: num("event_count"),
                    count: num("count"),
                    warning_count: num("warning_count"),
                    error_count: num("error_count"),
                });
            }
            Some(t) if !t.starts_with(b"aoi:") => r.domain += 1,
            _ => {}
        }
        let Some(reference) = &mut self.against else {
            return Ok(());
        };
        let Some(k) = run_seq(ev) else { return Ok(()) };
        let (kind, seq) = match reference.events.get_mut(&k) {
            None => ("extra", k.1),
            Some((_, true)) => ("extra", k.1),
            Some((d, seen)) => {
                *seen = true;
                if *d == digest(bytes) {
                    return Ok(());
                }
                ("altered", k.1)
            }
        };
        self.wrong = true;
        let run = reconcile::run_name(&k.0);
        let text = reconcile::difference_text(&report.out.file, number, kind, &run, seq);
        report.out.text(&text)?;
        report.out.domain(
            "difference",
            Difference {
                kind,
                run: &run,
                from_seq: seq,
                to_seq: seq,
                count: 1,
                line_number: Some(number),
            },
        )
    }

    /// Report a run and let it go; `judged` is the checker's report of it.
    fn close(
        &mut self,
        key: &RunKey,
        judged: Option<&RunVerdict>,
        report: &mut Report,
    ) -> io::Result<()> {
        let Some(r) = self.runs.remove(key) else {
            return Ok(());
        };
        let ok = r.reconciles(self.unbounded);
        // The checker's verdict is the verdict (DESIGN §8): each way a run
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
        if report.out.format() == Format::Human {
            let file = &report.out.file;
            let block = reconcile::human_block(&account, &who, file, ok, verdict);
            report.out.text(&block)?;
        }
        for gap in reconcile::gap_events(&account, name.as_deref()) {
            report.out.domain("gap", gap)?;
        }
        let run = reconcile::run_event(&account, name.as_deref(), verdict);
        report.out.domain("run", run)
    }

    /// `--against`: reference events never seen, by run, as ranges.
    fn differences(&mut self, report: &mut Report) -> io::Result<()> {
        let Some(reference) = &mut self.against else {
            return Ok(());
        };
        let mut missing: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
        for ((key, seq), (_, seen)) in reference.events.drain() {
            if !seen && let Run::Id(id) = key {
                missing.entry(id.into()).or_default().push(seq);
            }
        }
        let mut listed = 0;
        for (id, mut seqs) in missing {
            self.wrong = true;
            seqs.sort_unstable();
            let run = String::from_utf8_lossy(&id).into_owned();
            let mut i = 0;
            while i < seqs.len() {
                let mut j = i;
                while j + 1 < seqs.len() && seqs[j + 1] == seqs[j] + 1 {
                    j += 1;
                }
                listed += 1;
                if listed <= MAX_DIFFS {
                    let (from, to) = (seqs[i], seqs[j]);
                    let text = reconcile::missing_text(&report.out.file, &run, from, to);
                    report.out.text(&text)?;
                    report.out.domain(
                        "difference",
                        Difference {
                            kind: "missing",
                            run: &run,
                            from_seq: from,
                            to_seq: to,
                            count: to - from + 1,
                            line_number: None,
                        },
                    )?;
                }
                i = j + 1;
            }
        }
        if listed > MAX_DIFFS {
            report
                .out
                .text(&reconcile::more_missing_text(listed - MAX_DIFFS))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reordered_events_close_their_gap() {
        let mut r = Recon::default();
        for n in [0, 1, 4, 2, 3, 3] {
            r.seq(n, 1);
        }
        assert_eq!((r.missing, r.reorders, r.repeats), (0, 2, 1));
        assert!(r.gaps.is_empty());
        let mut r = Recon::default();
        for n in [0, 5, 2] {
            r.seq(n, 1);
        }
        let ranges: Vec<(u64, u64)> = r.gaps.iter().map(|g| (g.from, g.to)).collect();
        assert_eq!(ranges, vec![(1, 1), (3, 4)]);
        assert_eq!(r.account().present(), vec![(0, 0), (2, 2), (5, 5)]);
    }

    #[test]
    fn gap_lists_are_bounded() {
        let mut r = Recon::default();
        for k in 0..(MAX_GAPS as u64 + 10) {
            r.seq(k * 2, 1);
        }
        assert_eq!(r.gaps.len(), MAX_GAPS);
        assert_eq!(r.gaps_unlisted, 9);
        assert_eq!(r.missing, MAX_GAPS as u64 + 9);
    }
}
