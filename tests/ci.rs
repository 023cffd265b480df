//! The reports CI systems read (docs/contract.md §19): JUnit XML, SARIF, GitHub
//! workflow commands; each command's help offering only what it takes;
//! `aoitap man` and the completions.
//!
//! Two peers read the reports as CI does: `junitparser` (PyPI) and
//! Microsoft's `sarif-multitool` (npm). Where one is not installed its
//! check is skipped, and said; `AOITAP_PEERS=require` (CI sets it, having
//! installed both) makes a missing peer a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

fn stream(name: &str) -> String {
    fixture("streams").join(name).to_string_lossy().into_owned()
}

fn producer(name: &str) -> String {
    fixture("producers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Whether a peer may be used: installed, or else skipped unless CI
/// requires it.
fn peer(found: bool, name: &str) -> bool {
    if !found {
        let required = std::env::var("AOITAP_PEERS").is_ok_and(|v| v == "require");
        assert!(
            !required,
            "{name} is not installed, and AOITAP_PEERS=require"
        );
        eprintln!("{name} not installed: its check is skipped");
    }
    found
}

/// A good stream and two cut ones, as verify's operands.
fn three_streams() -> [String; 3] {
    [
        stream("ok-complete.jsonl"),
        stream("no-summary.jsonl"),
        stream("v0.2-sdk-middle-cut.jsonl"),
    ]
}

/// `verify --output FORMAT` of the three streams (and `more`): 65, for
/// the cut ones.
fn three_reported(format: &str, more: &[&str]) -> Out {
    let streams = three_streams();
    let mut args = vec!["verify", "--output", format];
    args.extend(streams.iter().map(String::as_str));
    args.extend(more);
    let out = run(&args, b"");
    assert_eq!(out.code, 65, "{}", out.stderr);
    out
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
    if let Some(cases) = peer_junit(xml) {
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
    // A run id and a message with markup and a control character.
    let hostile = "{\"type\":\"aoi:meta\",\"aoi\":{\"seq\":0,\"run\":\"<a&b>\\u0001\"}}\n";
    let out = run(&["verify", "--output", "junit"], hostile.as_bytes());
    assert_eq!(out.code, 65);
    assert!(!out.stdout.contains("<a&b>"), "{}", out.stdout);
    assert!(!out.stdout.contains('\u{1}'), "{}", out.stdout);
    if let Some(cases) = peer_junit(&out.stdout) {
        assert_eq!(cases.len(), 1, "{cases:?}");
        assert!(
            cases[0].0.contains("<a&b>"),
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
    let mut child = std::process::Command::new(bin())
        .args(["verify", "--multi-run", "--output", "junit"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, format!("{good}{open}").as_bytes()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(130));
    let xml = String::from_utf8(out.stdout).unwrap();
    assert!(xml.contains("<error type=\"cancelled\""), "{xml}");
    assert!(
        xml.contains("run OPEN1") && xml.contains("seq.gap"),
        "{xml}"
    );
    if let Some(cases) = peer_junit(&xml) {
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
    if let Some(cases) = peer_junit(&out.stdout) {
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
    if let Some(cases) = peer_junit(&out.stdout) {
        assert_eq!(cases.len(), checks, "{cases:?}");
    }
}

/// Where Microsoft's SARIF validator is: the directory of its Linux
/// package (`AOITAP_SARIF_MULTITOOL_DIR`, or beside an `npm -g` install).
fn multitool_dir() -> Option<PathBuf> {
    let given = std::env::var_os("AOITAP_SARIF_MULTITOOL_DIR").map(PathBuf::from);
    let global = Command::new("npm")
        .args(["root", "-g"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("@microsoft"));
    // npm puts the platform package beside the wrapper, or inside it.
    let installed = global.into_iter().flat_map(|g| {
        [
            g.join("sarif-multitool-linux"),
            g.join("sarif-multitool/node_modules/@microsoft/sarif-multitool-linux"),
        ]
    });
    given
        .into_iter()
        .chain(installed)
        .find(|d| d.join("Sarif.Multitool").is_file())
}

/// The results of `sarif-multitool validate` on `log`, its JSON schema
/// checked too, at every level: (level, rule id, message).
fn validated(dir: &Path, log: &str) -> Vec<(String, String, String)> {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.sarif");
    let output = tmp.path().join("out.sarif");
    std::fs::write(&input, log).unwrap();
    let status = Command::new(dir.join("Sarif.Multitool"))
        .arg("validate")
        .arg("--json-schema")
        .arg(dir.join("sarif-2.1.0.json"))
        .args(["--level", "Error", "Warning", "Note", "-o"])
        .arg(&output)
        .arg(&input)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&output).unwrap()).unwrap();
    report["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["level"].as_str().unwrap_or("warning").to_string(),
                r["ruleId"].as_str().unwrap_or("").to_string(),
                r["message"].to_string(),
            )
        })
        .collect()
}

#[test]
fn verify_sarif_places_each_finding_and_names_every_rule() {
    let out = three_reported("sarif", &[]);
    let good = &three_streams()[0];
    let log: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let run0 = &log["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), aoitap::check::rules::Rule::ALL.len());
    for r in rules {
        assert!(r["id"].is_string() && r["help"]["text"].is_string(), "{r}");
        assert!(r["defaultConfiguration"]["level"].is_string(), "{r}");
        assert!(r["properties"]["spec"].is_string(), "{r}");
    }
    let results = run0["results"].as_array().unwrap();
    assert!(results.len() >= 2, "{results:?}");
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"], "{r}");
        let at = &r["locations"][0]["physicalLocation"];
        assert!(
            at["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
                .ends_with(".jsonl"),
            "{r}"
        );
        assert!(at["region"]["startLine"].as_u64().unwrap() >= 1, "{r}");
    }
    assert_eq!(run0["invocations"][0]["exitCode"], 65);
    let dir = multitool_dir();
    if peer(dir.is_some(), "sarif-multitool") {
        let dir = dir.unwrap();
        for log in [
            out.stdout.as_str(),
            &run(&["verify", "--output", "sarif", good], b"").stdout,
        ] {
            let said = validated(&dir, log);
            let errors: Vec<_> = said.iter().filter(|(l, _, _)| l == "error").collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
    }
}

#[test]
fn verify_github_writes_commands_the_problem_matcher_reads() {
    let retryable = stream("retryable-failure.jsonl");
    let out = three_reported("github", &[&retryable]);
    // The shape GitHub's workflow commands take, as a problem matcher's
    // regexp reads them: ::LEVEL file=F,line=N,title=T::MESSAGE.
    let matcher = regex::Regex::new(
        r"^::(error|warning|notice) file=([^,:]+)(?:,line=(\d+))?,title=([^:]+)::(.+)$",
    )
    .unwrap();
    let commands: Vec<_> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("::"))
        .map(|l| {
            matcher
                .captures(l)
                .unwrap_or_else(|| panic!("not a workflow command: {l}"))
        })
        .collect();
    let titled = |t: &str| commands.iter().find(|c| &c[4] == t);
    let missing = titled("summary.missing").expect("the cut end is annotated");
    assert_eq!(&missing[1], "error");
    assert!(missing[2].ends_with("no-summary.jsonl") && missing[3].parse::<u64>().unwrap() > 0);
    assert!(titled("summary.count-mismatch").is_some(), "{}", out.stdout);
    // A run its producer failed, with no finding of its own.
    let failed = titled("run retryable").expect("the retryable run is annotated");
    assert_eq!(&failed[1], "warning");
    assert!(
        out.stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("Result: FAIL")
    );
}

#[test]
fn github_values_are_escaped_as_the_runner_unescapes_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a,b:c.jsonl");
    std::fs::write(&path, "not json\n").unwrap();
    let out = run(
        &["verify", "--output", "github", path.to_str().unwrap()],
        b"",
    );
    assert!(
        out.stdout
            .contains("a%2Cb%3Ac.jsonl,line=1,title=json.invalid::"),
        "{}",
        out.stdout
    );
}

/// The `--output` values a command's help lists.
fn listed_outputs(command: &str) -> Vec<String> {
    listed(command, "--output <FORMAT>")
}

/// The values a command's help lists for `option` (as `--output <FORMAT>`).
fn listed(command: &str, option: &str) -> Vec<String> {
    let help = run(&[command, "--help"], b"").stdout;
    let at = help
        .find(option)
        .unwrap_or_else(|| panic!("{command}: no {option}"));
    let section = &help[at..];
    let end = section.find("[default:").unwrap();
    let listed: Vec<String> = section[..end]
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap().trim().to_string())
        .collect();
    if !listed.is_empty() {
        return listed;
    }
    // Values without help of their own are one line (maybe wrapped).
    let flat = section.split_whitespace().collect::<Vec<_>>().join(" ");
    let inline = flat.split("[possible values: ").nth(1).unwrap();
    let inline = inline.split(']').next().unwrap();
    inline.split(", ").map(str::to_string).collect()
}

/// `command` with `option` (as its help offers it) is not refused: its
/// operands are `input` (CMD `cat input` for run and lint, none for the
/// documents), split-by-run writing into `out_dir`.
fn taken(command: &str, option: &[&str], input: &str, out_dir: &str) {
    let mut args = vec![command];
    args.extend(option);
    match command {
        "run" | "lint" => args.extend(["--", "cat", input]),
        "split-by-run" => args.extend(["--dir", out_dir, input]),
        "filter" => args.extend([".", input]),
        "schema" | "capabilities" => {}
        _ => args.push(input),
    }
    let out = run(&args, b"");
    assert_ne!(
        out.code, 64,
        "{args:?} is offered but refused: {}",
        out.stderr
    );
}

#[test]
fn no_help_offers_an_output_its_command_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::copy(stream("ok-complete.jsonl"), &input).unwrap();
    let input = input.to_str().unwrap();
    let root = aoitap::cli::command();
    let mut tried = 0;
    for sub in root.get_subcommands() {
        let name = sub.get_name();
        if !sub.get_arguments().any(|a| a.get_id() == "output") {
            continue;
        }
        let values = listed_outputs(name);
        assert!(!values.is_empty(), "{name}");
        for value in &values {
            let out_dir = dir.path().join(format!("split-{name}-{value}"));
            let out_dir = out_dir.to_str().unwrap();
            taken(name, &["--output", value], input, out_dir);
            tried += 1;
        }
        // And what it does not list, clap refuses.
        if !values.iter().any(|v| v == "sarif") && name != "schema" && name != "capabilities" {
            let out = run(&[name, "--output", "sarif"], b"");
            assert_eq!(out.code, 64, "{name} --output sarif");
        }
    }
    assert!(tried >= 20, "{tried}");
    // --protocol: each value listed is taken (okf is run's alone).
    for sub in root.get_subcommands() {
        let name = sub.get_name();
        if !sub.get_arguments().any(|a| a.get_id() == "protocol") {
            continue;
        }
        let values = listed(name, "--protocol <PROTOCOL>");
        assert_eq!(
            values.contains(&"okf".to_string()),
            name == "run",
            "{name}: {values:?}"
        );
        for value in &values {
            let out_dir = dir.path().join(format!("p-{name}-{value}"));
            taken(
                name,
                &["--protocol", value],
                input,
                out_dir.to_str().unwrap(),
            );
        }
    }
    // Options a command ignores are not offered either.
    for name in ["summarize", "split-by-run", "reconcile"] {
        let help = run(&[name, "--help"], b"").stdout;
        assert!(
            !help.contains("--multi-run\n"),
            "{name}: --multi-run is always on"
        );
    }
    let help = run(&["verify", "--help"], b"").stdout;
    assert!(!help.contains("run reads CMD"), "{help}");
    assert!(!run(&["run", "--help"], b"").stdout.contains("[FILE]"));
}

#[test]
fn aoitap_man_prints_the_page_and_man_renders_it() {
    let out = run(&["man"], b"");
    assert_eq!(out.code, 0);
    let page =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("man/aoitap.1"))
            .unwrap();
    assert!(out.stdout == page, "aoitap man is not man/aoitap.1");
    // (`sh` gives back stderr: the rendered page goes there.)
    let (code, text) = sh(&format!(
        "{} man | MANWIDTH=80 man -l - 1>&2",
        bin().display()
    ));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("RULES") && text.contains("seq.gap"), "{text}");
}

#[test]
fn completions_offer_rule_ids_after_allow_and_deny() {
    let script = run(&["completions", "bash"], b"").stdout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aoitap.bash");
    std::fs::write(&path, &script).unwrap();
    for flag in ["--allow", "--deny"] {
        let probe = format!(
            "source {}; COMP_WORDS=(aoitap verify {flag} seq.); COMP_CWORD=3; \
             COMP_LINE='aoitap verify {flag} seq.'; COMP_POINT=${{#COMP_LINE}}; \
             _aoitap aoitap seq. {flag}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path.display()
        );
        let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
        let offered = String::from_utf8_lossy(&out.stdout);
        let ids: Vec<&str> = offered.lines().collect();
        assert!(
            ids.contains(&"seq.gap") && ids.contains(&"seq.repeat"),
            "{flag}: {offered}"
        );
        assert!(
            ids.iter().all(|i| i.starts_with("seq.")),
            "{flag}: {offered}"
        );
    }
    // A rule id is still checked when given.
    let out = run(&["verify", "--allow", "seq.nope"], b"");
    assert_eq!(out.code, 64);
    assert!(out.stderr.contains("unknown rule"), "{}", out.stderr);
}
