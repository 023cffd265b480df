//! `verify --schema FILE` (docs/contract.md §3.5): every event against the producer's
//! JSON Schema, in 2020-12 (if/then on type) and draft-07 (oneOf over
//! definitions); bad schemas are usage errors; nothing is fetched.

use crate::util::*;

fn schema_2020() -> String {
    fixture("schemas/events.schema.json")
        .to_string_lossy()
        .into_owned()
}

fn schema_07() -> String {
    fixture("schemas/events.draft07.json")
        .to_string_lossy()
        .into_owned()
}

/// A good stream with `hit`s 1 and 3 replaced by these lines.
fn with_hits(one: &str, three: &str) -> Vec<u8> {
    let mut g = good(4);
    g[1] = ev(1, "hit", one);
    g[3] = ev(3, "hit", three);
    lines(&g)
}

fn schema_findings(out: &Out) -> Vec<serde_json::Value> {
    out.findings()
        .into_iter()
        .filter(|f| f["rule"] == "event.schema-invalid")
        .collect()
}

#[test]
fn a_conforming_stream_passes_both_drafts() {
    let input = with_hits(r#""id":1,"rank":1,"title":"a""#, r#""id":3,"size":1.5"#);
    for schema in [schema_2020(), schema_07()] {
        let out = verify(&["--schema", &schema], &input);
        assert_eq!(out.code, 0, "{schema}: {}", out.stdout);
        assert!(out.findings().is_empty(), "{schema}: {:?}", out.rules());
    }
}

#[test]
fn a_wrong_type_and_an_undeclared_field_name_the_branch_path_and_field() {
    let input = with_hits(r#""id":1,"rank":"1""#, r#""id":3,"score":0.5"#);
    for schema in [schema_2020(), schema_07()] {
        let out = verify(&["--schema", &schema], &input);
        assert_eq!(out.code, 65, "{schema}: {}", out.stdout);
        let found = schema_findings(&out);
        assert_eq!(found.len(), 2, "{schema}: {found:?}");

        let rank = &found[0];
        assert_eq!(rank["line_number"], 2);
        assert_eq!(rank["instance_path"], "/rank");
        assert_eq!(rank["keyword"], "type");
        let msg = rank["message"].as_str().unwrap();
        assert!(
            msg.starts_with(r#"hit: /rank: "1" is not of type "integer""#),
            "{schema}: {msg}"
        );
        assert!(
            rank["schema_path"]
                .as_str()
                .unwrap()
                .ends_with("/properties/rank/type"),
            "{rank}"
        );

        let extra = &found[1];
        assert_eq!(extra["line_number"], 4);
        assert_eq!(extra["instance_path"], "");
        assert_eq!(extra["keyword"], "additionalProperties");
        let msg = extra["message"].as_str().unwrap();
        assert!(
            msg.starts_with("hit: undeclared field score"),
            "{schema}: {msg}"
        );
        assert!(!msg.contains("matched"), "no opaque oneOf message: {msg}");
    }
}

#[test]
fn one_finding_per_line_with_the_count_of_the_others() {
    let input = with_hits(r#""id":"x","rank":0,"size":"big""#, r#""id":3"#);
    let out = verify(&["--schema", &schema_2020()], &input);
    let found = schema_findings(&out);
    assert_eq!(found.len(), 1, "{found:?}");
    let msg = found[0]["message"].as_str().unwrap();
    assert!(msg.contains("; 2 more errors in this event"), "{msg}");
}

#[test]
fn framework_events_are_validated_too() {
    // The meta lacks the schema's required `tool`; the summary its `ok`.
    let mut g = good(1);
    g[0] = ev(0, "aoi:meta", r#""schema_name":"s""#);
    let out = verify(&["--schema", &schema_2020()], &lines(&g));
    let found = schema_findings(&out);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["line_number"], 1);
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("aoi:meta: missing required field tool"),
        "{}",
        found[0]
    );
}

#[test]
fn escaped_keys_and_values_are_validated_decoded() {
    // "r\u0061nk" is rank, "\u0031" is the string "1": a type error, found
    // on the decoded value, as every other rule is (docs/contract.md §3.2).
    let input = with_hits(r#""id":1,"r\u0061nk":"\u0031""#, r#""id":3"#);
    let out = verify(&["--schema", &schema_2020()], &input);
    let found = schema_findings(&out);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["instance_path"], "/rank");
}

#[test]
fn numbers_past_f64_and_lone_surrogates_are_no_crash_and_no_false_finding() {
    let input = with_hits(r#""id":1,"size":1e400"#, r#""id":3,"title":"\ud800""#);
    let out = verify(&["--schema", &schema_2020()], &input);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.findings().is_empty(), "{:?}", out.rules());
    // An integer past u64 is still an integer.
    let big = with_hits(r#""id":123456789012345678901234567890"#, r#""id":3"#);
    assert_eq!(verify(&["--schema", &schema_2020()], &big).code, 0);
}

#[test]
fn nesting_past_the_validators_depth_is_said_not_guessed() {
    let deep = format!(
        r#""id":1,"title":"t","x":{}{}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let mut g = good(1);
    g[1] = ev(1, "hit", &deep);
    let out = verify(&["--schema", &schema_2020()], &lines(&g));
    assert_eq!(out.rules(), ["event.schema-unchecked"], "{}", out.stdout);
    assert_eq!(out.code, 0, "a warning: the run still passes");
    let strict = verify(&["--schema", &schema_2020(), "--strict"], &lines(&g));
    assert_eq!(strict.code, 65);
}

#[test]
fn other_protocols_are_validated_event_by_event() {
    let schema = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        schema.path(),
        r#"{"type":"object","properties":{"kind":{"enum":["progress","result","error"]}},"required":["kind"]}"#,
    )
    .unwrap();
    let input = lines(&[
        r#"{"kind":"progress","progress":{"n":1}}"#,
        r#"{"kind":"result","result":{"ok":1}}"#,
    ]);
    let s = schema.path().to_str().unwrap();
    assert_eq!(verify(&["--schema", s], &input).code, 0);
    let bad = lines(&[
        r#"{"kind":"progress","progress":{"n":1}}"#,
        r#"{"kind":"result","result":{"ok":1}}"#,
        r#"{"kind":"log","log":{}}"#,
    ]);
    let out = verify(&["--schema", s], &bad);
    assert_eq!(
        schema_findings(&out)
            .iter()
            .map(|f| f["line_number"].clone())
            .collect::<Vec<_>>(),
        [3]
    );
}

#[test]
fn bad_schemas_are_usage_errors_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("broken.json", r#"{"type":"#, "is not JSON"),
        ("invalid.json", r#"{"type":12}"#, "not a valid JSON Schema"),
        (
            "remote.json",
            r#"{"$ref":"https://schemas.example.com/other.json"}"#,
            "never fetches",
        ),
        (
            "file.json",
            r#"{"$ref":"file:///etc/passwd"}"#,
            "never fetches",
        ),
        (
            "meta.json",
            r#"{"$schema":"https://example.com/my-meta"}"#,
            "unknown $schema",
        ),
        ("nowhere.json", r##"{"$ref":"#/$defs/nope"}"##, "nope"),
    ];
    // 1.4 KB whose $refs double per level: 2^20 subschemas (0.1.0 spent
    // 74 s and 4 GB on one small file).
    let mut defs = serde_json::Map::new();
    defs.insert("d0".into(), serde_json::json!({"type": "string"}));
    for i in 1..20 {
        let r = serde_json::json!({"$ref": format!("#/$defs/d{}", i - 1)});
        defs.insert(
            format!("d{i}"),
            serde_json::json!({"anyOf": [r.clone(), r]}),
        );
    }
    let doubling = serde_json::json!({"$defs": defs, "$ref": "#/$defs/d19"}).to_string();
    // The same through $anchor names and a percent-encoded pointer.
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        let r = serde_json::json!({"$ref": format!("#d{}", i + 1)});
        let mut d = if i == 29 {
            serde_json::json!({"type": "integer"})
        } else {
            serde_json::json!({"allOf": [r.clone(), r]})
        };
        d["$anchor"] = format!("d{i}").into();
        defs.insert(format!("d{i}"), d);
    }
    let anchored = serde_json::json!({"$defs": defs, "properties": {"v": {"$ref": "#d0"}}});
    let anchored = anchored.to_string();
    let encoded = doubling.replace("#/$defs/", "#/%24defs/");
    let mut cases = cases.to_vec();
    cases.push(("doubling.json", &doubling, "expand to more than"));
    cases.push(("anchored.json", &anchored, "expand to more than"));
    cases.push(("encoded.json", &encoded, "expand to more than"));
    // A chain of 50,000 refs: refused, never a stack overflow.
    let mut defs = serde_json::Map::new();
    for i in 0..50_000 {
        defs.insert(
            format!("d{i}"),
            serde_json::json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert("d50000".into(), serde_json::json!({"type": "integer"}));
    let chain = serde_json::json!({"$defs": defs, "$ref": "#/$defs/d0"}).to_string();
    cases.push(("chain.json", &chain, "nest past"));
    for (name, text, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        // stdin never ends: the error must come before reading it.
        let (code, out) = sh(&format!(
            "\"$A\" verify --schema '{p}' < <(sleep 30 2>/dev/null)"
        ));
        assert_eq!(code, 64, "{name}: {out}");
        assert!(out.contains(says), "{name}: {out}");
        assert_eq!(out.lines().count(), 3, "one message and clap's hint: {out}");
    }
    let out = verify(&["--schema", "-"], b"");
    assert_eq!(out.code, 64);
    assert!(out.stderr.contains("standard input"), "{}", out.stderr);
    let missing = verify(&["--schema", "/nonexistent/schema.json"], b"");
    assert_eq!(missing.code, 64);
    assert!(missing.stderr.contains("cannot read"), "{}", missing.stderr);
    // With --output jsonl, the usage error is aoitap's own failed run.
    let s = missing.summary();
    assert_eq!(s["ok"], false);
    assert_eq!(s["reason"], "failed");
}

#[test]
fn a_process_substitution_path_works() {
    let stream = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(stream.path(), lines(&good(1))).unwrap();
    let (code, out) = sh(&format!(
        "\"$A\" verify --schema <(cat '{}') '{}'",
        schema_2020(),
        stream.path().display()
    ));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn pipe_and_file_agree_and_relay_is_untouched() {
    // Validation runs on whichever thread parses a batch: many batches,
    // read in small and large pieces, must give the same findings.
    let mut g = vec![meta()];
    for i in 1..=20_000u64 {
        g.push(if i % 997 == 0 {
            ev(i, "hit", r#""id":"not a number""#)
        } else {
            hit(i)
        });
    }
    g.push(ok_summary(20_001, 20_000));
    let input = lines(&g);
    let schema = schema_2020();
    let piped = verify(&["--schema", &schema], &input);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &input).unwrap();
    let direct = crate::util::run(
        &[
            "verify",
            "--output",
            "jsonl",
            "--schema",
            &schema,
            file.path().to_str().unwrap(),
        ],
        b"",
    );
    let lines_of = |o: &Out| {
        schema_findings(o)
            .iter()
            .map(|f| f["line_number"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    let want: Vec<u64> = (1..=20_000)
        .filter(|i| i % 997 == 0)
        .map(|i| i + 1)
        .collect();
    assert_eq!(lines_of(&piped), want);
    assert_eq!(lines_of(&direct), want);
    assert_eq!(piped.code, direct.code);
    let relay = crate::util::run(&["verify", "--relay", "-q", "--schema", &schema], &input);
    assert_eq!(relay.stdout.as_bytes(), &input[..]);
    assert_eq!(relay.code, 65);
}

fn schema_file(text: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), text).unwrap();
    f
}

#[test]
fn schema_messages_never_quote_a_secret() {
    let s = schema_file(
        r#"{"properties":{"api_secret":{"enum":["x"]},"db_url":{"maxLength":3},"token":{"maxLength":1}}}"#,
    );
    let p = s.path().to_str().unwrap();
    for (field, extra) in [
        (r#""api_secret":"hunter2""#, vec![]),
        (r#""db_url":"postgres://u:hunter2@h/db""#, vec![]),
        (r#""token":"hunter2""#, vec!["--secret-name", "token"]),
    ] {
        let input = with_hits(&format!(r#""id":1,{field}"#), r#""id":3"#);
        let mut args = vec!["--schema", p];
        args.extend(extra);
        let out = verify(&args, &input);
        assert!(!schema_findings(&out).is_empty(), "{field}: {}", out.stdout);
        assert!(!out.stdout.contains("hunter2"), "{field}: {}", out.stdout);
    }
}

#[test]
fn a_pattern_the_regex_engine_gives_up_on_is_unchecked_not_invalid() {
    // Backtracking past fancy-regex's limit; the string does match.
    let s = schema_file(r#"{"properties":{"title":{"pattern":"^(?:(a|a)*\\1x)|!"}}}"#);
    let input = with_hits(
        r#""id":1,"title":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!""#,
        r#""id":3"#,
    );
    let out = verify(&["--schema", s.path().to_str().unwrap()], &input);
    assert_eq!(out.rules(), ["event.schema-unchecked"], "{}", out.stdout);
    assert_eq!(out.code, 0);
}

#[test]
fn a_schema_naming_standard_input_is_refused_however_spelled() {
    for path in ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"] {
        let (code, err) = sh(&format!("echo '{{}}' | \"$A\" verify --schema {path}"));
        assert_eq!(code, 64, "{path}: {err}");
        assert!(err.contains("standard input"), "{path}: {err}");
    }
}

#[test]
fn a_definition_for_several_types_is_still_the_types_branch() {
    let s = schema_file(
        r##"{"$defs":{"meta":{"properties":{"type":{"const":"aoi:meta"}}},"sum":{"properties":{"type":{"const":"aoi:summary"}}},
            "found":{"properties":{"type":{"enum":["hit","miss"]},"id":{"type":"integer"}},"required":["type"]}},
            "oneOf":[{"$ref":"#/$defs/meta"},{"$ref":"#/$defs/sum"},{"$ref":"#/$defs/found"}]}"##,
    );
    let input = with_hits(r#""id":"x""#, r#""id":3"#);
    let out = verify(&["--schema", s.path().to_str().unwrap()], &input);
    let found = schema_findings(&out);
    assert_eq!(found.len(), 1, "{found:?}");
    let msg = found[0]["message"].as_str().unwrap();
    assert!(msg.starts_with(r#"hit: /id: "x" is not of type"#), "{msg}");
}

/// A large schema of the usual shape (200 event types sharing a
/// 100-property envelope, chosen by `oneOf`) is not mistaken for a costly
/// one: `properties` and `$defs` are not summed as if all applied at once.
#[test]
fn a_large_ordinary_schema_is_accepted() {
    let mut defs = serde_json::Map::new();
    let props: serde_json::Map<String, serde_json::Value> = (0..100)
        .map(|i| (format!("p{i}"), serde_json::json!({"type": "string"})))
        .collect();
    defs.insert(
        "envelope".into(),
        serde_json::json!({"type": "object", "properties": props}),
    );
    for t in 0..200 {
        defs.insert(
            format!("ev{t}"),
            serde_json::json!({"allOf": [{"$ref": "#/$defs/envelope"}],
                               "properties": {"type": {"const": format!("ev{t}")}}}),
        );
    }
    let one_of: Vec<serde_json::Value> = (0..200)
        .map(|t| serde_json::json!({"$ref": format!("#/$defs/ev{t}")}))
        .collect();
    let schema = serde_json::json!({"$defs": defs, "oneOf": one_of});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.json");
    std::fs::write(&path, schema.to_string()).unwrap();
    let out = verify(&["--schema", path.to_str().unwrap()], &lines(&good(1)));
    assert_ne!(out.code, 64, "{}", out.stderr);
}
