//! Every example of the README and docs/guide.md runs (docs/contract.md
//! §5.3: a clone is readable alone, and what it shows is true).
//!
//! A ```` ```sh ```` block runs in bash, in a scratch folder that holds
//! the names the examples use (`out.jsonl`, `runs/`, `agent.log`, ...,
//! each a copy of a fixture) beside `tests/` and `man/` of the clone.
//! The producers the examples pipe from are stand-ins on `PATH` that
//! write a fixture: `tool` and `outline` an AOI stream, the agent CLIs a
//! stream their profile reads, `legacy-tool` plain JSON lines; the
//! consumers (`next-tool`, `agent-harness`, ...) read their input and
//! exit 0. Every command of a block must end with a verdict's status
//! (0, 1, 65, 75): a usage error, a missing file or command fails the
//! example, naming the command, and so does anything bash itself
//! complains of (a redirect into a folder that is not there).
//!
//! A ```` ```console ```` block is a session: each `$ ` line runs, and
//! what it prints (stdout and stderr, in order) must be the text shown
//! under it.
//!
//! A block is left out only where an HTML comment before it says why:
//! `<!-- install: ... -->` (tests/install.rs runs it with a fresh HOME),
//! `<!-- example: not run, ... -->` (what needs a cluster or an ssh
//! host, whose recipe a test of its own runs), and `<!-- example: until
//! stopped -->` marks a block that follows a file: it runs for two
//! seconds, then gets SIGINT, and must still be running then.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::util::{bin, installed, installed_or_said, peer};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// How a block is to be run, from the comment before it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Run,
    UntilStopped,
    NotRun,
}

struct Block {
    file: &'static str,
    /// The line of its opening fence.
    line: usize,
    lang: String,
    mode: Mode,
    text: String,
}

/// The fenced blocks of `file` in the languages that are examples.
fn blocks(file: &'static str) -> Vec<Block> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let mut out = vec![];
    let mut lines = text.lines().enumerate().peekable();
    let mut before = "";
    while let Some((n, l)) = lines.next() {
        let Some(lang) = l.strip_prefix("```").filter(|s| !s.is_empty()) else {
            if !l.trim().is_empty() {
                before = l;
            }
            continue;
        };
        let mut body = String::new();
        for (_, l) in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        let mode = match before {
            b if b.starts_with("<!-- install:") => Mode::NotRun,
            b if b.starts_with("<!-- example: not run") => Mode::NotRun,
            b if b.starts_with("<!-- example: until stopped") => Mode::UntilStopped,
            _ => Mode::Run,
        };
        before = "";
        if matches!(lang, "sh" | "console") {
            out.push(Block {
                file,
                line: n + 1,
                lang: lang.to_string(),
                mode,
                text: body,
            });
        }
    }
    out
}

/// A stand-in program on `PATH`: `body` is its bash.
fn stand_in(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The scratch folder the examples run in, with their files and the
/// stand-ins: (folder, PATH).
fn scratch() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fx = root().join("tests/fixtures");
    for link in ["tests", "man"] {
        std::os::unix::fs::symlink(root().join(link), d.join(link)).unwrap();
    }
    let streams = fx.join("streams");
    let copy = |from: &str, to: &str| {
        let to = d.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(streams.join(from), to).unwrap();
    };
    for name in [
        "out.jsonl",
        "agent.log",
        "a.log",
        "b.log",
        "new.jsonl",
        "received.jsonl",
    ] {
        copy("ok-complete.jsonl", name);
    }
    copy("interleaved-two-runs.jsonl", "merged.jsonl");
    copy("elided-with-marker.jsonl", "transcript.jsonl");
    copy("ok-complete.jsonl", "producer-tee.jsonl");
    copy("v0.2-sdk-list.jsonl", "old-0.2.jsonl");
    copy("v0.2-sdk-list.jsonl", "old.jsonl");
    copy("ok-complete.jsonl", "runs/a.jsonl");
    copy("retryable-failure.jsonl", "runs/b.jsonl");
    copy("ok-complete.jsonl", "logs/a.jsonl");
    copy("ok-complete.jsonl", "transcripts/a.jsonl");
    copy("no-summary.jsonl", "transcripts/b/c.ndjson");
    copy("ok-complete.jsonl", "archive/a.jsonl");
    copy("ok-complete.jsonl", "out1.jsonl");
    copy("retryable-failure.jsonl", "out2.jsonl");
    std::fs::write(d.join("known.txt"), "# none known\n").unwrap();
    let bin_dir = d.join(".bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let ok = streams.join("ok-complete.jsonl");
    let profiles = fx.join("profiles");
    let cat = |p: PathBuf| format!("cat '{}'", p.display());
    // `tool`: the fake producer lint's tests use, for the commands it
    // has; any other command writes a complete stream.
    let producer = fx.join("lint/producer.py");
    std::fs::copy(&producer, d.join("tool.py")).unwrap();
    stand_in(
        &bin_dir,
        "tool",
        &format!(
            "case $1 in schema|capabilities|search|delete|import) exec python3 '{}' \"$@\";; esac\n{}",
            producer.display(),
            cat(ok.clone())
        ),
    );
    for name in ["outline", "producer"] {
        stand_in(&bin_dir, name, &cat(ok.clone()));
    }
    // `python3` (the `tool` above, `lint -- python3 tool.py`) is the
    // interpreter itself, not a version manager's shim that each of
    // lint's calls would run first (`util::python`).
    std::os::unix::fs::symlink(crate::util::python(), bin_dir.join("python3")).unwrap();
    // An OKF command: its one document on stdout.
    stand_in(&bin_dir, "okn", r#"printf '%s\n' '{"hits":[]}'"#);
    let agent = |name: &str, fixture: &str| {
        stand_in(&bin_dir, name, &cat(profiles.join(fixture)));
    };
    agent("claude", "claude-stream/success-tool-calls.jsonl");
    agent("agent", "claude-stream/cursor-success-tool-calls.jsonl");
    agent("amp", "claude-stream/amp-success-tool-calls.jsonl");
    agent("codex", "codex-exec/success-tool-calls.jsonl");
    for (name, dir) in [
        ("gemini", "gemini-stream"),
        ("opencode", "opencode-json"),
        ("copilot", "copilot-json"),
    ] {
        let first = std::fs::read_dir(profiles.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains("success"))
            .min()
            .unwrap();
        stand_in(&bin_dir, name, &cat(first));
    }
    stand_in(
        &bin_dir,
        "legacy-tool",
        r#"printf '%s\n' '{"type":"hit","id":1}' '{"id":2}'"#,
    );
    stand_in(
        &bin_dir,
        "aiocs",
        r#"printf '%s\n' '{"ok":true,"command":"search","data":{"hits":[]}}'"#,
    );
    for name in [
        "next-step",
        "next-tool",
        "legacy-tool-reader",
        "agent-harness",
        "retry",
        "fail",
    ] {
        stand_in(&bin_dir, name, "cat > /dev/null; exit 0");
    }
    let path = format!(
        "{}:{}:{}",
        bin_dir.display(),
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (dir, path)
}

/// The bash every `sh` block runs under: each command that ends with
/// another status than a verdict's (or, for a follower stopped by
/// SIGINT, 130) is named on stderr, as is a command that is not found.
fn prelude(mode: Mode) -> String {
    let statuses = match mode {
        Mode::UntilStopped => "0|1|65|75|130",
        _ => "0|1|65|75",
    };
    format!(
        r#"
trap 'case $? in {statuses}) ;; *) echo "EXAMPLE FAILED ($?): $BASH_COMMAND" >&2 ;; esac' ERR
command_not_found_handle() {{ echo "EXAMPLE FAILED (127): $1 not found" >&2; return 127; }}
"#
    )
}

fn bash(dir: &Path, path: &str, script: &str) -> Command {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir)
        .env_remove("CARGO_HOME")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    c
}

/// The commands of a block: its lines but comments, a line ending in
/// `\` joined to the next.
fn commands(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut cmd = String::new();
    for l in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        match l.strip_suffix('\\') {
            Some(head) => cmd.push_str(head),
            None => {
                cmd.push_str(l);
                if !cmd.trim().is_empty() {
                    out.push(std::mem::take(&mut cmd));
                }
                cmd.clear();
            }
        }
    }
    out
}

/// An `sh` block: what went wrong, if anything. A block that follows
/// files runs a command at a time, each stopped after two seconds.
fn run_sh(b: &Block, dir: &Path, path: &str) -> Option<String> {
    match b.mode {
        Mode::UntilStopped => {
            let wrong: Vec<String> = commands(&b.text)
                .iter()
                .filter_map(|c| run_script(c, b.mode, dir, path))
                .collect();
            (!wrong.is_empty()).then(|| wrong.join("\n"))
        }
        _ => run_script(&b.text, b.mode, dir, path),
    }
}

fn run_script(text: &str, mode: Mode, dir: &Path, path: &str) -> Option<String> {
    let script = format!("{}\n{text}", prelude(mode));
    let mut child = bash(dir, path, &script)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let limit = match mode {
        Mode::UntilStopped => Duration::from_secs(2),
        _ => Duration::from_secs(60),
    };
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > limit {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let pgid = child.id() as i32;
    let stopped = status.is_none();
    if stopped {
        // SIGINT to the whole group, as Ctrl-C at a terminal sends it;
        // what has not ended a second later is killed.
        signal(-pgid, "INT");
        let asked = Instant::now();
        while child.try_wait().unwrap().is_none() && asked.elapsed() < Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(10));
        }
        signal(-pgid, "KILL");
        child.wait().unwrap();
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    // A verdict's status is also what a failed redirect or a shell error
    // exits with: bash names those on stderr, and they fail too.
    let failed: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("EXAMPLE FAILED") || l.starts_with("bash: "))
        .collect();
    match (mode, stopped) {
        _ if !failed.is_empty() => Some(failed.join("\n")),
        (Mode::UntilStopped, false) => Some(format!("{text}: ended before it was stopped:\n{err}")),
        (Mode::Run, true) => Some("still running after 60 s".to_string()),
        _ => None,
    }
}

/// `kill -SIG PID`, by the system's kill (the tests use no unsafe code).
fn signal(pid: i32, sig: &str) {
    let _ = Command::new("kill")
        .args([format!("-{sig}"), "--".to_string(), pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// A `console` block: each `$ ` command, and the text under it.
fn run_console(b: &Block, dir: &Path, path: &str) -> Option<String> {
    let mut wrong = vec![];
    let mut sessions: Vec<(String, String)> = vec![];
    for l in b.text.lines() {
        match l.strip_prefix("$ ") {
            Some(cmd) => sessions.push((cmd.to_string(), String::new())),
            None => {
                let (_, shown) = sessions.last_mut()?;
                shown.push_str(l);
                shown.push('\n');
            }
        }
    }
    for (cmd, shown) in sessions {
        let out = bash(dir, path, &format!("exec 2>&1; {cmd}"))
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        if got != shown {
            wrong.push(format!("$ {cmd}\nshown:\n{shown}got:\n{got}"));
        }
    }
    (!wrong.is_empty()).then(|| wrong.join("\n"))
}

fn examples_of(file: &'static str) {
    let todo: Vec<Block> = blocks(file)
        .into_iter()
        .filter(|b| b.mode != Mode::NotRun)
        // jq is a peer: a block that pipes into it runs where it is
        // installed (and must, under AOITAP_PEERS=require). GNU parallel
        // is one .ci/run installs when the registry answers, as
        // tests/verify.rs's recipes take it.
        .filter(|b| !b.text.contains("| jq ") || peer(installed("jq"), "jq"))
        .filter(|b| !b.text.contains("parallel ") || installed_or_said("parallel"))
        .collect();
    let bad = Mutex::new(vec![]);
    let next = AtomicUsize::new(0);
    // Three blocks at a time: each has a scratch folder, a HOME and a
    // PATH of its own, and most of a block's time is waiting (a follower
    // stopped after two seconds, lint's calls).
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                while let Some(b) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                    // Each block in a scratch folder of its own: one
                    // example's output is never another's input.
                    let (dir, path) = scratch();
                    let start = Instant::now();
                    let wrong = match b.lang.as_str() {
                        "console" => run_console(b, dir.path(), &path),
                        _ => run_sh(b, dir.path(), &path),
                    };
                    if start.elapsed() > Duration::from_secs(5) {
                        eprintln!("{}:{}: {:.1?}", b.file, b.line, start.elapsed());
                    }
                    if let Some(why) = wrong {
                        let said = format!("{}:{}:\n{}\n{why}", b.file, b.line, b.text);
                        bad.lock().unwrap().push((b.line, said));
                    }
                }
            });
        }
    });
    assert!(todo.len() > 5, "{file}: only {} examples found", todo.len());
    let mut bad = bad.into_inner().unwrap();
    bad.sort();
    let bad: Vec<String> = bad.into_iter().map(|(_, said)| said).collect();
    assert!(
        bad.is_empty(),
        "examples that do not run:\n\n{}",
        bad.join("\n\n")
    );
}

#[test]
fn every_readme_example_runs() {
    examples_of("README.md");
}

#[test]
fn every_guide_example_runs() {
    examples_of("docs/guide.md");
}
