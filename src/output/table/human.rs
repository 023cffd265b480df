//! summarize's and reconcile's blocks for a person: one block per run,
//! every value from the input escaped with `clean` (docs/contract.md
//! §3.2), numbers made by hand, as each block is written ten thousand
//! times over in a long log (docs/contract.md §8.2).

use std::io::{self, Write};

use super::{Reconciled, Summarized, Table};
use crate::check::{RunVerdict, Verdict};
use crate::output::human::{Human, push_run_name, verdict};
use crate::output::printer::At;
use crate::output::reconcile::{Account, Counters, push_range};
use crate::output::style;
use crate::output::summary::{Counted, Ending};
use crate::text::{clean, plural, push_number};

impl<W: Write> Table for Human<W> {
    fn summarized(&mut self, at: &At<'_>, s: &Summarized<'_>) -> io::Result<()> {
        let block = summary_block(s.run, s.counted, at.file, at.style.color, s.width);
        self.out.write_all(block.as_bytes())
    }

    fn reconciled(&mut self, at: &At<'_>, r: &Reconciled<'_>) -> io::Result<()> {
        let block = reconciled_block(r.account, r.who, at.file, r.ok, r.verdict);
        self.out.write_all(block.as_bytes())
    }
}

/// A block per run, cut to `width` columns on a terminal (never in a
/// pipe, where a reader wants every name whole). Written into one buffer:
/// a log of ten thousand runs is ten thousand blocks (docs/contract.md §8.2).
pub fn summary_block(
    r: &RunVerdict,
    st: &Counted<'_>,
    file: &str,
    color: bool,
    width: Option<usize>,
) -> String {
    use std::fmt::Write as _;
    let room = |room: usize| width.map(|w| (room + w).saturating_sub(80).max(20));
    let (word, code) = verdict(r.verdict);
    // Made by hand, not by `format!`: this is the work each run's block
    // costs, ten thousand times over (docs/contract.md §8.2).
    let mut v = String::with_capacity(128);
    push_run_name(&mut v, r);
    v.push_str(" (");
    v.push_str(&clean(file));
    v.push(':');
    push_number(&mut v, r.first_line);
    v.push(')');
    let mut out = String::with_capacity(512);
    push_fitted(&mut out, &v, room(62));
    out.push_str("  ");
    out.push_str(&style::paint(color, code, word));
    out.push('\n');
    // Each row's value is made in `v`, then shown.
    let row = |out: &mut String, label: &str, v: &str| push_row(out, label, v, room(66));
    let none = Default::default();
    let id: &crate::check::Identity = r.identity.as_ref().unwrap_or(&none);
    let tool = [
        id.tool.as_deref(),
        id.tool_version.as_deref(),
        id.command.as_deref(),
    ];
    push_joined(&mut v, &tool);
    row(&mut out, "tool", &v);
    push_schema(&mut v, id);
    row(&mut out, "schema", &v);
    if !r.protocol.is_default() {
        row(&mut out, "protocol", r.protocol.name());
    }
    v.clear();
    push_lines(&mut v, r, st);
    row(&mut out, "lines", &v);
    push_counts_by_type(&mut v, st.domain);
    row(&mut out, "domain", &v);
    push_counts_by_type(&mut v, st.framework);
    row(&mut out, "framework", &v);
    for (label, ps) in [("warnings", st.warnings), ("errors", st.errors)] {
        for (i, p) in ps.iter().enumerate() {
            v.clear();
            let _ = write!(
                v,
                "{}/{} x{} \"{}\" (line {})",
                p.category, p.code, p.count, p.first_message, p.first_line
            );
            row(&mut out, if i == 0 { label } else { "" }, &v);
        }
    }
    v.clear();
    push_outcome(&mut v, st.outcome);
    row(&mut out, "outcome", &v);
    if r.verdict != Verdict::Pass {
        row(&mut out, "verdict", &r.message);
    }
    out.push('\n');
    out
}

/// A row of a block, `  label      value`, left out when it has no
/// value. The value may come from the input, so it is cleaned of control
/// bytes before it reaches a terminal (docs/contract.md §3.2), then cut
/// to `width`.
fn push_row(out: &mut String, label: &str, v: &str, width: Option<usize>) {
    if v.is_empty() {
        return;
    }
    // `{label:<10}`, without the formatter: labels are ASCII.
    out.push_str("  ");
    out.push_str(label);
    out.extend(std::iter::repeat_n(
        ' ',
        11usize.saturating_sub(label.len()).max(1),
    ));
    push_fitted(out, &clean(v), width);
    out.push('\n');
}

/// The parts that are there, space-separated, in place of `v`.
fn push_joined(v: &mut String, parts: &[Option<&str>]) {
    v.clear();
    for p in parts.iter().flatten() {
        if !v.is_empty() {
            v.push(' ');
        }
        v.push_str(p);
    }
}

/// `aoitap-events 1.0 (aoi 1.0)`: the schema a run names, in place of
/// `v`.
fn push_schema(v: &mut String, id: &crate::check::Identity) {
    push_joined(
        v,
        &[id.schema_name.as_deref(), id.schema_version.as_deref()],
    );
    if let Some(aoi) = &id.aoi_version {
        if !v.is_empty() {
            v.push(' ');
        }
        v.push_str("(aoi ");
        v.push_str(aoi);
        v.push(')');
    }
}

/// `1,204 (5.1 KiB), seq complete`: how long the run was, and whether
/// its seq says nothing of it was lost.
fn push_lines(v: &mut String, r: &RunVerdict, st: &Counted<'_>) {
    use std::fmt::Write as _;
    push_number(v, st.lines);
    v.push_str(" (");
    push_bytes(v, st.bytes);
    v.push_str("), ");
    if !r.uses_seq {
        v.push_str("no seq: cuts in the middle cannot be seen");
    } else if r.missing == 0 && r.repeats == 0 {
        v.push_str("seq complete");
    } else {
        v.push_str(&plural(r.missing, "event"));
        v.push_str(" missing");
        if r.repeats > 0 {
            let _ = write!(v, ", {} repeated", r.repeats);
        }
    }
}

/// `hit 3, entry 2`: events counted by type, in place of `v`.
fn push_counts_by_type(v: &mut String, counts: &[(&str, u64)]) {
    v.clear();
    for (i, (k, n)) in counts.iter().enumerate() {
        if i > 0 {
            v.push_str(", ");
        }
        v.push_str(k);
        v.push(' ');
        push_number(v, *n);
    }
}

/// How a run said it ended, as its summary block and its page row say it.
pub fn push_outcome(v: &mut String, outcome: Option<&Ending>) {
    use std::fmt::Write as _;
    match outcome {
        Some(o) => {
            match o.ok {
                Some(true) => v.push_str("ok"),
                Some(false) => {
                    let why = o.reason.as_deref().unwrap_or("no reason");
                    let _ = write!(v, "not ok ({why})");
                }
                None => v.push_str("ok missing"),
            }
            if o.partial == Some(true) {
                v.push_str(", partial");
            }
            if o.truncated == Some(true) {
                v.push_str(match o.next_cursor {
                    true => ", truncated, more with cursor",
                    false => ", truncated",
                });
            }
            if let Some(ms) = o.elapsed_ms {
                let _ = write!(v, ", {ms} ms");
            }
        }
        None => v.push_str("no aoi:summary"),
    }
}

/// `27 bytes`, `5.1 KiB`, `3.0 MiB`: a size as `{:.1}` would show it.
fn push_bytes(out: &mut String, n: u64) {
    use std::fmt::Write as _;
    match n {
        0..1024 => {
            push_number(out, n);
            out.push_str(if n == 1 { " byte" } else { " bytes" });
        }
        1024..1_048_576 => {
            // n / 1024 to one decimal, as `{:.1}` rounds it (half to
            // even: n / 1024 is exact in binary, so a tie is a true tie).
            let scaled = n * 10;
            let (mut tenths, rest) = (scaled / 1024, scaled % 1024);
            if rest > 512 || (rest == 512 && tenths % 2 == 1) {
                tenths += 1;
            }
            push_number(out, tenths / 10);
            out.push('.');
            push_number(out, tenths % 10);
            out.push_str(" KiB");
        }
        _ => {
            let _ = write!(out, "{:.1} MiB", n as f64 / 1_048_576.0);
        }
    }
}

/// `s` into `out`, cut to `width` characters when there is one (see
/// `fit`).
fn push_fitted(out: &mut String, s: &str, width: Option<usize>) {
    match width {
        Some(w) => out.push_str(&fit(s, w)),
        None => out.push_str(s),
    }
}

/// Cut to `width` characters, with an ellipsis.
fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut t: String = s.chars().take(width - 1).collect();
    t.push('…');
    t
}

/// What reconcile says of a run: whether its accounting balances
/// (`ok`), and the checker's verdict.
pub fn reconciled_word(ok: bool, verdict: Verdict) -> &'static str {
    // RECONCILED is said only of a run that passed (docs/contract.md §3.3): an
    // accounting that balances on a failed or broken run is not a
    // clean bill.
    match (ok, verdict) {
        (false, _) => "INCOMPLETE",
        (true, Verdict::Pass) => "RECONCILED",
        (true, Verdict::Failed) => "ACCOUNTED FOR, FAILED",
        (true, Verdict::Retryable) => "ACCOUNTED FOR, RETRYABLE",
        (true, Verdict::Nonconforming) => "ACCOUNTED FOR, NOT CONFORMING",
    }
}

/// The human block of a run: `ok` says whether its accounting balances,
/// `verdict` is the checker's.
fn reconciled_block(a: &Account<'_>, who: &str, file: &str, ok: bool, verdict: Verdict) -> String {
    use std::fmt::Write as _;
    // Written into one string, with no string made per line of it: this
    // is the work each run's block costs, ten thousand times over
    // (docs/contract.md §8.2). (Writes to a String cannot fail.)
    let s = a.summary;
    let word = reconciled_word(ok, verdict);
    let mut t = String::with_capacity(512);
    t.push_str(who);
    t.push_str(" (");
    t.push_str(&clean(file));
    t.push(':');
    push_number(&mut t, a.first_line);
    t.push_str(")  ");
    t.push_str(word);
    t.push('\n');
    push_seq_rows(&mut t, a);
    t.push_str("  lines      ");
    push_number(&mut t, a.lines);
    t.push_str(" received, event_count ");
    push_claimed(&mut t, s.and_then(|s| s.event_count));
    t.push('\n');
    push_count_rows(&mut t, a);
    if a.other_lines > 0 {
        let _ = writeln!(
            t,
            "  text       {} not JSON (counted, not judged)",
            plural(a.other_lines, "line")
        );
    }
    for note in a.marker_notes {
        let _ = writeln!(t, "  marker     {note}");
    }
    if let Some((claims, at)) = a.marker {
        let _ = writeln!(
            t,
            "  marker     the marker at line {at} claims {claims} lines, but no event followed it"
        );
    }
    t.push('\n');
    t
}

/// The seq rows of a reconciled run: its seq space as a bar, what is
/// present, each gap and what a marker claimed of it, repeats and
/// reorders; or, without seq, that nothing of it can be known.
fn push_seq_rows(t: &mut String, a: &Account<'_>) {
    use std::fmt::Write as _;
    if !a.seq.started() {
        t.push_str("  seq        unverifiable: no seq, so what is missing cannot be known\n");
        return;
    }
    let n = a.space();
    // `{:<6}`: the last seq, padded to six columns.
    t.push_str("  seq 0..");
    let at = t.len();
    let _ = write!(t, "{}", n.saturating_sub(1));
    t.extend(std::iter::repeat_n(
        ' ',
        7usize.saturating_sub(t.len() - at).max(1),
    ));
    a.push_bar(t, crate::output::reconcile::BAR_CELLS);
    t.push_str("  ");
    let _ = write!(t, "{} of {n} present", a.present_count());
    t.push('\n');
    t.push_str("  present    ");
    push_fitted_ranges(t, &a.present());
    t.push('\n');
    for g in a.gaps {
        t.push_str("  missing    ");
        push_range(t, g.from, g.to);
        let _ = write!(t, " ({}) after line {}", g.count(), g.after_line);
        if let Some((claims, at)) = g.marker {
            let verdict = if claims == g.count() {
                "agrees"
            } else {
                "disagrees"
            };
            let _ = write!(t, "; marker at line {at} claims {claims}: {verdict}");
        }
        t.push('\n');
    }
    if a.gaps_unlisted > 0 {
        let _ = writeln!(t, "  missing    {} more ranges not listed", a.gaps_unlisted);
    }
    if a.repeats + a.reorders > 0 {
        let _ = writeln!(
            t,
            "  order      {} repeated, {} reordered",
            a.repeats, a.reorders
        );
    }
}

/// The count rows of a reconciled run: what its summary claims against
/// what arrived, in the protocol's reading of its counts.
fn push_count_rows(t: &mut String, a: &Account<'_>) {
    use std::fmt::Write as _;
    let s = a.summary;
    if a.protocol.counts_every_line()
        && let Some(s) = s
    {
        // 0.2's count is every line of the run, meta and summary too.
        push_counts(t, s, a, (a.lines, " lines"));
    } else if a.protocol.runs_by_position() {
        let _ = writeln!(
            t,
            "  protocol   {}: no counts to reconcile",
            a.protocol.name()
        );
    } else if let Some(s) = s {
        push_counts(t, s, a, (a.domain, " seen"));
    } else {
        t.push_str("  counts     no aoi:summary to reconcile with\n");
    }
}

/// `  counts     count C vs N<what>; warnings C vs W; errors C vs E`:
/// what the summary claims against what was counted (`count`'s side is
/// `counted`, with what it counts), a claim left out said `none`.
fn push_counts(t: &mut String, s: &Counters, a: &Account<'_>, counted: (u64, &str)) {
    let versus = |t: &mut String, label: &str, claimed: Option<u64>, seen: u64| {
        t.push_str(label);
        push_claimed(t, claimed);
        t.push_str(" vs ");
        push_number(t, seen);
    };
    versus(t, "  counts     count ", s.count, counted.0);
    t.push_str(counted.1);
    versus(t, "; warnings ", s.warning_count, a.warnings);
    versus(t, "; errors ", s.error_count, a.errors);
    t.push('\n');
}

/// A count a summary claims, or `none`, at the end of `t`.
fn push_claimed(t: &mut String, claimed: Option<u64>) {
    match claimed {
        Some(n) => push_number(t, n),
        None => t.push_str("none"),
    }
}

/// Ranges, comma-separated, as many as fit in 66 bytes; the rest said as
/// "(+N more)".
fn push_fitted_ranges(t: &mut String, ranges: &[(u64, u64)]) {
    use std::fmt::Write as _;
    let start = t.len();
    for (i, &(a, b)) in ranges.iter().enumerate() {
        let before = t.len();
        if i > 0 {
            t.push_str(", ");
        }
        let at = t.len();
        push_range(t, a, b);
        let left = ranges.len() - i;
        // " (+N more)": 9 bytes and N's digits.
        let more = 9 + left.checked_ilog10().map_or(1, |d| d as usize + 1);
        if (before - start) + (t.len() - at) + 2 + more > 66 && left > 1 {
            t.truncate(before);
            let _ = write!(t, " (+{left} more)");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block's numbers are made by hand: each must read as the
    /// formatter would write it, rounding included.
    #[test]
    fn sizes_and_numbers_read_as_the_formatter_writes_them() {
        let old = |n: u64| match n {
            0..1024 => plural(n, "byte"),
            1024..1_048_576 => format!("{:.1} KiB", n as f64 / 1024.0),
            _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
        };
        let sizes = (0..1_050_000).chain([u64::MAX, 5 << 40, 1_572_864]);
        for n in sizes {
            let mut s = String::new();
            push_bytes(&mut s, n);
            assert_eq!(s, old(n), "{n} bytes");
        }
        for n in [0, 1, 9, 10, 99, 1000, 4_294_967_296, u64::MAX] {
            let mut s = String::new();
            push_number(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }
}
