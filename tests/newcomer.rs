//! What a newcomer meets first: merged logs reported where each run is,
//! inputs that are not streams named for what they are, usage errors
//! that say what to type instead (issue "a newcomer's day").

use serde_json::Value;

use crate::util::*;

/// Three interleaved runs: `a` cut at line 3, `b` whole (lines 4 to 7),
/// `c` cut at the log's end (lines 8 to 10).
fn merged_log() -> Vec<u8> {
    let mut v = vec![];
    for (run, whole) in [("a", false), ("b", true), ("c", false)] {
        let mut ls = good(2);
        if !whole {
            ls.pop();
        }
        v.extend(
            ls.iter()
                .map(|l| l.replace(r#""run":"R""#, &format!(r#""run":"{run}""#))),
        );
    }
    lines(&v)
}

/// The `summary.missing` findings of `out` (jsonl): (run, line, message).
fn missing(out: &str) -> Vec<(String, u64, String)> {
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["rule"] == "summary.missing")
        .map(|v| {
            let run = v["run"].as_str().unwrap().to_string();
            (
                run,
                v["line_number"].as_u64().unwrap(),
                v["message"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn a_cut_run_of_a_merged_log_is_reported_at_its_own_last_line() {
    let log = merged_log();
    let out = verify(&["--multi-run"], &log);
    assert_eq!(out.code, 65, "{}", out.stdout);
    let found = missing(&out.stdout);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!((found[0].0.as_str(), found[0].1), ("a", 3), "{found:?}");
    assert!(
        found[0].2.contains("lines 1 to 3") && found[0].2.contains("went on to line 10"),
        "{found:?}"
    );
    assert_eq!((found[1].0.as_str(), found[1].1), ("c", 10), "{found:?}");
    assert!(
        found[1].2.contains("lines 8 to 10") && found[1].2.contains("ended there"),
        "{found:?}"
    );
    // The annotation a CI system shows lands on the run, not the log's end.
    let gh = run(&["verify", "--multi-run", "--output", "github", "-"], &log);
    assert!(
        gh.stdout
            .contains("title=summary.missing,file=<stdin>,line=3::"),
        "{}",
        gh.stdout
    );
    // One run alone keeps the plain sentence.
    let one = verify(&[], &lines(&good(2)[..3]));
    let found = missing(&one.stdout);
    assert_eq!(found[0].1, 3);
    assert!(
        found[0].2.starts_with("the stream ended after 3 lines"),
        "{found:?}"
    );
}

#[test]
fn summarize_lists_a_merged_logs_runs_in_the_order_they_began() {
    let log = merged_log();
    for format in ["human", "jsonl"] {
        let out = run(&["summarize", "--output", format], &log);
        assert_eq!(out.code, 65, "{}", out.stdout);
        let order: Vec<&str> = match format {
            "human" => out
                .stdout
                .lines()
                .filter_map(|l| l.strip_prefix("run ")?.split(' ').next())
                .collect(),
            _ => out
                .stdout
                .lines()
                .filter(|l| l.contains(r#""type":"run_summary""#))
                .filter_map(|l| l.split(r#""run":""#).nth(2)?.split('"').next())
                .collect(),
        };
        assert_eq!(order, ["a", "b", "c"], "{format}: {}", out.stdout);
    }
}

#[test]
fn an_empty_input_is_called_empty() {
    let out = run(&["verify", "-"], b"");
    assert_eq!(out.code, 65);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let text = &out.stdout;
    assert!(
        text.contains("NOT CONFORMING: empty input: nothing was written"),
        "{text}"
    );
    assert!(!text.contains("run from line 1"), "{text}");
    assert!(!text.contains("cut off"), "{text}");
    // Its missing summary says it all: no meta.missing beside it.
    assert!(!text.contains("meta.missing"), "{text}");
    let sum = run(&["summarize", "-"], b"");
    assert!(
        sum.stdout.starts_with("empty input (<stdin>:1)"),
        "{}",
        sum.stdout
    );
}

/// `tests/fixtures/streams/ok-complete.jsonl`, compressed by `gzip -n`
/// here, and the binary running the tests: one finding each, naming
/// what the input is, and what to do for the compressed one.
#[test]
fn a_compressed_or_binary_input_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("out.jsonl.gz");
    let (code, _) = sh(&format!(
        "gzip -nc {} > {}",
        fixture("streams/ok-complete.jsonl").display(),
        gz.display()
    ));
    assert_eq!(code, 0);
    let exe = bin();
    for (path, says) in [
        (gz.as_path(), "gzip-compressed"),
        (exe.as_path(), "not text"),
    ] {
        let out = run(
            &["verify", "--output", "jsonl", path.to_str().unwrap()],
            b"",
        );
        assert_eq!(out.code, 65, "{}", out.stdout);
        let findings: Vec<Value> = out
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|v: &Value| v["type"] == "finding")
            .collect();
        assert_eq!(findings.len(), 1, "{path:?}: {}", out.stdout);
        assert_eq!(findings[0]["rule"], "stream.not-text");
        assert_eq!(findings[0]["line_number"], 1);
        let msg = findings[0]["message"].as_str().unwrap();
        assert!(msg.contains(says), "{msg}");
        if says.starts_with("gzip") {
            assert!(msg.contains("zcat FILE | aoitap"), "{msg}");
        }
        // Every command reaches the same verdict, and says no more.
        for cmd in ["summarize", "strip-envelope", "reconcile"] {
            let other = run(&[cmd, path.to_str().unwrap()], b"");
            assert_eq!(other.code, 65, "{cmd} {path:?}");
        }
    }
    // A decompressed copy is fine.
    let out = run(
        &["verify", "-"],
        &std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap(),
    );
    assert_eq!(out.code, 0);
}

/// A Python pty driver: aoitap with ARGV on a terminal; stdin the
/// terminal unless `pipe` is given (then a pipe fed `pipe` slowly).
fn at_a_terminal(args: &[&str], pipe: Option<&str>) -> String {
    let driver = r#"
import os, pty, sys, time
feed = os.environ.get("FEED")
if feed is not None:
    r, w = os.pipe()
pid, fd = pty.fork()
if pid == 0:
    if feed is not None:
        os.dup2(r, 0)
        os.close(w)
    os.execv(sys.argv[1], sys.argv[1:])
if feed is not None:
    os.close(r)
    for line in feed.split("|"):
        time.sleep(0.7)
        os.write(w, (line + "\n").encode())
    time.sleep(1.3)
    os.close(w)
else:
    time.sleep(1.5)
    os.write(fd, b"\x04")
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
"#;
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-c", driver]).arg(bin()).args(args);
    if let Some(feed) = pipe {
        cmd.env("FEED", feed);
    }
    String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
}

#[test]
fn at_a_terminal_with_no_file_verify_says_it_reads_stdin() {
    let text = at_a_terminal(&["verify"], None);
    assert!(
        text.starts_with(
            "aoitap verify: reading a stream from standard input, which is this terminal"
        ),
        "{text}"
    );
    assert!(!text.contains("MiB"), "{text}");
    // Piped, nothing is said but the report.
    let out = run(&["verify", "-"], &lines(&good(1)));
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn progress_for_a_slow_pipe_says_what_was_read() {
    let feed = good(2).join("|");
    let text = at_a_terminal(&["verify"], Some(&feed));
    assert!(!text.contains("reading a stream"), "{text}");
    assert!(text.contains("KiB read"), "{text}");
    assert!(!text.contains("0 MiB"), "{text}");
    assert!(text.contains("PASS"), "{text}");
}

#[test]
fn a_usage_errors_jsonl_error_is_the_whole_message() {
    let out = run(&["run", "minitool", "--output", "jsonl", "x"], b"");
    assert_eq!(out.code, 64);
    let err = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["type"] == "aoi:error")
        .unwrap();
    let msg = err["message"].as_str().unwrap();
    assert!(!msg.ends_with(':'), "{msg}");
    assert!(
        msg.contains("<CMD>") && msg.contains("put `--` before CMD"),
        "{msg}"
    );
    let (code, _) = sh(r#"$A run minitool --output jsonl x 2>/dev/null | $A verify -q"#);
    assert_eq!(
        code, 1,
        "aoitap's own refusal is a conforming, failed stream"
    );
}

#[test]
fn an_unknown_flag_gets_the_flag_meant_never_a_file_of_its_name() {
    let cases: [(&[&str], &str); 5] = [
        (&["verify", "-o", "json", "x"], "did you mean --output?"),
        (&["filter", "-e", "."], "use --assert EXPR"),
        (&["filter", "-s", "."], "jq -s"),
        (&["filter", "--argjson", "a", "1", "."], "--arg NAME VALUE"),
        (&["summarize", "-x"], "'aoitap summarize --help' lists them"),
    ];
    for (args, says) in cases {
        let out = run(args, b"");
        assert_eq!(out.code, 64, "{args:?}");
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("use '-- "), "{args:?}: {}", out.stderr);
    }
    // clap's own near miss is kept.
    let out = run(&["verify", "--ouput", "json"], b"");
    assert!(
        out.stderr.contains("a similar argument exists: '--output'"),
        "{}",
        out.stderr
    );
}

/// Every filter output line is JSON, as jq's are; what differs from jq
/// is listed beside "jq syntax" (docs/contract.md §1.5).
#[test]
fn filter_writes_json_and_lists_where_it_differs_from_jq() {
    let input = lines(&good(1));
    let out = run(
        &[
            "filter",
            "-c",
            r#"select(.type == "hit") | [nan, infinite, -infinite, {"NaN": "Infinity"}]"#,
        ],
        &input,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "[null,1.7976931348623157e+308,-1.7976931348623157e+308,{\"NaN\":\"Infinity\"}]\n"
    );
    let help = run(&["filter", "--help"], b"").stdout;
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for difference in [
        "del and delpaths move an object's last key into the deleted key's place",
        "-0 is read as 0",
        "1e2 + 0 is 100.0",
    ] {
        assert!(flat.contains(difference), "{difference}: {help}");
    }
}

/// What `--redact` writes over is found in lines after a first line that
/// is not text, which are otherwise not judged.
#[test]
fn redact_holds_after_an_input_that_is_not_text() {
    let mut input = b"\x00\x01bin\n".to_vec();
    input.extend_from_slice(br#"{"type":"x","db_secret":"hunter2","url_url":"https://u:pw@h/"}"#);
    input.push(b'\n');
    let (code, out, _) = raw(&["verify", "--relay", "--redact", "-"], &input);
    assert_eq!(code, 65);
    let out = String::from_utf8_lossy(&out);
    assert!(!out.contains("hunter2") && !out.contains(":pw@"), "{out}");
}

/// The hint to --protocol jsonl is for objects without a type, not for
/// lines that do not parse; and --unbounded still allows the missing end.
#[test]
fn the_plain_json_hint_is_for_untyped_objects_only() {
    let plain = lines(&[r#"{"a":1}"#, r#"{"b":2}"#]);
    let out = run(&["verify", "-"], &plain);
    assert!(out.stdout.contains("--protocol jsonl"), "{}", out.stdout);
    let up = run(&["upgrade", "-"], &plain);
    assert!(!up.stdout.contains("UPSTREAM_CUT"), "{}", up.stdout);
    let out = run(
        &[
            "verify",
            "--unbounded",
            "--allow",
            "envelope.type-missing",
            "-",
        ],
        &plain,
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    for broken in [
        &b"{broken\n"[..],
        b"{\"type\":\"aoi:meta\",\"aoi\":{\"seq\":0\n",
    ] {
        let out = run(&["verify", "-"], broken);
        assert!(!out.stdout.contains("--protocol jsonl"), "{}", out.stdout);
    }
}

#[test]
fn utf16_input_is_named() {
    let text = utf16le("\u{feff}{\"type\":\"aoi:meta\"}\n");
    let out = verify(&[], &text);
    assert_eq!(out.code, 65);
    assert!(
        out.stdout.contains("UTF-16") && out.stdout.contains("iconv"),
        "{}",
        out.stdout
    );
}

/// A signal while a run that began first is still open: the runs that
/// ended are written, in order, and the open one named unjudged.
#[test]
fn summarize_writes_held_runs_when_cancelled() {
    let mut v = vec![];
    for (run, whole) in [("F", false), ("A", true), ("B", true)] {
        let mut ls = good(1);
        if !whole {
            ls.pop();
        }
        v.extend(
            ls.iter()
                .map(|l| l.replace(r#""run":"R""#, &format!(r#""run":"{run}""#))),
        );
    }
    let log = dir_with("log.jsonl", &lines(&v));
    // Its stdin a FIFO the shell holds open after the lines: the stream
    // goes on, unended, until the signal (and nothing lingers after it).
    let (_, err) = sh(&format!(
        "cd {} && mkfifo in && {{ $A summarize < in > out & }} && exec 3> in && cat {} >&3 && sleep 1 && kill -TERM $! && wait $!",
        log.0.path().display(),
        log.1.display()
    ));
    let out = std::fs::read_to_string(log.0.path().join("out")).unwrap();
    let order: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("run ")?.split(' ').next())
        .collect();
    assert_eq!(order, ["A", "B"], "{out}{err}");
    assert!(out.contains("CANCELLED"), "{out}");
}

/// `text` as UTF-16, little-endian: what a Windows tool may write.
fn utf16le(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// A temporary folder holding `name` with `bytes`, and the file's path.
fn dir_with(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

/// Typed JSON lines without AOI's envelope are not a cut AOI stream
/// either: the hint names the protocols that read them.
#[test]
fn typed_lines_without_an_envelope_get_the_ndjson_hint() {
    let typed = lines(&[r#"{"type":"start"}"#, r#"{"type":"item","id":1}"#]);
    let out = run(&["verify", "-"], &typed);
    assert!(out.stdout.contains("--protocol ndjson"), "{}", out.stdout);
    assert!(!out.stdout.contains("cut off"), "{}", out.stdout);
    let up = run(&["upgrade", "-"], &typed);
    assert!(!up.stdout.contains("UPSTREAM_CUT"), "{}", up.stdout);
}

/// Under --redact an input that is not text cannot be searched: its
/// lines that do not parse are withheld, UTF-16 ones too.
#[test]
fn redact_withholds_what_it_cannot_search() {
    let text = utf16le("{\"type\":\"x\",\"db_secret\":\"hunter2\"}\n{\"a\":1}\n");
    let (code, out, _) = raw(&["verify", "--relay", "--redact", "-"], &text);
    assert_eq!(code, 65);
    let utf8: String = String::from_utf8_lossy(&out).replace('\0', "");
    assert!(!utf8.contains("hunter2"), "{utf8}");
    assert!(
        utf8.contains("withheld this line: the input is not text"),
        "{utf8}"
    );
}
