//! reconcile's account of a run (docs/contract.md §1.2): the seqs present and missing,
//! the counts its summary claims, and the words and `difference` event
//! `--against` reports with; each printer words the account its own way.

use serde::Serialize;

use crate::check::{Protocol, Run, RunKey, SeqTrack};
use crate::text::{clean, push_number};

/// Cells of a run's seq bar, on a terminal and on a page alike.
pub const BAR_CELLS: u64 = 40;

/// One missing range of seqs.
#[derive(Clone, Debug)]
pub struct Gap {
    pub from: u64,
    pub to: u64,
    pub after_line: u64,
    /// The elision marker that stands for it: (lines it claims, its line).
    pub marker: Option<(u64, u64)>,
}

impl Gap {
    pub fn count(&self) -> u64 {
        self.to - self.from + 1
    }
}

/// What a run's `aoi:summary` claims.
#[derive(Default)]
pub struct Counters {
    pub event_count: Option<u64>,
    pub count: Option<u64>,
    pub warning_count: Option<u64>,
    pub error_count: Option<u64>,
}

/// One run's accounting, as reconcile's reports show it.
pub struct Account<'a> {
    pub first_line: u64,
    /// The number of the run's last event.
    pub last_line: u64,
    /// Events and unreadable lines.
    pub lines: u64,
    pub other_lines: u64,
    pub domain: u64,
    pub warnings: u64,
    pub errors: u64,
    pub seq: &'a SeqTrack,
    pub gaps: &'a [Gap],
    pub gaps_unlisted: u64,
    pub missing: u64,
    pub repeats: u64,
    pub reorders: u64,
    /// A marker no gap followed: (claims, line).
    pub marker: Option<(u64, u64)>,
    pub marker_notes: &'a [String],
    pub summary: Option<&'a Counters>,
    pub protocol: Protocol,
}

impl Account<'_> {
    /// The seq space, as a count: up to `event_count`, or past the last
    /// seq seen (2^64 when that was `u64::MAX`).
    pub fn space(&self) -> u128 {
        let claimed = self.summary.and_then(|s| s.event_count).unwrap_or(0);
        u128::from(claimed).max(self.seq.reached())
    }

    /// The last seq of the space (none when it is empty).
    fn last(&self) -> Option<u64> {
        self.space().checked_sub(1).map(|n| n as u64)
    }

    /// Present ranges: the complement of the listed gaps.
    pub fn present(&self) -> Vec<(u64, u64)> {
        let mut out = vec![];
        if !self.seq.started() {
            return out;
        }
        let mut at = 0;
        for g in self.gaps {
            if g.from > at {
                out.push((at, g.from - 1));
            }
            at = g.to + 1;
        }
        let seen = self.seq.reached();
        if u128::from(at) < seen {
            out.push((at, (seen - 1) as u64));
        }
        out
    }

    /// How many seqs in `lo..=hi` are missing: in listed gaps, or past the
    /// last seq seen (a cut tail the summary's event_count reveals).
    pub fn missing_in(&self, lo: u64, hi: u64) -> u64 {
        let overlap = |a: u64, b: u64| {
            let (s, e) = (a.max(lo), b.min(hi));
            if s <= e { e - s + 1 } else { 0 }
        };
        let past = match self.seq.reached() {
            seen if seen > u128::from(u64::MAX) => 0,
            seen => overlap(seen as u64, u64::MAX),
        };
        self.gaps.iter().map(|g| overlap(g.from, g.to)).sum::<u64>() + past
    }

    /// How many seqs of the space are present.
    pub fn present_count(&self) -> u128 {
        let missing = self.last().map_or(0, |last| self.missing_in(0, last));
        self.space() - u128::from(missing).min(self.space())
    }

    /// One line at the end of `out`: each cell is present (█), missing
    /// (░) or partly (▒).
    pub fn push_bar(&self, out: &mut String, width: u64) {
        let n = self.space();
        let cells = u128::from(width).min(n) as u64;
        if self.last().is_none_or(|last| self.missing_in(0, last) == 0) {
            // Nothing missing (most runs): every cell is present, with no
            // division per cell (docs/contract.md §8.2).
            out.extend(std::iter::repeat_n('█', cells as usize));
            return;
        }
        // Cell c covers seqs c*n/cells up to the next cell's start, in
        // 128 bits: a seq space near u64::MAX would wrap in 64.
        let start = |c: u64| u128::from(c) * n / u128::from(cells);
        out.extend((0..cells).map(|c| {
            let (lo, hi) = (start(c) as u64, (start(c + 1) - 1) as u64);
            match self.missing_in(lo, hi) {
                0 => '█',
                m if m > hi - lo => '░',
                _ => '▒',
            }
        }));
    }
}

/// `--against`: an event that is not the reference's, as a person reads it.
pub fn difference_text(file: &str, number: u64, kind: &str, run: &str, seq: u64) -> String {
    format!(
        "{file}:{number}: {kind} event: run {} seq {seq}\n",
        clean(run)
    )
}

/// `--against`: reference events never seen, as a person reads them.
pub fn missing_text(file: &str, run: &str, from: u64, to: u64) -> String {
    format!(
        "{file}: missing against the reference: run {} seq {} ({})\n",
        clean(run),
        range_text(from, to),
        to - from + 1
    )
}

/// `--against`: the ranges past the listed ones.
pub fn more_missing_text(n: usize) -> String {
    format!("{n} more missing ranges not listed\n")
}

/// How the reports name a run.
pub fn run_name(key: &RunKey) -> String {
    match key {
        Run::Id(id) => String::from_utf8_lossy(id).into_owned(),
        Run::FromLine(n) => format!("(from line {n})"),
        Run::Nowhere => "(none)".to_string(),
    }
}

pub fn range_text(a: u64, b: u64) -> String {
    let mut t = String::new();
    push_range(&mut t, a, b);
    t
}

/// `a..b`, or `a` alone, at the end of `out`.
pub fn push_range(out: &mut String, a: u64, b: u64) {
    push_number(out, a);
    if a != b {
        out.push_str("..");
        push_number(out, b);
    }
}

/// `difference`: an event that is not the reference's (docs/contract.md §1.2).
#[derive(Serialize)]
pub struct Difference<'a> {
    pub kind: &'a str,
    pub run: &'a str,
    pub from_seq: u64,
    pub to_seq: u64,
    pub count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_number: Option<u64>,
}
