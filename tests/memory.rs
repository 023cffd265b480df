//! Memory stays bounded by --max-line-bytes whatever the input (DESIGN §7).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::util::*;

/// Feed `total` bytes of one line (no newline until the end) and return
/// the findings and the peak RSS in KiB, measured by /usr/bin/time.
fn feed_one_line(total: usize, args: &[&str]) -> (String, u64) {
    feed_long_lines(1, total, &[&["verify", "--output", "jsonl"], args].concat())
}

/// `count` lines of `total` bytes each, in a run, to `aoitap args`.
fn feed_long_lines(count: u64, total: usize, args: &[&str]) -> (String, u64) {
    let mut child = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("peak-kib %M")
        .arg(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("/usr/bin/time (Debian package `time`) runs aoitap");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        stdin.write_all(&lines(&[meta()])).unwrap();
        let block = vec![b'x'; 1 << 20];
        for seq in 1..=count {
            let head = format!(r#"{{"type":"hit","aoi":{{"seq":{seq},"run":"R"}},"blob":""#);
            stdin.write_all(head.as_bytes()).unwrap();
            let mut left = total;
            while left > 0 {
                let n = left.min(block.len());
                stdin.write_all(&block[..n]).unwrap();
                left -= n;
            }
            stdin.write_all(b"\"}\n").unwrap();
        }
        stdin
            .write_all(&lines(&[ok_summary(count + 1, count)]))
            .unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-kib "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stderr}"));
    (String::from_utf8_lossy(&out.stdout).into_owned(), peak)
}

#[test]
fn a_200_mib_line_is_a_finding_not_an_allocation() {
    let (out, peak_kib) = feed_one_line(200 << 20, &[]);
    eprintln!("200 MiB line, default cap: peak RSS {peak_kib} KiB");
    assert!(out.contains(r#""rule":"line.too-long""#), "{out}");
    // The documented bound (README, Performance): about twice the 64 MiB
    // default cap, reached while the buffer grows to the cap (a realloc
    // holds the old and the new block); never the 200 MiB of the line.
    assert!(
        peak_kib < 2 * 64 * 1024 + 16 * 1024,
        "peak RSS {peak_kib} KiB for a 200 MiB line"
    );
    let (out, peak_kib) = feed_one_line(200 << 20, &["--max-line-bytes", "1MiB"]);
    eprintln!("200 MiB line, 1 MiB cap: peak RSS {peak_kib} KiB");
    assert!(out.contains(r#""rule":"line.too-long""#), "{out}");
    assert!(
        peak_kib < 16 * 1024,
        "peak RSS {peak_kib} KiB with a 1 MiB cap"
    );
}

/// An accepted long line costs its own bytes and little more: the buffer
/// is zeroed only as far as the next read, not to its doubled room ahead
/// (which held up to twice the line in pages).
#[test]
fn an_accepted_100_mib_line_costs_about_its_bytes() {
    let (out, peak_kib) = feed_one_line(100 << 20, &["--max-line-bytes", "256MiB"]);
    eprintln!("100 MiB line, 256 MiB cap: peak RSS {peak_kib} KiB");
    assert!(!out.contains(r#""rule":"line.too-long""#), "{out}");
    assert!(
        peak_kib < 100 * 1024 + 32 * 1024,
        "peak RSS {peak_kib} KiB for a 100 MiB line"
    );
}

/// Long lines in a row cost about twice one of them (the one being read
/// and the one being judged), not one per batch in the pipeline's pool:
/// each batch used to keep the buffer it grew (these six peaked at 173 MB;
/// now 53 MB).
#[test]
fn long_lines_in_a_row_cost_about_two_of_them() {
    let (out, peak_kib) = feed_long_lines(6, 40 << 20, &["verify", "--output", "jsonl"]);
    eprintln!("six 40 MiB lines: peak RSS {peak_kib} KiB");
    assert!(!out.contains(r#""rule":"line.too-long""#), "{out}");
    assert!(
        peak_kib < 2 * 40 * 1024 + 32 * 1024,
        "peak RSS {peak_kib} KiB for 40 MiB lines"
    );
    // strip-envelope writes each line in pieces, with no copy of its own
    // (it copied each line whole: three 64 MiB lines peaked at 203 MB).
    let (out, peak_kib) = feed_long_lines(6, 40 << 20, &["strip-envelope", "--redact"]);
    eprintln!("six 40 MiB lines, strip-envelope: peak RSS {peak_kib} KiB");
    assert_eq!(out.lines().count(), 6);
    assert!(
        peak_kib < 2 * 40 * 1024 + 32 * 1024,
        "strip-envelope: peak RSS {peak_kib} KiB for 40 MiB lines"
    );
}

/// How many runs `cmd`'s jsonl output reports, one event each.
fn runs_reported(cmd: &str, out: &str) -> usize {
    let per_run = if cmd == "summarize" {
        "run_summary"
    } else {
        "run"
    };
    out.lines()
        .filter(|l| l.contains(&format!(r#""type":"{per_run}""#)))
        .count()
}

/// How many runs `args` reported, in whatever form it writes them.
fn runs_in(args: &[&str], out: &str) -> usize {
    match args {
        [_, "--output", "json"] => {
            let doc: serde_json::Value = serde_json::from_str(out).expect("one JSON document");
            doc["runs"].as_array().map_or(0, Vec::len)
        }
        [_, "--output", "jsonl", ..] => runs_reported(args[0], out),
        _ => out.lines().filter(|l| l.starts_with("run run-")).count(),
    }
}

/// Finished runs are let go in every output: `summarize --output json`
/// writes each run's object as it is judged (it held them all to the end,
/// about 6 KB a run: 100,000 runs peaked at 696 MB, now 13 MB; DESIGN §13).
#[test]
fn summarize_and_reconcile_release_finished_runs() {
    for args in [
        &["summarize", "--output", "jsonl"][..],
        &["summarize", "--output", "json"],
        &["summarize", "--color", "never"],
        &["reconcile", "--output", "jsonl"],
        &["verify", "--output", "jsonl", "--multi-run"],
    ] {
        let (small, _) = peak_kib(args, &many_runs(1_000, 20));
        let (large, out) = peak_kib(args, &many_runs(10_000, 2));
        assert_eq!(runs_in(args, &out), 10_000, "{args:?}");
        eprintln!("{args:?} peak RSS: 1,000 runs {small} KiB, 10,000 runs {large} KiB");
        assert!(
            large < small + 1024,
            "{args:?}: peak grew from {small} to {large} KiB"
        );
    }
}

/// A line of millions of tiny members costs its bytes, not an index
/// entry per member (0.1.0's successor indexed every one: ~4x the line per
/// batch in flight).
#[test]
fn a_line_of_many_members_is_indexed_in_bounded_memory() {
    let mut line = br#"{"type":"x","#.to_vec();
    for _ in 0..(24 << 20) / 5 {
        line.extend_from_slice(br#""":0,"#);
    }
    line.extend_from_slice(b"\"z\":1}\n");
    let input = line.repeat(3);
    for cmd in ["verify", "strip-envelope", "summarize"] {
        let (peak, _) = peak_kib(&[cmd, "-q"], &input);
        eprintln!("{cmd}: 3 lines of 24 MiB, 5 M members each: peak RSS {peak} KiB");
        assert!(peak < 160 * 1024, "{cmd}: peak RSS {peak} KiB");
    }
}

/// A meta whose `args` holds twenty million strings: checked as a window
/// of two, not collected (0.1.0 and this issue's first cut took 539 MB).
#[test]
fn a_huge_args_list_stays_flat() {
    let mut line = br#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"args":["#.to_vec();
    for i in 0..20_000_000 {
        if i > 0 {
            line.push(b',');
        }
        line.extend_from_slice(b"\"\"");
    }
    line.extend_from_slice(b"]}\n");
    let (kib, _) = peak_kib(&["verify", "-q"], &line);
    assert!(kib < 160 * 1024, "peak {kib} KiB");
}

/// One stream naming 1.6 million run ids (each a `run.changed`): the ids
/// tracked are capped, so memory stays flat (224 MB before the cap).
#[test]
fn many_ids_in_one_run_stay_flat() {
    let mut input = Vec::new();
    for i in 0..1_600_000 {
        writeln!(
            input,
            r#"{{"type":"hit","aoi":{{"seq":0,"run":"run-{i:07}"}}}}"#
        )
        .unwrap();
    }
    let (kib, _) = peak_kib(&["verify", "-q"], &input);
    assert!(kib < 64 * 1024, "peak {kib} KiB");
}

/// Type names of 2 MiB each: summarize counts them by a bounded prefix
/// (it took 2.6 GB for 256 of them).
#[test]
fn huge_type_names_stay_flat() {
    let mut input = Vec::new();
    let long = "t".repeat(2 << 20);
    for i in 0..64 {
        writeln!(input, r#"{{"type":"{long}{i:03}"}}"#).unwrap();
    }
    let (kib, out) = peak_kib(&["summarize", "--output", "json"], &input);
    assert!(kib < 160 * 1024, "peak {kib} KiB");
    assert!(out.contains("…"), "names are cut");
}

/// split-by-run keeps digests per finished run, not ids and names: about
/// 90 bytes a run (0.1.0's successor kept ~360, so a million runs took
/// 357 MB; now 96 MB).
#[test]
fn split_by_run_costs_little_per_finished_run() {
    let peak = |runs: usize| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("out");
        let (kib, _) = peak_kib(
            &["split-by-run", "-q", "--dir", d.to_str().unwrap()],
            &many_runs(runs, 0),
        );
        kib
    };
    let (small, large) = (peak(4_000), peak(40_000));
    let per_run = (large.saturating_sub(small) * 1024) / 36_000;
    eprintln!("split-by-run peak RSS: 4,000 runs {small} KiB, 40,000 runs {large} KiB");
    assert!(per_run < 200, "{per_run} bytes per finished run");
}

/// Ever-new run ids that never end (no summary) cannot grow memory
/// without end: past 32,768 open runs the oldest is judged as it stands,
/// its summary missing (0.1.0's successor: 500,000 such runs took 1.1 GB
/// in summarize).
#[test]
fn open_runs_are_capped() {
    let open = |n: usize| {
        let mut v = vec![];
        for r in 0..n {
            v.extend_from_slice(
                format!("{{\"type\":\"hit\",\"aoi\":{{\"seq\":0,\"run\":\"r{r}\"}}}}\n").as_bytes(),
            );
        }
        v
    };
    for args in [
        &["verify", "--multi-run", "--output", "jsonl"][..],
        &["summarize", "--output", "jsonl"][..],
    ] {
        let (small, _) = peak_kib(args, &open(40_000));
        let (large, out) = peak_kib(args, &open(160_000));
        eprintln!("{args:?}: 40,000 open runs {small} KiB, 160,000 {large} KiB");
        assert!(
            large < small + 16 * 1024,
            "{args:?}: {small} -> {large} KiB"
        );
        assert!(large < 160 * 1024, "{args:?}: {large} KiB");
        // Every run is judged once, the early ones saying why.
        assert_eq!(runs_reported(args[0], &out), 160_000, "{args:?}");
        assert!(out.contains("runs were open at once"), "{args:?}");
    }
}

/// Exactly 32,768 runs open at once is within the cap: all of them end
/// well, and a line of an open run never judges its own run early.
#[test]
fn the_open_run_cap_is_inclusive() {
    let n = 32_768;
    let mut v = String::new();
    for end in [false, true] {
        for r in 0..n {
            if end {
                v.push_str(&ok_summary(1, 0).replace(r#""run":"R""#, &format!(r#""run":"r{r}""#)));
            } else {
                v.push_str(&meta().replace(r#""run":"R""#, &format!(r#""run":"r{r}""#)));
            }
            v.push('\n');
        }
    }
    let out = verify(&["--multi-run", "-q"], v.as_bytes());
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// Type names are kept up to a budget over all open runs together, not
/// 256 per run whatever the number of runs (6,000 open runs of 256
/// 130-byte names took 335 MB; now 45 MB).
#[test]
fn summarize_keeps_names_within_one_budget() {
    let mut v = String::new();
    let long = "y".repeat(130);
    for r in 0..1_000 {
        v.push_str(&meta().replace(r#""run":"R""#, &format!(r#""run":"r{r}""#)));
        v.push('\n');
        for t in 0..256 {
            let line = format!(
                r#"{{"type":"t{t:03}{long}","aoi":{{"seq":{},"run":"r{r}"}}}}"#,
                t + 1
            );
            v.push_str(&line);
            v.push('\n');
        }
    }
    let (kib, out) = peak_kib(&["summarize", "--output", "jsonl"], v.as_bytes());
    eprintln!("summarize, 1,000 open runs of 256 long names: peak RSS {kib} KiB");
    assert_eq!(runs_reported("summarize", &out), 1_000);
    assert!(kib < 40 * 1024, "peak {kib} KiB");
}
