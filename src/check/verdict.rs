//! The verdict of a finished run (docs/contract.md §4.1): the same decision in every
//! protocol, read from what the run's rules kept.

use super::config::Config;
use super::config::Protocol;
use super::rules::Rule;
use super::run_state::{Cause, Identity, RunState, SummaryClaim};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Failed,
    Retryable,
    Nonconforming,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Failed => "failed",
            Verdict::Retryable => "retryable",
            Verdict::Nonconforming => "nonconforming",
        }
    }
}

/// Where per-run state kept beside the checker was found for a line's
/// run before: the checker's slot, and the run's number, which says
/// whether the state found there is still the run's (`Decision::serial`).
#[derive(Clone, Copy, Debug)]
pub struct Hint {
    pub slot: usize,
    pub serial: u64,
}

/// A judged run.
#[derive(Clone, Debug)]
pub struct RunVerdict {
    pub run: Option<String>,
    /// The run id's raw bytes (the JSON string's inside), if it has one.
    pub id: Option<Box<[u8]>>,
    /// The checker's slot the run had, and its number: where state kept
    /// beside the checker is found for it, with no lookup by its id.
    pub hint: Hint,
    pub first_line: u64,
    pub lines: u64,
    pub verdict: Verdict,
    /// One sentence a person understands without the spec.
    pub message: String,
    pub cause: Option<Cause>,
    pub identity: Option<Identity>,
    pub domain_events: u64,
    pub warnings: u64,
    pub errors: u64,
    /// Events missing by seq (gaps and a cut head), repeated seqs, and
    /// whether the run numbers its events at all.
    pub missing: u64,
    pub repeats: u64,
    pub uses_seq: bool,
    pub error_findings: u64,
    /// What said lines of the run were lost in transport (its end or its
    /// middle cut), when something did: the first such error finding.
    pub lost: Option<String>,
    pub protocol: Protocol,
    /// From its first line to its verdict, when runs are timed
    /// (`Config::timed`).
    pub took: Option<std::time::Duration>,
}

/// What a run's protocol says of its end (its `Contract::end`): the
/// verdict's decision is the same in every protocol (docs/contract.md §4.1),
/// its words and these few facts are the protocol's.
pub(super) struct End {
    /// How a run that passes ended: "summary ok", "result".
    pub(super) passed: &'static str,
    /// What ends a run ("its aoi:summary"), and the rule said without it.
    pub(super) end: &'static str,
    pub(super) missing: Rule,
    /// Why a run without its end passes when unbounded: "unbounded
    /// stream, no summary".
    pub(super) unbounded: &'static str,
    /// An ok end beside a process-scope error, which ended the run.
    pub(super) ok_with_error: &'static str,
    /// Must a run end so to pass?
    pub(super) bounded: bool,
    /// The run numbers its events (AOI 1.x's seq).
    pub(super) uses_seq: bool,
    /// What decides a failure the producer reported when neither its
    /// `caused_by` nor a process-scope error does (AOI 0.2's last error
    /// without a scope).
    pub(super) unscoped: Option<Cause>,
}

impl End {
    /// The end of a run that ends with its `aoi:summary`, as AOI 1.x,
    /// AOI 0.2 and an OKF command's stream do: their words are one set,
    /// but for how a passing run ended.
    pub(super) fn at_summary(passed: &'static str, cfg: &Config) -> End {
        End {
            passed,
            end: "its aoi:summary",
            missing: Rule::SummaryMissing,
            unbounded: "unbounded stream, no summary",
            ok_with_error: "the summary says ok, but the run reported a process-scope error, which ended it",
            bounded: !cfg.unbounded,
            uses_seq: false,
            unscoped: None,
        }
    }
}

/// The verdict of a finished run (docs/contract.md §4.1), the same in every
/// protocol: each protocol's rules fill in the run's outcome, and its `end` says
/// the words.
pub(super) fn judge(
    cfg: &Config,
    run: RunState,
    protocol: Protocol,
    end: End,
    slot: usize,
) -> RunVerdict {
    let (verdict, message, cause) = decide(cfg, &run, &end);
    RunVerdict {
        run: run.name,
        id: run.id,
        hint: Hint {
            slot,
            serial: run.serial,
        },
        first_line: run.first_line,
        lines: run.lines,
        verdict,
        message,
        cause,
        identity: run.meta,
        domain_events: run.domain,
        warnings: run.warnings,
        errors: run.errors,
        missing: run.missing,
        repeats: run.repeats,
        uses_seq: end.uses_seq,
        error_findings: run.error_findings,
        lost: run.lost,
        protocol,
        took: run.since.map(|s| s.elapsed()),
    }
}

/// The verdict, its sentence and the error that decided it, in the
/// order docs/contract.md §4.1 takes: a broken rule, then what the
/// summary says, then whether a run without one may pass.
fn decide(cfg: &Config, run: &RunState, end: &End) -> (Verdict, String, Option<Cause>) {
    let item_failure = run.item_errors + run.forwarded_errors > 0 && !cfg.continue_on_error;
    if run.error_findings > 0 {
        let more = match run.error_findings - 1 {
            0 => String::new(),
            1 => " (and 1 more error)".to_string(),
            n => format!(" (and {n} more errors)"),
        };
        let first = run.first_error.clone().unwrap_or_default();
        return (Verdict::Nonconforming, format!("{first}{more}"), None);
    }
    match &run.summary {
        // A local process-scope error ended the run, whatever the
        // summary says: allowing summary.ok-despite-error silences the
        // finding, never the failure (docs/contract.md §3.3).
        Some(o) if o.ok == Some(true) && !item_failure && run.local_process_error.is_none() => {
            (Verdict::Pass, pass_message(run, end), None)
        }
        Some(o) if o.ok == Some(false) && o.partial && cfg.accept_partial => (
            Verdict::Pass,
            format!("{}; partial result accepted", pass_message(run, end)),
            None,
        ),
        Some(o) => summary_failed(run, end, o),
        None if run.local_process_error.is_some() => failed(
            "the run reported a process-scope error".to_string(),
            run.local_process_error.as_deref().cloned(),
        ),
        None if item_failure => failed(
            "the run holds item or forwarded errors (--continue-on-error accepts them)".to_string(),
            None,
        ),
        // Allowing a rule never supplies what the verdict needs
        // (docs/contract.md §3.3): a run without its summary passes only when the
        // stream is unbounded, and a summary line that was cut,
        // invalid or elided is no summary.
        None if !end.bounded => {
            let lines = crate::text::plural(run.lines, "line");
            let msg = format!("{lines}, no error ({})", end.unbounded);
            (Verdict::Pass, msg, None)
        }
        None => {
            let (rule, end) = (end.missing, end.end);
            let msg = format!(
                "the run ended after {} without {end}: success was never stated \
                 ({rule} is allowed, but only --unbounded lets a run pass without it)",
                crate::text::plural(run.lines, "line")
            );
            (Verdict::Nonconforming, msg, None)
        }
    }
}

/// A run whose summary does not let it pass: the failure the producer
/// reported, or the errors beside an ok summary that failed it, and the
/// error that decided it.
fn summary_failed(run: &RunState, end: &End, o: &SummaryClaim) -> (Verdict, String, Option<Cause>) {
    // An unscoped 0.2 error decides a failure the producer
    // reported, never one aoitap finds in an ok:true run.
    let unscoped = end.unscoped.clone().filter(|_| o.ok != Some(true));
    let cause = o
        .caused_by
        .clone()
        .or_else(|| run.local_process_error.as_deref().cloned())
        .or(unscoped);
    let mut why = match (o.ok, o.reason.as_deref()) {
        (Some(true), _) if run.local_process_error.is_some() => end.ok_with_error.to_string(),
        (Some(true), _) => "the summary says ok, but the run holds item or forwarded errors (--continue-on-error accepts them)".to_string(),
        _ if o.why.is_some() => o.why.clone().unwrap_or_default(),
        (_, Some(r)) => format!("the producer reported failure (reason: {r})"),
        _ => "the producer reported failure".to_string(),
    };
    if let Some(said) = &o.said {
        why.push_str(&format!(": {}", crate::text::quote(said)));
    }
    failed(why, cause)
}

fn failed(why: String, cause: Option<Cause>) -> (Verdict, String, Option<Cause>) {
    let retryable = cause.as_ref().is_some_and(|c| c.retryable);
    let mut message = why;
    if let Some(c) = &cause {
        let name = [c.category.as_deref(), c.code.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        if !name.is_empty() {
            message.push_str(&format!("; deciding error: {name}"));
        }
        if let Some(o) = &c.origin {
            message.push_str(&format!(" from {o}"));
        }
        if retryable {
            match c.retry_after_ms {
                Some(ms) => message.push_str(&format!("; retryable after {ms} ms")),
                None => message.push_str("; retryable"),
            }
        }
    }
    let verdict = if retryable {
        Verdict::Retryable
    } else {
        Verdict::Failed
    };
    (verdict, message, cause)
}

fn pass_message(run: &RunState, end: &End) -> String {
    // "complete" only of a run with nothing missing or repeated: an allowed
    // seq.gap passes, but its seq space was not whole.
    let seq = match (end.uses_seq, run.missing, run.repeats) {
        (false, _, _) => String::new(),
        (true, 0, 0) => format!(", seq 0..{} complete", run.lines.saturating_sub(1)),
        (true, missing, repeats) => {
            format!(", seq not whole ({missing} missing, {repeats} repeated: allowed)")
        }
    };
    let events = crate::text::plural(run.lines, "event");
    format!("{events}{seq}, {}", end.passed)
}

#[cfg(test)]
impl RunVerdict {
    /// A judged run of `lines` lines from line 1, for the printers' tests.
    pub(crate) fn sample(run: Option<&str>, verdict: Verdict, message: &str) -> RunVerdict {
        RunVerdict {
            run: run.map(str::to_string),
            id: run.map(|r| r.as_bytes().into()),
            hint: Hint { slot: 0, serial: 0 },
            first_line: 1,
            lines: 3,
            verdict,
            message: message.to_string(),
            cause: None,
            identity: None,
            domain_events: 1,
            warnings: 0,
            errors: 0,
            missing: 0,
            repeats: 0,
            uses_seq: true,
            error_findings: 0,
            lost: None,
            protocol: Protocol::Aoi,
            took: None,
        }
    }
}
