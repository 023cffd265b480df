//! AOI-CLI 1.x's `aoi:error` (spec §9.1), and a summary's `caused_by`
//! held to the same rules wherever the verdict reads it (§13.1): what
//! `aoi.rs` asks of an error event, kept beside it.

use std::io;

use super::framework::retry_after;
use crate::check::finding::Reporter;
use crate::check::rules::{CATEGORIES, Rule};
use crate::check::run_state::{Cause, RunState};
use crate::json::{Event, Value};
use crate::text::quote;

/// An `aoi:error` (§9.1): its members held to the spec's rules, then
/// counted; a process-scope error of the run's own is what ended it.
pub(super) fn error(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    seq: Option<u64>,
) -> io::Result<()> {
    let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
    let category = text("category");
    let code = text("code");
    let message = text("message");
    let retryable = ev.get("retryable").and_then(|v| v.as_bool());
    let origin = text("origin");
    let scope = ev.get("scope");
    let retry_after = ev.get("retry_after_ms");

    let mut missing = vec![];
    for (name, present) in [
        ("category", category.is_some()),
        ("code", code.is_some()),
        ("message", message.is_some()),
        ("retryable", retryable.is_some()),
    ] {
        if !present {
            missing.push(name);
        }
    }
    if !missing.is_empty() {
        let msg = format!(
            "aoi:error lacks {} (or has the wrong type)",
            missing.join(", ")
        );
        out.report(run, Rule::ErrorFieldMissing, seq, msg)?;
    }
    error_words(
        run,
        out,
        seq,
        category.as_deref(),
        code.as_deref(),
        message.as_deref(),
    )?;
    let retry_after_ms = retry_hint(run, out, "", retry_after, retryable, seq)?;
    let scope = match scope {
        None => Some("process".to_string()),
        Some(v) => v.as_str().map(|s| s.into_owned()),
    };
    if !matches!(scope.as_deref(), Some("process" | "item")) {
        let msg = "scope is not \"process\" or \"item\"".to_string();
        out.report(run, Rule::ErrorScopeInvalid, seq, msg)?;
    }
    let cause = Cause {
        origin: origin.clone(),
        category,
        code,
        retryable: retryable == Some(true),
        retry_after_ms,
    };
    run.errors += 1;
    if origin.is_some() {
        run.forwarded_errors += 1;
    }
    if scope.as_deref() == Some("item") {
        run.item_errors += 1;
    } else if origin.is_none() {
        run.local_process_error = Some(Box::new(cause));
    }
    Ok(())
}

/// What an `aoi:error` says the error is (§9.1): a category the spec
/// knows, a code of its form, a message of one plain line.
fn error_words(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    seq: Option<u64>,
    category: Option<&str>,
    code: Option<&str>,
    message: Option<&str>,
) -> io::Result<()> {
    match category {
        Some(c @ ("partial" | "temporary")) => {
            let msg = format!(
                "category {} was removed in v1.0-alpha (use the real category, or unavailable)",
                quote(c)
            );
            out.report(run, Rule::ErrorCategoryRemoved, seq, msg)?;
        }
        Some(c) if !CATEGORIES.contains(&c) => {
            let msg = format!(
                "unknown category {}: consumers route it as internal",
                quote(c)
            );
            out.report(run, Rule::ErrorCategoryUnknown, seq, msg)?;
        }
        _ => {}
    }
    if let Some(c) = code
        && !is_code(c)
    {
        let msg = format!("code {} is not [A-Z][A-Z0-9_]*", quote(c));
        out.report(run, Rule::ErrorCodeFormat, seq, msg)?;
    }
    if let Some(m) = message
        && (m.contains(['\n', '\r', '\u{2028}', '\u{2029}', '\u{1b}', '\u{9b}']))
    {
        let msg = "message has a line break or ANSI escape: it must be one plain line".to_string();
        out.report(run, Rule::ErrorMessageMultiline, seq, msg)?;
    }
    Ok(())
}

/// The retry hint of an `aoi:error` or a `caused_by` (`at` is the
/// path before `retry_after_ms` in findings): checked as
/// `retry_after` checks it, `error.retry-after-forbidden` beside
/// `retryable:false` (§9.1), and kept only for a retryable error.
fn retry_hint(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    at: &str,
    v: Option<Value<'_>>,
    retryable: Option<bool>,
    seq: Option<u64>,
) -> io::Result<Option<u64>> {
    let name = format!("{at}retry_after_ms");
    let ms = retry_after(run, out, &name, v, seq)?;
    if v.is_some() && retryable == Some(false) {
        let msg = format!("{name} with retryable:false");
        out.report(run, Rule::ErrorRetryAfterForbidden, seq, msg)?;
    }
    Ok(ms.filter(|_| retryable == Some(true)))
}

/// `caused_by` (§13.1): the retry-critical fields of the upstream error
/// that failed the run, held to the rules of `aoi:error` wherever the
/// verdict reads them (docs/contract.md §3.3).
pub(super) fn upstream_cause(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    v: Value<'_>,
    seq: Option<u64>,
) -> io::Result<Cause> {
    let text = |k: &str| v.field(k).and_then(|x| x.as_str()).map(|s| s.into_owned());
    let retryable = match v.field("retryable") {
        None => None,
        Some(x) => {
            let b = x.as_bool();
            if b.is_none() {
                let msg = format!(
                    "caused_by.retryable is {}, not a boolean: the retry decision cannot be read",
                    crate::check::secrets::quotable::value(x.raw())
                );
                out.report(run, Rule::ErrorFieldMissing, seq, msg)?;
            }
            b
        }
    };
    let after = v.field("retry_after_ms");
    let retry_after_ms = retry_hint(run, out, "caused_by.", after, retryable, seq)?;
    Ok(Cause {
        origin: text("origin"),
        category: text("category"),
        code: text("code"),
        retryable: retryable == Some(true),
        retry_after_ms,
    })
}

/// An error code of the spec's form, `[A-Z][A-Z0-9_]*`.
fn is_code(c: &str) -> bool {
    let mut chars = c.chars();
    chars.next().is_some_and(|f| f.is_ascii_uppercase())
        && chars.all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_')
}
