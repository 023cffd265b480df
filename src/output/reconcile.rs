//! reconcile's report of a run (DESIGN §6): the human block with its seq
//! bar, and the `gap`, `run` and `difference` events.

use serde::Serialize;

use crate::check::{Protocol, Run, RunKey, SeqTrack, Verdict};
use crate::text::{clean, plural};

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
    /// The seq space: up to `event_count`, or past the last seq seen.
    fn space(&self) -> u64 {
        self.summary
            .and_then(|s| s.event_count)
            .unwrap_or(0)
            .max(self.seq.next())
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
        if at < self.seq.next() {
            out.push((at, self.seq.next() - 1));
        }
        out
    }

    /// How many seqs in `lo..=hi` are missing: in listed gaps, or past the
    /// last seq seen (a cut tail the summary's event_count reveals).
    fn missing_in(&self, lo: u64, hi: u64) -> u64 {
        let overlap = |a: u64, b: u64| {
            let (s, e) = (a.max(lo), b.min(hi));
            if s <= e { e - s + 1 } else { 0 }
        };
        self.gaps.iter().map(|g| overlap(g.from, g.to)).sum::<u64>()
            + overlap(self.seq.next(), u64::MAX)
    }

    /// One line: each cell is present (█), missing (░) or partly (▒).
    fn bar(&self, width: u64) -> String {
        let n = self.space();
        let cells = width.min(n);
        (0..cells)
            .map(|c| {
                let (lo, hi) = (c * n / cells, (c + 1) * n / cells - 1);
                match self.missing_in(lo, hi) {
                    0 => '█',
                    m if m > hi - lo => '░',
                    _ => '▒',
                }
            })
            .collect()
    }
}

/// The human block of a run: `ok` says whether its accounting balances,
/// `verdict` is the checker's.
pub fn human_block(a: &Account<'_>, who: &str, file: &str, ok: bool, verdict: Verdict) -> String {
    let s = a.summary;
    // RECONCILED is said only of a run that passed (DESIGN §13): an
    // accounting that balances on a failed or broken run is not a
    // clean bill.
    let word = match (ok, verdict) {
        (false, _) => "INCOMPLETE",
        (true, Verdict::Pass) => "RECONCILED",
        (true, Verdict::Failed) => "ACCOUNTED FOR, FAILED",
        (true, Verdict::Retryable) => "ACCOUNTED FOR, RETRYABLE",
        (true, Verdict::Nonconforming) => "ACCOUNTED FOR, NOT CONFORMING",
    };
    let mut t = format!("{who} ({}:{})  {word}\n", clean(file), a.first_line);
    if a.seq.started() {
        let n = a.space();
        let present = n - a.missing_in(0, n.saturating_sub(1)).min(n);
        t.push_str(&format!(
            "  seq 0..{:<6} {}  {present} of {n} present\n",
            n.saturating_sub(1),
            a.bar(40),
        ));
        let present: Vec<String> = a
            .present()
            .iter()
            .map(|(a, b)| range_text(*a, *b))
            .collect();
        t.push_str(&format!("  present    {}\n", fit_list(&present)));
        for g in a.gaps {
            let mut line = format!(
                "  missing    {} ({}) after line {}",
                range_text(g.from, g.to),
                g.count(),
                g.after_line
            );
            if let Some((claims, at)) = g.marker {
                let verdict = if claims == g.count() {
                    "agrees"
                } else {
                    "disagrees"
                };
                line.push_str(&format!("; marker at line {at} claims {claims}: {verdict}"));
            }
            t.push_str(&line);
            t.push('\n');
        }
        if a.gaps_unlisted > 0 {
            t.push_str(&format!(
                "  missing    {} more ranges not listed\n",
                a.gaps_unlisted
            ));
        }
        if a.repeats + a.reorders > 0 {
            t.push_str(&format!(
                "  order      {} repeated, {} reordered\n",
                a.repeats, a.reorders
            ));
        }
    } else {
        t.push_str("  seq        unverifiable: no seq, so what is missing cannot be known\n");
    }
    let claimed = |v: Option<u64>| v.map_or("none".to_string(), |n| n.to_string());
    t.push_str(&format!(
        "  lines      {} received, event_count {}\n",
        a.lines,
        claimed(s.and_then(|s| s.event_count))
    ));
    if a.protocol == Protocol::Aoi02
        && let Some(s) = s
    {
        // 0.2's count is every line of the run, meta and summary too.
        t.push_str(&format!(
            "  counts     count {} vs {} lines; warnings {} vs {}; errors {} vs {}\n",
            claimed(s.count),
            a.lines,
            claimed(s.warning_count),
            a.warnings,
            claimed(s.error_count),
            a.errors
        ));
    } else if a.protocol.runs_by_position() {
        t.push_str(&format!(
            "  protocol   {}: no counts to reconcile\n",
            a.protocol.name()
        ));
    } else if let Some(s) = s {
        t.push_str(&format!(
            "  counts     count {} vs {} seen; warnings {} vs {}; errors {} vs {}\n",
            claimed(s.count),
            a.domain,
            claimed(s.warning_count),
            a.warnings,
            claimed(s.error_count),
            a.errors
        ));
    } else {
        t.push_str("  counts     no aoi:summary to reconcile with\n");
    }
    if a.other_lines > 0 {
        t.push_str(&format!(
            "  text       {} not JSON (counted, not judged)\n",
            plural(a.other_lines, "line")
        ));
    }
    for note in a.marker_notes {
        t.push_str(&format!("  marker     {note}\n"));
    }
    if let Some((claims, at)) = a.marker {
        t.push_str(&format!(
            "  marker     the marker at line {at} claims {claims} lines, but no event followed it\n"
        ));
    }
    t.push('\n');
    t
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

/// A run's `gap` events, one per listed gap.
pub fn gap_events<'a>(
    a: &'a Account<'_>,
    run: Option<&'a str>,
) -> impl Iterator<Item = GapEvent<'a>> {
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
pub fn run_event<'a>(a: &'a Account<'_>, run: Option<&'a str>, verdict: Verdict) -> RunEvent<'a> {
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

/// How the reports name a run.
pub fn run_name(key: &RunKey) -> String {
    match key {
        Run::Id(id) => String::from_utf8_lossy(id).into_owned(),
        Run::FromLine(n) => format!("(from line {n})"),
        Run::Nowhere => "(none)".to_string(),
    }
}

fn range_text(a: u64, b: u64) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}..{b}")
    }
}

/// A list cut to fit one 80-column row.
fn fit_list(items: &[String]) -> String {
    let mut out = String::new();
    for (i, it) in items.iter().enumerate() {
        let more = format!(" (+{} more)", items.len() - i);
        if out.len() + it.len() + 2 + more.len() > 66 && i + 1 < items.len() {
            out.push_str(&more);
            return out;
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(it);
    }
    out
}

/// `difference`: an event that is not the reference's (DESIGN §6).
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

/// `gap`: seqs a run lacks.
#[derive(Serialize)]
pub struct GapEvent<'a> {
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
pub struct RunEvent<'a> {
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
