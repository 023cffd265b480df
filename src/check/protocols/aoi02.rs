//! AOI 0.2, as the published emitters write it (docs/contract.md §6.1; spec §5.2 lists
//! what changed in 1.0): the AOI TypeScript SDK 0.1 (`src/emit.ts`) and
//! machinemode 0.1.
//!
//! There is no envelope, so no seq or run rules: a run is opened by its
//! `aoi:meta`. The summary's `count` is what finds a cut middle (counted,
//! not located), in either published reading (docs/contract.md §3.3): every line of
//! the run, meta and summary included (`count: events + 1` in the SDK and
//! machinemode code), or the events between meta and summary (every 0.2
//! example in the public docs). An `aoi:error` has no `scope`, so it weighs
//! as an item error: `ok:true` after one is a failure (exit 1) unless
//! `--continue-on-error`; with `scope:"process"` it is 1.x's process error.
//! `retryable` may be missing (= not retryable); the categories `temporary`
//! and `partial`, a missing `reason`, `truncated` and `upstream` are valid.
//! The verdict is docs/contract.md §4.1's: 0 / 1 / 75 / 65.

use std::io;

use super::contract::{Contract, Judged, Mapping, Outcomes, Ruling};
use super::framework::{Count, Left, by_type, meta_missing, retry_after, summary_missing, typed};
use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::{Draft, Reporter};
use crate::check::rules::Rule;
use crate::check::run_state::{Cause, Part, RunState, SummaryClaim};
use crate::check::verdict::End;
use crate::json::{Event, Uint};

pub(in crate::check) struct Aoi02;

/// What an AOI 0.2 run keeps of its own.
#[derive(Default)]
pub(in crate::check) struct Own {
    /// The last error without a scope, which decides a failed run's retry
    /// (it weighs as an item error for an `ok:true` one).
    unscoped_error: Option<Cause>,
    /// Which reading of the summary's `count` matched.
    count_reading: Option<CountReading>,
}

impl Part for Own {}

/// The AOI 0.2 part of `run`.
fn own(run: &mut RunState) -> &mut Own {
    run.part(|_| Own::default())
}

/// The reading of an AOI 0.2 summary's `count` that matched (docs/contract.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CountReading {
    /// Every line of the run, meta and summary included (the SDK 0.1 and
    /// machinemode 0.1 code); `emitter` when the summary has their shape.
    EveryLine { emitter: bool },
    /// The events between meta and summary (the public docs' examples).
    Between,
    /// No count at all.
    Missing,
}

impl Contract for Aoi02 {
    fn outcomes(&'static self) -> Outcomes {
        Outcomes::Framework
    }

    fn counts_every_line(&self) -> bool {
        true
    }

    fn mapping(&'static self) -> Mapping {
        Mapping::Framework { envelope: false }
    }

    fn event(&self, run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> Judged {
        let (ty, seen) = typed(ev, Protocol::Aoi02);
        let ty = ty.as_deref();
        line_of_run(run, out, ty == Some(b"aoi:summary"))?;
        if let Some(key) = ev.duplicate_reserved_key() {
            let msg = format!("{key} appears twice: parsers disagree about which one wins");
            out.report(run, Rule::EnvelopeDuplicateKey, None, msg)?;
        }
        if ty.is_none() {
            let msg = "no string type: every event must carry one".to_string();
            out.report(run, Rule::EnvelopeTypeMissing, None, msg)?;
        }
        if ev.has_ansi() {
            let msg = "ANSI escape inside a string value".to_string();
            out.report(run, Rule::TextAnsi, None, msg)?;
        }
        let mut step = Ruling::seen(seen);
        match by_type(run, out, ev, ty, None)? {
            Left::Nothing | Left::TypeTwice => {}
            Left::Meta => step.meta = true,
            Left::Summary => {
                summary(run, out, ev)?;
                step.ends = true;
            }
            Left::Error => error(run, out, ev)?,
        }
        Ok(step)
    }

    /// A 0.2 run ends with its summary; it has no seq to claim. The
    /// `version.legacy` note says what could not be checked, and which
    /// reading of `count` matched.
    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
        summary_missing(run, out)?;
        meta_missing(run, out)?;
        let counted = match own(run).count_reading {
            Some(CountReading::EveryLine { emitter: true }) => {
                "; its count matched every line of the run, meta and summary included (the SDK's reading)"
            }
            Some(CountReading::EveryLine { emitter: false }) => {
                // The two readings differ by the summary, and the meta if
                // there is one: that many lost lines look like the other.
                if run.meta.is_some() {
                    "; its count matched every line of the run, meta and summary included (the SDK's \
                     reading): if this producer counts only the events between meta and summary, 2 \
                     lines are missing"
                } else {
                    "; its count matched every line of the run, summary included (the SDK's reading): \
                     if this producer counts only the events before its summary, 1 line is missing"
                }
            }
            Some(CountReading::Between) => {
                "; its count matched the events between meta and summary (the reading of the 0.2 docs)"
            }
            Some(CountReading::Missing) => "; its summary has no count, so none can be found",
            None => "",
        };
        let msg = format!(
            "AOI 0.2 run: no envelope, so events lost from the middle are found only by the summary's count, and not located{counted}"
        );
        out.report(run, Rule::VersionLegacy, None, msg)
    }

    fn end(&self, run: &RunState, cfg: &Config) -> End {
        let own = run.part_of::<Own>();
        let passed = match own.and_then(|o| o.count_reading) {
            Some(CountReading::Missing) => "summary ok, no count",
            _ => "summary ok, count matches",
        };
        End {
            unscoped: own.and_then(|o| o.unscoped_error.clone()),
            ..End::at_summary(passed, cfg)
        }
    }
}

/// What an `aoi:error`'s `scope` says in a 0.2 run.
enum Scope {
    None,
    Process,
    Item,
}

/// Count a line into its run; the first line after the summary is
/// `summary.not-last`.
fn line_of_run(run: &mut RunState, out: &mut Reporter<'_>, is_summary: bool) -> io::Result<()> {
    run.count_line();
    if run.summary.is_some() && !is_summary && !run.not_last_reported {
        run.not_last_reported = true;
        let msg =
            "event after the run's aoi:summary: the summary must be the last line".to_string();
        out.report(run, Rule::SummaryNotLast, None, msg)?;
    }
    Ok(())
}

/// `aoi:error` in 0.2: `code`, `category` and `message`; `retryable`
/// when present. An error without `scope` (0.2 has none) weighs as an
/// item error, and the last one is what decides a failed run's retry
/// (docs/contract.md §3.3); `scope:"process"` and `"item"` weigh as in 1.x.
fn error(run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> io::Result<()> {
    let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
    let (category, code, message) = (text("category"), text("code"), text("message"));
    let missing: Vec<&str> = [
        ("category", category.is_some()),
        ("code", code.is_some()),
        ("message", message.is_some()),
    ]
    .into_iter()
    .filter(|(_, present)| !present)
    .map(|(name, _)| name)
    .collect();
    if !missing.is_empty() {
        let msg = format!(
            "aoi:error lacks {} (or has the wrong type)",
            missing.join(", ")
        );
        out.report(run, Rule::ErrorFieldMissing, None, msg)?;
    }
    let scope = match ev.get("scope") {
        None => Scope::None,
        Some(v) => match v.as_str().as_deref() {
            Some("process") => Scope::Process,
            Some("item") => Scope::Item,
            _ => {
                let msg = "scope is not \"process\" or \"item\"".to_string();
                out.report(run, Rule::ErrorScopeInvalid, None, msg)?;
                Scope::None
            }
        },
    };
    let retryable = ev.get("retryable").and_then(|v| v.as_bool()) == Some(true);
    let after = ev.get("retry_after_ms");
    let retry_after_ms = retry_after(run, out, "retry_after_ms", after, None)?;
    let cause = Cause {
        origin: None,
        category,
        code,
        retryable,
        retry_after_ms: retry_after_ms.filter(|_| retryable),
    };
    run.errors += 1;
    match scope {
        Scope::Process => run.local_process_error = Some(Box::new(cause)),
        Scope::Item => run.item_errors += 1,
        Scope::None => {
            run.item_errors += 1;
            own(run).unscoped_error = Some(cause);
        }
    }
    Ok(())
}

/// The 0.2 summary: `ok`, `partial`, and `count` against the lines
/// that arrived, in either published reading.
fn summary(run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> io::Result<()> {
    let ok = ev.get("ok").and_then(|v| v.as_bool());
    if ok.is_none() {
        let msg = "summary has no boolean ok: success must be stated, never assumed".to_string();
        out.report(run, Rule::SummaryOkMissing, None, msg)?;
    }
    count(run, out, ev)?;
    let reason = ev
        .get("reason")
        .and_then(|v| v.as_str())
        .map(|s| s.into_owned());
    let partial = ev.get("partial").and_then(|v| v.as_bool()) == Some(true);
    run.summary = Some(Box::new(SummaryClaim {
        ok,
        partial,
        reason,
        caused_by: None,
        said: None,
        why: None,
    }));
    if ok == Some(true) && run.local_process_error.is_some() {
        let msg =
            "ok:true after a process-scope aoi:error, which means the run was over".to_string();
        out.report(run, Rule::SummaryOkDespiteError, None, msg)?;
    }
    Ok(())
}

/// The summary's `count` against the lines that arrived, in the reading
/// it matches (every line, or the events between meta and summary),
/// kept for the run's end.
fn count(run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> io::Result<()> {
    let lines = run.lines;
    // The events between meta and summary: the lines less the summary,
    // and less the meta when the run has one.
    let between = lines - 1 - u64::from(run.meta.is_some());
    // Both published emitters' `summary()` write `warning_count` and
    // `error_count` beside a `count` of every line: a summary of that
    // shape is held to that reading alone, so two lost lines cannot
    // pass as the other one.
    let emitter = ev.get("warning_count").is_some() && ev.get("error_count").is_some();
    match ev.get("count").map(|v| (v.as_uint(), v)) {
        None => {
            own(run).count_reading = Some(CountReading::Missing);
            let msg =
                "no count: lines lost from the middle of a 0.2 run cannot be found".to_string();
            out.report(run, Rule::SummaryCountMissing, None, msg)?;
        }
        Some((Uint::NotUint, v)) => {
            let msg = format!(
                "count is {}, not an integer >= 0",
                crate::check::secrets::quotable::value(v.raw())
            );
            out.report(run, Rule::SummaryCounterInvalid, None, msg)?;
        }
        Some((Uint::Int(n), _)) if n == lines => {
            own(run).count_reading = Some(CountReading::EveryLine { emitter });
        }
        Some((Uint::Int(n), _)) if n == between && !emitter => {
            own(run).count_reading = Some(CountReading::Between);
        }
        Some((n, v)) => {
            let n = Count::of(n, v);
            // Judged against the SDK's reading, every line: the one the
            // published code writes.
            if n > lines {
                let more = n.beside(lines);
                run.missing = run.missing.saturating_add(n.above(lines));
                let msg = format!(
                    "the summary counts {n} but {lines} lines arrived: {more} \
                     (nor does it count the {between} events between meta and summary)"
                );
                out.report(run, Rule::SummaryCountMismatch, None, msg)?;
            } else if emitter && n == between {
                let msg = format!(
                    "the summary counts {n} but {lines} lines arrived: a summary with \
                     warning_count and error_count, as the SDK writes it, counts every line \
                     of the run, meta and summary included"
                );
                // More arrived than it counts: wrong, but nothing lost.
                let f = Draft::new(Rule::SummaryCountMismatch, msg).none_lost();
                out.emit(run, f)?;
            } else {
                let msg = format!(
                    "the summary counts {n} but {lines} lines arrived, {between} of them \
                     between meta and summary: it matches neither reading of count"
                );
                let f = Draft::new(Rule::SummaryCountMismatch, msg).none_lost();
                out.emit(run, f)?;
            }
        }
    }
    Ok(())
}
