//! Trust at the edges (docs/contract.md §3.3): streams that real producers write and
//! flags that real users give, each reaching one verdict in every command
//! that reads a stream, from a file and through a pipe, and in `run`.

use crate::util::*;

/// Every command's exit on `input` with `args`, through a pipe and from a
/// file, and `run`'s on a CMD that writes `input` and exits `cmd_exit`.
fn exits(input: &[u8], args: &[&str], cmd_exit: i32) -> Vec<(String, i32)> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.jsonl");
    std::fs::write(&file, input).unwrap();
    let file = file.to_str().unwrap();
    let mut got = vec![];
    for (i, cmd) in STREAM_COMMANDS.into_iter().enumerate() {
        for from_file in [false, true] {
            let out_dir = dir.path().join(format!("runs-{i}-{from_file}"));
            let mut a = command_words(cmd, &out_dir);
            a.push("-q");
            a.extend_from_slice(args);
            let out = if from_file {
                a.push(file);
                run(&a, b"")
            } else {
                run(&a, input)
            };
            let how = if from_file { "file" } else { "pipe" };
            got.push((format!("{cmd} ({how})"), out.code));
        }
    }
    let script = format!("cat '{file}'; exit {cmd_exit}");
    let mut a = vec!["run", "-q"];
    a.extend_from_slice(args);
    a.extend(["--", "sh", "-c", &script]);
    got.push(("run".to_string(), run(&a, b"").code));
    got
}

/// The verdict `want` in every command; verify's findings hold `rules`.
#[track_caller]
fn verdict(input: &[u8], args: &[&str], want: i32, cmd_exit: i32, rules: &[&str]) -> Out {
    for (cmd, code) in exits(input, args, cmd_exit) {
        assert_eq!(
            code,
            want,
            "{cmd} {args:?} gives {code}, not {want}, on\n{}",
            String::from_utf8_lossy(input)
        );
    }
    let out = verify(args, input);
    for r in rules {
        assert!(out.has_rule(r), "{r} missing from {:?}", out.rules());
    }
    out
}

const V02_META: &str = r#"{"type":"aoi:meta","tool":"mm","tool_version":"0.1.0","aoi_version":"0.2","schema_name":"s","schema_version":"1.0.0","command":"ls"}"#;
const V02_HIT: &str = r#"{"type":"entry","name":"a"}"#;

fn v02_error(extra: &str) -> String {
    format!(
        r#"{{"type":"aoi:error","code":"LS_FAILED","category":"temporary","message":"ls: warning","retryable":false{extra}}}"#
    )
}

fn v02(ls: &[String]) -> Vec<u8> {
    lines(ls)
}

#[test]
fn an_aoi_02_error_then_ok_true_never_passes() {
    let ok4 = r#"{"type":"aoi:summary","ok":true,"count":4}"#.to_string();
    let with = |extra: &str| {
        v02(&[
            V02_META.into(),
            V02_HIT.into(),
            v02_error(extra),
            ok4.clone(),
        ])
    };
    // No scope (0.2 has none) and scope "item": an item error, exit 1.
    verdict(&with(""), &[], 1, 0, &["version.legacy"]);
    verdict(&with(r#","scope":"item""#), &[], 1, 0, &[]);
    verdict(&with(""), &["--continue-on-error"], 0, 0, &[]);
    // A process-scope error means the run was over, as in 1.x.
    let process = with(r#","scope":"process""#);
    verdict(&process, &[], 65, 0, &["summary.ok-despite-error"]);
    // What machinemode 0.1's ls adapter writes when ls warns and exits 0
    // (made by running its code with node).
    let mm = std::fs::read(fixture("streams/v0.2-machinemode-ls-warning.jsonl")).unwrap();
    verdict(&mm, &[], 1, 0, &["version.legacy"]);
}

#[test]
fn an_aoi_02_failure_keeps_its_retry() {
    let input = v02(&[
        V02_META.into(),
        r#"{"type":"aoi:error","code":"RATE","category":"rate_limited","message":"slow down","retryable":true,"retry_after_ms":300}"#.into(),
        r#"{"type":"aoi:summary","ok":false,"count":3}"#.into(),
    ]);
    let out = verdict(&input, &[], 75, 75, &[]);
    assert!(
        out.stdout.contains("retryable after 300 ms"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_aoi_02_partial_run_is_accepted_with_accept_partial() {
    // The SDK 0.1's Emitter, run with node: ok:false, partial:true, and an
    // item error between two imported rows.
    let input = std::fs::read(fixture("streams/v0.2-sdk-partial.jsonl")).unwrap();
    verdict(&input, &[], 1, 1, &[]);
    verdict(&input, &["--accept-partial"], 0, 1, &[]);
}

#[test]
fn an_aoi_02_count_is_read_both_ways() {
    let meta_hits = |n: u64| {
        let mut ls = vec![V02_META.to_string()];
        ls.extend((0..n).map(|_| V02_HIT.to_string()));
        ls
    };
    let note = |out: &Out| {
        out.findings()
            .into_iter()
            .find(|f| f["rule"] == "version.legacy")
            .map(|f| f["message"].as_str().unwrap().to_string())
            .unwrap()
    };
    // Every line, meta and summary included (the SDK and machinemode code).
    let mut sdk = meta_hits(2);
    sdk.push(r#"{"type":"aoi:summary","ok":true,"count":4}"#.into());
    let out = verdict(&v02(&sdk), &[], 0, 0, &[]);
    assert!(
        note(&out).contains("every line of the run"),
        "{}",
        note(&out)
    );
    // The events between meta and summary (the public docs' examples).
    let docs = std::fs::read(fixture("streams/v0.2-docs-count-between.jsonl")).unwrap();
    let out = verdict(&docs, &[], 0, 0, &[]);
    assert!(
        note(&out).contains("between meta and summary"),
        "{}",
        note(&out)
    );
    // A summary of the emitters' shape (warning_count, error_count) counts
    // every line: two lost lines cannot pass as the docs' reading.
    let mut shaped = meta_hits(3);
    shaped.remove(1);
    shaped.remove(1);
    shaped.push(
        r#"{"type":"aoi:summary","ok":true,"count":1,"warning_count":0,"error_count":0}"#.into(),
    );
    verdict(&v02(&shaped), &[], 65, 0, &["summary.count-mismatch"]);
    // A hand-written one cannot be told apart: the note says what it may hide.
    let mut docs_cut = meta_hits(3);
    docs_cut.push(r#"{"type":"aoi:summary","ok":true,"count":5}"#.into());
    let out = verdict(&v02(&docs_cut), &[], 0, 0, &[]);
    assert!(note(&out).contains("2 lines are missing"), "{}", note(&out));
    // Neither: a line was lost, or the count is wrong.
    let mut cut = meta_hits(2);
    cut.push(r#"{"type":"aoi:summary","ok":true,"count":7}"#.into());
    verdict(&v02(&cut), &[], 65, 0, &["summary.count-mismatch"]);
    let mut over = meta_hits(5);
    over.push(r#"{"type":"aoi:summary","ok":true,"count":3}"#.into());
    verdict(&v02(&over), &[], 65, 0, &["summary.count-mismatch"]);
    // No count: a warning, never "count matches".
    let mut none = meta_hits(2);
    none.push(r#"{"type":"aoi:summary","ok":true}"#.into());
    let out = verdict(&v02(&none), &[], 0, 0, &["summary.count-missing"]);
    assert!(!out.stdout.contains("count matches"), "{}", out.stdout);
    verdict(
        &v02(&none),
        &["--strict"],
        65,
        0,
        &["summary.count-missing"],
    );
}

#[test]
fn reconcile_says_reconciled_only_of_a_pass() {
    let mut cut = vec![V02_META.to_string()];
    cut.extend((0..5).map(|_| V02_HIT.to_string()));
    cut.push(r#"{"type":"aoi:summary","ok":true,"count":8}"#.into());
    let no_summary = &cut[..4];
    let failed = lines(&[
        meta(),
        hit(1),
        summary(
            2,
            r#""ok":false,"reason":"failed","event_count":3,"count":1"#,
        ),
    ]);
    for (input, want) in [(v02(&cut), 65), (v02(no_summary), 65), (failed, 1)] {
        let out = run(&["reconcile"], &input);
        assert_eq!(out.code, want, "{}", out.stdout);
        assert!(!out.stdout.contains("RECONCILED"), "{}", out.stdout);
    }
    let good = lines(&good(3));
    let out = run(&["reconcile"], &good);
    assert!(out.stdout.contains("RECONCILED"), "{}", out.stdout);
}

#[test]
fn allowing_a_rule_never_supplies_a_summary() {
    let cut = lines(&[meta(), hit(1), hit(2)]);
    verdict(&cut, &["--allow", "summary.missing"], 65, 0, &[]);
    verdict(&cut, &["--unbounded"], 0, 0, &[]);
    // A summary line that was cut, invalid or elided is no summary.
    let mut torn = cut.clone();
    torn.extend_from_slice(summary(3, r#""ok":true,"event_count":4"#).as_bytes());
    let both = ["--allow", "line.unterminated", "--allow", "summary.missing"];
    verdict(&torn, &both, 65, 0, &[]);
    let mut broken = cut.clone();
    broken.extend_from_slice(b"{\"type\":\"aoi:summary\",\"ok\":true,,}\n");
    let both = ["--allow", "json.invalid", "--allow", "summary.missing"];
    verdict(&broken, &both, 65, 0, &[]);
    let mut elided = cut.clone();
    elided.extend_from_slice(b"[... 1 lines omitted ...]\n");
    let both = ["--allow", "line.elided", "--allow", "summary.missing"];
    verdict(&elided, &both, 65, 0, &[]);
    // The same in the other protocols.
    let af = b"{\"kind\":\"progress\",\"progress\":{\"n\":1}}\n";
    verdict(af, &["--allow", "afdata.terminal-missing"], 65, 0, &[]);
    verdict(af, &["--unbounded"], 0, 0, &[]);
    let nd = b"{\"type\":\"start\"}\n{\"type\":\"item\"}\n";
    let last = ["--protocol", "ndjson", "--first", "start", "--last", "end"];
    let mut allowed = last.to_vec();
    allowed.extend(["--allow", "ndjson.last-missing"]);
    verdict(nd, &allowed, 65, 0, &[]);
    verdict(nd, &["--protocol", "ndjson"], 0, 0, &[]);
}

#[test]
fn of_allow_and_deny_the_last_word_wins() {
    let input = lines(&[meta(), hit(1), summary(2, r#""ok":true"#)]); // event-count-missing (W)
    let r = "summary.event-count-missing";
    verdict(&input, &["--allow", r, "--deny", r], 65, 0, &[r]);
    let out = verdict(&input, &["--deny", r, "--allow", r], 0, 0, &[]);
    assert!(!out.has_rule(r), "{:?}", out.rules());
    // --strict makes warnings errors, but not one the user allowed.
    verdict(&input, &["--strict", "--allow", r], 0, 0, &[]);
}

#[test]
fn members_that_decide_must_not_appear_twice() {
    // AFDATA: jq and Python read the last error payload (do not retry).
    let af = br#"{"kind":"error","error":{"code":"X","message":"m","retryable":true,"retry_after_ms":5},"error":{"code":"X","message":"m","retryable":false}}
"#;
    verdict(af, &[], 65, 1, &["verdict.duplicate-key"]);
    let kind = br#"{"kind":"result","kind":"error","result":{},"error":{"code":"X","message":"m"}}
"#;
    verdict(kind, &[], 65, 1, &["verdict.duplicate-key"]);
    // ndjson: jq sees no end.
    let nd = b"{\"type\":\"start\"}\n{\"type\":\"end\",\"type\":\"item\"}\n";
    let args = ["--protocol", "ndjson", "--first", "start", "--last", "end"];
    verdict(nd, &args, 65, 0, &["verdict.duplicate-key"]);
    let nd = b"{\"kind\":\"start\"}\n{\"kind\":\"end\",\"kind\":\"item\"}\n";
    let mut args = args.to_vec();
    args.extend(["--type-field", "kind"]);
    verdict(nd, &args, 65, 0, &["verdict.duplicate-key"]);
}

/// A 1.x run failed by a forwarded error, with `caused_by` as given.
fn caused_by(fields: &str) -> Vec<u8> {
    lines(&[
        meta(),
        ev(
            1,
            "aoi:error",
            r#""origin":"up","category":"rate_limited","code":"RL","message":"m","retryable":true,"scope":"item""#,
        ),
        summary(
            2,
            &format!(
                r#""ok":false,"reason":"failed","event_count":3,"count":0,"partial":false,"caused_by":{{{fields}}}"#
            ),
        ),
    ])
}

#[test]
fn retry_fields_are_checked_wherever_they_are_read() {
    let base = r#""origin":"up","category":"rate_limited","code":"RL","retryable":true"#;
    for bad in ["-5", "1.5", "1e400", "\"5\"", "18446744073709551616"] {
        let input = caused_by(&format!("{base},\"retry_after_ms\":{bad}"));
        let out = verdict(&input, &[], 65, 1, &["error.retry-after-invalid"]);
        let said = out.findings().iter().any(|f| {
            f["message"]
                .as_str()
                .unwrap()
                .contains(&format!("retry_after_ms is {bad}"))
        });
        assert!(said, "{}", out.stdout);
    }
    let input =
        caused_by(r#""origin":"up","category":"rate_limited","code":"RL","retryable":"true""#);
    verdict(&input, &[], 65, 1, &["error.field-missing"]);
    let input = caused_by(r#""origin":"up","code":"RL","retryable":false,"retry_after_ms":5"#);
    verdict(&input, &[], 65, 1, &["error.retry-after-forbidden"]);
    let good = caused_by(&format!("{base},\"retry_after_ms\":7200"));
    let out = verdict(&good, &[], 75, 75, &[]);
    assert_eq!(out.summary()["caused_by"]["retry_after_ms"], 7200);
    // AFDATA's retry_after_s: an integer or number >= 0.
    let af = |s: &str| {
        format!(
            r#"{{"kind":"error","error":{{"code":"X","message":"m","retryable":true,"retry_after_s":{s}}}}}"#
        ) + "\n"
    };
    for bad in ["-60", "\"60\"", "1e400"] {
        verdict(
            af(bad).as_bytes(),
            &[],
            65,
            1,
            &["error.retry-after-invalid"],
        );
    }
    let out = verdict(af("1.5").as_bytes(), &[], 75, 75, &[]);
    assert_eq!(out.summary()["caused_by"]["retry_after_ms"], 1500);
}

#[test]
fn numbers_past_u64_are_quoted_as_written() {
    let big = "18446744073709551618";
    let input = lines(&[
        meta(),
        hit(1),
        summary(2, &format!(r#""ok":true,"event_count":3,"count":{big}"#)),
    ]);
    let out = verdict(&input, &[], 65, 0, &["summary.count-mismatch"]);
    assert!(out.stdout.contains(big), "{}", out.stdout);
    assert!(
        !out.stdout.contains("18446744073709551615"),
        "{}",
        out.stdout
    );
    let input = lines(&[
        meta(),
        summary(1, &format!(r#""ok":true,"event_count":{big}"#)),
    ]);
    let out = verdict(&input, &[], 65, 0, &["summary.event-count-mismatch"]);
    assert!(out.stdout.contains(big) && !out.stdout.contains("18446744073709551615"));
    // A retry hint aoitap cannot carry is a finding, never u64::MAX.
    let input = lines(&[
        meta(),
        ev(
            1,
            "aoi:error",
            &format!(
                r#""category":"rate_limited","code":"RL","message":"m","retryable":true,"retry_after_ms":{big}"#
            ),
        ),
        summary(
            2,
            r#""ok":false,"reason":"failed","event_count":3,"count":0"#,
        ),
    ]);
    let out = verdict(&input, &[], 65, 1, &["error.retry-after-invalid"]);
    assert!(
        !out.stdout.contains("18446744073709551615"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_pass_with_an_allowed_gap_is_not_called_complete() {
    let input = std::fs::read(fixture("streams/elided-with-marker.jsonl")).unwrap();
    let allow = [
        "--allow",
        "seq.gap",
        "--allow",
        "line.elided",
        "--allow",
        "summary.event-count-mismatch",
    ];
    let out = verify(&allow, &input);
    assert_eq!(out.code, 0);
    let run = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "run")
        .unwrap();
    let message = run["message"].as_str().unwrap();
    assert!(!message.contains("complete"), "{message}");
    assert!(message.contains("29 missing"), "{message}");
}

#[test]
fn allowing_a_finding_never_hides_a_failure_or_invents_a_summary() {
    // A process-scope error ended the run, whatever the summary says.
    let input = lines(&[
        meta(),
        ev(
            1,
            "aoi:error",
            r#""category":"io","code":"X","message":"m","retryable":false,"scope":"process""#,
        ),
        summary(2, r#""ok":true,"event_count":3,"count":0"#),
    ]);
    verdict(&input, &["--allow", "summary.ok-despite-error"], 1, 0, &[]);
    // Two types: jq and Python read the last, so this is no summary.
    let dup = lines(&[
        meta(),
        r#"{"type":"aoi:summary","type":"x","aoi":{"seq":1,"run":"R"},"ok":true,"event_count":2}"#
            .to_string(),
    ]);
    verdict(
        &dup,
        &["--allow", "envelope.duplicate-key"],
        65,
        0,
        &["summary.missing"],
    );
}

#[test]
fn a_retry_hint_in_seconds_past_u64_ms_is_a_finding() {
    let af = br#"{"kind":"error","error":{"code":"X","message":"m","retryable":true,"retry_after_s":18446744073709551}}
"#;
    let out = verdict(af, &[], 65, 1, &["error.retry-after-invalid"]);
    assert!(
        !out.stdout.contains("18446744073709551615"),
        "{}",
        out.stdout
    );
}
