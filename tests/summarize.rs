//! `aoitap summarize`: counts checked against counts made here, in every
//! output mode, and the human rendering pinned by a snapshot.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::util::*;

/// Per run id ("" for a run without one): lines, bytes, type counts.
#[derive(Default, Debug, PartialEq)]
struct Count {
    lines: u64,
    bytes: u64,
    domain: BTreeMap<String, u64>,
    framework: BTreeMap<String, u64>,
}

/// Counted independently: lines by `aoi.run`, lines without one to the
/// run of the latest `aoi:meta` (docs/contract.md §2.1).
fn count(input: &[u8]) -> BTreeMap<String, Count> {
    let mut out: BTreeMap<String, Count> = BTreeMap::new();
    let mut current = String::new();
    let text = String::from_utf8_lossy(input);
    for piece in text.split_inclusive('\n') {
        let complete = piece.ends_with('\n');
        let v: Option<Value> = serde_json::from_str(piece.trim_end()).ok();
        let run = v
            .as_ref()
            .and_then(|v| v["aoi"]["run"].as_str())
            .map(String::from);
        let is_meta = v.as_ref().is_some_and(|v| v["type"] == "aoi:meta");
        if is_meta {
            current = run.clone().unwrap_or_default();
        }
        let c = out
            .entry(run.unwrap_or_else(|| current.clone()))
            .or_default();
        c.bytes += piece.len() as u64;
        if !complete {
            continue;
        }
        c.lines += 1;
        // An object without a string type is counted as "(none)"; AFDATA
        // lines (a kind with its payload) by their kind.
        let ty = v
            .as_ref()
            .filter(|v| v.is_object())
            .map(|v| match v["kind"].as_str() {
                Some(k) if v.get(k).is_some() => k,
                _ => v["type"].as_str().unwrap_or("(none)"),
            });
        if let Some(t) = ty {
            let map = if t.starts_with("aoi:") {
                &mut c.framework
            } else {
                &mut c.domain
            };
            *map.entry(t.to_string()).or_default() += 1;
        }
    }
    out
}

fn counts_of(run: &Value) -> Count {
    let map = |v: &Value| {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
            .collect()
    };
    Count {
        lines: run["lines"].as_u64().unwrap(),
        bytes: run["bytes"].as_u64().unwrap(),
        domain: map(&run["domain_types"]),
        framework: map(&run["framework_types"]),
    }
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(fixture("streams"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn counts_match_in_json_and_jsonl() {
    for (name, input) in fixtures() {
        let want = count(&input);
        let json = run(&["summarize", "--output", "json"], &input);
        let doc: Value = serde_json::from_str(&json.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", json.stdout));
        let runs = doc["runs"].as_array().unwrap();
        let got: BTreeMap<String, Count> = runs
            .iter()
            .map(|r| (r["run"].as_str().unwrap_or("").to_string(), counts_of(r)))
            .collect();
        assert_eq!(got, want, "{name} (json)");
        let jsonl = run(&["summarize", "--output", "jsonl"], &input);
        let got: BTreeMap<String, Count> = jsonl
            .events()
            .iter()
            .filter(|e| e["type"] == "run_summary")
            .map(|r| (r["run"].as_str().unwrap_or("").to_string(), counts_of(r)))
            .collect();
        assert_eq!(got, want, "{name} (jsonl)");
        assert_eq!(jsonl.code, json.code, "{name}: one verdict in every mode");
    }
}

#[test]
fn counts_match_in_human_output() {
    for (name, input) in fixtures() {
        let out = run(&["summarize", "--color", "never"], &input);
        for (run_id, c) in count(&input) {
            if !run_id.is_empty() {
                assert!(
                    out.stdout.contains(&format!("run {run_id} (")),
                    "{name}: {run_id}\n{}",
                    out.stdout
                );
            }
            let lines = format!("  lines      {} (", c.lines);
            assert!(
                out.stdout.contains(&lines),
                "{name}: {lines}\n{}",
                out.stdout
            );
            for (t, n) in c.domain.iter().chain(&c.framework) {
                assert!(
                    out.stdout.contains(&format!("{t} {n}")),
                    "{name}: {t} {n}\n{}",
                    out.stdout
                );
            }
        }
        // Cut only on a terminal, to its width: a pipe gets every name whole.
        assert!(
            !out.stdout.contains('…'),
            "{name}: cut in a pipe\n{}",
            out.stdout
        );
    }
}

#[test]
fn outcome_errors_and_seq_coverage() {
    let out = run(
        &["summarize", "--output", "json"],
        &std::fs::read(fixture("streams/retryable-failure.jsonl")).unwrap(),
    );
    let r = &serde_json::from_str::<Value>(&out.stdout).unwrap()["runs"][0];
    assert_eq!(r["tool"], "outline");
    assert_eq!(r["schema_version"], "1.0.0");
    assert_eq!(r["outcome"]["ok"], false);
    assert_eq!(r["outcome"]["reason"], "failed");
    assert_eq!(r["errors"][0]["code"], "UPSTREAM_RATE_LIMIT");
    assert_eq!(r["errors"][0]["first_line"], 3);
    assert_eq!(r["verdict"], "retryable");
    assert_eq!(out.code, 75);
    let out = run(
        &["summarize", "--output", "json"],
        &std::fs::read(fixture("streams/elided-with-marker.jsonl")).unwrap(),
    );
    let r = &serde_json::from_str::<Value>(&out.stdout).unwrap()["runs"][0];
    assert_eq!(r["seq"]["complete"], false);
    assert_eq!(
        r["seq"]["missing"], 29,
        "the marker line is no event and takes no seq step (docs/contract.md §3.2)"
    );
}

#[test]
fn type_field_counts_any_discriminated_jsonl() {
    let afdata = lines(&[
        r#"{"kind":"log","log":{"message":"startup","level":"info"},"trace":{}}"#,
        r#"{"kind":"progress","progress":{"current":3,"total":10},"trace":{}}"#,
        r#"{"kind":"result","result":{"hash":"abc123"},"trace":{"duration_ms":1280}}"#,
        r#"{"kind":"log","log":{"message":"done","level":"info"},"trace":{}}"#,
    ]);
    let out = run(
        &["summarize", "--type-field", "kind", "--output", "json"],
        &afdata,
    );
    // Summarize reads many runs: in AFDATA the line after a terminal
    // event opens the next one (docs/contract.md §6.1), which here has no end.
    let doc = serde_json::from_str::<Value>(&out.stdout).unwrap();
    let r = &doc["runs"][0];
    assert_eq!(
        r["domain_types"],
        serde_json::json!({"log": 1, "progress": 1, "result": 1})
    );
    assert_eq!(r["lines"], 3);
    assert_eq!(r["protocol"], "afdata");
    assert_eq!(
        doc["runs"][1]["domain_types"],
        serde_json::json!({"log": 1})
    );
    assert_eq!(out.code, 65);
    let total = r["bytes"].as_u64().unwrap() + doc["runs"][1]["bytes"].as_u64().unwrap();
    assert_eq!(total, afdata.len() as u64);
    let aiocs = lines(&[
        r#"{"type":"daemon.started","intervalMinutes":60}"#,
        r#"{"type":"daemon.stopped"}"#,
    ]);
    let out = run(&["summarize", "--output", "json"], &aiocs);
    let r = &serde_json::from_str::<Value>(&out.stdout).unwrap()["runs"][0];
    assert_eq!(
        r["domain_types"],
        serde_json::json!({"daemon.started": 1, "daemon.stopped": 1})
    );
}

/// AFDATA's errors are its `error` kind's and aiocs' types its `type`s: a
/// stray `type` member naming a framework event, or `--type-field`, moves
/// neither (docs/contract.md §1.2).
#[test]
fn afdata_and_aiocs_count_by_their_own_fields() {
    let afdata = lines(&[
        r#"{"kind":"log","log":{"level":"warn","message":"w"},"type":"aoi:error"}"#,
        r#"{"kind":"error","error":{"code":"E","message":"m"},"type":"row"}"#,
    ]);
    let out = run(&["summarize", "--output", "json"], &afdata);
    let r = &serde_json::from_str::<Value>(&out.stdout).unwrap()["runs"][0];
    assert_eq!(r["protocol"], "afdata");
    assert_eq!(r["domain_types"], serde_json::json!({"error": 1, "log": 1}));
    let errors = r["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{r}");
    assert_eq!(
        (&errors[0]["code"], &errors[0]["first_line"]),
        (&"E".into(), &2.into())
    );
    let aiocs = lines(&[r#"{"ok":true,"command":"c","data":{},"kind":"foo","type":"bar"}"#]);
    for flags in [&[][..], &["--type-field", "kind"]] {
        let mut args = vec!["summarize", "--output", "json", "--protocol", "aiocs"];
        args.extend(flags);
        let out = run(&args, &aiocs);
        let r = &serde_json::from_str::<Value>(&out.stdout).unwrap()["runs"][0];
        assert_eq!(
            r["domain_types"],
            serde_json::json!({"bar": 1}),
            "{flags:?}"
        );
    }
}

/// The human rendering, pinned: a change to it must change the snapshot.
#[test]
fn human_rendering_snapshot() {
    let input = std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap();
    let out = run(&["summarize", "--color", "never", "-"], &input);
    let want = std::fs::read_to_string(fixture("snapshots/summarize-ok-complete.txt")).unwrap();
    assert_eq!(out.stdout, want);
}

/// `--output json` is one document for the whole invocation, however many
/// FILE operands.
#[test]
fn json_output_is_one_document_over_several_files() {
    let a = fixture("streams/ok-complete.jsonl");
    let b = fixture("streams/no-summary.jsonl");
    let out = run(
        &[
            "summarize",
            "--output",
            "json",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        b"",
    );
    let doc: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", out.stdout));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(out.code, 65);
}

/// Counts stay right when the type changes from line to line, between
/// interleaved runs, and when one type is written escaped: summarize
/// counts a repeated type without looking it up again, so this holds the
/// shortcut to what a count made here says.
#[test]
fn counts_survive_changing_and_escaped_types() {
    let line = |run: &str, seq: u64, ty: &str| {
        format!("{{\"type\":\"{ty}\",\"aoi\":{{\"seq\":{seq},\"run\":\"{run}\"}}}}\n")
    };
    let meta = |run: &str| {
        format!(
            "{{\"type\":\"aoi:meta\",\"aoi\":{{\"seq\":0,\"run\":\"{run}\"}},\"tool\":\"t\",\"tool_version\":\"1\",\"aoi_version\":\"1.0-alpha\",\"schema_name\":\"s\",\"schema_version\":\"1\",\"command\":\"c\"}}\n"
        )
    };
    let mut input = meta("A") + &meta("B");
    let types = [
        "hit",
        "hit",
        "h\\u0069t",
        "other",
        "hit",
        "aoi:warning",
        "hit",
        "other",
        "other",
        "hit",
    ];
    for (k, ty) in types.iter().enumerate() {
        let seq = k as u64 / 2 + 1;
        input += &line(if k % 2 == 0 { "A" } else { "B" }, seq, ty);
        input += &line("A", 100 + k as u64, ty);
    }
    let want = count(input.as_bytes());
    let json = run(&["summarize", "--output", "json"], input.as_bytes());
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    let got: BTreeMap<String, Count> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["run"].as_str().unwrap_or("").to_string(), counts_of(r)))
        .collect();
    assert_eq!(got, want);
    // Six of the ten types are "hit" (one escaped); A has every second
    // line of the first column (four of them) and all of the second.
    assert_eq!(got["A"].domain["hit"], 4 + 6, "{}", json.stdout);
}

/// A run counts at most 256 domain and 256 framework type names by name;
/// the rest, and a type that is itself called `(other)`, count under
/// `(other)`. Names are kept once for all runs, but each run has its own
/// bound: one run's overflow is not another's.
#[test]
fn type_names_past_the_bound_count_under_other() {
    let line = |run: &str, seq: usize, ty: &str| {
        format!("{{\"type\":\"{ty}\",\"aoi\":{{\"seq\":{seq},\"run\":\"{run}\"}}}}\n")
    };
    let mut input = String::new();
    // Run A: 300 domain names, two of them twice, "(other)" once, and
    // 260 framework names.
    let mut seq = 0;
    let mut push = |input: &mut String, run: &str, ty: &str| {
        *input += &line(run, seq, ty);
        seq += 1;
    };
    for k in 0..300 {
        push(&mut input, "A", &format!("t{k:03}"));
    }
    push(&mut input, "A", "t000");
    push(&mut input, "A", "t299");
    push(&mut input, "A", "(other)");
    for k in 0..260 {
        push(&mut input, "A", &format!("aoi:x{k:03}"));
    }
    // Run B: names A counted under (other), by name here.
    for k in 290..300 {
        push(&mut input, "B", &format!("t{k:03}"));
    }
    let json = run(&["summarize", "--output", "json"], input.as_bytes());
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    let a = counts_of(&runs[0]);
    // t000..t255 by name (t000 twice); t256..t299, t299 again and
    // "(other)" itself: 44 + 1 + 1.
    assert_eq!(a.domain.len(), 257, "{}", json.stdout);
    assert_eq!(a.domain["t000"], 2);
    assert_eq!(a.domain["t255"], 1);
    assert!(!a.domain.contains_key("t256"));
    assert_eq!(a.domain["(other)"], 46);
    assert_eq!(a.framework.len(), 257);
    assert_eq!(a.framework["(other)"], 4);
    assert_eq!(a.domain.values().sum::<u64>(), 303);
    let b = counts_of(&runs[1]);
    assert_eq!(b.domain.len(), 10, "{}", json.stdout);
    assert!(b.domain.values().all(|&n| n == 1));
    // The human block lists the same counts, "(other)" in its sorted place.
    let human = run(&["summarize", "--color", "never"], input.as_bytes());
    assert!(
        human
            .stdout
            .contains("domain     (other) 46, t000 2, t001 1,"),
        "{}",
        human.stdout
    );
}

/// Names kept over all open runs are bounded (100,000 past each run's
/// own first 16): past it, a run's new name counts under `(other)` until
/// runs end and give their names back. A run's first 16 names are its
/// own whatever other runs hold (docs/contract.md §1.2).
#[test]
fn names_past_the_room_of_all_open_runs_count_under_other() {
    let meta = |run: &str| {
        format!(
            "{{\"type\":\"aoi:meta\",\"aoi\":{{\"seq\":0,\"run\":\"{run}\"}},\"tool\":\"t\",\"tool_version\":\"1\",\"aoi_version\":\"1.0-alpha\",\"schema_name\":\"s\",\"schema_version\":\"1\",\"command\":\"c\"}}\n"
        )
    };
    let line = |run: &str, seq: usize, ty: &str| {
        format!("{{\"type\":\"{ty}\",\"aoi\":{{\"seq\":{seq},\"run\":\"{run}\"}}}}\n")
    };
    // Z opens; 420 runs of a meta and 256 names each ask for 100,800
    // names past their own 16, past the room: the last of them count
    // all but their own under (other).
    let mut input = meta("Z");
    for i in 0..420 {
        let run = format!("R{i}");
        input += &meta(&run);
        for k in 0..256 {
            input += &line(&run, k + 1, &format!("t{k}"));
        }
    }
    input += &line("Z", 1, "early");
    for i in 0..420 {
        input += &line(&format!("R{i}"), 257, "aoi:summary");
    }
    // The room is back; Z has 255 more names before its 256th is (other).
    for k in 0..256 {
        input += &line("Z", k + 2, &format!("z{k:03}"));
    }
    input += &line("Z", 258, "aoi:summary");
    let json = run(&["summarize", "--output", "json"], input.as_bytes());
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    let of = |id: &str| {
        doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["run"] == id)
            .map(counts_of)
            .unwrap_or_else(|| panic!("no run {id}"))
    };
    let first = of("R0");
    assert_eq!(first.domain.len(), 256);
    assert!(!first.domain.contains_key("(other)"));
    let last = of("R419");
    // Its own 16 are aoi:meta and 15 of its types.
    assert_eq!(last.domain.len(), 16, "{:?}", last.domain);
    assert_eq!(last.domain["(other)"], 241);
    assert_eq!(last.domain.values().sum::<u64>(), 256);
    let z = of("Z");
    assert_eq!(z.domain["early"], 1, "its own, though the room was spent");
    assert_eq!(z.domain["(other)"], 1, "z255: {:?}", z.domain.keys());
    assert_eq!(z.domain.len(), 257);
    assert_eq!(z.domain["z254"], 1);
}

/// A run's counts do not change with the number of runs open beside it
/// (docs/contract.md §1.2): 20,000 runs of five types and two kinds of
/// error, all open at once, each counted by name as it would be alone.
#[test]
fn twenty_thousand_open_runs_count_as_each_alone() {
    let n = 20_000;
    let line = |run: usize, seq: usize, rest: &str| {
        format!("{{\"aoi\":{{\"seq\":{seq},\"run\":\"r{run}\"}},{rest}}}\n")
    };
    let mut input = String::new();
    for r in 0..n {
        input += &line(
            r,
            0,
            r#""type":"aoi:meta","spec":"aoi-cli/1.0-alpha","tool":{"name":"t","version":"1"}"#,
        );
    }
    for (k, ty) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        for r in 0..n {
            input += &line(r, k + 1, &format!(r#""type":"{ty}""#));
        }
    }
    for (k, code) in ["E1", "E2"].iter().enumerate() {
        for r in 0..n {
            let rest =
                format!(r#""type":"aoi:error","category":"tool","code":"{code}","message":"m""#);
            input += &line(r, k + 6, &rest);
        }
    }
    for r in 0..n {
        input += &line(r, 8, r#""type":"aoi:summary","ok":false,"event_count":9"#);
    }
    let json = run(&["summarize", "--output", "json"], input.as_bytes());
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), n);
    for r in runs {
        let counts = counts_of(r);
        let domain: Vec<(&str, u64)> = counts
            .domain
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(domain, [("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1)]);
        let errors = problems_of(r, "errors");
        assert_eq!(errors.len(), 2, "{}: {errors:?}", r["run"]);
    }
}

/// A line of a run already reported is the checker's finding, and no
/// count of summarize's: once, it was kept for no run and counted into
/// the next input's run of the same id.
#[test]
fn a_late_line_counts_into_no_other_run() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.jsonl");
    let second = dir.path().join("second.jsonl");
    let mut late = lines(&good(2));
    late.extend(lines(&[hit(4)]));
    std::fs::write(&first, &late).unwrap();
    std::fs::write(&second, lines(&good(3))).unwrap();
    let out = run(
        &[
            "summarize",
            "--output",
            "json",
            first.to_str().unwrap(),
            second.to_str().unwrap(),
        ],
        b"",
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{doc}");
    let lines_of = |k: usize| runs[k]["lines"].as_u64().unwrap();
    assert_eq!((lines_of(0), lines_of(1)), (4, 5), "{doc}");
    assert_eq!(runs[1]["domain_types"]["hit"], 3, "{doc}");
}

/// The counts of an ended run are cleared and given to a run that begins
/// (docs/contract.md §8.2): nothing of the first run's (types, warnings,
/// errors, outcome) may show in the second's, whichever ends first.
#[test]
fn a_run_that_begins_keeps_nothing_of_one_that_ended() {
    let meta = |run: &str| {
        format!(
            r#"{{"type":"aoi:meta","aoi":{{"seq":0,"run":"{run}"}},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1","command":"c"}}"#
        )
    };
    let ev = |run: &str, seq: u64, ty: &str, rest: &str| {
        format!(r#"{{"type":"{ty}","aoi":{{"seq":{seq},"run":"{run}"}}{rest}}}"#)
    };
    let mut lines = vec![meta("a")];
    lines.push(ev("a", 1, "hit", ""));
    lines.push(ev("a", 2, "entry", ""));
    lines.push(ev(
        "a",
        3,
        "aoi:warning",
        r#","category":"c","code":"W","message":"w""#,
    ));
    lines.push(ev(
        "a",
        4,
        "aoi:error",
        r#","category":"c","code":"E","message":"e""#,
    ));
    lines.push(ev(
        "a",
        5,
        "aoi:summary",
        r#","ok":false,"reason":"failed""#,
    ));
    // Run b begins once a has ended, and c while b is open.
    lines.push(meta("b"));
    lines.push(ev("b", 1, "match", ""));
    lines.push(meta("c"));
    lines.push(ev("b", 2, "aoi:summary", r#","ok":true"#));
    lines.push(ev("c", 1, "match", ""));
    let input = lines.join("\n") + "\n";
    let out = run(
        &["summarize", "--multi-run", "--output", "json"],
        input.as_bytes(),
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    let by_id = |id: &str| runs.iter().find(|r| r["run"] == id).unwrap();
    let a = by_id("a");
    assert_eq!(a["errors"][0]["code"], "E");
    assert_eq!(a["warnings"][0]["code"], "W");
    for (id, outcome) in [("b", Some(true)), ("c", None)] {
        let r = by_id(id);
        assert_eq!(
            r["domain_types"],
            serde_json::json!({"match": 1}),
            "{id}: {r}"
        );
        assert!(
            r["errors"].as_array().is_none_or(Vec::is_empty),
            "{id}: {r}"
        );
        assert!(
            r["warnings"].as_array().is_none_or(Vec::is_empty),
            "{id}: {r}"
        );
        assert_eq!(r["outcome"]["ok"].as_bool(), outcome, "{id}: {r}");
    }
}

/// A run's errors or warnings (`key`), by category/code.
fn problems_of(run: &Value, key: &str) -> BTreeMap<String, u64> {
    run[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let name = format!("{}/{}", p["category"].as_str().unwrap(), p["code"]);
            (name.replace('"', ""), p["count"].as_u64().unwrap())
        })
        .collect()
}

/// One line of a generated stream: the run it goes to, and what it is.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// A domain event: type number `n` of a small pool (one written
    /// escaped), and a `kind` from it.
    Domain(usize, u8),
    /// An `aoi:error` or `aoi:warning`, coded (its `kind` the same for
    /// code 1, else a domain name).
    Problem(usize, bool, u8),
    /// An event with no type.
    Untyped(usize),
    /// A line that is not JSON, for the run of the latest `aoi:meta`.
    Broken,
    /// The run's `aoi:summary`: it takes no line after.
    End(usize),
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    let run = 0..3usize;
    prop_oneof![
        6 => (run.clone(), 0..4u8).prop_map(|(r, n)| Step::Domain(r, n)),
        2 => (run.clone(), any::<bool>(), 0..2u8).prop_map(|(r, e, c)| Step::Problem(r, e, c)),
        1 => run.clone().prop_map(Step::Untyped),
        1 => Just(Step::Broken),
        1 => run.prop_map(Step::End),
    ]
}

/// What one generated line counts for in its run: its `kind`, and the
/// error or warning it is (0 errors, 1 warnings), by category/code.
struct Counted {
    run: usize,
    kind: String,
    problem: Option<(usize, String)>,
}

/// Whatever the order of types, runs, problems and ends, summarize counts
/// what a count made here does: an AOI stream by `type` (with or without
/// `--type-field`), and as typed NDJSON by the `--type-field` it is
/// given, where a framework event whose field repeats the last line's is
/// still counted by its code (docs/contract.md §1.2). Summarize counts a
/// repeated type without looking it up, and adds those up when the type
/// changes or the run ends; this holds that to a count of every line.
#[test]
fn counts_hold_for_any_order_of_types_runs_and_ends() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    const TYPES: [&str; 4] = ["hit", "h\\u0069t", "miss", "aoi:x"];
    const KINDS: [&str; 4] = ["miss", "hit", "aoi:x", "hit"];
    const IDS: [&str; 3] = ["R0", "R1", "R2"];
    let strategy = (
        prop::collection::vec(step(), 0..40),
        any::<bool>(),
        any::<bool>(),
    );
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&strategy, |(steps, by_kind, cut)| {
        let mut input = String::new();
        let mut lines: Vec<Option<Counted>> = vec![];
        let (mut seq, mut ended) = ([None::<u64>; 3], [false; 3]);
        let mut latest: Option<usize> = None;
        for s in steps {
            let (r, ty, kind, more, problem) = match s {
                Step::Domain(r, n) => {
                    let n = usize::from(n);
                    (r, Some(TYPES[n]), KINDS[n], String::new(), None)
                }
                Step::Problem(r, error, code) => {
                    let ty = if error { "aoi:error" } else { "aoi:warning" };
                    let more = format!(",\"category\":\"c\",\"code\":\"E{code}\"");
                    // Its `kind` the same (code 1) or a domain name: as
                    // typed NDJSON by `kind`, only the first is a problem.
                    (
                        r,
                        Some(ty),
                        if code == 1 { ty } else { "hit" },
                        more,
                        Some((usize::from(!error), format!("c/E{code}"))),
                    )
                }
                Step::Untyped(r) => (r, None, "miss", String::new(), None),
                Step::End(r) if seq[r].is_some() => (
                    r,
                    Some("aoi:summary"),
                    "aoi:end",
                    ",\"ok\":true".into(),
                    None,
                ),
                Step::Broken if latest.is_some_and(|r| !ended[r]) => {
                    input.push_str("{not json\n");
                    lines.push(None);
                    continue;
                }
                _ => continue,
            };
            if ended[r] {
                continue;
            }
            let n = match seq[r] {
                Some(n) => n,
                None => {
                    // A run's first line is its aoi:meta, which has no kind.
                    latest = Some(r);
                    input.push_str(&format!(
                        "{{\"type\":\"aoi:meta\",\"aoi\":{{\"seq\":0,\"run\":\"{}\"}}}}\n",
                        IDS[r]
                    ));
                    lines.push(Some(Counted {
                        run: r,
                        kind: "(none)".into(),
                        problem: None,
                    }));
                    1
                }
            };
            seq[r] = Some(n + 1);
            let ty = ty.map(|t| format!("\"type\":\"{t}\","));
            input.push_str(&format!(
                "{{{}\"kind\":\"{kind}\",\"aoi\":{{\"seq\":{n},\"run\":\"{}\"}}{more}}}\n",
                ty.unwrap_or_default(),
                IDS[r]
            ));
            ended[r] |= matches!(s, Step::End(_));
            lines.push(Some(Counted {
                run: r,
                kind: kind.into(),
                problem,
            }));
        }
        if cut && input.ends_with('\n') {
            // The last line unterminated: its bytes count, not its line.
            input.pop();
            lines.pop();
        }
        let mut args = vec!["summarize", "--output", "json", "--continue-on-error"];
        if by_kind {
            args.extend(["--type-field", "kind"]);
        }
        let out = run(&args, input.as_bytes());
        let doc: Value = serde_json::from_str(&out.stdout)
            .map_err(|e| TestCaseError::fail(format!("{e}: {}", out.stdout)))?;
        let want = count(input.as_bytes());
        let runs = doc["runs"].as_array().unwrap();
        let bytes: u64 = runs.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
        prop_assert_eq!(bytes, input.len() as u64);
        let mut seen = 0;
        for r in runs {
            let id = r["run"].as_str().unwrap_or("");
            // A cut line after its run ended is a run of its own, with
            // no id and no line; so is an empty input.
            if id.is_empty() && !want.contains_key(id) {
                prop_assert_eq!(r["lines"].as_u64(), Some(0));
                continue;
            }
            seen += 1;
            let got = counts_of(r);
            let w = &want[id];
            prop_assert_eq!(got.lines, w.lines, "{}", input);
            // A cut last line is no event: its bytes go to the run of the
            // line before, whatever it would have said.
            if !cut {
                prop_assert_eq!(got.bytes, w.bytes, "{}", input);
            }
            let mine = lines.iter().flatten().filter(|c| IDS[c.run] == id);
            // By `type`, whatever `--type-field` says: AOI's discriminator.
            prop_assert_eq!(
                (&got.domain, &got.framework),
                (&w.domain, &w.framework),
                "{}",
                input
            );
            let mut expect: [BTreeMap<String, u64>; 2] = Default::default();
            for (list, name) in mine.filter_map(|c| c.problem.clone()) {
                *expect[list].entry(name).or_default() += 1;
            }
            for (list, key) in [(0, "errors"), (1, "warnings")] {
                prop_assert_eq!(&problems_of(r, key), &expect[list], "{} of {}", key, input);
            }
        }
        prop_assert_eq!(seen, want.len(), "{}", input);
        if by_kind {
            // As typed NDJSON, `kind` is the discriminator: the input is
            // one run, counted by it (a line with none under `(none)`).
            let args = [
                "summarize",
                "--output",
                "json",
                "--protocol",
                "ndjson",
                "--type-field",
                "kind",
            ];
            let out = run(&args, input.as_bytes());
            let doc: Value = serde_json::from_str(&out.stdout)
                .map_err(|e| TestCaseError::fail(format!("{e}: {}", out.stdout)))?;
            let mut expect: BTreeMap<String, u64> = BTreeMap::new();
            for c in lines.iter().flatten() {
                *expect.entry(c.kind.clone()).or_default() += 1;
            }
            let runs = doc["runs"].as_array().unwrap();
            prop_assert_eq!(runs.len(), 1, "{}", out.stdout);
            let got = counts_of(&runs[0]);
            let mut all = got.domain;
            all.extend(got.framework);
            prop_assert_eq!(all, expect, "{}", input);
            let mut problems: [BTreeMap<String, u64>; 2] = Default::default();
            let by_kind = lines
                .iter()
                .flatten()
                .filter(|c| c.kind.starts_with("aoi:"))
                .filter_map(|c| c.problem.clone());
            for (list, name) in by_kind {
                *problems[list].entry(name).or_default() += 1;
            }
            for (list, key) in [(0, "errors"), (1, "warnings")] {
                prop_assert_eq!(
                    &problems_of(&runs[0], key),
                    &problems[list],
                    "{} of {}",
                    key,
                    input
                );
            }
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
}
