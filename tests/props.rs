//! Property tests: the invariants a user relies on, held against the real
//! release binary on generated, mostly hostile, input.
//!
//! Every case spawns `aoitap` several times, so each property runs
//! `AOITAP_PROPTEST_CASES` cases (default 64), which keeps this file well
//! under a minute on two cores. For a long local run:
//!
//! ```sh
//! AOITAP_PROPTEST_CASES=2000 cargo test --profile quick props
//! ```
//!
//! Failures are not persisted (nothing is written into the repository);
//! proptest prints the shrunk, minimal failing input instead. Inputs print
//! as escaped byte strings, so a failure can be replayed with `printf`.
//!
//! The input model: conforming AOI runs (meta, hits, errors, summary, with
//! `aoi.seq` and `aoi.run`), interleaved, written with escaped keys, types
//! and run ids, spaces and CRLF; then hostile lines inserted (duplicate keys,
//! over-long lines several in a row, NUL, invalid UTF-8, blank lines, markers,
//! raw bytes), lines deleted, repeated and swapped; then a cut last line and
//! byte mutations. Every command gets `--max-line-bytes 256` so that a line
//! is cheaply over-long.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::Value;

use crate::util::bin;

/// `--max-line-bytes` for every command: lines longer than this are over-long.
const MAX: usize = 256;
const MAX_ARG: &str = "256";
const DEFAULT_CASES: u32 = 64;
/// A process that has not exited by then is a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

fn config() -> ProptestConfig {
    let cases = std::env::var("AOITAP_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(DEFAULT_CASES);
    ProptestConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Running the binary

/// Run `test` on `AOITAP_PROPTEST_CASES` values of `strategy`, shrink a
/// failure to a minimal input, and say on stderr how many cases ran.
#[allow(
    clippy::print_stderr,
    reason = "the case count is test output, captured by the harness unless --nocapture"
)]
fn check<S>(name: &str, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S: Strategy,
    S::Value: fmt::Debug,
{
    let ran = Cell::new(0u32);
    let failed_at = Cell::new(None);
    let result = TestRunner::new(config()).run(&strategy, |value| {
        ran.set(ran.get() + 1);
        let r = test(value);
        if r.is_err() && failed_at.get().is_none() {
            failed_at.set(Some(ran.get()));
        }
        r
    });
    match failed_at.get() {
        None => eprintln!("{name}: {} cases passed", ran.get()),
        Some(n) => eprintln!(
            "{name}: case {n} failed after {} passed; {} more runs to shrink it",
            n - 1,
            ran.get() - n
        ),
    }
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

/// Bytes that print as an escaped byte string.
#[derive(Clone, PartialEq, Eq)]
struct Bytes(Vec<u8>);

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\" ({} bytes)", self.0.escape_ascii(), self.0.len())
    }
}

fn show(b: &[u8]) -> String {
    b.escape_ascii().to_string()
}

/// How the input reaches aoitap's stdin.
enum Feed {
    /// All at once.
    Bytes(Vec<u8>),
    /// In chunks of these sizes (cycled), each one its own write, with a
    /// pause after each so the reader sees partial lines.
    Slow(Vec<u8>, Vec<usize>),
    /// Nothing (the input is a file operand).
    Nothing,
}

struct Proc {
    what: String,
    code: i32,
    signal: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Proc {
    fn err(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

fn args<S: AsRef<OsStr>>(list: &[S]) -> Vec<OsString> {
    list.iter().map(|s| s.as_ref().to_os_string()).collect()
}

fn feed_into(mut w: ChildStdin, feed: Feed) {
    // aoitap may stop reading early (it never should, but a closed pipe is
    // then its exit status to judge, not a failure of the writer).
    match feed {
        Feed::Bytes(data) => {
            let _ = w.write_all(&data);
        }
        Feed::Slow(data, chunks) => {
            // At most about 2,000 writes, however large the input.
            let avg = chunks.iter().map(|c| c.clamp(&1, &4096)).sum::<usize>() / chunks.len();
            let scale = (data.len() / 2000 / avg.max(1)).max(1);
            let mut pos = 0;
            let mut i = 0;
            while pos < data.len() {
                let n = chunks[i % chunks.len()].clamp(1, 4096) * scale;
                let n = n.min(data.len() - pos);
                if w.write_all(&data[pos..pos + n]).is_err() || w.flush().is_err() {
                    return;
                }
                pos += n;
                i += 1;
                thread::sleep(Duration::from_micros(50));
            }
        }
        Feed::Nothing => {}
    }
}

/// Run aoitap; a panic, a death by signal or a hang is a failure of the case.
fn exec(argv: &[OsString], feed: Feed, discard_stdout: bool) -> Result<Proc, TestCaseError> {
    let what = format!(
        "aoitap {}",
        argv.iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut child = Command::new(bin())
        .args(argv)
        .stdin(Stdio::piped())
        .stdout(if discard_stdout {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| TestCaseError::fail(format!("spawn {what}: {e}")))?;
    let stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || feed_into(stdin, feed));
    let out = child.stdout.take().map(|mut p| {
        thread::spawn(move || {
            let mut v = vec![];
            let _ = p.read_to_end(&mut v);
            v
        })
    });
    let mut errp = child.stderr.take().unwrap();
    let err = thread::spawn(move || {
        let mut v = vec![];
        let _ = errp.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + TIMEOUT;
    let mut nap = Duration::from_micros(100);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => {
                thread::sleep(nap);
                nap = (nap * 2).min(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(TestCaseError::fail(format!(
                    "{what}: still running after {TIMEOUT:?} (hang)"
                )));
            }
        }
    };
    writer.join().unwrap();
    let p = Proc {
        what,
        code: status.code().unwrap_or(-1),
        signal: status.signal(),
        stdout: out.map(|t| t.join().unwrap()).unwrap_or_default(),
        stderr: err.join().unwrap(),
    };
    prop_assert!(
        p.signal.is_none(),
        "{}: killed by signal {:?}: {}",
        p.what,
        p.signal,
        p.err()
    );
    prop_assert!(
        p.code != 101 && !p.err().contains("panicked"),
        "{}: panicked (exit {}): {}",
        p.what,
        p.code,
        p.err()
    );
    Ok(p)
}

/// The verdict statuses of a stream command (docs/contract.md §4.1).
fn verdict_code(p: &Proc) -> Result<(), TestCaseError> {
    prop_assert!(
        [0, 1, 65, 75].contains(&p.code),
        "{}: exit {} is not a verdict: {}",
        p.what,
        p.code,
        p.err()
    );
    Ok(())
}

/// The complete lines of `b` (each with its `\n`): a final fragment is not one.
fn complete_lines(b: &[u8]) -> Vec<&[u8]> {
    b.split_inclusive(|c| *c == b'\n')
        .filter(|l| l.ends_with(b"\n"))
        .collect()
}

/// The input as a file named `name` in `dir` (one FILE operand), or, with
/// no name, no operand at all (the input is then fed on stdin).
fn operand(dir: &Path, name: Option<&Bytes>, input: &[u8]) -> Vec<OsString> {
    match name {
        Some(n) => {
            let f = dir.join(OsStr::from_bytes(&n.0));
            std::fs::write(&f, input).unwrap();
            vec![path_arg(&f)]
        }
        None => vec![],
    }
}

fn path_arg(p: &Path) -> OsString {
    p.as_os_str().to_os_string()
}

// ---------------------------------------------------------------------------
// Generating streams

/// Run ids: case twins, path-like, empty, non-ASCII, long, with NUL.
const RUN_IDS: &[&str] = &[
    "R",
    "r",
    "R1",
    "run-2",
    "../up",
    "a/b",
    "",
    ".",
    "\u{e9}t\u{e9}",
    "0123456789abcdefghijklmn",
    "n\u{0}l",
    "e\u{1b}[2J\r",
    // Long ids (only where lines may be long): the file name must be cut
    // and still tell them apart, also ignoring case.
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxa",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxb",
    "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXA",
];
/// The ids whose events fit in `--max-line-bytes 256` in any style.
const SHORT_IDS: usize = 12;

const META_REST: &str = r#""tool":"t","tool_version":"1.0.0","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1.0.0","command":"c""#;

/// A JSON string literal for `s`; with `esc`, its first character is
/// written as a `\uXXXX` escape (same decoded value, different bytes).
fn jstr(s: &str, esc: bool) -> String {
    let plain = serde_json::to_string(s).unwrap();
    match s.chars().next() {
        Some(c) if esc && (c as u32) < 0x1_0000 => {
            let rest = serde_json::to_string(&s[c.len_utf8()..]).unwrap();
            format!("\"\\u{:04x}{}", c as u32, &rest[1..])
        }
        _ => plain,
    }
}

/// Style bits of one rendered event; none changes its decoded meaning.
const ESC_TYPE_KEY: u8 = 1;
const ESC_TYPE: u8 = 2;
const ESC_RUN: u8 = 4;
const ESC_ENVELOPE_KEYS: u8 = 8;
const SPACES: u8 = 16;
const AOI_LAST: u8 = 32;
const AOI_FIRST: u8 = 64;
const CRLF: u8 = 128;

/// One event line, with its terminator.
fn event(ty: &str, seq: u64, run: &str, rest: &str, style: u8) -> Vec<u8> {
    let sp = if style & SPACES != 0 { " " } else { "" };
    let ek = style & ESC_ENVELOPE_KEYS != 0;
    let type_m = format!(
        "{}{sp}:{sp}{}",
        jstr("type", style & ESC_TYPE_KEY != 0),
        jstr(ty, style & ESC_TYPE != 0)
    );
    let aoi_m = format!(
        "{}{sp}:{sp}{{{sp}{}{sp}:{sp}{seq}{sp},{sp}{}{sp}:{sp}{}{sp}}}",
        jstr("aoi", ek),
        jstr("seq", ek),
        jstr("run", ek),
        jstr(run, style & ESC_RUN != 0)
    );
    let mut members = vec![];
    if style & AOI_FIRST != 0 {
        members.push(aoi_m.clone());
    }
    members.push(type_m);
    if style & (AOI_FIRST | AOI_LAST) == 0 {
        members.push(aoi_m.clone());
    }
    if !rest.is_empty() {
        members.push(rest.to_string());
    }
    if style & AOI_LAST != 0 && style & AOI_FIRST == 0 {
        members.push(aoi_m);
    }
    let mut line = format!("{{{sp}{}{sp}}}", members.join(&format!("{sp},{sp}"))).into_bytes();
    if style & CRLF != 0 {
        line.push(b'\r');
    }
    line.push(b'\n');
    line
}

#[derive(Debug, Clone)]
enum Outcome {
    Ok,
    Failed,
    Retryable(u16),
    Partial,
    Skipped,
    Cut,
}

#[derive(Debug, Clone)]
struct RunSpec {
    id: usize,
    hits: u16,
    outcome: Outcome,
}

/// The (type, other members) of a run's events, in order: conforming, with
/// counters that reconcile.
fn run_events(spec: &RunSpec) -> Vec<(&'static str, String)> {
    let mut evs = vec![("aoi:meta", META_REST.to_string())];
    let mut errors = 0;
    for i in 1..=spec.hits {
        evs.push(("hit", format!(r#""id":{i}"#)));
        if matches!(spec.outcome, Outcome::Partial) && i == 1 {
            evs.push((
                "aoi:error",
                r#""category":"validation","code":"BAD_ITEM","message":"bad","retryable":false,"scope":"item""#.to_string(),
            ));
            errors += 1;
        }
    }
    match spec.outcome {
        Outcome::Failed => {
            evs.push((
                "aoi:error",
                r#""category":"internal","code":"BOOM","message":"boom","retryable":false,"scope":"process""#.to_string(),
            ));
            errors += 1;
        }
        Outcome::Retryable(ms) => {
            evs.push((
                "aoi:error",
                format!(
                    r#""category":"rate_limited","code":"SLOW_DOWN","message":"later","retryable":true,"retry_after_ms":{ms},"scope":"process""#
                ),
            ));
            errors += 1;
        }
        _ => {}
    }
    let counts = format!(
        r#""event_count":{},"count":{},"error_count":{errors}"#,
        evs.len() + 1,
        spec.hits
    );
    let summary = match spec.outcome {
        Outcome::Ok => format!(r#""ok":true,{counts}"#),
        Outcome::Skipped => format!(r#""ok":true,"reason":"skipped",{counts}"#),
        Outcome::Failed | Outcome::Retryable(_) => {
            format!(r#""ok":false,"reason":"failed",{counts}"#)
        }
        Outcome::Partial => format!(r#""ok":false,"reason":"failed","partial":true,{counts}"#),
        Outcome::Cut => return evs,
    };
    evs.push(("aoi:summary", summary));
    evs
}

/// A line that is not part of a conforming run.
#[derive(Debug, Clone)]
enum Hostile {
    Blank,
    Spaces,
    Marker(u8),
    NulRaw,
    NulEscaped,
    BadUtf8(u8),
    EscapedSurrogate,
    Ansi,
    RawEsc,
    NotObject(u8),
    NoType,
    TypeNotString(u8),
    AoiNotObject(u8),
    Duplicate(u8),
    WeirdSeq(u8),
    BigNumber,
    Deep(u16),
    /// `count` over-long lines in a row, of `len` bytes each.
    Overlong(u8, u16),
    OverlongGarbage(u16),
    Framework(u8),
    /// A stray domain event of another run, at some seq.
    Stray(usize, u8, u8),
    Random(Vec<u8>),
    /// A domain event of exactly this many bytes before the newline, the
    /// last of them `\r` when `crlf`: about `--max-line-bytes`.
    Sized(u16, bool),
    /// One line of this many bytes: longer than aoitap's read buffer.
    Huge(u32),
    /// A line of another protocol (AOI 0.2, AFDATA, typed NDJSON): as a
    /// run's first object it changes how the run is read (docs/contract.md §6.1).
    Foreign(u8),
}

const FOREIGN: &[&str] = &[
    r#"{"type":"aoi:meta","tool":"t","tool_version":"1","aoi_version":"0.2","schema_name":"s","schema_version":"1.0.0","command":"c"}"#,
    r#"{"type":"aoi:summary","ok":true,"count":3,"warning_count":0,"error_count":0,"truncated":false}"#,
    r#"{"type":"aoi:error","code":"RATE_LIMITED","category":"rate_limited","message":"m","retryable":true,"retry_after_ms":7200}"#,
    r#"{"type":"aoi:summary","ok":false,"count":-1}"#,
    r#"{"kind":"result","result":{"a":[1,2]},"trace":{}}"#,
    r#"{"kind":"error","error":{"code":"quota","message":"m","retryable":true,"retry_after_s":30,"retryable":false},"trace":[]}"#,
    r#"{"kind":"progress","progress":{"current":1}}"#,
    r#"{"kind":"log"}"#,
    r#"{"kind":"r\u0065sult","r\u0065sult":"\u0061"}"#,
    r#"{"kind":"error","error":"not an object"}"#,
    r#"{"type":"daemon.started","x":1}"#,
];

const BAD_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xc3",
    b"\xe2\x82",
    b"\xfe\xfe\xff",
];
const NOT_OBJECTS: &[&str] = &[
    "[1,2]",
    r#""str""#,
    "42",
    "null",
    "true",
    "[]",
    r#"{"type":"hit"} x"#,
    r#"{"type":"hit",}"#,
    r#"{"type":"hit""#,
    r#"{"type":"hit"}}"#,
    "\u{feff}{\"type\":\"hit\"}",
];
const TYPE_NOT_STRING: &[&str] = &[
    r#"{"type":1,"aoi":{"seq":1,"run":"R"}}"#,
    r#"{"type":null,"aoi":{"seq":1,"run":"R"}}"#,
    r#"{"type":["aoi:summary"],"aoi":{"seq":1,"run":"R"}}"#,
    r#"{"type":{"aoi":"meta"}}"#,
];
const AOI_NOT_OBJECT: &[&str] = &[
    r#"{"type":"hit","aoi":5}"#,
    r#"{"type":"hit","aoi":[0,"R"]}"#,
    r#"{"type":"hit","aoi":"seq"}"#,
    r#"{"type":"aoi:summary","aoi":null,"ok":true}"#,
];
/// Duplicated members: reserved ones, verdict ones, and escaped twins.
const DUPLICATES: &[&str] = &[
    r#"{"type":"hit","type":"aoi:summary","aoi":{"seq":1,"run":"R"}}"#,
    r#"{"type":"aoi:summary","aoi":{"seq":2,"run":"R"},"ok":true,"ok":false,"event_count":3}"#,
    r#"{"type":"hit","aoi":{"seq":1,"run":"R"},"aoi":{"seq":2,"run":"R"}}"#,
    r#"{"type":"hit","aoi":{"seq":1,"seq":2,"run":"R"}}"#,
    r#"{"type":"hit","aoi":{"seq":1,"run":"R","run":"S"}}"#,
    r#"{"type":"hit","t\u0079pe":"aoi:meta","aoi":{"seq":1,"run":"R"}}"#,
    r#"{"type":"aoi:summary","aoi":{"seq":2,"run":"R"},"ok":true,"event_count":3,"event_count":4}"#,
    r#"{"type":"aoi:error","aoi":{"seq":1,"run":"R"},"category":"io","code":"X","message":"m","retryable":true,"retryable":false,"scope":"process"}"#,
    r#"{"\u0061oi":{"seq":1,"run":"R"},"type":"hit","aoi":{"seq":1,"run":"R"}}"#,
    r#"{"type":"aoi:summary","aoi":{"seq":1,"run":"R"},"ok":false,"reason":"failed","reason":"skipped"}"#,
    r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"aoi_version":"1.0","aoi_version":"0.2"}"#,
    r#"{"type":"hit","aoi":{"seq":1,"run":"R","r\u0075n":"R"}}"#,
];
const WEIRD_SEQ: &[&str] = &[
    "1.0",
    "1e0",
    r#""1""#,
    "-1",
    "123456789012345678901234567890",
    "null",
    "18446744073709551616",
    "0",
    "-0",
    "true",
];
const FRAMEWORK: &[&str] = &[
    r#"{"type":"aoi:bogus","aoi":{"seq":1,"run":"R"}}"#,
    r#"{"type":"\u0061oi:meta","aoi":{"seq":0,"run":"R"},"tool":"t"}"#,
    r#"{"type":"aoi\u003asummary","aoi":{"seq":3,"run":"R"},"ok":true}"#,
    r#"{"type":"aoi:error","aoi":{"seq":1,"run":"R"},"origin":"up","category":"io","code":"UP","message":"m","retryable":true,"retry_after_ms":5}"#,
    r#"{"type":"aoi:warning","aoi":{"seq":1,"run":"R"},"code":"W","message":"m"}"#,
    r#"{"type":"aoi:summary","aoi":{"seq":1,"run":"R"},"ok":false,"reason":"bogus","upstream":null,"caused_by":{"category":"io","retryable":true}}"#,
    r#"{"type":"aoi:summary","aoi":{"seq":1,"run":"R"},"ok":false,"reason":"failed","caused_by":{"category":"io","code":"UP","message":"m","retryable":true,"retry_after_ms":99999999999999999999}}"#,
    r#"{"type":"aoi:error","aoi":{"seq":1,"run":"R"},"category":"partial","code":"bad code","message":"two\nlines","retryable":false,"retry_after_ms":-1,"scope":"world"}"#,
    r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"aoi_version":"0.2","args":["--token","hunter2"],"tool":"t"}"#,
    r#"{"type":"aoi:summary","aoi":{"seq":9,"run":"R"},"ok":true,"event_count":-1,"count":1.5,"warning_count":"0"}"#,
    r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"tool":"t\u001b]0;x\u0007","command":"c\r\n","tool_version":"\u0000"}"#,
];

impl Hostile {
    fn render(&self) -> Vec<u8> {
        let mut v: Vec<u8> = match self {
            Hostile::Blank => vec![],
            Hostile::Spaces => b" \t ".to_vec(),
            Hostile::Marker(n) => match n % 4 {
                0 => format!("[\u{2026} {n} lines omitted \u{2026}]"),
                1 => format!("... {n} lines omitted ..."),
                2 => format!("[{n} lines truncated]"),
                _ => format!("<{n} lines elided>"),
            }
            .into_bytes(),
            Hostile::NulRaw => b"{\"type\":\"hit\",\"x\":\"a\0b\"}\0".to_vec(),
            Hostile::NulEscaped => {
                br#"{"type":"hit","aoi":{"seq":1,"run":"R"},"x":"a\u0000b"}"#.to_vec()
            }
            Hostile::BadUtf8(k) => {
                let mut v = br#"{"type":"hit","aoi":{"seq":1,"run":"R"},"x":""#.to_vec();
                v.extend_from_slice(BAD_UTF8[*k as usize % BAD_UTF8.len()]);
                v.extend_from_slice(b"\"}");
                v
            }
            Hostile::EscapedSurrogate => {
                br#"{"type":"hit","x":"\ud800","y":"\udc00\ud800","z":"\ud83d\ude00"}"#.to_vec()
            }
            Hostile::Ansi => br#"{"type":"hit","x":"\u001b[31mred\u001b[0m"}"#.to_vec(),
            Hostile::RawEsc => b"{\"type\":\"hit\",\"x\":\"\x1b[2J\"}".to_vec(),
            Hostile::NotObject(k) => NOT_OBJECTS[*k as usize % NOT_OBJECTS.len()]
                .as_bytes()
                .to_vec(),
            Hostile::NoType => br#"{"aoi":{"seq":1,"run":"R"},"x":1}"#.to_vec(),
            Hostile::Foreign(k) => FOREIGN[*k as usize % FOREIGN.len()].as_bytes().to_vec(),
            Hostile::TypeNotString(k) => TYPE_NOT_STRING[*k as usize % TYPE_NOT_STRING.len()]
                .as_bytes()
                .to_vec(),
            Hostile::AoiNotObject(k) => AOI_NOT_OBJECT[*k as usize % AOI_NOT_OBJECT.len()]
                .as_bytes()
                .to_vec(),
            Hostile::Duplicate(k) => DUPLICATES[*k as usize % DUPLICATES.len()]
                .as_bytes()
                .to_vec(),
            Hostile::WeirdSeq(k) => format!(
                r#"{{"type":"hit","aoi":{{"seq":{},"run":"R"}}}}"#,
                WEIRD_SEQ[*k as usize % WEIRD_SEQ.len()]
            )
            .into_bytes(),
            Hostile::BigNumber => {
                br#"{"type":"hit","aoi":{"seq":1,"run":"R"},"n":1E400,"m":-0.0e-999,"i":1180591620717411303424}"#.to_vec()
            }
            Hostile::Deep(d) => {
                let d = *d as usize;
                let mut v = br#"{"type":"hit","x":"#.to_vec();
                v.extend(std::iter::repeat_n(b'[', d));
                if d.is_multiple_of(2) {
                    v.extend(std::iter::repeat_n(b']', d));
                    v.push(b'}');
                }
                v
            }
            Hostile::Overlong(count, len) => {
                let mut v = vec![];
                for i in 0..(*count).max(1) {
                    if i > 0 {
                        v.push(b'\n');
                    }
                    let head = format!(r#"{{"type":"hit","aoi":{{"seq":{i},"run":"R"}},"pad":""#);
                    let len = (*len as usize).max(head.len() + 2);
                    v.extend_from_slice(head.as_bytes());
                    v.extend(std::iter::repeat_n(b'y', len - head.len() - 2));
                    v.extend_from_slice(b"\"}");
                }
                v
            }
            Hostile::OverlongGarbage(len) => b"[{\"\xff\0"
                .iter()
                .copied()
                .cycle()
                .take(*len as usize)
                .collect(),
            Hostile::Framework(k) => FRAMEWORK[*k as usize % FRAMEWORK.len()]
                .as_bytes()
                .to_vec(),
            Hostile::Stray(run, seq, style) => {
                let mut v = event(
                    "hit",
                    *seq as u64,
                    RUN_IDS[*run % RUN_IDS.len()],
                    r#""id":0"#,
                    *style,
                );
                v.pop();
                v
            }
            Hostile::Random(bytes) => bytes.clone(),
            Hostile::Sized(n, crlf) => {
                let n = *n as usize;
                let head = br#"{"type":"hit","aoi":{"seq":1,"run":"R"},"pad":""#;
                let tail: &[u8] = if *crlf { b"\"}\r" } else { b"\"}" };
                let mut v = head.to_vec();
                v.extend(std::iter::repeat_n(b'z', n - head.len() - tail.len()));
                v.extend_from_slice(tail);
                v
            }
            Hostile::Huge(n) => {
                let mut v = br#"{"type":"hit","aoi":{"seq":1,"run":"R"},"pad":""#.to_vec();
                v.resize(*n as usize, b'w');
                v.extend_from_slice(b"\"}");
                v
            }
        };
        v.push(b'\n');
        v
    }
}

fn hostile() -> impl Strategy<Value = Hostile> {
    prop_oneof![
        1 => Just(Hostile::Blank),
        1 => Just(Hostile::Spaces),
        1 => any::<u8>().prop_map(Hostile::Marker),
        1 => Just(Hostile::NulRaw),
        1 => Just(Hostile::NulEscaped),
        1 => any::<u8>().prop_map(Hostile::BadUtf8),
        1 => Just(Hostile::EscapedSurrogate),
        1 => Just(Hostile::Ansi),
        1 => Just(Hostile::RawEsc),
        1 => any::<u8>().prop_map(Hostile::NotObject),
        1 => Just(Hostile::NoType),
        1 => any::<u8>().prop_map(Hostile::TypeNotString),
        1 => any::<u8>().prop_map(Hostile::AoiNotObject),
        2 => any::<u8>().prop_map(Hostile::Duplicate),
        1 => any::<u8>().prop_map(Hostile::WeirdSeq),
        1 => Just(Hostile::BigNumber),
        1 => (0u16..300).prop_map(Hostile::Deep),
        2 => (1u8..5, (MAX as u16 + 1)..(3 * MAX as u16)).prop_map(|(c, l)| Hostile::Overlong(c, l)),
        1 => ((MAX as u16 + 1)..2000).prop_map(Hostile::OverlongGarbage),
        2 => any::<u8>().prop_map(Hostile::Framework),
        1 => (0..SHORT_IDS, 0u8..12, any::<u8>()).prop_map(|(r, s, st)| Hostile::Stray(r, s, st)),
        2 => ((MAX - 3)..(MAX + 4), any::<bool>()).prop_map(|(n, crlf)| Hostile::Sized(n as u16, crlf)),
        1 => (50_000u32..400_000).prop_map(Hostile::Huge),
        1 => prop::collection::vec(byte(), 0..80).prop_map(Hostile::Random),
        2 => any::<u8>().prop_map(Hostile::Foreign),
    ]
}

/// Bytes that matter to a JSONL reader, and any byte.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => prop::sample::select(vec![
            b'\n', b'\r', b'"', b'{', b'}', b'[', b']', b',', b':', b'\\', b' ', b'0', b'u', 0,
            0x1b, 0x80, 0xc3, 0xff,
        ]),
        1 => any::<u8>(),
    ]
}

#[derive(Debug, Clone)]
enum Edit {
    Insert(Index, Hostile),
    Delete(Index),
    Duplicate(Index),
    Swap(Index),
}

#[derive(Debug, Clone)]
enum Mutation {
    Insert(Index, u8),
    Delete(Index),
    Replace(Index, u8),
}

/// A stream: runs, interleaved, styled, edited, cut, mutated.
#[derive(Debug, Clone)]
struct Stream {
    runs: Vec<RunSpec>,
    /// Which live run gives the next line (cycled; empty: one run after another).
    order: Vec<u8>,
    /// Style bits of each line (cycled; empty: plain).
    styles: Vec<u8>,
    edits: Vec<Edit>,
    /// Cut the last line: keep 1..len of its bytes, no newline.
    cut: Option<Index>,
    mutations: Vec<Mutation>,
}

impl Stream {
    /// The runs' lines, interleaved: (run id, line with terminator).
    fn run_lines(&self, styled: bool) -> Vec<(&'static str, Vec<u8>)> {
        let per_run: Vec<_> = self.runs.iter().map(run_events).collect();
        let mut next = vec![0usize; per_run.len()];
        let total: usize = per_run.iter().map(Vec::len).sum();
        let mut out = Vec::with_capacity(total);
        while out.len() < total {
            let live: Vec<usize> = (0..per_run.len())
                .filter(|r| next[*r] < per_run[*r].len())
                .collect();
            let k = out.len();
            let pick = if self.order.is_empty() {
                0
            } else {
                self.order[k % self.order.len()] as usize % live.len()
            };
            let r = live[pick];
            let (ty, rest) = &per_run[r][next[r]];
            let style = if styled && !self.styles.is_empty() {
                self.styles[k % self.styles.len()]
            } else {
                0
            };
            let id = RUN_IDS[self.runs[r].id % RUN_IDS.len()];
            out.push((id, event(ty, next[r] as u64, id, rest, style)));
            next[r] += 1;
        }
        out
    }

    /// The lines after the edits.
    fn lines(&self, styled: bool) -> Vec<Vec<u8>> {
        let mut lines: Vec<Vec<u8>> = self.run_lines(styled).into_iter().map(|(_, l)| l).collect();
        for e in &self.edits {
            match e {
                Edit::Insert(at, h) => {
                    let at = at.index(lines.len() + 1);
                    lines.insert(at, h.render());
                }
                Edit::Delete(at) if !lines.is_empty() => {
                    lines.remove(at.index(lines.len()));
                }
                Edit::Duplicate(at) if !lines.is_empty() => {
                    let at = at.index(lines.len());
                    lines.insert(at, lines[at].clone());
                }
                Edit::Swap(at) if lines.len() > 1 => {
                    let at = at.index(lines.len() - 1);
                    lines.swap(at, at + 1);
                }
                _ => {}
            }
        }
        lines
    }

    fn bytes(&self, styled: bool) -> Vec<u8> {
        let mut lines = self.lines(styled);
        if let (Some(cut), Some(last)) = (self.cut, lines.last_mut()) {
            cut_line(last, cut);
        }
        let mut b = lines.concat();
        for m in &self.mutations {
            match m {
                Mutation::Insert(at, x) => b.insert(at.index(b.len() + 1), *x),
                Mutation::Delete(at) if !b.is_empty() => {
                    b.remove(at.index(b.len()));
                }
                Mutation::Replace(at, x) if !b.is_empty() => {
                    let at = at.index(b.len());
                    b[at] = *x;
                }
                _ => {}
            }
        }
        b
    }
}

/// Make `line` a fragment: its newline gone and 1..len of its bytes kept.
fn cut_line(line: &mut Vec<u8>, cut: Index) {
    if line.ends_with(b"\n") {
        line.pop();
    }
    if line.len() > 1 {
        line.truncate(1 + cut.index(line.len()));
    }
}

/// A run with one of the first `ids` run ids; a few are long enough to
/// cross aoitap's read and batch boundaries.
fn run_spec(ids: usize) -> impl Strategy<Value = RunSpec> {
    (
        0..ids,
        prop_oneof![12 => 0u16..5, 1 => 2000u16..7000],
        prop_oneof![
            4 => Just(Outcome::Ok),
            1 => Just(Outcome::Failed),
            1 => (0u16..5000).prop_map(Outcome::Retryable),
            1 => Just(Outcome::Partial),
            1 => Just(Outcome::Skipped),
            1 => Just(Outcome::Cut),
        ],
    )
        .prop_map(|(id, hits, outcome)| RunSpec { id, hits, outcome })
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<Index>(), hostile()).prop_map(|(i, h)| Edit::Insert(i, h)),
        1 => any::<Index>().prop_map(Edit::Delete),
        1 => any::<Index>().prop_map(Edit::Duplicate),
        1 => any::<Index>().prop_map(Edit::Swap),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), byte()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<Index>().prop_map(Mutation::Delete),
        (any::<Index>(), byte()).prop_map(|(i, b)| Mutation::Replace(i, b)),
    ]
}

/// `edits` and `mutations` say whether the stream may carry them.
fn stream(edits: bool, mutations: bool, ids: usize) -> impl Strategy<Value = Stream> {
    let edits = if edits {
        prop_oneof![2 => Just(vec![]), 3 => prop::collection::vec(edit(), 1..8)].boxed()
    } else {
        Just(vec![]).boxed()
    };
    let mutations = if mutations {
        prop_oneof![3 => Just(vec![]), 1 => prop::collection::vec(mutation(), 1..5)].boxed()
    } else {
        Just(vec![]).boxed()
    };
    (
        prop::collection::vec(run_spec(ids), 1..4),
        prop::collection::vec(any::<u8>(), 0..12),
        prop_oneof![Just(vec![]), prop::collection::vec(any::<u8>(), 1..8)],
        edits,
        prop::option::weighted(0.2, any::<Index>()),
        mutations,
    )
        .prop_map(|(runs, order, styles, edits, cut, mutations)| Stream {
            runs,
            order,
            styles,
            edits,
            cut,
            mutations,
        })
}

/// Any input: mostly streams, some noise.
fn input() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        8 => stream(true, true, RUN_IDS.len()).prop_map(|s| Bytes(s.bytes(true))),
        1 => prop::collection::vec(byte(), 0..600).prop_map(Bytes),
        1 => (prop::collection::vec(hostile(), 0..8), any::<bool>()).prop_map(|(hs, cut)| {
            let mut b: Vec<u8> = hs.iter().flat_map(Hostile::render).collect();
            if cut {
                b.pop();
            }
            Bytes(b)
        }),
    ]
}

/// Flags shared by the stream commands (never an output flag).
#[derive(Clone)]
struct Flags(Vec<&'static str>);

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0.join(" "))
    }
}

/// Verdict flags; `--multi-run` only when `multi` (some tests add it).
fn flags(multi: bool) -> impl Strategy<Value = Flags> {
    (
        any::<[bool; 5]>(),
        prop::option::weighted(0.15, prop::sample::select(vec!["1", "2", "5"])),
        prop::option::weighted(
            0.2,
            (
                prop::sample::select(vec!["--allow", "--deny"]),
                prop::sample::select(vec![
                    "line.unterminated",
                    "line.too-long",
                    "summary.missing",
                    "json.invalid",
                    "envelope.duplicate-key",
                    "text.ansi",
                    "meta.missing",
                    "seq.gap",
                    "run.changed",
                ]),
            ),
        ),
        prop::option::weighted(0.1, prop::sample::select(vec!["s@1", "s", "other@2"])),
    )
        .prop_map(move |(b, limit, rule, schema)| {
            let mut f = vec![];
            for (on, flag) in b.iter().zip([
                "--multi-run",
                "--unbounded",
                "--accept-partial",
                "--continue-on-error",
                "--strict",
            ]) {
                if *on && (multi || flag != "--multi-run") {
                    f.push(flag);
                }
            }
            if let Some(n) = limit {
                f.extend(["--limit", n]);
            }
            if let Some((how, rule)) = rule {
                f.extend([how, rule]);
            }
            if let Some(schema) = schema {
                f.extend(["--expect-schema", schema]);
            }
            Flags(f)
        })
}

/// `CMD FLAGS --max-line-bytes 256 EXTRA...`
fn cmd(name: &str, flags: &Flags, extra: &[&str]) -> Vec<OsString> {
    cmd_max(name, flags, MAX_ARG, extra)
}

/// `CMD FLAGS --max-line-bytes MAX EXTRA...`
fn cmd_max(name: &str, flags: &Flags, max: &str, extra: &[&str]) -> Vec<OsString> {
    let mut v = vec![OsString::from(name)];
    v.extend(flags.0.iter().map(OsString::from));
    v.extend(["--max-line-bytes", max].map(OsString::from));
    v.extend(extra.iter().map(OsString::from));
    v
}

fn with(mut v: Vec<OsString>, more: &[OsString]) -> Vec<OsString> {
    v.extend_from_slice(more);
    v
}

// ---------------------------------------------------------------------------
// strip-envelope: lines whose output is known

/// Domain types: none decodes to an `aoi:` prefix.
const DOMAIN_TYPES: &[&str] = &[
    r#""hit""#,
    r#""h\u0069t""#,
    r#""aoi""#,
    r#""AOI:meta""#,
    r#"" aoi:meta""#,
    r#""aoi-meta""#,
    r#""""#,
    r#""\u00e9""#,
    r#""aoi\\:x""#,
    r#""\u0061oi""#,
];
/// Framework types: each decodes to an `aoi:` prefix.
const FRAMEWORK_TYPES: &[&str] = &[
    r#""aoi:meta""#,
    r#""\u0061oi:summary""#,
    r#""aoi\u003aerror""#,
    r#""aoi:bogus""#,
    r#""aoi:""#,
];
/// Top-level keys of a domain event (never `type` or `aoi`, decoded).
const TOP_KEYS: &[&str] = &[
    r#""x""#,
    r#""id""#,
    r#""data""#,
    r#""ok""#,
    r#""seq""#,
    r#""run""#,
    r#""t\u0079p""#,
    r#""aoi.seq""#,
    r#""\u0061o""#,
    r#""AOI""#,
    r#""Type""#,
];
/// The value of a top-level `aoi` member, object or not.
const AOI_VALUES: &[&str] = &[
    r#"{"seq":1,"run":"R"}"#,
    r#"{"\u0073eq":0,"r\u0075n":"R\u0031"}"#,
    r#"{ "seq" : 7 , "run" : "x" , "t" : [1,{"aoi":2}] }"#,
    r#"{}"#,
    "5",
    r#"[1,"R"]"#,
    r#""aoi""#,
    "null",
    r#"{"seq":1.5e3,"run":7,"deep":{"aoi":{"aoi":"}"}}}"#,
];

/// A small JSON value: strings that look like envelopes, numbers in odd
/// spellings, nested `aoi` keys, duplicate inner keys.
fn jval() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("-0".to_string()),
        Just("1.50e+3".to_string()),
        Just("1180591620717411303424".to_string()),
        Just("-12.5E-3".to_string()),
        Just(r#""aoi""#.to_string()),
        Just(r#""\"aoi\":{\"seq\":1},""#.to_string()),
        Just(r#""\u00e9\ud83d\ude00\n\t\\\/""#.to_string()),
        Just(r#""aoi:meta""#.to_string()),
        Just("\"\u{e9}\u{2028}\"".to_string()),
        Just(r#""\u001b[31m""#.to_string()),
        "[a-z ]{0,8}".prop_map(|s| format!("\"{s}\"")),
        any::<i64>().prop_map(|n| n.to_string()),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        r#""aoi""#,
                        r#""\u0061oi""#,
                        r#""type""#,
                        r#""x""#,
                        r#""x""#,
                        r#""seq""#
                    ]),
                    inner
                ),
                0..4
            )
            .prop_map(|v| {
                let m: Vec<String> = v.iter().map(|(k, v)| format!("{k} : {v}")).collect();
                format!("{{{}}}", m.join(" ,"))
            }),
        ]
    })
}

#[derive(Debug, Clone)]
enum StripLine {
    /// A domain event: type, members, maybe an `aoi` member at `aoi_at`,
    /// padding (which may make it over-long), style bits.
    Domain {
        ty: usize,
        members: Vec<(usize, String)>,
        aoi: Option<(usize, usize, bool)>,
        pad: u16,
        style: u8,
    },
    /// A framework event: output only with --keep-framework.
    Framework { ty: usize, style: u8 },
    /// A line that is never output.
    Dropped(Hostile),
}

/// Hostile lines that strip-envelope never outputs.
fn dropped() -> impl Strategy<Value = Hostile> {
    let dup_reserved = prop::sample::select(vec![0u8, 2, 3, 4, 5, 8, 11]);
    prop_oneof![
        Just(Hostile::Blank),
        Just(Hostile::Spaces),
        any::<u8>().prop_map(Hostile::Marker),
        Just(Hostile::NulRaw),
        any::<u8>().prop_map(Hostile::BadUtf8),
        Just(Hostile::RawEsc),
        any::<u8>().prop_map(Hostile::NotObject),
        Just(Hostile::NoType),
        any::<u8>().prop_map(Hostile::TypeNotString),
        dup_reserved.prop_map(Hostile::Duplicate),
        (1u8..5, (MAX as u16 + 1)..(3 * MAX as u16)).prop_map(|(c, l)| Hostile::Overlong(c, l)),
        ((MAX as u16 + 1)..2000).prop_map(Hostile::OverlongGarbage),
        (1u16..150).prop_map(|d| Hostile::Deep(d | 1)),
    ]
}

fn strip_line() -> impl Strategy<Value = StripLine> {
    prop_oneof![
        6 => (
            0..DOMAIN_TYPES.len(),
            prop::collection::vec((0..TOP_KEYS.len(), jval()), 0..4),
            prop::option::weighted(0.8, (0..8usize, 0..AOI_VALUES.len(), any::<bool>())),
            prop_oneof![4 => Just(0u16), 1 => 1u16..400],
            any::<u8>(),
        )
            .prop_map(|(ty, members, aoi, pad, style)| StripLine::Domain {
                ty,
                members,
                aoi,
                pad,
                style,
            }),
        1 => (0..FRAMEWORK_TYPES.len(), any::<u8>())
            .prop_map(|(ty, style)| StripLine::Framework { ty, style }),
        2 => dropped().prop_map(StripLine::Dropped),
    ]
}

impl StripLine {
    /// The line (with terminator), and whether strip-envelope outputs it.
    fn render(&self, keep_framework: bool) -> (Vec<u8>, bool) {
        let style = match self {
            StripLine::Dropped(h) => return (h.render(), false),
            StripLine::Domain { style, .. } | StripLine::Framework { style, .. } => *style,
        };
        let sp = if style & SPACES != 0 { " \t" } else { "" };
        let type_key = jstr("type", style & ESC_TYPE_KEY != 0);
        let (mut members, aoi, wanted) = match self {
            StripLine::Dropped(_) => unreachable!(),
            StripLine::Framework { ty, .. } => (
                vec![
                    format!("{type_key}{sp}:{sp}{}", FRAMEWORK_TYPES[*ty]),
                    r#""x":1"#.to_string(),
                ],
                Some((1, 0, style & ESC_ENVELOPE_KEYS != 0)),
                keep_framework,
            ),
            StripLine::Domain {
                ty,
                members,
                aoi,
                pad,
                ..
            } => {
                let mut m = vec![format!("{type_key}{sp}:{sp}{}", DOMAIN_TYPES[*ty])];
                m.extend(
                    members
                        .iter()
                        .map(|(k, v)| format!("{}{sp}:{sp}{v}", TOP_KEYS[*k])),
                );
                if *pad > 0 {
                    m.push(format!(r#""pad":"{}""#, "p".repeat(*pad as usize)));
                }
                (m, *aoi, true)
            }
        };
        if let Some((at, value, esc)) = aoi {
            let at = at % (members.len() + 1);
            members.insert(
                at,
                format!("{}{sp}:{sp}{}", jstr("aoi", esc), AOI_VALUES[value]),
            );
        }
        let mut line = format!("{{{sp}{}{sp}}}", members.join(&format!("{sp},{sp}"))).into_bytes();
        if style & CRLF != 0 {
            line.push(b'\r');
        }
        let fits = line.len() <= MAX;
        line.push(b'\n');
        (line, wanted && fits)
    }
}

/// Length of the longest common prefix and suffix of `a` and `b`.
fn common_ends(a: &[u8], b: &[u8]) -> (usize, usize) {
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let s = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (p, s)
}

// ---------------------------------------------------------------------------
// split-by-run

/// The files in `dir` (which must hold only plain files), by name.
fn files_in(dir: &Path) -> Result<BTreeMap<PathBuf, Vec<u8>>, TestCaseError> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for e in entries {
        let e = e.unwrap();
        prop_assert!(
            e.file_type().unwrap().is_file(),
            "{} is not a plain file",
            e.path().display()
        );
        out.insert(e.path(), std::fs::read(e.path()).unwrap());
    }
    Ok(out)
}

/// Every complete input line is in exactly one file, each file holds its
/// lines in input order, and nothing else was written.
fn check_split_files(
    input: &[u8],
    files: &BTreeMap<PathBuf, Vec<u8>>,
    max: usize,
) -> Result<(), TestCaseError> {
    // A line over --max-line-bytes is a finding whose bytes are never held
    // (memory is bounded by the cap, docs/contract.md §8.1), so it is in no file.
    let want: Vec<&[u8]> = complete_lines(input)
        .into_iter()
        .filter(|l| l.len() - 1 <= max)
        .collect();
    let mut got: Vec<&[u8]> = vec![];
    for (path, content) in files {
        prop_assert!(
            content.is_empty() || content.ends_with(b"\n"),
            "{} ends in a fragment: {}",
            path.display(),
            show(content)
        );
        let lines = complete_lines(content);
        // In input order: a subsequence of the input's lines.
        let mut it = want.iter();
        for l in &lines {
            prop_assert!(
                it.any(|w| w == l),
                "{}: line {} is not in input order (or not an input line)",
                path.display(),
                show(l)
            );
        }
        got.extend(lines);
    }
    let mut w: Vec<&[u8]> = want.clone();
    let mut g = got;
    w.sort();
    g.sort();
    if w != g {
        let (mut missing, mut extra) = (vec![], vec![]);
        let (mut i, mut j) = (0, 0);
        while i < w.len() || j < g.len() {
            if j == g.len() || (i < w.len() && w[i] < g[j]) {
                missing.push(show(w[i]));
                i += 1;
            } else if i == w.len() || g[j] < w[i] {
                extra.push(show(g[j]));
                j += 1;
            } else {
                i += 1;
                j += 1;
            }
        }
        prop_assert!(
            false,
            "the lines written are not the input's complete lines:\n  missing:\n    {}\n  extra:\n    {}",
            missing.join("\n    "),
            extra.join("\n    ")
        );
    }
    Ok(())
}

/// A stream of runs whose every line carries its run id (so its run is
/// known), with the lines of each decoded run id in order.
#[derive(Clone)]
struct RunStream {
    bytes: Bytes,
    runs: BTreeMap<String, Vec<u8>>,
}

impl fmt::Debug for RunStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.bytes.fmt(f)
    }
}

fn run_stream() -> impl Strategy<Value = RunStream> {
    stream(false, false, RUN_IDS.len()).prop_map(|s| {
        let mut lines = s.run_lines(true);
        if let (Some(cut), Some((_, last))) = (s.cut, lines.last_mut()) {
            cut_line(last, cut);
        }
        let mut runs: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (id, l) in &lines {
            if l.ends_with(b"\n") {
                runs.entry(id.to_string()).or_default().extend_from_slice(l);
            }
        }
        RunStream {
            bytes: Bytes(lines.into_iter().flat_map(|(_, l)| l).collect()),
            runs,
        }
    })
}

/// The `run` events of aoitap's jsonl report: run id -> paths, in order.
fn run_paths(report: &[u8]) -> Result<BTreeMap<String, Vec<String>>, TestCaseError> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in complete_lines(report) {
        let v: Value = serde_json::from_slice(l)
            .map_err(|e| TestCaseError::fail(format!("report line not JSON ({e}): {}", show(l))))?;
        if v["type"] == "run"
            && let (Some(run), Some(path)) = (v["run"].as_str(), v["path"].as_str())
        {
            let paths = out.entry(run.to_string()).or_default();
            if !paths.iter().any(|p| p == path) {
                paths.push(path.to_string());
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Hostile file names, for the report property

const FILE_NAMES: &[&[u8]] = &[
    b"in.jsonl",
    b"a b.jsonl",
    b"new\nline.jsonl",
    b"esc\x1b[2J.jsonl",
    b"quote\"back\\slash.jsonl",
    b"bad\xff\xfeutf8.jsonl",
    b"\xc3\xa9t\xc3\xa9.jsonl",
    b"-dash.jsonl",
    b"tab\there\r.jsonl",
];

fn file_name() -> impl Strategy<Value = Bytes> {
    prop::sample::select(FILE_NAMES.to_vec()).prop_map(|n| Bytes(n.to_vec()))
}

// ---------------------------------------------------------------------------
// The properties

/// Property 1: No stream command panics, dies by a signal or hangs, whatever the
/// input and flags; each exits with a verdict status (and summarize's
/// `--output json` is one JSON value).
#[test]
fn props_no_panic_on_any_input() {
    check(
        "props_no_panic_on_any_input",
        (input(), flags(true), any::<[u8; 5]>()),
        |(input, flags, pick)| {
            let dir = tempfile::tempdir().unwrap();
            let out = |k: u8, choices: &[&'static str]| choices[k as usize % choices.len()];
            let split_dir = dir.path().join("split");
            let runs: Vec<Vec<OsString>> = vec![
                cmd(
                    "verify",
                    &flags,
                    &["--output", out(pick[0], &["human", "jsonl"])],
                ),
                cmd(
                    "verify",
                    &flags,
                    &["--relay", "--output", out(pick[0], &["jsonl", "human"])],
                ),
                cmd(
                    "strip-envelope",
                    &flags,
                    &[out(
                        pick[1],
                        &["--keep-framework", "--output=jsonl", "--output=human"],
                    )],
                ),
                cmd(
                    "summarize",
                    &flags,
                    &[
                        "--output",
                        out(pick[2], &["human", "json", "jsonl", "html"]),
                    ],
                ),
                cmd(
                    "reconcile",
                    &flags,
                    &["--output", out(pick[3], &["human", "jsonl", "html"])],
                ),
                with(
                    cmd(
                        "split-by-run",
                        &flags,
                        &[
                            "--output",
                            out(pick[4], &["human", "jsonl"]),
                            "--max-open",
                            out(pick[4] / 2, &["64", "2", "1"]),
                        ],
                    ),
                    &[OsString::from("--dir"), path_arg(&split_dir)],
                ),
            ];
            for argv in runs {
                let json = argv.iter().any(|a| a == "json");
                let p = exec(&argv, Feed::Bytes(input.0.clone()), false)?;
                verdict_code(&p)?;
                if json {
                    let parsed: Result<Value, _> = serde_json::from_slice(&p.stdout);
                    prop_assert!(
                        parsed.is_ok(),
                        "{}: --output json is not one JSON value: {}",
                        &p.what,
                        show(&p.stdout)
                    );
                }
            }
            Ok(())
        },
    );
}

/// Property 2: `verify --relay` copies the input to stdout byte for byte, a final
/// fragment included, however it is fed.
#[test]
fn props_relay_is_byte_identical() {
    check(
        "props_relay_is_byte_identical",
        (
            input(),
            flags(true),
            any::<bool>(),
            prop_oneof![Just(vec![]), prop::collection::vec(chunk(), 1..6)],
        ),
        |(input, flags, jsonl, chunks)| {
            let report = if jsonl { "--output=jsonl" } else { "-q" };
            let argv = cmd("verify", &flags, &["--relay", report]);
            let feed = if chunks.is_empty() {
                Feed::Bytes(input.0.clone())
            } else {
                Feed::Slow(input.0.clone(), chunks)
            };
            let p = exec(&argv, feed, false)?;
            verdict_code(&p)?;
            if p.stdout != input.0 {
                let (pre, _) = common_ends(&input.0, &p.stdout);
                prop_assert!(
                    false,
                    "relay differs from the input at byte {pre}: input {} bytes, relayed {} bytes\n  relayed: {}",
                    input.0.len(),
                    p.stdout.len(),
                    show(&p.stdout)
                );
            }
            Ok(())
        },
    );
}

/// Property 3: strip-envelope outputs exactly the domain events (framework ones
/// too with --keep-framework), in order, each the input line with one
/// contiguous span removed, and that span is the top-level `aoi` member:
/// the rest parses to the input's object without `aoi`.
#[test]
fn props_strip_removes_only_the_envelope() {
    check(
        "props_strip_removes_only_the_envelope",
        (
            prop::collection::vec(strip_line(), 0..14),
            any::<bool>(),
            any::<bool>(),
            prop::option::weighted(0.2, (strip_line(), any::<Index>())),
        ),
        |(lines, keep, multi, tail)| {
            let mut input = vec![];
            let mut expected: Vec<Vec<u8>> = vec![];
            for l in &lines {
                let (bytes, out) = l.render(keep);
                if out {
                    expected.push(bytes[..bytes.len() - 1].to_vec());
                }
                input.extend(bytes);
            }
            if let Some((l, cut)) = &tail {
                let mut frag = l.render(keep).0;
                cut_line(&mut frag, *cut);
                input.extend(frag);
            }
            let mut extra = vec!["-q"];
            if keep {
                extra.push("--keep-framework");
            }
            if multi {
                extra.push("--multi-run");
            }
            let p = exec(
                &cmd("strip-envelope", &Flags(vec![]), &extra),
                Feed::Bytes(input.clone()),
                false,
            )?;
            verdict_code(&p)?;
            let got: Vec<&[u8]> = complete_lines(&p.stdout)
                .into_iter()
                .map(|l| &l[..l.len() - 1])
                .collect();
            prop_assert!(
                p.stdout.is_empty() || p.stdout.ends_with(b"\n"),
                "output ends in a fragment: {}",
                show(&p.stdout)
            );
            prop_assert_eq!(
                got.len(),
                expected.len(),
                "input:\n{}\nexpected:\n{}\ngot:\n{}",
                show(&input),
                expected
                    .iter()
                    .map(|l| show(l))
                    .collect::<Vec<_>>()
                    .join("\n"),
                got.iter().map(|l| show(l)).collect::<Vec<_>>().join("\n")
            );
            for (inp, out) in expected.iter().zip(&got) {
                let (pre, suf) = common_ends(inp, out);
                prop_assert!(
                    out.len() <= inp.len() && pre + suf >= out.len(),
                    "not one contiguous span removed:\n  in:  {}\n  out: {}",
                    show(inp),
                    show(out)
                );
                let before: Value = serde_json::from_slice(inp).map_err(|e| {
                    TestCaseError::fail(format!("generated line is not JSON ({e}): {}", show(inp)))
                })?;
                let Value::Object(mut m) = before else {
                    unreachable!()
                };
                let had_aoi = m.remove("aoi").is_some();
                let after: Value = serde_json::from_slice(out).map_err(|e| {
                    TestCaseError::fail(format!("output line is not JSON ({e}): {}", show(out)))
                })?;
                prop_assert_eq!(
                    &after,
                    &Value::Object(m),
                    "in: {}\nout: {}",
                    show(inp),
                    show(out)
                );
                if !had_aoi {
                    prop_assert_eq!(inp, out);
                }
            }
            Ok(())
        },
    );
}

/// Property 4a: split-by-run writes every complete line exactly once, in input
/// order within each file, and nothing else, whatever the input.
#[test]
fn props_split_writes_every_line_once() {
    check(
        "props_split_writes_every_line_once",
        (
            input(),
            flags(true),
            prop::sample::select(vec!["64", "2", "1"]),
        ),
        |(input, flags, max_open)| {
            let dir = tempfile::tempdir().unwrap();
            let split_dir = dir.path().join("split");
            let argv = with(
                cmd("split-by-run", &flags, &["-q", "--max-open", max_open]),
                &[OsString::from("--dir"), path_arg(&split_dir)],
            );
            let p = exec(&argv, Feed::Bytes(input.0.clone()), false)?;
            verdict_code(&p)?;
            check_split_files(&input.0, &files_in(&split_dir)?, MAX)?;
            Ok(())
        },
    );
}

/// Property 4b: On runs whose lines all carry their run id, the files of each
/// (decoded) run id hold exactly that run's lines, in input order.
/// (`--max-line-bytes 4KiB` here: long run ids make long lines.)
#[test]
fn props_split_groups_lines_by_run() {
    check(
        "props_split_groups_lines_by_run",
        (run_stream(), prop::sample::select(vec!["64", "2", "1"])),
        |(input, max_open)| {
            let dir = tempfile::tempdir().unwrap();
            let split_dir = dir.path().join("split");
            let argv = with(
                cmd_max(
                    "split-by-run",
                    &Flags(vec![]),
                    "4KiB",
                    &["--output", "jsonl", "--max-open", max_open],
                ),
                &[OsString::from("--dir"), path_arg(&split_dir)],
            );
            let p = exec(&argv, Feed::Bytes(input.bytes.0.clone()), false)?;
            verdict_code(&p)?;
            let files = files_in(&split_dir)?;
            check_split_files(&input.bytes.0, &files, 4 << 10)?;
            let paths = run_paths(&p.stdout)?;
            for (run, want) in &input.runs {
                let got: Vec<u8> = paths
                    .get(run)
                    .map(|ps| {
                        ps.iter()
                            .flat_map(|p| std::fs::read(p).unwrap_or_default())
                            .collect()
                    })
                    .unwrap_or_default();
                prop_assert!(
                    &got == want,
                    "run {run:?} (files {:?}):\n  want: {}\n  got:  {}",
                    paths.get(run),
                    show(want),
                    show(&got)
                );
            }
            Ok(())
        },
    );
}

/// Property 5: verify's exit status does not depend on how it reports or how the
/// input arrives: -q, --output jsonl, --relay (captured or /dev/null), a
/// file operand, or a slow writer in random chunks.
#[test]
fn props_verify_status_is_independent_of_io() {
    check(
        "props_verify_status_is_independent_of_io",
        (input(), flags(true), prop::collection::vec(chunk(), 1..6)),
        |(input, flags, chunks)| {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("in.jsonl");
            std::fs::write(&file, &input.0).unwrap();
            let v = |extra: &[&str]| cmd("verify", &flags, extra);
            let data = || input.0.clone();
            let base = exec(&v(&["-q"]), Feed::Bytes(data()), false)?;
            verdict_code(&base)?;
            let others = [
                exec(&v(&["--output", "jsonl"]), Feed::Bytes(data()), false)?,
                exec(&v(&["--output", "human"]), Feed::Bytes(data()), false)?,
                exec(&v(&["--relay"]), Feed::Bytes(data()), false)?,
                exec(&v(&["--relay", "-q"]), Feed::Bytes(data()), true)?,
                exec(
                    &v(&["--relay", "--output", "jsonl"]),
                    Feed::Bytes(data()),
                    true,
                )?,
                exec(&with(v(&["-q"]), &[path_arg(&file)]), Feed::Nothing, false)?,
                exec(
                    &with(v(&["--output", "jsonl"]), &[path_arg(&file)]),
                    Feed::Nothing,
                    false,
                )?,
                exec(&v(&["-q", "-"]), Feed::Bytes(data()), false)?,
                exec(
                    &v(&["--line-buffered", "--output", "jsonl"]),
                    Feed::Bytes(data()),
                    false,
                )?,
                exec(
                    &with(
                        v(&["--output", "jsonl"]),
                        &[OsString::from("--report"), path_arg(&dir.path().join("r"))],
                    ),
                    Feed::Bytes(data()),
                    false,
                )?,
                exec(&v(&["-q"]), Feed::Slow(data(), chunks.clone()), false)?,
                exec(
                    &v(&["--relay", "-q"]),
                    Feed::Slow(data(), chunks.clone()),
                    true,
                )?,
            ];
            for p in &others {
                prop_assert_eq!(
                    p.code,
                    base.code,
                    "{} exits {}, but {} exits {}: {}",
                    &p.what,
                    p.code,
                    &base.what,
                    base.code,
                    p.err()
                );
            }
            Ok(())
        },
    );
}

/// Property 6: aoitap's own `--output jsonl` passes `aoitap verify` (0, 1 or 75,
/// never 65), whatever the input, flags and input file name.
#[test]
fn props_own_jsonl_output_verifies() {
    check(
        "props_own_jsonl_output_verifies",
        (
            input(),
            flags(true),
            prop::option::weighted(0.5, file_name()),
        ),
        |(input, flags, name)| {
            let dir = tempfile::tempdir().unwrap();
            let report = dir.path().join("report.jsonl");
            let split_dir = dir.path().join("split");
            let operand = operand(dir.path(), name.as_ref(), &input.0);
            let rep = [OsString::from("--report"), path_arg(&report)];
            let jsonl = ["--output", "jsonl"];
            let cases: Vec<(Vec<OsString>, bool)> = vec![
                (cmd("verify", &flags, &jsonl), false),
                (
                    with(
                        cmd("verify", &flags, &["--relay", "--output", "jsonl"]),
                        &rep,
                    ),
                    true,
                ),
                (with(cmd("strip-envelope", &flags, &jsonl), &rep), true),
                (cmd("summarize", &flags, &jsonl), false),
                (cmd("reconcile", &flags, &jsonl), false),
                (
                    with(
                        cmd("split-by-run", &flags, &jsonl),
                        &[OsString::from("--dir"), path_arg(&split_dir)],
                    ),
                    false,
                ),
            ];
            for (argv, to_file) in cases {
                let _ = std::fs::remove_file(&report);
                let _ = std::fs::remove_dir_all(&split_dir);
                let argv = with(argv, &operand);
                let feed = if operand.is_empty() {
                    Feed::Bytes(input.0.clone())
                } else {
                    Feed::Nothing
                };
                let p = exec(&argv, feed, false)?;
                verdict_code(&p)?;
                let own = if to_file {
                    std::fs::read(&report).unwrap_or_default()
                } else {
                    p.stdout.clone()
                };
                let check = exec(&args(&["verify"]), Feed::Bytes(own.clone()), false)?;
                prop_assert!(
                    [0, 1, 75].contains(&check.code),
                    "{} wrote a report that verify judges {}:\n{}\nreport:\n{}",
                    &p.what,
                    check.code,
                    String::from_utf8_lossy(&check.stdout),
                    String::from_utf8_lossy(&own)
                );
                // The verdict survives the second pipe: the report passes
                // exactly when the command did.
                prop_assert_eq!(
                    check.code == 0,
                    p.code == 0,
                    "{} exits {}, but verify of its report exits {}:\n{}",
                    &p.what,
                    p.code,
                    check.code,
                    String::from_utf8_lossy(&own)
                );
            }
            Ok(())
        },
    );
}

/// Property 7: (docs/contract.md §4.1, §3.2) Every stream command exits with verify's verdict on
/// the same input and flags: strip-envelope as verify; summarize and
/// split-by-run (multi-run by default) as verify --multi-run; reconcile
/// adds findings, never removes one.
#[test]
fn props_every_command_exits_with_the_verdict() {
    check(
        "props_every_command_exits_with_the_verdict",
        (input(), flags(false)),
        |(input, flags)| {
            let dir = tempfile::tempdir().unwrap();
            let data = || Feed::Bytes(input.0.clone());
            let single = exec(&cmd("verify", &flags, &["-q"]), data(), false)?;
            let multi = exec(
                &cmd("verify", &flags, &["-q", "--multi-run"]),
                data(),
                false,
            )?;
            let strip = exec(&cmd("strip-envelope", &flags, &["-q"]), data(), true)?;
            let summarize = exec(&cmd("summarize", &flags, &["-q"]), data(), false)?;
            let split = exec(
                &with(
                    cmd("split-by-run", &flags, &["-q"]),
                    &[OsString::from("--dir"), path_arg(&dir.path().join("s"))],
                ),
                data(),
                false,
            )?;
            let reconcile = exec(&cmd("reconcile", &flags, &["-q"]), data(), false)?;
            for (p, want) in [(&strip, &single), (&summarize, &multi), (&split, &multi)] {
                prop_assert_eq!(
                    p.code,
                    want.code,
                    "{} exits {}, {} exits {}",
                    &p.what,
                    p.code,
                    &want.what,
                    want.code
                );
            }
            prop_assert!(
                multi.code != 65 || reconcile.code == 65,
                "verify --multi-run finds the stream nonconforming, reconcile exits {}",
                reconcile.code
            );
            Ok(())
        },
    );
}

/// Property 8: (docs/contract.md §3.2) Decisions are made on decoded values: escaping keys,
/// types and run ids, spaces, member order and CRLF never change the
/// verdict.
#[test]
fn props_spelling_does_not_change_the_verdict() {
    check(
        "props_spelling_does_not_change_the_verdict",
        (stream(true, false, SHORT_IDS), flags(true)),
        |(s, flags)| {
            let plain = s.bytes(false);
            let styled = s.bytes(true);
            for l in s.run_lines(true) {
                prop_assert!(
                    l.1.len() <= MAX,
                    "generator: styled line too long: {}",
                    show(&l.1)
                );
            }
            let a = exec(
                &cmd("verify", &flags, &["-q"]),
                Feed::Bytes(plain.clone()),
                false,
            )?;
            let b = exec(
                &cmd("verify", &flags, &["-q"]),
                Feed::Bytes(styled.clone()),
                false,
            )?;
            prop_assert_eq!(
                a.code,
                b.code,
                "plain exits {}, styled exits {}\n  plain:  {}\n  styled: {}",
                a.code,
                b.code,
                show(&plain),
                show(&styled)
            );
            Ok(())
        },
    );
}

/// Property 9: (docs/contract.md §3.2) Human output never puts a control byte on a terminal:
/// whatever the input bytes, run ids and file name, stdout and stderr
/// carry no byte below 0x20 but newline and tab, and no DEL.
#[test]
fn props_human_output_has_no_control_bytes() {
    check(
        "props_human_output_has_no_control_bytes",
        (
            input(),
            flags(true),
            prop::option::weighted(0.5, file_name()),
        ),
        |(input, flags, name)| {
            let dir = tempfile::tempdir().unwrap();
            let operand = operand(dir.path(), name.as_ref(), &input.0);
            let human = ["--output", "human", "--color", "never"];
            let split = [OsString::from("--dir"), path_arg(&dir.path().join("split"))];
            let cases: Vec<(Vec<OsString>, bool)> = vec![
                (cmd("verify", &flags, &human), true),
                (
                    cmd("verify", &flags, &["--relay", "--color", "never"]),
                    false,
                ),
                (cmd("strip-envelope", &flags, &human), false),
                (cmd("summarize", &flags, &human), true),
                (cmd("reconcile", &flags, &human), true),
                (with(cmd("split-by-run", &flags, &human), &split), true),
            ];
            for (argv, report_on_stdout) in cases {
                let _ = std::fs::remove_dir_all(dir.path().join("split"));
                let feed = if operand.is_empty() {
                    Feed::Bytes(input.0.clone())
                } else {
                    Feed::Nothing
                };
                let p = exec(&with(argv, &operand), feed, false)?;
                verdict_code(&p)?;
                let mut texts = vec![("stderr", &p.stderr)];
                if report_on_stdout {
                    texts.push(("stdout", &p.stdout));
                }
                for (which, text) in texts {
                    let bad = text
                        .iter()
                        .position(|b| (*b < 0x20 && *b != b'\n' && *b != b'\t') || *b == 0x7f);
                    prop_assert!(
                        bad.is_none(),
                        "{}: control byte on {which} at {}: {}",
                        &p.what,
                        bad.unwrap_or(0),
                        show(text)
                    );
                }
            }
            Ok(())
        },
    );
}

/// Property 10: (docs/contract.md §2.1, §4.1) Several FILE operands are several streams, and
/// the exit status combines their verdicts: 65 wins, then 0 only if all
/// pass, 75 only if every failure is retryable, else 1.
#[test]
fn props_several_files_combine_their_verdicts() {
    check(
        "props_several_files_combine_their_verdicts",
        (prop::collection::vec(input(), 1..4), flags(true)),
        |(inputs, flags)| {
            let dir = tempfile::tempdir().unwrap();
            let mut files = vec![];
            let mut codes = vec![];
            for (i, input) in inputs.iter().enumerate() {
                let f = dir.path().join(format!("{i}.jsonl"));
                std::fs::write(&f, &input.0).unwrap();
                let p = exec(
                    &with(cmd("verify", &flags, &["-q"]), &[path_arg(&f)]),
                    Feed::Nothing,
                    false,
                )?;
                verdict_code(&p)?;
                codes.push(p.code);
                files.push(path_arg(&f));
            }
            let want = if codes.contains(&65) {
                65
            } else if codes.iter().all(|c| *c == 0) {
                0
            } else if codes.iter().all(|c| *c == 0 || *c == 75) {
                75
            } else {
                1
            };
            let all = exec(
                &with(cmd("verify", &flags, &["-q"]), &files),
                Feed::Nothing,
                false,
            )?;
            prop_assert_eq!(
                all.code,
                want,
                "each file alone exits {:?}; together {}",
                codes,
                all.code
            );
            Ok(())
        },
    );
}

/// Write sizes for the slow writer: mostly small.
fn chunk() -> impl Strategy<Value = usize> {
    prop_oneof![3 => 1usize..8, 2 => 1usize..64, 1 => 1usize..4097]
}

/// The generator itself: conforming runs pass.
#[test]
fn props_generated_runs_pass() {
    let s = Stream {
        runs: vec![
            RunSpec {
                id: 0,
                hits: 3,
                outcome: Outcome::Ok,
            },
            RunSpec {
                id: 9,
                hits: 2,
                outcome: Outcome::Skipped,
            },
        ],
        order: vec![0, 1, 1, 0],
        styles: vec![0, 255, 7, 24, 96, 160],
        edits: vec![],
        cut: None,
        mutations: vec![],
    };
    for styled in [false, true] {
        let p = exec(
            &args(&["verify", "--multi-run", "--max-line-bytes", MAX_ARG]),
            Feed::Bytes(s.bytes(styled)),
            false,
        )
        .unwrap();
        assert_eq!(
            p.code,
            0,
            "{}\n{}",
            String::from_utf8_lossy(&s.bytes(styled)),
            String::from_utf8_lossy(&p.stdout)
        );
    }
    let retry = Stream {
        runs: vec![RunSpec {
            id: 2,
            hits: 1,
            outcome: Outcome::Retryable(100),
        }],
        ..s.clone()
    };
    let p = exec(
        &args(&["verify", "--max-line-bytes", MAX_ARG]),
        Feed::Bytes(retry.bytes(true)),
        false,
    )
    .unwrap();
    assert_eq!(p.code, 75, "{}", String::from_utf8_lossy(&p.stdout));
}

/// Property 11: (docs/contract.md §2.2) A small file is read on the judging thread, a
/// pipe through the reading threads: the same bytes give the same report
/// either way, for every command that reports (aoitap's own run ids and
/// the input's name aside), and the same status.
#[test]
fn props_a_file_and_a_pipe_report_the_same() {
    check(
        "props_a_file_and_a_pipe_report_the_same",
        (input(), flags(true), any::<u8>()),
        |(input, flags, pick)| {
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("in.jsonl");
            std::fs::write(&f, &input.0).unwrap();
            let name = f.to_str().unwrap().to_string();
            let commands: [(&str, &[&str]); 4] = [
                ("verify", &["--output", "jsonl"]),
                ("summarize", &["--output", "jsonl"]),
                ("reconcile", &["--output", "jsonl"]),
                ("strip-envelope", &["--output", "jsonl"]),
            ];
            let (command, extra) = commands[pick as usize % commands.len()];
            let same = |p: &Proc, label: &str| {
                let text = String::from_utf8_lossy(&p.stdout).replace(label, "INPUT");
                let text = String::from_utf8_lossy(&p.stderr).replace(label, "INPUT") + &text;
                ulids(&text)
            };
            let from_file = exec(
                &with(cmd(command, &flags, extra), &[path_arg(&f)]),
                Feed::Nothing,
                false,
            )?;
            let from_pipe = exec(
                &cmd(command, &flags, extra),
                Feed::Bytes(input.0.clone()),
                false,
            )?;
            prop_assert_eq!(from_file.code, from_pipe.code, "{}", &from_file.what);
            prop_assert_eq!(
                same(&from_file, &name),
                same(&from_pipe, "<stdin>"),
                "{}",
                &from_file.what
            );
            Ok(())
        },
    );
}

/// Property 12: (docs/contract.md §2.2) FILE operands judged by a pool of workers
/// give the report one worker gives, byte for byte (aoitap's own run ids
/// aside), in every format, with --limit and --failures-only, and the
/// same status: the workers' findings are said in operand order.
#[test]
fn props_workers_report_as_one_does() {
    check(
        "props_workers_report_as_one_does",
        (
            prop::collection::vec(input(), 2..6),
            flags(true),
            prop::sample::select(vec!["human", "jsonl", "tap"]),
            any::<bool>(),
            prop::sample::select(vec!["2", "3", "8"]),
        ),
        |(inputs, flags, format, failures_only, jobs)| {
            let dir = tempfile::tempdir().unwrap();
            let mut files = vec![];
            for (k, input) in inputs.iter().enumerate() {
                let f = dir.path().join(format!("{k}.jsonl"));
                std::fs::write(&f, &input.0).unwrap();
                files.push(path_arg(&f));
            }
            let mut extra = vec!["--output", format];
            if failures_only && format == "human" {
                extra.push("--failures-only");
            }
            let run = |j: &str| {
                let argv = with(
                    cmd("verify", &flags, &[&extra[..], &["-j", j]].concat()),
                    &files,
                );
                exec(&argv, Feed::Nothing, false)
            };
            let (one, many) = (run("1")?, run(jobs)?);
            let text = |p: &Proc| {
                ulids(&(String::from_utf8_lossy(&p.stderr) + String::from_utf8_lossy(&p.stdout)))
            };
            prop_assert_eq!(one.code, many.code, "{}", &many.what);
            prop_assert_eq!(text(&one), text(&many), "{}", &many.what);
            Ok(())
        },
    );
}

/// `text` with aoitap's own run ids (ULIDs, 26 Crockford characters) as
/// `ULID`.
fn ulids(text: &str) -> String {
    let crockford = |c: char| c.is_ascii_digit() || (c.is_ascii_uppercase() && !"ILOU".contains(c));
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("\"run\":\"") {
        let (head, tail) = rest.split_at(i + 7);
        out.push_str(head);
        let id: String = tail.chars().take(26).collect();
        if id.len() == 26 && id.chars().all(crockford) && tail[26..].starts_with('"') {
            out.push_str("ULID");
            rest = &tail[26..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}
