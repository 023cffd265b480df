//! JUnit XML (docs/contract.md §5.2, §5.3), held to what its readers hold
//! it to: every report a test here makes is valid against Jenkins
//! xunit's `junit-10.xsd` whole, and each of its suites, as Surefire
//! writes one per file, against Maven Surefire's
//! `surefire-test-report-3.0.xsd` (both under
//! `tests/fixtures/schemas/junit/`, with their sources), checked by
//! `xmllint`; and `junitparser` (PyPI) reads the same cases. A peer not
//! installed is skipped, and said, unless `AOITAP_PEERS=require` (CI).

use std::process::Command;

use crate::ci::{producer, stream, three_reported};
use crate::util::*;

/// The JUnit schemas' file names, under `tests/fixtures/schemas/junit/`.
const JENKINS: &str = "junit-10.xsd";
const SUREFIRE: &str = "surefire-test-report-3.0.xsd";

/// What `xmllint` says of `xml` against the schema `xsd`: `Some("")`
/// when valid, its complaint when not, `None` where it is not installed.
fn xmllint(xsd: &str, xml: &str) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.xml");
    std::fs::write(&path, xml).unwrap();
    let out = Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(fixture("schemas/junit").join(xsd))
        .arg(&path)
        .output()
        .ok()?;
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    Some(if out.status.success() {
        String::new()
    } else {
        said
    })
}

/// The `<testsuite>` elements of a report, each as the document Surefire
/// would have written for it.
fn suites(xml: &str) -> Vec<String> {
    let mut found = vec![];
    let mut rest = xml;
    while let Some(start) = rest.find("\n  <testsuite ") {
        let end = rest[start..].find("\n  </testsuite>\n").unwrap() + start;
        let suite = &rest[start + 1..end + "\n  </testsuite>".len()];
        found.push(format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{suite}\n"
        ));
        rest = &rest[end..];
    }
    found
}

/// `xml` is valid against both schemas: a failure names the schema, the
/// complaint and the report.
fn assert_valid(xml: &str) {
    let Some(said) = xmllint(JENKINS, xml) else {
        peer(false, "xmllint");
        return;
    };
    assert!(said.is_empty(), "{JENKINS}: {said}\n{xml}");
    let suites = suites(xml);
    assert_eq!(suites.len(), xml.matches("<testsuite ").count(), "{xml}");
    for suite in suites {
        let said = xmllint(SUREFIRE, &suite).unwrap();
        assert!(said.is_empty(), "{SUREFIRE}: {said}\n{suite}");
    }
}

/// A JUnit report aoitap wrote, as its readers take it: valid against
/// both schemas, then what junitparser reads of it.
fn read(xml: &str) -> Option<Vec<(String, Vec<String>)>> {
    assert_valid(xml);
    peer_junit(xml)
}

/// What junitparser (PyPI) reads of a JUnit report: per testcase, its
/// name and result kinds (`Failure`, `Skipped`, ...).
fn junitparser(xml: &str) -> Option<Vec<(String, Vec<String>)>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.xml");
    std::fs::write(&path, xml).unwrap();
    let script = "import sys, json\n\
                  from junitparser import JUnitXml\n\
                  x = JUnitXml.fromfile(sys.argv[1])\n\
                  print(json.dumps([[c.name, [type(r).__name__ for r in c.result]] for s in x for c in s]))";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .output()
        .ok()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("No module named"), "junitparser failed: {err}");
        return None;
    }
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn verify_junit_is_a_testcase_per_run_and_a_failure_per_cut_one() {
    let out = three_reported("junit", &[]);
    let xml = &out.stdout;
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    assert_eq!(
        xml.matches("<testsuite ").count(),
        3,
        "a suite per FILE: {xml}"
    );
    assert_eq!(xml.matches("<testcase ").count(), 3, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 2, "{xml}");
    assert_eq!(
        xml.matches("tests=\"1\" failures=\"1\"").count(),
        2,
        "{xml}"
    );
    // The findings are the failure's text.
    assert!(xml.contains("error[summary.missing]"), "{xml}");
    assert!(xml.contains("error[summary.count-mismatch]"), "{xml}");
    if let Some(cases) = read(xml) {
        assert_eq!(cases.len(), 3, "{cases:?}");
        let failed: Vec<_> = cases.iter().filter(|(_, r)| r == &["Failure"]).collect();
        assert_eq!(failed.len(), 2, "{cases:?}");
    }
}

fn peer_junit(xml: &str) -> Option<Vec<(String, Vec<String>)>> {
    let cases = junitparser(xml);
    peer(cases.is_some(), "junitparser").then(|| cases.unwrap())
}

#[test]
fn junit_text_is_escaped_whatever_a_stream_holds() {
    // A run id, a command and a message with markup and a control
    // character.
    let hostile = "{\"type\":\"aoi:meta\",\"aoi\":{\"seq\":0,\"run\":\"<a&b>\\u0001\"},\
                   \"command\":\"<c&d>\\u0001\"}\n";
    let out = run(&["verify", "--output", "junit"], hostile.as_bytes());
    assert_eq!(out.code, 65);
    assert!(!out.stdout.contains("<a&b>"), "{}", out.stdout);
    assert!(!out.stdout.contains("<c&d>"), "{}", out.stdout);
    assert!(
        out.stdout.contains("value=\"&lt;a&amp;b&gt;"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains('\u{1}'), "{}", out.stdout);
    if let Some(cases) = read(&out.stdout) {
        assert_eq!(cases.len(), 1, "{cases:?}");
        assert!(
            cases[0].0.contains("<c&d>"),
            "the name reads back: {cases:?}"
        );
    }
}

/// A run left open by a signal is an error in the report, with its
/// findings: never a green build.
#[test]
fn junit_names_a_run_left_open_as_an_error() {
    let good = std::fs::read_to_string(stream("ok-complete.jsonl")).unwrap();
    let open: String = good
        .lines()
        .take(3)
        .map(|l| {
            l.replace("01JZQ7X4TQ9", "OPEN1")
                .replace("\"seq\":2", "\"seq\":7")
                + "\n"
        })
        .collect();
    let input = format!("{good}{open}");
    let (code, xml) = interrupted(
        Command::new(bin()).args(["verify", "--multi-run", "--output", "junit"]),
        Some(input.as_bytes()),
        500,
    );
    assert_eq!(code, Some(130));
    assert!(xml.contains("<error type=\"cancelled\""), "{xml}");
    assert!(
        xml.contains("run OPEN1") && xml.contains("seq.gap"),
        "{xml}"
    );
    // Named as the run it repeats, numbered as it began; its id kept.
    assert!(
        xml.contains("<testcase name=\"outline search #2\"")
            && xml.contains("<property name=\"outline search #2\" value=\"OPEN1\"/>"),
        "{xml}"
    );
    if let Some(cases) = read(&xml) {
        assert_eq!(cases.len(), 2, "{cases:?}");
    }
}

#[test]
fn junit_memory_is_bounded_however_many_runs_a_file_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.jsonl");
    std::fs::write(&path, many_runs(100_000, 1)).unwrap();
    let (kib, _) = peak_kib(
        &[
            "verify",
            "--multi-run",
            "--output",
            "junit",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert!(kib < 64 * 1024, "{kib} KiB for 100,000 runs");
}

#[test]
fn run_junit_records_a_retried_attempt_as_a_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let count = count.to_str().unwrap();
    let flaky = producer("flaky.sh");
    let opts = ["--retries", "2", "--backoff", "10ms", "--output", "junit"];
    let junit = |runs_needed: &str, count: &str| {
        let mut args = vec!["run"];
        args.extend(opts);
        args.extend(["--save", "/dev/null", "--", &flaky, runs_needed, count]);
        run(&args, b"")
    };
    // Fails once, then passes: one testcase, flaky.
    let out = junit("2", count);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        out.stdout.matches("<testcase ").count(),
        1,
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stdout.matches("<flakyFailure ").count(),
        1,
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("<failure "), "{}", out.stdout);
    assert!(out.stdout.contains("failures=\"0\""), "{}", out.stdout);
    if let Some(cases) = read(&out.stdout) {
        assert_eq!(cases.len(), 1, "{cases:?}");
        assert!(cases[0].1.is_empty(), "a flaky pass is a pass: {cases:?}");
    }
    // Fails every time: the last attempt's failure, and its reruns.
    let count2 = dir.path().join("count2");
    let out = junit("9", count2.to_str().unwrap());
    assert_eq!(out.code, 75, "{}", out.stdout);
    assert_eq!(
        out.stdout.matches("<testcase ").count(),
        1,
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("<failure ").count(), 1, "{}", out.stdout);
    assert_eq!(
        out.stdout.matches("<rerunFailure ").count(),
        2,
        "{}",
        out.stdout
    );
    // Each rerun carries what it said as its stack trace.
    assert_eq!(
        out.stdout.matches("<stackTrace>").count(),
        2,
        "{}",
        out.stdout
    );
    read(&out.stdout);
}

#[test]
fn lint_junit_is_a_testcase_per_check() {
    let out = run(
        &["lint", "--output", "junit", "--", &producer("good.sh")],
        b"",
    );
    let checks = aoitap::check::lint_checks::CHECKS.len();
    assert_eq!(
        out.stdout.matches("<testcase ").count(),
        checks,
        "{}",
        out.stdout
    );
    let failed = out.stdout.matches("<failure ").count();
    assert_eq!(out.code != 0, failed > 0, "{}", out.stdout);
    if let Some(cases) = read(&out.stdout) {
        assert_eq!(cases.len(), checks, "{cases:?}");
    }
}

/// `command`'s exit status and stdout when SIGINT reaches it `ms` after
/// it starts, `input` written to a stdin kept open till it ends.
fn interrupted(command: &mut Command, input: Option<&[u8]>, ms: u64) -> (Option<i32>, String) {
    if input.is_some() {
        command.stdin(std::process::Stdio::piped());
    }
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = input.map(|bytes| {
        let mut stdin = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut stdin, bytes).unwrap();
        stdin
    });
    std::thread::sleep(std::time::Duration::from_millis(ms));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

/// Every suite and case has its time, in seconds to the millisecond;
/// `errors` counts what could not be judged: an unreadable FILE, here.
#[test]
fn verify_junit_times_every_case_and_counts_an_unreadable_file_an_error() {
    let streams = std::fs::read_dir(fixture("streams")).unwrap();
    let mut files: Vec<String> = streams
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".jsonl"))
        .collect();
    files.sort();
    files.push("/nonexistent/input.jsonl".to_string());
    let mut args = vec!["verify", "--output", "junit"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args, b"");
    assert_eq!(out.code, 66, "{}", out.stderr);
    let xml = &out.stdout;
    let time = regex::Regex::new(r#" time="\d+\.\d{3}""#).unwrap();
    for tag in ["<testsuite ", "<testcase "] {
        for line in xml.lines().filter(|l| l.trim_start().starts_with(tag)) {
            assert!(time.is_match(line), "no time: {line}");
        }
    }
    let unreadable = xml
        .lines()
        .find(|l| l.contains("<testsuite name=\"/nonexistent/input.jsonl\""))
        .unwrap();
    assert!(unreadable.contains("errors=\"1\""), "{unreadable}");
    assert_eq!(xml.matches("<error ").count(), 1, "{xml}");
    read(xml);
}

/// A run's time is how long it was read: a run whose lines came over a
/// second says so, one read at once says next to nothing.
#[test]
fn a_runs_time_is_from_its_first_line_to_its_verdict() {
    let good = std::fs::read_to_string(stream("ok-complete.jsonl")).unwrap();
    let (head, tail) = good.split_at(good.find('\n').unwrap() + 1);
    let mut child = Command::new(bin())
        .args(["verify", "--output", "junit"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, head.as_bytes()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    std::io::Write::write_all(&mut stdin, tail.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let xml = String::from_utf8(out.stdout).unwrap();
    let time = regex::Regex::new(r#"<testcase [^>]* time="(\d+\.\d{3})""#).unwrap();
    let took: f64 = time.captures(&xml).unwrap()[1].parse().unwrap();
    assert!((1.1..30.0).contains(&took), "{took}: {xml}");
    read(&xml);
}

/// `run`: an attempt timed out, and one cancelled (SIGINT), each a case
/// of its own, timed by its attempt; a cancel is an error.
#[test]
fn run_junit_for_a_timeout_and_a_cancel_is_valid() {
    let hang = producer("hang.sh");
    let out = run(
        &[
            "run",
            "--timeout",
            "300ms",
            "--kill-after",
            "1s",
            "--output",
            "junit",
            "--save",
            "/dev/null",
            "--",
            &hang,
            "3456.5",
        ],
        b"",
    );
    assert_eq!(out.code, 75, "{}", out.stderr);
    assert!(
        out.stdout.contains("<failure type=\"timeout\""),
        "{}",
        out.stdout
    );
    let took = regex::Regex::new(r#"<testcase [^>]* time="(\d+\.\d{3})""#).unwrap();
    let took: f64 = took.captures(&out.stdout).unwrap()[1].parse().unwrap();
    assert!(took >= 0.3, "{took}: {}", out.stdout);
    read(&out.stdout);

    let (code, xml) = interrupted(
        Command::new(bin())
            .args(["run", "--output", "junit", "--save", "/dev/null", "--"])
            .args([&hang, "4567.5"]),
        None,
        500,
    );
    assert_eq!(code, Some(130));
    // The attempt, and the run it left open: neither could be judged.
    assert_eq!(xml.matches("<error type=\"cancelled\"").count(), 2, "{xml}");
    assert!(xml.contains("errors=\"2\""), "{xml}");
    read(&xml);
}

/// `lint` of a producer that fails its checks: failures and skips, valid.
#[test]
fn lint_junit_of_a_failing_producer_is_valid() {
    let out = run(
        &["lint", "--output", "junit", "--", &producer("crash.sh")],
        b"",
    );
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("<failure "), "{}", out.stdout);
    read(&out.stdout);
}

/// A signal while `run --retries` waits to try again keeps the attempts
/// made: reruns of a case cancelled, counted in `errors`.
#[test]
fn a_cancel_during_the_backoff_keeps_the_attempts_made() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let mut retried = Command::new(bin());
    retried
        .args([
            "run",
            "--output",
            "junit",
            "--retries",
            "3",
            "--backoff",
            "5s",
        ])
        .args(["--save", "/dev/null", "--", &producer("flaky.sh"), "9"])
        .arg(&count);
    let (code, xml) = interrupted(&mut retried, None, 1500);
    assert_eq!(code, Some(130));
    assert!(xml.matches("<rerunFailure ").count() >= 1, "{xml}");
    assert!(xml.contains("<error type=\"cancelled\""), "{xml}");
    assert!(
        xml.contains("<testcase name=\"") && xml.contains("flaky.sh"),
        "{xml}"
    );
    assert!(xml.contains("errors=\"1\""), "{xml}");
    read(&xml);
}

/// A run id names a run within its FILE: a finding about a run already
/// judged never lands on another file's run of the same id.
#[test]
fn a_late_finding_stays_with_its_own_file() {
    let good = std::fs::read_to_string(stream("ok-complete.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let late = dir.path().join("late.jsonl");
    let after = "{\"type\":\"hit\",\"aoi\":{\"seq\":8,\"run\":\"01JZQ7X4TQ9\"}}\n";
    std::fs::write(&late, format!("{good}{after}")).unwrap();
    let ok = stream("ok-complete.jsonl");
    let out = run(
        &[
            "verify",
            "--multi-run",
            "--output",
            "junit",
            late.to_str().unwrap(),
            &ok,
        ],
        b"",
    );
    assert_eq!(out.code, 65);
    let xml = &out.stdout;
    let ok_suite = xml
        .split("<testsuite ")
        .find(|s| s.starts_with(&format!("name=\"{ok}\"")))
        .unwrap();
    assert!(!ok_suite.contains("summary.not-last"), "{xml}");
    assert!(xml.contains("summary.not-last"), "{xml}");
    read(xml);
}

/// A testcase is the same test from one build to the next: named by its
/// FILE (classname) and the tool and command its `aoi:meta` gives, not by
/// its run id, which is new on every build and kept as a property. Two
/// runs of one tool and command are numbered in the order they began,
/// though the second ended first (docs/contract.md §5.2).
#[test]
fn junit_names_a_run_by_its_tool_and_command_the_same_every_build() {
    let build = |ids: [&str; 3]| {
        let ev = |id: &str, seq: u64, ty: &str, rest: &str| {
            format!(r#"{{"type":"{ty}","aoi":{{"seq":{seq},"run":"{id}"}},{rest}}}"#)
        };
        let meta = |id: &str, command: &str| {
            ev(
                id,
                0,
                "aoi:meta",
                &format!(r#"{IDENTITY},"command":"{command}""#),
            )
        };
        let end = |id: &str| {
            let claim = r#""ok":true,"event_count":2,"count":0,"warning_count":0,"error_count":0"#;
            ev(id, 1, "aoi:summary", &format!("{claim},{IDENTITY}"))
        };
        let [a, b, c] = ids;
        // A and B are `t search`, A begun first and ended last; C is
        // `t index`.
        let log = lines(&[
            meta(a, "search"),
            meta(b, "search"),
            end(b),
            meta(c, "index"),
            end(c),
            end(a),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("merged.jsonl");
        std::fs::write(&path, log).unwrap();
        let out = run(
            &[
                "verify",
                "--multi-run",
                "--output",
                "junit",
                path.to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(out.code, 0, "{}", out.stdout);
        read(&out.stdout);
        out.stdout.replace(path.to_str().unwrap(), "FILE")
    };
    let attr = regex::Regex::new(r#"<testcase name="([^"]*)" classname="([^"]*)""#).unwrap();
    let cases = |xml: &str| -> Vec<(String, String)> {
        attr.captures_iter(xml)
            .map(|c| (c[1].to_string(), c[2].to_string()))
            .collect()
    };
    let first = build(["01AAA", "01BBB", "01CCC"]);
    let second = build(["02XXX", "02YYY", "02ZZZ"]);
    let named = cases(&first);
    assert_eq!(named, cases(&second), "the same tests every build");
    let want = [
        ("t search #2", "FILE"),
        ("t index", "FILE"),
        ("t search", "FILE"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(n, c)| (n.to_string(), c.to_string()))
        .collect();
    assert_eq!(named, want, "{first}");
    // Each run's id, kept under its case's name.
    for (name, id) in [
        ("t search", "01AAA"),
        ("t search #2", "01BBB"),
        ("t index", "01CCC"),
    ] {
        let property = format!("<property name=\"{name}\" value=\"{id}\"/>");
        assert!(first.contains(&property), "{property}: {first}");
    }
    assert!(!first.contains("<testcase name=\"run "), "{first}");
}
