//! A report survives `timeout` (docs/contract.md §3.4): GNU timeout signals its child
//! and then its own process group, so aoitap gets the signal twice at once.
//! The two are one request to stop, and the cancelled report is whole.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::util::bin;

/// How many times each command meets each signal in each format. The
/// double delivery is a race that a broken rule loses some of the time,
/// not each time: enough tries that a broken rule is met by many losses
/// (the commit that sized this has the rate with the rule broken).
const TRIES: usize = 5;

/// An open run: a meta line and one event, the stream still going.
const TWO: &str = concat!(
    r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"r1"},"spec":"aoi-cli/1.0-alpha","tool":{"name":"t","version":"1"}}"#,
    "\n",
    r#"{"type":"hit","aoi":{"seq":1,"run":"r1"}}"#,
    "\n",
);

struct Case {
    name: &'static str,
    /// The arguments before `--output`; `{two}` is the file holding TWO,
    /// `{dir}` a fresh directory.
    args: &'static [&'static str],
    /// Fed TWO on a pipe left open, or (false) given no stdin at all.
    stdin: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "verify",
        args: &["verify"],
        stdin: true,
    },
    Case {
        name: "summarize",
        args: &["summarize"],
        stdin: true,
    },
    Case {
        name: "reconcile",
        args: &["reconcile"],
        stdin: true,
    },
    Case {
        name: "split-by-run",
        args: &["split-by-run", "--dir", "{dir}"],
        stdin: true,
    },
    Case {
        name: "strip-envelope",
        args: &["strip-envelope"],
        stdin: true,
    },
    Case {
        name: "filter",
        args: &["filter", "."],
        stdin: true,
    },
    Case {
        name: "follow",
        args: &["verify", "--follow", "{two}"],
        stdin: false,
    },
    Case {
        name: "run",
        args: &[
            "run",
            "{output}",
            "--",
            "sh",
            "-c",
            "cat '{two}'; exec sleep 30",
        ],
        stdin: false,
    },
    Case {
        name: "lint",
        args: &[
            "lint",
            "{output}",
            "--",
            "sh",
            "-c",
            "cat '{two}'; exec sleep 30",
        ],
        stdin: false,
    },
];

/// One try: `timeout -s SIGNAL` on the case; whether the report was whole,
/// and what came out when it was not.
fn one(case: &Case, signal: &str, output: &str, two: &str, dir: &str) -> Result<(), String> {
    let mut args: Vec<String> = Vec::new();
    let mut placed = false;
    for a in case.args {
        if *a == "{output}" {
            args.extend(["--output".into(), output.into()]);
            placed = true;
        } else {
            args.push(a.replace("{two}", two).replace("{dir}", dir));
        }
    }
    if !placed {
        args.extend(["--output".into(), output.into()]);
    }
    let mut child = Command::new("timeout")
        .args(["--preserve-status", "-s", signal, "0.4"])
        .arg(bin())
        .args(&args)
        .stdin(if case.stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Held open until aoitap has ended: the stream is still going.
    let stdin = child.stdin.take().map(|mut s| {
        s.write_all(TWO.as_bytes()).unwrap();
        s
    });
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let want = match signal {
        "TERM" => 143,
        "HUP" => 129,
        _ => 130,
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let whole = match output {
        "human" => text
            .lines()
            .any(|l| l.starts_with("Result: ") && l.ends_with(&format!("exit {want})"))),
        _ => text.lines().any(|l| {
            serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| {
                v["type"] == "aoi:summary" && v["reason"] == "cancelled" && v["aoi"]["run"] != "r1"
            })
        }),
    };
    if out.status.code() == Some(want) && whole {
        Ok(())
    } else {
        Err(format!("status {:?}:\n{text}", out.status))
    }
}

#[test]
fn every_command_reports_whole_under_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.jsonl");
    std::fs::write(&two, TWO).unwrap();
    let two = two.to_str().unwrap().to_string();
    let mut jobs = Vec::new();
    for case in CASES {
        for signal in ["TERM", "INT", "HUP"] {
            for output in ["human", "jsonl"] {
                for _ in 0..TRIES {
                    jobs.push((case, signal, output));
                }
            }
        }
    }
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    // Each try mostly waits for its timer: a few at once on two cores.
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(case, signal, output)) = jobs.get(i) else {
                        break;
                    };
                    let split = tempfile::tempdir_in(dir.path()).unwrap();
                    let dir = split.path().join("out");
                    if let Err(e) = one(case, signal, output, &two, dir.to_str().unwrap()) {
                        failed
                            .lock()
                            .unwrap()
                            .push(format!("{} -s {signal} --output {output}: {e}", case.name));
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    assert!(
        failed.is_empty(),
        "{} of {} tries lost the report; the first:\n{}",
        failed.len(),
        jobs.len(),
        failed[0]
    );
}
