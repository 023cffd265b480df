//! The streams that exist today (docs/contract.md §6.1): AOI 0.2 as the AOI TypeScript
//! SDK 0.1 writes it (`src/emit.ts`: compact JSON, `count` = events + 1),
//! AFDATA v1 event streams and typed NDJSON. Every stream command reaches
//! the same exit on each.

use crate::util::*;

/// What `Emitter.meta(...)` writes.
fn sdk_meta(command: &str) -> String {
    format!(
        r#"{{"type":"aoi:meta","tool":"docsearch","tool_version":"2.3.1","aoi_version":"0.2","schema_name":"com.example.docsearch.events","schema_version":"1.0.0","command":"{command}"}}"#
    )
}

fn sdk_hit(rank: u64) -> String {
    format!(r#"{{"type":"hit","rank":{rank},"id":"doc_{rank}"}}"#)
}

/// What `Emitter.summary(...)` writes after `lines_before` lines.
fn sdk_summary(ok: bool, lines_before: u64, errors: u64) -> String {
    format!(
        r#"{{"type":"aoi:summary","ok":{ok},"count":{},"warning_count":0,"error_count":{errors},"truncated":false,"elapsed_ms":1}}"#,
        lines_before + 1
    )
}

fn sdk_error(code: &str, category: &str, retryable: bool, extra: &str) -> String {
    format!(
        r#"{{"type":"aoi:error","code":"{code}","category":"{category}","message":"it failed","retryable":{retryable}{extra}}}"#
    )
}

fn search_ok() -> Vec<String> {
    vec![
        sdk_meta("search"),
        sdk_hit(1),
        sdk_hit(2),
        sdk_summary(true, 3, 0),
    ]
}

/// Every stream command's exit on `input` with `args`: one truth.
fn exits(args: &[&str], input: &[u8]) -> Vec<(&'static str, i32)> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("runs");
    STREAM_COMMANDS
        .into_iter()
        .map(|cmd| {
            let mut a = command_words(cmd, &d);
            a.push("-q");
            a.extend_from_slice(args);
            (cmd, run(&a, input).code)
        })
        .collect()
}

/// verify's exit is `want`, its findings hold `rules`, and every other
/// command agrees on the exit.
fn judged(input: &[u8], args: &[&str], want: i32, rules: &[&str]) -> Out {
    let out = verify(args, input);
    assert_eq!(
        out.code,
        want,
        "verify {args:?}: {:?}\n{}",
        out.rules(),
        String::from_utf8_lossy(input)
    );
    for r in rules {
        assert!(out.has_rule(r), "{r} missing from {:?}", out.rules());
    }
    for (cmd, code) in exits(args, input) {
        assert_eq!(code, want, "{cmd} {args:?} disagrees with verify");
    }
    out
}

#[test]
fn sdk_streams_get_their_verdicts() {
    // A successful search.
    let out = judged(&lines(&search_ok()), &[], 0, &["version.legacy"]);
    let run = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "run")
        .unwrap();
    assert_eq!(run["protocol"], "aoi-0.2");
    // A failed run: ok:false after a process error that is not retryable.
    let failed = [
        sdk_meta("search"),
        sdk_hit(1),
        sdk_error("BAD_QUERY", "validation", false, ""),
        sdk_summary(false, 3, 1),
    ];
    judged(&lines(&failed), &[], 1, &[]);
    // Rate limited: retryable, with its hint in the report.
    let limited = [
        sdk_meta("search"),
        sdk_hit(1),
        sdk_error(
            "RATE_LIMITED",
            "rate_limited",
            true,
            r#","retry_after_ms":7200"#,
        ),
        sdk_summary(false, 3, 1),
    ];
    let out = judged(&lines(&limited), &[], 75, &[]);
    let run = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "run")
        .unwrap();
    assert_eq!(run["retry_after_ms"], 7200);
    let human = run_human(&limited);
    assert!(human.contains("retryable after 7200 ms"), "{human}");
    // A doctor run with a failed check.
    let doctor = [
        sdk_meta("doctor"),
        r#"{"type":"aoi:check","name":"disk","ok":true,"severity":"info"}"#.to_string(),
        r#"{"type":"aoi:check","name":"network","ok":false,"severity":"error","detail":"unreachable"}"#.to_string(),
        sdk_summary(false, 3, 0),
    ];
    judged(&lines(&doctor), &[], 1, &[]);
}

fn run_human(stream: &[String]) -> String {
    run(&["verify"], &lines(stream)).stdout
}

#[test]
fn sdk_streams_that_were_cut() {
    let mut long = vec![sdk_meta("search")];
    long.extend((1..=8).map(sdk_hit));
    long.push(sdk_summary(true, 9, 0));
    // Killed by SIGKILL or SIGTERM: no summary.
    let killed = &long[..6];
    judged(&lines(killed), &[], 65, &["summary.missing"]);
    // `| head -3`.
    judged(&lines(&long[..3]), &[], 65, &["summary.missing"]);
    // Killed mid-line.
    let mut torn = lines(&long[..4]);
    torn.extend_from_slice(br#"{"type":"hit","ra"#);
    judged(&torn, &[], 65, &["line.unterminated", "summary.missing"]);
    // A line removed from the middle: counted, and the count says how many.
    let mut middle = long.clone();
    middle.remove(4);
    let out = judged(&lines(&middle), &[], 65, &["summary.count-mismatch"]);
    let f = out
        .findings()
        .into_iter()
        .find(|f| f["rule"] == "summary.count-mismatch")
        .unwrap();
    assert!(f["message"].as_str().unwrap().contains("1 missing"), "{f}");
    // `--unbounded` forgives the end, never the middle.
    judged(
        &lines(&middle),
        &["--unbounded"],
        65,
        &["summary.count-mismatch"],
    );
}

#[test]
fn sdk_runs_concatenated() {
    let failed = [
        sdk_meta("search"),
        sdk_error("BAD_QUERY", "validation", false, ""),
        sdk_summary(false, 2, 1),
    ];
    let mut both = search_ok();
    both.extend(failed.iter().cloned());
    // One stream, two runs: verify and strip-envelope read one run by
    // default (summarize, reconcile and split-by-run read many, docs/contract.md §3.2).
    let out = verify(&[], &lines(&both));
    assert_eq!(out.code, 65);
    assert!(out.has_rule("meta.duplicate"), "{:?}", out.rules());
    assert_eq!(run(&["strip-envelope", "-q"], &lines(&both)).code, 65);
    // As a log of runs: the verdict of the failed one.
    let out = judged(&lines(&both), &["--multi-run"], 1, &[]);
    let verdicts: Vec<_> = out
        .events()
        .into_iter()
        .filter(|e| e["type"] == "run")
        .map(|e| e["verdict"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(verdicts, ["pass", "failed"]);
}

#[test]
fn v0_2_under_protocol_aoi_is_not_read() {
    judged(
        &lines(&search_ok()),
        &["--protocol", "aoi"],
        65,
        &["version.aoi-unsupported"],
    );
    // A 1.x stream pinned as 0.2 is a mismatch.
    judged(
        &lines(&good(2)),
        &["--protocol", "aoi-0.2"],
        65,
        &["protocol.mismatch"],
    );
}

const PROGRESS: &str =
    r#"{"kind":"progress","progress":{"current":1,"total":2},"trace":{"duration_ms":40}}"#;
const RESULT: &str = r#"{"kind":"result","result":{"url":"https://x.example/b.tar","size_bytes":1024},"trace":{"duration_ms":95}}"#;

#[test]
fn afdata_verdicts() {
    let out = judged(&lines(&[PROGRESS, RESULT]), &[], 0, &[]);
    let run = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "run")
        .unwrap();
    assert_eq!(run["protocol"], "afdata");
    let error = r#"{"kind":"error","error":{"code":"invalid_input","message":"bad path","retryable":false},"trace":{}}"#;
    judged(&lines(&[PROGRESS, error]), &[], 1, &[]);
    let retry_s = r#"{"kind":"error","error":{"code":"quota","message":"quota exceeded","retryable":true,"retry_after_s":30},"trace":{}}"#;
    let out = judged(&lines(&[PROGRESS, retry_s]), &[], 75, &[]);
    let run = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "run")
        .unwrap();
    assert_eq!(run["retry_after_ms"], 30000);
    let retry_ms = r#"{"kind":"error","error":{"code":"quota","message":"m","retryable":true,"retry_after_ms":1500}}"#;
    let out = judged(&lines(&[retry_ms]), &[], 75, &[]);
    let run = out
        .events()
        .into_iter()
        .find(|e| e["type"] == "run")
        .unwrap();
    assert_eq!(run["retry_after_ms"], 1500);
    // No terminal: cut, unless the stream is unbounded.
    judged(&lines(&[PROGRESS]), &[], 65, &["afdata.terminal-missing"]);
    judged(&lines(&[PROGRESS]), &["--unbounded"], 0, &[]);
    // An event after the terminal.
    judged(
        &lines(&[PROGRESS, RESULT, PROGRESS]),
        &[],
        65,
        &["afdata.terminal-not-last"],
    );
    // An error without code.
    let no_code = r#"{"kind":"error","error":{"message":"m"},"trace":{}}"#;
    judged(
        &lines(&[PROGRESS, no_code]),
        &[],
        65,
        &["afdata.error-fields"],
    );
    // Two runs as a log: the line after a terminal opens the next.
    let out = judged(
        &lines(&[PROGRESS, RESULT, PROGRESS, error]),
        &["--multi-run"],
        1,
        &[],
    );
    let verdicts: Vec<_> = out
        .events()
        .into_iter()
        .filter(|e| e["type"] == "run")
        .map(|e| (e["first_line"].as_u64().unwrap(), e["verdict"].clone()))
        .collect();
    assert_eq!(verdicts, [(1, "pass".into()), (3, "failed".into())]);
}

#[test]
fn afdata_strip_writes_payloads_byte_for_byte() {
    let input = lines(&[PROGRESS, RESULT]);
    let out = run(&["strip-envelope"], &input);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        "{\"url\":\"https://x.example/b.tar\",\"size_bytes\":1024}\n"
    );
    let out = run(&["strip-envelope", "--type", "progress"], &input);
    assert_eq!(
        out.stdout,
        "{\"current\":1,\"total\":2}\n{\"url\":\"https://x.example/b.tar\",\"size_bytes\":1024}\n"
    );
}

#[test]
fn v0_2_strip_drops_framework_lines_only() {
    let out = run(&["strip-envelope"], &lines(&search_ok()));
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, format!("{}\n{}\n", sdk_hit(1), sdk_hit(2)));
}

#[test]
fn runs_without_ids_split_at_their_opening_event() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("runs");
    let mut input = search_ok();
    input.extend(search_ok());
    let out = run(
        &["split-by-run", "--dir", d.to_str().unwrap()],
        &lines(&input),
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    let first = std::fs::read_to_string(d.join("run-from-line-1.jsonl")).unwrap();
    let second = std::fs::read_to_string(d.join("run-from-line-5.jsonl")).unwrap();
    assert_eq!(first, String::from_utf8(lines(&search_ok())).unwrap());
    assert_eq!(second, first);
    // AFDATA runs, one per terminal event.
    let d2 = dir.path().join("af");
    let out = run(
        &["split-by-run", "--dir", d2.to_str().unwrap()],
        &lines(&[PROGRESS, RESULT, RESULT]),
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(d2.join("run-from-line-3.jsonl").exists());
}

#[test]
fn ndjson_runs() {
    let daemon = [
        r#"{"type":"daemon.started","intervalMinutes":60}"#,
        r#"{"type":"daemon.cycle.started","reason":"startup"}"#,
        r#"{"type":"daemon.stopped"}"#,
    ];
    let bounds = [
        "--protocol",
        "ndjson",
        "--first",
        "daemon.started",
        "--last",
        "daemon.stopped",
    ];
    judged(&lines(&daemon), &["--protocol", "ndjson"], 0, &[]);
    judged(&lines(&daemon), &bounds, 0, &[]);
    judged(&lines(&daemon[..2]), &bounds, 65, &["ndjson.last-missing"]);
    judged(&lines(&daemon[1..]), &bounds, 65, &["ndjson.first-wrong"]);
    // Never guessed: the same lines read as AOI 1.x are not conforming.
    assert_eq!(verify(&[], &lines(&daemon)).code, 65);
    // `--type-field` names the discriminator.
    let kinds = [r#"{"event":"a"}"#, r#"{"event":"b"}"#];
    judged(
        &lines(&kinds),
        &["--protocol", "ndjson", "--type-field", "event"],
        0,
        &[],
    );
    // --first and --last describe ndjson only.
    assert_eq!(run(&["verify", "--first", "a"], b"").code, 64);
}

#[test]
fn summarize_names_the_protocol_and_counts_by_its_discriminator() {
    let out = run(
        &["summarize", "--output", "json"],
        &lines(&[PROGRESS, PROGRESS, RESULT]),
    );
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let r = &doc["runs"][0];
    assert_eq!(r["protocol"], "afdata");
    assert_eq!(
        r["domain_types"],
        serde_json::json!({"progress": 2, "result": 1})
    );
    assert_eq!(r["outcome"]["ok"], true);
    let out = run(&["summarize"], &lines(&search_ok()));
    assert!(out.stdout.contains("protocol   aoi-0.2"), "{}", out.stdout);
    let caps: serde_json::Value =
        serde_json::from_str(&run(&["capabilities"], b"").stdout).unwrap();
    assert_eq!(
        caps["commands"][0]["input_protocols"],
        serde_json::json!(["aoi", "aoi-0.2", "afdata", "ndjson", "aiocs", "jsonl"])
    );
    // OKF's error envelope is a command's stderr: run's alone.
    let run_cmd = caps["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "run")
        .unwrap();
    assert_eq!(
        run_cmd["input_protocols"],
        serde_json::json!([
            "aoi", "aoi-0.2", "afdata", "ndjson", "aiocs", "okf", "jsonl"
        ])
    );
}

/// aoitap's own report on every protocol passes its own verify.
#[test]
fn own_output_passes_verify_in_every_protocol() {
    let inputs: Vec<(Vec<u8>, Vec<&str>)> = vec![
        (lines(&search_ok()), vec![]),
        (lines(&[PROGRESS, RESULT]), vec![]),
        (lines(&[PROGRESS]), vec![]),
        (
            lines(&[r#"{"type":"a"}"#, r#"{"x":1}"#]),
            vec!["--protocol", "ndjson"],
        ),
        (
            b"{\n  \"ok\": false,\n  \"command\": \"show\"\n}\n".to_vec(),
            vec![],
        ),
    ];
    for (input, args) in inputs {
        for cmd in ["verify", "summarize", "reconcile"] {
            let mut a = vec![cmd, "--output", "jsonl"];
            a.extend(&args);
            let first = run(&a, &input);
            let again = verify(&[], first.stdout.as_bytes());
            assert!(
                again.findings().is_empty(),
                "{cmd} {args:?}: {:?}\n{}",
                again.rules(),
                first.stdout
            );
        }
    }
}

/// An AFDATA result whose payload is `payload`, with a trace.
fn af_result(payload: &str) -> Vec<u8> {
    lines(&[format!(
        r#"{{"kind":"result","result":{payload},"trace":{{}}}}"#
    )])
}

/// AFDATA Part 1 (docs/contract.md §6.2): each bad suffix value is
/// afdata.suffix-type (65), its well-typed version passes, null too.
#[test]
fn afdata_suffixes_are_typed() {
    let cases = [
        (r#""latency_ms":"142""#, r#""latency_ms":142"#),
        (r#""file_size_bytes":-1"#, r#""file_size_bytes":5242880"#),
        (
            r#""expires_rfc3339":"2026-02-14T10:30:00""#,
            r#""expires_rfc3339":"2026-02-14T10:30:00Z""#,
        ),
        (r#""language_bcp47":"zh_CN""#, r#""language_bcp47":"zh-CN""#),
        (
            r#""created_epoch_ns":1707868800000000000"#,
            r#""created_epoch_ns":"1707868800000000000""#,
        ),
        (r#""price_usd_cents":9.99"#, r#""price_usd_cents":999"#),
        (
            r#""timezone_utc_offset":"Asia/Shanghai""#,
            r#""timezone_utc_offset":"+08:00""#,
        ),
        (
            r#""due_rfc3339_date":"2026-6-13""#,
            r#""due_rfc3339_date":"2026-06-13""#,
        ),
        (
            r#""open_rfc3339_time":"09:30:00Z""#,
            r#""open_rfc3339_time":"09:30:00""#,
        ),
    ];
    for (bad, good) in cases {
        let key = bad.split('"').nth(1).unwrap();
        let out = judged(
            &af_result(&format!("{{{bad}}}")),
            &[],
            65,
            &["afdata.suffix-type"],
        );
        let f = &out.findings()[0];
        let msg = f["message"].as_str().unwrap();
        assert!(msg.contains(&format!("result.{key}")), "{msg}");
        judged(&af_result(&format!("{{{good}}}")), &[], 0, &[]);
        judged(&af_result(&format!(r#"{{"{key}":null}}"#)), &[], 0, &[]);
    }
}

/// `--names afdata` holds any protocol's events to the suffixes; without
/// it an AOI 1.0 stream's names are its own business.
#[test]
fn names_afdata_on_an_aoi_stream() {
    let input = lines(&[
        meta(),
        ev(1, "hit", r#""latency_ms":"slow""#),
        ok_summary(2, 1),
    ]);
    judged(&input, &["--names", "afdata"], 65, &["afdata.suffix-type"]);
    judged(&input, &[], 0, &[]);
}

/// A secret-looking value is never quoted in a suffix finding.
#[test]
fn suffix_findings_quote_no_secret() {
    let out = judged(
        &af_result(r#"{"wait_ms":"password=hunter2"}"#),
        &[],
        65,
        &["afdata.suffix-type"],
    );
    assert!(!out.stdout.contains("hunter2"), "{}", out.stdout);
    // A secret-named subtree is secret.*'s: not looked into.
    judged(&af_result(r#"{"creds_secret":"***"}"#), &[], 0, &[]);
}

/// AFDATA's strict profile: no trace passes (a warning), 65 under
/// --strict; an error without retryable is 1, and 65 under --strict.
#[test]
fn afdata_strict_profile() {
    let untraced = lines(&[r#"{"kind":"result","result":{}}"#]);
    judged(&untraced, &[], 0, &["afdata.trace-missing"]);
    judged(&untraced, &["--strict"], 65, &["afdata.trace-missing"]);
    let error = lines(&[r#"{"kind":"error","error":{"code":"x","message":"m"},"trace":{}}"#]);
    judged(&error, &[], 1, &["afdata.retryable-missing"]);
    judged(&error, &["--strict"], 65, &["afdata.retryable-missing"]);
}

/// The aiocs one-shot envelope (docs/contract.md §6.2): one document, compact or
/// pretty-printed, `ok` and `command`; every command reaches verify's exit.
#[test]
fn aiocs_envelopes_get_their_verdicts() {
    let ok = r#"{"ok":true,"command":"search","data":{"results":[]}}"#;
    let pretty = "{\n  \"ok\": true,\n  \"command\": \"search\",\n  \"data\": {\n    \"results\": []\n  }\n}\n";
    let failed = r#"{"ok":false,"command":"show","error":{"code":"CHUNK_NOT_FOUND","message":"Chunk 42 not found"}}"#;
    for args in [&[][..], &["--protocol", "aiocs"]] {
        judged(&lines(&[ok]), args, 0, &[]);
        judged(pretty.as_bytes(), args, 0, &[]);
        judged(&lines(&[failed]), args, 1, &[]);
        judged(
            &lines(&[r#"{"ok":false,"command":"show","error":{"message":"m"}}"#]),
            args,
            65,
            &["aiocs.error-fields"],
        );
        judged(
            &lines(&[r#"{"ok":true,"command":"search"}"#]),
            args,
            65,
            &["aiocs.data-missing"],
        );
        judged(&lines(&[ok, ok]), args, 65, &["aiocs.document-extra"]);
        judged(
            b"{\n  \"ok\": true,\n  \"command\": \"search\",\n  \"data\": {\n",
            args,
            65,
            &["aiocs.document-cut"],
        );
    }
    // Not a boolean: no envelope to detect, so 65 either way.
    let yes = r#"{"ok":"yes","command":"search","data":{}}"#;
    judged(&lines(&[yes]), &[], 65, &[]);
    judged(
        &lines(&[yes]),
        &["--protocol", "aiocs"],
        65,
        &["aiocs.envelope-invalid"],
    );
    let out = verify(&["--protocol", "aiocs"], &lines(&[yes]));
    assert!(!out.has_rule("protocol.mismatch"), "{:?}", out.rules());
    // A pretty-printed document's findings name the line it opened on.
    let cut_error = "\n{\n  \"ok\": false,\n  \"command\": \"show\"\n}\n";
    let out = verify(&["--protocol", "aiocs"], cut_error.as_bytes());
    assert_eq!(out.code, 65, "{:?}", out.rules());
    let f = out
        .events()
        .into_iter()
        .find(|e| e["rule"] == "aiocs.error-fields")
        .unwrap();
    assert_eq!(f["line_number"], 2, "{f}");
    // Under auto, only a first line `{` alone opens a document: a cut
    // NDJSON line later swallows nothing.
    let out = verify(
        &[],
        b"{\"ok\":true,\"command\":\"a\",\"data\":{}}\n{\"ok\":\n\"x\"\n",
    );
    assert!(out.has_rule("json.invalid"), "{:?}", out.rules());
}

/// summarize shows an envelope's command and outcome, pretty-printed too.
#[test]
fn summarize_shows_the_aiocs_command_and_outcome() {
    let pretty = "{\n  \"ok\": false,\n  \"command\": \"show\",\n  \"error\": {\"code\": \"CHUNK_NOT_FOUND\", \"message\": \"no\"}\n}\n";
    let out = run(&["summarize", "--output", "json"], pretty.as_bytes());
    assert_eq!(out.code, 1, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let r = &v["runs"][0];
    assert_eq!(r["command"], "show", "{v}");
    assert_eq!(r["protocol"], "aiocs", "{v}");
    assert_eq!(r["verdict"], "failed", "{v}");
    let human = run(&["summarize"], pretty.as_bytes());
    assert!(human.stdout.contains("not ok"), "{}", human.stdout);
    assert!(human.stdout.contains("CHUNK_NOT_FOUND"), "{}", human.stdout);
    let ok = run(
        &["summarize"],
        b"{\"ok\":true,\"command\":\"search\",\"data\":{}}\n",
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stdout.contains("search"), "{}", ok.stdout);
}
