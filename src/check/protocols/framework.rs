//! The framework events AOI 1.x and 0.2 share (spec §5, §9, §13.1):
//! which event a line is by its decoded type, `aoi:meta`'s rules, the
//! checks at a run's end, and the counters and retry hints the
//! protocols' summary and error rules read. What differs between 1.x and
//! 0.2 (the summary, the error) is each protocol's own.

use std::borrow::Cow;
use std::io;

use super::contract::{LineKind, SeqPlace};
use crate::check::config::Protocol;
use crate::check::config::SchemaPin;
use crate::check::finding::{Draft, Reporter};
use crate::check::protocols::detect::major;
use crate::check::rules::{Rule, Severity};
use crate::check::run_state::{Identity, RunState};
use crate::check::runs::MAX_OPEN_RUNS;
use crate::check::secrets::meta_args;
use crate::json::{Event, Kind, Uint, Value};
use crate::text::{plural, quote};

/// The members whose value decides a verdict (docs/contract.md §3.2): when one appears
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

const KNOWN_FRAMEWORK: &[&str] = &[
    "aoi:meta",
    "aoi:summary",
    "aoi:warning",
    "aoi:error",
    "aoi:heartbeat",
    "aoi:plan",
    "aoi:check",
    "aoi:progress",
];

/// An event's decoded `type` (compared, never shown, so no UTF-8 pass is
/// owed) and what commands that pass lines on need to know of it, in a
/// protocol with a `type` discriminator (AOI 1.x and 0.2).
pub(in crate::check) fn typed<'a>(
    ev: &Event<'a>,
    protocol: Protocol,
) -> (Option<Cow<'a, [u8]>>, LineKind) {
    let ty = ev.ty_bytes();
    let seen = LineKind {
        event: ty.is_some() && ev.duplicate_reserved_key().is_none(),
        framework: ty.as_deref().is_some_and(|t| t.starts_with(b"aoi:")),
        protocol,
        late: false,
        seq: SeqPlace::Untracked,
        held: false,
    };
    (ty, seen)
}

/// What `by_type` leaves to the run's protocol: the framework events
/// whose rules differ between 1.x and 0.2.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Left {
    Nothing,
    /// `type` twice: no event of either type, and the domain count cannot
    /// be judged (one finding per cause).
    TypeTwice,
    /// The run's `aoi:meta`, judged: id-less lines go to its run from now on.
    Meta,
    /// The run's first `aoi:summary`, to be judged: it ends the run.
    Summary,
    Error,
}

/// An event by its decoded type: the framework events' rules shared by
/// AOI 1.x and 0.2, and the domain count.
pub(super) fn by_type(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    ty: Option<&[u8]>,
    seq: Option<u64>,
) -> io::Result<Left> {
    // Two `type`s: jq and Python read the last, aoitap the first, so the
    // line is no event of either type (`envelope.duplicate-key` says
    // why). Allowing that finding never makes it a summary (docs/contract.md §3.3).
    if ev.duplicate_reserved_key().is_some() && ev.count("type") > 1 {
        return Ok(Left::TypeTwice);
    }
    let framework = ty.is_some_and(|t| t.starts_with(b"aoi:"));
    if framework {
        verdict_duplicates(run, out, ev, seq)?;
    }
    match ty {
        Some(b"aoi:meta") => {
            meta(run, out, ev, seq)?;
            return Ok(Left::Meta);
        }
        Some(b"aoi:summary") if run.summary.is_some() => {
            let msg = "second aoi:summary: a stream carries at most one".to_string();
            out.report(run, Rule::SummaryDuplicate, seq, msg)?;
        }
        Some(b"aoi:summary") => return Ok(Left::Summary),
        Some(b"aoi:error") => return Ok(Left::Error),
        Some(b"aoi:warning") => run.warnings += 1,
        Some(other) if framework && !KNOWN_FRAMEWORK.iter().any(|k| k.as_bytes() == other) => {
            let msg = format!(
                "unknown framework event {}: it may carry failure, so success cannot be reported",
                crate::text::quote(&String::from_utf8_lossy(other))
            );
            out.report(run, Rule::FrameworkUnknownType, seq, msg)?;
        }
        Some(_) if framework => {}
        Some(_) => run.domain += 1,
        None => {}
    }
    Ok(Left::Nothing)
}

/// `verdict.duplicate-key`: a framework event (or its `caused_by`) that
/// names a verdict member twice.
pub(super) fn verdict_duplicates(
    run: &mut RunState,
    out: &mut Reporter<'_>,
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
        out.report(run, Rule::VerdictDuplicateKey, seq, msg)?;
    }
    Ok(())
}

pub(super) fn meta(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    seq: Option<u64>,
) -> io::Result<()> {
    if run.meta.is_some() {
        let msg = "second aoi:meta: a stream carries at most one (use --multi-run for merged logs)"
            .to_string();
        return out.report(run, Rule::MetaDuplicate, seq, msg);
    }
    let first = run.lines == 1;
    let id = identity(ev);
    run.meta = Some(id.clone());
    if !first {
        let msg = "aoi:meta is not the run's first event".to_string();
        out.report(run, Rule::MetaNotFirst, seq, msg)?;
    }
    if let Some(v) = &id.aoi_version
        && major(v) != Some(1)
        && run.protocol != Some(Protocol::Aoi02)
    {
        let msg = format!(
            "aoi_version {} is not AOI-CLI 1.x: aoitap does not interpret this stream (spec §5.2)",
            quote(v)
        );
        out.report(run, Rule::VersionAoiUnsupported, seq, msg)?;
        // Not interpreted (§5) while the finding stands; allowed, the
        // run is judged by the 1.x rules in full (docs/contract.md §6.1): allowing
        // it never turns an unread stream into a pass.
        if out.cfg.levels.of(Rule::VersionAoiUnsupported).is_some() {
            run.unsupported = true;
            return Ok(());
        }
    }
    let missing = missing_identity(&id);
    if !missing.is_empty() {
        let msg = format!("aoi:meta lacks {}", missing.join(", "));
        out.report(run, Rule::MetaIdentityMissing, seq, msg)?;
    }
    if let Some(leak) = ev.get("args").and_then(args_leak) {
        out.report(
            run,
            Rule::MetaArgsUnredacted,
            seq,
            format!("meta.args: {leak}"),
        )?;
    }
    if let Some(pin) = &out.cfg.expect_schema {
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
            out.report(run, Rule::VersionSchemaMismatch, seq, msg)?;
        }
    }
    Ok(())
}

/// An error's `retry_after_ms`, when it is an integer >= 0 (§9.1); any
/// other value is `error.retry-after-invalid`, never silently dropped
/// (docs/contract.md §3.3). `name` is the member's path as the finding says it.
pub(super) fn retry_after(
    run: &mut RunState,
    out: &mut Reporter<'_>,
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
    let msg = format!(
        "{name} is {}, {what}",
        crate::check::secrets::quotable::value(v.raw())
    );
    out.report(run, Rule::ErrorRetryAfterInvalid, seq, msg)?;
    Ok(None)
}

/// `summary.missing` when the run has none (a warning with
/// `--unbounded`, §4.2).
pub(super) fn summary_missing(run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
    let cfg = out.cfg;
    if run.summary.is_none() {
        let lines = run.lines;
        let msg = if run.evicted {
            format!(
                "judged after {} without its aoi:summary: more than {MAX_OPEN_RUNS} runs \
                 were open at once, and the oldest is judged to keep memory bounded",
                plural(lines, "line")
            )
        } else if cfg.unbounded {
            format!(
                "no aoi:summary after {} (allowed: --unbounded)",
                plural(lines, "line")
            )
        } else if let Some(how) = out.silent_exit {
            // `run` knows how the command ended: no cut is guessed at.
            format!("the command {how}")
        } else if lines == 0 && out.line == 0 {
            "nothing was written, not one line, not even an aoi:meta (the producer \
             wrote elsewhere, or failed before it began)"
                .to_string()
        } else if let Some(log_end) = run.within_log() {
            // A merged log: the run's own range, and where the log ended.
            let end = match log_end {
                Some(line) => format!("the log went on to line {line}"),
                None => "the log ended there".to_string(),
            };
            format!(
                "the run (lines {} to {}, {}) has no aoi:summary; {end}: \
                 it was cut off or the producer crashed",
                run.first_line,
                run.last_line,
                plural(lines, "line")
            )
        } else {
            format!(
                "the stream ended after {} without its aoi:summary: it was cut off or the producer crashed",
                plural(lines, "line")
            )
        };
        let mut f = Draft::new(Rule::SummaryMissing, msg);
        if cfg.unbounded {
            // Not a violation for a documented unbounded stream (§4.2).
            f.base = Severity::Warning;
        }
        out.emit(run, f)?;
    }
    Ok(())
}

pub(super) fn meta_missing(run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
    let cfg = out.cfg;
    if run.meta.is_none() {
        out.report(
            run,
            Rule::MetaMissing,
            None,
            "no aoi:meta: the stream does not say what it is".into(),
        )?;
        if let Some(pin) = &cfg.expect_schema {
            let msg = format!(
                "expected schema {}, but the run has no aoi:meta",
                pin_text(pin)
            );
            out.report(run, Rule::VersionSchemaMismatch, None, msg)?;
        }
    }
    Ok(())
}

/// A counter as the summary wrote it: a `u64`, or an integer past it,
/// which is quoted as written and equals no count of lines (docs/contract.md §3.3).
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

/// `s`, cut to `IDENTITY_BYTES`.
pub fn identity_text(s: &str) -> String {
    use crate::text::IDENTITY_BYTES;
    if s.len() <= IDENTITY_BYTES {
        return s.to_string();
    }
    format!("{}…", crate::text::prefix(s, IDENTITY_BYTES))
}

pub fn identity(ev: &Event<'_>) -> Identity {
    let text = |k: &str| {
        ev.get(k)
            .and_then(|v| v.as_str())
            .map(|s| identity_text(&s))
    };
    Identity {
        tool: text("tool"),
        tool_version: text("tool_version"),
        aoi_version: text("aoi_version"),
        schema_name: text("schema_name"),
        schema_version: text("schema_version"),
        command: text("command"),
    }
}

pub(super) fn missing_identity(id: &Identity) -> Vec<&'static str> {
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

pub(super) fn pin_text(pin: &SchemaPin) -> String {
    match pin.major {
        Some(m) => format!("{}@{m}", pin.name),
        None => pin.name.clone(),
    }
}

/// The first leak in `meta.args`, however it is written (`meta_args::args_leaks`).
fn args_leak(args: Value<'_>) -> Option<String> {
    let mut first = None;
    meta_args::args_leaks(&args, |what, _| {
        first = Some(what);
        false
    });
    first
}
