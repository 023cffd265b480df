//! `aoitap strip-envelope`: the stream changes by exactly the `aoi` member,
//! never by another byte, and the verdict survives in the exit status.

use std::process::Command;

use serde_json::Value;

use crate::util::*;

/// Lines whose envelope sits in every awkward place.
fn crafted() -> Vec<String> {
    vec![
        meta(),
        r#"{ "type" : "hit" , "aoi" : { "seq" : 1 , "run" : "R" } , "x" : 1 }"#.to_string(),
        r#"{"aoi":{"seq":2,"run":"R"},"type":"hit","x":2}"#.to_string(),
        r#"{"type":"hit","x":3,"aoi":{"seq":3,"run":"R"}}"#.to_string(),
        r#"{"type":"hit","aoi":{"seq":4,"run":"R"}}"#.to_string(),
        r#"{"type":"hit","data":{"aoi":1},"aoi":{"seq":5,"run":"R"},"list":[{"aoi":2}]}"#.to_string(),
        r#"{"type":"hit","s":"\"aoi\":{\"seq\":9}","aoi":{"seq":6,"run":"R"},"t":"aoi"}"#.to_string(),
        r#"{"type":"hit","aoi":{"seq":7,"run":"R"},"n":1.50e+3,"big":1E400,"i":1180591620717411303424,"e":"\u00e9\ud800"}"#.to_string(),
        r#"{"type":"hit","x":1,"x":2,"aoi":{"seq":8,"run":"R","t":3},"y":[1,2]}"#.to_string(),
        "{\"type\":\"hit\",\t\"aoi\":{\"seq\":9,\"run\":\"R\"}\t,\"tab\":true}\r".to_string(),
        ok_summary(10, 9),
    ]
}

/// `out` is `input` with one contiguous piece cut, and that piece is the
/// `aoi` member and one comma. Checked without aoitap's splice: try every
/// place the piece could have stood, and parse it.
fn assert_only_aoi_removed(input: &str, out: &str) {
    let (a, b) = (input.as_bytes(), out.as_bytes());
    assert!(b.len() < a.len(), "nothing removed from {input}");
    let n = a.len() - b.len();
    let is_member = |cut: &[u8]| {
        let Ok(cut) = std::str::from_utf8(cut) else {
            return false;
        };
        let t = cut.trim();
        let t = match (t.strip_prefix(','), t.strip_suffix(',')) {
            (Some(rest), None) | (None, Some(rest)) => rest,
            (None, None) => t,
            (Some(_), Some(_)) => return false,
        };
        matches!(serde_json::from_str(&format!("{{{t}}}")), Ok(Value::Object(m)) if m.len() == 1 && m.contains_key("aoi"))
            || t.contains("1E400") && t.trim_start().starts_with(r#""aoi""#)
    };
    let found =
        (0..=b.len()).any(|k| a[..k] == b[..k] && a[k + n..] == b[k..] && is_member(&a[k..k + n]));
    assert!(
        found,
        "not exactly the aoi member and one comma removed:\n  in:  {input}\n  out: {out}"
    );
    // What is left is the same object without aoi (where serde_json can
    // read it: it refuses 1E400, which aoitap rightly accepts).
    let before: Result<Value, _> = serde_json::from_str(input.trim_end_matches('\r'));
    if let Ok(Value::Object(mut m)) = before {
        m.remove("aoi");
        let after: Value =
            serde_json::from_str(out.trim_end_matches('\r')).expect("output is JSON");
        assert_eq!(after, Value::Object(m), "{input}");
    }
}

fn strip(args: &[&str], input: &[u8]) -> Out {
    let mut a = vec!["strip-envelope"];
    a.extend_from_slice(args);
    run(&a, input)
}

#[test]
fn only_the_envelope_goes() {
    let mut inputs: Vec<Vec<u8>> = vec![lines(&crafted())];
    for f in std::fs::read_dir(fixture("streams")).unwrap() {
        let p = f.unwrap().path();
        // AFDATA streams give payloads, not lines (tests/protocols.rs).
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.extension().is_some_and(|e| e == "jsonl") && !name.starts_with("afdata") {
            inputs.push(std::fs::read(p).unwrap());
        }
    }
    for input in inputs {
        let out = strip(&["--keep-framework", "-q"], &input);
        let text = String::from_utf8_lossy(&input);
        // The events, in order: the complete lines that are objects with a type.
        let events: Vec<&str> = text
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .map(|l| l.trim_end_matches('\n'))
            .filter(|l| {
                let v: Option<Value> = serde_json::from_str(l.trim_end_matches('\r')).ok();
                v.is_some_and(|v| v["type"].is_string()) || l.contains("1E400")
            })
            .collect();
        let got: Vec<&str> = out.stdout.split_terminator('\n').collect();
        assert_eq!(got.len(), events.len(), "{}", out.stdout);
        for (i, o) in events.iter().zip(&got) {
            if i.contains(r#""aoi":"#) || i.contains(r#""aoi" :"#) {
                assert_only_aoi_removed(i, o);
            } else {
                assert_eq!(i, o);
            }
        }
    }
}

#[test]
fn framework_events_are_dropped_unless_kept() {
    let out = strip(&["-q"], &lines(&crafted()));
    assert_eq!(out.stdout.lines().count(), 9);
    assert!(!out.stdout.contains("aoi:"));
    for line in out.stdout.lines() {
        // Keys only: values such as 1E400 are past what serde_json's
        // numbers hold.
        let keys: std::collections::HashMap<String, serde::de::IgnoredAny> =
            serde_json::from_str(line).unwrap();
        assert!(!keys.contains_key("aoi"), "envelope left in {line}");
    }
}

#[test]
fn type_and_run_select() {
    let mut input = good(2);
    input.insert(2, ev(2, "entry", r#""p":1"#));
    input.pop();
    input.push(ok_summary(4, 3));
    let out = strip(&["--type", "entry", "-q"], &lines(&input));
    assert_eq!(out.stdout, "{\"type\":\"entry\",\"p\":1}\n");
    let two: Vec<String> = good(1)
        .iter()
        .map(|l| l.replace(r#""run":"R""#, r#""run":"S""#))
        .collect();
    let mut both = good(1);
    both.extend(two);
    let out = strip(&["--run", "S", "--multi-run", "-q"], &lines(&both));
    assert_eq!(out.stdout, "{\"type\":\"hit\",\"id\":1}\n");
    assert_eq!(out.code, 0);
}

#[test]
fn bad_lines_are_findings_not_output() {
    let mut input = good(2);
    input.insert(2, "{not json".to_string());
    let out = strip(&["--output", "jsonl"], &lines(&input));
    assert_eq!(out.stdout.lines().count(), 2);
    assert!(
        out.stderr.contains(r#""rule":"json.invalid""#),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 65);
}

#[test]
fn the_verdict_survives_in_the_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let failed = dir.path().join("failed.jsonl");
    std::fs::write(
        &failed,
        lines(&[
            meta(),
            hit(1),
            summary(
                2,
                r#""ok":false,"reason":"failed","event_count":3,"count":1"#,
            ),
        ]),
    )
    .unwrap();
    for (file, exit, hits) in [
        (fixture("streams/truncated-last-line.jsonl"), 65, 5),
        (failed, 1, 1),
        (fixture("streams/retryable-failure.jsonl"), 75, 1),
    ] {
        let out = dir.path().join("out");
        let status = Command::new("bash")
            .args([
                "-o",
                "pipefail",
                "-c",
                "\"$A\" strip-envelope -q < \"$IN\" | cat > \"$OUT\"",
            ])
            .env("A", bin())
            .env("IN", &file)
            .env("OUT", &out)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(exit), "{}", file.display());
        let written = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            written
                .lines()
                .filter(|l| l.contains(r#""type":"hit""#))
                .count(),
            hits,
            "{written}"
        );
    }
}

/// A filter is quiet when all is well: nothing on stderr for a passing
/// stream; findings and the verdict when it fails.
#[test]
fn quiet_on_success() {
    let out = run(&["strip-envelope"], &lines(&good(3)));
    assert_eq!(out.code, 0);
    assert_eq!(out.stderr, "", "strip-envelope spoke on success");
    let mut cut = good(3);
    cut.pop();
    let out = run(&["strip-envelope"], &lines(&cut));
    assert_eq!(out.code, 65);
    assert!(
        out.stderr.contains("error[summary.missing]"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Result: FAIL"), "{}", out.stderr);
}
