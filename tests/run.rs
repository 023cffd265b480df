//! `aoitap run -- CMD` (docs/contract.md §1.3) with fake producers
//! (`tests/fixtures/producers/*.sh`), and `--output tap`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::*;

fn producer(name: &str) -> String {
    fixture("producers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// `aoitap ARGS`, with no stdin.
fn aoitap(args: &[&str]) -> Out {
    run(args, b"")
}

/// `aoitap run OPTS --save /dev/null -- CMD...`: the report on stdout.
fn saved(opts: &[&str], cmd: &[&str]) -> Out {
    let mut args = vec!["run"];
    args.extend_from_slice(opts);
    args.extend_from_slice(&["--save", "/dev/null", "--"]);
    args.extend_from_slice(cmd);
    aoitap(&args)
}

/// The events of one type in a jsonl report.
fn of_type(out: &Out, ty: &str) -> Vec<serde_json::Value> {
    out.events()
        .into_iter()
        .filter(|e| e["type"] == ty)
        .collect()
}

/// A good stream and the same cut in the middle, as files in `dir`.
fn good_and_cut(dir: &std::path::Path) -> (String, String) {
    let stream = Command::new(producer("good.sh")).output().unwrap().stdout;
    let good = dir.join("good.jsonl");
    let cut = dir.join("cut.jsonl");
    std::fs::write(&good, &stream).unwrap();
    std::fs::write(&cut, &stream[..stream.len() / 2]).unwrap();
    let path = |p: std::path::PathBuf| p.to_str().unwrap().to_string();
    (path(good), path(cut))
}

/// `aoitap run OPTS --output jsonl --save /dev/null -- CMD...`, running,
/// to be signalled.
struct Live(std::process::Child);

impl Live {
    fn start(opts: &[&str], cmd: &[&str]) -> Live {
        let child = Command::new(bin())
            .arg("run")
            .args(opts)
            .args(["--output", "jsonl", "--save", "/dev/null", "--"])
            .args(cmd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Live(child)
    }

    fn sigint(&self) {
        self.signal(rustix::process::Signal::INT);
    }

    fn signal(&self, sig: rustix::process::Signal) {
        rustix::process::kill_process(rustix::process::Pid::from_child(&self.0), sig).unwrap();
    }

    /// Its exit status and its jsonl report.
    fn end(self) -> (Option<i32>, Vec<serde_json::Value>) {
        let out = self.0.wait_with_output().unwrap();
        let events = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (out.status.code(), events)
    }
}

/// Is a process whose command line holds `tag` still alive? (Read from
/// /proc, so the test needs no pgrep.)
fn alive(tag: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
            let line = String::from_utf8_lossy(&c).replace('\0', " ");
            line.contains(tag) && !line.contains("cargo") && !line.contains("integration")
        })
    })
}

#[test]
fn a_good_producer_is_relayed_byte_for_byte_and_passes() {
    let direct = Command::new(producer("good.sh")).output().unwrap();
    let out = aoitap(&["run", "--", &producer("good.sh")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.as_bytes(), &direct.stdout[..]);
    assert!(out.stderr.contains("PASS"), "{}", out.stderr);
    assert!(out.stderr.contains("exited 0"), "{}", out.stderr);
}

#[test]
fn exit_status_and_stream_must_agree() {
    // ok:false, exit 0: the producer lies about its failure.
    let quiet = aoitap(&["run", "-q", "--", &producer("failed.sh")]);
    assert_eq!(quiet.code, 65, "-q prints nothing; the status says it");
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty());
    let out = saved(&["--output", "jsonl"], &[&producer("failed.sh")]);
    assert_eq!(out.code, 65, "{}", out.stdout);
    assert_eq!(out.rules(), ["exit.disagrees"], "{}", out.stdout);
    let msg = out.findings()[0]["message"].as_str().unwrap().to_string();
    assert!(
        msg.contains("ok:false") && msg.contains("exited 0"),
        "{msg}"
    );

    // ok:true, exit 3.
    let out = saved(&["--output", "jsonl"], &[&producer("good.sh"), "3"]);
    assert_eq!(out.code, 65, "{}", out.stdout);
    assert_eq!(out.rules(), ["exit.disagrees"]);

    // ok:false and exit 1 agree: the producer's failure, 1.
    assert_eq!(saved(&[], &[&producer("failed.sh"), "1"]).code, 1);
}

#[test]
fn the_attempt_is_an_event_that_validates() {
    let out = saved(&["--output", "jsonl"], &[&producer("good.sh")]);
    let attempts = of_type(&out, "attempt");
    assert_eq!(attempts.len(), 1, "{}", out.stdout);
    assert_eq!(attempts[0]["exit_status"], 0);
    assert_eq!(attempts[0]["exit"], 0);
    let schema: serde_json::Value = serde_json::from_str(&aoitap(&["schema"]).stdout).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    for e in out.events() {
        assert!(v.is_valid(&e), "{e}");
    }
}

#[test]
fn a_signal_death_is_named() {
    let out = aoitap(&["run", "--", &producer("crash.sh")]);
    assert_eq!(out.code, 65, "{}", out.stderr);
    assert!(out.stderr.contains("killed by SIGSEGV"), "{}", out.stderr);
    assert!(out.stderr.contains("summary.missing"), "{}", out.stderr);
}

/// A tool run without the flag that makes it write its stream refuses
/// with a usage error and writes nothing: the headline is its exit, not
/// a cut it never had (docs/contract.md §1.3), and the status is still 65.
#[test]
fn a_command_that_ends_before_writing_is_named_by_its_exit() {
    let dir = tempfile::tempdir().unwrap();
    let tool = dir.path().join("tool.py");
    std::fs::write(
        &tool,
        "import sys\n\
         if '--output' not in sys.argv:\n    \
             sys.stderr.write('usage: tool search QUERY --output jsonl\\n')\n    \
             sys.exit(64)\n",
    )
    .unwrap();
    let tool = tool.to_str().unwrap();
    let out = aoitap(&["run", "--", "python3", tool, "search", "q"]);
    assert_eq!(out.code, 65, "{}", out.stderr);
    let headline = "the command exited 64, a usage error, before writing a stream";
    assert!(
        out.stderr
            .contains(&format!("error[summary.missing]: {headline}")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("NOT CONFORMING: run from line 1: {headline}")),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("cut off"), "{}", out.stderr);

    // The jsonl report says the same, in the finding and the verdict.
    let out = saved(&["--output", "jsonl"], &["python3", tool, "search", "q"]);
    assert_eq!(out.code, 65, "{}", out.stdout);
    assert_eq!(out.findings()[0]["message"], headline, "{}", out.stdout);
    assert_eq!(of_type(&out, "run")[0]["message"], headline);

    // Any other end before a line is named too, never taken for a cut.
    for (script, said) in [
        ("exit 2", "exited 2, a usage error, before writing a stream"),
        ("exit 3", "exited 3 before writing a stream"),
        (
            "aoitap-no-such-command",
            "exited 127, a command not found, before writing a stream",
        ),
        ("exit 0", "exited 0 without writing a stream"),
        (
            "kill -SEGV $$",
            "was killed by SIGSEGV before writing a stream",
        ),
    ] {
        let out = saved(&["--output", "jsonl"], &["sh", "-c", script]);
        assert_eq!(out.code, 65, "{script}: {}", out.stdout);
        let message = out.findings()[0]["message"].as_str().unwrap().to_string();
        assert_eq!(message, format!("the command {said}"), "{script}");
    }
    let afdata = saved(
        &["--protocol", "afdata", "--output", "jsonl"],
        &["sh", "-c", "exit 64"],
    );
    assert_eq!(
        afdata.rules(),
        ["afdata.terminal-missing"],
        "{}",
        afdata.stdout
    );
    assert_eq!(
        afdata.findings()[0]["message"],
        "the command exited 64, a usage error, before writing a stream"
    );
}

#[test]
fn retries_wait_for_the_producer_and_end_with_the_last_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let counter = count.to_str().unwrap();
    let flaky = producer("flaky.sh");
    let started = Instant::now();
    let retry = ["--backoff", "10ms", "--output", "jsonl", "--retries"];
    let out = saved(&[&retry[..], &["3"]].concat(), &[&flaky, "3", counter]);
    let took = started.elapsed();
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(std::fs::read_to_string(&count).unwrap().trim(), "3");
    assert!(took >= Duration::from_millis(800), "waited {took:?}");
    let attempts = of_type(&out, "attempt");
    assert_eq!(attempts.len(), 3);
    // Full jitter above the producer's 400 ms, never exactly it: up to
    // the backoff (10 ms, then 20) more (docs/contract.md §3.3).
    for (a, backoff) in attempts[..2].iter().zip([10, 20]) {
        assert_eq!(a["exit"], 75);
        let wait = a["retry_in_ms"].as_u64().unwrap();
        assert!(wait > 400 && wait <= 400 + backoff, "{a}");
    }
    // Each attempt is its own run in the report.
    let verdicts: Vec<_> = of_type(&out, "run")
        .iter()
        .map(|e| e["verdict"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(verdicts, ["retryable", "retryable", "pass"]);

    std::fs::remove_file(&count).unwrap();
    let out = saved(&[&retry[..], &["1"]].concat(), &[&flaky, "3", counter]);
    assert_eq!(out.code, 75, "{}", out.stdout);
    assert_eq!(std::fs::read_to_string(&count).unwrap().trim(), "2");
}

#[test]
fn a_producer_asking_for_more_than_max_wait_is_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let out = aoitap(&[
        "run",
        "--retries",
        "3",
        "--max-wait",
        "100ms",
        "--",
        &producer("flaky.sh"),
        "3",
        count.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 75);
    assert_eq!(std::fs::read_to_string(&count).unwrap().trim(), "1");
    assert!(out.stderr.contains("--max-wait"), "{}", out.stderr);
}

#[test]
fn a_timeout_kills_the_whole_group_and_is_retryable() {
    let tag = "1234.5";
    let started = Instant::now();
    let opts = [
        "--timeout",
        "500ms",
        "--kill-after",
        "1s",
        "--output",
        "jsonl",
    ];
    let out = saved(&opts, &[&producer("hang.sh"), tag]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.code, 75, "{}", out.stdout);
    assert_eq!(out.summary()["reason"], "timeout");
    assert!(!alive(&format!("sleep {tag}")), "the forked sleep survived");
}

#[test]
fn sigint_reaches_the_command_and_ends_cancelled() {
    let tag = "2345.5";
    let live = Live::start(&[], &[&producer("hang.sh"), tag]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(alive(&format!("sleep {tag}")), "the producer's sleep runs");
    live.sigint();
    let (code, events) = live.end();
    assert_eq!(code, Some(130));
    let last = events.last().unwrap();
    assert_eq!(last["type"], "aoi:summary");
    assert_eq!(last["reason"], "cancelled");
    std::thread::sleep(Duration::from_millis(100));
    assert!(!alive(&format!("sleep {tag}")), "the forked sleep survived");
}

#[test]
fn a_command_that_cannot_run_is_127_or_126() {
    let out = aoitap(&["run", "--", "/nonexistent/tool"]);
    assert_eq!(out.code, 127, "{}", out.stderr);
    assert!(out.stderr.contains("command not found"), "{}", out.stderr);
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("not-executable");
    std::fs::write(&plain, "echo hi\n").unwrap();
    let out = aoitap(&["run", "--", plain.to_str().unwrap()]);
    assert_eq!(out.code, 126, "{}", out.stderr);
    assert!(out.stderr.contains("permission denied"), "{}", out.stderr);
    // Usage: no command; a file where the command goes; a bad duration.
    assert_eq!(aoitap(&["run"]).code, 64);
    assert_eq!(aoitap(&["run", "x.jsonl", "--", "true"]).code, 64);
    assert_eq!(aoitap(&["run", "--timeout", "soon", "--", "true"]).code, 64);
}

#[test]
fn tap_is_one_point_per_run_with_yaml_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let (good, cut) = good_and_cut(dir.path());
    let out = aoitap(&["verify", "--output", "tap", &good, &cut]);
    assert_eq!(out.code, 65);
    let text = &out.stdout;
    assert!(text.starts_with("TAP version 13\n"), "{text}");
    assert!(text.contains("\nok 1 - "), "{text}");
    assert!(text.contains("\nnot ok 2 - "), "{text}");
    assert!(
        text.contains("  ---\n") && text.contains("    - rule: "),
        "{text}"
    );
    assert!(text.contains("\n1..2\n"), "{text}");
    assert!(
        !text.contains("# SKIP") && !text.contains("# TODO"),
        "{text}"
    );
    assert_eq!(
        text.matches("\nok ").count() + text.matches("\nnot ok ").count(),
        2
    );
}

#[test]
fn prove_reads_verify_tap_one_of_two_failed() {
    if !have_prove() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (good, cut) = good_and_cut(dir.path());
    let out = Command::new("prove")
        .arg("--exec")
        .arg(format!("{} verify --output tap", bin().display()))
        .args([&good, &cut])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(!text.contains("Parse errors"), "{text}");
    assert!(text.contains("cut.jsonl (Wstat"), "{text}");
    assert!(!text.contains("good.jsonl (Wstat"), "{text}");
    assert!(text.contains("Files=2, Tests=2"), "{text}");
}

#[test]
fn run_tap_has_a_point_per_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let opts = ["--retries", "2", "--backoff", "10ms", "--output", "tap"];
    let out = saved(
        &opts,
        &[&producer("flaky.sh"), "2", count.to_str().unwrap()],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    // The retried failure is a TODO: TAP consumers agree with exit 0.
    assert!(out.stdout.contains("\nnot ok 1 - "), "{}", out.stdout);
    assert!(out.stdout.contains(" # TODO retried\n"), "{}", out.stdout);
    assert!(out.stdout.contains("retry_after_ms: 400"), "{}", out.stdout);
    assert!(out.stdout.contains("\nok 2 - "), "{}", out.stdout);
    assert!(out.stdout.contains("\n1..2\n"), "{}", out.stdout);
}

#[test]
fn a_process_left_holding_stdout_does_not_hold_aoitap() {
    let tag = "3456.5";
    // (The sleep's stderr is not the test's pipe, which would wait for it.)
    let script = format!("{}; sleep {tag} 2>/dev/null & exit 0", producer("good.sh"));
    let started = Instant::now();
    let out = aoitap(&["run", "--kill-after", "300ms", "--", "sh", "-c", &script]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("held its stdout open"),
        "{}",
        out.stderr
    );
    // Not stopped by us: a daemon it started is its business.
    let _ = Command::new("pkill")
        .args(["-f", &format!("sleep {tag}")])
        .status();
}

#[test]
fn a_second_signal_kills_a_group_that_ignores_the_first() {
    let tag = "4567.5";
    let script = format!("trap '' INT TERM; {}; sleep {tag}", producer("good.sh"));
    let live = Live::start(&["--kill-after", "30s"], &["sh", "-c", &script]);
    std::thread::sleep(Duration::from_millis(400));
    live.sigint();
    // Within a second it would be the same request (docs/contract.md §3.4): GNU
    // timeout signals the child and then its group.
    std::thread::sleep(Duration::from_millis(1300));
    let started = Instant::now();
    live.sigint();
    let (code, events) = live.end();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(code, Some(130));
    assert_eq!(events.last().unwrap()["reason"], "cancelled", "{events:?}");
    assert!(!alive(&format!("sleep {tag}")), "the group survived");
}

#[test]
fn quiet_still_saves_and_a_zero_timeout_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let saved_to = dir.path().join("out.jsonl");
    let out = aoitap(&[
        "run",
        "-q",
        "--save",
        saved_to.to_str().unwrap(),
        "--",
        &producer("good.sh"),
    ]);
    assert_eq!(out.code, 0);
    let direct = Command::new(producer("good.sh")).output().unwrap().stdout;
    assert_eq!(std::fs::read(&saved_to).unwrap(), direct);
    assert_eq!(aoitap(&["run", "--timeout", "0", "--", "true"]).code, 64);
    let same = saved_to.to_str().unwrap();
    assert_eq!(
        aoitap(&["run", "--save", same, "--report", same, "--", "true"]).code,
        64
    );
}

#[test]
fn a_timed_out_attempt_is_a_tap_point_prove_can_read() {
    if !have_prove() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("timeout.t");
    std::fs::write(
        &t,
        format!(
            "#!/bin/sh\nexec '{}' run --timeout 300ms --output tap --save /dev/null -- '{}' 5678.5\n",
            bin().display(),
            producer("hang.sh")
        ),
    )
    .unwrap();
    let out = Command::new("prove").arg(&t).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("Parse errors"), "{text}");
    assert!(text.contains("Failed 1/1"), "{text}");
}

#[test]
fn a_run_complete_before_the_timeout_is_judged_not_left_open() {
    let script = format!("{}; sleep 6789.5 2>/dev/null", producer("good.sh"));
    let out = saved(
        &["--timeout", "300ms", "--output", "jsonl"],
        &["sh", "-c", &script],
    );
    assert_eq!(out.code, 75, "{}", out.stdout);
    let verdicts: Vec<_> = of_type(&out, "run")
        .iter()
        .map(|e| e["verdict"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(verdicts, ["pass"], "{}", out.stdout);
    assert_eq!(out.summary()["reason"], "timeout");
    assert!(!alive("sleep 6789.5"));
}

#[test]
fn a_failed_relay_write_still_ends_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.jsonl");
    let r = report.to_str().unwrap();
    let (code, err) = sh(&format!(
        "\"$A\" run --output jsonl --report '{r}' -- '{}' >/dev/full",
        producer("good.sh")
    ));
    assert_eq!(code, 74, "{err}");
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains(r#""code":"OUTPUT_FAILED""#), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains(r#""type":"aoi:summary""#),
        "{text}"
    );
    // Our own report, judged by ourselves: a whole run that failed.
    assert_eq!(aoitap(&["verify", "-q", r]).code, 1);
}

#[test]
fn a_signal_during_a_timeouts_grace_is_a_cancel_everywhere() {
    let script = format!("trap '' INT TERM; {}; sleep 7890.5", producer("good.sh"));
    let opts = ["--timeout", "200ms", "--kill-after", "1s"];
    let live = Live::start(&opts, &["sh", "-c", &script]);
    std::thread::sleep(Duration::from_millis(500));
    live.sigint();
    let (code, events) = live.end();
    assert_eq!(code, Some(130));
    let attempt = events.iter().find(|e| e["type"] == "attempt").unwrap();
    assert_eq!(attempt["exit"], 130, "{events:?}");
    assert_eq!(attempt["cancelled"], true, "{events:?}");
    assert_eq!(events.last().unwrap()["reason"], "cancelled", "{events:?}");
    assert!(!alive("sleep 7890.5"));
}

/// `prove T` on a `.t` file that is `#!/bin/sh` and `BODY`: (passed, output).
fn prove(dir: &std::path::Path, name: &str, body: &str) -> (bool, String) {
    use std::os::unix::fs::PermissionsExt;
    let t = dir.join(format!("{name}.t"));
    std::fs::write(&t, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new("prove").arg(&t).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn have_prove() -> bool {
    peer(installed("prove"), "prove")
}

/// `aoitap run --output tap -- CMD` as it stands in a `.t` file (docs/contract.md
/// §3.3): stdout is the TAP alone, so `prove` passes a passing CMD, fails
/// a failing one, and nothing CMD writes, on stdout or stderr, is a test
/// point.
#[test]
fn prove_reads_run_output_tap_as_it_stands() {
    if !have_prove() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = bin().display().to_string();
    let tap = |cmd: &str| format!("exec '{a}' run --output tap -- {cmd}");
    let good = producer("good.sh");
    let failed = producer("failed.sh");
    let (ok, text) = prove(dir.path(), "good", &tap(&format!("'{good}'")));
    assert!(ok, "{text}");
    assert!(text.contains("Result: PASS"), "{text}");
    let (ok, text) = prove(dir.path(), "failed", &tap(&format!("'{failed}' 1")));
    assert!(!ok, "{text}");
    assert!(!text.contains("Parse errors"), "{text}");
    // A failing CMD that writes a passing TAP to its stderr or stdout.
    let liar = format!("echo ok 1 >&2; echo 1..1 >&2; '{failed}' 1");
    let (ok, text) = prove(dir.path(), "stderr", &tap(&format!("sh -c \"{liar}\"")));
    assert!(!ok, "{text}");
    let (ok, text) = prove(dir.path(), "stdout", &tap("sh -c 'echo ok 1; echo 1..1'"));
    assert!(!ok, "{text}");
    // Its stdout is saved, as given, when asked.
    let saved_to = dir.path().join("out.jsonl");
    let s = saved_to.to_str().unwrap();
    let body = format!("exec '{a}' run --output tap --save '{s}' -- '{good}'");
    let (ok, text) = prove(dir.path(), "saved", &body);
    assert!(ok, "{text}");
    let direct = Command::new(&good).output().unwrap().stdout;
    assert_eq!(std::fs::read(&saved_to).unwrap(), direct);
}

#[test]
fn prove_reads_verify_output_tap_as_it_stands() {
    if !have_prove() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (good, cut) = good_and_cut(dir.path());
    let a = bin().display().to_string();
    let (ok, text) = prove(
        dir.path(),
        "good",
        &format!("exec '{a}' verify --output tap '{good}'"),
    );
    assert!(ok, "{text}");
    let (ok, text) = prove(
        dir.path(),
        "stdin",
        &format!("exec '{a}' verify --output tap < '{good}'"),
    );
    assert!(ok, "{text}");
    let (ok, text) = prove(
        dir.path(),
        "cut",
        &format!("exec '{a}' verify --output tap '{cut}'"),
    );
    assert!(!ok, "{text}");
    assert!(!text.contains("Parse errors"), "{text}");
}

/// Under `--output tap` a usage error is a bail out on stdout, with the
/// reason, and 64 (docs/contract.md §3.3); `prove` stops and says why.
#[test]
fn a_usage_error_under_tap_is_a_bail_out() {
    for args in [
        &["run", "--output", "tap", "--timeout", "soon", "--", "true"][..],
        &["run", "--output", "tap", "x.jsonl", "--", "true"],
        &["run", "--output=tap", "--no-such-flag", "--", "true"],
        &["verify", "--output", "tap", "--no-such-flag"],
        &["verify", "--output", "tap", "--first", "a"],
    ] {
        let out = aoitap(args);
        assert_eq!(out.code, 64, "{args:?}: {}", out.stderr);
        assert!(
            out.stdout.starts_with("Bail out! "),
            "{args:?}: {}",
            out.stdout
        );
        assert_eq!(out.stdout.lines().count(), 1, "{args:?}: {}", out.stdout);
    }
    // A run that cannot start bails out too, with its own status.
    let out = aoitap(&[
        "run",
        "--output",
        "tap",
        "--save",
        "/nonexistent/x",
        "--",
        "true",
    ]);
    assert_eq!(out.code, 73, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("Bail out! cannot create"),
        "{}",
        out.stdout
    );
    // Words after -- are CMD's: its --output tap is not aoitap's.
    let out = aoitap(&["run", "--timeout", "soon", "--", "tool", "--output", "tap"]);
    assert_eq!(out.code, 64);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    if !have_prove() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = bin().display().to_string();
    let body = format!("exec '{a}' run --output tap --timeout soon -- true");
    let (ok, text) = prove(dir.path(), "usage", &body);
    assert!(!ok, "{text}");
    assert!(
        text.contains("Bail out!") || text.contains("Bailout called"),
        "{text}"
    );
    assert!(text.contains("not a duration"), "{text}");
}

/// A timed-out run's jsonl report carries a local, retryable `aoi:error`
/// (category `timeout`), so `aoitap verify` of the report gives 75 again;
/// it names the upstream whose meta was read (docs/contract.md §3.3).
#[test]
fn a_timed_out_report_is_75_again_to_verify_and_names_its_upstream() {
    let opts = [
        "--timeout",
        "300ms",
        "--kill-after",
        "1s",
        "--output",
        "jsonl",
    ];
    let out = saved(&opts, &[&producer("hang.sh"), "8901.5"]);
    assert_eq!(out.code, 75, "{}", out.stdout);
    let errors = of_type(&out, "aoi:error");
    assert_eq!(errors.len(), 1, "{}", out.stdout);
    assert_eq!(errors[0]["category"], "timeout");
    assert_eq!(errors[0]["retryable"], true);
    assert_eq!(errors[0]["scope"], "process");
    let summary = out.summary();
    assert_eq!(summary["reason"], "timeout");
    assert_eq!(summary["upstream"]["tool"], "fake", "{summary}");
    let again = run(&["verify", "--output", "jsonl"], out.stdout.as_bytes());
    assert_eq!(again.code, 75, "{}", again.stdout);
    assert!(again.findings().is_empty(), "{}", again.stdout);

    // A timeout that was retried, and the retry passed: a pass, twice.
    let dir = tempfile::tempdir().unwrap();
    let once = dir.path().join("once");
    let script = format!(
        "if [ -e '{o}' ]; then exec '{}'; fi; touch '{o}'; exec '{}' 8902.5",
        producer("good.sh"),
        producer("hang.sh"),
        o = once.display()
    );
    let retry = [&opts[..], &["--retries", "1", "--backoff", "10ms"]].concat();
    let out = saved(&retry, &["sh", "-c", &script]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(of_type(&out, "aoi:error").is_empty(), "{}", out.stdout);
    let again = run(&["verify", "--output", "jsonl"], out.stdout.as_bytes());
    assert_eq!(again.code, 0, "{}", again.stdout);
}

#[test]
fn a_cancelled_report_names_its_upstream() {
    let live = Live::start(&[], &[&producer("hang.sh"), "9012.5"]);
    std::thread::sleep(Duration::from_millis(500));
    live.sigint();
    let (code, events) = live.end();
    assert_eq!(code, Some(130));
    let summary = events.last().unwrap();
    assert_eq!(summary["reason"], "cancelled", "{summary}");
    assert_eq!(summary["upstream"]["tool"], "fake", "{summary}");
    assert_eq!(summary["upstream"]["schema_name"], "com.example.fake");
}

/// `--save FILE` with `--retries` holds the final attempt's stream only,
/// one conforming stream; each earlier attempt is kept as FILE.attempt-N
/// (docs/contract.md §3.3). With `--redact` too.
#[test]
fn save_holds_the_final_attempt_and_keeps_the_others_beside_it() {
    for redact in [&[][..], &["--redact"]] {
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("count");
        let file = dir.path().join("out.jsonl");
        let f = file.to_str().unwrap();
        let retry = ["--retries", "2", "--backoff", "10ms", "--save", f];
        let opts = [&retry[..], redact].concat();
        let flaky = producer("flaky.sh");
        let cmd = ["--", &flaky, "3", count.to_str().unwrap()];
        let out = aoitap(&[&["run"][..], &opts, &cmd].concat());
        assert_eq!(out.code, 0, "{redact:?}: {}", out.stderr);
        let verdict = |path: &str| aoitap(&["verify", "--output", "jsonl", path]);
        let last = verdict(f);
        assert_eq!(last.code, 0, "{redact:?}: {}", last.stdout);
        let runs: Vec<_> = of_type(&last, "run")
            .iter()
            .map(|r| r["run"].clone())
            .collect();
        assert_eq!(runs, ["A3"], "{redact:?}");
        for n in 1..=2 {
            let kept = format!("{f}.attempt-{n}");
            let before = verdict(&kept);
            assert_eq!(before.code, 75, "{redact:?} {kept}: {}", before.stdout);
            assert_eq!(of_type(&before, "run")[0]["run"], format!("A{n}"));
        }
        assert!(!std::path::Path::new(&format!("{f}.attempt-3")).exists());
    }
}

/// Relayed to stdout, `--retries` holds each attempt until no retry
/// follows: stdout is the final attempt's stream alone, so it verifies as
/// that attempt did; `--live` relays every attempt as it comes (docs/contract.md §3.4).
/// With `--redact` too, and when the retry is cut by a signal in its wait.
#[test]
fn stdout_carries_the_final_attempt_unless_live() {
    let runs_in = |stdout: &str| -> Vec<String> {
        let again = run(
            &["verify", "--multi-run", "--output", "jsonl"],
            stdout.as_bytes(),
        );
        of_type(&again, "run")
            .iter()
            .map(|r| r["run"].as_str().unwrap().to_string())
            .collect()
    };
    for extra in [&[][..], &["--redact"], &["--live"], &["--live", "--redact"]] {
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("count");
        let flaky = producer("flaky.sh");
        let retry = ["run", "--retries", "2", "--backoff", "10ms"];
        let cmd = ["--", &flaky, "2", count.to_str().unwrap()];
        let out = aoitap(&[&retry[..], extra, &cmd].concat());
        assert_eq!(out.code, 0, "{extra:?}: {}", out.stderr);
        if extra.contains(&"--live") {
            assert_eq!(runs_in(&out.stdout), ["A1", "A2"], "{extra:?}");
        } else {
            let again = run(&["verify", "--output", "jsonl"], out.stdout.as_bytes());
            assert_eq!(again.code, 0, "{extra:?}: {}", again.stdout);
            assert_eq!(runs_in(&out.stdout), ["A2"], "{extra:?}");
        }
    }
    // A signal in the wait before the retry: the attempt that ran last is
    // the final one, and stdout carries it.
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let script = format!(
        "'{}' run --retries 2 --backoff 10ms -- '{}' 3 '{}' > '{}' & sleep 0.25; kill -INT $!; wait $!",
        bin().display(),
        producer("flaky.sh"),
        count.display(),
        dir.path().join("out").display(),
    );
    let (code, stderr) = sh(&script);
    assert_eq!(code, 130, "{stderr}");
    let kept = std::fs::read_to_string(dir.path().join("out")).unwrap();
    assert_eq!(runs_in(&kept), ["A1"], "{stderr}");
}

/// SIGHUP (a closed terminal) is handled as SIGTERM (docs/contract.md §3.3): CMD's
/// group is stopped, the cancelled report is written, and the exit is 129.
#[test]
fn sighup_stops_the_command_and_ends_cancelled_with_129() {
    let tag = "9123.5";
    let live = Live::start(&[], &[&producer("hang.sh"), tag]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(alive(&format!("sleep {tag}")), "the producer's sleep runs");
    live.signal(rustix::process::Signal::HUP);
    let (code, events) = live.end();
    assert_eq!(code, Some(129), "{events:?}");
    let attempt = events.iter().find(|e| e["type"] == "attempt").unwrap();
    assert_eq!(attempt["cancelled"], true, "{attempt}");
    assert_eq!(attempt["exit"], 129, "{attempt}");
    let summary = events.last().unwrap();
    assert_eq!(summary["type"], "aoi:summary");
    assert_eq!(summary["reason"], "cancelled", "{summary}");
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !alive(&format!("sleep {tag}")),
        "the command's group survived"
    );
}

/// An aiocs one-shot command (docs/contract.md §6.2) under `run`: its envelope, even
/// pretty-printed, and its exit status must agree (the spec's "exit with
/// status 1" on failure).
#[test]
fn an_aiocs_envelope_and_its_exit_must_agree() {
    let failed = r#"printf '{\n  "ok": false,\n  "command": "show",\n  "error": {"code": "X", "message": "m"}\n}\n'"#;
    let ok = r#"printf '{"ok":true,"command":"search","data":{}}\n'"#;
    for (script, want, rules) in [
        (format!("{failed}; exit 1"), 1, vec![]),
        (format!("{ok}; exit 0"), 0, vec![]),
        (format!("{ok}; exit 1"), 65, vec!["exit.disagrees"]),
        (format!("{failed}; exit 0"), 65, vec!["exit.disagrees"]),
    ] {
        let out = saved(&["--output", "jsonl"], &["sh", "-c", &script]);
        assert_eq!(out.code, want, "{script}: {}", out.stdout);
        assert_eq!(out.rules(), rules, "{script}: {}", out.stdout);
    }
}

/// An OKF command under `run --protocol okf` (docs/contract.md §6.2): one JSON
/// document on stdout, and on failure the error envelope on stderr, its
/// `kind` and `exitCode` true to the real status. Every `okf.*` rule
/// fires here.
#[test]
fn an_okf_commands_error_envelope_must_tell_the_truth() {
    // The spec's own example, and what it says of a usage failure.
    let envelope = |kind: &str, code: &str, extra: &str| {
        format!(
            r#"{{"schemaVersion":"1","error":{{"kind":"{kind}","command":"search","exitCode":{code},"message":"search requires a key or path and a query","truncated":false{extra}}}}}"#
        )
    };
    let fail = |doc: &str, status: i32| format!("printf '%s\\n' '{doc}' >&2; exit {status}");
    let pretty = r#"printf '{\n  "schemaVersion": "1",\n  "results": []\n}\n'"#;
    let cases: Vec<(String, i32, Vec<&str>)> = vec![
        // Success with one document, compact or pretty-printed.
        (
            r#"echo '{"schemaVersion":"1","results":[]}'"#.into(),
            0,
            vec![],
        ),
        (pretty.into(), 0, vec![]),
        // A usage failure reported truly is the command's failure.
        (fail(&envelope("usage", "2", ""), 2), 1, vec![]),
        (fail(&envelope("runtime", "4", ""), 4), 1, vec![]),
        // What contradicts the real exit status.
        (
            fail(&envelope("usage", "2", ""), 3),
            65,
            vec!["okf.kind-disagrees", "okf.exit-disagrees"],
        ),
        (
            fail(&envelope("runtime", "2", ""), 2),
            65,
            vec!["okf.kind-disagrees"],
        ),
        (
            fail(&envelope("runtime", "1", ""), 4),
            65,
            vec!["okf.exit-disagrees"],
        ),
        (
            format!(
                r#"echo '{{}}'; printf '%s\n' '{}' >&2; exit 0"#,
                envelope("runtime", "1", "")
            ),
            65,
            vec!["okf.exit-disagrees"],
        ),
        // The envelope's shape (a closed schema).
        (
            fail(&envelope("runtime", "1", r#","hint":"x""#), 1),
            65,
            vec!["okf.error-invalid"],
        ),
        (
            fail(&envelope("runtime", r#""1""#, ""), 1),
            65,
            vec!["okf.error-invalid"],
        ),
        (
            fail(r#"{"schemaVersion":"1","error":{"kind":"runtime"}"#, 1),
            65,
            vec!["okf.error-invalid"],
        ),
        (
            "echo 'Error: no such bundle' >&2; exit 1".into(),
            65,
            vec!["okf.error-missing"],
        ),
        ("exit 1".into(), 65, vec!["okf.error-missing"]),
        (
            "head -c 300000 /dev/zero | tr '\\0' x >&2; exit 1".into(),
            65,
            vec!["okf.error-too-large"],
        ),
        // stdout: one document, whole.
        ("exit 0".into(), 65, vec!["okf.document-missing"]),
        (
            "echo '{}'; echo '{}'".into(),
            65,
            vec!["okf.document-extra"],
        ),
        (
            r#"printf '{\n  "a": 1\n'"#.into(),
            65,
            vec!["okf.document-cut"],
        ),
    ];
    let mut fired = std::collections::BTreeSet::new();
    for (script, want, rules) in &cases {
        let out = saved(
            &["--protocol", "okf", "--output", "jsonl"],
            &["sh", "-c", script],
        );
        assert_eq!(out.code, *want, "{script}: {}", out.stdout);
        assert_eq!(out.rules(), *rules, "{script}: {}", out.stdout);
        fired.extend(out.rules());
    }
    for rule in aoitap::check::rules::Rule::ALL {
        if rule.id().starts_with("okf.") {
            assert!(fired.contains(rule.id()), "no case fires {}", rule.id());
        }
    }
    // The envelope is still passed on: a person at a terminal reads it.
    let out = saved(
        &["--protocol", "okf"],
        &["sh", "-c", &fail(&envelope("usage", "2", ""), 2)],
    );
    assert!(out.stderr.contains(r#""kind":"usage""#), "{}", out.stderr);
    assert!(
        out.stdout.contains("(search)"),
        "the run is named by its command: {}",
        out.stdout
    );
    // Only run sees a command's stderr.
    let out = aoitap(&["verify", "--protocol", "okf"]);
    assert_eq!(out.code, 64, "{}", out.stderr);
    assert!(out.stderr.contains("invalid value 'okf'"), "{}", out.stderr);
}

/// CMD given without `--` before it is a usage error that says the fix
/// (docs/contract.md §3.4), for run and for lint alike.
#[test]
fn cmd_without_the_double_dash_says_to_put_it_there() {
    for args in [
        &["run", "ls"][..],
        &["lint", "python3", "x.py"],
        &["run", "-q", "ls", "-l"],
    ] {
        let out = aoitap(args);
        assert_eq!(out.code, 64, "{args:?}");
        assert!(
            out.stderr.contains("tip: put `--` before CMD"),
            "{args:?}: {}",
            out.stderr
        );
    }
}

/// A tool that writes events until INT or TERM, then its cancelled
/// summary, as the spec asks of a conforming one.
const CANCELLING_TOOL: &str = r#"
        n=1 stop=0
        echo '{"type":"aoi:meta","aoi":{"seq":0,"run":"r1"},"spec":"aoi-cli/1.0-alpha","tool":{"name":"t","version":"1"}}'
        trap 'stop=1' INT TERM
        while [ $stop = 0 ]; do
            echo "{\"type\":\"tick\",\"aoi\":{\"seq\":$n,\"run\":\"r1\"}}"
            n=$((n + 1))
            sleep 0.02
        done
        echo "{\"type\":\"aoi:summary\",\"aoi\":{\"seq\":$n,\"run\":\"r1\"},\"ok\":false,\"reason\":\"cancelled\",\"event_count\":$((n + 1))}"
        exit 130
    "#;

/// A signal to aoitap reaches CMD while its stdout is still read: a tool
/// that ends its stream on it (a cancelled summary, as the spec asks) is
/// relayed and judged whole (failed, reason cancelled), and never meets a
/// closed pipe (docs/contract.md §1.3, §3.4). Before, aoitap stopped
/// reading first: the tool died of a broken pipe and its run was "still
/// open, not judged".
#[test]
fn a_tool_that_ends_its_stream_on_a_signal_is_heard_whole() {
    let tool = CANCELLING_TOOL;
    for k in 0..10 {
        let (sig, status) = if k % 2 == 0 {
            ("INT", 130)
        } else {
            ("TERM", 143)
        };
        let child = Command::new(bin())
            .args(["run", "--", "sh", "-c", tool])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let kill = Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(status), "{sig}: {stderr}");
        let last = stdout.lines().last().unwrap_or_default();
        assert!(last.contains(r#""reason":"cancelled""#), "{sig}: {last}");
        assert!(
            stderr.contains("the producer reported failure (reason: cancelled)"),
            "{sig}: {stderr}"
        );
        assert!(!stderr.contains("still open"), "{sig}: {stderr}");
        assert!(
            !stderr.to_lowercase().contains("broken pipe"),
            "{sig}: {stderr}"
        );
    }
}

/// Ctrl-C at a terminal reaches aoitap (CMD runs in a group of its own,
/// away from the terminal's): the tool still gets it, answers with its
/// cancelled summary, and that summary is relayed and judged, 20 of 20
/// times (docs/contract.md §1.3). A pty, driven from Python's `pty`:
/// Ctrl-C once the first tick is relayed, so the tool's trap is set and
/// aoitap is reading it.
#[test]
fn ctrl_c_at_a_terminal_is_heard_whole() {
    let driver = r#"
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
deadline = time.monotonic() + 10
while b'"tick"' not in out:
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        break
    try:
        out += os.read(fd, 65536)
    except OSError:
        break
os.write(fd, b"\x03")
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
sys.stdout.write("\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
"#;
    for k in 0..20 {
        let out = Command::new(python())
            .args(["-c", driver])
            .arg(bin())
            .args(["run", "--", "sh", "-c", CANCELLING_TOOL])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("EXIT 130"), "try {k}: {text}");
        assert!(text.contains(r#""reason":"cancelled""#), "try {k}: {text}");
        assert!(
            text.contains("the producer reported failure (reason: cancelled)"),
            "try {k}: {text}"
        );
        assert!(!text.contains("still open"), "try {k}: {text}");
        assert!(
            !text.to_lowercase().contains("broken pipe"),
            "try {k}: {text}"
        );
    }
}
