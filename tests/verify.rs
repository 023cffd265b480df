//! `aoitap verify`: each rule of docs/contract.md §3.1 fires where it should and stays
//! quiet on conforming streams; verdicts and exit statuses follow §4.1.
//! The rule table and the tests of verdicts and statuses judge in
//! process, through every reading path at once (tests/check.rs); the
//! rest, and a few of the table's cases besides, run the binary.

use std::process::Command;

use serde_json::{Value, json};

use crate::check;
use crate::util::*;

/// `verify --output jsonl ARGS < input` run by the binary reports `rule`.
/// The findings are exactly `want`: each (rule, line) as many times as
/// listed, nothing else (line 0: a finding about the whole input).
fn assert_fires(want: &[(&str, u64)], input: &[u8], args: &[&str]) {
    let out = verify(args, input);
    let mut got: Vec<(String, u64)> = out
        .findings()
        .iter()
        .map(|f| {
            let rule = f["rule"].as_str().unwrap().to_string();
            (rule, f["line_number"].as_u64().unwrap_or(0))
        })
        .collect();
    let mut want: Vec<(String, u64)> = want.iter().map(|(r, l)| (r.to_string(), *l)).collect();
    got.sort();
    want.sort();
    assert_eq!(
        got,
        want,
        "findings (exit {}) differ; input:\n{}",
        out.code,
        String::from_utf8_lossy(input)
    );
}

/// A whole aiocs one-shot envelope.
const AIOCS_OK: &str = r#"{"ok":true,"command":"search","data":{}}"#;

/// `fires!(name, ["rule" @ line, ...], input[, args])`: the rule the test
/// is named for first, then every other finding the input must give,
/// judged in process through every reading path (`name::fires`).
/// `fires!(spawned name, ...)`: the same, and by the binary too, the input
/// on its standard input (`name::spawned`): the wiring of argv, stdin and
/// the report, end to end.
macro_rules! fires {
    (spawned $name:ident, [$($rule:literal @ $line:literal),+ $(,)?], $input:expr) => {
        fires!(spawned $name, [$($rule @ $line),+], $input, &[]);
    };
    (spawned $name:ident, [$($rule:literal @ $line:literal),+ $(,)?], $input:expr, $args:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn fires() {
                check::fires(&[$(($rule, $line)),+], &$input, $args);
            }

            #[test]
            fn spawned() {
                assert_fires(&[$(($rule, $line)),+], &$input, $args);
            }
        }
    };
    ($name:ident, [$($rule:literal @ $line:literal),+ $(,)?], $input:expr) => {
        fires!($name, [$($rule @ $line),+], $input, &[]);
    };
    ($name:ident, [$($rule:literal @ $line:literal),+ $(,)?], $input:expr, $args:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn fires() {
                check::fires(&[$(($rule, $line)),+], &$input, $args);
            }
        }
    };
}

/// `good(2)` with line `i` (0-based) replaced.
fn good_with(i: usize, line: &str) -> Vec<u8> {
    let mut g = good(2);
    g[i] = line.to_string();
    lines(&g)
}

/// `good(2)` with `line` inserted before index `i`, and the summary's
/// numbers left as they were (so only the rule under test is the point).
fn good_plus(i: usize, line: &str) -> Vec<u8> {
    let mut g = good(2);
    g.insert(i, line.to_string());
    lines(&g)
}

fn with_summary(fields: &str) -> Vec<u8> {
    lines(&[meta(), hit(1), summary(2, fields)])
}

fn with_error(fields: &str) -> Vec<u8> {
    lines(&[
        meta(),
        ev(1, "aoi:error", fields),
        summary(
            2,
            r#""ok":false,"reason":"failed","event_count":3,"count":0,"warning_count":0,"error_count":1"#,
        ),
    ])
}

const ERR: &str = r#""category":"validation","code":"BAD_INPUT","message":"bad","retryable":false"#;

fires!(spawned line_unterminated, ["line.unterminated" @ 3, "summary.missing" @ 3], {
    let mut b = lines(&good(1));
    b.pop();
    b
});
fires!(line_blank, ["line.blank" @ 2, "seq.repeat" @ 3, "summary.event-count-mismatch" @ 5], good_plus(1, "  "));
fires!(
    line_elided,
    ["line.elided" @ 3],
    good_plus(2, "[… 1 lines omitted …]")
);
fires!(
    spawned line_too_long,
    ["line.too-long" @ 2, "line.too-long" @ 4, "summary.missing" @ 4],
    good_with(1, &ev(1, "hit", &format!(r#""x":"{}""#, "a".repeat(500)))),
    &["--max-line-bytes", "200"]
);
fires!(
    json_invalid,
    ["json.invalid" @ 2],
    good_with(1, r#"{"type":"hit","aoi":{"seq":1,"run":"R"},}"#)
);
fires!(json_invalid_utf8, ["json.invalid-utf8" @ 2], {
    let mut b = lines(&[meta()]);
    b.extend_from_slice(b"{\"type\":\"hit\",\"aoi\":{\"seq\":1,\"run\":\"R\"},\"x\":\"\xff\"}\n");
    b.extend_from_slice(&lines(&[ok_summary(2, 1)]));
    b
});
fires!(json_not_object, ["json.not-object" @ 2], good_with(1, "[1,2]"));
fires!(
    verdict_duplicate_key,
    ["verdict.duplicate-key" @ 3],
    with_summary(r#""ok":true,"ok":false,"event_count":3,"count":1"#)
);
fires!(
    envelope_type_missing,
    ["envelope.type-missing" @ 2, "summary.count-mismatch" @ 4],
    good_with(1, r#"{"aoi":{"seq":1,"run":"R"},"id":1}"#)
);
fires!(
    envelope_type_not_string,
    ["envelope.type-missing" @ 2, "summary.count-mismatch" @ 4],
    good_with(1, r#"{"type":7,"aoi":{"seq":1,"run":"R"}}"#)
);
fires!(
    envelope_duplicate_type,
    ["envelope.duplicate-key" @ 2],
    good_with(
        1,
        r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"type":"aoi:summary"}"#
    )
);
fires!(
    envelope_duplicate_seq,
    ["envelope.duplicate-key" @ 2],
    good_with(1, r#"{"type":"hit","aoi":{"seq":1,"seq":9,"run":"R"}}"#)
);
fires!(
    envelope_aoi_not_object,
    ["envelope.aoi-not-object" @ 2],
    good_with(1, r#"{"type":"hit","aoi":[1]}"#)
);
fires!(
    text_ansi,
    ["text.ansi" @ 2],
    good_with(1, &ev(1, "hit", r#""title":"\u001b[31mred\u001b[0m""#))
);
fires!(
    seq_not_integer,
    ["seq.not-integer" @ 2],
    good_with(1, r#"{"type":"hit","aoi":{"seq":1.0,"run":"R"}}"#)
);
fires!(
    seq_not_integer_string,
    ["seq.not-integer" @ 2],
    good_with(1, r#"{"type":"hit","aoi":{"seq":"1","run":"R"}}"#)
);
fires!(
    seq_missing,
    ["seq.missing" @ 2],
    good_with(1, r#"{"type":"hit","aoi":{"run":"R"}}"#)
);
fires!(
    seq_not_from_zero,
    ["seq.not-from-zero" @ 1, "summary.event-count-mismatch" @ 2, "meta.missing" @ 2],
    lines(&[ev(5, "hit", ""), ok_summary(6, 1)])
);
fires!(seq_gap, ["seq.gap" @ 3, "seq.repeat" @ 4], good_with(2, &hit(7)));
fires!(seq_repeat, ["seq.repeat" @ 3, "seq.gap" @ 4], good_with(2, &hit(1)));
fires!(
    run_missing,
    ["run.missing" @ 2],
    good_with(1, r#"{"type":"hit","aoi":{"seq":1}}"#)
);
fires!(
    run_not_string,
    ["run.not-string" @ 2],
    good_with(1, r#"{"type":"hit","aoi":{"seq":1,"run":7}}"#)
);
fires!(
    run_changed,
    ["run.changed" @ 2, "seq.not-from-zero" @ 2, "seq.gap" @ 3, "summary.event-count-mismatch" @ 4],
    good_with(1, r#"{"type":"hit","aoi":{"seq":1,"run":"OTHER"}}"#)
);
fires!(
    verifiable_not_claimed,
    ["verifiable.not-claimed" @ 2],
    lines(&[
        format!(r#"{{"type":"aoi:meta",{IDENTITY}}}"#),
        format!(r#"{{"type":"aoi:summary","ok":true,{IDENTITY}}}"#),
    ])
);
fires!(
    meta_missing,
    ["meta.missing" @ 2],
    lines(&[ev(0, "hit", ""), ok_summary(1, 1)])
);
fires!(
    meta_not_first,
    ["meta.not-first" @ 2],
    lines(&[
        ev(0, "hit", ""),
        ev(1, "aoi:meta", IDENTITY),
        ok_summary(2, 1)
    ])
);
fires!(
    meta_duplicate,
    ["meta.duplicate" @ 2, "summary.count-mismatch" @ 4],
    good_with(1, &ev(1, "aoi:meta", IDENTITY))
);
fires!(
    meta_identity_missing,
    ["meta.identity-missing" @ 1],
    good_with(0, &ev(0, "aoi:meta", r#""tool":"t""#))
);
fires!(
    summary_identity_missing,
    ["summary.identity-missing" @ 3],
    lines(&[
        meta(),
        hit(1),
        ev(2, "aoi:summary", r#""ok":true,"event_count":3"#)
    ])
);
fires!(
    meta_args_unredacted,
    ["meta.args-unredacted" @ 1],
    good_with(
        0,
        &ev(
            0,
            "aoi:meta",
            &format!(r#"{IDENTITY},"args":["search","--token","hunter2"]"#)
        )
    )
);
fires!(
    meta_args_object_unredacted,
    ["meta.args-unredacted" @ 1],
    good_with(
        0,
        &ev(
            0,
            "aoi:meta",
            &format!(r#"{IDENTITY},"args":{{"api_key":"abc"}}"#)
        )
    )
);
fires!(
    meta_args_url,
    ["meta.args-unredacted" @ 1],
    good_with(
        0,
        &ev(
            0,
            "aoi:meta",
            &format!(r#"{IDENTITY},"args":["https://u:pw@example.com/"]"#)
        )
    )
);
fires!(
    version_aoi_unsupported,
    ["version.aoi-unsupported" @ 1],
    good_with(0, &ev(0, "aoi:meta", r#""aoi_version":"2.0""#))
);
fires!(
    version_schema_mismatch_major,
    ["version.schema-mismatch" @ 1],
    lines(&good(1)),
    &["--expect-schema", "com.example.t@2"]
);
fires!(
    version_schema_mismatch_name,
    ["version.schema-mismatch" @ 1],
    lines(&good(1)),
    &["--expect-schema", "com.other"]
);
fires!(
    version_schema_mismatch_no_meta,
    ["version.schema-mismatch" @ 2, "meta.missing" @ 2],
    lines(&[ev(0, "hit", ""), ok_summary(1, 1)]),
    &["--expect-schema", "com.example.t"]
);
fires!(
    framework_unknown_type,
    ["framework.unknown-type" @ 2, "summary.count-mismatch" @ 4],
    good_with(1, &ev(1, "aoi:telemetry", ""))
);
fires!(summary_missing, ["summary.missing" @ 2], lines(&[meta(), hit(1)]));
fires!(
    spawned summary_missing_empty_input,
    // Its missing summary says all there is of it (docs/contract.md §4.1).
    ["summary.missing" @ 0],
    Vec::<u8>::new()
);
fires!(
    summary_not_last,
    ["summary.not-last" @ 3],
    lines(&[meta(), ok_summary(1, 0), hit(2)])
);
fires!(
    summary_duplicate,
    ["summary.duplicate" @ 3],
    lines(&[meta(), ok_summary(1, 0), ok_summary(2, 0)])
);
fires!(
    summary_ok_missing,
    ["summary.ok-missing" @ 3],
    with_summary(r#""event_count":3,"count":1"#)
);
fires!(
    summary_ok_not_bool,
    ["summary.ok-missing" @ 3],
    with_summary(r#""ok":"true","event_count":3"#)
);
fires!(
    summary_reason_missing,
    ["summary.reason-missing" @ 3],
    with_summary(r#""ok":false,"event_count":3"#)
);
fires!(
    summary_reason_invalid,
    ["summary.reason-invalid" @ 3],
    with_summary(r#""ok":false,"reason":"oops","event_count":3"#)
);
fires!(
    summary_reason_with_ok,
    ["summary.reason-invalid" @ 3],
    with_summary(r#""ok":true,"reason":"failed","event_count":3"#)
);
fires!(
    summary_event_count_mismatch,
    ["summary.event-count-mismatch" @ 3],
    with_summary(r#""ok":true,"event_count":4"#)
);
fires!(
    summary_event_count_missing,
    ["summary.event-count-missing" @ 3],
    with_summary(r#""ok":true,"count":1"#)
);
fires!(
    summary_count_mismatch,
    ["summary.count-mismatch" @ 3],
    with_summary(r#""ok":true,"event_count":3,"count":2"#)
);
fires!(
    summary_counter_low,
    ["summary.counter-low" @ 5, "seq.repeat" @ 4, "summary.event-count-mismatch" @ 5],
    good_plus(2, &ev(2, "aoi:warning", r#""code":"W","message":"w""#))
);
fires!(
    summary_counter_invalid,
    ["summary.counter-invalid" @ 3],
    with_summary(r#""ok":true,"event_count":3,"count":-1"#)
);
fires!(
    summary_counter_invalid_float,
    ["summary.counter-invalid" @ 3],
    with_summary(r#""ok":true,"event_count":3.0"#)
);
fires!(
    summary_partial_inconsistent,
    ["summary.partial-inconsistent" @ 4],
    lines(&[
        meta(),
        hit(1),
        ev(2, "aoi:error", &format!(r#"{ERR},"scope":"item""#)),
        summary(
            3,
            r#""ok":true,"event_count":4,"count":1,"error_count":1,"partial":false"#
        ),
    ])
);
fires!(
    summary_partial_without_item_error,
    ["summary.partial-inconsistent" @ 3],
    with_summary(r#""ok":true,"event_count":3,"count":1,"partial":true"#)
);
fires!(
    summary_ok_despite_error,
    ["summary.ok-despite-error" @ 3],
    lines(&[
        meta(),
        ev(1, "aoi:error", ERR),
        summary(2, r#""ok":true,"event_count":3,"count":0,"error_count":1"#),
    ])
);
fires!(
    summary_caused_by_missing,
    ["summary.caused-by-missing" @ 3],
    lines(&[
        meta(),
        ev(1, "aoi:error", &format!(r#"{ERR},"origin":"up""#)),
        summary(
            2,
            r#""ok":false,"reason":"failed","event_count":3,"count":0,"error_count":1"#
        ),
    ])
);
fires!(
    summary_upstream_null,
    ["summary.upstream-null" @ 3],
    with_summary(r#""ok":true,"event_count":3,"count":1,"upstream":null"#)
);
fires!(
    summary_upstream_null_member,
    ["summary.upstream-null" @ 3],
    with_summary(r#""ok":true,"event_count":3,"count":1,"upstream":{"tool":null}"#)
);
fires!(
    error_field_missing,
    ["error.field-missing" @ 2],
    with_error(r#""category":"validation","message":"m","retryable":false"#)
);
fires!(
    error_category_removed,
    ["error.category-removed" @ 2],
    with_error(r#""category":"temporary","code":"X","message":"m","retryable":true"#)
);
fires!(
    error_category_unknown,
    ["error.category-unknown" @ 2],
    with_error(r#""category":"weird","code":"X","message":"m","retryable":false"#)
);
fires!(
    error_code_format,
    ["error.code-format" @ 2],
    with_error(r#""category":"io","code":"bad-code","message":"m","retryable":false"#)
);
fires!(
    error_message_multiline,
    ["error.message-multiline" @ 2],
    with_error(r#""category":"io","code":"X","message":"a\nb","retryable":false"#)
);
fires!(
    error_message_ansi,
    ["error.message-multiline" @ 2, "text.ansi" @ 2],
    with_error(r#""category":"io","code":"X","message":"\u001b[1mb","retryable":false"#)
);
fires!(
    error_retry_after_forbidden,
    ["error.retry-after-forbidden" @ 2],
    with_error(r#""category":"io","code":"X","message":"m","retryable":false,"retry_after_ms":5"#)
);
fires!(
    error_retry_after_invalid,
    ["error.retry-after-invalid" @ 2],
    with_error(r#""category":"io","code":"X","message":"m","retryable":true,"retry_after_ms":-5"#)
);
fires!(
    error_scope_invalid,
    ["error.scope-invalid" @ 2],
    with_error(&format!(r#"{ERR},"scope":"global""#))
);

// Protocols (docs/contract.md §6.1): each rule with a case that breaks it.
const AF_LOG: &str = r#"{"kind":"log","log":{"message":"start"},"trace":{}}"#;
const AF_RESULT: &str = r#"{"kind":"result","result":{"n":1},"trace":{}}"#;
const V02_META: &str = r#"{"type":"aoi:meta","tool":"t","tool_version":"1.0.0","aoi_version":"0.2","schema_name":"s","schema_version":"1.0.0","command":"c"}"#;

fires!(
    protocol_mismatch,
    ["protocol.mismatch" @ 1, "version.legacy" @ 2, "envelope.type-missing" @ 1, "envelope.type-missing" @ 2, "summary.missing" @ 2, "meta.missing" @ 2],
    lines(&[AF_LOG, AF_RESULT]),
    &["--protocol", "aoi-0.2"]
);
fires!(
    version_legacy,
    ["version.legacy" @ 2],
    lines(&[V02_META, r#"{"type":"aoi:summary","ok":true,"count":2}"#])
);
fires!(
    summary_count_missing,
    ["summary.count-missing" @ 2, "version.legacy" @ 2],
    lines(&[V02_META, r#"{"type":"aoi:summary","ok":true}"#])
);
fires!(
    afdata_kind_invalid,
    ["afdata.kind-invalid" @ 2],
    lines(&[AF_LOG, r#"{"kind":"debug","debug":1}"#, AF_RESULT])
);
fires!(
    afdata_payload_missing,
    ["afdata.payload-missing" @ 2],
    lines(&[AF_LOG, r#"{"kind":"progress","trace":{}}"#, AF_RESULT])
);
fires!(
    afdata_trace_not_object,
    ["afdata.trace-not-object" @ 2],
    lines(&[AF_LOG, r#"{"kind":"result","result":{},"trace":[]}"#])
);
fires!(
    afdata_error_fields,
    ["afdata.error-fields" @ 1],
    lines(&[r#"{"kind":"error","error":{"message":"no code","retryable":false},"trace":{}}"#])
);
fires!(
    afdata_terminal_missing,
    ["afdata.terminal-missing" @ 1],
    lines(&[AF_LOG])
);
fires!(
    afdata_suffix_type,
    ["afdata.suffix-type" @ 2],
    lines(&[AF_LOG, r#"{"kind":"result","result":{"latency_ms":"142"},"trace":{}}"#])
);
fires!(
    afdata_trace_missing,
    ["afdata.trace-missing" @ 2],
    lines(&[AF_LOG, r#"{"kind":"progress","progress":{}}"#, r#"{"kind":"log","log":{}}"#, AF_RESULT])
);
fires!(
    afdata_retryable_missing,
    ["afdata.retryable-missing" @ 2],
    lines(&[AF_LOG, r#"{"kind":"error","error":{"code":"x","message":"m"},"trace":{}}"#])
);
// A success that carries an error payload fails even where the finding is
// allowed (docs/contract.md §3.4); a null error carries nothing.
fires!(
    afdata_result_with_error,
    ["afdata.result-with-error" @ 2],
    lines(&[AF_LOG, r#"{"kind":"result","result":{},"error":{"code":"E","message":"m"},"trace":{}}"#])
);
fires!(
    aiocs_ok_with_error,
    ["aiocs.ok-with-error" @ 1],
    lines(&[r#"{"ok":true,"command":"x","data":{},"error":{"code":"E","message":"m"}}"#])
);

#[test]
fn a_success_with_an_error_fails_when_allowed_and_a_null_error_is_none() {
    let cases = [
        (
            "aiocs.ok-with-error",
            r#"{"ok":true,"command":"x","data":{},"error":"#,
        ),
        (
            "afdata.result-with-error",
            r#"{"kind":"result","result":{},"trace":{},"error":"#,
        ),
    ];
    for (rule, head) in cases {
        let with = lines(&[format!(r#"{head}{{"code":"E","message":"m"}}}}"#)]);
        let out = check::judge(&["--allow", rule], &with);
        assert_eq!(out.exit, 1, "{rule}: {out:?}");
        let null = lines(&[format!("{head}null}}")]);
        let out = check::judge(&[], &null);
        assert_eq!(out.exit, 0, "{rule}: {out:?}");
    }
}

fires!(
    aiocs_envelope_invalid,
    ["aiocs.envelope-invalid" @ 1],
    lines(&[r#"{"ok":1,"command":"search","data":{}}"#]),
    &["--protocol", "aiocs"]
);
fires!(
    aiocs_data_missing,
    ["aiocs.data-missing" @ 1],
    lines(&[r#"{"ok":true,"command":"search"}"#])
);
fires!(
    aiocs_error_fields,
    ["aiocs.error-fields" @ 1],
    lines(&[r#"{"ok":false,"command":"show","error":{"code":"X"}}"#])
);
fires!(
    aiocs_document_extra,
    ["aiocs.document-extra" @ 2],
    lines(&[AIOCS_OK, AIOCS_OK])
);
fires!(
    aiocs_document_missing,
    ["aiocs.document-missing" @ 0],
    Vec::<u8>::new(),
    &["--protocol", "aiocs"]
);
fires!(
    aiocs_document_cut,
    ["aiocs.document-cut" @ 2],
    lines(&["{", r#""ok": true,"#])
);
fires!(
    afdata_terminal_not_last,
    ["afdata.terminal-not-last" @ 3],
    lines(&[AF_LOG, AF_RESULT, AF_LOG])
);
fires!(
    ndjson_type_missing,
    ["ndjson.type-missing" @ 2],
    lines(&[r#"{"type":"a"}"#, r#"{"kind":"b"}"#]),
    &["--protocol", "ndjson"]
);
fires!(
    ndjson_first_wrong,
    ["ndjson.first-wrong" @ 1],
    lines(&[r#"{"type":"b"}"#, r#"{"type":"z"}"#]),
    &["--protocol", "ndjson", "--first", "a"]
);
fires!(
    ndjson_last_missing,
    ["ndjson.last-missing" @ 2],
    lines(&[r#"{"type":"a"}"#, r#"{"type":"b"}"#]),
    &["--protocol", "ndjson", "--last", "z"]
);
fires!(
    ndjson_after_last,
    ["ndjson.after-last" @ 3],
    lines(&[r#"{"type":"a"}"#, r#"{"type":"z"}"#, r#"{"type":"b"}"#]),
    &["--protocol", "ndjson", "--last", "z"]
);

// Producer profiles (docs/contract.md §6.3), each on a few lines in the
// shape of the CLI's published types (tests/fixtures/profiles holds whole
// streams, and tests/profiles.rs judges them).
const CODEX_OPEN: &str = r#"{"type":"thread.started","thread_id":"t1"}"#;
const CODEX_DONE: &str = r#"{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}"#;

fires!(
    spawned profile_open_missing,
    ["profile.open-missing" @ 1],
    lines(&[r#"{"type":"turn.started"}"#, CODEX_DONE]),
    &["--profile", "codex-exec"]
);

fires!(
    profile_open_missing_when_nothing_was_written,
    ["profile.open-missing" @ 0],
    Vec::new(),
    &["--profile", "gemini-stream"]
);

fires!(
    profile_end_missing,
    ["profile.end-missing" @ 2],
    lines(&[CODEX_OPEN, r#"{"type":"turn.started"}"#]),
    &["--profile", "codex-exec"]
);

fires!(
    profile_after_end,
    ["profile.after-end" @ 3],
    lines(&[CODEX_OPEN, CODEX_DONE, r#"{"type":"turn.started"}"#]),
    &["--profile", "codex-exec"]
);

fires!(
    profile_ordinal_gap,
    ["profile.ordinal-gap" @ 4],
    lines(&[
        r#"{"type":"system","subtype":"init","session_id":"s"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result_index":0,"session_id":"s"}"#,
        r#"{"type":"system","subtype":"init","session_id":"s"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result_index":2,"session_id":"s"}"#,
    ]),
    &["--profile", "claude-stream"]
);

fires!(
    profile_run_id_changed,
    ["profile.run-id-changed" @ 2],
    lines(&[
        r#"{"type":"system","subtype":"init","session_id":"s"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"session_id":"t"}"#,
    ]),
    &["--profile", "claude-stream"]
);

fires!(
    profile_document_extra,
    ["profile.document-extra" @ 2],
    lines(&[
        r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s"}"#,
        r#"{"type":"system","subtype":"status","session_id":"s"}"#,
    ]),
    &["--profile", "claude-json"]
);

fires!(
    profile_recovered,
    ["profile.recovered" @ 3],
    lines(&[CODEX_OPEN, r#"{"type":"error","message":"Reconnecting... 1/5"}"#, CODEX_DONE]),
    &["--profile", "codex-exec"]
);

fires!(
    spawned stream_not_text,
    ["stream.not-text" @ 1],
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\n\x00\x01\x02\n".as_ref(),
    &[]
);

fires!(
    stream_empty,
    ["stream.empty" @ 0],
    Vec::new(),
    &["--protocol", "jsonl"]
);

fires!(
    secret_exposed,
    ["secret.exposed" @ 2],
    good_with(
        1,
        r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"api_key_secret":"sk-1"}"#
    )
);
fires!(
    secret_url_exposed,
    ["secret.url-exposed" @ 2],
    good_with(
        1,
        r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"cb_url":"https://u:pw@h/"}"#
    )
);

const EVENTS_SCHEMA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/schemas/events.schema.json"
);
fires!(
    spawned event_schema_invalid,
    ["event.schema-invalid" @ 2],
    good_with(1, r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"id":"1"}"#),
    &["--schema", EVENTS_SCHEMA]
);
fires!(
    event_schema_unchecked,
    ["event.schema-unchecked" @ 2],
    good_with(
        1,
        &format!(
            r#"{{"type":"hit","aoi":{{"seq":1,"run":"R"}},"id":1,"title":{}1{}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        )
    ),
    &["--schema", EVENTS_SCHEMA]
);

/// Conforming streams that exercise every event kind: no rule may fire.
fn conforming() -> Vec<(&'static str, Vec<u8>, Vec<&'static str>)> {
    vec![
        ("plain", lines(&good(3)), vec![]),
        (
            "ok-complete fixture",
            std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap(),
            vec![],
        ),
        (
            "partial with an item error, warnings and checks",
            lines(&[
                ev(
                    0,
                    "aoi:meta",
                    &format!(
                        r#"{IDENTITY},"command":"c","args":["--token","***","--author","kim"]"#
                    ),
                ),
                hit(1),
                ev(2, "aoi:warning", r#""code":"SLOW","message":"slow""#),
                ev(
                    3,
                    "aoi:error",
                    &format!(r#"{ERR},"scope":"item","item_index":4"#),
                ),
                ev(4, "aoi:check", r#""name":"x","ok":true"#),
                ev(5, "aoi:progress", r#""done":1"#),
                ev(6, "aoi:heartbeat", ""),
                ev(7, "aoi:plan", r#""op":"none""#),
                summary(
                    8,
                    r#""ok":false,"reason":"failed","event_count":9,"count":1,"input_count":2,"warning_count":1,"error_count":1,"partial":true,"truncated":false,"elapsed_ms":3"#,
                ),
            ]),
            vec!["--accept-partial"],
        ),
        (
            "failure forwarded with caused_by and upstream",
            lines(&[
                meta(),
                ev(
                    1,
                    "aoi:error",
                    r#""origin":"up","category":"rate_limited","code":"RL","message":"slow down","retryable":true,"retry_after_ms":10"#,
                ),
                summary(
                    2,
                    r#""ok":false,"reason":"failed","event_count":3,"count":0,"error_count":1,"caused_by":{"origin":"up","category":"rate_limited","code":"RL","retryable":true,"retry_after_ms":10},"upstream":{"tool":"up","tool_version":"2.0.0"}"#,
                ),
            ]),
            vec![],
        ),
    ]
}

#[test]
fn no_rule_fires_on_conforming_streams() {
    for (name, input, args) in conforming() {
        let out = check::judge(&args, &input);
        assert!(
            out.findings.is_empty(),
            "{name}: findings on a conforming stream: {:?}",
            out.rules()
        );
    }
}

#[test]
fn every_rule_has_a_firing_case_here() {
    // Guards the table above: a rule added to the catalogue without a
    // firing test fails here (stream.idle belongs to a quiet pipe: pipe.rs;
    // exit.disagrees to `run`: run.rs, exit_status_and_stream_must_agree;
    // filter.error and filter.assert to `filter`: filter.rs; run.stalled
    // to --follow: follow.rs; okf.* to `run --protocol okf`: run.rs,
    // an_okf_commands_error_envelope_must_tell_the_truth).
    let src = include_str!("verify.rs");
    let tested: Vec<&str> = src
        .split("fires!(")
        .skip(1)
        .filter_map(|call| call.split('"').nth(1))
        .collect();
    for rule in aoitap::check::rules::Rule::ALL {
        if !matches!(
            rule.id(),
            "stream.idle" | "exit.disagrees" | "filter.error" | "filter.assert" | "run.stalled"
        ) && !rule.id().starts_with("okf.")
        {
            assert!(
                tested.contains(&rule.id()),
                "no firing test for {}",
                rule.id()
            );
        }
    }
}

#[test]
fn exit_pass_is_zero_with_ok_summary() {
    let out = verify(&[], &lines(&good(2)));
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.summary()["ok"], true);
}

#[test]
fn exit_failed_is_one() {
    let out = check::judge(
        &[],
        &with_summary(r#""ok":false,"reason":"failed","event_count":3,"count":1"#),
    );
    assert_eq!(out.exit, 1);
    assert_eq!(out.verdicts(), ["failed"]);
}

#[test]
fn exit_retryable_is_75_with_retry_after() {
    let out = verify(
        &[],
        &std::fs::read(fixture("streams/retryable-failure.jsonl")).unwrap(),
    );
    assert_eq!(out.code, 75);
    let run_ev = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "run")
        .unwrap();
    assert_eq!(run_ev["retry_after_ms"], 4500);
    let s = out.summary();
    assert_eq!(s["caused_by"]["retryable"], true);
    assert_eq!(s["caused_by"]["retry_after_ms"], 4500);
    assert_eq!(s["caused_by"]["origin"], "outline");
    let human = run(
        &["verify"],
        &std::fs::read(fixture("streams/retryable-failure.jsonl")).unwrap(),
    );
    assert!(human.stdout.contains("4500 ms"), "{}", human.stdout);
}

#[test]
fn retryable_only_when_every_failed_run_is() {
    let retry = std::fs::read_to_string(fixture("streams/retryable-failure.jsonl")).unwrap();
    let plain = String::from_utf8(with_summary(
        r#""ok":false,"reason":"failed","event_count":3,"count":1"#,
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, retry).unwrap();
    std::fs::write(&b, plain).unwrap();
    let out = run(
        &["verify", "-q", a.to_str().unwrap(), b.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.code, 1);
    let out = run(
        &["verify", "-q", a.to_str().unwrap(), a.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.code, 75);
}

#[test]
fn nonconforming_wins_over_failure() {
    let mut g = with_summary(r#""ok":false,"reason":"failed","event_count":3,"count":1"#);
    g.extend_from_slice(b"\n");
    assert_eq!(check::judge(&[], &g).exit, 65);
}

#[test]
fn empty_input_is_65_or_a_pass_when_unbounded() {
    assert_eq!(check::judge(&[], b"").exit, 65);
    assert_eq!(check::judge(&["--unbounded"], b"").exit, 0);
}

#[test]
fn unbounded_without_summary_fails_on_a_process_error() {
    let input = lines(&[
        meta(),
        ev(
            1,
            "aoi:error",
            r#""category":"unavailable","code":"DOWN","message":"down","retryable":true"#,
        ),
    ]);
    assert_eq!(check::judge(&["--unbounded"], &input).exit, 75);
    let input = lines(&[
        meta(),
        ev(1, "aoi:error", &format!(r#"{ERR},"scope":"item""#)),
    ]);
    assert_eq!(check::judge(&["--unbounded"], &input).exit, 1);
    assert_eq!(
        check::judge(&["--unbounded", "--continue-on-error"], &input).exit,
        0
    );
}

#[test]
fn item_errors_fail_unless_continue_on_error() {
    let input = lines(&[
        meta(),
        hit(1),
        ev(2, "aoi:error", &format!(r#"{ERR},"scope":"item""#)),
        summary(
            3,
            r#""ok":true,"event_count":4,"count":1,"error_count":1,"partial":true"#,
        ),
    ]);
    assert_eq!(check::judge(&[], &input).exit, 1);
    assert_eq!(check::judge(&["--continue-on-error"], &input).exit, 0);
}

#[test]
fn accept_partial() {
    let input = lines(&[
        meta(),
        hit(1),
        ev(2, "aoi:error", &format!(r#"{ERR},"scope":"item""#)),
        summary(
            3,
            r#""ok":false,"reason":"failed","event_count":4,"count":1,"error_count":1,"partial":true"#,
        ),
    ]);
    assert_eq!(check::judge(&[], &input).exit, 1);
    assert_eq!(check::judge(&["--accept-partial"], &input).exit, 0);
}

#[test]
fn allow_deny_strict() {
    let input = with_summary(r#""ok":true,"count":1"#); // event-count-missing: a warning
    assert_eq!(check::judge(&[], &input).exit, 0);
    assert_eq!(check::judge(&["--strict"], &input).exit, 65);
    assert_eq!(
        check::judge(&["--deny", "summary.event-count-missing"], &input).exit,
        65
    );
    let out = check::judge(&["--allow", "summary.event-count-missing"], &input);
    assert!(!out.has_rule("summary.event-count-missing"));
    // Of --allow R and --deny R, the last one given wins (docs/contract.md §3.3).
    let allow_deny = [
        "--allow",
        "summary.event-count-missing",
        "--deny",
        "summary.event-count-missing",
    ];
    assert_eq!(check::judge(&allow_deny, &input).exit, 65);
    let deny_allow = [
        "--deny",
        "summary.event-count-missing",
        "--allow",
        "summary.event-count-missing",
    ];
    assert_eq!(check::judge(&deny_allow, &input).exit, 0);
}

#[test]
fn limit_truncates_the_findings() {
    let mut ls = vec![meta()];
    ls.extend((0..20).map(|_| "{".to_string()));
    let out = verify(&["--limit", "3"], &lines(&ls));
    assert_eq!(out.findings().len(), 3);
    let s = out.summary();
    assert_eq!(s["truncated"], true);
    assert_eq!(s["properties"]["error_findings"], 21);
    assert_eq!(out.code, 65);
}

#[test]
fn one_finding_per_cause() {
    // An unreadable line stands for one step of seq: no gap after it.
    let out = check::judge(&[], &good_with(1, "{oops"));
    assert_eq!(out.rules(), ["json.invalid"]);
    // A line after the summary: one not-last, not a cascade.
    let out = check::judge(
        &[],
        &lines(&[meta(), ok_summary(1, 0), hit(2), hit(3), hit(4)]),
    );
    let not_last = out.findings.iter().filter(|f| f.rule == "summary.not-last");
    assert_eq!(not_last.count(), 1);
    // A v0.2 stream read as 1.x: one clear finding, not a wall of
    // envelope errors; read as what it is, one note.
    let v02 = std::fs::read(fixture("streams/v0.2-stream.jsonl")).unwrap();
    let out = check::judge(&["--protocol", "aoi"], &v02);
    assert_eq!(out.rules(), ["version.aoi-unsupported"]);
    assert_eq!(check::judge(&[], &v02).rules(), ["version.legacy"]);
}

#[test]
fn gap_reports_the_missing_range() {
    let out = check::judge(&[], &good_with(2, &hit(7)));
    let gap = out.findings.iter().find(|f| f.rule == "seq.gap").unwrap();
    assert_eq!(gap.missing, Some((2, 6, 5)));
    assert_eq!(gap.line, 3);
    assert_eq!(gap.run.as_deref(), Some("R"));
    assert_eq!(gap.seq, Some(7));
}

#[test]
fn json_invalid_names_the_byte_column() {
    let out = check::judge(&[], &good_with(1, r#"{"type":"hit",,}"#));
    let f = out
        .findings
        .iter()
        .find(|f| f.rule == "json.invalid")
        .unwrap();
    assert_eq!((f.line, f.column), (2, Some(15)));
    // The report says it so, at a terminal as in a log.
    let human = run(&["verify"], &good_with(1, r#"{"type":"hit",,}"#));
    assert!(
        human
            .stdout
            .contains("<stdin>:2: error[json.invalid]: invalid JSON at byte column 15"),
        "{}",
        human.stdout
    );
}

#[test]
fn huge_seq_and_numbers_are_valid() {
    let out = check::judge(
        &[],
        &good_with(
            1,
            &ev(
                1,
                "hit",
                r#""big":1E400,"int":1180591620717411303424,"s":"\ud800""#,
            ),
        ),
    );
    assert_eq!(out.exit, 0, "{:?}", out.rules());
}

#[test]
fn multi_run_concatenated_and_interleaved() {
    let a = good(2);
    let b: Vec<String> = good(1)
        .iter()
        .map(|l| l.replace(r#""run":"R""#, r#""run":"S""#))
        .collect();
    let mut cat = a.clone();
    cat.extend(b.clone());
    let out = check::judge(&["--multi-run"], &lines(&cat));
    assert_eq!(out.exit, 0, "{:?}", out.rules());
    assert_eq!(out.verdicts(), ["pass", "pass"]);
    let mut mixed = vec![];
    for i in 0..a.len().max(b.len()) {
        mixed.extend(a.get(i).cloned());
        mixed.extend(b.get(i).cloned());
    }
    let out = check::judge(&["--multi-run"], &lines(&mixed));
    assert_eq!(out.exit, 0, "{:?}", out.rules());
    // One run of the two cut short: that run fails, the other passes.
    mixed.retain(|l| !(l.contains(r#""run":"S""#) && l.contains("aoi:summary")));
    let out = check::judge(&["--multi-run"], &lines(&mixed));
    assert_eq!(out.exit, 65);
    let verdicts: Vec<_> = out
        .runs
        .iter()
        .map(|r| (r.run.as_deref(), r.verdict))
        .collect();
    assert!(verdicts.contains(&(Some("R"), "pass")), "{verdicts:?}");
    assert!(
        verdicts.contains(&(Some("S"), "nonconforming")),
        "{verdicts:?}"
    );
}

#[test]
fn multi_run_lines_without_run_follow_the_latest_meta() {
    // Two seq-less runs, concatenated: each meta opens a run.
    let one = [
        format!(r#"{{"type":"aoi:meta",{IDENTITY}}}"#),
        r#"{"type":"hit"}"#.to_string(),
        format!(r#"{{"type":"aoi:summary","ok":true,"count":1,{IDENTITY}}}"#),
    ];
    let mut two = one.to_vec();
    two.extend(one.iter().cloned());
    let out = check::judge(
        &["--multi-run", "--allow", "verifiable.not-claimed"],
        &lines(&two),
    );
    assert_eq!(out.exit, 0, "{:?}", out.rules());
    assert_eq!(out.verdicts(), ["pass", "pass"]);
}

#[test]
fn several_files_are_several_streams() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    std::fs::write(&a, lines(&good(1))).unwrap();
    let out = run(&["verify", a.to_str().unwrap(), a.to_str().unwrap()], b"");
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.stdout.matches("PASS").count(), 3, "{}", out.stdout);
}

#[test]
fn missing_file_is_66_and_named() {
    let out = run(&["verify", "/no/such/file.jsonl"], b"");
    assert_eq!(out.code, 66);
    assert!(out.stderr.contains("/no/such/file.jsonl"), "{}", out.stderr);
    let out = verify(&["/no/such/file.jsonl"], b"");
    assert_eq!(out.code, 66);
    let err = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "aoi:error")
        .unwrap();
    assert_eq!(err["code"], "INPUT_NOT_FOUND");
    assert_eq!(out.summary()["ok"], false);
}

#[test]
fn usage_errors_are_64() {
    assert_eq!(run(&["verify", "--no-such-flag"], b"").code, 64);
    assert_eq!(run(&["verify", "--output", "json"], b"").code, 64);
    assert_eq!(run(&["verify", "--max-line-bytes", "lots"], b"").code, 64);
    assert_eq!(run(&["verify", "--allow", "no.such-rule"], b"").code, 64);
    assert_eq!(run(&["verify", "--help"], b"").code, 0);
}

#[test]
fn quiet_prints_nothing() {
    let out = run(&["verify", "-q"], &lines(&[meta()]));
    assert_eq!(out.code, 65);
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let out = run(&["verify", "-q", "--output", "jsonl"], &lines(&[meta()]));
    assert!(out.stdout.is_empty());
}

#[test]
fn human_report_reads_without_the_spec() {
    let out = run(
        &["verify", "--color", "never"],
        &std::fs::read(fixture("streams/truncated-last-line.jsonl")).unwrap(),
    );
    let want =
        "<stdin>: NOT CONFORMING: run 01JZQ7X4TQ9 (outline search): the last line has no newline";
    assert!(out.stdout.contains(want), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("without its aoi:summary: it was cut off or the producer crashed")
    );
    assert!(
        out.stdout
            .trim_end()
            .ends_with("Result: FAIL (1 run, 2 errors; exit 65)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains('\x1b'));
    let out = run(
        &["verify", "--color", "always"],
        &std::fs::read(fixture("streams/truncated-last-line.jsonl")).unwrap(),
    );
    assert!(
        out.stdout
            .contains("\x1b[1m\x1b[31merror[line.unterminated]\x1b[0m")
    );
}

#[test]
fn hostile_text_is_escaped_on_a_terminal() {
    let out = run(
        &["verify", "--color", "never"],
        &lines(&[meta(), ev(1, r"aoi:telemetry\u001b[2J", "")]),
    );
    assert!(!out.stdout.contains('\x1b'), "{:?}", out.stdout);
}

/// A directory operand is its `*.jsonl` and `*.ndjson` files, recursively,
/// sorted by path (docs/contract.md §2.2): the same verdict and report as the glob.
#[test]
fn a_directory_is_its_stream_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    let ok = std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap();
    std::fs::write(d.join("a.jsonl"), &ok).unwrap();
    std::fs::write(d.join("sub/b.ndjson"), &ok).unwrap();
    std::fs::write(d.join("notes.txt"), b"not a stream").unwrap();
    let arg = d.to_str().unwrap();
    let glob = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .map(|n| d.join(n).to_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(run(&["verify", "-q", arg], b"").code, 0);
    // One stream cut at the end: the directory is not conforming.
    std::fs::write(d.join("sub/c.jsonl"), &ok[..ok.len() - 20]).unwrap();
    let whole = run(&["verify", "--output", "jsonl", arg], b"");
    assert_eq!(whole.code, 65, "{}", whole.stdout);
    let files = glob(&["a.jsonl", "sub/b.ndjson", "sub/c.jsonl"]);
    let mut args = vec!["verify", "--output", "jsonl"];
    args.extend(files.iter().map(String::as_str));
    let by_glob = run(&args, b"");
    let ids = |s: &str| {
        s.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["type"].to_string(),
                    v["file"].to_string(),
                    v["rule"].to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&whole.stdout), ids(&by_glob.stdout));
}

/// Workers (`-j`, docs/contract.md §2.2) report in operand order: a file that cannot
/// be opened is said in its place, between the files around it, and the
/// status is the worst of all (66), as with one worker. Past 64 files the
/// operands are shared out in several jobs.
#[test]
fn workers_report_in_operand_order() {
    let dir = tempfile::tempdir().unwrap();
    let ok = std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap();
    let mut files = vec![];
    for k in 0..150 {
        let f = dir.path().join(format!("{k:03}.jsonl"));
        match k {
            7 => {}
            40 | 149 => std::fs::write(&f, &ok[..ok.len() - 20]).unwrap(),
            _ => std::fs::write(&f, &ok).unwrap(),
        }
        files.push(f.to_str().unwrap().to_string());
    }
    let with_jobs = |j: &str| {
        let mut args = vec!["verify", "--output", "jsonl", "-j", j];
        args.extend(files.iter().map(String::as_str));
        run(&args, b"")
    };
    let (one, many) = (with_jobs("1"), with_jobs("4"));
    assert_eq!((one.code, many.code), (66, 66), "{}", many.stdout);
    let named = |s: &str| {
        s.lines()
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let file = v["file"].as_str().or(v["message"].as_str())?.to_string();
                Some((v["type"].to_string(), file))
            })
            .collect::<Vec<_>>()
    };
    let told = named(&many.stdout);
    assert_eq!(told, named(&one.stdout));
    let at = |name: &str| told.iter().position(|(_, f)| f.contains(name)).unwrap();
    assert!(at("006.jsonl") < at("007.jsonl") && at("007.jsonl") < at("008.jsonl"));
    assert!(
        told.iter()
            .any(|(t, f)| t == "\"aoi:error\"" && f.contains("007.jsonl"))
    );
}

/// `--failures-only` (docs/contract.md §2.2): a line for each run that did not pass
/// and its error findings, none for a passing run or a warning; the
/// result line still counts every run, and the status is the same.
#[test]
fn failures_only_shows_what_fails_and_counts_everything() {
    let ok = fixture("streams/ok-complete.jsonl");
    let cut = fixture("streams/spec-19-4-import-elided.jsonl");
    let doctor = fixture("streams/spec-19-3-doctor.jsonl");
    let files: Vec<&str> = [&ok, &cut, &doctor, &ok]
        .iter()
        .map(|p| p.to_str().unwrap())
        .collect();
    let mut args = vec!["verify", "--failures-only", "--color", "never"];
    args.extend(&files);
    let only = run(&args, b"");
    let mut all_args = vec!["verify", "--color", "never"];
    all_args.extend(&files);
    let all = run(&all_args, b"");
    assert_eq!(only.code, all.code);
    assert!(!only.stdout.contains("PASS:"), "{}", only.stdout);
    assert!(
        !only.stdout.contains("note[") && !only.stdout.contains("warning["),
        "{}",
        only.stdout
    );
    assert!(only.stdout.contains("error[seq.gap]"), "{}", only.stdout);
    assert!(only.stdout.contains("NOT CONFORMING:"), "{}", only.stdout);
    // The result line is the same: every run counted.
    let result = |s: &str| s.lines().last().unwrap_or_default().to_string();
    assert_eq!(result(&only.stdout), result(&all.stdout));
    assert!(result(&only.stdout).contains("4 runs"), "{}", only.stdout);
}

/// The README's scale-out recipe (docs/contract.md §2.2): GNU parallel over the files,
/// the jsonl reports combined by one more verify, whose status is 0 only
/// when every file passed. Skipped where parallel is not installed (CI
/// installs it).
#[test]
fn the_parallel_recipe_combines_the_reports() {
    if !installed_or_said("parallel") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ok = std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap();
    for i in 0..20 {
        std::fs::write(dir.path().join(format!("t{i:02}.jsonl")), &ok).unwrap();
    }
    let recipe = |dir: &std::path::Path| {
        let script = format!(
            "find {d} -name '*.jsonl' -print0 | parallel -0 -X {bin} verify --output jsonl > {d}/../reports.ndj; \
             {bin} verify -q --multi-run {d}/../reports.ndj",
            d = dir.display(),
            bin = bin().display()
        );
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .status()
            .unwrap()
            .code()
    };
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::rename(e.path(), files.join(e.file_name())).unwrap();
        }
    }
    assert_eq!(recipe(&files), Some(0));
    // One transcript cut at the end: the combined verdict fails.
    std::fs::write(files.join("t07.jsonl"), &ok[..ok.len() - 30]).unwrap();
    assert_eq!(recipe(&files), Some(1));
}

/// The guide's GNU parallel recipe over ssh, as written but for its
/// hosts: `--sshlogin :` is this machine, through parallel's remote
/// path. Skipped where parallel is not installed (CI installs it).
#[test]
fn the_parallel_sshlogin_recipe_combines_the_reports() {
    if !installed_or_said("parallel") {
        return;
    }
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md")).unwrap();
    let at = guide
        .find("--sshlogin 2/host1,2/host2")
        .expect("the ssh recipe");
    let start = guide[..at].rfind("```sh\n").unwrap() + "```sh\n".len();
    let end = at + guide[at..].find("```").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("transcripts");
    std::fs::create_dir(&files).unwrap();
    let ok = std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap();
    for i in 0..12 {
        std::fs::write(files.join(format!("t{i:02}.jsonl")), &ok).unwrap();
    }
    let script = guide[start..end]
        .replace("2/host1,2/host2", ":")
        .replace("-n 200", "-n 3")
        .replace("/shared/transcripts", &files.display().to_string());
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = |script: &str| {
        Command::new("bash")
            .args(["-c", script])
            .current_dir(dir.path())
            .env("PATH", &path)
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(status(&script), Some(0));
    assert_eq!(
        std::fs::read(dir.path().join("not-judged.txt")).unwrap(),
        b""
    );
    // A host that cannot run its share leaves its files unjudged: the
    // account says so, and the status is 1 though every file judged passed.
    let down = script.replace("--sshlogin :", "--sshlogin :,1/aoitap-no-such-host.invalid");
    assert_eq!(status(&down), Some(1));
    let unjudged = std::fs::read_to_string(dir.path().join("not-judged.txt")).unwrap();
    assert!(unjudged.lines().count() > 0, "the account names the files");
    std::fs::write(files.join("t05.jsonl"), &ok[..ok.len() - 30]).unwrap();
    assert_eq!(status(&script), Some(1));
}

/// A `run` event names its producer (schema 1.10.0): the tool and
/// command its meta gives, or a profile's producer where the stream
/// names none; what a query over many reports counts runs by.
#[test]
fn a_run_event_names_its_tool_and_command() {
    let ok = fixture("streams/ok-complete.jsonl");
    let codex = fixture("profiles/codex-exec/success-tool-calls.jsonl");
    let out = run(
        &[
            "verify",
            "--output",
            "jsonl",
            ok.to_str().unwrap(),
            codex.to_str().unwrap(),
        ],
        b"",
    );
    let runs: Vec<Value> = out
        .events()
        .into_iter()
        .filter(|e| e["type"] == "run")
        .collect();
    assert_eq!(runs.len(), 2, "{}", out.stdout);
    assert_eq!(
        (&runs[0]["tool"], &runs[0]["command"]),
        (&json!("outline"), &json!("search"))
    );
    assert_eq!(runs[1]["tool"], "codex");
    assert!(runs[1].get("command").is_none(), "{}", runs[1]);
}

/// A report's verdict survives a second verify (docs/contract.md §4.1), whatever mix
/// of runs it covers: a failed run beside a retryable one is 1 read again,
/// not the retryable run's 75 (its cause is not the report's).
#[test]
fn a_reports_verdict_survives_a_second_verify() {
    let retry = fixture("streams/retryable-failure.jsonl");
    let failed = fixture("streams/spec-19-3-doctor.jsonl");
    let ok = fixture("streams/ok-complete.jsonl");
    for files in [
        vec![&retry, &failed],
        vec![&failed, &retry],
        vec![&ok, &retry],
        vec![&retry, &retry],
        vec![&ok, &failed],
    ] {
        let names: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
        let first = run(
            &[&["verify", "--output", "jsonl"], &names[..]].concat(),
            b"",
        );
        let again = run(&["verify", "-q"], first.stdout.as_bytes());
        assert_eq!(again.code, first.code, "{names:?}\n{}", first.stdout);
    }
}

/// An output that is one of the files a directory stands for is refused
/// (64) before anything is written: a `--report` there would destroy an
/// input, and standard output there would be read back without end.
#[test]
fn an_output_among_a_directorys_files_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ok = std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap();
    std::fs::write(d.join("a.jsonl"), &ok).unwrap();
    std::fs::write(d.join("rep.jsonl"), &ok).unwrap();
    let report = d.join("rep.jsonl");
    let out = run(
        &[
            "verify",
            "--report",
            report.to_str().unwrap(),
            d.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.code, 64, "{}", out.stderr);
    assert_eq!(std::fs::read(&report).unwrap(), ok, "the input is intact");
    let script = format!(
        "{} verify --relay {d} > {d}/z.jsonl",
        bin().display(),
        d = d.display()
    );
    let out = Command::new("timeout")
        .args(["20", "sh", "-c", &script])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{said}");
    assert!(said.contains("aoitap would read what it writes"), "{said}");
}

/// `aoitap ARGS` with its stdout (where human output goes) on a pty: what
/// a person at a terminal sees.
fn at_a_terminal(args: &[&str]) -> String {
    use rustix::fs::{Mode, OFlags};
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    use std::io::Read;
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY,
        Mode::empty(),
    )
    .unwrap();
    let mut mode = rustix::termios::tcgetattr(&slave).unwrap();
    mode.make_raw();
    rustix::termios::tcsetattr(&slave, rustix::termios::OptionalActions::Now, &mode).unwrap();
    let mut child = std::process::Command::new(bin())
        .args(args)
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::from(slave))
        .spawn()
        .unwrap();
    // Read as it comes (a pty holds little); the end is EIO once the
    // child, the slave's last holder, has gone.
    let mut master = std::fs::File::from(master);
    let reader = std::thread::spawn(move || {
        let mut seen = vec![];
        let mut buf = [0; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        seen
    });
    child.wait().unwrap();
    String::from_utf8_lossy(&reader.join().unwrap()).into_owned()
}

/// At a terminal a binary file given by mistake is a screenful: at most
/// 100 findings per input, then a count of the rest; `--limit` says
/// otherwise, `--limit 0` shows all, and a pipe gets every one (docs/contract.md §3.4).
#[test]
fn a_terminal_sees_a_hundred_findings_per_input_and_a_count() {
    let dir = tempfile::tempdir().unwrap();
    // Broken lines, one finding each: not a first line that names the
    // whole input as not text (stream.not-text), which says it once.
    let mut binary = vec![];
    for i in 0..300u32 {
        binary.extend_from_slice(&[b'{', 0xff, 0xfe, (i % 200) as u8 + 1, b'\n']);
    }
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    std::fs::write(&a, &binary).unwrap();
    std::fs::write(&b, &binary).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let findings = |text: &str| {
        text.lines()
            .filter(|l| l.contains("error[") || l.contains("warning[") || l.contains("note["))
            .count()
    };
    let piped = run(&["verify", a, b], b"");
    let all = findings(&piped.stdout);
    assert!(all > 600, "{}", piped.stdout);
    let seen = at_a_terminal(&["verify", "--color", "never", a, b]);
    assert_eq!(findings(&seen), 200, "{seen}");
    for f in [a, b] {
        let count = format!(
            "{f}: and {} more findings (--limit 0 shows all)",
            all / 2 - 100
        );
        assert!(seen.contains(&count), "{count} in {seen}");
    }
    let every = at_a_terminal(&["verify", "--color", "never", "--limit", "0", a, b]);
    assert_eq!(findings(&every), all, "{every}");
    let some = at_a_terminal(&["verify", "--color", "never", "--limit", "7", a, b]);
    assert_eq!(findings(&some), 7, "{some}");
    assert!(!piped.stdout.contains("--limit 0 shows all"));
}

/// A pretty-printed document over `--max-line-bytes` is one finding, not
/// one a line for the rest of it (it was 2,913 for 3,000 lines); a relay
/// under `--redact` withholds its lines, which were never searched.
#[test]
fn an_over_long_document_is_one_finding() {
    let items: Vec<String> = (0..3000).map(|i| format!("    \"item {i:<96}\"")).collect();
    let doc = format!(
        "{{\n  \"ok\": true,\n  \"command\": \"c\",\n  \"data\": [\n{}\n  ]\n}}\n",
        items.join(",\n")
    );
    let out = run(
        &["verify", "--output", "jsonl", "--max-line-bytes", "10000"],
        doc.as_bytes(),
    );
    assert_eq!(out.code, 65, "{}", out.stdout);
    let rules = out.rules();
    assert_eq!(
        rules.iter().filter(|r| *r == "line.too-long").count(),
        1,
        "{rules:?}"
    );
    assert!(!rules.iter().any(|r| r == "json.invalid"), "{rules:?}");
    let (_, relayed, _) = raw(
        &["verify", "--relay", "--redact", "--max-line-bytes", "10000"],
        doc.as_bytes(),
    );
    let relayed = String::from_utf8(relayed).unwrap();
    assert_eq!(relayed.lines().count(), doc.lines().count());
    assert!(
        !relayed.contains("item 2999"),
        "the last lines were never searched"
    );
}
