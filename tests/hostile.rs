//! Bad input is the normal case: every command meets binary noise, cut and
//! nested lines and invalid UTF-8 with findings and an exit status, never a
//! panic (the harness fails on one).

use std::process::Command;

use crate::util::*;

/// Deterministic noise: good lines, cut lines, random bytes, deep nesting,
/// invalid UTF-8 right after framework events.
fn hostile() -> Vec<u8> {
    let mut out = vec![];
    let mut n = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        n ^= n << 13;
        n ^= n >> 7;
        n ^= n << 17;
        n
    };
    for (i, line) in good(300).iter().enumerate() {
        match next() % 10 {
            0 => out.extend_from_slice(&line.as_bytes()[..(next() as usize) % line.len()]),
            1 => out.extend(
                (0..60)
                    .map(|_| (next() & 0xff) as u8)
                    .filter(|b| *b != b'\n'),
            ),
            2 => out.extend(std::iter::repeat_n(b'[', 20_000)),
            3 => {
                out.extend_from_slice(line.as_bytes());
                out.extend_from_slice(b"\n{\"type\":\"hit\",\"x\":\"\xc3\x28\"}");
            }
            _ => out.extend_from_slice(line.as_bytes()),
        }
        if i % 97 != 96 {
            out.push(b'\n');
        }
    }
    out
}

#[test]
fn every_command_survives_hostile_input() {
    let input = hostile();
    let dir = tempfile::tempdir().unwrap();
    let split = dir.path().join("split");
    let cases: Vec<Vec<&str>> = vec![
        vec!["verify"],
        vec!["verify", "--multi-run", "--output", "jsonl"],
        vec!["verify", "--relay"],
        vec!["strip-envelope", "--keep-framework"],
        vec!["split-by-run", "--dir", split.to_str().unwrap()],
        vec!["summarize", "--output", "json"],
        vec!["summarize", "--type-field", "x"],
        vec!["reconcile", "--output", "jsonl"],
    ];
    for args in cases {
        let out = run(&args, &input);
        assert_eq!(out.code, 65, "{args:?}: {}", out.stderr);
    }
    // Random bytes with hardly a newline.
    let noise: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for cmd in ["verify", "summarize", "reconcile", "strip-envelope"] {
        assert_eq!(run(&[cmd], &noise).code, 65, "{cmd}");
    }
}

/// A write that fails is exit 74 (or 141 for a closed pipe), never a panic
/// (docs/contract.md §3.2). `sh` runs the real binary; its stderr must hold no panic.
#[test]
fn failed_writes_are_74_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "x\n").unwrap();
    let bad = bad.to_str().unwrap();
    for (script, want) in [
        ("$A completions bash > /dev/full".to_string(), 74),
        ("$A --help > /dev/full".to_string(), 74),
        ("$A /nope 2> /dev/full".to_string(), 64),
        (
            format!("$A verify --relay {bad} 2> /dev/full > /dev/null"),
            74,
        ),
        (format!("$A verify {bad} > /dev/full"), 74),
        (format!("$A verify --output jsonl {bad} > /dev/full"), 74),
    ] {
        let (code, stderr) = sh(&script);
        assert!(!stderr.contains("panicked"), "{script}: {stderr}");
        assert_eq!(code, want, "{script}: {stderr}");
    }
    // A full disk under the data a command writes: one line on stderr.
    let good = crate::util::fixture("streams/ok-complete.jsonl");
    let good = good.to_str().unwrap();
    for script in [
        format!("$A verify --relay {good} > /dev/full"),
        format!("$A strip-envelope {good} > /dev/full"),
        format!("$A run -- cat {good} > /dev/full"),
    ] {
        let (code, stderr) = sh(&script);
        assert_eq!(code, 74, "{script}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{script}: {stderr}");
    }
    // Help that cannot be written says so, once, like any other write;
    // a closed stdout is /dev/null (docs/contract.md §3.2): the help is discarded.
    for (script, want) in [
        ("$A --help > /dev/full", 74),
        ("$A --version > /dev/full", 74),
        ("$A --help >&-", 0),
        ("$A --version >&-", 0),
    ] {
        let (code, stderr) = sh(script);
        assert_eq!(code, want, "{script}: {stderr}");
        let said = if want == 0 { 0 } else { 1 };
        assert_eq!(
            stderr.matches("aoitap: ").count(),
            said,
            "{script}: {stderr}"
        );
    }
}

/// `--report` naming an input is refused before anything is opened for
/// writing: the input survives (0.1.0 truncated it).
#[test]
fn report_naming_an_input_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, lines(&good(2))).unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    let p = input.to_str().unwrap();
    for report in [p, link.to_str().unwrap()] {
        let out = run(&["verify", "--report", report, p], b"");
        assert_eq!(out.code, 64, "{}", out.stderr);
        assert!(out.stderr.contains("is an input"), "{}", out.stderr);
        assert_eq!(std::fs::read(&input).unwrap(), lines(&good(2)));
    }
    let out = run(&["verify", "--output", "jsonl", "--report", p, p], b"");
    assert_eq!(out.code, 64);
    assert_eq!(verify(&[], out.stdout.as_bytes()).code, 1, "{}", out.stdout);
}

#[test]
fn stdin_named_twice_is_a_usage_error() {
    let out = run(&["verify", "-", "-"], &lines(&good(1)));
    assert_eq!(out.code, 64, "{}", out.stderr);
}

/// Allowing `version.aoi-unsupported` judges the run by the 1.x rules in
/// full: a cut 0.x stream is never a pass (0.1.0 said PASS).
#[test]
fn allowing_an_unsupported_version_is_no_pass() {
    let cut =
        "{\"type\":\"aoi:meta\",\"tool\":\"t\",\"aoi_version\":\"0.2\"}\n{\"type\":\"entry\"}\n";
    let out = verify(&["--allow", "version.aoi-unsupported"], cut.as_bytes());
    assert_eq!(out.code, 65, "{}", out.stdout);
    assert!(out.has_rule("summary.missing"), "{:?}", out.rules());
    assert!(!out.stdout.contains("unbounded"), "{}", out.stdout);
}

/// A closed stdout (`>&-`) is reopened on /dev/null, read-write, by the
/// Rust runtime, and cannot be told from the /dev/null a harness gives
/// (docs/contract.md §3.2): output is discarded, never an error, and the exit status
/// is the verdict. A closed stderr is the same.
#[test]
fn a_closed_stdout_discards_output_and_exits_with_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let good_file = dir.path().join("good.jsonl");
    std::fs::write(&good_file, lines(&good(3))).unwrap();
    let g = good_file.to_str().unwrap();
    let cut_file = dir.path().join("cut.jsonl");
    std::fs::write(&cut_file, &lines(&good(3))[..40]).unwrap();
    let c = cut_file.to_str().unwrap();
    for (script, want) in [
        (format!("$A strip-envelope {g} >&-"), 0),
        (format!("$A verify --relay {g} >&-"), 0),
        (format!("$A verify --output jsonl {g} >&-"), 0),
        (format!("$A verify --output jsonl {c} >&-"), 65),
        (format!("$A summarize {g} >&-"), 0),
        (format!("$A summarize {c} >&- 2>&-"), 65),
        ("$A schema >&-".to_string(), 0),
        (format!("$A verify -q {g} >&-"), 0),
        (format!("$A strip-envelope {g} > /dev/null"), 0),
        (format!("$A strip-envelope {g} <> /dev/null >&0"), 0),
    ] {
        let (code, stderr) = sh(&script);
        assert_eq!(code, want, "{script}: {stderr}");
        assert!(!stderr.contains("closed"), "{script}: {stderr}");
    }
}

/// A directory with no stream files in it is an unreadable input (66),
/// said once (as what it is: a directory without streams), with no
/// made-up stream report beside it.
#[test]
fn a_directory_is_not_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for cmd in ["verify", "summarize", "reconcile", "strip-envelope"] {
        let out = run(&[cmd, d], b"");
        assert_eq!(out.code, 66, "{cmd}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("a directory with no *.jsonl or *.ndjson file"),
            "{cmd}: {}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("summary.missing"),
            "{cmd}: {}",
            out.stderr
        );
        assert!(
            !out.stdout.contains("summary.missing"),
            "{cmd}: {}",
            out.stdout
        );
    }
}

/// `line.too-long` names the limit it applied; counts read as English.
#[test]
fn messages_name_the_limit_and_count_right() {
    let mut input = format!("{{\"a\":\"{}\"}}\n", "x".repeat(300)).into_bytes();
    let out = run(&["verify", "--max-line-bytes", "100"], &input);
    assert!(
        out.stdout.contains("over --max-line-bytes 100;"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("ended after 1 line without"),
        "{}",
        out.stdout
    );
    // An AOI event: an object without its envelope is said otherwise.
    input.extend_from_slice(b"{\"type\":\"x\",\"aoi\":{}}\n");
    let out = run(&["verify", "--max-line-bytes", "100"], &input);
    assert!(
        out.stdout.contains("ended after 2 lines without"),
        "{}",
        out.stdout
    );
}

/// Progress is for a person at a terminal: with stderr on one (`script`
/// gives a pty), the stream commands show percent and rate; with stderr a
/// pipe, or `-q`, nothing. `AOITAP_PROGRESS_FROM=0` makes a small file
/// count as large.
#[test]
fn progress_only_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.jsonl");
    std::fs::write(&file, lines(&good(50))).unwrap();
    let f = file.to_str().unwrap();
    let d = dir.path().join("runs");
    let d = d.to_str().unwrap();
    for cmd in [
        "verify".to_string(),
        "summarize".to_string(),
        "reconcile".to_string(),
        format!("split-by-run --dir {d}"),
    ] {
        let tty = Command::new("script")
            .args([
                "-qec",
                &format!("\"$A\" {cmd} {f} > /dev/null"),
                "/dev/null",
            ])
            .env("A", bin())
            .env("AOITAP_PROGRESS_FROM", "0")
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&tty.stdout);
        assert!(
            shown.contains("% ") && shown.contains("MiB/s"),
            "{cmd}: {shown:?}"
        );
        for quiet in ["", "-q"] {
            let _ = std::fs::remove_dir_all(d);
            let (code, stderr) = sh(&format!(
                "AOITAP_PROGRESS_FROM=0 \"$A\" {cmd} {quiet} {f} > /dev/null"
            ));
            assert!(
                code == 0 && !stderr.contains("MiB/s"),
                "{cmd} {quiet}: {stderr}"
            );
        }
        let _ = std::fs::remove_dir_all(d);
    }
}

/// `--report F < F` would destroy the input before it is read: a usage
/// error, like naming F as an input.
#[test]
fn report_naming_stdin_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("in.jsonl");
    std::fs::write(&f, lines(&good(2))).unwrap();
    let f = f.to_str().unwrap();
    let (code, stderr) = sh(&format!("$A verify --report {f} < {f}"));
    assert_eq!(code, 64, "{stderr}");
    assert_eq!(std::fs::read(f).unwrap(), lines(&good(2)));
}

/// `--authorization` is a sensitive flag (`author` alone is not).
#[test]
fn authorization_is_sensitive() {
    let meta = |args: &str| {
        lines(&[
            format!(
                r#"{{"type":"aoi:meta","aoi":{{"seq":0,"run":"R"}},{IDENTITY},"args":{args}}}"#
            ),
            ok_summary(1, 0),
        ])
    };
    assert!(
        verify(&[], &meta(r#"["--authorization","Bearer abc"]"#)).has_rule("meta.args-unredacted")
    );
    assert!(!verify(&[], &meta(r#"["--author","ann"]"#)).has_rule("meta.args-unredacted"));
}

/// A signal while aoitap is blocked writing to a reader that has stopped
/// reading ends it within the grace, with the signal's status: a signal
/// is never ignored (0.1.0 waited until the reader went away).
#[test]
fn a_signal_ends_a_write_blocked_on_a_stalled_reader() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let line = format!("{{\"type\":\"hit\",\"p\":\"{}\"}}\n", "x".repeat(200));
    std::fs::write(&big, line.repeat(20_000)).unwrap();
    // stdout is a pipe nobody reads: the relay blocks once it is full.
    let mut child = std::process::Command::new(bin())
        .args(["verify", "--relay", big.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "should be blocked");
    let sent = std::time::Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        assert!(
            sent.elapsed() < std::time::Duration::from_secs(10),
            "still running 10 s after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(code, Some(143));
}

/// An argument that is not UTF-8 is a usage error, never a panic (it was
/// exit 101 with a backtrace: the refusal read the arguments as UTF-8).
#[test]
fn an_argument_that_is_not_utf8_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"\xff");
    for args in [
        vec![
            std::ffi::OsStr::new("verify"),
            std::ffi::OsStr::new("--marker"),
            bad,
        ],
        vec![bad],
        vec![bad, std::ffi::OsStr::new("--help")],
    ] {
        let out = std::process::Command::new(crate::util::bin())
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(64),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Standard output redirected onto an input is refused (64), and the
/// refusal is not appended to the file it protects, in any format.
#[test]
fn a_refusal_is_not_written_into_the_input_it_protects() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    let text = lines(&good(2));
    std::fs::write(&path, &text).unwrap();
    for output in ["human", "jsonl", "tap"] {
        let out = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let status = std::process::Command::new(bin())
            .args(["verify", "--output", output])
            .arg(&path)
            .stdout(out)
            .stderr(std::process::Stdio::piped())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(64), "{output}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            text,
            "{output} wrote into its input"
        );
    }
}
