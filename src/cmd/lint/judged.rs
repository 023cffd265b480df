//! A call's stdout judged as `aoitap verify` judges it (one truth: lint
//! asks the same checker), each finding's rule placed under the §18.2
//! check it bears on, and what the checks read of the events noted on the
//! way. The stdout is read once, as a stream, and only counts and first
//! findings are kept, so judging costs the longest line, however long the
//! output or however many its findings.

use std::borrow::Cow;
use std::io::{self, Read};
use std::sync::Arc;

use crate::check::rules::{Levels, Rule, Severity};
use crate::check::schema::EventSchema;
use crate::check::{Checker, Config, Finding, RunVerdict, Sink, Tally};
use crate::exit::Exit;
use crate::input::line_check::LineCheck;
use crate::input::lines::Lines;
use crate::input::scan::{Cutter, Line};
use crate::json::{Event, Value};

/// The longest line judged; a longer one is not judged (a check says
/// so), rather than blamed on the tool.
pub const MAX_LINE: usize = 64 << 20;

/// The most distinct error codes noted (check 16 looks for two).
const MAX_CODES: usize = 64;

/// A finding, as a check's detail names it.
#[derive(Clone, Debug)]
pub struct Found {
    pub line: u64,
    pub rule: Rule,
    pub message: String,
    /// Check 2: how the line begins, quoted (secret-looking values
    /// redacted), so a banner or a colour code is seen for what it is.
    pub excerpt: Option<(String, bool)>,
}

impl Found {
    pub fn said(&self) -> String {
        // verify's hints name verify's flags: not lint's to give.
        let message = self
            .message
            .replace(" (use --multi-run for merged logs)", "");
        let rule = self.rule.id();
        match &self.excerpt {
            Some((e, true)) => format!(
                "line {} begins with an ANSI escape ({e}): {message} ({rule})",
                self.line
            ),
            Some((e, false)) => format!("line {} ({e}): {message} ({rule})", self.line),
            None => format!("line {}: {message} ({rule})", self.line),
        }
    }
}

/// The findings against one check: how many, and the first.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    pub count: u64,
    pub first: Option<Found>,
    pub first_error: Option<Found>,
}

/// The terminal event's fields the checks read.
#[derive(Clone, Debug, Default)]
pub struct Last {
    pub line: u64,
    pub ty: String,
    pub ok: Option<bool>,
    pub reason: Option<String>,
    pub truncated: Option<bool>,
    pub next_cursor: bool,
    /// `caused_by.retryable` and `caused_by.retry_after_ms`, when it is
    /// there.
    pub caused_by: Option<(Option<bool>, Option<u64>)>,
}

/// What the checker and the checks made of one stream.
#[derive(Default)]
pub struct Judged {
    /// verify's exit status for the events.
    pub exit: Exit,
    /// Findings on the whole stdout (check 2), and on its events alone,
    /// lines that are not JSON objects left out (every other check: a
    /// banner line fails check 2, not also 3, 14 and 15).
    raw: [Seen; 17],
    events_only: [Seen; 17],
    pub lines: u64,
    pub events: u64,
    /// Events whose type is not `aoi:*`, and a hash of their types in
    /// order (a replay must give the same).
    pub domain: u64,
    pub domain_types: u64,
    /// A hash of what the domain events say, their members but `aoi` in
    /// order: a fed stream was read when it changes what is said, though
    /// not how many events of which types (checks 12 and 16).
    pub domain_said: u64,
    pub plans: u64,
    /// The first line over [`MAX_LINE`].
    pub too_long: Option<u64>,
    /// The unterminated last line, when it holds an ESC byte: what a call
    /// stopped in mid-line wrote (check 2 reads it).
    pub tail_escape: Option<u64>,
    /// The first aoi:meta's `schema_version` and `command`; whether there
    /// was one.
    pub meta: Option<(Option<String>, Option<String>)>,
    /// The first aoi:summary's `schema_version`.
    pub summary_version: Option<Option<String>>,
    pub last: Option<Last>,
    /// The first finding of check 4 on a framework (`aoi:*`) event.
    pub framework_schema: Option<Found>,
    /// The first domain event with no field naming what it is about.
    pub without_id: Option<u64>,
    /// `aoi.run`, `tool` and `schema_name` of each aoi:meta and
    /// aoi:summary (of the first 16): whose stream they describe.
    pub frame_marks: Vec<String>,
    /// The first aoi:error or aoi:warning with a category AOI 1.0
    /// removed (`partial`, `temporary`: spec §5.2), whatever version the
    /// stream says it is: lint holds a tool to 1.0 (spec §18.2 check 5).
    pub removed_category: Option<(u64, String)>,
    /// aoi:error events of category usage, and the first one's message.
    pub usage_errors: u64,
    pub usage_message: Option<String>,
    /// Codes of aoi:error and aoi:warning events without `origin`.
    pub unoriginated: Vec<String>,
    /// Whether any event carries `aoi.seq`, and any aoi:summary
    /// `event_count`: with neither (AOI 0.2, AFDATA), check 15 has
    /// nothing the stream claims to hold it to (docs/contract.md §3.4).
    pub seq_seen: bool,
    pub event_count_seen: bool,
}

impl Judged {
    /// The findings on the whole stdout that bear on check `number`.
    pub fn raw(&self, number: u8) -> &Seen {
        &self.raw[usize::from(number)]
    }

    /// The findings on the events that bear on check `number`.
    pub fn events(&self, number: u8) -> &Seen {
        &self.events_only[usize::from(number)]
    }

    /// Whether the last event is an aoi:summary with `ok:true`.
    pub fn ends_ok(&self) -> bool {
        self.last
            .as_ref()
            .is_some_and(|l| l.ty == "aoi:summary" && l.ok == Some(true))
    }
}

/// Judge the stream `rdr` gives; with `schema`, every event is validated
/// against it too. A read error ends the stream where it happened.
pub fn judge(rdr: impl Read, schema: Option<Arc<EventSchema>>) -> Judged {
    let cfg = config(schema);
    let mut raw = Check::new(&cfg, true);
    let mut events = Check::new(&cfg, false);
    let mut noted = Judged::default();
    let mut cutter = Cutter::new(rdr, MAX_LINE);
    let mut lines = Lines::default();
    let line_check = cfg.schema.as_deref().map(|s| s as &dyn LineCheck);
    while let Ok(Some(batch)) = lines.next(&mut cutter, line_check) {
        for line in batch.lines() {
            noted.lines += 1;
            let n = noted.lines;
            raw.line(&line, n, false);
            match line {
                Line::TooLong { .. } => {
                    noted.too_long.get_or_insert(n);
                }
                Line::Unterminated { bytes: Some(b), .. } if memchr::memchr(0x1b, b).is_some() => {
                    noted.tail_escape = Some(n);
                }
                _ => {}
            }
            if let Some(ev) = line.event() {
                let framework = note(&mut noted, &ev, n);
                events.line(&line, n, framework);
            }
        }
    }
    let end = noted.lines;
    let mut events = events.finish(end);
    noted.exit = events.tally.exit();
    noted.framework_schema = events.framework_schema.take();
    noted.raw = raw.finish(end).seen;
    noted.events_only = events.seen;
    noted
}

fn config(schema: Option<Arc<EventSchema>>) -> Config {
    Config {
        multi_run: false,
        unbounded: false,
        accept_partial: false,
        continue_on_error: false,
        expect_schema: None,
        levels: Levels::new(&[], false),
        markers: vec![],
        max_line_bytes: MAX_LINE,
        protocol: None,
        type_field: "type".to_string(),
        first: None,
        last: None,
        typed: Default::default(),
        afdata_names: false,
        secret_names: vec![],
        redact: false,
        schema,
        timed: false,
    }
}

/// One checker and the counts its findings make.
struct Check<'c> {
    checker: Checker<'c>,
    sink: Counted,
    /// Its check-2 findings quote their line (the whole stdout's: what
    /// check 2 reads).
    quotes: bool,
}

impl<'c> Check<'c> {
    fn new(cfg: &'c Config, quotes: bool) -> Check<'c> {
        Check {
            checker: Checker::new(cfg),
            sink: Counted::default(),
            quotes,
        }
    }

    /// Judge `line`, the stream's line `n` (the checker of events alone
    /// numbers them apart: its findings are given the stream's numbers).
    fn line(&mut self, line: &Line<'_>, n: u64, framework: bool) {
        self.sink.at = Some(n);
        self.sink.framework = framework;
        self.sink.head.clear();
        if let (true, Line::Complete { bytes, .. }) = (self.quotes, line) {
            self.sink
                .head
                .extend_from_slice(&bytes[..bytes.len().min(EXCERPT)]);
        }
        let _ = self.checker.judge(line, &mut self.sink);
    }

    fn finish(mut self, end: u64) -> Counted {
        self.sink.at = Some(end);
        self.sink.framework = false;
        let _ = self.checker.finish(&mut self.sink);
        self.sink
    }
}

/// How much of a line a check-2 finding quotes.
const EXCERPT: usize = 40;

#[derive(Default)]
struct Counted {
    seen: [Seen; 17],
    tally: Tally,
    at: Option<u64>,
    /// The first bytes of the line being judged.
    head: Vec<u8>,
    framework: bool,
    framework_schema: Option<Found>,
}

impl Sink for Counted {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.tally.finding(f);
        let Some(number) = check_of(f.rule) else {
            return Ok(());
        };
        let excerpt = (number == 2 && !self.head.is_empty()).then(|| {
            let quoted =
                crate::check::quotable::quote_or_withhold(&crate::text::quote_raw(&self.head));
            (format!("`{quoted}`"), self.head[0] == 0x1b)
        });
        let found = || Found {
            line: if f.line == 0 {
                0
            } else {
                self.at.unwrap_or(f.line)
            },
            rule: f.rule,
            message: f.message.clone(),
            excerpt: excerpt.clone(),
        };
        if number == 4 && self.framework && self.framework_schema.is_none() {
            self.framework_schema = Some(found());
        }
        let seen = &mut self.seen[usize::from(number)];
        seen.count += 1;
        if seen.first.is_none() {
            seen.first = Some(found());
        }
        if f.severity == Severity::Error && seen.first_error.is_none() {
            seen.first_error = Some(found());
        }
        Ok(())
    }

    fn run(&mut self, r: RunVerdict) -> io::Result<()> {
        self.tally.run(&r);
        Ok(())
    }
}

fn text(v: Option<Value<'_>>) -> Option<String> {
    v.and_then(|v| v.as_str()).map(Cow::into_owned)
}

/// Note what the checks read of event `ev` (line `n`); whether it is a
/// framework event.
fn note(j: &mut Judged, ev: &Event<'_>, n: u64) -> bool {
    j.events += 1;
    let ty = ev.ty().map(Cow::into_owned).unwrap_or_default();
    let framework = ty.starts_with("aoi:");
    j.seq_seen |= ev.aoi().parts().0.is_some();
    let mark = |j: &mut Judged| {
        if j.frame_marks.len() < 48 {
            let (_, run, _) = ev.aoi().parts();
            let marks = [text(run), text(ev.get("tool")), text(ev.get("schema_name"))];
            j.frame_marks.extend(marks.into_iter().flatten());
        }
    };
    match ty.as_str() {
        "aoi:meta" => {
            if j.meta.is_none() {
                j.meta = Some((text(ev.get("schema_version")), text(ev.get("command"))));
            }
            mark(j);
        }
        "aoi:summary" => {
            if j.summary_version.is_none() {
                j.summary_version = Some(text(ev.get("schema_version")));
            }
            j.event_count_seen |= ev.get("event_count").is_some();
            mark(j);
        }
        "aoi:plan" => j.plans += 1,
        "aoi:error" | "aoi:warning" => note_error(j, ev, &ty, n),
        _ if !framework => note_domain(j, ev, &ty, n),
        _ => {}
    }
    j.last = Some(Last {
        line: n,
        ok: ev.get("ok").and_then(|v| v.as_bool()),
        reason: text(ev.get("reason")),
        truncated: ev.get("truncated").and_then(|v| v.as_bool()),
        next_cursor: ev
            .get("next_cursor")
            .is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty())),
        caused_by: ev.get("caused_by").map(|c| {
            (
                c.field("retryable").and_then(|v| v.as_bool()),
                c.field("retry_after_ms").and_then(|v| v.uint()),
            )
        }),
        ty,
    });
    framework
}

/// Note an `aoi:error` or `aoi:warning` (`ty`, line `n`): a category
/// AOI 1.0 removed (check 5), a usage error (CMD ARGS refused), and a
/// code said without an `origin` (check 16).
fn note_error(j: &mut Judged, ev: &Event<'_>, ty: &str, n: u64) {
    let category = text(ev.get("category"));
    if let Some(c @ ("partial" | "temporary")) = category.as_deref()
        && j.removed_category.is_none()
    {
        j.removed_category = Some((n, c.to_string()));
    }
    if ty == "aoi:error" && category.as_deref() == Some("usage") {
        j.usage_errors += 1;
        if j.usage_message.is_none() {
            j.usage_message = text(ev.get("message"));
        }
    }
    let has_origin = ev.get("origin").is_some_and(|v| v.as_str().is_some());
    if let Some(code) = text(ev.get("code"))
        && !has_origin
        && j.unoriginated.len() < MAX_CODES
        && !j.unoriginated.contains(&code)
    {
        j.unoriginated.push(code);
    }
}

/// Note a domain event (`ty`, line `n`): hashes of the types and of
/// what the events say, so that a replay or a fed stream can be told
/// apart (checks 7, 12 and 16), and whether it names what it is about
/// (check 8).
fn note_domain(j: &mut Judged, ev: &Event<'_>, ty: &str, n: u64) {
    j.domain += 1;
    // FNV-1a over the types, each ended by a 0.
    let mut h = if j.domain == 1 {
        0xcbf2_9ce4_8422_2325
    } else {
        j.domain_types
    };
    for &b in ty.as_bytes().iter().chain([0u8].iter()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    j.domain_types = h;
    let mut h = if j.domain == 1 {
        0xcbf2_9ce4_8422_2325
    } else {
        j.domain_said
    };
    for (key, value) in ev.members().filter(|(k, _)| &k[..] != b"aoi") {
        for &b in key
            .iter()
            .chain([0u8].iter())
            .chain(value.raw())
            .chain([0u8].iter())
        {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    j.domain_said = h;
    if j.without_id.is_none() && !names_what_it_is_about(ev) {
        j.without_id = Some(n);
    }
}

/// Whether a domain event names the resource it is about (check 8, spec
/// §14.5 "stable IDs/paths/URLs"): a non-empty string or an integer in
/// `id`, a `*_id` or `*Id` field, `path`, `url`, `uri` or `key`.
fn names_what_it_is_about(ev: &Event<'_>) -> bool {
    ev.as_value().children().any(|(k, v)| {
        let named = matches!(k.as_ref(), "id" | "path" | "url" | "uri" | "key")
            || k.ends_with("_id")
            || k.ends_with("Id");
        named && (v.as_str().is_some_and(|s| !s.is_empty()) || v.uint().is_some())
    })
}

/// The §18.2 check a rule bears on: 2 the stream's form, 3 its summary's
/// truth, 4 the schema, 5 the errors, 9 secrets, 13 versions, 14 one meta
/// and one summary, 15 seq and counts. `None`: a rule of another
/// protocol, or about aoitap's own reading (a line over lint's limit),
/// or about data: `text.ansi` is an escaped ESC inside a string value,
/// which is data (a file's contents), not colour on stdout.
pub fn check_of(rule: Rule) -> Option<u8> {
    use Rule::*;
    Some(match rule {
        LineUnterminated | LineBlank | LineElided | JsonInvalid | JsonInvalidUtf8
        | JsonNotObject | EnvelopeTypeMissing | EnvelopeDuplicateKey | EnvelopeAoiNotObject
        | FrameworkUnknownType => 2,
        SummaryMissing
        | SummaryOkMissing
        | SummaryReasonMissing
        | SummaryReasonInvalid
        | SummaryCountMismatch
        | SummaryCounterLow
        | SummaryCounterInvalid
        | SummaryPartialInconsistent
        | SummaryOkDespiteError
        | SummaryCausedByMissing
        | SummaryUpstreamNull
        | VerdictDuplicateKey
        | MetaMissing => 3,
        EventSchemaInvalid => 4,
        ErrorFieldMissing
        | ErrorCategoryRemoved
        | ErrorCategoryUnknown
        | ErrorCodeFormat
        | ErrorMessageMultiline
        | ErrorRetryAfterForbidden
        | ErrorRetryAfterInvalid
        | ErrorScopeInvalid => 5,
        MetaArgsUnredacted | SecretExposed | SecretUrlExposed => 9,
        VersionAoiUnsupported
        | VersionSchemaMismatch
        | MetaIdentityMissing
        | SummaryIdentityMissing => 13,
        MetaNotFirst | MetaDuplicate | SummaryNotLast | SummaryDuplicate => 14,
        SeqNotInteger
        | SeqMissing
        | SeqNotFromZero
        | SeqGap
        | SeqRepeat
        | RunMissing
        | RunNotString
        | RunChanged
        | VerifiableNotClaimed
        | SummaryEventCountMismatch
        | SummaryEventCountMissing => 15,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(ls: &[&str]) -> Vec<u8> {
        ls.iter()
            .flat_map(|l| [l.as_bytes(), b"\n"].concat())
            .collect()
    }

    fn judged(ls: &[&str]) -> Judged {
        judge(&lines(ls)[..], None)
    }

    const META: &str = r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1","command":"search"}"#;
    const HIT: &str = r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"id":"h1"}"#;
    const DONE: &str = r#"{"type":"aoi:summary","aoi":{"seq":2,"run":"R"},"ok":true,"event_count":3,"count":1,"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1"}"#;

    #[test]
    fn a_conforming_stream_has_no_finding_against_a_check() {
        let j = judged(&[META, HIT, DONE]);
        assert_eq!(j.exit, Exit::Pass);
        for n in 1..=16 {
            assert_eq!(j.raw(n).count, 0, "check {n}");
        }
        assert!(j.ends_ok());
        assert_eq!(j.meta, Some((Some("1".into()), Some("search".into()))));
        assert_eq!((j.domain, j.without_id), (1, None));
        assert_eq!(j.frame_marks, ["R", "t", "s", "R", "t", "s"]);
    }

    #[test]
    fn each_fault_lands_under_its_check() {
        let banner = judged(&["Searching...", META, HIT, DONE]);
        assert!(banner.raw(2).count > 0);
        assert_eq!(banner.events(2).count, 0, "the events alone are clean");
        assert_eq!(banner.raw(2).first.as_ref().unwrap().line, 1);
        let cut = judged(&[META, HIT]);
        assert!(cut.events(3).count > 0);
        let gap = DONE.replace(r#""seq":2"#, r#""seq":3"#);
        let gapped = judged(&["banner", META, HIT, &gap]);
        let found = gapped.events(15).first_error.clone().unwrap();
        assert_eq!(found.line, 4, "the stream's own line number");
        let twice = judged(&[META, META, HIT, DONE]);
        assert!(twice.events(14).count > 0);
    }

    #[test]
    fn seq_and_event_count_are_noted_when_a_stream_has_them() {
        let j = judged(&[META, HIT, DONE]);
        assert!(j.seq_seen && j.event_count_seen);
        // What the AOI 0.2 SDKs write: neither.
        let sdk = [
            r#"{"type":"aoi:meta","tool":"t","tool_version":"1","aoi_version":"0.2","schema_name":"s","schema_version":"1","command":"search"}"#,
            r#"{"type":"hit","id":"h1"}"#,
            r#"{"type":"aoi:summary","ok":true,"count":3}"#,
        ];
        let j = judged(&sdk);
        assert!(!j.seq_seen && !j.event_count_seen);
    }

    #[test]
    fn findings_are_counted_not_kept() {
        // A million blank lines: a million findings, one kept.
        let blank = vec![b'\n'; 1_000_000];
        let j = judge(&blank[..], None);
        assert_eq!(j.raw(2).count, 1_000_000);
        assert_eq!(j.lines, 1_000_000);
    }

    #[test]
    fn a_domain_event_without_an_id_is_noted() {
        let bare = r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"title":"x"}"#;
        assert_eq!(judged(&[META, bare, DONE]).without_id, Some(2));
        for named in [r#""doc_id":"d""#, r#""path":"/a""#, r#""id":7"#] {
            let ev = format!(r#"{{"type":"hit","aoi":{{"seq":1,"run":"R"}},{named}}}"#);
            assert_eq!(judged(&[META, &ev, DONE]).without_id, None, "{named}");
        }
    }
}
