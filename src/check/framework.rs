//! The rules of the framework events: `aoi:meta` (§5, §11, §13.1),
//! `aoi:error` (§9) and `aoi:summary` (§4, §8.3, §13.1).

use std::io;

use super::{Cause, Identity, Outcome, Protocol, SchemaPin, Sink, State};
use crate::check::redact;
use crate::check::rules::{CATEGORIES, Rule};
use crate::json::{Event, Kind, Uint, Value};
use crate::text::{quote, quote_raw};

/// The members whose value decides a verdict (DESIGN §8): when one appears
/// twice, aoitap would read the first, jq and Python the last.
const VERDICT_KEYS: &[&str] = &[
    "ok",
    "reason",
    "partial",
    "retryable",
    "retry_after_ms",
    "scope",
    "category",
    "event_count",
    "count",
    "aoi_version",
    "caused_by",
    "origin",
];

pub(super) const KNOWN_FRAMEWORK: &[&str] = &[
    "aoi:meta",
    "aoi:summary",
    "aoi:warning",
    "aoi:error",
    "aoi:heartbeat",
    "aoi:plan",
    "aoi:check",
    "aoi:progress",
];

impl State<'_> {
    /// `verdict.duplicate-key`: a framework event (or its `caused_by`) that
    /// names a verdict member twice.
    pub(super) fn verdict_duplicates(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
        seq: Option<u64>,
    ) -> io::Result<()> {
        let caused_by = ev.get("caused_by").filter(|v| v.kind() == Kind::Object);
        let twice = VERDICT_KEYS.iter().find_map(|k| {
            if ev.count(k) > 1 {
                Some(k.to_string())
            } else if caused_by.is_some_and(|c| c.count(k) > 1) {
                Some(format!("caused_by.{k}"))
            } else {
                None
            }
        });
        if let Some(key) = twice {
            let msg = format!(
                "{key} appears twice: parsers disagree about which one wins, so the verdict is not the stream's to give"
            );
            self.report(sink, slot, Rule::VerdictDuplicateKey, seq, msg)?;
        }
        Ok(())
    }

    pub(super) fn meta(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
        seq: Option<u64>,
    ) -> io::Result<()> {
        if self.cfg.multi_run {
            self.current = Some(slot);
        }
        let run = self.run(slot);
        if run.meta.is_some() {
            let msg =
                "second aoi:meta: a stream carries at most one (use --multi-run for merged logs)"
                    .to_string();
            return self.report(sink, slot, Rule::MetaDuplicate, seq, msg);
        }
        let first = run.lines == 1;
        let id = identity(ev);
        run.meta = Some(id.clone());
        if !first {
            let msg = "aoi:meta is not the run's first event".to_string();
            self.report(sink, slot, Rule::MetaNotFirst, seq, msg)?;
        }
        if let Some(v) = &id.aoi_version
            && major(v) != Some(1)
            && self.run(slot).protocol != Some(Protocol::Aoi02)
        {
            let msg = format!(
                "aoi_version {} is not AOI-CLI 1.x: aoitap does not interpret this stream (spec §5.2)",
                quote(v)
            );
            self.report(sink, slot, Rule::VersionAoiUnsupported, seq, msg)?;
            // Not interpreted (§5) while the finding stands; allowed, the
            // run is judged by the 1.x rules in full (DESIGN §9): allowing
            // it never turns an unread stream into a pass.
            if self.cfg.levels.of(Rule::VersionAoiUnsupported).is_some() {
                self.run(slot).unsupported = true;
                return Ok(());
            }
        }
        let missing = missing_identity(&id);
        if !missing.is_empty() {
            let msg = format!("aoi:meta lacks {}", missing.join(", "));
            self.report(sink, slot, Rule::MetaIdentityMissing, seq, msg)?;
        }
        if let Some(leak) = ev.get("args").and_then(args_leak) {
            self.report(
                sink,
                slot,
                Rule::MetaArgsUnredacted,
                seq,
                format!("meta.args: {leak}"),
            )?;
        }
        if let Some(pin) = &self.cfg.expect_schema {
            let name_ok = id.schema_name.as_deref() == Some(pin.name.as_str());
            let major_ok =
                pin.major.is_none() || id.schema_version.as_deref().and_then(major) == pin.major;
            if !(name_ok && major_ok) {
                let got = format!(
                    "{}@{}",
                    id.schema_name.as_deref().map_or("(none)".into(), quote),
                    id.schema_version.as_deref().map_or("(none)".into(), quote)
                );
                let msg = format!("expected schema {}, got {got}", pin_text(pin));
                self.report(sink, slot, Rule::VersionSchemaMismatch, seq, msg)?;
            }
        }
        Ok(())
    }

    pub(super) fn error(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
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
            self.report(sink, slot, Rule::ErrorFieldMissing, seq, msg)?;
        }
        match category.as_deref() {
            Some(c @ ("partial" | "temporary")) => {
                let msg = format!(
                    "category {} was removed in v1.0-alpha (use the real category, or unavailable)",
                    quote(c)
                );
                self.report(sink, slot, Rule::ErrorCategoryRemoved, seq, msg)?;
            }
            Some(c) if !CATEGORIES.contains(&c) => {
                let msg = format!(
                    "unknown category {}: consumers route it as internal",
                    quote(c)
                );
                self.report(sink, slot, Rule::ErrorCategoryUnknown, seq, msg)?;
            }
            _ => {}
        }
        if let Some(c) = &code
            && !is_code(c)
        {
            let msg = format!("code {} is not [A-Z][A-Z0-9_]*", quote(c));
            self.report(sink, slot, Rule::ErrorCodeFormat, seq, msg)?;
        }
        if let Some(m) = &message
            && (m.contains(['\n', '\r', '\u{2028}', '\u{2029}', '\u{1b}', '\u{9b}']))
        {
            let msg =
                "message has a line break or ANSI escape: it must be one plain line".to_string();
            self.report(sink, slot, Rule::ErrorMessageMultiline, seq, msg)?;
        }
        let retry_after_ms = self.retry_hint(sink, slot, "", retry_after, retryable, seq)?;
        let scope = match scope {
            None => Some("process".to_string()),
            Some(v) => v.as_str().map(|s| s.into_owned()),
        };
        if !matches!(scope.as_deref(), Some("process" | "item")) {
            let msg = "scope is not \"process\" or \"item\"".to_string();
            self.report(sink, slot, Rule::ErrorScopeInvalid, seq, msg)?;
        }
        let cause = Cause {
            origin: origin.clone(),
            category,
            code,
            retryable: retryable == Some(true),
            retry_after_ms,
        };
        let run = self.run(slot);
        run.errors += 1;
        if origin.is_some() {
            run.forwarded_errors += 1;
        }
        if scope.as_deref() == Some("item") {
            run.item_errors += 1;
        } else if origin.is_none() {
            run.local_process_error = Some(cause);
        }
        Ok(())
    }

    /// An error's `retry_after_ms`, when it is an integer >= 0 (§9.1); any
    /// other value is `error.retry-after-invalid`, never silently dropped
    /// (DESIGN §13). `name` is the member's path as the finding says it.
    pub(super) fn retry_after(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        name: &str,
        v: Option<Value<'_>>,
        seq: Option<u64>,
    ) -> io::Result<Option<u64>> {
        let Some(v) = v else {
            return Ok(None);
        };
        let what = match v.as_uint() {
            Uint::Int(n) => return Ok(Some(n)),
            Uint::Huge => "past 2^64-1, more than aoitap can carry",
            Uint::NotUint => "not an integer >= 0",
        };
        let msg = format!("{name} is {}, {what}", quote_raw(v.raw()));
        self.report(sink, slot, Rule::ErrorRetryAfterInvalid, seq, msg)?;
        Ok(None)
    }

    /// The retry hint of an `aoi:error` or a `caused_by` (`at` is the
    /// path before `retry_after_ms` in findings): checked as
    /// `retry_after` checks it, `error.retry-after-forbidden` beside
    /// `retryable:false` (§9.1), and kept only for a retryable error.
    fn retry_hint(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        at: &str,
        v: Option<Value<'_>>,
        retryable: Option<bool>,
        seq: Option<u64>,
    ) -> io::Result<Option<u64>> {
        let name = format!("{at}retry_after_ms");
        let ms = self.retry_after(sink, slot, &name, v, seq)?;
        if v.is_some() && retryable == Some(false) {
            let msg = format!("{name} with retryable:false");
            self.report(sink, slot, Rule::ErrorRetryAfterForbidden, seq, msg)?;
        }
        Ok(ms.filter(|_| retryable == Some(true)))
    }

    /// `caused_by` (§13.1): the retry-critical fields of the upstream error
    /// that failed the run, held to the rules of `aoi:error` wherever the
    /// verdict reads them (DESIGN §13).
    fn caused_by(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
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
                        quote_raw(x.raw())
                    );
                    self.report(sink, slot, Rule::ErrorFieldMissing, seq, msg)?;
                }
                b
            }
        };
        let after = v.field("retry_after_ms");
        let retry_after_ms = self.retry_hint(sink, slot, "caused_by.", after, retryable, seq)?;
        Ok(Cause {
            origin: text("origin"),
            category: text("category"),
            code: text("code"),
            retryable: retryable == Some(true),
            retry_after_ms,
        })
    }

    /// The terminal summary (§4, §8.3, §13.1), judged on arrival.
    pub(super) fn summary(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        t: usize,
        ev: &Event<'_>,
        seq: Option<u64>,
    ) -> io::Result<()> {
        let ok = ev.get("ok").and_then(|v| v.as_bool());
        if ok.is_none() {
            let msg =
                "summary has no boolean ok: success must be stated, never assumed".to_string();
            self.report(sink, slot, Rule::SummaryOkMissing, seq, msg)?;
        }
        let reason = ev.get("reason").map(|v| v.as_str().map(|s| s.into_owned()));
        match (ok, &reason) {
            (Some(false), None) => {
                let msg =
                    "ok:false without reason (failed, cancelled, timeout or denied)".to_string();
                self.report(sink, slot, Rule::SummaryReasonMissing, seq, msg)?;
            }
            (Some(false), Some(r))
                if !matches!(
                    r.as_deref(),
                    Some("failed" | "cancelled" | "timeout" | "denied")
                ) =>
            {
                let msg = format!(
                    "reason {} with ok:false: must be failed, cancelled, timeout or denied",
                    reason_text(r.as_deref())
                );
                self.report(sink, slot, Rule::SummaryReasonInvalid, seq, msg)?;
            }
            (Some(true), Some(r)) if r.as_deref() != Some("skipped") => {
                let msg = format!(
                    "reason {} with ok:true: only skipped is allowed",
                    reason_text(r.as_deref())
                );
                self.report(sink, slot, Rule::SummaryReasonInvalid, seq, msg)?;
            }
            _ => {}
        }

        let mut counters = [None; 5];
        for (i, name) in [
            "event_count",
            "count",
            "input_count",
            "warning_count",
            "error_count",
        ]
        .iter()
        .enumerate()
        {
            if let Some(v) = ev.get(name) {
                match v.as_uint() {
                    Uint::NotUint => {
                        let msg = format!("{name} is {}, not an integer >= 0", quote_raw(v.raw()));
                        self.report(sink, slot, Rule::SummaryCounterInvalid, seq, msg)?;
                    }
                    n => counters[i] = Some(Count::of(n, v)),
                }
            }
        }
        let [event_count, count, _, warning_count, error_count] = counters;
        let run = self.run(slot);
        let received = run.tracks[t].lines;
        let uses_seq = run.tracks[t].seq.started();
        match event_count {
            Some(n) if n != received => {
                run.count_trouble = true;
                let msg = format!(
                    "the summary counts {n} events but {received} arrived: {}",
                    n.beside(received)
                );
                self.report(sink, slot, Rule::SummaryEventCountMismatch, seq, msg)?;
            }
            None if uses_seq && ev.get("event_count").is_none() => {
                let msg = "no event_count: the run uses seq, but its length cannot be reconciled"
                    .to_string();
                self.report(sink, slot, Rule::SummaryEventCountMissing, seq, msg)?;
            }
            _ => {}
        }
        let run = self.run(slot);
        let complete = !run.unreadable && !run.seq_trouble && !run.count_trouble;
        let (domain, warnings, errors, item_errors) =
            (run.domain, run.warnings, run.errors, run.item_errors);
        let local_error = run.local_process_error.is_some();
        let forwarded = run.forwarded_errors;
        if complete
            && let Some(c) = count
            && c != domain
        {
            let msg = format!("count is {c} but {domain} domain events arrived");
            self.report(sink, slot, Rule::SummaryCountMismatch, seq, msg)?;
        }
        for (name, claimed, seen) in [
            ("warning_count", warning_count, warnings),
            ("error_count", error_count, errors),
        ] {
            if let Some(c) = claimed
                && c < seen
            {
                let msg = format!("{name} is {c} but {seen} were seen in the stream");
                self.report(sink, slot, Rule::SummaryCounterLow, seq, msg)?;
            }
        }
        let partial = ev.get("partial").and_then(|v| v.as_bool()) == Some(true);
        if item_errors > 0 && domain > 0 && !partial {
            let msg =
                format!("{item_errors} item error(s) and domain output, but partial is not true");
            self.report(sink, slot, Rule::SummaryPartialInconsistent, seq, msg)?;
        } else if partial && item_errors == 0 && complete {
            let msg = "partial:true but no item error was seen".to_string();
            self.report(sink, slot, Rule::SummaryPartialInconsistent, seq, msg)?;
        }
        if ok == Some(true) && local_error {
            let msg =
                "ok:true after a process-scope aoi:error, which means the run was over".to_string();
            self.report(sink, slot, Rule::SummaryOkDespiteError, seq, msg)?;
        }
        let caused_by = ev.get("caused_by");
        if ok == Some(false) && forwarded > 0 && !local_error && caused_by.is_none() {
            let msg =
                "failing because of forwarded errors, but no caused_by: the retry detail is lost"
                    .to_string();
            self.report(sink, slot, Rule::SummaryCausedByMissing, seq, msg)?;
        }
        if let Some(up) = ev.get("upstream")
            && (up.kind() == Kind::Null || up.children().any(|(_, v)| v.kind() == Kind::Null))
        {
            let msg = "upstream is null or has null members: omit what is unknown".to_string();
            self.report(sink, slot, Rule::SummaryUpstreamNull, seq, msg)?;
        }
        let missing = missing_identity(&identity(ev));
        if !missing.is_empty() {
            let msg = format!("aoi:summary lacks {}", missing.join(", "));
            self.report(sink, slot, Rule::SummaryIdentityMissing, seq, msg)?;
        }
        let caused_by = match caused_by.filter(|v| v.kind() == Kind::Object) {
            Some(v) => Some(self.caused_by(sink, slot, v, seq)?),
            None => None,
        };
        self.run(slot).summary = Some(Outcome {
            ok,
            partial,
            reason: reason.flatten(),
            caused_by,
        });
        Ok(())
    }
}

/// A counter as the summary wrote it: a `u64`, or an integer past it,
/// which is quoted as written and equals no count of lines (DESIGN §13).
#[derive(Clone, Copy)]
pub(super) struct Count<'a> {
    n: Option<u64>,
    raw: &'a [u8],
}

impl<'a> Count<'a> {
    pub(super) fn of(n: Uint, v: Value<'a>) -> Count<'a> {
        let n = match n {
            Uint::Int(n) => Some(n),
            _ => None,
        };
        Count { n, raw: v.raw() }
    }

    /// How far the count is above `seen` (0 when past counting: a number
    /// of missing lines aoitap cannot hold is not made up).
    pub(super) fn above(self, seen: u64) -> u64 {
        self.n.map_or(0, |n| n.saturating_sub(seen))
    }

    /// How the count stands beside `seen` lines or events, in words.
    pub(super) fn beside(self, seen: u64) -> String {
        match self.n {
            Some(n) if n > seen => format!("{} missing", n - seen),
            Some(n) => format!("{} more than it says", seen - n),
            None => "a count past 2^64-1, more than any stream holds".to_string(),
        }
    }
}

impl PartialEq<u64> for Count<'_> {
    fn eq(&self, other: &u64) -> bool {
        self.n == Some(*other)
    }
}

impl PartialOrd<u64> for Count<'_> {
    fn partial_cmp(&self, other: &u64) -> Option<std::cmp::Ordering> {
        // Past u64 is more than any count of lines.
        Some(self.n.map_or(std::cmp::Ordering::Greater, |n| n.cmp(other)))
    }
}

impl std::fmt::Display for Count<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A counter is an integer literal: its digits are ASCII.
        f.write_str(&String::from_utf8_lossy(self.raw))
    }
}

/// A reason as a message shows it: quoted, or said not to be a string.
fn reason_text(r: Option<&str>) -> String {
    r.map_or_else(|| "(not a string)".to_string(), quote)
}

pub(super) fn identity(ev: &Event<'_>) -> Identity {
    let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
    Identity {
        tool: text("tool"),
        tool_version: text("tool_version"),
        aoi_version: text("aoi_version"),
        schema_name: text("schema_name"),
        schema_version: text("schema_version"),
        command: text("command"),
    }
}

fn missing_identity(id: &Identity) -> Vec<&'static str> {
    [
        ("tool_version", &id.tool_version),
        ("aoi_version", &id.aoi_version),
        ("schema_name", &id.schema_name),
        ("schema_version", &id.schema_version),
    ]
    .into_iter()
    .filter(|(_, v)| v.is_none())
    .map(|(k, _)| k)
    .collect()
}

/// The major number of `1.0-alpha`, `2.1.0`, `0.2`.
pub fn major(version: &str) -> Option<u64> {
    let end = version
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(version.len());
    version[..end].parse().ok()
}

pub(super) fn pin_text(pin: &SchemaPin) -> String {
    match pin.major {
        Some(m) => format!("{}@{m}", pin.name),
        None => pin.name.clone(),
    }
}

fn is_code(c: &str) -> bool {
    let mut chars = c.chars();
    chars.next().is_some_and(|f| f.is_ascii_uppercase())
        && chars.all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_')
}

/// The first leak in `meta.args`, however it is written (`redact::args_leaks`).
fn args_leak(args: Value<'_>) -> Option<String> {
    let mut first = None;
    redact::args_leaks(&args, |what, _| {
        first = Some(what);
        false
    });
    first
}
