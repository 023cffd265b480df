//! Producer profiles (docs/contract.md §6.3): the agent CLIs' own streams,
//! from fixtures built from each CLI's published types
//! (`fixtures/profiles/SOURCES.md`), judged by every command to one
//! verdict; no built-in passes another producer's stream; a user's own
//! profile file judges a made-up producer.

use std::path::PathBuf;

use crate::util::*;

/// One row of `fixtures/profiles/expected.tsv`.
struct Case {
    file: String,
    profile: String,
    exit: i32,
    /// The findings' rules, but the note `profile.recovered`.
    rules: Vec<String>,
    /// The first object carries the profile's signature.
    detect: bool,
}

impl Case {
    fn path(&self) -> PathBuf {
        fixture("profiles").join(&self.file)
    }

    fn arg(&self) -> String {
        self.path().to_str().unwrap().to_string()
    }
}

fn cases() -> Vec<Case> {
    let table = std::fs::read_to_string(fixture("profiles/expected.tsv")).unwrap();
    table
        .lines()
        .skip(1)
        .map(|row| {
            let f: Vec<&str> = row.split('\t').collect();
            Case {
                file: f[0].to_string(),
                profile: f[1].to_string(),
                exit: f[2].parse().unwrap(),
                rules: match f[3] {
                    "-" => vec![],
                    rules => rules.split(',').map(str::to_string).collect(),
                },
                detect: f[4] == "yes",
            }
        })
        .collect()
}

const BUILT_IN: [&str; 7] = [
    "claude-stream",
    "claude-json",
    "codex-exec",
    "gemini-stream",
    "gemini-json",
    "opencode-json",
    "copilot-json",
];

fn rules_but_notes(out: &Out) -> Vec<String> {
    out.rules()
        .into_iter()
        .filter(|r| r != "profile.recovered")
        .collect()
}

#[test]
fn every_fixture_gets_its_verdict_under_its_profile() {
    let cases = cases();
    assert!(cases.len() >= 70, "{} cases", cases.len());
    for c in &cases {
        let out = run(
            &[
                "verify",
                "--output",
                "jsonl",
                "--profile",
                &c.profile,
                &c.arg(),
            ],
            b"",
        );
        assert_eq!(out.code, c.exit, "{}: {}", c.file, out.stdout);
        assert_eq!(rules_but_notes(&out), c.rules, "{}", c.file);
        let run_event = out.events().into_iter().find(|e| e["type"] == "run");
        assert_eq!(
            run_event.unwrap()["protocol"],
            c.profile.as_str(),
            "{}",
            c.file
        );
        // aoitap's own report conforms: its verify is the report's verdict.
        let own = run(&["verify"], out.stdout.as_bytes());
        assert_ne!(own.code, 65, "{}: {}", c.file, own.stdout);
    }
    // Every CLI's group holds a success, a failure and a cut.
    for p in BUILT_IN {
        let exits: Vec<i32> = cases
            .iter()
            .filter(|c| c.profile == p)
            .map(|c| c.exit)
            .collect();
        for want in [0, 1, 65] {
            assert!(
                exits.contains(&want),
                "{p} has no fixture that exits {want}"
            );
        }
    }
}

#[test]
fn auto_picks_a_profile_only_by_its_signature() {
    for c in cases() {
        let out = run(&["verify", "--output", "jsonl", &c.arg()], b"");
        let protocol = out
            .events()
            .into_iter()
            .find(|e| e["type"] == "run")
            .map(|r| r["protocol"].as_str().unwrap().to_string())
            .unwrap_or_default();
        if c.detect {
            assert_eq!(protocol, c.profile, "{}", c.file);
            assert_eq!(out.code, c.exit, "{}: {}", c.file, out.stdout);
        } else {
            assert!(
                !BUILT_IN.contains(&protocol.as_str()),
                "{} has no signature, yet auto read it as {protocol}",
                c.file
            );
        }
    }
}

#[test]
fn every_command_reaches_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    for c in cases() {
        for cmd in STREAM_COMMANDS {
            let split = dir.path().join(format!("split-{cmd}"));
            let mut args = command_words(cmd, &split);
            args.extend(["--profile", &c.profile]);
            let path = c.arg();
            args.push(&path);
            let out = run(&args, b"");
            assert_eq!(
                out.code, c.exit,
                "{cmd} {}: {}{}",
                c.file, out.stdout, out.stderr
            );
            let _ = std::fs::remove_dir_all(&split);
        }
        let out = run(&["filter", "--profile", &c.profile, ".type", &c.arg()], b"");
        assert_eq!(out.code, c.exit, "filter {}: {}", c.file, out.stderr);
    }
}

#[test]
fn summarize_names_the_profile_the_run_and_the_outcome() {
    let c = fixture("profiles/claude-stream/api-error-429.jsonl");
    let out = run(&["summarize", "--output", "json", c.to_str().unwrap()], b"");
    assert_eq!(out.code, 75, "{}", out.stdout);
    let runs: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let text = runs.to_string();
    for want in [
        "claude-stream",
        "rate_limited",
        "API_ERROR",
        "429 rate limit exceeded",
    ] {
        assert!(text.contains(want), "{want} not in {text}");
    }
}

#[test]
fn no_built_in_passes_another_producers_stream() {
    for c in cases() {
        for p in BUILT_IN.into_iter().filter(|p| *p != c.profile) {
            let out = run(&["verify", "--profile", p, &c.arg()], b"");
            // A startup failure's lone result object is exactly what
            // `claude -p --output-format json` writes: a failure there too.
            let same_shape = c.file == "claude-stream/startup-failure.jsonl" && p == "claude-json";
            let want = if same_shape { 1 } else { 65 };
            assert_eq!(out.code, want, "{} under {p}: {}", c.file, out.stdout);
        }
    }
}

const ACME: &str = r#"
# A made-up producer: acme-agent --events
name = "acme-agent"
about = "acme-agent --events"
type_field = "event"
open = [{ event = "hello", agent = { present = true } }]
after_end = [{ event = "bye" }]

[run_id]
path = "job"
same = true

[[end]]
when = { event = "done" }
success = { outcome = "ok" }
cancelled = { outcome = "stopped" }
code = ["problem.code"]
message = ["problem.text"]
status = ["problem.http"]

[[error]]
when = { event = "hiccup" }
level = "provisional"
message = ["text"]

[categories.codes]
QUOTA = "rate_limited"

[source]
package = "acme-agent"
version = "9.9.9"
file = "docs/events.md"
"#;

#[test]
fn a_users_profile_file_judges_a_made_up_producer() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("acme.toml");
    std::fs::write(&profile, ACME).unwrap();
    let p = profile.to_str().unwrap();
    let hello = r#"{"event":"hello","agent":"acme/9","job":"j1"}"#;
    let step = r#"{"event":"step","job":"j1"}"#;
    let judged = |ls: &[&str]| run(&["verify", "--output", "jsonl", "--profile", p], &lines(ls));
    let ok = judged(&[
        hello,
        step,
        r#"{"event":"done","outcome":"ok","job":"j1"}"#,
        r#"{"event":"bye"}"#,
    ]);
    assert_eq!(ok.code, 0, "{}", ok.stdout);
    let quota = judged(&[
        hello,
        r#"{"event":"hiccup","text":"slow down"}"#,
        r#"{"event":"done","outcome":"failed","problem":{"code":"QUOTA","text":"over quota"}}"#,
    ]);
    assert_eq!(quota.code, 75, "{}", quota.stdout);
    let http = judged(&[
        hello,
        r#"{"event":"done","outcome":"failed","problem":{"http":403,"text":"no"}}"#,
    ]);
    assert_eq!(http.code, 1, "{}", http.stdout);
    let stopped = judged(&[hello, r#"{"event":"done","outcome":"stopped"}"#]);
    assert_eq!(stopped.code, 1, "{}", stopped.stdout);
    assert!(stopped.stdout.contains("cancelled"), "{}", stopped.stdout);
    let cut = judged(&[hello, step, r#"{"event":"hiccup","text":"disk full"}"#]);
    assert_eq!(cut.code, 65);
    assert!(cut.has_rule("profile.end-missing"));
    assert!(
        cut.stdout.contains("disk full"),
        "the last provisional error is named: {}",
        cut.stdout
    );
    let mixed = judged(&[
        hello,
        r#"{"event":"step","job":"j2"}"#,
        r#"{"event":"done","outcome":"ok"}"#,
    ]);
    assert_eq!(mixed.rules(), ["profile.run-id-changed"]);
    let late = judged(&[hello, r#"{"event":"done","outcome":"ok"}"#, step]);
    assert_eq!(late.rules(), ["profile.after-end"]);
    // Typed by the profile's own field: summarize counts by it.
    let out = run(
        &["summarize", "--profile", p],
        &lines(&[hello, step, step, r#"{"event":"done","outcome":"ok"}"#]),
    );
    assert!(out.stdout.contains("step 2"), "{}", out.stdout);
}

#[test]
fn a_profile_with_a_mistake_is_a_usage_error_naming_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("bad.toml");
    let long_tool = format!("tool = \"{}\"\ntype_field", "T".repeat(2_000));
    for (from, to, what) in [
        ("level = \"provisional\"", "level = \"fatal\"", "fatal"),
        (
            "QUOTA = \"rate_limited\"",
            "QUOTA = \"throttled\"",
            "not a category",
        ),
        ("same = true", "smae = true", "smae"),
        (
            "when = { event = \"done\" }",
            "when = { event = { present = \"yes\" } }",
            "present",
        ),
        // A report's `protocol` names a protocol or a profile, and a
        // run's `tool` is held to a meta's bound: a file takes neither's
        // place.
        ("name = \"acme-agent\"", "name = \"aoi\"", "is a protocol's"),
        (
            "name = \"acme-agent\"",
            "name = \"auto\"",
            "is a protocol's",
        ),
        (
            "name = \"acme-agent\"",
            "name = \"codex-exec\"",
            "is a built-in's",
        ),
        ("type_field", long_tool.as_str(), "2000 bytes"),
    ] {
        let bad = ACME.replace(from, to);
        let line = bad[..bad.find(to).unwrap()].matches('\n').count() + 1;
        std::fs::write(&profile, bad).unwrap();
        let out = run(&["verify", "--profile", profile.to_str().unwrap()], b"{}\n");
        assert_eq!(out.code, 64, "{}", out.stderr);
        assert!(
            out.stderr.contains(&format!("line {line}, column")) && out.stderr.contains(what),
            "{}",
            out.stderr
        );
    }
    let out = run(&["verify", "--profile", "claude"], b"");
    assert_eq!(out.code, 64);
    assert!(
        out.stderr.contains("claude-stream"),
        "the built-ins are listed: {}",
        out.stderr
    );
}

#[test]
fn plain_json_lines_never_launder_an_empty_input() {
    let out = verify(&["--protocol", "jsonl"], b"");
    assert_eq!(out.code, 65);
    assert_eq!(out.rules(), ["stream.empty"]);
    let up = run(&["upgrade", "--protocol", "jsonl"], b"");
    let summary = up.summary();
    assert_eq!(summary["ok"], false, "{}", up.stdout);
}

/// `run --profile P -- CMD` (docs/contract.md §6.3): the stream decides
/// where it has an end, and an exit status that says otherwise is a
/// warning; without an end, a failed command is the run's failure, and an
/// exit 0 is still `profile.end-missing`. CMD is `cat FILE; exit N`.
#[test]
fn run_holds_the_exit_status_as_a_second_witness() {
    let table = std::fs::read_to_string(fixture("profiles/run-cases.tsv")).unwrap();
    let rows: Vec<Vec<String>> = table
        .lines()
        .skip(1)
        .map(|r| r.split('\t').map(str::to_string).collect())
        .collect();
    assert!(rows.len() >= 30);
    for r in rows {
        let (file, profile, cmd_exit, want) = (&r[0], &r[1], &r[2], r[3].parse::<i32>().unwrap());
        let path = fixture("profiles").join(file);
        let path = path.to_str().unwrap();
        let script = match cmd_exit.as_str() {
            "TERM" => format!("cat '{path}'; kill -TERM $$"),
            n => format!("cat '{path}'; exit {n}"),
        };
        let out = run(
            &[
                "run",
                "--profile",
                profile,
                "--output",
                "jsonl",
                "--",
                "sh",
                "-c",
                &script,
            ],
            b"",
        );
        assert_eq!(out.code, want, "{file} exiting {cmd_exit}: {}", out.stderr);
        // CMD's stream is relayed on stdout; the report is on stderr.
        let out = Out {
            code: out.code,
            stdout: out.stderr,
            stderr: String::new(),
        };
        // The stream alone, and whether the exit status disagrees with it.
        let alone = run(&["verify", "--profile", profile, path], b"").code;
        let ended = alone != 65;
        let disagrees = ended && (cmd_exit == "0") != (alone == 0);
        let said: Vec<serde_json::Value> = out
            .findings()
            .into_iter()
            .filter(|f| f["rule"] == "exit.disagrees")
            .collect();
        assert_eq!(
            !said.is_empty(),
            disagrees,
            "{file} exiting {cmd_exit}: {}",
            out.stdout
        );
        for f in said {
            assert_eq!(f["severity"], "warning", "{}", out.stdout);
        }
        if !ended && cmd_exit != "0" {
            assert!(
                !out.has_rule("profile.end-missing"),
                "a failed command is the run's failure: {}",
                out.stdout
            );
        }
    }
}

/// A failed command's stderr names why: its last line is in the verdict.
#[test]
fn run_names_the_failed_commands_stderr() {
    let path = fixture("profiles/codex-exec/interrupted.jsonl");
    let script = format!(
        "cat '{}'; echo 'Error: stream disconnected before completion' >&2; exit 1",
        path.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.jsonl");
    let out = run(
        &[
            "run",
            "--profile",
            "codex-exec",
            "--output",
            "jsonl",
            "--report",
            report.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
        b"",
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let text = std::fs::read_to_string(&report).unwrap();
    let verdict = text
        .lines()
        .find(|l| l.contains(r#""type":"run""#))
        .unwrap();
    assert!(
        verdict.contains("stream disconnected before completion"),
        "{verdict}"
    );
    assert!(
        out.stderr.contains("stream disconnected"),
        "stderr is still passed on"
    );
}

/// `upgrade --profile P F | verify` gives F's verdict (65 upstream is a
/// conforming failure downstream: 1), every line is valid against
/// `aoitap schema`, and a line cut after the upgrade is found
/// (docs/contract.md §1.6, §6.3).
#[test]
fn upgrade_writes_each_stream_as_aoi_with_its_verdict() {
    let schema: serde_json::Value = serde_json::from_str(&run(&["schema"], b"").stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for c in cases() {
        let up = run(&["upgrade", "--profile", &c.profile, &c.arg()], b"");
        assert_eq!(up.code, c.exit, "{}: {}", c.file, up.stderr);
        let down = verify(&[], up.stdout.as_bytes());
        let want = if c.exit == 65 { 1 } else { c.exit };
        assert_eq!(
            down.code, want,
            "{}: {}\n{}",
            c.file, up.stdout, down.stdout
        );
        let events = up.events();
        for e in &events {
            let wrong: Vec<String> = validator.iter_errors(e).map(|x| x.to_string()).collect();
            assert!(wrong.is_empty(), "{}: {e}: {wrong:?}", c.file);
        }
        let summary = up.summary();
        assert_eq!(summary["ok"], c.exit == 0, "{}", c.file);
        if c.exit == 65 && c.rules.iter().any(|r| r == "profile.end-missing") {
            assert!(
                up.stdout.contains("UPSTREAM_CUT"),
                "{}: {}",
                c.file,
                up.stdout
            );
        }
        // Cut after the upgrade: the line before the summary goes.
        let lines: Vec<&str> = up.stdout.lines().collect();
        if lines.len() >= 3 {
            let mut cut = lines.clone();
            cut.remove(lines.len() - 2);
            let cut = verify(&[], format!("{}\n", cut.join("\n")).as_bytes());
            assert_eq!(cut.code, 65, "{}: a cut after upgrade", c.file);
        }
    }
}

/// What a user or an agent reads of the profiles: `aoitap profiles`, the
/// capability manifest, `--help` and the completions name every built-in.
#[test]
fn the_built_ins_are_listed_wherever_options_are() {
    let listed = run(&["profiles"], b"").stdout;
    let caps: serde_json::Value =
        serde_json::from_str(&run(&["capabilities"], b"").stdout).unwrap();
    let verify = caps["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "verify")
        .unwrap();
    let help = run(&["verify", "--help"], b"").stdout;
    let bash = run(&["completions", "bash"], b"").stdout;
    for p in BUILT_IN {
        assert!(
            listed.lines().any(|l| l.starts_with(p)),
            "aoitap profiles lacks {p}"
        );
        assert!(
            verify["input_profiles"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["name"] == p),
            "capabilities lacks {p}"
        );
        assert!(help.contains(p), "verify --help lacks {p}");
        assert!(bash.contains(p), "the bash completions lack {p}");
        let toml = run(&["profiles", p], b"");
        assert_eq!(toml.code, 0);
        assert!(
            toml.stdout.contains(&format!("name = \"{p}\"")),
            "{}",
            toml.stdout
        );
    }
}

/// What an attacker found, each held: a deciding member twice, a
/// profile path that is no small regular file, a pretty-printed array, an
/// AOI event that looks like a producer's, an ordinal that is no whole
/// number, interleaved sessions, a file that takes a built-in's name.
#[test]
fn hostile_streams_and_profiles_get_a_finding_or_a_clear_refusal() {
    let judged = |profile: &str, ls: &[&str]| {
        let mut args = vec!["verify", "--output", "jsonl"];
        if !profile.is_empty() {
            args.extend(["--profile", profile]);
        }
        run(&args, &lines(ls))
    };
    let init = r#"{"type":"system","subtype":"init","session_id":"S"}"#;
    // The first copy of a deciding member would make a failure pass.
    let out = judged(
        "codex-exec",
        &[
            r#"{"type":"thread.started","thread_id":"T"}"#,
            r#"{"type":"turn.completed","type":"turn.failed","error":{"message":"boom"}}"#,
        ],
    );
    assert_eq!(
        (out.code, out.rules()),
        (65, vec!["verdict.duplicate-key".to_string()])
    );
    let out = judged(
        "claude-stream",
        &[
            init,
            r#"{"type":"result","subtype":"success","is_error":false,"is_error":true,"session_id":"S"}"#,
        ],
    );
    assert_eq!(out.code, 65, "{}", out.stdout);
    // Not a regular file: refused before anything is read.
    for path in ["/dev/zero", "/tmp"] {
        let out = run(&["verify", "--profile", path], b"");
        assert_eq!(out.code, 64);
        assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    }
    // A pretty-printed array is one document, as a one-line one is.
    let dir = tempfile::tempdir().unwrap();
    let pretty = dir.path().join("pretty.json");
    std::fs::write(
        &pretty,
        "[\n  {\"type\": \"system\", \"subtype\": \"init\", \"session_id\": \"S\"},\n  {\"type\": \"result\", \"subtype\": \"success\", \"is_error\": false, \"session_id\": \"S\"}\n]",
    )
    .unwrap();
    let out = run(
        &[
            "verify",
            "--profile",
            "claude-json",
            pretty.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    // No agent CLI writes AOI's envelope: a cut AOI stream stays AOI.
    let out = judged(
        "",
        &[
            r#"{"type":"system","subtype":"init","session_id":"S","aoi":{"seq":5,"run":"R"}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"session_id":"S","aoi":{"seq":6,"run":"R"}}"#,
        ],
    );
    assert_eq!(out.code, 65, "{}", out.stdout);
    // opencode: a step that finishes on an error is no success.
    let out = judged(
        "opencode-json",
        &[
            r#"{"type":"step_start","sessionID":"S","part":{}}"#,
            r#"{"type":"step_finish","sessionID":"S","part":{"reason":"error"}}"#,
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    // An ordinal that is no whole number cannot be counted.
    let result = |i: &str| {
        format!(
            r#"{{"type":"result","subtype":"success","is_error":false,"session_id":"S","result_index":{i}}}"#
        )
    };
    let (r0, r2) = (result("0"), result("2.0"));
    let out = judged("claude-stream", &[init, &r0, init, &r2]);
    assert_eq!(out.rules(), ["profile.ordinal-gap"], "{}", out.stdout);
    // Interleaved Claude sessions are told apart by session_id.
    let (a, b) = (
        r#"{"type":"system","subtype":"init","session_id":"A"}"#,
        r#"{"type":"system","subtype":"init","session_id":"B"}"#,
    );
    let end = |s: &str| {
        format!(r#"{{"type":"result","subtype":"success","is_error":false,"session_id":"{s}"}}"#)
    };
    let (ea, eb) = (end("A"), end("B"));
    let out = run(
        &["verify", "--multi-run", "--profile", "claude-stream"],
        &lines(&[a, b, &eb, &ea]),
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    // A file cannot pass for a built-in; an exit status is 0-255, said
    // with its line.
    let mine = dir.path().join("mine.toml");
    let codex = run(&["profiles", "codex-exec"], b"").stdout;
    std::fs::write(&mine, &codex).unwrap();
    let out = run(&["verify", "--profile", mine.to_str().unwrap()], b"");
    assert_eq!(out.code, 64);
    assert!(out.stderr.contains("is a built-in's"), "{}", out.stderr);
    let renamed = codex.replace("name = \"codex-exec\"", "name = \"mine\"");
    std::fs::write(&mine, format!("{renamed}\n[exit]\n297 = \"authn\"\n")).unwrap();
    let out = run(&["verify", "--profile", mine.to_str().unwrap()], b"");
    assert_eq!(out.code, 64);
    let line = renamed.lines().count() + 3;
    assert!(
        out.stderr.contains(&format!("line {line}, column")),
        "{}",
        out.stderr
    );
}

/// Under auto, a log of one producer's runs one after another is split
/// where the profile it was detected by says, as under `--profile`.
#[test]
fn auto_splits_a_log_of_detected_runs_as_the_profile_does() {
    let mut log =
        std::fs::read(fixture("profiles/claude-stream/success-tool-calls.jsonl")).unwrap();
    log.extend(std::fs::read(fixture("profiles/claude-stream/api-error-429.jsonl")).unwrap());
    for extra in [&[][..], &["--profile", "claude-stream"][..]] {
        let mut args = vec!["verify", "--multi-run", "--output", "jsonl"];
        args.extend(extra);
        let out = run(&args, &log);
        assert_eq!(out.code, 75, "{extra:?}: {}", out.stdout);
        let runs = out
            .events()
            .into_iter()
            .filter(|e| e["type"] == "run")
            .count();
        assert_eq!(runs, 2, "{extra:?}: {}", out.stdout);
    }
    // A mistyped condition is a mistake, not a path.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("typo.toml");
    let codex = run(&["profiles", "codex-exec"], b"").stdout;
    let typo = codex
        .replace("name = \"codex-exec\"", "name = \"typo\"")
        .replace(
            "thread_id = { present = true }",
            "thread_id = { exists = true }",
        );
    std::fs::write(&p, typo).unwrap();
    let out = run(&["verify", "--profile", p.to_str().unwrap()], b"");
    assert_eq!(out.code, 64);
    assert!(
        out.stderr.contains("\"exists\" is no condition"),
        "{}",
        out.stderr
    );
}

/// A one-document producer's array (`claude -p --output-format json
/// --verbose`) is its events, one by one, in every command that passes
/// events on: written on one line, or pretty-printed, its secrets written
/// over where `--redact` says.
#[test]
fn an_array_documents_events_pass_on_one_by_one() {
    let one_line = std::fs::read(fixture("profiles/claude-json/verbose-success.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&one_line).unwrap();
    let types: Vec<String> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert!(types.len() > 2);
    let pretty = serde_json::to_vec_pretty(&doc).unwrap();
    for (form, input) in [("one line", &one_line), ("pretty", &pretty)] {
        let each = |args: &[&str]| {
            let mut all = vec![args[0], "--profile", "claude-json"];
            all.extend(&args[1..]);
            let out = run(&all, input);
            assert_eq!(out.code, 0, "{form} {args:?}: {}{}", out.stdout, out.stderr);
            out.stdout
        };
        let stripped = each(&["strip-envelope"]);
        let got: Vec<String> = stripped
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
            .map(|t| t.trim_matches('"').to_string())
            .collect();
        assert_eq!(got, types, "{form}: {stripped}");
        let filtered = each(&["filter", "-r", ".type"]);
        assert_eq!(filtered.lines().collect::<Vec<_>>(), types, "{form}");
        // `.` writes each event whole, on one line.
        let whole = each(&["filter", "."]);
        assert_eq!(whole.lines().count(), types.len(), "{form}: {whole}");
        let summary = each(&["summarize", "--output", "json"]);
        let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
        let counted: u64 = summary["runs"][0]["domain_types"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(counted, types.len() as u64, "{form}: {summary}");
        let upgraded = each(&["upgrade"]);
        let domain: Vec<String> = upgraded
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|e| !e["type"].as_str().unwrap().starts_with("aoi:"))
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(domain, types, "{form}: {upgraded}");
        let again = run(&["verify"], upgraded.as_bytes());
        assert_eq!(again.code, 0, "{form}: {}", again.stdout);
    }
    // An element's secret is written over wherever it is written.
    let mut leaky = doc.clone();
    leaky[1]["api_secret"] = serde_json::json!("hunter2-in-an-array");
    let leaky_line = serde_json::to_vec(&leaky).unwrap();
    let leaky_pretty = serde_json::to_vec_pretty(&leaky).unwrap();
    for input in [&leaky_line, &leaky_pretty] {
        for args in [
            &["strip-envelope", "--redact"][..],
            &["upgrade"][..],
            &["verify", "--relay", "--redact"][..],
        ] {
            let mut all = args.to_vec();
            all.extend(["--profile", "claude-json"]);
            let (_, out, err) = raw(&all, input);
            let text = String::from_utf8_lossy(&out);
            assert!(!text.contains("hunter2"), "{args:?}: {text}");
            assert!(!err.contains("hunter2"), "{args:?}: {err}");
            if args[0] != "verify" {
                assert!(text.contains("***"), "{args:?}: {text}");
            }
        }
    }
}

/// Typed NDJSON (`--protocol ndjson --first T --last T`) is judged by
/// the profile engine, with a profile made from its flags: every stream
/// of up to five lines gets the verdict a profile file saying the same
/// gives, its findings under typed NDJSON's names.
#[test]
fn typed_ndjson_is_a_profile_made_from_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("typed.toml");
    std::fs::write(
        &file,
        r#"
name = "typed"
about = "the flags, written out"
open = [{ type = "a" }]
end = [{ when = { type = "z" }, success = {} }]
[source]
package = "aoitap"
version = "tests"
file = "tests/profiles.rs"
"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let named = |rule: &str| match rule {
        "ndjson.first-wrong" => "profile.open-missing".to_string(),
        "ndjson.last-missing" => "profile.end-missing".to_string(),
        "ndjson.after-last" => "profile.after-end".to_string(),
        other => other.to_string(),
    };
    let mut streams: Vec<Vec<&str>> = vec![vec![]];
    for _ in 0..5 {
        let longer: Vec<Vec<&str>> = streams
            .iter()
            .filter(|s| s.len() == streams.last().unwrap().len())
            .flat_map(|s| {
                ["a", "m", "z"].map(|t| {
                    let mut s = s.clone();
                    s.push(t);
                    s
                })
            })
            .collect();
        streams.extend(longer);
    }
    assert_eq!(streams.len(), 1 + 3 + 9 + 27 + 81 + 243);
    for types in streams.iter().filter(|s| !s.is_empty()) {
        let input = lines(
            &types
                .iter()
                .map(|t| format!(r#"{{"type":"{t}"}}"#))
                .collect::<Vec<_>>(),
        );
        let flags = ["--protocol", "ndjson", "--first", "a", "--last", "z"];
        let mut args = vec!["verify", "--output", "jsonl"];
        args.extend(flags);
        let typed = run(&args, &input);
        let profiled = run(&["verify", "--output", "jsonl", "--profile", file], &input);
        assert_eq!(typed.code, profiled.code, "{types:?}: {}", typed.stdout);
        let as_profile: Vec<String> = typed.rules().iter().map(|r| named(r)).collect();
        assert_eq!(as_profile, profiled.rules(), "{types:?}");
        assert!(
            typed.rules().iter().all(|r| r.starts_with("ndjson.")),
            "{types:?}: {:?}",
            typed.rules()
        );
    }
}

/// What an attacker found in array documents: a one-line array with a
/// secret is relayed redacted, not withheld, with one finding; split
/// writes it (and a document without its final newline) to one run's
/// file; `[]` and arrays whose ends are odd reach one verdict in every
/// command; a run id given twice is a finding; and memory stays near the
/// document's size, however many elements it has.
#[test]
fn array_documents_hold_under_attack() {
    let init = r#"{"type":"system","subtype":"init","session_id":"S1"}"#;
    let ok = r#"{"type":"result","subtype":"success","is_error":false,"session_id":"S1"}"#;
    let leaky = format!(r#"[{init},{{"type":"assistant","api_secret":"LEAK1"}},{ok}]"#);
    for (form, input) in [
        ("newline", format!("{leaky}\n")),
        ("no newline", leaky.clone()),
    ] {
        let (code, out, _) = raw(
            &["verify", "--relay", "--redact", "--profile", "claude-json"],
            input.as_bytes(),
        );
        assert_eq!(code, 65, "{form}");
        let relayed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(relayed.as_array().unwrap().len(), 3, "{form}");
        assert_eq!(relayed[1]["api_secret"], "***", "{form}");
        let judged = run(
            &["verify", "--output", "jsonl", "--profile", "claude-json"],
            input.as_bytes(),
        );
        assert_eq!(
            judged.rules(),
            ["secret.exposed"],
            "{form}: {}",
            judged.stdout
        );
        let dir = tempfile::tempdir().unwrap();
        let split = dir.path().join("sp");
        let args = [
            "split-by-run",
            "--redact",
            "--profile",
            "claude-json",
            "--dir",
            split.to_str().unwrap(),
        ];
        let out = run(&args, input.as_bytes());
        assert!(out.stdout.contains("(1 run"), "{form}: {}", out.stdout);
        let files: Vec<_> = std::fs::read_dir(&split).unwrap().collect();
        assert_eq!(files.len(), 1, "{form}");
        let written = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
        assert!(
            written.contains(r#""api_secret":"***""#),
            "{form}: {written}"
        );
        assert!(!written.contains("LEAK1"), "{form}");
    }
    // One verdict in every command, a log's included: an array is one
    // run, however many ends it holds.
    let retry = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429}"#;
    let hook = r#"{"type":"system","subtype":"hook_started"}"#;
    for (input, want) in [
        ("[]".to_string(), 65),
        (format!("[{init},{retry},{ok}]"), 65),
        (format!("[{ok},{hook}]"), 0),
        (format!("[{init},0,1,{ok}]"), 65),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let split = dir.path().join("sp");
        for args in [
            &["verify"][..],
            &["verify", "--multi-run"],
            &["summarize"],
            &["strip-envelope"],
            &["strip-envelope", "--multi-run"],
            &["filter", "."],
            &["split-by-run", "--dir", split.to_str().unwrap()],
        ] {
            let mut all = args.to_vec();
            all.extend(["--profile", "claude-json"]);
            let out = run(&all, format!("{input}\n").as_bytes());
            assert_eq!(out.code, want, "{args:?} {input}: {}", out.stdout);
        }
    }
    // Elements that are no event are one finding, counted.
    let zeros = format!("[{}]\n", vec!["0"; 1000].join(","));
    let out = run(
        &["verify", "--output", "jsonl", "--profile", "claude-json"],
        zeros.as_bytes(),
    );
    let not_objects = out
        .rules()
        .iter()
        .filter(|r| *r == "json.not-object")
        .count();
    assert_eq!(not_objects, 1, "{}", out.stdout);
    assert!(out.stdout.contains("and 999 more"), "{}", out.stdout);
    // The run id decides which run an event is of.
    let twice = format!(
        "{}\n{ok}\n",
        r#"{"type":"system","subtype":"init","session_id":"S1","session_id":"S2"}"#
    );
    let out = run(
        &["verify", "--output", "jsonl", "--profile", "claude-stream"],
        twice.as_bytes(),
    );
    assert!(out.has_rule("verdict.duplicate-key"), "{}", out.stdout);
    // A million small elements (13 MB) cost a few times their bytes, not
    // a parse each kept (it was 20 times).
    let many = format!("[{}]\n", vec![r#"{"type":"a"}"#; 1_000_000].join(","));
    for cmd in ["verify", "strip-envelope", "summarize"] {
        let (kib, _) = peak_kib(&[cmd, "--profile", "claude-json"], many.as_bytes());
        assert!(kib < 80 * 1024, "{cmd}: {kib} KiB for a 13 MB document");
    }
}

/// Two outputs one after the other, read as one stream: an opener before
/// the first one's end says it was cut (a log of runs is read with
/// `--multi-run`), where the opener is no next step of the same run.
#[test]
fn an_opener_before_the_end_says_the_run_before_was_cut() {
    let cat = |a: &str, b: &str| {
        let mut both = std::fs::read(fixture(a)).unwrap();
        both.extend(std::fs::read(fixture(b)).unwrap());
        both
    };
    for (a, b, args, rule) in [
        (
            "profiles/codex-exec/interrupted.jsonl",
            "profiles/codex-exec/success-tool-calls.jsonl",
            &["--profile", "codex-exec"][..],
            "profile.end-missing",
        ),
        (
            "profiles/gemini-stream/no-end.jsonl",
            "profiles/gemini-stream/success-tool-calls.jsonl",
            &[],
            "profile.end-missing",
        ),
        (
            "streams/ndjson-daemon-cut.jsonl",
            "streams/ndjson-daemon.jsonl",
            &[
                "--protocol",
                "ndjson",
                "--first",
                "daemon.started",
                "--last",
                "daemon.stopped",
            ],
            "ndjson.last-missing",
        ),
    ] {
        let mut all = vec!["verify", "--output", "jsonl"];
        all.extend(args);
        let out = run(&all, &cat(a, b));
        assert_eq!(out.code, 65, "{a} + {b}: {}", out.stdout);
        assert!(out.has_rule(rule), "{a} + {b}: {}", out.stdout);
        // As a log, the cut run is a run of its own.
        all.push("--multi-run");
        let out = run(&all, &cat(a, b));
        assert_eq!(out.code, 65, "{a} + {b}: {}", out.stdout);
        let runs = out
            .events()
            .into_iter()
            .filter(|e| e["type"] == "run")
            .count();
        assert_eq!(runs, 2, "{a} + {b}: {}", out.stdout);
    }
}

/// A relay under `--redact` writes a pretty-printed document line by
/// line, before it closes: every line after one showing a secret-looking
/// key is withheld, since the secret's value (an object, an array) may
/// be on them.
#[test]
fn a_pretty_documents_secret_never_leaks_from_a_relay() {
    let array = serde_json::to_string_pretty(&serde_json::json!([
        {"type": "system", "subtype": "init", "session_id": "S1"},
        {"type": "assistant", "api_secret": {"k": "LEAKOBJ", "arr": ["LEAKARR"]}},
        {"type": "result", "subtype": "success", "is_error": false, "session_id": "S1"},
    ]))
    .unwrap();
    let aiocs = "{\n  \"ok\": false,\n  \"command\": \"x\",\n  \"error\": {\"code\": \"e\", \"message\": \"m\"},\n  \"token_secret\": {\n    \"v\": \"LEAKAIOCS\"\n  }\n}\n";
    let dir = tempfile::tempdir().unwrap();
    for (doc, profile) in [
        (format!("{array}\n"), "claude-json"),
        (aiocs.to_string(), ""),
    ] {
        let file = dir.path().join("doc.json");
        std::fs::write(&file, &doc).unwrap();
        let file = file.to_str().unwrap();
        let split = dir.path().join(format!("sp-{profile}"));
        let cat = format!("cat {file}");
        for args in [
            vec!["verify", "--relay", "--redact", file],
            vec![
                "split-by-run",
                "--redact",
                "--dir",
                split.to_str().unwrap(),
                file,
            ],
            vec!["run", "--redact", "--", "sh", "-c", &cat],
        ] {
            let mut all = args.clone();
            if !profile.is_empty() {
                all.splice(1..1, ["--profile", profile]);
            }
            let (_, out, err) = raw(&all, b"");
            let mut text = String::from_utf8_lossy(&out).into_owned() + &err;
            if split.exists() {
                for f in std::fs::read_dir(&split).unwrap() {
                    text += &std::fs::read_to_string(f.unwrap().path()).unwrap();
                }
            }
            assert!(!text.contains("LEAK"), "{args:?}: {text}");
            assert!(
                text.contains("a line before it in its document"),
                "{args:?}: {text}"
            );
        }
    }
}
