//! AFDATA protocol v1 event streams (`spec/agent-first-data.md` Part 3;
//! docs/contract.md §6.1): every line an object with `kind` in
//! `result|error|progress|log` and a member named by the kind; `trace`, when
//! present, an object; an `error` payload an object with non-empty string
//! `code` and `message`. One terminal event (`result` or `error`) per run,
//! last. With `--multi-run` the line after a terminal opens the next run.
//!
//! The strict profile (Part 3, "Validation profiles"): `trace` on every
//! event and a boolean `retryable` on every error payload, warnings that
//! `--strict` makes errors.
//!
//! Verdict: `result` 0; `error` 1; `error` with `retryable:true` 75, the
//! hint from `retry_after_ms` or `retry_after_s`.

use std::io;

use super::contract::{Contract, Judged, LineKind, Mapping, Outcomes, Payload, Ruling};
use super::framework::retry_after;
use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Reporter;
use crate::check::rules::Rule;
use crate::check::run_state::{Cause, Part, RunState, SummaryClaim};
use crate::check::verdict::End;
use crate::json::{Event, Kind, Value};
use crate::text::quote;

pub(in crate::check) struct Afdata;

/// What an AFDATA run keeps of its own.
#[derive(Default)]
pub(in crate::check) struct Own {
    /// An event without `trace` was reported (once per run).
    trace_missing_reported: bool,
}

impl Part for Own {}

impl Contract for Afdata {
    fn type_field<'a>(&'a self, _flag: &'a str) -> &'a str {
        "kind"
    }

    fn outcomes(&'static self) -> Outcomes {
        Outcomes::Kinds
    }

    /// AFDATA's data is the result payload, bytes as they came
    /// (docs/contract.md §6.1); `--type` adds kinds.
    fn payload(&self, ev: &Event<'_>, kinds: &[String]) -> Option<Payload> {
        let kind = ev.get("kind")?.as_str()?;
        if kind != "result" && !kinds.iter().any(|k| *k == kind) {
            return None;
        }
        Some(Payload::Value(ev.get(&kind)?.span()))
    }

    fn typed_by_kind(&self) -> bool {
        true
    }

    fn mapping(&'static self) -> Mapping {
        Mapping::Kinds
    }

    fn event(&self, run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> Judged {
        run.count_line();
        let after_terminal = run.summary.is_some();
        if after_terminal && !run.not_last_reported {
            run.not_last_reported = true;
            let msg = "event after the run's result or error: the terminal event must be last"
                .to_string();
            out.report(run, Rule::AfdataTerminalNotLast, None, msg)?;
        }
        let kind = ev.get("kind").and_then(|v| v.as_str());
        verdict_key_twice(run, out, ev, kind.as_deref())?;
        let Some(kind) = kind.filter(|k| matches!(&**k, "result" | "error" | "progress" | "log"))
        else {
            let msg = match ev.get("kind") {
                None => "no kind: every AFDATA event names its kind".to_string(),
                Some(v) => format!(
                    "kind {} is not result, error, progress or log",
                    crate::check::secrets::quotable::value(v.raw())
                ),
            };
            out.report(run, Rule::AfdataKindInvalid, None, msg)?;
            return Ok(Ruling::seen(LineKind {
                protocol: Protocol::Afdata,
                ..LineKind::default()
            }));
        };
        let payload = ev.get(&kind);
        if payload.is_none() {
            let msg = format!("kind {} without a {} member", quote(&kind), quote(&kind));
            out.report(run, Rule::AfdataPayloadMissing, None, msg)?;
        }
        trace(run, out, ev)?;
        run.domain += 1;
        let terminal = matches!(&*kind, "result" | "error");
        let cause = match (&*kind, payload) {
            ("error", Some(p)) => Some(error(run, out, p)?),
            _ => None,
        };
        let ends = terminal && !after_terminal;
        // A result that carries an error payload is no success (docs/contract.md
        // §3.4): E, and the run fails even where the finding is allowed, as
        // `summary.ok-despite-error`. A null error carries nothing.
        if ends
            && &*kind == "result"
            && let Some(error) = ev.get("error").filter(|e| e.kind() != Kind::Null)
        {
            let msg =
                "kind result with an error member: the event says success and failure at once"
                    .to_string();
            out.report(run, Rule::AfdataResultWithError, None, msg)?;
            run.local_process_error = Some(Cause::coded(&error));
        }
        if ends {
            if cause.is_some() {
                run.errors += 1;
            }
            run.summary = Some(Box::new(SummaryClaim {
                ok: Some(&*kind == "result"),
                partial: false,
                reason: None,
                caused_by: cause,
                said: None,
                why: None,
            }));
        }
        let seen = LineKind {
            event: payload.is_some(),
            protocol: Protocol::Afdata,
            ..LineKind::default()
        };
        Ok(Ruling {
            ends,
            ..Ruling::seen(seen)
        })
    }

    /// A run without its terminal event was cut, unless it is unbounded.
    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
        let unbounded = out.cfg.unbounded;
        if run.summary.is_none() && !unbounded {
            let msg = match out.silent_exit {
                // `run` knows how the command ended: no cut is guessed at.
                Some(how) => format!("the command {how}"),
                None => format!(
                    "the stream ended after {} without a result or error event: it was cut off or the producer crashed",
                    crate::text::plural(run.lines, "line")
                ),
            };
            out.report(run, Rule::AfdataTerminalMissing, None, msg)?;
        }
        Ok(())
    }

    fn end(&self, _run: &RunState, cfg: &Config) -> End {
        End {
            passed: "result",
            end: "a result or error event",
            missing: Rule::AfdataTerminalMissing,
            unbounded: "unbounded stream, no terminal event",
            ok_with_error: "the result carries an error: no success",
            bounded: !cfg.unbounded,
            uses_seq: false,
            unscoped: None,
        }
    }
}

/// A key given twice that decides the verdict (docs/contract.md §3.3):
/// `kind` and the payload it names, where aoitap reads the first of two
/// and jq and Python the last, and `trace`, which decides the strict
/// profile's.
fn verdict_key_twice(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    kind: Option<&str>,
) -> io::Result<()> {
    let payload_twice = kind
        .filter(|k| matches!(*k, "result" | "error"))
        .filter(|k| ev.count(k) > 1);
    let once = |key: &'static str| (ev.count(key) > 1).then_some(key);
    if let Some(key) = once("kind").or(payload_twice).or_else(|| once("trace")) {
        let msg = format!("{key} appears twice: parsers disagree about which one wins");
        out.report(run, Rule::VerdictDuplicateKey, None, msg)?;
    }
    Ok(())
}

/// An event's `trace`: an object when given, and, in the strict profile
/// (Part 3, "Validation profiles"), given on every event; its absence is
/// said once per run, not per line.
fn trace(run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> io::Result<()> {
    match ev.get("trace") {
        Some(trace) if trace.kind() != Kind::Object => {
            let msg = "trace is not an object".to_string();
            out.report(run, Rule::AfdataTraceNotObject, None, msg)
        }
        None if !run.part(|_| Own::default()).trace_missing_reported => {
            run.part(|_| Own::default()).trace_missing_reported = true;
            let msg = "no trace: AFDATA's strict profile wants an object trace on every event (said once per run)".to_string();
            out.report(run, Rule::AfdataTraceMissing, None, msg)
        }
        _ => Ok(()),
    }
}

/// The members of an error payload that decide the verdict: read twice,
/// parsers disagree (docs/contract.md §3.2).
const VERDICT_KEYS: &[&str] = &["retryable", "retry_after_ms", "retry_after_s", "code"];

/// The error payload: its fields checked, its retry hint read.
fn error(run: &mut RunState, out: &mut Reporter<'_>, p: Value<'_>) -> io::Result<Cause> {
    let text = |k: &str| {
        p.field(k)
            .and_then(|v| v.as_str())
            .map(|s| s.into_owned())
            .filter(|s| !s.is_empty())
    };
    let (code, message) = if p.kind() == Kind::Object {
        (text("code"), text("message"))
    } else {
        (None, None)
    };
    if code.is_none() || message.is_none() {
        let msg = if p.kind() == Kind::Object {
            "error payload lacks a non-empty string code or message".to_string()
        } else {
            "error payload is not an object".to_string()
        };
        out.report(run, Rule::AfdataErrorFields, None, msg)?;
    }
    if p.kind() == Kind::Object
        && let Some(key) = VERDICT_KEYS.iter().find(|k| p.count(k) > 1)
    {
        let msg = format!("error.{key} appears twice: parsers disagree about which one wins");
        out.report(run, Rule::VerdictDuplicateKey, None, msg)?;
    }
    let retryable = p.field("retryable").and_then(|v| v.as_bool());
    if p.kind() == Kind::Object && retryable.is_none() {
        // The strict profile: an agent decides whether to retry from it.
        let msg = "error payload without a boolean retryable: AFDATA's strict profile wants one, so an agent knows whether to retry".to_string();
        out.report(run, Rule::AfdataRetryableMissing, None, msg)?;
    }
    let retryable = retryable == Some(true);
    let ms = p.field("retry_after_ms");
    let retry_after_ms = match ms {
        Some(_) => retry_after(run, out, "error.retry_after_ms", ms, None)?,
        None => retry_after_s(run, out, p.field("retry_after_s"))?,
    };
    Ok(Cause {
        origin: None,
        category: None,
        code,
        retryable,
        retry_after_ms: retry_after_ms.filter(|_| retryable),
    })
}

/// AFDATA's `retry_after_s`, in milliseconds: an integer or a number
/// >= 0 (docs/contract.md §3.3); any other value is a finding, never dropped.
fn retry_after_s(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    v: Option<Value<'_>>,
) -> io::Result<Option<u64>> {
    let Some(v) = v else {
        return Ok(None);
    };
    match seconds_as_ms(v) {
        Some(ms) => Ok(Some(ms)),
        _ => {
            let msg = format!(
                "error.retry_after_s is {}, not a number >= 0 that aoitap can carry",
                crate::check::secrets::quotable::value(v.raw())
            );
            out.report(run, Rule::ErrorRetryAfterInvalid, None, msg)?;
            Ok(None)
        }
    }
}

/// `retry_after_s` in whole milliseconds, rounded up (never sooner than
/// asked): a number >= 0 that fits, else `None`. `u64::MAX as f64` is
/// 2^64, so the strict compare keeps the cast exact rather than saturated
/// (docs/contract.md §3.3: never 18446744073709551615).
fn seconds_as_ms(v: Value<'_>) -> Option<u64> {
    let seconds = (v.kind() == Kind::Number)
        .then(|| std::str::from_utf8(v.raw()).ok()?.parse::<f64>().ok())
        .flatten()
        .filter(|s| s.is_finite() && *s >= 0.0)?;
    let ms = (seconds * 1000.0).ceil();
    (ms < u64::MAX as f64).then_some(ms as u64)
}

/// An error payload's retry hint in milliseconds, as the verdict reads it
/// (`retry_after_ms`, else `retry_after_s`), with no finding: what
/// `upgrade` writes as the forwarded error's `retry_after_ms`.
pub fn payload_retry_after_ms(p: Value<'_>) -> Option<u64> {
    match p.field("retry_after_ms") {
        Some(ms) => ms.uint(),
        None => p.field("retry_after_s").and_then(seconds_as_ms),
    }
}
