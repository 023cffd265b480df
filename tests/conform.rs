//! aoitap as a conforming AOI-CLI tool: its schema holds its real output
//! (OKF-style golden tests), and one test per applicable check of spec
//! §18.2, named after the check.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::util::*;

fn schema() -> Value {
    let out = run(&["schema", "--output", "json"], b"");
    assert_eq!(out.code, 0);
    serde_json::from_str(&out.stdout).unwrap()
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).expect("the schema compiles")
}

/// The schema of one `$defs` entry, as a document of its own.
fn sub_schema(schema: &Value, def: &str) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": schema["$defs"],
        "$ref": format!("#/$defs/{def}"),
    })
}

fn assert_valid(v: &jsonschema::Validator, event: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(event)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {event}\n{errors:?}");
}

/// The jsonl report of every stream command on `file` (good or bad).
fn every_report(file: &std::path::Path) -> Vec<(String, String)> {
    let f = file.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let split_dir = dir.path().join("split");
    let mut out = vec![];
    for cmd in ["verify", "summarize", "reconcile"] {
        out.push((
            cmd.to_string(),
            run(&[cmd, "--output", "jsonl", f], b"").stdout,
        ));
    }
    let strip = run(&["strip-envelope", "--output", "jsonl", f], b"");
    out.push(("strip-envelope".to_string(), strip.stderr));
    let split = run(
        &[
            "split-by-run",
            "--output",
            "jsonl",
            "--dir",
            split_dir.to_str().unwrap(),
            f,
        ],
        b"",
    );
    out.push(("split-by-run".to_string(), split.stdout));
    out
}

fn inputs() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(fixture("streams"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    v.sort();
    v
}

fn parse_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn schema_holds_every_commands_real_output() {
    let s = schema();
    let v = validator(&s);
    let mut seen_types = std::collections::BTreeSet::new();
    for file in inputs() {
        for (cmd, text) in every_report(&file) {
            for event in parse_lines(&text) {
                seen_types.insert(event["type"].as_str().unwrap().to_string());
                assert_valid(&v, &event, &format!("{cmd} {}", file.display()));
            }
        }
        let json = run(
            &["summarize", "--output", "json", file.to_str().unwrap()],
            b"",
        );
        let doc: Value = serde_json::from_str(&json.stdout).unwrap();
        assert_valid(
            &validator(&sub_schema(&s, "summarize_document")),
            &doc,
            "summarize --output json",
        );
    }
    // A usage error and a cancelled run are output too.
    for event in parse_lines(&run(&["verify", "--output", "jsonl", "--no-such"], b"").stdout) {
        assert_valid(&v, &event, "usage error");
    }
    for t in [
        "aoi:meta",
        "aoi:summary",
        "aoi:error",
        "finding",
        "run",
        "gap",
        "run_summary",
    ] {
        assert!(seen_types.contains(t), "no real {t} event was checked");
    }
}

/// aoitap holds its own output to its own schema with its own `verify
/// --schema` (docs/contract.md §3.5): every command's jsonl, over failing inputs too.
#[test]
fn own_verify_schema_passes_every_commands_own_output() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("aoitap.schema.json");
    std::fs::write(&schema, run(&["schema"], b"").stdout).unwrap();
    let schema = schema.to_str().unwrap();
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for (k, file) in inputs().iter().enumerate() {
        for (cmd, text) in every_report(file) {
            let report = dir.path().join(format!("{k}-{cmd}.jsonl"));
            std::fs::write(&report, &text).unwrap();
            let out = run(
                &[
                    "verify",
                    "--output",
                    "jsonl",
                    "--schema",
                    schema,
                    report.to_str().unwrap(),
                ],
                b"",
            );
            let invalid: Vec<_> = out
                .findings()
                .into_iter()
                .filter(|f| f["rule"].as_str().unwrap().starts_with("event.schema"))
                .collect();
            assert!(
                invalid.is_empty(),
                "{cmd} on {}: {invalid:?}",
                file.display()
            );
            // The report is itself a conforming run: passed or failed
            // (retryably, when it says the input did), never
            // nonconforming.
            assert!(
                matches!(out.code, 0 | 1 | 75),
                "{cmd} on {}: exit {}: {}",
                file.display(),
                out.code,
                out.stdout
            );
            *checked.entry(cmd).or_default() += 1;
        }
    }
    assert_eq!(checked.len(), 5, "{checked:?}");
}

#[test]
fn the_schema_is_closed_where_the_shape_is_fixed() {
    let s = schema();
    let v = validator(&s);
    let out = verify(&[], &lines(&[meta(), hit(5)]));
    let events = out.events();
    let finding = events
        .iter()
        .find(|e| e["type"] == "finding")
        .unwrap()
        .clone();
    assert!(v.is_valid(&finding));
    let mut extra = finding.clone();
    extra["surprise"] = json!(1);
    assert!(
        !v.is_valid(&extra),
        "an undeclared top-level field must fail"
    );
    let mut wrong = finding.clone();
    wrong["line_number"] = json!("two");
    assert!(!v.is_valid(&wrong), "a wrong field type must fail");
    let mut summary = events.last().unwrap().clone();
    assert!(v.is_valid(&summary));
    summary["vendor"] = json!(true);
    assert!(
        !v.is_valid(&summary),
        "framework events carry only spec-defined fields (§8.1)"
    );
    let mut no_reason = events.last().unwrap().clone();
    no_reason.as_object_mut().unwrap().remove("reason");
    assert!(!v.is_valid(&no_reason), "ok:false needs a reason");
    let mut bad_rule = finding;
    bad_rule["rule"] = json!("no.such-rule");
    assert!(!v.is_valid(&bad_rule));
    // A type aoitap does not write is an upstream's domain event, which
    // `upgrade` forwards under aoitap's envelope (contract §1.6): valid with
    // the envelope, never without it, and never in the aoi: namespace.
    assert!(v.is_valid(&json!({"type": "mystery", "aoi": {"seq": 0, "run": "R"}})));
    assert!(!v.is_valid(&json!({"type": "mystery"})));
    assert!(!v.is_valid(&json!({"type": "aoi:mystery", "aoi": {"seq": 0, "run": "R"}})));
}

#[test]
fn check_01_discovery_needs_no_credentials_network_or_input() {
    let s = schema();
    assert!(
        jsonschema::meta::validate(&s).is_ok(),
        "valid JSON Schema 2020-12"
    );
    let id = s["$id"].as_str().unwrap();
    assert!(
        id.starts_with("https://") && !id.starts_with("file:"),
        "{id}"
    );
    for (args, also) in [
        (["schema", "--output", "json"], "--schema"),
        (["capabilities", "--output", "json"], "--capabilities"),
    ] {
        let out = Command::new(bin())
            .args(args)
            .env_clear()
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success());
        let flag = Command::new(bin())
            .arg(also)
            .env_clear()
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            out.stdout, flag.stdout,
            "{also} answers as the subcommand (§3)"
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(doc.is_object());
    }
    let caps: Value = serde_json::from_str(&run(&["capabilities"], b"").stdout).unwrap();
    let names: Vec<&str> = caps["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for c in [
        "verify",
        "strip-envelope",
        "split-by-run",
        "summarize",
        "reconcile",
        "schema",
        "capabilities",
    ] {
        assert!(names.contains(&c), "{c}");
    }
    assert_eq!(caps["schemas"][0]["name"], "dev.aoitap.events");
    assert_eq!(run(&["schema", "--name", "com.other"], b"").code, 64);
}

#[test]
fn check_02_machine_mode_is_only_typed_json_objects() {
    for file in inputs() {
        for (cmd, text) in every_report(&file) {
            assert!(!text.contains('\x1b'), "{cmd}: ANSI in machine mode");
            for e in parse_lines(&text) {
                assert!(e.is_object() && e["type"].is_string(), "{cmd}: {e}");
            }
        }
    }
    let colored = run(
        &["verify", "--output", "jsonl", "--color", "always"],
        &lines(&[meta()]),
    );
    assert!(!colored.stdout.contains('\x1b'));
}

#[test]
fn check_03_finite_success_and_eof_without_summary() {
    let ok = verify(&[], &lines(&good(1)));
    assert_eq!(ok.code, 0);
    assert_eq!(ok.summary()["ok"], true);
    let cut = verify(&[], &lines(&[meta(), hit(1)]));
    assert_ne!(cut.code, 0);
    assert!(cut.has_rule("summary.missing"));
}

#[test]
fn check_04_framework_events_validate() {
    let v = validator(&schema());
    let mut framework = 0;
    for file in inputs() {
        for (_, text) in every_report(&file) {
            for e in parse_lines(&text)
                .into_iter()
                .filter(|e| e["type"].as_str().unwrap().starts_with("aoi:"))
            {
                assert_valid(&v, &e, "framework event");
                framework += 1;
            }
        }
    }
    assert!(framework > 100);
}

#[test]
fn check_05_usage_errors_and_error_fields() {
    for args in [
        &["verify", "--bogus"][..],
        &["nonsense"],
        &["verify", "--limit", "x"],
        &["verify", "--allow", "no.rule"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.code, 64, "{args:?}");
        assert!(out.stderr.contains("--help"), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "no prose on stdout: {}", out.stdout);
    }
    let out = run(&["verify", "--output", "jsonl", "--bogus"], b"");
    assert_eq!(out.code, 64);
    let events = out.events();
    let err = events.iter().find(|e| e["type"] == "aoi:error").unwrap();
    assert_eq!(err["category"], "usage");
    for k in ["category", "code", "message", "retryable"] {
        assert!(err.get(k).is_some(), "{k}");
    }
    for file in inputs() {
        for (_, text) in every_report(&file) {
            for e in parse_lines(&text)
                .into_iter()
                .filter(|e| e["type"] == "aoi:error")
            {
                assert!(e["retryable"].is_boolean());
                assert!(e["retryable"] == true || e.get("retry_after_ms").is_none());
                assert!(!matches!(
                    e["category"].as_str(),
                    Some("partial" | "temporary")
                ));
            }
        }
    }
}

#[test]
fn check_09_secret_looking_args_are_not_echoed() {
    let out = verify(&["--expect-schema", "hunter2-token@1"], &lines(&good(1)));
    let meta = &out.events()[0];
    assert_eq!(meta["type"], "aoi:meta");
    assert!(meta.get("args").is_none());
    assert!(!meta.to_string().contains("hunter2"), "{meta}");
}

#[test]
fn check_10_pipe_close_is_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\n".repeat(100_000)).unwrap();
    for cmd in ["verify", "summarize", "reconcile"] {
        let (code, stderr) = sh(&format!(
            "\"$A\" {cmd} --output jsonl '{}' | head -1 > /dev/null",
            bad.display()
        ));
        assert_eq!(code, 141, "{cmd}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{cmd}: {stderr}"
        );
    }
    // SIGINT/SIGTERM: tests/pipe.rs (sigint_cancels_with_130_and_a_cancelled_summary).
}

#[test]
fn check_11_limit_reports_truncated() {
    let input = lines(&[meta(), "{".into(), "{".into(), "{".into()]);
    let out = verify(&["--limit", "1"], &input);
    assert_eq!(out.findings().len(), 1);
    assert_eq!(out.summary()["truncated"], true);
    let all = verify(&[], &input);
    assert_eq!(all.summary()["truncated"], false);
}

#[test]
fn check_12_malformed_lines_are_handled_as_declared() {
    let caps: Value = serde_json::from_str(&run(&["capabilities"], b"").stdout).unwrap();
    let verify_caps = caps["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "verify")
        .unwrap()
        .clone();
    assert!(
        verify_caps["malformed_input"]
            .as_str()
            .unwrap()
            .starts_with("per-line tolerant")
    );
    // Tolerant: the bad line is a finding and what follows is still read.
    let out = verify(&[], &lines(&[meta(), "{oops".into(), hit(2), hit(9)]));
    assert!(
        out.has_rule("json.invalid") && out.has_rule("seq.gap"),
        "{:?}",
        out.rules()
    );
}

#[test]
fn check_13_schema_version_reported_and_honoured() {
    let out = verify(&[], &lines(&good(1)));
    let meta = &out.events()[0];
    assert_eq!(meta["schema_name"], "dev.aoitap.events");
    assert_eq!(meta["schema_version"], "1.10.0");
    assert_eq!(out.summary()["schema_version"], "1.10.0");
    assert_eq!(run(&["schema", "--schema-version", "1"], b"").code, 0);
    assert_eq!(run(&["schema", "--schema-version", "2"], b"").code, 64);
}

#[test]
fn check_14_one_meta_first_one_summary_last() {
    for file in inputs() {
        for (cmd, text) in every_report(&file) {
            let events = parse_lines(&text);
            let metas = events.iter().filter(|e| e["type"] == "aoi:meta").count();
            let summaries = events.iter().filter(|e| e["type"] == "aoi:summary").count();
            assert_eq!((metas, summaries), (1, 1), "{cmd} {}", file.display());
            assert_eq!(events.first().unwrap()["type"], "aoi:meta");
            assert_eq!(events.last().unwrap()["type"], "aoi:summary");
        }
    }
}

#[test]
fn check_15_seq_contiguous_and_reconciled() {
    for file in inputs() {
        for (cmd, text) in every_report(&file) {
            let events = parse_lines(&text);
            let run_id = events[0]["aoi"]["run"].clone();
            for (i, e) in events.iter().enumerate() {
                assert_eq!(e["aoi"]["seq"], i as u64, "{cmd}");
                assert_eq!(e["aoi"]["run"], run_id, "{cmd}");
            }
            assert_eq!(
                events.last().unwrap()["event_count"],
                events.len() as u64,
                "{cmd}"
            );
            // And aoitap itself finds nothing to report in it.
            let again = verify(&["--strict"], text.as_bytes());
            assert!(
                again.findings().is_empty(),
                "{cmd} {}: {:?}",
                file.display(),
                again.rules()
            );
            assert!(matches!(again.code, 0 | 1 | 75), "{cmd}: {}", again.code);
        }
    }
}

#[test]
fn check_16_upstream_meta_and_summary_are_not_forwarded() {
    let upstream = std::fs::read(fixture("streams/retryable-failure.jsonl")).unwrap();
    let out = verify(&[], &upstream);
    let events = out.events();
    assert_eq!(events.iter().filter(|e| e["type"] == "aoi:meta").count(), 1);
    assert_eq!(events[0]["tool"], "aoitap");
    assert!(events.iter().all(|e| e["type"] != "aoi:error"
        || e.get("origin").is_some()
        || e["category"] == "validation"));
    let s = out.summary();
    assert_eq!(s["tool"], "aoitap");
    assert_eq!(s["upstream"]["tool"], "outline");
    assert_eq!(
        s["caused_by"],
        json!({"origin": "outline", "category": "rate_limited", "code": "UPSTREAM_RATE_LIMIT", "retryable": true, "retry_after_ms": 4500})
    );
    assert_eq!(s["warning_count"], 0);
    assert_eq!(s["error_count"], 1, "upstream errors are counted (§8.3)");
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell], b"");
        assert_eq!(out.code, 0);
        for word in ["verify", "strip-envelope", "max-line-bytes"] {
            assert!(out.stdout.contains(word), "{shell}: {word}");
        }
    }
}

#[test]
fn every_subcommand_help_has_a_purpose_and_an_example() {
    let root = aoitap::cli::command();
    for sub in root.get_subcommands() {
        let out = run(&[sub.get_name(), "--help"], b"");
        assert_eq!(out.code, 0, "{}", sub.get_name());
        assert!(
            sub.get_about().is_some(),
            "{} has no one-line purpose",
            sub.get_name()
        );
        assert!(
            out.stdout.contains("Example"),
            "{} --help has no example",
            sub.get_name()
        );
    }
}

/// A command that cannot start (a missing reference, an uncreatable
/// directory, a report that cannot be written) still gives a jsonl reader
/// one whole stream, with the status as the error's (docs/contract.md §5.1): never an
/// empty stdout, never a second meta.
#[test]
fn an_error_before_the_report_is_still_a_whole_stream() {
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, b"").unwrap();
    let under_file = blocked.join("sub");
    let under_file = under_file.to_str().unwrap();
    let cases: [(&[&str], i32, &str); 4] = [
        (
            &["reconcile", "--against", "/no/such/reference"],
            66,
            "INPUT_NOT_FOUND",
        ),
        (&["split-by-run", "--dir", under_file], 73, "OUTPUT_FAILED"),
        (&["verify", "--report", under_file], 73, "OUTPUT_FAILED"),
        (&["summarize", "--report", under_file], 73, "OUTPUT_FAILED"),
    ];
    for (args, code, error) in cases {
        let mut all = args.to_vec();
        all.extend(["--output", "jsonl"]);
        let out = run(&all, b"");
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        let events = out.events();
        let types: Vec<_> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["aoi:meta", "aoi:error", "aoi:summary"], "{args:?}");
        assert_eq!(events[1]["code"], error, "{args:?}");
        assert_eq!(events[0]["command"], args[0], "{args:?}");
        let again = run(&["verify"], out.stdout.as_bytes());
        assert_eq!(again.code, 1, "{args:?}: own output: {}", again.stdout);
        // Said once on stderr too, for a person.
        assert_eq!(out.stderr.matches("aoitap: ").count(), 1, "{}", out.stderr);
    }
}

/// `capabilities` tells the whole tool (docs/contract.md §3.4), held to the CLI's own
/// list: every subcommand, the outputs its `--output` takes, and how it
/// reads (a command's stdout; or stdin, files, directories, and follow
/// where it follows).
#[test]
fn capabilities_lists_every_subcommand_its_outputs_and_input_modes() {
    let caps: Value = serde_json::from_str(&run(&["capabilities"], b"").stdout).unwrap();
    let listed = caps["commands"].as_array().unwrap();
    let root = aoitap::cli::command();
    let subs: Vec<_> = root
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .collect();
    assert_eq!(listed.len(), subs.len(), "{listed:#?}");
    let strings = |v: &Value| -> Vec<String> {
        let mut v: Vec<String> = v
            .as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    for sub in subs {
        let name = sub.get_name();
        let entry = listed
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not in capabilities"));
        let arg = |id: &str| {
            sub.get_arguments()
                .find(|a| a.get_id() == id && !a.is_hide_set())
        };
        if let Some(output) = arg("output") {
            let mut takes: Vec<String> = output
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            takes.sort();
            assert_eq!(strings(&entry["outputs"]), takes, "{name}");
        }
        let mut modes = vec![];
        if arg("command").is_some() {
            modes.push("command");
        }
        // A FILE operand that takes many takes a directory's files too;
        // one that takes one (upgrade's) does not.
        if let Some(files) = arg("files") {
            modes.extend(["files", "stdin"]);
            if files.get_num_args().is_none_or(|n| n.max_values() > 1) {
                modes.push("directories");
            }
        }
        if arg("follow").is_some() {
            modes.push("follow");
        }
        modes.sort();
        assert_eq!(strings(&entry["input_modes"]), modes, "{name}");
    }
}
