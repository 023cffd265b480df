//! Human output: the words a person reads at a terminal or in a log, one
//! line each. Everything that came from the input (file names, run ids,
//! tools, messages) is escaped with `clean`, so no control byte reaches a
//! terminal and no id can forge a line (DESIGN §8).

use super::style::{self, BAD, GOOD, NOTE, WARN};
use crate::check::rules::Severity;
use crate::check::{Finding, Protocol, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::text::{clean, plural};

/// `file:12: error[seq.gap]: message (run R)`.
pub fn finding(file: &str, f: &Finding, color: bool) -> String {
    let (word, paint) = match f.severity {
        Severity::Error => ("error", BAD),
        Severity::Warning => ("warning", WARN),
        Severity::Info => ("note", NOTE),
    };
    let place = if f.line > 0 {
        format!("{}:{}", clean(file), f.line)
    } else {
        clean(file)
    };
    let run = f
        .run
        .as_ref()
        .map(|r| format!(" (run {})", clean(r)))
        .unwrap_or_default();
    let head = style::paint(color, paint, &format!("{word}[{}]", f.rule));
    format!("{place}: {head}: {}{run}\n", clean(&f.message))
}

/// `file: PASS: run R (tool command) [protocol] -> path: message`.
pub fn run(file: &str, r: &RunVerdict, path: Option<&str>, color: bool) -> String {
    let (word, paint) = verdict(r.verdict);
    let what = r
        .identity
        .as_ref()
        .map(|i| {
            let parts: Vec<&str> = [i.tool.as_deref(), i.command.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            if parts.is_empty() {
                String::new()
            } else {
                format!(" ({})", clean(&parts.join(" ")))
            }
        })
        .unwrap_or_default();
    let to = path
        .map(|p| format!(" -> {}", clean(p)))
        .unwrap_or_default();
    // AOI 1.x is the default and goes unsaid; any other protocol is named,
    // so a pass is never read as a 1.x pass.
    let proto = match r.protocol {
        Protocol::Aoi => String::new(),
        p => format!(" [{}]", p.name()),
    };
    format!(
        "{}: {}: {}{what}{proto}{to}: {}\n",
        clean(file),
        style::paint(color, paint, word),
        run_name(r),
        clean(&r.message)
    )
}

/// `Result: PASS (1 run; exit 0)`.
pub fn result(exit: Exit, t: &Tally, timed_out: bool, color: bool) -> String {
    let runs: u64 = t.runs.iter().sum();
    let (word, paint) = match exit {
        Exit::Pass => ("PASS", GOOD),
        Exit::HungUp | Exit::Interrupted | Exit::Terminated => ("CANCELLED", WARN),
        _ if timed_out => ("TIMEOUT", WARN),
        _ => ("FAIL", BAD),
    };
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

/// How a run's verdict is named, and its colour.
pub fn verdict(v: Verdict) -> (&'static str, anstyle::Style) {
    match v {
        Verdict::Pass => ("PASS", GOOD),
        Verdict::Failed => ("FAIL", BAD),
        Verdict::Retryable => ("RETRYABLE", WARN),
        Verdict::Nonconforming => ("NOT CONFORMING", BAD),
    }
}

/// A run by its id (escaped), else by its first line.
pub fn run_name(r: &RunVerdict) -> String {
    match &r.run {
        Some(id) => format!("run {}", clean(id)),
        None => format!("run from line {}", r.first_line),
    }
}
