//! `aoitap upgrade` and `run --upgrade` (docs/contract.md §1.6): every
//! stream aoitap reads, written out as one conforming AOI 1.0 stream that
//! keeps the upstream's verdict, its retry fields and its events' bytes,
//! and in which a cut made downstream is found.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{bin, fixture, installed, peer, raw, run};

/// A stream to upgrade: its name, its bytes, the flags that read it.
struct Case {
    name: String,
    bytes: Vec<u8>,
    args: Vec<&'static str>,
}

const AIOCS_OK: &str = r#"{"ok":true,"command":"refresh","data":{"refreshed":["a","b"],"failed":[]}}
"#;
const AIOCS_PRETTY_FAILED: &str = "{\n  \"ok\": false,\n  \"command\": \"refresh\",\n  \"error\": {\"code\": \"rate_limit\", \"message\": \"slow down\", \"retryable\": true}\n}\n";
const PLAIN: &str = r#"{"path":"a.txt","size":3}
{"type":"hit","id":"x"}
  { "path" : "b.txt" , "size" : 4 }  
{}
"#;
const V02_RETRYABLE: &str = r#"{"type":"aoi:meta","tool":"fetcher","tool_version":"0.1.0","aoi_version":"0.2","schema_name":"com.example.fetcher.events","schema_version":"1.0.0","command":"get"}
{"type":"page","n":1}
{"type":"aoi:error","code":"UPSTREAM_BUSY","category":"temporary","message":"try later","retryable":true,"retry_after_ms":1500}
{"type":"aoi:summary","ok":false,"reason":"failed","count":4,"warning_count":0,"error_count":1,"truncated":false}
"#;

/// The shared sample streams (with the flags their expected verdict was
/// given with) and a fixture of every protocol aoitap reads.
fn cases() -> Vec<Case> {
    let read = |name: &str| std::fs::read(fixture(name)).unwrap();
    let mut cases = vec![];
    let table = String::from_utf8(read("streams/expected.tsv")).unwrap();
    for row in table.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = row.split('\t').collect();
        let args: Vec<&'static str> = cols[1]
            .split_whitespace()
            .map(|a| &*Box::leak(a.to_string().into_boxed_str()))
            .collect();
        // Judged as 0.2 under --protocol aoi, it is a stream aoitap does
        // not read as AOI at all: not one to upgrade.
        if args.contains(&"aoi") {
            continue;
        }
        cases.push(Case {
            name: format!("{} {}", cols[0], cols[1]),
            bytes: read(&format!("streams/{}", cols[0])),
            args,
        });
    }
    for f in [
        "streams/v0.2-machinemode-ls-warning.jsonl",
        "streams/v0.2-sdk-partial.jsonl",
        "streams/v0.2-docs-count-between.jsonl",
        "lint/sdk-ts-0.2.jsonl",
    ] {
        cases.push(Case {
            name: f.to_string(),
            bytes: read(f),
            args: vec![],
        });
    }
    for (name, text, args) in [
        ("aiocs compact", AIOCS_OK, vec![]),
        ("aiocs pretty-printed", AIOCS_PRETTY_FAILED, vec![]),
        ("plain JSON lines", PLAIN, vec!["--protocol", "jsonl"]),
        ("0.2 retryable", V02_RETRYABLE, vec![]),
    ] {
        cases.push(Case {
            name: name.to_string(),
            bytes: text.as_bytes().to_vec(),
            args,
        });
    }
    cases
}

fn upgrade(c: &Case) -> (i32, String) {
    let mut args = vec!["upgrade"];
    args.extend(&c.args);
    let (code, out, err) = raw(&args, &c.bytes);
    assert!(
        !err.contains("panicked"),
        "{}: upgrade panicked: {err}",
        c.name
    );
    (code, String::from_utf8(out).expect("upgrade writes UTF-8"))
}

/// verify's exit status for `stream`, and its jsonl report.
fn verify(stream: &[u8], multi_run: bool) -> (i32, Vec<Value>) {
    let mut args = vec!["verify", "--output", "jsonl"];
    if multi_run {
        args.push("--multi-run");
    }
    let out = run(&args, stream);
    (out.code, out.events())
}

fn multi(c: &Case) -> bool {
    c.args.contains(&"--multi-run")
}

#[test]
fn every_stream_upgrades_to_a_conforming_stream_with_its_verdict() {
    let schema: Value = serde_json::from_str(&run(&["schema"], b"").stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for c in cases() {
        let mut args = vec!["verify"];
        args.extend(&c.args);
        let upstream = run(&args, &c.bytes).code;
        let (code, out) = upgrade(&c);
        assert_eq!(
            code, upstream,
            "{}: upgrade exits with the upstream's verdict",
            c.name
        );
        let (downstream, report) = verify(out.as_bytes(), multi(&c));
        let errors: Vec<&Value> = report
            .iter()
            .filter(|e| e["type"] == "finding" && e["severity"] == "error")
            .collect();
        assert!(
            errors.is_empty(),
            "{}: the upgraded stream conforms: {errors:?}\n{out}",
            c.name
        );
        let events: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for e in &events {
            let wrong: Vec<String> = validator.iter_errors(e).map(|x| x.to_string()).collect();
            assert!(
                wrong.is_empty(),
                "{}: {e} against aoitap schema: {wrong:?}",
                c.name
            );
        }
        let summaries: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "aoi:summary")
            .collect();
        let ok = summaries.iter().all(|s| s["ok"] == true);
        match upstream {
            0 | 1 | 75 => assert_eq!(
                downstream, upstream,
                "{}: verify of the upgraded stream\n{out}",
                c.name
            ),
            65 => {
                assert_eq!(
                    downstream, 1,
                    "{}: a conforming stream that failed\n{out}",
                    c.name
                );
                assert!(!ok, "{}: ok:false", c.name);
                let before = &events[events.len() - 2];
                assert_eq!(
                    before["type"], "aoi:error",
                    "{}: aoitap's error before the summary",
                    c.name
                );
                assert!(
                    ["io", "validation"].contains(&before["category"].as_str().unwrap()),
                    "{}: {before}",
                    c.name
                );
            }
            n => panic!("{}: unexpected upstream verdict {n}", c.name),
        }
        assert_eq!(
            ok,
            upstream == 0,
            "{}: ok is the upstream's verdict",
            c.name
        );
        // Counts that add up: domain events written and read, forwarded
        // errors and warnings among the lines.
        if !multi(&c) {
            let s = summaries[0];
            let of = |t: &str| events.iter().filter(|e| e["type"] == t).count() as u64;
            let domain = events
                .iter()
                .filter(|e| !e["type"].as_str().unwrap().starts_with("aoi:"))
                .count() as u64;
            assert_eq!(s["count"], domain, "{}", c.name);
            assert_eq!(s["input_count"], domain, "{}: nothing dropped", c.name);
            assert_eq!(s["error_count"], of("aoi:error"), "{}", c.name);
            assert_eq!(s["warning_count"], of("aoi:warning"), "{}", c.name);
        }
    }
}

/// The upgraded stream's lines, one dropped.
fn without(out: &str, k: usize) -> Vec<u8> {
    let mut kept: Vec<&str> = out.lines().collect();
    kept.remove(k);
    kept.iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

#[test]
fn a_cut_made_after_upgrade_is_found_in_every_protocol() {
    for c in cases().into_iter().filter(|c| !multi(c)) {
        let (_, out) = upgrade(&c);
        let n = out.lines().count();
        assert!(n >= 2, "{}", c.name);
        // The middle: a line between the meta and the summary when there
        // is one, else the meta itself (the head cut).
        let (middle_code, middle) = verify(&without(&out, n / 2), false);
        let rules: Vec<&str> = middle.iter().filter_map(|e| e["rule"].as_str()).collect();
        assert_eq!(
            middle_code, 65,
            "{}: a line dropped is found: {rules:?}",
            c.name
        );
        if n >= 3 {
            assert!(rules.contains(&"seq.gap"), "{}: {rules:?}", c.name);
        }
        let (end_code, end) = verify(&without(&out, n - 1), false);
        let rules: Vec<&str> = end.iter().filter_map(|e| e["rule"].as_str()).collect();
        assert_eq!(end_code, 65, "{}", c.name);
        assert!(rules.contains(&"summary.missing"), "{}: {rules:?}", c.name);
    }
}

#[test]
fn retry_fields_survive_the_upgrade() {
    let afdata = std::fs::read(fixture("streams/afdata-retryable-error.jsonl")).unwrap();
    let aoi = std::fs::read(fixture("streams/retryable-failure.jsonl")).unwrap();
    for (name, bytes, ms) in [
        ("AFDATA retry_after_s 30", afdata, 30_000),
        ("AOI 1.0", aoi, 4_500),
        ("AOI 0.2", V02_RETRYABLE.as_bytes().to_vec(), 1_500),
    ] {
        let (code, out, _) = raw(&["upgrade"], &bytes);
        assert_eq!(code, 75, "{name}");
        let out = String::from_utf8(out).unwrap();
        let summary: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        let cause = &summary["caused_by"];
        assert_eq!(cause["retryable"], true, "{name}: {summary}");
        assert_eq!(cause["retry_after_ms"], ms, "{name}: {summary}");
        let (downstream, report) = verify(out.as_bytes(), false);
        assert_eq!(downstream, 75, "{name}");
        let run = report.iter().find(|e| e["type"] == "run").unwrap();
        assert_eq!(
            run["retry_after_ms"], ms,
            "{name}: the same hint downstream"
        );
    }
}

/// `{"aoi":{...}}` of aoitap's envelope, and the comma beside it, out of
/// an upgraded line.
fn without_envelope(line: &str) -> String {
    let at = line.find(r#""aoi":{"seq":"#).expect("aoitap's envelope");
    let end = at + line[at..].find('}').unwrap() + 1;
    let (before, after) = (&line[..at], &line[end..]);
    match (before.strip_suffix(','), after.strip_prefix(',')) {
        (_, Some(after)) => format!("{before}{after}"),
        (Some(before), None) => format!("{before}{after}"),
        (None, None) => format!("{before}{after}"),
    }
}

/// `line` without its first member named `key` (and a comma beside it),
/// the rest as it is: what `strip-envelope` cuts, done by hand.
fn without_member(line: &str, key: &str) -> String {
    let v: Value = serde_json::from_str(line).unwrap();
    if v.get(key).is_none() {
        return line.to_string();
    }
    let name = format!("\"{key}\":");
    let at = line
        .find(&name)
        .unwrap_or_else(|| panic!("{key} written compactly in {line}"));
    // The value's extent, as a JSON reader finds it: its own bytes,
    // whatever the order of its members.
    let value = &line[at + name.len()..];
    let mut values = serde_json::Deserializer::from_str(value).into_iter::<Value>();
    values.next().unwrap().unwrap();
    let end = at + name.len() + values.byte_offset();
    let (before, after) = (&line[..at], &line[end..]);
    match after.strip_prefix(',') {
        Some(after) => format!("{before}{after}"),
        None => format!("{}{after}", before.strip_suffix(',').unwrap_or(before)),
    }
}

#[test]
fn forwarded_domain_events_keep_their_bytes() {
    let mut compared = 0;
    for c in cases().into_iter().filter(|c| !multi(c)) {
        let (_, out) = upgrade(&c);
        let text = String::from_utf8(c.bytes.clone()).unwrap();
        let upstream: Vec<&str> = text
            .lines()
            // What is around a line's object is the line's, not the event's.
            .map(|l| l.trim())
            .filter(|l| l.starts_with('{') && serde_json::from_str::<Value>(l).is_ok())
            .collect();
        for line in out.lines() {
            let ev: Value = serde_json::from_str(line).unwrap();
            let ty = ev["type"].as_str().unwrap();
            if ty.starts_with("aoi:") || ty == "record" && ev.get("record").is_some() {
                continue;
            }
            let ours = without_envelope(line);
            // The upstream line it came from, its own envelope removed:
            // 1.x's `aoi`, AFDATA's `kind` (which is now `type`, in its
            // place), aiocs' `ok`; a type added where there was none.
            let found = upstream.iter().any(|up| {
                let plain = without_member(&without_member(up, "aoi"), "ok");
                let renamed = up.replacen(r#""kind":"#, r#""type":"#, 1);
                [plain.clone(), renamed].contains(&ours) || without_member(&ours, "type") == plain
            });
            assert!(found, "{}: {line} keeps an upstream line's bytes", c.name);
            compared += 1;
        }
    }
    assert!(compared > 60, "{compared} events compared");
}

#[test]
fn the_sdk_consume_reads_every_upgraded_stream() {
    if !peer(installed("node"), "node") {
        return;
    }
    for c in cases() {
        let (_, out) = upgrade(&c);
        let mut node = Command::new("node")
            .arg(fixture("sdk/read.cjs"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs the SDK's consume()");
        use std::io::Write;
        node.stdin
            .take()
            .unwrap()
            .write_all(out.as_bytes())
            .unwrap();
        let done = node.wait_with_output().unwrap();
        assert!(
            done.status.success(),
            "{}: consume() rejected: {}",
            c.name,
            String::from_utf8_lossy(&done.stderr)
        );
        let said: Value = serde_json::from_slice(&done.stdout).unwrap();
        assert_eq!(
            said["events"],
            out.lines().count(),
            "{}: every line dispatched",
            c.name
        );
    }
}

#[test]
fn multi_run_input_becomes_one_run_of_aoitaps_per_upstream_run() {
    let bytes = std::fs::read(fixture("streams/interleaved-two-runs.jsonl")).unwrap();
    let (code, out, _) = raw(&["upgrade", "--multi-run"], &bytes);
    assert_eq!(code, 0);
    let out = String::from_utf8(out).unwrap();
    let events: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let metas = events.iter().filter(|e| e["type"] == "aoi:meta").count();
    let summaries = events.iter().filter(|e| e["type"] == "aoi:summary").count();
    assert_eq!((metas, summaries), (2, 2), "{out}");
    let runs: std::collections::BTreeSet<&str> = events
        .iter()
        .map(|e| e["aoi"]["run"].as_str().unwrap())
        .collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(verify(out.as_bytes(), true).0, 0);
}

/// Past the open-run cap (32,768, docs/contract.md §3.2) the run opened
/// longest ago is judged as it stands, and aoitap's run for it ends before
/// the line that passed the cap opens another: aoitap's stream never has
/// more runs open than its own `verify` keeps, so it passes that verify
/// with the upstream's verdict (65 becomes 1), under `upgrade` and `run
/// --upgrade` alike. Before, the new run opened first, and verify cut the
/// oldest of aoitap's runs apart (65).
#[test]
fn past_the_open_run_cap_aoitaps_stream_still_passes_its_own_verify() {
    const RUNS: usize = 32_768 + 64;
    let mut input = String::new();
    for i in 0..RUNS {
        input += &format!("{{\"type\":\"aoi:meta\",\"aoi\":{{\"seq\":0,\"run\":\"r{i}\"}}}}\n");
    }
    for i in 0..RUNS {
        input += &format!(
            "{{\"type\":\"aoi:summary\",\"aoi\":{{\"seq\":1,\"run\":\"r{i}\"}},\"ok\":true}}\n"
        );
    }
    let (code, out, _) = raw(&["upgrade", "--multi-run"], input.as_bytes());
    assert_eq!(
        code, 65,
        "the oldest runs were judged without their summaries"
    );
    let findings = |report: &[Value]| -> Vec<String> {
        report
            .iter()
            .filter(|e| e["type"] == "finding")
            .take(3)
            .map(Value::to_string)
            .collect()
    };
    let (verified, report) = verify(&out, true);
    assert_eq!(verified, 1, "{:?}", findings(&report));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.jsonl");
    std::fs::write(&path, &input).unwrap();
    let script = format!("cat '{}'", path.display());
    let (code, out) = run_upgrade(&["--multi-run", "-q"], &script);
    assert_eq!(code, 65);
    let (verified, report) = verify(out.as_bytes(), true);
    assert_eq!(verified, 1, "{:?}", findings(&report));
}

#[test]
fn an_upgraded_stream_upgrades_to_the_same_verdict() {
    for c in cases().into_iter().filter(|c| !multi(c)) {
        let (first, out) = upgrade(&c);
        let (again, twice, _) = raw(&["upgrade"], out.as_bytes());
        let expected = if first == 65 { 1 } else { first };
        assert_eq!(again, expected, "{}", c.name);
        assert_eq!(verify(&twice, false).0, expected, "{}", c.name);
    }
}

#[test]
fn a_file_that_cannot_be_read_still_gives_a_whole_stream() {
    let out = run(&["upgrade", "/nonexistent/stream.jsonl"], b"");
    assert_eq!(out.code, 66);
    let events = out.events();
    assert_eq!(events[0]["type"], "aoi:meta");
    assert_eq!(out.summary()["ok"], false);
    assert_eq!(verify(out.stdout.as_bytes(), false).0, 1);
    let usage = run(&["upgrade", "a.jsonl", "b.jsonl"], b"");
    assert_eq!(usage.code, 64);
    assert_eq!(usage.events()[1]["category"], "usage", "{}", usage.stdout);
}

/// `aoitap run --upgrade` over a shell command.
fn run_upgrade(extra: &[&str], script: &str) -> (i32, String) {
    let mut args = vec!["run", "--upgrade"];
    args.extend(extra);
    args.extend(["--", "sh", "-c", script]);
    let (code, out, _) = raw(&args, b"");
    (code, String::from_utf8(out).unwrap())
}

#[test]
fn run_upgrade_judges_a_plain_tool_by_its_exit_status() {
    let lines = r#"printf '{"path":"a"}\n{"path":"b"}\n'"#;
    let (ok, out) = run_upgrade(&["--protocol", "jsonl"], lines);
    assert_eq!(ok, 0, "{out}");
    assert_eq!(verify(out.as_bytes(), false).0, 0);
    let (failed, out) = run_upgrade(&["--protocol", "jsonl"], &format!("{lines}; exit 3"));
    assert_eq!(failed, 1, "{out}");
    let summary: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(summary["ok"], false);
    assert_eq!(summary["count"], 2);
    assert_eq!(verify(out.as_bytes(), false).0, 1);
    let (timed_out, out) = run_upgrade(
        &["--protocol", "jsonl", "--timeout", "1s"],
        &format!("{lines}; sleep 30"),
    );
    assert_eq!(timed_out, 75, "{out}");
    assert_eq!(verify(out.as_bytes(), false).0, 75, "{out}");
}

#[test]
fn run_upgrade_with_retries_writes_the_final_attempt_alone() {
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("tried");
    let script = format!(
        r#"if [ -e {f} ]; then printf '{{"kind":"result","result":{{"n":1}}}}\n'; else touch {f}; printf '{{"kind":"error","error":{{"code":"busy","message":"busy","retryable":true,"retry_after_ms":1}}}}\n'; exit 75; fi"#,
        f = flag.display()
    );
    let (code, out) = run_upgrade(&["--retries", "2", "--backoff", "1ms"], &script);
    assert_eq!(code, 0, "{out}");
    let metas = out
        .lines()
        .filter(|l| l.contains(r#""type":"aoi:meta""#))
        .count();
    assert_eq!(metas, 1, "one stream, the final attempt's:\n{out}");
    assert_eq!(verify(out.as_bytes(), false).0, 0, "{out}");
}

#[test]
fn lint_passes_upgrade_on_check_16_and_every_check_it_claims() {
    // Reading stdin, and reading a FILE (where `--limit` was once claimed
    // though it bounds only the findings: check 11 failed).
    let file = fixture("streams/ok-complete.jsonl");
    for operand in [None, Some(&file)] {
        lint_upgrade(operand);
    }
}

fn lint_upgrade(operand: Option<&std::path::PathBuf>) {
    let out = Command::new(bin())
        .args(["lint", "--output", "jsonl", "--"])
        .arg(bin())
        .arg("upgrade")
        .args(operand)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let checks: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "aoi:check")
        .collect();
    let failed: Vec<&Value> = checks
        .iter()
        .filter(|c| c["properties"]["result"] == "fail")
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    // Check 16 feeds a stream on stdin: decided when upgrade reads it.
    let transformer = checks
        .iter()
        .find(|c| c["properties"]["check"] == 16)
        .expect("check 16 made");
    let expected = if operand.is_none() {
        "pass"
    } else {
        "inconclusive"
    };
    assert_eq!(
        transformer["properties"]["result"], expected,
        "{transformer}"
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
}

/// What broke the promise once (an attacker's findings): an upstream
/// whose lines would have made the upgraded stream non-conforming or
/// another verdict. Each still upgrades to a stream that conforms, passes
/// aoitap's schema, and gives the upstream's verdict downstream.
#[test]
fn hostile_upstreams_still_give_a_conforming_stream_with_their_verdict() {
    let meta = r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"}}"#;
    let summary = |n: u32, ok: &str, rest: &str| {
        format!(
            r#"{{"type":"aoi:summary","aoi":{{"seq":{},"run":"R"}},"ok":{ok},"event_count":{},"count":0{rest}}}"#,
            n - 1,
            n
        )
    };
    let aoi = |lines: &[&str]| -> Vec<u8> {
        let mut s = String::new();
        for l in lines {
            s.push_str(l);
            s.push('\n');
        }
        s.into_bytes()
    };
    let failed = summary(3, "false", r#","reason":"failed","error_count":1"#);
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        // An `aoi` member of the upstream's own, beside aoitap's envelope.
        (
            "aoi member, jsonl",
            b"{\"x\":1,\"aoi\":{\"seq\":7,\"run\":\"Z\"}}\n".to_vec(),
            vec!["--protocol", "jsonl"],
        ),
        (
            "aoi member, afdata",
            b"{\"kind\":\"result\",\"result\":{\"a\":1},\"aoi\":1}\n".to_vec(),
            vec![],
        ),
        (
            "escaped aoi member, aiocs",
            b"{\"ok\":true,\"command\":\"x\",\"data\":1,\"\\u0061oi\":{}}\n".to_vec(),
            vec!["--protocol", "aiocs"],
        ),
        (
            "aoi member, ndjson",
            b"{\"type\":\"t\",\"aoi\":{\"a\":1}}\n".to_vec(),
            vec!["--protocol", "ndjson"],
        ),
        // Its type twice.
        (
            "type twice, jsonl",
            b"{\"type\":\"a\",\"type\":\"b\"}\n".to_vec(),
            vec!["--protocol", "jsonl"],
        ),
        (
            "escaped type twice, ndjson",
            b"{\"type\":\"a\",\"\\u0074ype\":\"b\"}\n".to_vec(),
            vec!["--protocol", "ndjson"],
        ),
        // One of aoitap's own report types.
        (
            "report types",
            b"{\"type\":\"run\",\"name\":\"job 1\"}\n{\"type\":\"finding\",\"what\":\"x\"}\n"
                .to_vec(),
            vec!["--protocol", "jsonl"],
        ),
        // A verdict field twice on an upstream error.
        (
            "retry hint twice",
            aoi(&[
                meta,
                r#"{"type":"aoi:error","aoi":{"seq":1,"run":"R"},"category":"unavailable","code":"E","message":"m","retryable":true,"retry_after_ms":5,"retry_after_ms":9}"#,
                &failed,
            ]),
            vec![],
        ),
        // A retryable item error in a run that failed for good: 1, not 75.
        (
            "retryable item error",
            aoi(&[
                meta,
                r#"{"type":"aoi:error","aoi":{"seq":1,"run":"R"},"category":"unavailable","code":"E","message":"m","retryable":true,"retry_after_ms":5,"scope":"item"}"#,
                &failed,
            ]),
            vec![],
        ),
        // Members of a forwarded event the schema holds to a shape.
        (
            "odd check and warning",
            aoi(&[
                meta,
                r#"{"type":"aoi:warning","aoi":{"seq":1,"run":"R"},"code":"W","message":"m","line_number":-1}"#,
                r#"{"type":"aoi:check","aoi":{"seq":2,"run":"R"},"name":"a","ok":true,"foo":1}"#,
                &summary(4, "true", r#","warning_count":1"#),
            ]),
            vec![],
        ),
        // An exposed secret: written over, never forwarded.
        (
            "exposed secret",
            aoi(&[
                meta,
                r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"api_secret":"hunter2"}"#,
                &summary(3, "true", ""),
            ]),
            vec![],
        ),
        // Lines after a run was judged: no run says so but aoitap's own.
        (
            "event after the summary",
            aoi(&[
                meta,
                &summary(2, "true", ""),
                r#"{"type":"hit","aoi":{"seq":2,"run":"R"}}"#,
            ]),
            vec!["--multi-run"],
        ),
    ];
    let schema: Value = serde_json::from_str(&run(&["schema"], b"").stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for (name, bytes, args) in cases {
        let mut verify_args = vec!["verify"];
        verify_args.extend(&args);
        let upstream = run(&verify_args, &bytes).code;
        let c = Case {
            name: name.to_string(),
            bytes,
            args,
        };
        let (code, out) = upgrade(&c);
        assert_eq!(
            code, upstream,
            "{name}: upgrade exits as verify does\n{out}"
        );
        assert!(
            !out.contains("hunter2"),
            "{name}: a secret is never written"
        );
        let expected = if upstream == 65 { 1 } else { upstream };
        let (downstream, report) = verify(out.as_bytes(), multi(&c));
        assert_eq!(downstream, expected, "{name}: {report:?}\n{out}");
        for line in out.lines() {
            let e: Value = serde_json::from_str(line).unwrap();
            assert!(validator.is_valid(&e), "{name}: {e} against aoitap schema");
        }
    }
}

#[test]
fn a_usage_error_or_a_command_that_cannot_start_still_gives_a_whole_stream() {
    for args in [
        &["upgrade", "--bogus"][..],
        &["upgrade", "--schema-version", "2"],
        &["upgrade", "a.jsonl", "b.jsonl"],
        &["run", "--upgrade", "--bogus", "--", "true"],
        &["run", "--upgrade", "--", "/nonexistent/command"],
    ] {
        let out = run(args, b"");
        assert!([64, 127].contains(&out.code), "{args:?}: {}", out.code);
        let events = out.events();
        assert_eq!(events[0]["type"], "aoi:meta", "{args:?}: {}", out.stdout);
        let summary = out.summary();
        assert_eq!(summary["ok"], false);
        assert!(summary.get("properties").is_none(), "{summary}");
        assert_eq!(summary["caused_by"]["origin"], "aoitap", "{summary}");
        assert_eq!(verify(out.stdout.as_bytes(), false).0, 1, "{args:?}");
    }
}

#[test]
fn a_cancelled_upgrade_names_the_upstream_it_read() {
    let head = sample_head(3);
    let (code, out) = run_upgrade(
        &["--timeout", "1s"],
        &format!("printf '%s' '{head}'; sleep 30"),
    );
    assert_eq!(code, 75, "{out}");
    let summary: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(summary["reason"], "timeout");
    assert_eq!(summary["upstream"]["tool"], "outline", "{summary}");
}

/// Lines lost upstream are no partial success: a reader that accepts
/// one (`--accept-partial`) still finds the upgraded stream failed.
#[test]
fn a_cut_upstream_is_never_a_partial_success_downstream() {
    let cut = concat!(
        r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"tool":"t","aoi_version":"1.0-alpha","command":"c"}"#,
        "\n",
        r#"{"type":"hit","aoi":{"seq":1,"run":"R"}}"#,
        "\n",
        r#"{"type":"aoi:error","aoi":{"seq":2,"run":"R"},"scope":"item","category":"validation","code":"X","message":"m","retryable":false}"#,
        "\n"
    );
    let (code, out, _) = raw(&["upgrade"], cut.as_bytes());
    assert_eq!(code, 65);
    let accepted = run(&["verify", "--accept-partial"], &out);
    assert_eq!(accepted.code, 1, "{}", String::from_utf8_lossy(&out));
}

/// A hangup ends `upgrade` as SIGTERM does: its stream whole, cancelled.
#[test]
fn a_hangup_still_ends_the_upgraded_stream() {
    let mut child = Command::new(bin())
        .arg("upgrade")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let head = sample_head(2);
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(head.as_bytes()).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(129));
    let summary: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(summary["reason"], "cancelled", "{summary}");
    assert_eq!(summary["upstream"]["tool"], "outline", "{summary}");
}

/// The first `n` lines of the sample stream (its meta, then events).
fn sample_head(n: usize) -> String {
    std::fs::read_to_string(fixture("streams/ok-complete.jsonl"))
        .unwrap()
        .lines()
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A pretty-printed document (an AFDATA result or error, the aiocs
/// envelope, an object read as AOI; `\n` or `\r\n`) is one event in every
/// command (docs/contract.md §6.2, §1.6): `upgrade F | verify` gives F's verdict
/// and its retry hint, filter runs PROG on it once, and strip-envelope
/// and summarize reach the same verdict.
#[test]
fn a_pretty_document_is_one_event_in_every_command() {
    let afdata_ok = "{\n  \"kind\": \"result\",\n  \"result\": {\"value\": 42},\n  \"trace\": {\"duration_ms\": 3}\n}\n";
    let afdata_retry = "{\n  \"kind\": \"error\",\n  \"error\": {\"code\": \"RATE_LIMITED\", \"message\": \"slow\", \"retryable\": true, \"retry_after_ms\": 500},\n  \"trace\": {}\n}\n";
    let aoi_meta = "{\n  \"type\": \"aoi:meta\",\n  \"aoi\": {\"seq\": 0, \"run\": \"r1\"},\n  \"tool\": \"t\", \"tool_version\": \"1.0.0\", \"aoi_version\": \"1.0-alpha\",\n  \"schema_name\": \"com.example.t\", \"schema_version\": \"1.0.0\", \"command\": \"c\"\n}\n";
    let cases: [(&str, &str, &[&str], i32); 6] = [
        ("afdata result", afdata_ok, &[], 0),
        (
            "afdata result, pinned",
            afdata_ok,
            &["--protocol", "afdata"],
            0,
        ),
        ("afdata error", afdata_retry, &[], 75),
        (
            "afdata error, pinned",
            afdata_retry,
            &["--protocol", "afdata"],
            75,
        ),
        ("aiocs", AIOCS_PRETTY_FAILED, &[], 1),
        ("aoi meta alone", aoi_meta, &[], 65),
    ];
    for (name, text, args, want) in cases {
        for (ending, text) in [
            ("lf", text.to_string()),
            ("crlf", text.replace('\n', "\r\n")),
        ] {
            let with = |cmd: &[&'static str]| -> Vec<&'static str> {
                let mut all = cmd.to_vec();
                all.extend(args);
                all
            };
            let verified = run(&with(&["verify"]), text.as_bytes());
            assert_eq!(verified.code, want, "{name} {ending}: {}", verified.stdout);
            let (up, upgraded, err) = raw(&with(&["upgrade"]), text.as_bytes());
            assert_eq!(up, want, "{name} {ending}: {err}");
            // A stream upstream did not conform to is a failure (1) once
            // upgraded: aoitap's own stream conforms (docs/contract.md §1.6).
            let again = run(&["verify"], &upgraded);
            let down = if want == 65 { 1 } else { want };
            assert_eq!(again.code, down, "{name} {ending}: {}", again.stdout);
            if want == 75 {
                assert!(
                    again.stdout.contains("retryable"),
                    "{name}: {}",
                    again.stdout
                );
            }
            let filtered = run(&with(&["filter", "."]), text.as_bytes());
            assert_eq!(filtered.code, want, "{name} {ending}: {}", filtered.stderr);
            let out: Vec<&str> = filtered.stdout.lines().collect();
            assert_eq!(out.len(), 1, "{name} {ending}: {}", filtered.stdout);
            let one: Value = serde_json::from_str(out[0]).unwrap();
            let whole: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(one, whole, "{name} {ending}");
            assert!(!out[0].ends_with(' '), "{name} {ending}: {:?}", out[0]);
            for cmd in ["strip-envelope", "summarize"] {
                let o = run(&with(&[cmd]), text.as_bytes());
                assert_eq!(o.code, want, "{cmd} {name} {ending}: {}", o.stderr);
            }
        }
    }
}

/// AOI 0.2 has no envelope: a domain event's own `aoi` member (an object,
/// even a string) is its data, and the event is kept whole as a `record`,
/// as ndjson and plain JSON lines keep theirs; it was replaced by
/// aoitap's envelope.
#[test]
fn an_aoi_0_2_events_own_aoi_member_is_kept() {
    let meta = r#"{"type":"aoi:meta","tool":"t","tool_version":"0.1.0","aoi_version":"0.2","schema_name":"com.example.t","schema_version":"1.0.0","command":"c"}"#;
    let object = r#"{"type":"hit","aoi":{"x":1},"id":"a"}"#;
    let string = r#"{"type":"hit","aoi":"mine","id":"b"}"#;
    let summary = r#"{"type":"aoi:summary","ok":true,"count":4,"warning_count":0,"error_count":0,"truncated":false}"#;
    let input = format!("{meta}\n{object}\n{string}\n{summary}\n");
    let (code, out, err) = raw(&["upgrade"], input.as_bytes());
    assert_eq!(code, 0, "{err}");
    let records: Vec<Value> = String::from_utf8(out.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "record")
        .map(|e| e["record"].clone())
        .collect();
    let want: Vec<Value> = [object, string]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    assert_eq!(records, want);
    assert_eq!(run(&["verify"], &out).code, 0);
}

/// So are a 0.2 framework event's: a progress event's `aoi` member keeps
/// it whole as a `record`, an error's or warning's keeps it whole under
/// `properties.upstream` of the 1.0 event it becomes. The member was
/// cut as if it were 1.x's envelope, and its bytes lost.
#[test]
fn an_aoi_0_2_framework_events_own_aoi_member_is_kept() {
    let meta = r#"{"type":"aoi:meta","tool":"notes","tool_version":"0.4.0","aoi_version":"0.2","schema_name":"com.example.notes.events","schema_version":"1.0.0","command":"list"}"#;
    let progress = r#"{"type":"aoi:progress","aoi":{"mine":1},"current":1}"#;
    let warning = r#"{"type":"aoi:warning","aoi":"x","code":"W","message":"m"}"#;
    let error = r#"{"type":"aoi:error","aoi":{"keep":"me"},"category":"internal","code":"E","message":"m","retryable":false}"#;
    let summary = r#"{"type":"aoi:summary","ok":false,"reason":"failed","count":5,"warning_count":1,"error_count":1,"truncated":false}"#;
    let input = format!("{meta}\n{progress}\n{warning}\n{error}\n{summary}\n");
    let (code, out, err) = raw(&["upgrade"], input.as_bytes());
    assert_eq!(code, 1, "{err}");
    let events: Vec<Value> = String::from_utf8(out.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let kept = |want: &str| -> bool {
        let want: Value = serde_json::from_str(want).unwrap();
        events
            .iter()
            .any(|e| e["record"] == want || e["properties"]["upstream"] == want)
    };
    for e in [progress, warning, error] {
        assert!(
            kept(e),
            "{e} is not kept whole in:\n{}",
            String::from_utf8_lossy(&out)
        );
    }
    assert_eq!(run(&["verify"], &out).code, 1);
}

/// A 0.2 summary whose count is below what arrived shows no line lost:
/// upgrade says the upstream does not conform, not that it was cut. A
/// count above what arrived is a cut (docs/contract.md §1.6).
#[test]
fn a_count_below_what_arrived_is_no_cut() {
    let meta = r#"{"type":"aoi:meta","tool":"mm","tool_version":"0.1.0","aoi_version":"0.2","schema_name":"s","schema_version":"1.0.0","command":"capabilities"}"#;
    let ev = r#"{"type":"capability","name":"ls"}"#;
    let summary = |count: u64| {
        format!(
            r#"{{"type":"aoi:summary","ok":true,"count":{count},"warning_count":0,"error_count":0}}"#
        )
    };
    let stream = |count: u64| format!("{meta}\n{ev}\n{ev}\n{ev}\n{}\n", summary(count));
    for (count, code) in [
        (2, "UPSTREAM_NONCONFORMING"),
        (3, "UPSTREAM_NONCONFORMING"),
        (7, "UPSTREAM_CUT"),
    ] {
        let (status, out, err) = raw(&["upgrade"], stream(count).as_bytes());
        assert_eq!(status, 65, "count {count}: {err}");
        let out = String::from_utf8(out).unwrap();
        let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "aoi:summary");
        let codes: Vec<String> = out
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["type"] == "aoi:error")
            .filter_map(|v| v["code"].as_str().map(str::to_string))
            .collect();
        assert!(
            codes.iter().any(|c| c == code),
            "count {count}: {codes:?}\n{out}"
        );
        // A conforming stream that failed, as every 65 upgrades.
        let (verdict, _) = verify(out.as_bytes(), false);
        assert_eq!(verdict, 1, "count {count}: upgrade | verify");
    }
}

/// A line whose members past the envelope are longer than what upgrade
/// copies to write a line in one call (4 KiB) is written from where it
/// came: both kinds of line come out as the same splice, byte for byte,
/// and the stream passes verify.
#[test]
fn long_and_short_lines_are_spliced_alike() {
    use crate::util::{ev, lines, meta, ok_summary};
    let sizes = [10, 4000, 4096, 4097, 70_000];
    let mut input = vec![meta()];
    for (k, n) in sizes.iter().enumerate() {
        input.push(ev(
            k as u64 + 1,
            "hit",
            &format!(r#""text":"{}""#, "x".repeat(*n)),
        ));
    }
    input.push(ok_summary(sizes.len() as u64 + 1, sizes.len() as u64));
    let (code, out, err) = raw(&["upgrade"], &lines(&input));
    assert_eq!(code, 0, "{err}");
    let out = String::from_utf8(out).unwrap();
    let hits: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(r#""type":"hit""#))
        .collect();
    assert_eq!(hits.len(), sizes.len(), "{out}");
    for (line, n) in hits.iter().zip(sizes) {
        let tail = format!(r#","text":"{}"}}"#, "x".repeat(n));
        assert!(
            line.starts_with(r#"{"type":"hit","aoi":{"seq":"#),
            "{line:.80}"
        );
        assert!(
            line.ends_with(&tail),
            "{n}: {:.80}",
            &line[line.len().saturating_sub(80)..]
        );
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["text"].as_str().map(str::len), Some(n));
    }
    let checked = run(&["verify", "-q"], out.as_bytes());
    assert_eq!(checked.code, 0, "{}", checked.stderr);
}
