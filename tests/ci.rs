//! The reports CI systems read (docs/contract.md §5.2): JUnit XML, SARIF, GitHub
//! workflow commands; each command's help offering only what it takes;
//! `aoitap man` and the completions.
//!
//! Peers read the reports as CI does: Microsoft's `sarif-multitool`
//! (npm) here, `junitparser` (PyPI) and the JUnit schemas in `junit.rs`,
//! `@actions/core` (npm) for the workflow commands. Where one is not installed its
//! check is skipped, and said; `AOITAP_PEERS=require` (CI sets it, having
//! installed both) makes a missing peer a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

pub(crate) fn stream(name: &str) -> String {
    fixture("streams").join(name).to_string_lossy().into_owned()
}

pub(crate) fn producer(name: &str) -> String {
    fixture("producers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A good stream and two cut ones, as verify's operands.
pub(crate) fn three_streams() -> [String; 3] {
    [
        stream("ok-complete.jsonl"),
        stream("no-summary.jsonl"),
        stream("v0.2-sdk-middle-cut.jsonl"),
    ]
}

/// `verify --output FORMAT` of the three streams (and `more`): 65, for
/// the cut ones.
pub(crate) fn three_reported(format: &str, more: &[&str]) -> Out {
    let streams = three_streams();
    let mut args = vec!["verify", "--output", format];
    args.extend(streams.iter().map(String::as_str));
    args.extend(more);
    let out = run(&args, b"");
    assert_eq!(out.code, 65, "{}", out.stderr);
    out
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
    // The catalogue, then the three verdicts' descriptors.
    assert_eq!(rules.len(), aoitap::check::rules::Rule::ALL.len() + 3);
    assert!(run0["tool"]["driver"]["informationUri"].is_string());
    assert_eq!(run0["automationDetails"]["id"], "aoitap/verify/");
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
        assert!(
            r["partialFingerprints"]["aoitapFinding/v1"].is_string(),
            "{r}"
        );
    }
    // A run that did not pass is a result of its own: the two cut ones.
    let verdicts = results
        .iter()
        .filter(|r| r["ruleId"] == "run.nonconforming");
    assert_eq!(verdicts.count(), 2, "{results:?}");
    assert_eq!(run0["invocations"][0]["exitCode"], 65);
    let dir = multitool_dir();
    if peer(dir.is_some(), "sarif-multitool") {
        let dir = dir.unwrap();
        for log in [
            out.stdout.as_str(),
            &run(&["verify", "--output", "sarif", good], b"").stdout,
        ] {
            // Clean: not an error, not a warning (docs/contract.md §5.3).
            let said = validated(&dir, log);
            let errors: Vec<_> = said.iter().filter(|(l, _, _)| l != "note").collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
    }
}

/// Code scanning matches a finding across runs by its fingerprint: the
/// same for the same finding on the same content, another when the
/// finding's line moves. A run its producer failed is a `run.failed`
/// result at its first line.
#[test]
fn sarif_fingerprints_hold_across_runs_and_move_with_the_line() {
    // The same line that is not JSON, second in one file, third in the
    // other: the same finding, its line moved.
    let good = std::fs::read_to_string(stream("ok-complete.jsonl")).unwrap();
    let lines: Vec<&str> = good.split_inclusive('\n').collect();
    let dir = tempfile::tempdir().unwrap();
    let (here, moved) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let with_bad_at = |k: usize| {
        let mut text: Vec<&str> = lines.clone();
        text.insert(k, "not json\n");
        text.concat()
    };
    std::fs::write(&here, with_bad_at(1)).unwrap();
    std::fs::write(&moved, with_bad_at(2)).unwrap();
    let prints = |path: &Path| {
        let out = run(
            &["verify", "--output", "sarif", path.to_str().unwrap()],
            b"",
        );
        let log: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let line = r["locations"][0]["physicalLocation"]["region"]["startLine"].clone();
                let print = r["partialFingerprints"]["aoitapFinding/v1"].clone();
                (r["ruleId"].as_str().unwrap().to_string(), line, print)
            })
            .collect::<Vec<_>>()
    };
    let once = prints(&here);
    assert_eq!(once, prints(&here), "the same input, the same fingerprints");
    let invalid = |all: &[(String, serde_json::Value, serde_json::Value)]| {
        all.iter()
            .find(|(rule, ..)| rule == "json.invalid")
            .unwrap()
            .clone()
    };
    let (a, b) = (invalid(&once), invalid(&prints(&moved)));
    assert_ne!(a.1, b.1, "the line moved");
    assert_ne!(a.2, b.2, "so did the fingerprint");

    let out = run(
        &[
            "verify",
            "--output",
            "sarif",
            &stream("retryable-failure.jsonl"),
        ],
        b"",
    );
    let log: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let run_result = results
        .iter()
        .find(|r| r["ruleId"] == "run.retryable")
        .unwrap();
    assert_eq!(run_result["level"], "warning");
    assert_eq!(
        run_result["locations"][0]["physicalLocation"]["region"]["startLine"],
        1
    );
    let dir = multitool_dir();
    if peer(dir.is_some(), "sarif-multitool") {
        let said = validated(&dir.unwrap(), &out.stdout);
        assert!(said.iter().all(|(l, _, _)| l == "note"), "{said:?}");
    }
}

#[test]
fn verify_github_writes_commands_the_problem_matcher_reads() {
    let retryable = stream("retryable-failure.jsonl");
    let out = three_reported("github", &[&retryable]);
    // The shape GitHub's workflow commands take, as a problem matcher's
    // regexp reads them: ::LEVEL title=T,file=F,line=N::MESSAGE.
    let matcher = regex::Regex::new(
        r"^::(error|warning|notice) title=([^,:]+),file=([^,:]+)(?:,line=(\d+))?::(.+)$",
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
    let titled = |t: &str| commands.iter().find(|c| &c[2] == t);
    let missing = titled("summary.missing").expect("the cut end is annotated");
    assert_eq!(&missing[1], "error");
    assert!(missing[3].ends_with("no-summary.jsonl") && missing[4].parse::<u64>().unwrap() > 0);
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
        out.stdout.contains("title=json.invalid,file=")
            && out.stdout.contains("a%2Cb%3Ac.jsonl,line=1::"),
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

/// `@actions/core`, where CI installed it (`AOITAP_ACTIONS_CORE`, the
/// package's directory).
fn actions_core() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("AOITAP_ACTIONS_CORE")?);
    dir.join("package.json").is_file().then_some(dir)
}

/// `--output github` writes the bytes `@actions/core` writes for the same
/// annotations (docs/contract.md §5.3): the toolkit itself, run by node,
/// is given each finding and failed run as `--output jsonl` reports them
/// (their decoded values: one truth), and its lines are compared with
/// aoitap's, byte for byte. The values carry `%`, CR, LF, `:`, `,` and
/// non-ASCII, in data and in properties, and the file's name has a line
/// break.
#[test]
fn github_commands_are_the_toolkits_own_bytes() {
    let core = actions_core();
    if !peer(core.is_some(), "@actions/core") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a%b:c,d é\nx.jsonl");
    // A run its producer failed, conformingly, and a cut one.
    let meta = |id: &str| {
        serde_json::json!({"type": "aoi:meta", "aoi": {"seq": 0, "run": id}, "tool": "t",
            "tool_version": "1.0.0", "aoi_version": "1.0-alpha", "schema_name": "com.example.t",
            "schema_version": "1.0.0", "command": "c"})
    };
    let summary = |id: &str, seq: u64, ok: bool| {
        let mut s = meta(id);
        s["type"] = "aoi:summary".into();
        s["aoi"]["seq"] = seq.into();
        s["ok"] = ok.into();
        s["event_count"] = (seq + 1).into();
        if !ok {
            s["reason"] = "failed".into();
        }
        s
    };
    let (failed, cut) = ("R:1,%\r\nx é", "S:2");
    let lines = [
        meta(failed),
        meta(cut),
        serde_json::json!({"type": "hit", "aoi": {"seq": 1, "run": failed}, "note": "50%: a, b é"}),
        serde_json::json!({"type": "aoi:error", "aoi": {"seq": 2, "run": failed}, "category": "io",
            "code": "E_FIFTY", "message": "50% done: a, b é", "scope": "process", "retryable": false}),
        summary(failed, 3, false),
        serde_json::json!({"type": "hit", "aoi": {"seq": 2, "run": cut}}),
        summary(cut, 3, true),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let file = path.to_str().unwrap();
    let github = run(&["verify", "--multi-run", "--output", "github", file], b"");
    let jsonl = run(&["verify", "--multi-run", "--output", "jsonl", file], b"");
    assert_eq!(github.code, jsonl.code);
    // What the toolkit is asked to say: [function, message, properties].
    let mut asked = vec![];
    for ev in jsonl.events() {
        let of_run = |message: &str| match ev["run"].as_str() {
            Some(run) => format!("{message} (run {run})"),
            None => message.to_string(),
        };
        match ev["type"].as_str().unwrap() {
            "finding" => {
                let function = match ev["severity"].as_str().unwrap() {
                    "error" => "error",
                    "warning" => "warning",
                    _ => "notice",
                };
                let mut props = serde_json::json!({"title": ev["rule"], "file": file});
                if ev["line_number"].as_u64().unwrap() > 0 {
                    props["startLine"] = ev["line_number"].clone();
                }
                asked.push(serde_json::json!([
                    function,
                    of_run(ev["message"].as_str().unwrap()),
                    props
                ]));
            }
            "run" if matches!(ev["verdict"].as_str(), Some("failed" | "retryable")) => {
                let function = match ev["verdict"].as_str().unwrap() {
                    "failed" => "error",
                    _ => "warning",
                };
                let title = format!("run {}", ev["verdict"].as_str().unwrap());
                let props = serde_json::json!({"title": title, "file": file, "startLine": ev["first_line"]});
                asked.push(serde_json::json!([
                    function,
                    of_run(ev["message"].as_str().unwrap()),
                    props
                ]));
            }
            _ => {}
        }
    }
    assert!(
        asked.iter().any(|a| a[1].as_str().unwrap().contains('\r')),
        "a message with CR: {asked:?}"
    );
    let script = "const core = require(process.argv[1]);\n\
                  const asked = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n\
                  for (const [f, message, props] of asked) core[f](message, props);";
    let mut node = Command::new("node")
        .args(["-e", script])
        .arg(core.unwrap())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&asked).unwrap();
    std::io::Write::write_all(&mut node.stdin.take().unwrap(), &input).unwrap();
    let toolkit = node.wait_with_output().unwrap();
    assert!(toolkit.status.success());
    let ours: String = github
        .stdout
        .split_inclusive('\n')
        .filter(|l| l.starts_with("::"))
        .collect();
    assert_eq!(ours, String::from_utf8(toolkit.stdout).unwrap());
    assert!(ours.contains("title=run failed"), "{ours}");
    assert!(ours.contains("title=seq.gap"), "{ours}");
}
