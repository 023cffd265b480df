//! The test harness: run the real binary, feed stdin, parse its JSONL back.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_aoitap"))
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// The stdout lines as JSON values (every line must parse).
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// The `finding` events.
    pub fn findings(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["type"] == "finding")
            .collect()
    }

    pub fn rules(&self) -> Vec<String> {
        self.findings()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    }

    pub fn has_rule(&self, rule: &str) -> bool {
        self.rules().iter().any(|r| r == rule)
    }

    pub fn summary(&self) -> Value {
        let events = self.events();
        let last = events.last().expect("no output").clone();
        assert_eq!(
            last["type"], "aoi:summary",
            "last event is not the summary: {}",
            self.stdout
        );
        last
    }
}

/// Run aoitap with `args`, `stdin` on its standard input.
pub fn run(args: &[&str], stdin: &[u8]) -> Out {
    let (code, stdout, stderr) = raw(args, stdin);
    Out {
        code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr,
    }
}

/// As `run`, with stdout as the bytes it wrote: (exit status, stdout,
/// stderr).
pub fn raw(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn aoitap");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // aoitap may stop reading early; a closed pipe is fine here.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait for aoitap");
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "aoitap panicked: {stderr}");
    (out.status.code().unwrap_or(-1), out.stdout, stderr)
}

/// The commands that judge a stream as verify does (run aside: it runs a
/// command): one input, one verdict in each (docs/contract.md §3.2).
pub const STREAM_COMMANDS: [&str; 5] = [
    "verify",
    "strip-envelope",
    "summarize",
    "reconcile",
    "split-by-run",
];

/// `cmd` and what it needs to run: split-by-run its `--dir`, `dir`.
pub fn command_words<'a>(cmd: &'a str, dir: &'a Path) -> Vec<&'a str> {
    let mut a = vec![cmd];
    if cmd == "split-by-run" {
        a.extend(["--dir", dir.to_str().unwrap()]);
    }
    a
}

/// `aoitap verify --output jsonl EXTRA... < stdin`.
pub fn verify(extra: &[&str], stdin: &[u8]) -> Out {
    let mut args = vec!["verify", "--output", "jsonl"];
    args.extend_from_slice(extra);
    run(&args, stdin)
}

/// The identity triple (and tool) that a Versioned stream carries at both ends.
pub const IDENTITY: &str = r#""tool":"t","tool_version":"1.0.0","aoi_version":"1.0-alpha","schema_name":"com.example.t","schema_version":"1.2.0""#;

/// One event of run `R`: `{"type":TY,"aoi":{"seq":SEQ,"run":"R"},REST}`.
pub fn ev(seq: u64, ty: &str, rest: &str) -> String {
    let sep = if rest.is_empty() { "" } else { "," };
    format!(r#"{{"type":"{ty}","aoi":{{"seq":{seq},"run":"R"}}{sep}{rest}}}"#)
}

pub fn meta() -> String {
    ev(0, "aoi:meta", &format!(r#"{IDENTITY},"command":"c""#))
}

pub fn hit(seq: u64) -> String {
    ev(seq, "hit", &format!(r#""id":{seq}"#))
}

/// A summary at `seq` with the given fields before the identity.
pub fn summary(seq: u64, fields: &str) -> String {
    let sep = if fields.is_empty() { "" } else { "," };
    ev(seq, "aoi:summary", &format!("{fields}{sep}{IDENTITY}"))
}

/// The usual successful summary for `domain` domain events at `seq`.
pub fn ok_summary(seq: u64, domain: u64) -> String {
    summary(
        seq,
        &format!(
            r#""ok":true,"event_count":{},"count":{domain},"warning_count":0,"error_count":0"#,
            seq + 1
        ),
    )
}

/// Lines joined, each ended by a newline.
pub fn lines<S: AsRef<str>>(ls: &[S]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in ls {
        out.extend_from_slice(l.as_ref().as_bytes());
        out.push(b'\n');
    }
    out
}

/// meta, `n` hits, summary: a conforming, successful stream.
pub fn good(n: u64) -> Vec<String> {
    let mut v = vec![meta()];
    v.extend((1..=n).map(hit));
    v.push(ok_summary(n + 1, n));
    v
}

/// `n` runs of `events` domain events each, one after another, each with
/// its own id. Comparing 1,000 runs of 20 with 10,000 runs of 2 keeps the
/// input about the same size, so only the number of runs differs.
pub fn many_runs(n: usize, events: u64) -> Vec<u8> {
    let mut v = vec![];
    for r in 0..n {
        for l in good(events) {
            v.push(l.replace(r#""run":"R""#, &format!(r#""run":"run-{r:06}""#)));
        }
    }
    lines(&v)
}

pub fn peak_kib(args: &[&str], input: &[u8]) -> (u64, String) {
    let mut child = Command::new("/usr/bin/time")
        .args(["-f", "peak-kib %M"])
        .arg(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let w = std::thread::spawn(move || stdin.write_all(&data).unwrap());
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-kib "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (peak, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `bash -o pipefail -c SCRIPT` with `$A` the binary: (status, stderr).
pub fn sh(script: &str) -> (i32, String) {
    let out = Command::new("bash")
        .args(["-o", "pipefail", "-c", script])
        .env("A", bin())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether a peer may be used: installed, or else skipped unless CI
/// requires it.
pub fn peer(found: bool, name: &str) -> bool {
    if !found {
        let required = std::env::var("AOITAP_PEERS").is_ok_and(|v| v == "require");
        assert!(
            !required,
            "{name} is not installed, and AOITAP_PEERS=require"
        );
        // Past the test harness's capture, so a passing run names it.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "{name} not installed: its check is skipped"
        );
    }
    found
}

/// Whether `program`, a peer CI installs when it can, is on PATH; if it
/// is not, the check that needs it says so and is skipped, even under
/// AOITAP_PEERS=require.
pub fn installed_or_said(program: &str) -> bool {
    let found = installed(program);
    if !found {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "{program} not installed: its check is skipped"
        );
    }
    found
}

/// Whether `program` is on PATH, as the shell finds it: the one way a
/// test asks before it runs a peer.
pub fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The interpreter `python3` names on PATH, asked once: the fake
/// producers start it by its own path. A version manager's `python3` is
/// a shim (pyenv's is a chain of bash scripts), which cost each of
/// lint's calls more than the producer itself did.
pub fn python() -> &'static Path {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 runs the fake producers");
        assert!(out.status.success(), "python3 -c: {out:?}");
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}
