//! The words every text format ends a report with: the result line
//! (`Result: PASS (1 run; exit 0)`), the count `--limit` left out, and a
//! `run` attempt's line. A report for a person paints them; the plain
//! formats write them without colour, so one verdict is worded one way
//! whatever the format.

use std::io::{self, Write};

use super::printer::{At, Ended};
use super::style::{self, BAD, GOOD, WARN};
use crate::check::rules::Severity;
use crate::check::{Tally, Verdict};
use crate::exit::Exit;
use crate::text::{clean, plural};

/// A message that names the run it is about, if it has an id (what
/// GitHub's annotations and SARIF's results say).
pub fn of_run(message: &str, run: &Option<String>) -> String {
    match run {
        Some(run) => format!("{message} (run {run})"),
        None => message.to_string(),
    }
}

/// `run`'s attempt as a line of its own, for the formats that log attempts.
pub fn attempt(out: &mut dyn Write, at: &At<'_>, a: &Ended<'_>) -> io::Result<()> {
    let text = format!("{}: {}\n", clean(at.file), clean(a.message));
    out.write_all(text.as_bytes())
}

/// The result line without colour: the command's own words, else
/// verify's (`Result: PASS (1 run; exit 0)`), as the plain formats end
/// with it.
pub fn worded(at: &At<'_>, exit: Exit, tally: &Tally) -> String {
    match at.result {
        Some(r) => r.to_string(),
        None => result(exit, tally, at.timed_out(), false),
    }
}

/// The line that counts what `--limit` left out, when it left any.
pub fn dropped(at: &At<'_>) -> String {
    match at.dropped {
        0 => String::new(),
        n => format!("{n} more findings not shown (--limit)\n"),
    }
}

/// The result's word for `exit`, and its colour.
pub fn word(exit: Exit, timed_out: bool) -> (&'static str, style::Paint) {
    match exit {
        Exit::Pass => ("PASS", GOOD),
        Exit::HungUp | Exit::Interrupted | Exit::Terminated => ("CANCELLED", WARN),
        _ if timed_out => ("TIMEOUT", WARN),
        _ => ("FAIL", BAD),
    }
}

/// `Result: PASS (1 run; exit 0)`.
pub fn result(exit: Exit, t: &Tally, timed_out: bool, color: bool) -> String {
    let runs: u64 = t.runs.iter().sum();
    let (word, paint) = word(exit, timed_out);
    let mut parts = vec![plural(runs, "run")];
    for v in [
        Verdict::Pass,
        Verdict::Failed,
        Verdict::Retryable,
        Verdict::Nonconforming,
    ] {
        let n = t.runs[v as usize];
        if n > 0 && n != runs {
            parts.push(format!("{n} {}", v.name()));
        }
    }
    for s in [Severity::Error, Severity::Warning] {
        let n = t.findings[s as usize];
        if n > 0 {
            parts.push(plural(n, s.name()));
        }
    }
    format!(
        "Result: {} ({}; exit {})",
        style::paint(color, paint, word),
        parts.join(", "),
        exit.code()
    )
}
