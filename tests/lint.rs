//! `aoitap lint -- CMD [ARG ...]` (DESIGN §15): a fake producer and its
//! faults (tests/fixtures/lint/producer.py; a fault is chosen by a link
//! named `fake-FAULT`), run through the command as a user runs it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

/// A link named `fake-FAULT` to the producer, in `dir`.
fn tool(dir: &Path, fault: &str) -> PathBuf {
    let producer = fixture("lint/producer.py");
    let link = dir.join(format!("fake-{fault}"));
    std::os::unix::fs::symlink(producer, &link).unwrap();
    link
}

fn lint(extra: &[&str], tool: &Path) -> Out {
    let t = tool.to_str().unwrap();
    let args = [
        &["lint"],
        extra,
        &["--", t, "search", "q", "--output", "jsonl"],
    ]
    .concat();
    run(&args, b"")
}

/// Each aoi:check event of a jsonl report: (name, result, §18.2 number).
fn checks(out: &Out) -> Vec<(String, String, u64)> {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "aoi:check")
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["properties"]["result"].as_str().unwrap().to_string(),
                v["properties"]["check"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_conforming_producer_passes_and_its_report_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let good = tool(dir.path(), "good");
    let out = lint(&["--output", "jsonl"], &good);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let got = checks(&out);
    assert_eq!(got.len(), 16);
    assert!(
        got.iter().all(|(_, r, _)| r == "pass" || r == "skipped"),
        "{got:?}"
    );
    // lint's own stream is a conforming AOI stream.
    assert_eq!(run(&["verify", "-q"], out.stdout.as_bytes()).code, 0);
}

#[test]
fn each_fault_fails_its_check_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    for (fault, number) in [
        ("banner", 2),
        ("seq-gap", 15),
        ("token-echo", 9),
        ("no-cancel", 10),
    ] {
        let out = lint(&["--output", "jsonl"], &tool(dir.path(), fault));
        assert_eq!(out.code, 1, "{fault}: {}", out.stdout);
        let failed: Vec<u64> = checks(&out)
            .into_iter()
            .filter(|(_, r, _)| r == "fail")
            .map(|(_, _, n)| n)
            .collect();
        assert_eq!(failed, [number], "{fault}");
        // A failing report is still a conforming stream: verify says 1.
        assert_eq!(
            run(&["verify", "-q"], out.stdout.as_bytes()).code,
            1,
            "{fault}"
        );
    }
}

#[test]
fn checks_are_chosen_by_id_and_an_unknown_one_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let banner = tool(dir.path(), "banner");
    let only = lint(
        &[
            "--output",
            "jsonl",
            "--checks",
            "lint.14-one-meta-one-summary",
        ],
        &banner,
    );
    assert_eq!(only.code, 0, "{}", only.stdout);
    assert_eq!(checks(&only).len(), 1);
    let without = lint(&["--exclude-checks", "lint.02-stdout-jsonl"], &banner);
    assert_eq!(without.code, 0, "{}", without.stdout);
    assert_eq!(lint(&["--checks", "lint.99-nothing"], &banner).code, 64);
}

#[test]
fn expected_failures_are_reported_and_a_stale_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let known = dir.path().join("known.txt");
    std::fs::write(&known, "# known\nlint.02-stdout-jsonl\n").unwrap();
    let k = known.to_str().unwrap();
    let banner = lint(
        &["--output", "jsonl", "--expected-failures", k],
        &tool(dir.path(), "banner"),
    );
    assert_eq!(banner.code, 0, "{}", banner.stdout);
    assert!(
        checks(&banner)
            .iter()
            .any(|(n, r, _)| n == "lint.02-stdout-jsonl" && r == "expected-failure")
    );
    let good = lint(
        &["--output", "jsonl", "--expected-failures", k],
        &tool(dir.path(), "good"),
    );
    assert_eq!(good.code, 1, "{}", good.stdout);
    assert!(
        checks(&good)
            .iter()
            .any(|(n, r, _)| n == "lint.02-stdout-jsonl" && r == "stale")
    );
}

/// No call outlives lint: its process groups are killed whole.
#[test]
fn no_call_is_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let t = tool(dir.path(), "good");
    let out = lint(&["-q"], &t);
    assert_eq!(out.code, 0);
    let needle = t.to_str().unwrap().to_string();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&needle))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_tap_report_is_read_by_prove() {
    if Command::new("prove").arg("--version").output().is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = lint(&["--output", "tap"], &tool(dir.path(), "good"));
    let t = dir.path().join("lint.t");
    std::fs::write(&t, out.stdout.as_bytes()).unwrap();
    let prove = Command::new("prove")
        .args(["-e", "cat"])
        .arg(&t)
        .output()
        .unwrap();
    assert!(
        prove.status.success(),
        "{}",
        String::from_utf8_lossy(&prove.stdout)
    );
}

#[test]
fn aoitap_lints_itself() {
    let file = fixture("streams/ok-complete.jsonl");
    let out = run(
        &[
            "lint",
            "--",
            bin().to_str().unwrap(),
            "verify",
            "--output",
            "jsonl",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
}
