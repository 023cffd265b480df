//! The rule catalogue: every check aoitap makes, with its stable id, default
//! severity and spec anchor (docs/contract.md §3.1). Ids are part of aoitap's contract:
//! add, never rename.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

macro_rules! catalogue {
    ($($var:ident $id:literal $sev:ident $anchor:literal $what:literal;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Rule { $($var),* }

        impl Rule {
            pub const ALL: &'static [Rule] = &[$(Rule::$var),*];

            pub fn id(self) -> &'static str {
                match self { $(Rule::$var => $id),* }
            }

            /// The rule's name as one Pascal-case word (`SeqGap`): SARIF's
            /// "friendly name".
            pub fn name(self) -> &'static str {
                match self { $(Rule::$var => stringify!($var)),* }
            }

            pub fn default_severity(self) -> Severity {
                match self { $(Rule::$var => Severity::$sev),* }
            }

            /// Where the rule comes from: an AOI-CLI spec § (or §18 check)
            /// by number, else the contract and its section by name.
            pub fn anchor(self) -> &'static str {
                match self { $(Rule::$var => $anchor),* }
            }

            /// The anchor as a reader finds it: `§8.1` for the AOI-CLI
            /// spec's sections, the named ones as they are.
            pub fn reference(self) -> String {
                let anchor = self.anchor();
                if anchor.starts_with(|c: char| c.is_ascii_digit()) {
                    format!("§{anchor}")
                } else {
                    anchor.to_string()
                }
            }

            /// What the rule catches, in one line (help text, man page).
            pub fn what(self) -> &'static str {
                match self { $(Rule::$var => $what),* }
            }
        }
    };
}

catalogue! {
    LineUnterminated "line.unterminated" Error "2" "last line has no newline (truncated)";
    LineBlank "line.blank" Error "2" "empty or whitespace-only line";
    LineTooLong "line.too-long" Error "2" "line over --max-line-bytes";
    LineElided "line.elided" Error "2" "a harness elision marker such as [... 29 lines omitted ...]: lines were cut here";
    JsonInvalid "json.invalid" Error "2" "not RFC 8259 JSON";
    JsonInvalidUtf8 "json.invalid-utf8" Error "2" "bytes are not UTF-8";
    JsonNotObject "json.not-object" Error "2" "valid JSON, not an object";
    EnvelopeTypeMissing "envelope.type-missing" Error "2, 8.1" "no string type";
    EnvelopeDuplicateKey "envelope.duplicate-key" Error "8.1" "type, aoi, aoi.seq or aoi.run appears twice";
    VerdictDuplicateKey "verdict.duplicate-key" Error "4, 9.1" "a member that decides the verdict (ok, reason, retryable, ...) appears twice";
    EnvelopeAoiNotObject "envelope.aoi-not-object" Error "8.1" "aoi present but not an object";
    TextAnsi "text.ansi" Warning "2" "ANSI escape sequence inside a string value";
    SeqNotInteger "seq.not-integer" Error "8.1" "aoi.seq not a non-negative integer";
    SeqMissing "seq.missing" Error "8.1, 18#15" "a run uses seq but this line has none";
    SeqNotFromZero "seq.not-from-zero" Error "8.1" "first seq of a run is not 0 (head cut)";
    SeqGap "seq.gap" Error "8.1" "seq jumps forward: events missing";
    SeqRepeat "seq.repeat" Error "8.1" "seq repeats or goes backwards";
    RunMissing "run.missing" Error "8.1" "seq without run";
    RunNotString "run.not-string" Error "8.1" "aoi.run not a string";
    RunChanged "run.changed" Error "8.1" "single-run input whose run id changes";
    VerifiableNotClaimed "verifiable.not-claimed" Info "8.1" "a run carries no seq: middle cuts are undetectable";
    MetaMissing "meta.missing" Warning "4" "no aoi:meta";
    MetaNotFirst "meta.not-first" Error "13.1" "aoi:meta is not the run's first event";
    MetaDuplicate "meta.duplicate" Error "13.1" "second aoi:meta in a run";
    MetaIdentityMissing "meta.identity-missing" Info "5" "tool_version, aoi_version, schema_name or schema_version absent from aoi:meta";
    SummaryIdentityMissing "summary.identity-missing" Info "5" "the same identity absent from aoi:summary";
    MetaArgsUnredacted "meta.args-unredacted" Error "11" "meta.args echoes a secret-looking value unredacted";
    VersionAoiUnsupported "version.aoi-unsupported" Error "5" "major aoi_version is not 1";
    VersionSchemaMismatch "version.schema-mismatch" Error "5" "--expect-schema not met";
    FrameworkUnknownType "framework.unknown-type" Error "13" "aoi: type this spec does not define";
    SummaryMissing "summary.missing" Error "4" "EOF with no aoi:summary (warning with --unbounded)";
    SummaryNotLast "summary.not-last" Error "13.1" "events after the run's aoi:summary";
    SummaryDuplicate "summary.duplicate" Error "13.1" "second aoi:summary";
    SummaryOkMissing "summary.ok-missing" Error "4" "ok absent or not boolean";
    SummaryReasonMissing "summary.reason-missing" Error "8.3" "ok:false without reason";
    SummaryReasonInvalid "summary.reason-invalid" Error "8.3" "reason outside failed/cancelled/timeout/denied (or not skipped with ok:true)";
    SummaryEventCountMismatch "summary.event-count-mismatch" Error "8.3" "event_count differs from lines received for the run";
    SummaryEventCountMissing "summary.event-count-missing" Warning "8.3" "run uses seq but the summary has no event_count";
    SummaryCountMismatch "summary.count-mismatch" Error "8.3" "complete run whose count differs from domain events seen";
    SummaryCountMissing "summary.count-missing" Warning "5.2, 8.3" "AOI 0.2 summary without count: lines lost from the middle cannot be found";
    SummaryCounterLow "summary.counter-low" Error "8.3" "warning_count or error_count lower than the events seen";
    SummaryCounterInvalid "summary.counter-invalid" Error "8.3" "a counter present but not an integer >= 0";
    SummaryPartialInconsistent "summary.partial-inconsistent" Warning "8.3, 9.2" "partial disagrees with the item errors seen";
    SummaryOkDespiteError "summary.ok-despite-error" Error "4, 9.1" "ok:true after a local process-scope aoi:error";
    SummaryCausedByMissing "summary.caused-by-missing" Error "13.1" "failing because of forwarded errors, without caused_by";
    SummaryUpstreamNull "summary.upstream-null" Error "13.1" "upstream present as null or with null members";
    ErrorFieldMissing "error.field-missing" Error "9.1" "aoi:error lacks category, code, message or retryable";
    ErrorCategoryRemoved "error.category-removed" Error "5.2" "category partial or temporary (v0.2 names)";
    ErrorCategoryUnknown "error.category-unknown" Warning "9.4" "category outside the closed enum";
    ErrorCodeFormat "error.code-format" Error "9.1" "code not [A-Z][A-Z0-9_]*";
    ErrorMessageMultiline "error.message-multiline" Error "9.1" "message has a line break or ANSI";
    ErrorRetryAfterForbidden "error.retry-after-forbidden" Error "9.1" "retry_after_ms with retryable:false";
    ErrorRetryAfterInvalid "error.retry-after-invalid" Error "9.1" "retry_after_ms not an integer >= 0";
    ErrorScopeInvalid "error.scope-invalid" Error "9.1" "scope not process or item";
    StreamIdle "stream.idle" Warning "4.2" "--idle-timeout-ms passed with no line (a live pipe, --follow)";
    ProtocolMismatch "protocol.mismatch" Error "5.2" "the run does not read as the --protocol given";
    VersionLegacy "version.legacy" Info "5.2" "AOI 0.2 run: no envelope, so a middle cut is counted by the summary, not located";
    AfdataKindInvalid "afdata.kind-invalid" Error "AFDATA Part 3" "kind absent or not result, error, progress or log";
    AfdataPayloadMissing "afdata.payload-missing" Error "AFDATA Part 3" "no member named by the kind";
    AfdataTraceNotObject "afdata.trace-not-object" Error "AFDATA Part 3" "trace present but not an object";
    AfdataErrorFields "afdata.error-fields" Error "AFDATA Part 3" "error payload not an object with non-empty string code and message";
    AfdataTerminalMissing "afdata.terminal-missing" Error "AFDATA Part 3" "EOF with no result or error event (allowed with --unbounded)";
    AfdataTerminalNotLast "afdata.terminal-not-last" Error "AFDATA Part 3" "events after the run's result or error";
    AfdataSuffixType "afdata.suffix-type" Error "AFDATA Part 1" "a value its key's suffix does not allow (latency_ms a string, size_bytes < 0, _rfc3339 with no offset); AFDATA runs, or --names afdata";
    AfdataResultWithError "afdata.result-with-error" Error "AFDATA Part 3" "kind result with an error member: a success that carries an error payload is no success";
    AfdataTraceMissing "afdata.trace-missing" Warning "AFDATA Part 3" "an event without an object trace (the strict profile; once per run)";
    AfdataRetryableMissing "afdata.retryable-missing" Warning "AFDATA Part 3" "an error payload without a boolean retryable (the strict profile)";
    AiocsEnvelopeInvalid "aiocs.envelope-invalid" Error "aiocs: One-shot command envelope" "the envelope's ok is not a boolean or its command not a string";
    AiocsOkWithError "aiocs.ok-with-error" Error "aiocs: One-shot command envelope" "ok:true with an error member: a success that carries an error payload is no success";
    AiocsDataMissing "aiocs.data-missing" Error "aiocs: One-shot command envelope" "ok:true without data";
    AiocsErrorFields "aiocs.error-fields" Error "aiocs: One-shot command envelope" "ok:false without an error holding string code and message";
    AiocsDocumentExtra "aiocs.document-extra" Error "aiocs: One-shot command envelope" "a second JSON document after the envelope";
    AiocsDocumentMissing "aiocs.document-missing" Error "aiocs: One-shot command envelope" "no whole envelope document in the input";
    AiocsDocumentCut "aiocs.document-cut" Error "aiocs: One-shot command envelope" "a pretty-printed document that never closes: the output was cut";
    OkfDocumentMissing "okf.document-missing" Error "OKF: Error envelope" "run: the command exited 0 with no JSON document on stdout";
    OkfDocumentExtra "okf.document-extra" Error "OKF: Error envelope" "run: a second JSON document on stdout, which holds one";
    OkfDocumentCut "okf.document-cut" Error "OKF: Error envelope" "run: a pretty-printed stdout document that never closes";
    OkfErrorMissing "okf.error-missing" Error "OKF: Error envelope" "run: the command failed with no JSON error document on stderr";
    OkfErrorInvalid "okf.error-invalid" Error "OKF: Error envelope" "run: stderr is not one {schemaVersion:\"1\", error:{kind, command, exitCode, message, truncated}} document";
    OkfErrorTooLarge "okf.error-too-large" Error "OKF: Error envelope" "run: the error document is over 256 KiB";
    OkfKindDisagrees "okf.kind-disagrees" Error "OKF: Error envelope" "run: kind is usage but the exit status is not 2, or runtime but it is 2";
    OkfExitDisagrees "okf.exit-disagrees" Error "OKF: Error envelope" "run: exitCode is not the command's real exit status";
    NdjsonTypeMissing "ndjson.type-missing" Error "aiocs: Daemon event stream" "no string discriminator (--type-field)";
    NdjsonFirstWrong "ndjson.first-wrong" Error "aiocs: Daemon event stream" "a run does not start with the --first type";
    NdjsonLastMissing "ndjson.last-missing" Error "aiocs: Daemon event stream" "EOF before the --last type";
    NdjsonAfterLast "ndjson.after-last" Error "aiocs: Daemon event stream" "events after the --last type";
    SecretExposed "secret.exposed" Error "11" "a key ending _secret/_SECRET (or a --secret-name) whose value is not \"***\"";
    SecretUrlExposed "secret.url-exposed" Error "11" "a _url value with a password or secret-named parameter not ***";
    EventSchemaInvalid "event.schema-invalid" Error "10, 18#4" "the event does not validate against --schema (names the path, keyword and type's branch)";
    EventSchemaUnchecked "event.schema-unchecked" Warning "10" "the event was not validated against --schema: nested deeper than 128 levels, or a pattern the regex engine gave up on";
    ExitDisagrees "exit.disagrees" Error "4.1, 6" "run: the command's exit status contradicts its stream (0 with ok:false, non-zero with ok:true)";
    FilterError "filter.error" Error "aoitap filter" "filter: the program gave an error on this event (the other events are still filtered)";
    FilterAssert "filter.assert" Error "aoitap filter" "filter --assert EXPR is false, null or an error for this event";
    ProfileOpenMissing "profile.open-missing" Error "aoitap profiles" "nothing written, or a first event that neither opens the profile's run nor may come before its opener";
    ProfileEndMissing "profile.end-missing" Error "aoitap profiles" "EOF without the profile's end event (names the last provisional error)";
    ProfileAfterEnd "profile.after-end" Error "aoitap profiles" "an event after the end that the profile does not allow";
    ProfileOrdinalGap "profile.ordinal-gap" Error "aoitap profiles" "the end events' ordinal (Claude's result_index) skips: an end event was lost";
    ProfileRunIdChanged "profile.run-id-changed" Error "aoitap profiles" "the run id changes where the profile says it is the same";
    ProfileDocumentExtra "profile.document-extra" Error "aoitap profiles" "a second JSON document where the profile's producer writes one (form = \"json\")";
    ProfileRecovered "profile.recovered" Info "aoitap profiles" "provisional errors (retries) came before a successful end";
    StreamEmpty "stream.empty" Error "aoitap --protocol jsonl" "plain JSON lines: the input holds no line, so nothing says the producer succeeded";
    StreamNotText "stream.not-text" Error "3" "the input is compressed (gzip, zstd, xz, bzip2), UTF-16 or binary (a NUL byte in its first line): said once, the rest not judged";
    RunStalled "run.stalled" Warning "aoitap --follow" "--follow --run-idle-timeout passed with no line of this open run";
}

impl Rule {
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|r| r.id() == id)
    }

    /// Rules about the bytes of a line: still reported for a run whose
    /// version aoitap cannot interpret (§5: framework events of another
    /// major version are not read, but a broken line is broken).
    pub fn is_line_level(self) -> bool {
        matches!(
            self,
            Rule::LineUnterminated
                | Rule::LineBlank
                | Rule::LineTooLong
                | Rule::JsonInvalid
                | Rule::JsonInvalidUtf8
                | Rule::JsonNotObject
                | Rule::StreamIdle
        )
    }

    /// The rule finds lines lost in transport (a cut end, a cut head, a
    /// gap, an elision, a line dropped as too long), not lines that are
    /// wrong: `upgrade` says such an upstream was cut (spec §13.1,
    /// docs/contract.md §1.6).
    pub fn loses_lines(self) -> bool {
        matches!(
            self,
            Rule::LineUnterminated
                | Rule::LineTooLong
                | Rule::LineElided
                | Rule::SeqGap
                | Rule::SeqNotFromZero
                | Rule::SummaryMissing
                | Rule::SummaryEventCountMismatch
                | Rule::SummaryCountMismatch
                | Rule::AfdataTerminalMissing
                | Rule::AiocsDocumentCut
                | Rule::AiocsDocumentMissing
                | Rule::OkfDocumentCut
                | Rule::NdjsonFirstWrong
                | Rule::NdjsonLastMissing
                | Rule::ProfileOpenMissing
                | Rule::ProfileEndMissing
                | Rule::ProfileOrdinalGap
        )
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The closed error-category enum of spec §9.2.
pub const CATEGORIES: &[&str] = &[
    "usage",
    "validation",
    "config",
    "authn",
    "authz",
    "not_found",
    "conflict",
    "precondition_failed",
    "unsupported",
    "rate_limited",
    "unavailable",
    "timeout",
    "cancelled",
    "io",
    "internal",
];

/// `[A-Z][A-Z0-9_]*` (spec §9.1).
pub fn code_is_valid(code: &str) -> bool {
    let b = code.as_bytes();
    b.first().is_some_and(u8::is_ascii_uppercase)
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

/// An upstream code as a 1.0 one: upper case, every other byte `_`, and
/// `E_` before one that does not start with a letter; `fallback` for
/// none.
pub fn code_of(code: Option<&str>, fallback: &str) -> String {
    let Some(code) = code.filter(|c| !c.is_empty()) else {
        return fallback.to_string();
    };
    if code_is_valid(code) {
        return code.to_string();
    }
    let mut out: String = crate::text::prefix(code, 128)
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' => c.to_ascii_uppercase(),
            _ => '_',
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_uppercase()) {
        out.insert_str(0, "E_");
    }
    out
}

/// What `--allow` and `--deny` say of one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    Allow,
    Deny,
}

/// Per-rule severity after `--allow`, `--deny` and `--strict`.
#[derive(Clone, Debug, Default)]
pub struct Levels {
    /// The words in the order given on the command line.
    words: Vec<(Rule, Word)>,
    strict: bool,
}

impl Levels {
    pub fn new(words: &[(Rule, Word)], strict: bool) -> Levels {
        Levels {
            words: words.to_vec(),
            strict,
        }
    }

    /// The rule's severity, or `None` when it is off.
    pub fn of(&self, rule: Rule) -> Option<Severity> {
        self.at(rule, rule.default_severity())
    }

    /// As `of`, for a rule whose severity depends on the options (e.g.
    /// `summary.missing` is a warning under `--unbounded`). Of `--allow X`
    /// and `--deny X`, the last one given wins, as ripgrep's flags do
    /// (docs/contract.md §3.3).
    pub fn at(&self, rule: Rule, base: Severity) -> Option<Severity> {
        let word = self.words.iter().rev().find(|(r, _)| *r == rule);
        match word.map(|&(_, w)| w) {
            Some(Word::Allow) => None,
            Some(Word::Deny) => Some(Severity::Error),
            None if self.strict && base == Severity::Warning => Some(Severity::Error),
            None => Some(base),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for r in Rule::ALL {
            assert!(seen.insert(r.id()), "duplicate id {}", r.id());
            assert!(
                r.id().contains('.')
                    && r.id().chars().all(|c| c.is_ascii_lowercase()
                        || c == '.'
                        || c == '-'
                        || c.is_ascii_digit())
            );
            assert_eq!(Rule::from_id(r.id()), Some(*r));
        }
        assert_eq!(Rule::ALL.len(), 103);
    }

    #[test]
    fn levels_follow_allow_deny_strict() {
        let l = Levels::new(
            &[(Rule::SeqGap, Word::Allow), (Rule::MetaMissing, Word::Deny)],
            false,
        );
        assert_eq!(l.of(Rule::SeqGap), None);
        assert_eq!(l.of(Rule::MetaMissing), Some(Severity::Error));
        assert_eq!(l.of(Rule::TextAnsi), Some(Severity::Warning));
        let strict = Levels::new(&[], true);
        assert_eq!(strict.of(Rule::TextAnsi), Some(Severity::Error));
        assert_eq!(strict.of(Rule::VerifiableNotClaimed), Some(Severity::Info));
        // An allowed warning stays off under --strict.
        let quiet = Levels::new(&[(Rule::TextAnsi, Word::Allow)], true);
        assert_eq!(quiet.of(Rule::TextAnsi), None);
    }

    #[test]
    fn the_last_word_wins() {
        let (a, d) = ((Rule::SeqGap, Word::Allow), (Rule::SeqGap, Word::Deny));
        assert_eq!(
            Levels::new(&[a, d], false).of(Rule::SeqGap),
            Some(Severity::Error)
        );
        assert_eq!(Levels::new(&[d, a], false).of(Rule::SeqGap), None);
        assert_eq!(Levels::new(&[a, d, a], false).of(Rule::SeqGap), None);
    }
}
