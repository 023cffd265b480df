//! `aoitap lint -- CMD [ARG ...]` (docs/contract.md §1.4): a fake producer and its
//! faults (tests/fixtures/lint/producer.py; a fault is chosen by a copy
//! named `fake-FAULT`), run through the command as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::util::*;

/// The producer as `fake-FAULT` in `dir`: a copy whose `#!` is the
/// interpreter's own path (`util::python`), not a shim `env` finds first.
fn tool(dir: &Path, fault: &str) -> PathBuf {
    let copy = dir.join(format!("fake-{fault}"));
    if !copy.exists() {
        let producer = std::fs::read_to_string(fixture("lint/producer.py")).unwrap();
        let (_, body) = producer.split_once('\n').unwrap();
        write_script(&copy, &format!("#!{}\n{body}", python().display()));
    }
    copy
}

/// Write an executable shell script: a fake tool of a test's own.
fn write_script(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// `each` of `items`, three at a time: a lint run mostly waits for its
/// calls (the producer paces its output), so runs side by side share
/// two cores well. A panic in one is the test's, once all have run.
fn on_threads<T: Sync>(items: &[T], each: impl Fn(&T) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                    each(item);
                }
            });
        }
    });
}

/// The producer's three commands, as lint is given them.
const SEARCH: &[&str] = &["search", "q", "--output", "jsonl"];
const DELETE: &[&str] = &["delete", "item-1", "--confirm", "--output", "jsonl"];
const IMPORT: &[&str] = &["import", "--input-jsonl", "-", "--output", "jsonl"];

fn lint_cmd(extra: &[&str], tool: &Path, command: &[&str]) -> Out {
    let t = tool.to_str().unwrap();
    let args = [&["lint"], extra, &["--", t], command].concat();
    run(&args, b"")
}

fn lint(extra: &[&str], tool: &Path) -> Out {
    lint_cmd(extra, tool, SEARCH)
}

/// Each aoi:check event of a jsonl report: (name, result, §18.2 number).
fn checks(out: &Out) -> Vec<(String, String, u64)> {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "aoi:check")
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["properties"]["result"].as_str().unwrap().to_string(),
                v["properties"]["check"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn numbers_with(out: &Out, result: &str) -> Vec<u64> {
    checks(out)
        .into_iter()
        .filter(|(_, r, _)| r == result)
        .map(|(_, _, n)| n)
        .collect()
}

#[test]
fn a_conforming_producer_passes_every_claimed_check_of_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let good = tool(dir.path(), "good");
    // What each command earns from its capabilities entry: search has a
    // limit, delete is destructive and idempotent, import reads JSONL.
    for (command, passed) in [
        (SEARCH, vec![1, 2, 3, 4, 5, 9, 10, 11, 13, 14, 15]),
        (DELETE, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15]),
        (IMPORT, vec![1, 2, 3, 4, 5, 9, 12, 13, 14, 15, 16]),
    ] {
        let out = lint_cmd(&["--output", "jsonl"], &good, command);
        assert_eq!(out.code, 0, "{command:?}: {}", out.stdout);
        assert_eq!(checks(&out).len(), 16);
        assert_eq!(
            numbers_with(&out, "pass"),
            passed,
            "{command:?}: {}",
            out.stdout
        );
        assert!(numbers_with(&out, "fail").is_empty());
        // lint's own stream is a conforming AOI stream, valid against
        // aoitap's own schema.
        assert_eq!(run(&["verify", "-q"], out.stdout.as_bytes()).code, 0);
        let schema = run(&["schema"], b"");
        let path = dir.path().join("aoitap.schema.json");
        std::fs::write(&path, schema.stdout).unwrap();
        let with_schema = run(
            &["verify", "-q", "--schema", path.to_str().unwrap()],
            out.stdout.as_bytes(),
        );
        assert_eq!(with_schema.code, 0, "{}", with_schema.stdout);
    }
}

/// Each fault fails its check, and only its check (a stream without its
/// summary fails check 13 too: its schema_version is in one place of
/// two). A fault in what every call of its command writes (`EVERY`) is
/// linted with all 16 checks, and none but its own may fail. A fault the
/// producer shows only in the calls its check alone makes (the gates in
/// producer.py: FORCE_COLOR, a terminal, --token, a signal, a closed
/// stdout, --limit, --schema-version, no --confirm, --dry-run, a replayed
/// key, a fed stream's bad line or upstream error) is linted with its
/// check alone: every other check would read what the conforming
/// producer writes, which the test above holds to passing.
#[test]
fn each_fault_fails_exactly_its_check_and_exits_1() {
    const EVERY: bool = true;
    const ALONE: bool = false;
    let faults: [(&str, &[&str], &[u64], bool); 26] = [
        ("schema-login", SEARCH, &[1][..], EVERY),
        ("banner", SEARCH, &[2][..], EVERY),
        ("colour", SEARCH, &[2][..], ALONE),
        ("tty-colour", SEARCH, &[2][..], ALONE),
        ("exit-after-failure", SEARCH, &[3][..], EVERY),
        ("no-summary", SEARCH, &[3, 13][..], EVERY),
        ("meta-off-schema", SEARCH, &[4][..], EVERY),
        // What any unknown flag gets (the --token=X of check 9's calls,
        // check 13's unknown version), not only check 5's own.
        ("unknown-flag-ok", SEARCH, &[5][..], EVERY),
        ("error-no-retryable", SEARCH, &[5][..], EVERY),
        ("delete-unconfirmed", DELETE, &[6][..], ALONE),
        ("dry-run-no-plan", DELETE, &[6][..], ALONE),
        ("replay-differs", DELETE, &[7][..], ALONE),
        ("no-ids", DELETE, &[8][..], EVERY),
        ("token-echo", SEARCH, &[9][..], ALONE),
        ("token-on-stderr", SEARCH, &[9][..], ALONE),
        ("no-cancel", SEARCH, &[10][..], ALONE),
        ("traceback", SEARCH, &[10][..], ALONE),
        ("limit-untruncated", SEARCH, &[11][..], ALONE),
        ("malformed-ok", IMPORT, &[12][..], ALONE),
        ("no-schema-version", SEARCH, &[13][..], EVERY),
        ("schema-version-ignored", SEARCH, &[13][..], ALONE),
        ("two-summaries", SEARCH, &[14][..], EVERY),
        ("seq-gap", SEARCH, &[15][..], EVERY),
        // Check 12's malformed stream opens with a meta too.
        ("forward-meta", IMPORT, &[16][..], EVERY),
        ("no-origin", IMPORT, &[16][..], ALONE),
        ("no-caused-by", IMPORT, &[16][..], ALONE),
    ];
    let dir = tempfile::tempdir().unwrap();
    on_threads(&faults, |&(fault, command, number, every)| {
        let own = number[0].to_string();
        let only: &[&str] = if every { &[] } else { &["--checks", &own] };
        let args = [&["--output", "jsonl"][..], only].concat();
        let out = lint_cmd(&args, &tool(dir.path(), fault), command);
        assert_eq!(out.code, 1, "{fault}: {}", out.stdout);
        assert_eq!(checks(&out).len(), if every { 16 } else { 1 }, "{fault}");
        assert_eq!(
            numbers_with(&out, "fail"),
            number,
            "{fault}: {}",
            out.stdout
        );
        // A failing report is still a conforming stream: verify says 1.
        assert_eq!(
            run(&["verify", "-q"], out.stdout.as_bytes()).code,
            1,
            "{fault}"
        );
    });
}

#[test]
fn checks_are_chosen_by_id_and_a_bad_choice_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let banner = tool(dir.path(), "banner");
    let only = lint(
        &[
            "--output",
            "jsonl",
            "--checks",
            "lint.14-one-meta-one-summary",
        ],
        &banner,
    );
    assert_eq!(only.code, 0, "{}", only.stdout);
    assert_eq!(checks(&only).len(), 1);
    let without = lint(&["--exclude-checks", "lint.02-stdout-jsonl"], &banner);
    assert_eq!(without.code, 0, "{}", without.stdout);
    assert_eq!(lint(&["--checks", "lint.99-nothing"], &banner).code, 64);
    let none = lint(
        &[
            "--checks",
            "lint.02-stdout-jsonl",
            "--exclude-checks",
            "lint.02-stdout-jsonl",
        ],
        &banner,
    );
    assert_eq!(
        none.code, 64,
        "no check left is a usage error: {}",
        none.stderr
    );
}

#[test]
fn usage_errors_are_64_and_a_command_that_cannot_run_is_127_or_126() {
    let dir = tempfile::tempdir().unwrap();
    let good = tool(dir.path(), "good");
    for bad in [
        &["--timeout", "0"][..],
        &["--secret-flag", "token"],
        &["--secret-flag", "--token=x"],
        &["--expected-failures", "/dev/zero"],
        &["--tool-words", "0"],
    ] {
        assert_eq!(lint(bad, &good).code, 64, "{bad:?}");
    }
    let missing = run(&["lint", "--", "aoitap-no-such-tool", "search"], b"");
    assert_eq!(missing.code, 127, "{}", missing.stderr);
    assert!(
        missing.stderr.contains("aoitap-no-such-tool"),
        "{}",
        missing.stderr
    );
    assert_eq!(
        missing.stdout, "",
        "not a report on a tool that is not there"
    );
    let not_executable = run(&["lint", "--", "/etc/passwd"], b"");
    assert_eq!(not_executable.code, 126, "{}", not_executable.stderr);
    assert_eq!(run(&["lint", "--", "/"], b"").code, 126);
}

#[test]
fn expected_failures_are_reported_and_only_a_pass_makes_one_stale() {
    let dir = tempfile::tempdir().unwrap();
    let known = dir.path().join("known.txt");
    std::fs::write(
        &known,
        "# known\nlint.02-stdout-jsonl\nlint.06-safe-destructive # skipped for search\n",
    )
    .unwrap();
    let k = known.to_str().unwrap();
    let banner = lint(
        &["--output", "jsonl", "--expected-failures", k],
        &tool(dir.path(), "banner"),
    );
    assert_eq!(banner.code, 0, "{}", banner.stdout);
    let got = checks(&banner);
    assert!(got.contains(&("lint.02-stdout-jsonl".into(), "expected-failure".into(), 2)));
    assert!(
        got.contains(&("lint.06-safe-destructive".into(), "skipped".into(), 6)),
        "a listed check that is skipped is not stale: {got:?}"
    );
    let good = lint(
        &["--output", "jsonl", "--expected-failures", k],
        &tool(dir.path(), "good"),
    );
    assert_eq!(good.code, 1, "{}", good.stdout);
    assert!(checks(&good).contains(&("lint.02-stdout-jsonl".into(), "stale".into(), 2)));
}

/// The pids of live processes whose command line holds `needle`.
fn running(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let state = stat[stat.rfind(')')? + 2..].chars().next()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (state != 'Z' && cmd.contains(needle)).then_some(cmd)
        })
        .collect()
}

/// No call outlives lint: its process groups are killed whole, and a
/// child that left its group with setsid is found and killed too.
#[test]
fn no_call_is_left_running_even_one_that_leaves_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let t = tool(dir.path(), "good");
    let out = lint(&["-q"], &t);
    assert_eq!(out.code, 0);
    assert!(running(t.to_str().unwrap()).is_empty());
    let script = dir.path().join("escaper.sh");
    // A sleep of a length no other process has, to find it by.
    let marker = format!("sleep 30.{}1", std::process::id());
    write_script(
        &script,
        &format!("#!/bin/sh\nsetsid {marker} &\necho '{{}}'\n"),
    );
    let escaped = lint_cmd(&["--checks", "lint.02-stdout-jsonl"], &script, &[]);
    assert_eq!(escaped.code, 1, "{}", escaped.stdout);
    assert!(running(&marker).is_empty(), "{:?}", running(&marker));
}

/// SIGINT to lint stops the call under way, removes its HOME, and ends
/// the report cancelled (130).
#[test]
fn an_interrupted_lint_stops_its_call_and_says_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("slow.sh");
    let marker = format!("sleep 30.{}2", std::process::id());
    write_script(
        &script,
        &format!("#!/bin/sh\necho '{{\"type\":\"x\"}}'\nexec {marker}\n"),
    );
    let child = Command::new(bin())
        .args(["lint", "--output", "jsonl", "--timeout", "60s", "--"])
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while running(&marker).is_empty() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!running(&marker).is_empty(), "the call began");
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(running(&marker).is_empty(), "the call is stopped");
    let report = String::from_utf8_lossy(&out.stdout);
    let last: serde_json::Value = serde_json::from_str(report.lines().last().unwrap()).unwrap();
    assert_eq!(last["reason"], "cancelled", "{report}");
}

/// A call past --timeout is not the tool's exit 137: the checks that
/// need its end fail, saying so (docs/contract.md §3.4); the others say it did not
/// end.
#[test]
fn a_call_past_its_deadline_fails_the_checks_that_need_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hang.sh");
    write_script(
        &script,
        "#!/bin/sh\necho '{\"type\":\"x\"}'\nexec sleep 30\n",
    );
    let out = lint_cmd(
        &[
            "--output",
            "jsonl",
            "--timeout",
            "300ms",
            "--checks",
            "lint.03-exit-matches-summary,lint.05-usage-and-errors",
        ],
        &script,
        &[],
    );
    let got = checks(&out);
    assert_eq!(got[0].1, "fail", "{}", out.stdout);
    assert!(
        out.stdout.contains("did not finish in 0.3 s"),
        "{}",
        out.stdout
    );
    // When CMD alone hangs too, a hang on an unknown flag tells nothing.
    assert_eq!(got[1].1, "inconclusive", "{}", out.stdout);
    assert!(!out.stdout.contains("137"), "{}", out.stdout);
    // When only the unknown flag hangs, it was not refused.
    let picky = dir.path().join("picky.sh");
    write_script(
        &picky,
        "#!/bin/sh\ncase \"$*\" in *--aoitap-lint-no-such-flag*) exec sleep 30;; esac\necho '{\"type\":\"x\"}'\n",
    );
    let out = lint_cmd(
        &["--output", "jsonl", "--timeout", "300ms", "--checks", "5"],
        &picky,
        &[],
    );
    assert_eq!(numbers_with(&out, "fail"), [5], "{}", out.stdout);
}

/// A fake tool whose discovery commands answer and which refuses an
/// unknown flag, and whose command runs `body`: all it does wrong is in
/// `body`.
fn discoverable_tool(path: &Path, body: &str) {
    write_script(
        path,
        &format!(
            "#!/bin/sh\ncase \"$1\" in schema) echo '{{\"type\":\"object\"}}'; exit 0;; capabilities) exit 1;; esac\n\
             for a; do [ \"$a\" = --aoitap-lint-no-such-flag ] && exit 64; done\n{body}\n"
        ),
    );
}

const META_1: &str = r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1","command":"search"}"#;
const HIT_1: &str = r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"id":"h1"}"#;

/// The detail of check `number` in a jsonl report.
fn detail(out: &Out, number: u64) -> String {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "aoi:check" && v["properties"]["check"] == number)
        .map(|v| v["detail"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// lint never passes what it could not decide (docs/contract.md §3.4): a tool that
/// writes its meta and one event and then hangs, TERM ignored, was
/// exit 0 "CONFORMING for the checks decided" with only check 1 passed.
#[test]
fn a_tool_that_hangs_after_its_first_events_is_not_conforming() {
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("hang.sh");
    discoverable_tool(
        &hang,
        &format!("trap '' TERM\necho '{META_1}'\necho '{HIT_1}'\nwhile :; do sleep 1; done"),
    );
    let started = Instant::now();
    let out = lint_cmd(
        &["--output", "jsonl", "--timeout", "500ms"],
        &hang,
        &["search"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(numbers_with(&out, "fail"), [3, 14, 15], "{}", out.stdout);
    for n in [3, 14, 15] {
        assert!(
            detail(&out, n).contains("did not finish in 0.5 s"),
            "{n}: {}",
            out.stdout
        );
    }
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(run(&["verify", "-q"], out.stdout.as_bytes()).code, 1);
    // The result names the needed check that could not be decided.
    let human = lint_cmd(&["--timeout", "500ms"], &hang, &["search"]);
    assert_eq!(human.code, 1);
    let result = human.stdout.lines().last().unwrap_or_default();
    assert!(result.contains("NOT CONFORMING"), "{}", human.stdout);
    assert!(
        result.contains("lint.02-stdout-jsonl could not be decided"),
        "{}",
        human.stdout
    );
}

/// A tool that writes valid JSONL for ever never ends its stream: the
/// checks that need its end fail, and the result says which could not be
/// decided.
#[test]
fn an_endless_writer_of_valid_jsonl_is_not_conforming() {
    let dir = tempfile::tempdir().unwrap();
    let endless = dir.path().join("endless.sh");
    discoverable_tool(
        &endless,
        &format!("echo '{META_1}'\nwhile :; do echo '{HIT_1}'; done"),
    );
    let out = lint_cmd(
        &[
            "--output",
            "jsonl",
            "--timeout",
            "500ms",
            "--checks",
            "2,3,14,15",
        ],
        &endless,
        &["search"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(numbers_with(&out, "fail"), [3, 14, 15], "{}", out.stdout);
    assert!(
        detail(&out, 14).contains("did not finish in 0.5 s"),
        "{}",
        out.stdout
    );
    assert_eq!(numbers_with(&out, "inconclusive"), [2], "{}", out.stdout);
}

/// Nothing decided is exit 1, never "CONFORMING": said in every format,
/// so a TAP or JUnit consumer agrees with the exit status.
#[test]
fn nothing_decided_is_exit_1_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("hang.sh");
    discoverable_tool(&hang, &format!("echo '{META_1}'\nexec sleep 30"));
    let only_2 = ["--timeout", "300ms", "--checks", "2"];
    let human = lint_cmd(&only_2, &hang, &["search"]);
    assert_eq!(human.code, 1, "{}", human.stdout);
    assert!(
        human.stdout.contains("no check could be decided"),
        "{}",
        human.stdout
    );
    assert!(!human.stdout.contains("CONFORMING for"), "{}", human.stdout);
    let jsonl = lint_cmd(
        &[&only_2[..], &["--output", "jsonl"]].concat(),
        &hang,
        &["search"],
    );
    assert_eq!(jsonl.code, 1);
    assert!(jsonl.stdout.contains("LINT_UNDECIDED"), "{}", jsonl.stdout);
    assert_eq!(run(&["verify", "-q"], jsonl.stdout.as_bytes()).code, 1);
    let tap = lint_cmd(
        &[&only_2[..], &["--output", "tap"]].concat(),
        &hang,
        &["search"],
    );
    assert_eq!(tap.code, 1);
    assert!(
        tap.stdout.lines().any(|l| l.starts_with("not ok ")),
        "{}",
        tap.stdout
    );
    // A needed check left out by --checks is not asked for: a decided
    // check alone may pass.
    let good = lint(&["--checks", "1"], &tool(dir.path(), "good"));
    assert_eq!(good.code, 0, "{}", good.stdout);
}

/// lint.15 on a stream with neither seq nor event_count is not-claimed,
/// however it is labelled (docs/contract.md §3.4): the AOI 0.2 stream is what the
/// TypeScript SDK's Emitter writes (meta, one event, summary; fixture
/// sdk-ts-0.2.jsonl), the AFDATA one a result stream.
#[test]
fn a_stream_without_seq_or_event_count_does_not_claim_check_15() {
    let dir = tempfile::tempdir().unwrap();
    let sdk = std::fs::read_to_string(fixture("lint/sdk-ts-0.2.jsonl")).unwrap();
    let relabelled = sdk.replace(r#""aoi_version":"0.2""#, r#""aoi_version":"1.0-alpha""#);
    let afdata = std::fs::read_to_string(fixture("streams/afdata-upload.jsonl")).unwrap();
    for (name, stream) in [
        ("aoi-0.2", sdk),
        ("aoi-1.0", relabelled),
        ("afdata", afdata),
    ] {
        let path = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&path, stream).unwrap();
        let script = dir.path().join(format!("{name}.sh"));
        discoverable_tool(&script, &format!("exec cat '{}'", path.display()));
        let out = lint_cmd(
            &["--output", "jsonl", "--checks", "15"],
            &script,
            &["search"],
        );
        assert_eq!(
            numbers_with(&out, "not-claimed"),
            [15],
            "{name}: {}",
            out.stdout
        );
    }
    // A stream that claims seq is still held to it.
    let gap = dir.path().join("gap.sh");
    let gapped = HIT_1.replace(r#""seq":1"#, r#""seq":2"#);
    discoverable_tool(&gap, &format!("echo '{META_1}'\necho '{gapped}'"));
    let out = lint_cmd(&["--output", "jsonl", "--checks", "15"], &gap, &["search"]);
    assert_eq!(numbers_with(&out, "fail"), [15], "{}", out.stdout);
}

/// The TAP report: 16 points and a plan of 16, checks not made marked
/// `# SKIP`, and `prove` reads it.
#[test]
fn the_tap_report_is_read_by_prove() {
    let dir = tempfile::tempdir().unwrap();
    let out = lint(&["--output", "tap"], &tool(dir.path(), "good"));
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("\n1..16\n"), "{}", out.stdout);
    assert_eq!(
        out.stdout.matches(" # SKIP skipped").count(),
        5,
        "{}",
        out.stdout
    );
    if !peer(installed("prove"), "prove") {
        return;
    }
    let t = dir.path().join("lint.t");
    std::fs::write(&t, out.stdout.as_bytes()).unwrap();
    let prove = Command::new("prove")
        .args(["-e", "cat"])
        .arg(&t)
        .output()
        .unwrap();
    assert!(
        prove.status.success(),
        "{}",
        String::from_utf8_lossy(&prove.stdout)
    );
    let failing = lint(&["--output", "tap"], &tool(dir.path(), "banner"));
    std::fs::write(&t, failing.stdout.as_bytes()).unwrap();
    let prove = Command::new("prove")
        .args(["-e", "cat"])
        .arg(&t)
        .output()
        .unwrap();
    assert!(!prove.status.success(), "prove agrees with exit 1");
}

#[test]
fn aoitap_lints_itself() {
    let file = fixture("streams/ok-complete.jsonl");
    let aoitap = bin();
    let out = run(
        &[
            "lint",
            "--output",
            "jsonl",
            "--",
            aoitap.to_str().unwrap(),
            "verify",
            "--output",
            "jsonl",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(numbers_with(&out, "fail").is_empty());
    // Reading stdin, verify is a transformer: 12 and 16 are made too.
    let stdin = lint_cmd(
        &["--output", "jsonl"],
        &aoitap,
        &["verify", "--output", "jsonl", "-"],
    );
    assert_eq!(stdin.code, 0, "{}", stdin.stdout);
    let passed = numbers_with(&stdin, "pass");
    assert!(
        passed.contains(&12) && passed.contains(&16),
        "{}",
        stdin.stdout
    );
    // 11 has no results to cut: CMD ARGS read stdin from /dev/null, and
    // verify of an empty stdin exits 65 (README says so).
    assert!(
        numbers_with(&stdin, "inconclusive").contains(&11),
        "{}",
        stdin.stdout
    );
}

/// Output past what a pipe holds, many findings, and a long line are
/// judged without holding them: a stream of 200,000 blank lines fails
/// check 2 once, with its count, quickly.
#[test]
fn a_flood_of_findings_is_counted_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("blank.sh");
    write_script(
        &script,
        "#!/bin/sh\nhead -c 200000 /dev/zero | tr '\\0' '\\n'\n",
    );
    let out = lint_cmd(
        &["--output", "jsonl", "--checks", "lint.02-stdout-jsonl"],
        &script,
        &[],
    );
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("and 199999 more"), "{}", out.stdout);
}

/// CMD ARGS the tool refuses as a usage error (a mistyped command) are not
/// a conforming command: 64, in the report format asked for.
#[test]
fn cmd_args_the_tool_refuses_are_a_usage_error_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let good = tool(dir.path(), "good");
    let typo = lint_cmd(&[], &good, &["lsit", "--output", "jsonl"]);
    assert_eq!(typo.code, 64, "{}", typo.stdout);
    assert!(typo.stderr.contains("usage error"), "{}", typo.stderr);
    let jsonl = lint_cmd(
        &["--output", "jsonl"],
        &good,
        &["lsit", "--output", "jsonl"],
    );
    assert_eq!(jsonl.code, 64);
    assert_eq!(
        run(&["verify", "-q"], jsonl.stdout.as_bytes()).code,
        1,
        "{}",
        jsonl.stdout
    );
    let tap = lint_cmd(&["--output", "tap"], &good, &["lsit"]);
    assert!(tap.stdout.starts_with("Bail out!"), "{}", tap.stdout);
    let missing = lint(&["--expected-failures", "/nonexistent/known.txt"], &good);
    assert_eq!(missing.code, 66, "{}", missing.stderr);
}

/// Checks are named by id, by `lint.NN` or by number.
#[test]
fn a_check_is_named_by_id_by_lint_nn_or_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let out = lint(
        &[
            "--output",
            "jsonl",
            "--checks",
            "2,lint.14,lint.15-seq-and-count",
        ],
        &tool(dir.path(), "good"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let got: Vec<u64> = checks(&out).iter().map(|c| c.2).collect();
    assert_eq!(got, [2, 14, 15]);
}

/// lint's flags go before a `--` in CMD ARGS, where a tool reads flags.
#[test]
fn flags_go_before_a_double_dash_in_cmd_args() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("dashdash.sh");
    // Conforming for check 5 only when the unknown flag comes before --.
    write_script(
        &script,
        "#!/bin/sh\nfor a; do [ \"$a\" = -- ] && break; case $a in --aoitap-lint-no-such-flag) exit 64;; esac; done\necho '{\"type\":\"x\"}'\n",
    );
    let out = lint_cmd(
        &["--output", "jsonl", "--checks", "5"],
        &script,
        &["go", "--", "q"],
    );
    assert_eq!(numbers_with(&out, "pass"), [5], "{}", out.stdout);
}

/// A child lint had before its first call (its parent's job) is not one
/// of the calls': it is left running.
#[test]
fn a_child_lint_did_not_start_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let good = tool(dir.path(), "good");
    let marker = format!("sleep 30.{}3", std::process::id());
    let script = format!(
        "{marker} & exec {} lint -q --checks 1 -- {} search q --output jsonl",
        bin().display(),
        good.display()
    );
    let status = Command::new("sh").args(["-c", &script]).status().unwrap();
    assert_eq!(status.code(), Some(0));
    let left = running(&marker);
    assert_eq!(left.len(), 1, "{left:?}");
    let _ = Command::new("pkill").args(["-f", &marker]).status();
}

/// `--env NAME` passes a variable to CMD's calls, never to schema.
#[test]
fn env_passes_a_variable_to_the_calls_but_not_to_discovery() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("envtool.sh");
    write_script(
        &script,
        "#!/bin/sh\ncase \"$1\" in schema) [ -z \"$LINT_TEST_TOKEN\" ] && echo '{\"type\":\"object\"}' && exit 0; exit 1;; esac\n[ \"$LINT_TEST_TOKEN\" = x ] || exit 3\necho '{\"type\":\"x\"}'\n",
    );
    let lint_with = |extra: &[&str]| {
        let out = Command::new(bin())
            .args(["lint", "--output", "jsonl", "--checks", "1,2"])
            .args(extra)
            .arg("--")
            .arg(&script)
            .arg("go")
            .env("LINT_TEST_TOKEN", "x")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };
    let with = lint_with(&["--env", "LINT_TEST_TOKEN"]);
    assert_eq!(numbers_with(&with, "pass"), [1, 2], "{}", with.stdout);
    let without = lint_with(&[]);
    assert_eq!(
        numbers_with(&without, "inconclusive"),
        [2],
        "{}",
        without.stdout
    );
    assert_eq!(
        run(&["lint", "--env", "LINT_UNSET_VAR_X", "--", "true"], b"").code,
        64
    );
}

/// Check 5 holds a tool to AOI 1.0 whatever version its stream says: the
/// 0.2 SDK's own `error({category:'partial'})` fails it.
#[test]
fn a_removed_category_fails_check_5_in_a_stream_labelled_0_2() {
    let dir = tempfile::tempdir().unwrap();
    let meta = r#"{"type":"aoi:meta","tool":"t","tool_version":"1.0.0","aoi_version":"0.2","schema_name":"com.example.t","schema_version":"1.0.0","command":"search"}"#;
    let error = r#"{"type":"aoi:error","code":"SOME_LEFT","category":"partial","message":"some left","retryable":false}"#;
    let summary = r#"{"type":"aoi:summary","ok":false,"reason":"failed","count":2,"warning_count":0,"error_count":1,"truncated":false,"schema_version":"1.0.0"}"#;
    let path = dir.path().join("partial.jsonl");
    std::fs::write(&path, format!("{meta}\n{error}\n{summary}\n")).unwrap();
    let script = dir.path().join("partial.sh");
    discoverable_tool(&script, &format!("cat '{}'; exit 1", path.display()));
    let out = lint_cmd(
        &["--output", "jsonl", "--checks", "5"],
        &script,
        &["search"],
    );
    assert_eq!(numbers_with(&out, "fail"), [5], "{}", out.stdout);
    assert!(detail(&out, 5).contains("partial"), "{}", out.stdout);
}

/// The `properties.stderr` of check `number` in a jsonl report.
fn stderr_of(out: &Out, number: u64) -> Vec<serde_json::Value> {
    out.events()
        .into_iter()
        .find(|v| v["type"] == "aoi:check" && v["properties"]["check"] == number)
        .and_then(|v| v["properties"]["stderr"].as_array().cloned())
        .unwrap_or_default()
}

/// A check that fails on a call shows the last lines of that call's
/// stderr, and says when they hold a stack trace (docs/contract.md §1.4):
/// a newcomer rebuilt lint's sandbox by hand to see the traceback behind
/// check 10.
#[test]
fn a_failed_check_shows_the_stderr_of_the_call_it_failed_on() {
    let dir = tempfile::tempdir().unwrap();
    let traceback = tool(dir.path(), "traceback");
    let call = "CMD with stdout closed after the first line";

    let human = lint(&["--checks", "10"], &traceback);
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("a stack trace on stderr"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(&format!("stderr of {call}")),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("| BrokenPipeError"),
        "{}",
        human.stdout
    );

    let jsonl = lint(&["--checks", "10", "--output", "jsonl"], &traceback);
    let said = stderr_of(&jsonl, 10);
    assert_eq!(said.len(), 1, "{}", jsonl.stdout);
    assert_eq!(said[0]["call"], call);
    assert_eq!(said[0]["stack_trace"], true);
    let tail = said[0]["tail"].as_str().unwrap();
    assert!(
        tail.ends_with("BrokenPipeError: [Errno 32] Broken pipe"),
        "{tail}"
    );
    assert!(tail.lines().count() <= 10 && tail.len() <= 2048, "{tail}");
    // Still a conforming stream, valid against aoitap's own schema.
    let path = dir.path().join("aoitap.schema.json");
    std::fs::write(&path, run(&["schema"], b"").stdout).unwrap();
    let verified = run(
        &["verify", "-q", "--schema", path.to_str().unwrap()],
        jsonl.stdout.as_bytes(),
    );
    assert_eq!(verified.code, 1, "{}", verified.stdout);

    let tap = lint(&["--checks", "10", "--output", "tap"], &traceback);
    assert!(
        tap.stdout
            .contains("\n  stderr: \"stderr of CMD with stdout"),
        "{}",
        tap.stdout
    );
    let junit = lint(&["--checks", "10", "--output", "junit"], &traceback);
    assert!(
        junit.stdout.contains("| BrokenPipeError"),
        "{}",
        junit.stdout
    );

    // A check that passes shows nothing of stderr.
    let good = lint(
        &["--checks", "10", "--output", "jsonl"],
        &tool(dir.path(), "good"),
    );
    assert!(stderr_of(&good, 10).is_empty(), "{}", good.stdout);
}

/// What is shown is a bounded tail, quoted once per call in the human
/// report, and withheld whole when it names something secret-looking,
/// as every quote of the tool's words is (docs/contract.md §7.1, §1.4).
#[test]
fn a_stderr_tail_is_bounded_quoted_once_and_withheld_when_it_names_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let noisy = dir.path().join("noisy.sh");
    discoverable_tool(
        &noisy,
        &format!(
            "echo '{META_1}'\ni=1; while [ $i -le 40 ]; do echo \"progress $i\" >&2; i=$((i+1)); done\nexit 1"
        ),
    );
    let checks = ["--checks", "3,13"];
    let out = lint_cmd(
        &[&checks[..], &["--output", "jsonl"]].concat(),
        &noisy,
        &["search"],
    );
    let said = stderr_of(&out, 3);
    assert_eq!(said.len(), 1, "{}", out.stdout);
    assert_eq!(said[0]["call"], "CMD");
    assert_eq!(said[0]["cut"], true);
    assert_eq!(said[0]["stack_trace"], false);
    let tail = said[0]["tail"].as_str().unwrap();
    let want: Vec<String> = (31..=40).map(|n| format!("progress {n}")).collect();
    assert_eq!(tail, want.join("\n"));
    assert!(
        !detail(&out, 3).contains("stack trace"),
        "{}",
        detail(&out, 3)
    );

    // Checks 3 and 13 fail on the same call: its lines are shown once.
    let human = lint_cmd(&checks, &noisy, &["search"]);
    assert_eq!(
        human.stdout.matches("| progress 40").count(),
        1,
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("stderr of CMD: as under lint.03-exit-matches-summary"),
        "{}",
        human.stdout
    );

    let leaky = dir.path().join("leaky.sh");
    discoverable_tool(
        &leaky,
        &format!("echo '{META_1}'\necho 'connecting with password=S3CR3T' >&2\nexit 1"),
    );
    let out = lint_cmd(&["--checks", "3", "--output", "jsonl"], &leaky, &["search"]);
    assert!(!out.stdout.contains("S3CR3T"), "{}", out.stdout);
    let said = stderr_of(&out, 3);
    assert_eq!(said[0]["tail"], serde_json::Value::Null, "{}", out.stdout);
    assert_eq!(said[0]["withheld"], "it names something secret-looking");
    let human = lint_cmd(&["--checks", "3"], &leaky, &["search"]);
    assert!(!human.stdout.contains("S3CR3T"), "{}", human.stdout);
    assert!(
        human.stdout.contains("stderr of CMD: not quoted"),
        "{}",
        human.stdout
    );
}
