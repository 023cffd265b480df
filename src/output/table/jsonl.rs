//! summarize's and reconcile's events in aoitap's own stream
//! (docs/contract.md §5.1): `run_summary` per run, and reconcile's `gap`s
//! and `run`.

use std::io::{self, Write};

use serde::Serialize;

use super::{Reconciled, Summarized, Table};
use crate::check::Verdict;
use crate::output::jsonl::Jsonl;
use crate::output::printer::At;
use crate::output::reconcile::{Account, Counters};
use crate::output::summary::RunSummary;

impl<W: Write> Table for Jsonl<W> {
    fn summarized(&mut self, at: &At<'_>, s: &Summarized<'_>) -> io::Result<()> {
        let summary = RunSummary::of(None, s.run, s.counted);
        self.domain("run_summary", Some(at.file), summary)
    }

    fn reconciled(&mut self, at: &At<'_>, r: &Reconciled<'_>) -> io::Result<()> {
        for gap in gap_events(r.account, r.name) {
            self.domain("gap", Some(at.file), gap)?;
        }
        let run = run_event(r.account, r.name, r.verdict);
        self.domain("run", Some(at.file), run)
    }
}

/// A run's `gap` events, one per listed gap.
fn gap_events<'a>(a: &'a Account<'_>, run: Option<&'a str>) -> impl Iterator<Item = GapEvent<'a>> {
    a.gaps.iter().map(move |g| GapEvent {
        run,
        from_seq: g.from,
        to_seq: g.to,
        missing_count: g.count(),
        after_line_number: g.after_line,
        marker_claims: g.marker.map(|(claims, _)| claims),
    })
}

/// A run's `run` event.
fn run_event<'a>(a: &'a Account<'_>, run: Option<&'a str>, verdict: Verdict) -> RunEvent<'a> {
    let claimed = |f: fn(&Counters) -> Option<u64>| a.summary.and_then(f);
    RunEvent {
        run,
        first_line: a.first_line,
        lines: a.lines,
        verdict: verdict.name(),
        present: a.present(),
        missing_count: a.missing,
        gaps_not_listed: a.gaps_unlisted,
        repeats: a.repeats,
        reorders: a.reorders,
        text_lines: a.other_lines,
        seen_domain: a.domain,
        seen_warnings: a.warnings,
        seen_errors: a.errors,
        event_count: claimed(|c| c.event_count),
        count: claimed(|c| c.count),
        warning_count: claimed(|c| c.warning_count),
        error_count: claimed(|c| c.error_count),
        marker_notes: a.marker_notes,
    }
}

/// `gap`: seqs a run lacks.
#[derive(Serialize)]
struct GapEvent<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a str>,
    from_seq: u64,
    to_seq: u64,
    missing_count: u64,
    after_line_number: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    marker_claims: Option<u64>,
}

/// reconcile's `run`: every event of a run accounted for.
#[derive(Serialize)]
struct RunEvent<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a str>,
    first_line: u64,
    lines: u64,
    verdict: &'a str,
    /// Present seqs as `[from, to]` ranges.
    present: Vec<(u64, u64)>,
    missing_count: u64,
    gaps_not_listed: u64,
    repeats: u64,
    reorders: u64,
    text_lines: u64,
    seen_domain: u64,
    seen_warnings: u64,
    seen_errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    event_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warning_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_count: Option<u64>,
    marker_notes: &'a [String],
}
