//! `--follow` (docs/contract.md §2.3): files followed by name, through rotation and
//! truncation, a quoted glob, stalled runs, Ctrl-C, `--from-end`, `--state`.

use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::*;

/// One event of run `run`.
fn line(run: &str, seq: u64, ty: &str, rest: &str) -> String {
    let sep = if rest.is_empty() { "" } else { "," };
    format!(r#"{{"type":"{ty}","aoi":{{"seq":{seq},"run":"{run}"}}{sep}{rest}}}"#)
}

/// A whole good run of `hits` hits.
fn whole_run(run: &str, hits: u64) -> String {
    let mut out = open_run(run, hits);
    let n = hits + 2;
    out.push_str(&line(
        run,
        hits + 1,
        "aoi:summary",
        &format!(r#""ok":true,"event_count":{n},"count":{hits},{IDENTITY}"#),
    ));
    out.push('\n');
    out
}

/// A run's meta and `hits` hits, no summary.
fn open_run(run: &str, hits: u64) -> String {
    let mut out = line(run, 0, "aoi:meta", &format!(r#"{IDENTITY},"command":"c""#)) + "\n";
    for seq in 1..=hits {
        out.push_str(&line(run, seq, "hit", &format!(r#""id":{seq}"#)));
        out.push('\n');
    }
    out
}

fn append(path: &Path, text: &str) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A follower and its stdout, line by line.
struct Follower {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Follower {
    fn start(args: &[&str]) -> Follower {
        let mut child = Command::new(bin())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Follower {
            child,
            lines,
            seen: vec![],
        }
    }

    /// Wait up to `within` for a line that `want` takes; panics with all
    /// that came otherwise.
    fn expect(&mut self, within: Duration, what: &str, want: impl Fn(&Value) -> bool) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let v: Value = serde_json::from_str(&l).unwrap();
                    self.seen.push(l);
                    if want(&v) {
                        return;
                    }
                }
                Err(_) => panic!("no {what} within {within:?}: {:#?}", self.seen),
            }
        }
    }

    /// SIGINT, then every line left and the exit status.
    fn interrupt(mut self) -> (i32, Vec<Value>, String) {
        let kill = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        self.seen.extend(self.lines.iter());
        let mut err = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut err).unwrap();
        let all = self
            .seen
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (code, all, err)
    }
}

fn run_event(run: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["type"] == "run" && v["run"] == run
}

/// The issue's walk through a followed glob: append, a new file, a
/// rotation, a truncation, a stalled run, then Ctrl-C.
#[test]
fn a_followed_glob_through_rotation_truncation_and_a_stall() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    fs::write(&a, "").unwrap();
    let glob = dir.path().join("*.jsonl");
    let mut f = Follower::start(&[
        "verify",
        "--follow",
        "--multi-run",
        "--run-idle-timeout",
        "1s",
        "--output",
        "jsonl",
        glob.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(300));
    let s = Duration::from_secs;
    // Appended to a followed file.
    append(&a, &whole_run("RA", 2));
    f.expect(s(2), "run RA", run_event("RA"));
    // A new file that matches.
    let b = dir.path().join("b.jsonl");
    append(&b, &whole_run("RB", 6));
    f.expect(s(3), "run RB", run_event("RB"));
    // Rotated: renamed away, created again.
    fs::rename(&a, dir.path().join("a.jsonl.1")).unwrap();
    append(&a, &whole_run("RC", 1));
    f.expect(s(3), "run RC", run_event("RC"));
    // Truncated in place (copytruncate), then written again: shorter than
    // what was read, so the cut is seen whenever it is looked at.
    OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&b)
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    append(&b, &whole_run("RD", 1));
    f.expect(s(3), "run RD", run_event("RD"));
    // A run that stops without its summary.
    append(&dir.path().join("e.jsonl"), &open_run("RE", 1));
    f.expect(s(3), "run.stalled for RE", |v| {
        v["rule"] == "run.stalled" && v["run"] == "RE"
    });
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    let last = all.last().unwrap();
    assert_eq!(last["type"], "aoi:summary");
    assert_eq!(last["reason"], "cancelled");
    // Every finished run judged once, and passing: no line lost or read
    // twice (either would be a seq finding).
    for run in ["RA", "RB", "RC", "RD"] {
        let verdicts: Vec<&Value> = all
            .iter()
            .filter(|v| v["type"] == "run" && v["run"] == run)
            .collect();
        assert_eq!(verdicts.len(), 1, "{run}: {all:#?}");
        assert_eq!(verdicts[0]["verdict"], "pass", "{run}: {all:#?}");
    }
    assert!(!all.iter().any(|v| v["type"] == "run" && v["run"] == "RE"));
    // ...and named as open, for a program as for a person.
    let open: Vec<&Value> = all.iter().filter(|v| v["type"] == "open_run").collect();
    assert_eq!(open.len(), 1, "{all:#?}");
    assert_eq!(open[0]["run"], "RE");
    assert_eq!(open[0]["lines"], 2);
    assert!(open[0]["file"].as_str().unwrap().ends_with("e.jsonl"));
    // The report, open_run and run.stalled included, holds to aoitap's
    // own schema.
    let schema = dir.path().join("aoitap.schema");
    fs::write(&schema, run(&["schema"], b"").stdout).unwrap();
    let report: String = all.iter().map(|v| format!("{v}\n")).collect();
    let out = run(
        &[
            "verify",
            "--output",
            "jsonl",
            "--schema",
            schema.to_str().unwrap(),
        ],
        report.as_bytes(),
    );
    let invalid: Vec<Value> = out
        .findings()
        .into_iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("event.schema"))
        .collect();
    assert!(invalid.is_empty(), "{invalid:#?}");
    let findings: Vec<&Value> = all.iter().filter(|v| v["type"] == "finding").collect();
    assert!(
        findings.iter().all(|v| v["rule"] == "run.stalled"),
        "{findings:#?}"
    );
    // Line numbers are each file's own.
    let stalled = findings.iter().find(|v| v["run"] == "RE").unwrap();
    assert!(stalled["file"].as_str().unwrap().ends_with("e.jsonl"));
    assert_eq!(stalled["line_number"], 2);
}

/// Ctrl-C names the runs still open (human report); a run with no summary
/// is never a pass.
#[test]
fn ctrl_c_names_the_open_runs() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    append(&log, &whole_run("R1", 1));
    append(&log, &open_run("R2", 2));
    let mut f = Follower::start(&["verify", "--follow", "--multi-run", log.to_str().unwrap()]);
    std::thread::sleep(Duration::from_millis(800));
    f.seen.clear();
    let kill = Command::new("kill")
        .args(["-INT", &f.child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(f.child.wait().unwrap().code(), Some(130));
    let out: Vec<String> = f.lines.iter().collect();
    let out = out.join("\n");
    assert!(out.contains("PASS: run R1"), "{out}");
    assert!(
        out.contains("cancelled: run R2 still open after 3 lines, not judged"),
        "{out}"
    );
    assert!(!out.contains("PASS: run R2"), "{out}");
}

/// `--from-end`: what was there is not reported, but the run under way is
/// judged whole when its summary comes.
#[test]
fn from_end_reports_only_what_comes_and_judges_runs_whole() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    append(&log, &whole_run("OLD", 1));
    // A run under way, and a line cut in the middle: both go on.
    let under_way = open_run("R", 2);
    append(&log, &under_way);
    let mut f = Follower::start(&[
        "verify",
        "--follow",
        "--from-end",
        "--multi-run",
        "--output",
        "jsonl",
        log.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(500));
    let summary = line(
        "R",
        3,
        "aoi:summary",
        &format!(r#""ok":true,"event_count":4,"count":2,{IDENTITY}"#),
    );
    let (head, tail) = summary.split_at(20);
    append(&log, head);
    std::thread::sleep(Duration::from_millis(400));
    append(&log, &format!("{tail}\n"));
    f.expect(Duration::from_secs(3), "run R", run_event("R"));
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    assert!(!all.iter().any(|v| v["run"] == "OLD"), "{all:#?}");
    let r: Vec<&Value> = all.iter().filter(|v| v["type"] == "run").collect();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["verdict"], "pass", "{all:#?}");
    assert!(!all.iter().any(|v| v["type"] == "finding"), "{all:#?}");
}

/// `--state FILE`: stopped and started again, a run open at the stop is
/// judged as if there had been none, and no line is reported twice.
#[test]
fn state_resumes_where_reading_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    // In a directory not there yet (~/.cache on a new machine): made.
    let state = dir.path().join("cache/aoitap/follow.state");
    append(&log, &whole_run("R1", 1));
    // R2's head, with a broken line reported before the stop.
    append(&log, &open_run("R2", 1));
    append(&log, "{broken\n");
    let args = [
        "verify",
        "--follow",
        "--multi-run",
        "--output",
        "jsonl",
        "--state",
        state.to_str().unwrap(),
        log.to_str().unwrap(),
    ];
    let mut f = Follower::start(&args);
    f.expect(Duration::from_secs(2), "run R1", run_event("R1"));
    f.expect(Duration::from_secs(2), "json.invalid", |v| {
        v["rule"] == "json.invalid"
    });
    let (code, _, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    assert!(state.exists());
    // While stopped, R2 goes on and ends.
    let mut rest = String::new();
    for seq in 2..=3 {
        rest.push_str(&line("R2", seq, "hit", r#""id":9"#));
        rest.push('\n');
    }
    rest.push_str(&line(
        "R2",
        4,
        "aoi:summary",
        &format!(r#""ok":true,"event_count":5,"count":3,{IDENTITY}"#),
    ));
    rest.push('\n');
    append(&log, &rest);
    let mut f = Follower::start(&args);
    f.expect(Duration::from_secs(3), "run R2", run_event("R2"));
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    // R1 was judged before the stop, the broken line reported then.
    assert!(!all.iter().any(|v| v["run"] == "R1"), "{all:#?}");
    assert!(!all.iter().any(|v| v["rule"] == "json.invalid"), "{all:#?}");
    // R2 judged whole: its head read before the stop, its tail after;
    // the broken line inside it still fails it.
    let r2: Vec<&Value> = all.iter().filter(|v| v["type"] == "run").collect();
    assert_eq!(r2.len(), 1, "{all:#?}");
    assert_eq!(r2[0]["run"], "R2");
    assert_eq!(r2[0]["lines"], 6, "{all:#?}");
}

/// `--state` through a rotation while aoitap was stopped: the rotated file,
/// found beside the name under its new name, is read on from where reading
/// stopped, then the new file from its start; the run that was open is
/// judged whole, and nothing is read twice.
#[test]
fn state_resumes_through_a_rotation_while_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    let state = dir.path().join("follow.state");
    append(&log, &whole_run("R1", 1));
    append(&log, &open_run("R2", 1));
    let args = [
        "verify",
        "--follow",
        "--multi-run",
        "--output",
        "jsonl",
        "--state",
        state.to_str().unwrap(),
        log.to_str().unwrap(),
    ];
    let mut f = Follower::start(&args);
    f.expect(Duration::from_secs(2), "run R1", run_event("R1"));
    let (code, _, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    // While stopped: R2 writes on, the log is rotated, R3 starts anew.
    let mut rest = line("R2", 2, "hit", r#""id":9"#) + "\n";
    rest += &line(
        "R2",
        3,
        "aoi:summary",
        &format!(r#""ok":true,"event_count":4,"count":2,{IDENTITY}"#),
    );
    rest.push('\n');
    append(&log, &rest);
    fs::rename(&log, dir.path().join("agent.log.1")).unwrap();
    append(&log, &whole_run("R3", 2));
    let mut f = Follower::start(&args);
    f.expect(Duration::from_secs(3), "run R2", run_event("R2"));
    f.expect(Duration::from_secs(3), "run R3", run_event("R3"));
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    let runs: Vec<&Value> = all.iter().filter(|v| v["type"] == "run").collect();
    assert_eq!(runs.len(), 2, "{all:#?}");
    assert_eq!(runs[0]["run"], "R2", "the old file first: {all:#?}");
    assert_eq!(runs[0]["verdict"], "pass", "{all:#?}");
    assert_eq!(runs[0]["lines"], 4, "{all:#?}");
    assert_eq!(runs[1]["run"], "R3");
    assert_eq!(runs[1]["verdict"], "pass", "{all:#?}");
    assert!(!all.iter().any(|v| v["type"] == "finding"), "{all:#?}");
}

/// logrotate's chain under a glob that matches every name of it
/// (`agent.log*`: agent.log -> .1 -> .2 -> .3, the oldest replaced): each
/// run judged once, under the name that first read it, whatever names its
/// file has after, and a file given a removed file's inode number is read.
#[test]
fn a_rotation_chain_under_one_glob_reads_each_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    let at = |k: u32| dir.path().join(format!("agent.log.{k}"));
    append(&log, &whole_run("R1", 1));
    let glob = dir.path().join("agent.log*");
    let args = [
        "verify",
        "--follow",
        "--multi-run",
        "--output",
        "jsonl",
        glob.to_str().unwrap(),
    ];
    let mut f = Follower::start(&args);
    f.expect(Duration::from_secs(2), "run R1", run_event("R1"));
    for run in ["R2", "R3", "R4", "R5"] {
        for k in (1..3).rev() {
            if at(k).exists() {
                fs::rename(at(k), at(k + 1)).unwrap();
            }
        }
        fs::rename(&log, at(1)).unwrap();
        append(&log, &whole_run(run, 1));
        let name = run.to_string();
        f.expect(Duration::from_secs(3), run, move |v| {
            v["type"] == "run" && v["run"] == name.as_str()
        });
    }
    // Past the drain, when the rotated names are taken up by the glob.
    std::thread::sleep(Duration::from_secs(7));
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    let runs: Vec<&Value> = all.iter().filter(|v| v["type"] == "run").collect();
    assert_eq!(runs.len(), 5, "{all:#?}");
    assert!(runs.iter().all(|v| v["verdict"] == "pass"), "{all:#?}");
    assert!(!all.iter().any(|v| v["type"] == "open_run"), "{all:#?}");
}

/// `--state` through a truncation while stopped, the file written again
/// past where reading stopped: read from its start, so a failing run in
/// what was written is judged, not passed over as read already.
#[test]
fn state_resumes_from_the_start_of_a_file_cut_while_stopped() {
    // The second set's first 64 bytes are alike (a long run id): only the
    // bytes before where reading stopped tell the file was cut.
    let long = "S-0123456789abcdef0123456789abcdef";
    let short = ["R1".to_string(), "RX".into(), "R2".into()];
    let alike = ["1", "X", "2"].map(|k| format!("{long}-{k}"));
    for [first, bad_run, last] in [short, alike] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("agent.log");
        let state = dir.path().join("follow.state");
        append(&log, &whole_run(&first, 1));
        let args = [
            "verify",
            "--follow",
            "--output",
            "jsonl",
            "--state",
            state.to_str().unwrap(),
            log.to_str().unwrap(),
        ];
        let mut f = Follower::start(&args);
        let name = first.clone();
        f.expect(Duration::from_secs(2), "the first run", move |v| {
            v["type"] == "run" && v["run"] == name.as_str()
        });
        // A look or two, so the state holds the file's first bytes.
        std::thread::sleep(Duration::from_millis(1500));
        let (code, _, err) = f.interrupt();
        assert_eq!(code, 130, "{err}");
        // Cut in place, then a longer run that fails (a gap in its seq).
        fs::write(&log, "").unwrap();
        let mut bad = open_run(&bad_run, 4).replace(r#""seq":2"#, r#""seq":3"#);
        bad.push_str(&whole_run(&last, 1));
        append(&log, &bad);
        let mut f = Follower::start(&args);
        let name = last.clone();
        f.expect(Duration::from_secs(3), "the last run", move |v| {
            v["type"] == "run" && v["run"] == name.as_str()
        });
        let (code, all, err) = f.interrupt();
        assert_eq!(code, 130, "{err}");
        assert!(all.iter().any(|v| v["rule"] == "seq.gap"), "{all:#?}");
    }
}

#[test]
fn follow_needs_names() {
    for args in [
        &["verify", "--follow"][..],
        &["verify", "--follow", "-"],
        &["summarize", "--follow"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.code, 64, "{args:?}");
        assert!(out.stderr.contains("tail -n +1 -F"), "{}", out.stderr);
    }
    // --state is verify's alone: the others neither offer nor take it.
    for command in ["summarize", "reconcile", "split-by-run"] {
        let out = run(&[command, "--follow", "--state", "s", "x.jsonl"], b"");
        assert_eq!(out.code, 64, "{command}");
        assert!(out.stderr.contains("--state"), "{}", out.stderr);
        let help = run(&[command, "--help"], b"");
        assert!(
            !help.stdout.contains("--state"),
            "{command}: {}",
            help.stdout
        );
    }
    // The state is renamed over FILE: a device or directory is refused,
    // never replaced (as root, /dev/null became a regular file).
    for state in ["/dev/null", "/tmp"] {
        let out = run(&["verify", "--follow", "--state", state, "x.jsonl"], b"");
        assert_eq!(out.code, 64, "{state}: {}", out.stderr);
        assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(
        fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

/// What aoitap writes is never followed: a report or state a glob matches
/// is refused, and a FIFO or device in a glob never blocks the others.
#[test]
fn what_aoitap_writes_and_what_is_no_file_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("b.jsonl");
    append(&log, &whole_run("R9", 1));
    let glob = dir.path().join("*.jsonl");
    let (g, l) = (glob.to_str().unwrap(), log.to_str().unwrap());
    for args in [
        &["verify", "--follow", "--report", l, g][..],
        &["verify", "--follow", "--state", l, l],
        &["verify", "--follow", "--state", l, g],
    ] {
        let out = run(args, b"");
        assert_eq!(out.code, 64, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("what aoitap writes"), "{}", out.stderr);
    }
    assert_eq!(fs::read_to_string(&log).unwrap(), whole_run("R9", 1));
    let fifo = dir.path().join("x.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let mut f = Follower::start(&["verify", "--follow", "--multi-run", "--output", "jsonl", g]);
    f.expect(Duration::from_secs(3), "run R9", run_event("R9"));
    let (code, _, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    // Named, a FIFO or a directory with no file is said once; so is a
    // state that cannot be written (under a regular file, no directory
    // can be made for it). Reading goes on. Without --multi-run too: a
    // followed log's runs are judged each as it ends.
    let empty = tempfile::tempdir().unwrap();
    let (x, d) = (fifo.to_str().unwrap(), empty.path().to_str().unwrap());
    let state = log.join("state.json");
    let s = state.to_str().unwrap();
    let args = [
        "verify", "--follow", "--output", "jsonl", "--state", s, l, x, d,
    ];
    let mut f = Follower::start(&args);
    f.expect(Duration::from_secs(3), "run R9", run_event("R9"));
    std::thread::sleep(Duration::from_millis(1500));
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    let said = |code: &str| {
        all.iter()
            .filter(|v| v["type"] == "aoi:error" && v["code"] == code)
            .count()
    };
    assert_eq!(said("NOT_A_FILE"), 2, "{all:#?}");
    assert_eq!(said("STATE_WRITE_FAILED"), 1, "{all:#?}");
}

/// logrotate's `create`: the producer writes on to the renamed file until
/// it opens the new one; those lines are read too, and the run is whole.
#[test]
fn lines_written_to_a_rotated_file_are_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    append(&log, &open_run("R1", 1));
    let mut f = Follower::start(&[
        "verify",
        "--follow",
        "--multi-run",
        "--output",
        "jsonl",
        log.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(600));
    let old = dir.path().join("agent.log.1");
    fs::rename(&log, &old).unwrap();
    append(&log, &whole_run("R2", 1));
    f.expect(Duration::from_secs(3), "run R2", run_event("R2"));
    let rest = format!(
        "{}\n{}\n",
        line("R1", 2, "hit", r#""id":2"#),
        line(
            "R1",
            3,
            "aoi:summary",
            &format!(r#""ok":true,"event_count":4,"count":2,{IDENTITY}"#)
        )
    );
    append(&old, &rest);
    f.expect(Duration::from_secs(3), "run R1", run_event("R1"));
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    for run in ["R1", "R2"] {
        let v: Vec<&Value> = all
            .iter()
            .filter(|v| v["type"] == "run" && v["run"] == run)
            .collect();
        assert_eq!(v.len(), 1, "{all:#?}");
        assert_eq!(v[0]["verdict"], "pass", "{all:#?}");
    }
}

/// A busy rotation: three producers write interleaved runs, and after
/// each rotation the next few lines still go to the old file while the
/// rest go to the new one. Every run's lines must be judged in the order
/// they were written, whichever file holds them: no false gap or repeat.
#[test]
fn a_busy_rotation_keeps_each_runs_lines_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.log");
    fs::write(&log, "").unwrap();
    let mut f = Follower::start(&[
        "verify",
        "--follow",
        "--multi-run",
        "--output",
        "jsonl",
        log.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(300));
    // A fixed pseudo-random interleaving (an LCG), so a failure repeats.
    let mut seed: u64 = 7;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let runs: Vec<Vec<String>> = (0..1000)
        .map(|i| {
            let text = whole_run(&format!("R{i:03}"), 1 + next(12));
            text.lines().map(|l| format!("{l}\n")).collect()
        })
        .collect();
    let mut file = OpenOptions::new().append(true).open(&log).unwrap();
    let mut old: Option<fs::File> = None;
    // Each producer's lines left to write to the old file (it has not
    // reopened the log yet), beside its lines.
    let mut active: Vec<(std::slice::Iter<String>, u64)> = vec![];
    let (mut started, mut since, mut generation, mut fresh) = (0, 0, 0, 0);
    let summaries = std::cell::Cell::new(0);
    let judged = std::cell::Cell::new(0);
    let count_runs = |v: &Value| {
        judged.set(judged.get() + usize::from(v["type"] == "run"));
        judged.get() == summaries.get()
    };
    while started < runs.len() || !active.is_empty() {
        while active.len() < 3 && started < runs.len() {
            active.push((runs[started].iter(), 0));
            started += 1;
        }
        let pick = next(active.len() as u64) as usize;
        let (lines, to_old) = &mut active[pick];
        let Some(l) = lines.next() else {
            drop(active.remove(pick));
            continue;
        };
        match old.as_mut() {
            Some(o) if *to_old > 0 => {
                o.write_all(l.as_bytes()).unwrap();
                *to_old -= 1;
            }
            _ => {
                file.write_all(l.as_bytes()).unwrap();
                fresh += usize::from(l.contains("aoi:summary"));
            }
        }
        summaries.set(summaries.get() + usize::from(l.contains("aoi:summary")));
        since += 1;
        if since >= 60 && fresh > 0 {
            // Every run ended so far judged, one in the new file, so the
            // follower has read it before it is rotated in turn (a file
            // rotated away unread is lost to a follower of one name, as to
            // `tail -F`).
            if judged.get() < summaries.get() {
                f.expect(Duration::from_secs(5), "the runs ended so far", count_runs);
            }
            (since, fresh) = (0, 0);
            generation += 1;
            fs::rename(&log, dir.path().join(format!("agent.log.{generation}"))).unwrap();
            old = Some(std::mem::replace(
                &mut file,
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .unwrap(),
            ));
            for (_, to_old) in &mut active {
                *to_old = next(4);
            }
        }
    }
    if judged.get() < runs.len() {
        f.expect(Duration::from_secs(8), "every run judged", count_runs);
    }
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    let findings: Vec<&Value> = all.iter().filter(|v| v["type"] == "finding").collect();
    assert!(findings.is_empty(), "{findings:#?}");
    let passed = all
        .iter()
        .filter(|v| v["type"] == "run" && v["verdict"] == "pass");
    assert_eq!(passed.count(), runs.len(), "{all:#?}");
}

/// copytruncate, then more bytes than were read before the follower
/// looks: the file is longer, not shorter, and is still read anew.
#[test]
fn a_file_cut_and_written_longer_at_once_is_read_anew() {
    // The second pair's first 64 bytes are alike (a long run id): only
    // what is before where reading got to tells the file was cut.
    let long = "S-0123456789abcdef0123456789abcdef";
    for (first, second) in [
        ("S1", "S2"),
        (&format!("{long}-1")[..], &format!("{long}-2")[..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("agent.log");
        append(&log, &whole_run(first, 1));
        let mut f = Follower::start(&[
            "verify",
            "--follow",
            "--multi-run",
            "--output",
            "jsonl",
            log.to_str().unwrap(),
        ]);
        let name = first.to_string();
        f.expect(Duration::from_secs(3), first, move |v| {
            v["type"] == "run" && v["run"] == name.as_str()
        });
        let longer = whole_run(second, 8);
        let mut file = OpenOptions::new().write(true).open(&log).unwrap();
        file.set_len(0).unwrap();
        file.write_all(longer.as_bytes()).unwrap();
        drop(file);
        let name = second.to_string();
        f.expect(Duration::from_secs(3), second, move |v| {
            v["type"] == "run" && v["run"] == name.as_str()
        });
        let (code, all, err) = f.interrupt();
        assert_eq!(code, 130, "{err}");
        let run = all
            .iter()
            .find(|v| v["type"] == "run" && v["run"] == second)
            .unwrap();
        assert_eq!(run["verdict"], "pass", "{all:#?}");
        assert!(!all.iter().any(|v| v["type"] == "finding"), "{all:#?}");
    }
}

/// A name not there yet is said within a second ("waiting for", an
/// `aoi:warning`) and read once it appears, as `tail -F` does; a glob
/// entry that cannot be opened (a symlink loop) is said as `verify` says
/// it without `--follow`, and a dangling link is waited for (docs/contract.md §3.4).
#[test]
fn what_is_missing_or_unopenable_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let later = dir.path().join("later.jsonl");
    let l = later.to_str().unwrap();
    let mut f = Follower::start(&["verify", "--follow", "--output", "jsonl", l]);
    f.expect(Duration::from_secs(3), "meta", |v| v["type"] == "aoi:meta");
    let started = Instant::now();
    f.expect(Duration::from_secs(1), "waiting", |v| {
        v["type"] == "aoi:warning"
            && v["code"] == "INPUT_WAITING"
            && v["message"].as_str().unwrap().contains("waiting for ")
    });
    assert!(started.elapsed() < Duration::from_secs(1));
    append(&later, &whole_run("R1", 2));
    f.expect(Duration::from_secs(3), "run R1", run_event("R1"));
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    let summary = all.last().unwrap();
    assert_eq!(summary["warning_count"], 1, "{summary}");
    let warned = all.iter().filter(|v| v["type"] == "aoi:warning").count();
    assert_eq!(warned, 1, "said once: {all:#?}");
    // The warning holds to aoitap's own schema.
    let schema = dir.path().join("aoitap.schema");
    fs::write(&schema, run(&["schema"], b"").stdout).unwrap();
    let report: String = all.iter().map(|v| format!("{v}\n")).collect();
    let s = schema.to_str().unwrap();
    let out = run(
        &["verify", "--output", "jsonl", "--schema", s],
        report.as_bytes(),
    );
    assert!(
        !out.rules().iter().any(|r| r.starts_with("event.schema")),
        "{}",
        out.stdout
    );

    let glob_dir = tempfile::tempdir().unwrap();
    let link = |from: &str, to: &str| {
        std::os::unix::fs::symlink(to, glob_dir.path().join(from)).unwrap();
    };
    link("a.jsonl", "b.jsonl");
    link("b.jsonl", "a.jsonl");
    link("gone.jsonl", "nowhere");
    append(&glob_dir.path().join("c.jsonl"), &whole_run("R2", 1));
    let glob = glob_dir.path().join("*.jsonl");
    let g = glob.to_str().unwrap();
    let mut f = Follower::start(&["verify", "--follow", "--output", "jsonl", g]);
    f.expect(Duration::from_secs(3), "run R2", run_event("R2"));
    std::thread::sleep(Duration::from_millis(300));
    let (code, all, err) = f.interrupt();
    assert_eq!(code, 130, "{err}");
    let said: Vec<_> = all
        .iter()
        .filter(|v| v["type"] == "aoi:error" || v["type"] == "aoi:warning")
        .map(|v| (v["code"].as_str().unwrap(), v["message"].as_str().unwrap()))
        .collect();
    let lo = |name: &str| {
        said.iter()
            .filter(|(code, m)| *code == "INPUT_UNREADABLE" && m.contains(name))
            .count()
    };
    assert_eq!(lo("a.jsonl"), 1, "{said:#?}");
    assert_eq!(lo("b.jsonl"), 1, "{said:#?}");
    assert!(
        said.iter().all(|(_, m)| !m.contains("c.jsonl")),
        "{said:#?}"
    );
    assert!(
        said.iter()
            .any(|(code, m)| *code == "INPUT_WAITING" && m.contains("gone.jsonl")),
        "{said:#?}"
    );
    // verify without --follow says the loop the same way.
    let once = run(
        &[
            "verify",
            "--output",
            "jsonl",
            glob_dir.path().join("a.jsonl").to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(once.code, 66);
    assert!(once.stdout.contains("INPUT_UNREADABLE"), "{}", once.stdout);
}
