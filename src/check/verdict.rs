//! The verdict of a finished run (DESIGN §4).

use super::{Cause, Config, Protocol, RunState, RunVerdict, Verdict};

/// The verdict of a finished run (DESIGN §4), the same in every protocol:
/// each protocol's rules fill in the run's outcome.
pub(super) fn judge(cfg: &Config, run: RunState, protocol: Protocol) -> RunVerdict {
    let item_failure = run.item_errors + run.forwarded_errors > 0 && !cfg.continue_on_error;
    let (verdict, message, cause) = if run.error_findings > 0 {
        let more = match run.error_findings - 1 {
            0 => String::new(),
            1 => " (and 1 more error)".to_string(),
            n => format!(" (and {n} more errors)"),
        };
        let first = run.first_error.clone().unwrap_or_default();
        (Verdict::Nonconforming, format!("{first}{more}"), None)
    } else {
        match &run.summary {
            Some(o) if o.ok == Some(true) && !item_failure => {
                (Verdict::Pass, pass_message(&run, protocol), None)
            }
            Some(o) if o.ok == Some(false) && o.partial && cfg.accept_partial => (
                Verdict::Pass,
                format!("{}; partial result accepted", pass_message(&run, protocol)),
                None,
            ),
            Some(o) => {
                let cause = o
                    .caused_by
                    .clone()
                    .or_else(|| run.local_process_error.clone());
                let why = match (o.ok, o.reason.as_deref()) {
                    (Some(true), _) => "the summary says ok, but the run holds item or forwarded errors (--continue-on-error accepts them)".to_string(),
                    (_, Some(r)) => format!("the producer reported failure (reason: {r})"),
                    _ => "the producer reported failure".to_string(),
                };
                failed(why, cause)
            }
            None if run.local_process_error.is_some() => failed(
                "the run reported a process-scope error".to_string(),
                run.local_process_error.clone(),
            ),
            None if item_failure => failed(
                "the run holds item or forwarded errors (--continue-on-error accepts them)"
                    .to_string(),
                None,
            ),
            None => {
                let why = match protocol {
                    Protocol::Ndjson if cfg.last.is_none() => "typed NDJSON, no end type given",
                    Protocol::Afdata if cfg.unbounded => "unbounded stream, no terminal event",
                    Protocol::Afdata => "no terminal event, and afdata.terminal-missing allowed",
                    _ if cfg.unbounded => "unbounded stream, no summary",
                    _ => "no summary, and summary.missing allowed",
                };
                let msg = format!("{} lines, no error ({why})", run.lines);
                (Verdict::Pass, msg, None)
            }
        }
    };
    RunVerdict {
        run: run.name,
        id: run.id,
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
        uses_seq: run.tracks.iter().any(|t| t.seq.started()),
        error_findings: run.error_findings,
        protocol,
    }
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
        message.push_str(&format!("; deciding error: {name}"));
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

fn pass_message(run: &RunState, protocol: Protocol) -> String {
    let seq = if run.tracks.iter().any(|t| t.seq.started()) {
        format!(", seq 0..{} complete", run.lines.saturating_sub(1))
    } else {
        String::new()
    };
    let end = match protocol {
        Protocol::Aoi => "summary ok",
        Protocol::Aoi02 => "summary ok, count matches",
        Protocol::Afdata => "result",
        Protocol::Ndjson => "ended by its last type",
    };
    format!("{} events{seq}, {end}", run.lines)
}
