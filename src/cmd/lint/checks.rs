//! The checks themselves: each call made once, in the sandbox, and each
//! §18.2 check decided from what the calls gave (DESIGN §15).

use std::ffi::OsString;
use std::time::Duration;

use rustix::process::Signal;

use super::judged::{self, Judged};
use super::sandbox::{self, Call, Ran, Then};
use crate::check::lint_checks::{self as catalogue, Check};

/// What a check came to (DESIGN §15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail,
    /// The tool does not claim what the check needs (no seq: Verifiable).
    NotClaimed,
    /// The calls could not tell (a run too short to close a pipe on).
    Inconclusive,
    /// Not run: what it needs is not advertised, or not asked for.
    Skipped,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::NotClaimed => "not-claimed",
            Outcome::Inconclusive => "inconclusive",
            Outcome::Skipped => "skipped",
        }
    }
}

/// One check's result, and why.
pub struct Result {
    pub check: &'static Check,
    pub outcome: Outcome,
    pub detail: String,
}

/// The calls every check reads, made once.
pub struct Calls {
    /// CMD ARGS themselves, and each call's deadline (for the calls a
    /// check makes of its own).
    pub command: Vec<OsString>,
    pub timeout: Duration,
    /// CMD ARGS as given.
    pub main: Ran,
    /// Its stdout judged whole (check 2), and its events alone, the lines
    /// that are not JSON objects left out (every other check: a banner
    /// line fails check 2, not also 3, 14 and 15).
    pub raw: Judged,
    pub judged: Judged,
    /// `argv[0] schema --output json` and `capabilities --output json`.
    pub schema: Ran,
    pub capabilities: Ran,
    /// CMD ARGS and a flag no tool has.
    pub unknown_flag: Ran,
    /// CMD ARGS with colour asked for by the environment.
    pub coloured: Ran,
    /// stdout closed after the first line; SIGINT and SIGTERM then.
    pub closed: Ran,
    pub interrupted: Ran,
    pub terminated: Ran,
}

/// A flag no tool accepts.
pub const UNKNOWN_FLAG: &str = "--aoitap-lint-no-such-flag";

impl Calls {
    pub fn make(command: &[OsString], timeout: Duration) -> Calls {
        let call = |argv: Vec<OsString>, env: Vec<(&'static str, &'static str)>, then| {
            sandbox::call(&Call {
                argv,
                env,
                timeout,
                then,
            })
        };
        let with = |more: &[&str]| {
            let mut v = command.to_vec();
            v.extend(more.iter().map(OsString::from));
            v
        };
        let discovery = |what: &str| {
            let mut v = command[..1].to_vec();
            v.extend([what, "--output", "json"].map(OsString::from));
            v
        };
        let main = call(command.to_vec(), vec![], Then::Nothing);
        let raw = judged::judge(&main.stdout, None);
        let judged = judged::judge(&events_only(&main.stdout), None);
        Calls {
            command: command.to_vec(),
            timeout,
            raw,
            judged,
            schema: call(discovery("schema"), vec![], Then::Nothing),
            capabilities: call(discovery("capabilities"), vec![], Then::Nothing),
            unknown_flag: call(with(&[UNKNOWN_FLAG]), vec![], Then::Nothing),
            coloured: call(
                command.to_vec(),
                vec![
                    ("TERM", "xterm-256color"),
                    ("FORCE_COLOR", "1"),
                    ("CLICOLOR_FORCE", "1"),
                ],
                Then::Nothing,
            ),
            closed: call(command.to_vec(), vec![], Then::Close),
            interrupted: call(command.to_vec(), vec![], Then::Signal(Signal::INT)),
            terminated: call(command.to_vec(), vec![], Then::Signal(Signal::TERM)),
            main,
        }
    }
}

/// The lines of `bytes` that are JSON objects, each with its newline.
fn events_only(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|v| v.is_object()) {
            out.extend_from_slice(line);
        }
    }
    out
}

/// The last line of a call's stdout that is a JSON object.
fn last_event(ran: &Ran) -> Option<serde_json::Value> {
    ran.stdout_text().lines().rev().find_map(|l| {
        serde_json::from_str::<serde_json::Value>(l)
            .ok()
            .filter(|v| v.is_object())
    })
}

fn result(number: u8, outcome: Outcome, detail: impl Into<String>) -> Result {
    let check = catalogue::CHECKS
        .iter()
        .find(|c| c.number == number)
        .expect("every number is in the catalogue");
    Result {
        check,
        outcome,
        detail: detail.into(),
    }
}

/// The first finding against check `number`, as its detail.
fn first_finding(j: &Judged, number: u8) -> Option<String> {
    j.for_check(number)
        .find(|f| f.severity == crate::check::rules::Severity::Error || number == 2)
        .map(|f| format!("line {}: {} ({})", f.line, f.message, f.rule.id()))
}

/// Check 2: stdout is JSONL objects with a type, no ANSI, also when
/// colour is asked for.
pub fn stdout_jsonl(c: &Calls) -> Result {
    if let Some(why) = first_finding(&c.raw, 2) {
        return result(2, Outcome::Fail, why);
    }
    let coloured = judged::judge(&c.coloured.stdout, None);
    if let Some(why) = first_finding(&coloured, 2) {
        return result(
            2,
            Outcome::Fail,
            format!("with TERM and FORCE_COLOR set: {why}"),
        );
    }
    result(
        2,
        Outcome::Pass,
        "every line a JSON object with a type, no ANSI",
    )
}

/// Check 3: exit 0 exactly when the stream ends with ok:true.
pub fn exit_matches_summary(c: &Calls) -> Result {
    if let Some(why) = first_finding(&c.judged, 3) {
        return result(3, Outcome::Fail, why);
    }
    // The terminal summary's word, not the whole stream's verdict: a
    // second summary fails check 14, not also this one.
    let code = c.main.code();
    let passed = last_event(&c.main).is_some_and(|v| v["type"] == "aoi:summary" && v["ok"] == true);
    match (code, passed) {
        (Some(0), true) => result(3, Outcome::Pass, "exit 0 with ok:true"),
        (Some(0), false) => result(
            3,
            Outcome::Fail,
            "exit 0, but the stream does not end in ok:true",
        ),
        (Some(n), false) => result(
            3,
            Outcome::Pass,
            format!("exit {n}, and the stream does not pass"),
        ),
        (Some(n), true) => result(
            3,
            Outcome::Fail,
            format!("exit {n} after a stream ending in ok:true"),
        ),
        (None, _) => result(3, Outcome::Inconclusive, "the command did not exit in time"),
    }
}

/// Check 5: malformed usage exits non-zero; errors carry their fields.
pub fn usage_and_errors(c: &Calls) -> Result {
    for (what, ran) in [
        ("the command", &c.main),
        ("an unknown flag", &c.unknown_flag),
    ] {
        let j = judged::judge(&ran.stdout, None);
        if let Some(why) = first_finding(&j, 5) {
            return result(5, Outcome::Fail, format!("{what}: {why}"));
        }
    }
    match c.unknown_flag.code() {
        Some(0) => result(5, Outcome::Fail, format!("{UNKNOWN_FLAG} exits 0")),
        Some(n) => result(
            5,
            Outcome::Pass,
            format!("{UNKNOWN_FLAG} exits {n}; errors carry their fields"),
        ),
        None => result(5, Outcome::Inconclusive, "the command did not exit in time"),
    }
}

/// Check 14: one meta, first; one summary, last.
pub fn one_meta_one_summary(c: &Calls) -> Result {
    match first_finding(&c.judged, 14) {
        Some(why) => result(14, Outcome::Fail, why),
        None => result(
            14,
            Outcome::Pass,
            "at most one aoi:meta, first, and one aoi:summary, last",
        ),
    }
}

/// Check 15: seq contiguous from 0, run beside it, event_count agrees.
pub fn seq_and_count(c: &Calls) -> Result {
    use crate::check::rules::Rule;
    let not_claimed = c
        .judged
        .for_check(15)
        .any(|f| f.rule == Rule::VerifiableNotClaimed);
    if not_claimed {
        return result(
            15,
            Outcome::NotClaimed,
            "no aoi.seq: middle cuts cannot be found",
        );
    }
    match first_finding(&c.judged, 15) {
        Some(why) => result(15, Outcome::Fail, why),
        None => result(
            15,
            Outcome::Pass,
            "seq contiguous from 0, and event_count agrees",
        ),
    }
}

/// Check 10: a closed pipe and a cancel, each after the first line.
pub fn pipe_and_signals(c: &Calls) -> Result {
    // A pipe holds 64 KiB: a shorter output was written whole before the
    // close, and the close tests nothing.
    if c.main.stdout_bytes <= 64 * 1024 || !c.closed.acted {
        return result(
            10,
            Outcome::Inconclusive,
            format!(
                "the output ({} bytes) does not outrun a pipe: give CMD ARGS that write more",
                c.main.stdout_bytes
            ),
        );
    }
    let trace = |r: &Ran| {
        let e = r.stderr_text();
        e.contains("Traceback (most recent call last)")
            || e.contains("panicked at")
            || e.contains("    at ")
    };
    match c.closed.code() {
        Some(0 | 141) if !trace(&c.closed) => {}
        Some(n) => {
            return result(
                10,
                Outcome::Fail,
                format!(
                    "stdout closed after the first line: exit {n}{}",
                    if trace(&c.closed) {
                        ", with a stack trace"
                    } else {
                        ""
                    }
                ),
            );
        }
        None => {
            return result(
                10,
                Outcome::Fail,
                "stdout closed after the first line: no exit in time",
            );
        }
    }
    for (name, ran) in [("SIGINT", &c.interrupted), ("SIGTERM", &c.terminated)] {
        if !ran.acted {
            return result(
                10,
                Outcome::Inconclusive,
                format!("the run ended before {name} could be sent"),
            );
        }
        let cancelled = last_event(ran)
            .is_some_and(|v| v["type"] == "aoi:summary" && v["reason"] == "cancelled");
        if !cancelled {
            return result(
                10,
                Outcome::Fail,
                format!("{name} after the first line: no reason:\"cancelled\" summary"),
            );
        }
    }
    result(
        10,
        Outcome::Pass,
        "a closed pipe ends quietly; SIGINT and SIGTERM give a cancelled summary",
    )
}

/// The tool's schema, compiled from the schema call's stdout; the reason
/// when it cannot be.
pub fn tool_schema(c: &Calls) -> std::result::Result<crate::check::schema::EventSchema, String> {
    if c.schema.code() != Some(0) {
        return Err(format!(
            "`schema --output json` exits {:?}: {}",
            c.schema.code(),
            crate::text::one_line(c.schema.stderr_text().trim())
        ));
    }
    let dir = std::env::temp_dir().join(format!("aoitap-lint-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("schema.json");
    let loaded = std::fs::write(&path, &c.schema.stdout)
        .map_err(|e| e.to_string())
        .and_then(|()| crate::check::schema::EventSchema::load(&path, &[]));
    let _ = std::fs::remove_dir_all(&dir);
    loaded.map_err(|e| e.replace(&path.display().to_string(), "the schema"))
}

/// Check 1: schema and capabilities, fetched with nothing but PATH.
pub fn discoverable(c: &Calls) -> Result {
    if let Err(why) = tool_schema(c) {
        return result(1, Outcome::Fail, why);
    }
    let caps = serde_json::from_slice::<serde_json::Value>(&c.capabilities.stdout);
    match (c.capabilities.code(), caps) {
        (Some(0), Ok(v)) if v.is_object() => result(
            1,
            Outcome::Pass,
            "schema compiles and capabilities is one JSON object, with no credentials or network",
        ),
        (Some(0), _) => result(
            1,
            Outcome::Fail,
            "`capabilities --output json` is not one JSON object",
        ),
        (code, _) => result(
            1,
            Outcome::Pass,
            format!("schema compiles; capabilities not offered (exit {code:?})"),
        ),
    }
}

/// Check 4: the framework events against the tool's own schema.
pub fn framework_schema(c: &Calls) -> Result {
    let schema = match tool_schema(c) {
        Ok(s) => std::sync::Arc::new(s),
        Err(why) => {
            return result(
                4,
                Outcome::Skipped,
                format!("no schema to validate against: {why}"),
            );
        }
    };
    let events = events_only(&c.main.stdout);
    let lines: Vec<&[u8]> = events.split_inclusive(|&b| b == b'\n').collect();
    let framework = |n: u64| {
        let line = lines
            .get(n.saturating_sub(1) as usize)
            .copied()
            .unwrap_or_default();
        serde_json::from_slice::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v["type"].as_str().map(|t| t.starts_with("aoi:")))
            .unwrap_or(false)
    };
    let judged = judged::judge(&events, Some(schema));
    match judged.for_check(4).find(|f| framework(f.line)) {
        Some(f) => result(4, Outcome::Fail, format!("line {}: {}", f.line, f.message)),
        None => result(
            4,
            Outcome::Pass,
            "every framework event validates against the tool's schema",
        ),
    }
}

/// The first event of type `ty` in `bytes`.
fn first_of(bytes: &[u8], ty: &str) -> Option<serde_json::Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == ty)
}

/// Check 13: schema_version in meta and summary; when capabilities list
/// schema versions, `--schema-version V` is honoured (meta says V) and an
/// unknown one refused.
pub fn schema_version(c: &Calls) -> Result {
    let events = events_only(&c.main.stdout);
    for ty in ["aoi:meta", "aoi:summary"] {
        match first_of(&events, ty) {
            Some(v) if v["schema_version"].is_string() => {}
            Some(_) => return result(13, Outcome::Fail, format!("{ty} has no schema_version")),
            None => {
                return result(
                    13,
                    Outcome::Fail,
                    format!("no {ty} to carry schema_version"),
                );
            }
        }
    }
    let caps: serde_json::Value =
        serde_json::from_slice(&c.capabilities.stdout).unwrap_or(serde_json::Value::Null);
    let versions: Vec<String> = caps["schemas"][0]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let default = caps["schemas"][0]["default"].as_str();
    let Some(asked) = versions
        .iter()
        .find(|v| default != Some(v.as_str()))
        .or(versions.first())
    else {
        return result(
            13,
            Outcome::Pass,
            "schema_version in aoi:meta and aoi:summary (capabilities list no versions to negotiate)",
        );
    };
    let with = |v: &str| {
        let mut argv = c.command.clone();
        argv.extend(["--schema-version", v].map(OsString::from));
        sandbox::call(&Call {
            argv,
            env: vec![],
            timeout: c.timeout,
            then: Then::Nothing,
        })
    };
    let honoured = with(asked);
    let said = first_of(&honoured.stdout, "aoi:meta").map(|m| m["schema_version"].clone());
    if said.as_ref().and_then(|v| v.as_str()) != Some(asked.as_str()) {
        return result(
            13,
            Outcome::Fail,
            format!(
                "--schema-version {asked}: aoi:meta says {}",
                said.unwrap_or_default()
            ),
        );
    }
    if with("999.999.999").code() == Some(0) {
        return result(13, Outcome::Fail, "--schema-version 999.999.999 exits 0");
    }
    result(
        13,
        Outcome::Pass,
        format!(
            "schema_version in aoi:meta and aoi:summary; --schema-version {asked} honoured, an unknown one refused"
        ),
    )
}

/// Flags whose names say they carry a secret, in `text` (a `--help`, a
/// capabilities manifest).
pub fn secret_flags(text: &str) -> Vec<String> {
    const WORDS: [&str; 7] = [
        "token",
        "secret",
        "password",
        "passwd",
        "api-key",
        "apikey",
        "credential",
    ];
    let mut found: Vec<String> = vec![];
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let flag: String = rest[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        rest = &rest[at + 2 + flag.len()..];
        let lower = flag.to_ascii_lowercase();
        if WORDS.iter().any(|w| lower.contains(w)) && !found.iter().any(|f| f[2..] == flag) {
            found.push(format!("--{flag}"));
        }
    }
    found
}

/// A value no tool has a reason to write: found in its output, it was
/// echoed.
const CANARY: &str = "aoitap-lint-canary-7f3a9c";

/// Check 9: a canary in each secret-looking flag is never written, and
/// meta.args is redacted.
pub fn secrets(c: &Calls, command: &[OsString], timeout: Duration, given: &[String]) -> Result {
    if let Some(why) = first_finding(&c.judged, 9) {
        return result(9, Outcome::Fail, why);
    }
    let mut help_argv = command.to_vec();
    help_argv.push("--help".into());
    let help = sandbox::call(&Call {
        argv: help_argv,
        env: vec![],
        timeout,
        then: Then::Nothing,
    });
    let mut flags: Vec<String> = given.to_vec();
    for text in [
        help.stdout_text(),
        help.stderr_text(),
        c.capabilities.stdout_text(),
    ] {
        for f in secret_flags(&text) {
            if !flags.contains(&f) {
                flags.push(f);
            }
        }
    }
    if flags.is_empty() {
        return result(
            9,
            Outcome::Skipped,
            "no secret-looking flag in --help or capabilities (name one with --secret-flag)",
        );
    }
    let mut tried = vec![];
    for flag in &flags {
        let mut argv = command.to_vec();
        argv.extend([flag.as_str(), CANARY].map(OsString::from));
        let ran = sandbox::call(&Call {
            argv,
            env: vec![],
            timeout,
            then: Then::Nothing,
        });
        let echoed = |b: &[u8]| b.windows(CANARY.len()).any(|w| w == CANARY.as_bytes());
        if echoed(&ran.stdout) || echoed(&ran.stderr) {
            let place = if echoed(&ran.stdout) {
                "stdout"
            } else {
                "stderr"
            };
            return result(
                9,
                Outcome::Fail,
                format!("the value given to {flag} is in {place}"),
            );
        }
        // A flag the command refuses tests nothing.
        if ran.code() == Some(0) {
            tried.push(flag.as_str());
        }
    }
    if tried.is_empty() {
        return result(
            9,
            Outcome::Inconclusive,
            format!("the command accepted none of {}", flags.join(", ")),
        );
    }
    result(
        9,
        Outcome::Pass,
        format!("no value given to {} is written", tried.join(", ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls to the fake producer, conforming or with one fault.
    /// The tool's directory is kept beside the calls: checks make calls
    /// of their own.
    fn calls(fault: Option<&str>) -> (tempfile::TempDir, Calls) {
        let producer = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/lint/producer.py"
        );
        // A link named `fake-FAULT`, so `argv[0] schema` has the fault too.
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join(format!("fake-{}", fault.unwrap_or("good")));
        std::os::unix::fs::symlink(producer, &tool).unwrap();
        let mut argv: Vec<OsString> = vec![tool.into()];
        argv.extend(["search", "q", "--output", "jsonl"].map(OsString::from));
        let calls = Calls::make(&argv, Duration::from_secs(10));
        (dir, calls)
    }

    fn outcomes(c: &Calls) -> Vec<(u8, Outcome)> {
        [
            discoverable(c),
            stdout_jsonl(c),
            exit_matches_summary(c),
            framework_schema(c),
            schema_version(c),
            usage_and_errors(c),
            pipe_and_signals(c),
            one_meta_one_summary(c),
            seq_and_count(c),
            secrets(c, &c.command, Duration::from_secs(10), &[]),
        ]
        .iter()
        .map(|r| (r.check.number, r.outcome))
        .collect()
    }

    #[test]
    fn secret_looking_flags_are_found_in_help_text() {
        let help = "usage: t search Q [--limit N] [--api-key KEY] [--token=T] [--github-token]\n  --output jsonl";
        assert_eq!(
            secret_flags(help),
            ["--api-key", "--token", "--github-token"]
        );
    }

    #[test]
    fn a_conforming_producer_passes_and_each_fault_fails_its_check() {
        let (_dir, good) = calls(None);
        let good = outcomes(&good);
        assert!(good.iter().all(|(_, o)| *o == Outcome::Pass), "{good:?}");
        for (fault, check) in [
            ("banner", 2),
            ("exit-after-failure", 3),
            ("unknown-flag-ok", 5),
            ("no-cancel", 10),
            ("traceback", 10),
            ("two-summaries", 14),
            ("seq-gap", 15),
            ("schema-login", 1),
            ("meta-off-schema", 4),
            ("no-schema-version", 13),
            ("token-echo", 9),
            ("token-on-stderr", 9),
            ("schema-version-ignored", 13),
        ] {
            let (_dir, faulty) = calls(Some(fault));
            let got = outcomes(&faulty);
            let failed: Vec<u8> = got
                .iter()
                .filter(|(_, o)| *o == Outcome::Fail)
                .map(|(n, _)| *n)
                .collect();
            assert_eq!(failed, [check], "{fault}: {got:?}");
        }
    }
}
