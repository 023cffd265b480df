//! `aoitap split-by-run`: each run to its own file, byte for byte, and
//! never a byte outside the directory.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use crate::util::*;

/// A short conforming run with the given id (already JSON-escaped).
fn run_lines(id_json: &str, n: u64) -> Vec<String> {
    good(n)
        .iter()
        .map(|l| l.replace(r#""run":"R""#, &format!(r#""run":"{id_json}""#)))
        .collect()
}

/// Lines of several runs, interleaved round-robin.
fn interleave(runs: &[Vec<String>]) -> Vec<String> {
    let longest = runs.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .flat_map(|i| runs.iter().filter_map(move |r| r.get(i).cloned()))
        .collect()
}

/// Every entry under `dir`, as (relative path, is a plain file).
fn walk(dir: &Path) -> Vec<(String, bool)> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if t.is_dir() {
            for (sub, f) in walk(&e.path()) {
                out.push((format!("{name}/{sub}"), f));
            }
        } else {
            out.push((name, t.is_file()));
        }
    }
    out
}

fn split(dir: &Path, extra: &[&str], input: &[u8]) -> Out {
    let mut args = vec![
        "split-by-run",
        "--dir",
        dir.to_str().unwrap(),
        "--output",
        "jsonl",
    ];
    args.extend_from_slice(extra);
    run(&args, input)
}

/// File contents by path, from the `run` events that name them.
fn files_by_run(out: &Out) -> HashMap<String, String> {
    out.events()
        .into_iter()
        .filter(|e| e["type"] == "run")
        .map(|e| {
            let path = e["path"].as_str().unwrap().to_string();
            (
                e["run"].as_str().unwrap_or("").to_string(),
                std::fs::read_to_string(path).unwrap(),
            )
        })
        .collect()
}

#[test]
fn interleaved_runs_come_back_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<Vec<String>> = (0..5)
        .map(|k| run_lines(&format!("run-{k}"), k + 1))
        .collect();
    let out = split(&dir.path().join("out"), &[], &lines(&interleave(&runs)));
    assert_eq!(out.code, 0, "{}", out.stdout);
    let files = files_by_run(&out);
    assert_eq!(files.len(), 5);
    for (k, r) in runs.iter().enumerate() {
        assert_eq!(files[&format!("run-{k}")].as_bytes(), &lines(r)[..]);
    }
}

/// Lines longer than a run file's buffer are written at once, after what
/// the buffers of that run and the others hold: every file keeps its
/// lines in order, however short and long ones mix.
#[test]
fn long_and_short_lines_keep_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<Vec<String>> = (0..3)
        .map(|k| {
            let mut r = run_lines(&format!("run-{k}"), 60);
            for (i, line) in r.iter_mut().enumerate().filter(|(i, _)| i % 7 == 3) {
                let pad = "p".repeat(3_000 * (i % 5) + k * 10_000);
                *line = line.replacen(
                    "\"type\":\"hit\"",
                    &format!("\"type\":\"hit\",\"pad\":\"{pad}\""),
                    1,
                );
            }
            r
        })
        .collect();
    assert!(runs[2].iter().any(|l| l.len() > 20_000));
    let out = split(&dir.path().join("out"), &[], &lines(&interleave(&runs)));
    assert_eq!(out.code, 0, "{}", out.stdout);
    let files = files_by_run(&out);
    for (k, r) in runs.iter().enumerate() {
        assert_eq!(
            files[&format!("run-{k}")].as_bytes(),
            &lines(r)[..],
            "run-{k}"
        );
    }
}

#[test]
fn hostile_ids_stay_inside_the_directory() {
    let ids = [
        r"../../etc/passwd",
        r"/abs",
        r"a/b",
        r"a_b",
        r".",
        r"..",
        r"",
        r"a\u0000b",
        r"line\nbreak\u001b[2J",
        r"abc",
        r"ABC",
        r"Abc",
    ];
    let long = "x".repeat(10 * 1024);
    let long2 = format!("{long}y");
    let mut all: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    all.push(long);
    all.push(long2);
    let runs: Vec<Vec<String>> = all.iter().map(|id| run_lines(id, 1)).collect();
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("out");
    let out = split(&dir, &[], &lines(&interleave(&runs)));
    assert_eq!(out.code, 0, "{}", out.stdout);
    // Nothing but DIR next to it, and only plain files, one per run, in DIR.
    let around: Vec<_> = std::fs::read_dir(base.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(around, vec![std::ffi::OsString::from("out")]);
    let entries = walk(&dir);
    assert_eq!(entries.len(), all.len(), "{entries:?}");
    for (name, plain) in &entries {
        assert!(*plain && !name.contains('/'), "{name}");
        assert!(name.len() < 200, "{name}");
    }
    // Names differ even ignoring case.
    let mut lower: Vec<String> = entries.iter().map(|(n, _)| n.to_lowercase()).collect();
    lower.sort();
    lower.dedup();
    assert_eq!(lower.len(), all.len());
    // And each holds its run's lines.
    let paths: Vec<String> = out
        .events()
        .into_iter()
        .filter(|e| e["type"] == "run")
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths.len(), all.len());
    for (path, r) in paths.iter().zip(&runs) {
        assert!(Path::new(path).starts_with(&dir), "{path}");
        assert_eq!(std::fs::read(path).unwrap(), lines(r), "{path}");
    }
}

#[test]
fn ten_thousand_runs_with_sixteen_open_files() {
    let runs: Vec<Vec<String>> = (0..10_000)
        .map(|k| run_lines(&format!("r{k:05}"), 1))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let out = split(
        &dir.path().join("out"),
        &["--max-open", "16"],
        &lines(&interleave(&runs)),
    );
    assert_eq!(out.code, 0);
    let files = files_by_run(&out);
    assert_eq!(files.len(), 10_000);
    for (k, r) in runs.iter().enumerate().step_by(997) {
        assert_eq!(files[&format!("r{k:05}")].as_bytes(), &lines(r)[..]);
    }
}

#[test]
fn lines_without_a_run_id_follow_the_latest_meta() {
    let anon = [
        "{\"type\":\"aoi:meta\",\"tool\":\"t\"}".to_string(),
        "{\"type\":\"hit\"}".to_string(),
        "{\"type\":\"aoi:summary\",\"ok\":true}".to_string(),
    ];
    let mut input = vec!["{\"type\":\"stray\"}".to_string()];
    input.extend(anon.iter().cloned());
    let dir = tempfile::tempdir().unwrap();
    let out = split(&dir.path().join("out"), &[], &lines(&input));
    let names: Vec<String> = walk(&dir.path().join("out"))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(
        names.contains(&"unattributed.jsonl".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"run-from-line-2.jsonl".to_string()),
        "{names:?}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("out/run-from-line-2.jsonl")).unwrap(),
        lines(&anon)
    );
    assert_eq!(out.code, 65, "the stray line's run has no summary");
}

#[test]
fn existing_files_are_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let input = lines(&good(1));
    assert_eq!(split(&out_dir, &[], &input).code, 0);
    let again = split(&out_dir, &[], &input);
    assert_eq!(again.code, 73);
    let err = again
        .events()
        .into_iter()
        .find(|e| e["type"] == "aoi:error")
        .unwrap();
    assert!(
        err["message"].as_str().unwrap().contains("run-R.jsonl"),
        "{err}"
    );
    assert_eq!(again.summary()["ok"], false);
    // --force replaces the file, and a link is replaced, never followed.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::fs::remove_file(out_dir.join("run-R.jsonl")).unwrap();
    std::os::unix::fs::symlink(&victim, out_dir.join("run-R.jsonl")).unwrap();
    assert_eq!(split(&out_dir, &["--force"], &input).code, 0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(std::fs::read(out_dir.join("run-R.jsonl")).unwrap(), input);
}

#[test]
fn an_uncreatable_directory_is_73_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("sub");
    let out = run(
        &["split-by-run", "--dir", bad.to_str().unwrap()],
        &lines(&good(1)),
    );
    assert_eq!(out.code, 73);
    assert!(out.stderr.contains(bad.to_str().unwrap()), "{}", out.stderr);
}

#[test]
fn a_full_disk_is_74_and_named() {
    // A 64 KiB tmpfs: needs root, which CI and the dev machines have.
    let dir = tempfile::tempdir().unwrap();
    let mount = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(dir.path())
        .status()
        .expect("mount");
    assert!(
        mount.success(),
        "mounting a small tmpfs failed (this test needs root)"
    );
    let big: Vec<String> = (0..2000).map(|_| hit(1)).collect();
    let out = run(
        &["split-by-run", "--dir", dir.path().to_str().unwrap()],
        &lines(&big),
    );
    let _ = Command::new("umount").arg(dir.path()).status();
    assert_eq!(out.code, 74, "{}", out.stderr);
    assert!(
        out.stderr.contains("run-R.jsonl") && out.stderr.contains("No space left"),
        "{}",
        out.stderr
    );
}

/// Several FILE operands are several streams: a run id met in two of them
/// is two runs, in two files, each of which passes on its own.
#[test]
fn the_same_run_in_two_inputs_is_two_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("runs");
    let f = fixture("streams/ok-complete.jsonl");
    let f = f.to_str().unwrap();
    let out = run(&["split-by-run", "--dir", d.to_str().unwrap(), f, f], b"");
    assert_eq!(out.code, 0, "{}", out.stdout);
    let one = std::fs::read(d.join("run-01JZQ7X4TQ9.jsonl")).unwrap();
    let two = std::fs::read(d.join("run-01JZQ7X4TQ9~2.jsonl")).unwrap();
    assert_eq!(one, std::fs::read(f).unwrap());
    assert_eq!(two, one);
}

/// A log of runs A then B, the names of whose files are known.
fn two_runs() -> Vec<u8> {
    let mut v = run_lines("A", 1);
    v.extend(run_lines("B", 1));
    lines(&v)
}

/// Every entry of `dir` with its bytes (a link's own target, unfollowed).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let body = match std::fs::read_link(&p) {
                Ok(to) => to.to_string_lossy().into_owned().into_bytes(),
                Err(_) => std::fs::read(&p).unwrap(),
            };
            (name, body)
        })
        .collect();
    all.sort();
    all
}

/// `split-by-run ARGS` with stdin from `stdin` (a file), as (status, stderr).
fn split_files(args: &[&str], stdin: Option<&Path>) -> (i32, String) {
    let mut cmd = Command::new(bin());
    cmd.arg("split-by-run").args(args);
    if let Some(p) = stdin {
        cmd.stdin(std::fs::File::open(p).unwrap());
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An input that is a file split-by-run may write in DIR is a usage error,
/// --force or not, found before anything is written: whether it is the
/// file itself, a hard link to it, a symbolic link either way, or
/// standard input.
#[test]
fn an_input_is_never_an_output() {
    let base = tempfile::tempdir().unwrap();
    let w = base.path().join("w");
    std::fs::create_dir(&w).unwrap();
    let log = base.path().join("log.jsonl");
    std::fs::write(&log, two_runs()).unwrap();
    let ws = w.to_str().unwrap();
    type Arrange = fn(&Path, &Path) -> (std::path::PathBuf, bool);
    let cases: [(&str, Arrange); 6] = [
        ("the input is in DIR", |log, w| {
            let p = w.join("run-B.jsonl");
            std::fs::copy(log, &p).unwrap();
            (p, false)
        }),
        ("a name equal but for case", |log, w| {
            let p = w.join("RUN-b.JSONL");
            std::fs::copy(log, &p).unwrap();
            (p, false)
        }),
        ("a hard link in DIR", |log, w| {
            std::fs::hard_link(log, w.join("run-B.jsonl")).unwrap();
            (log.to_path_buf(), false)
        }),
        ("a symbolic link in DIR to the input", |log, w| {
            std::os::unix::fs::symlink(log, w.join("run-B.jsonl")).unwrap();
            (log.to_path_buf(), false)
        }),
        ("the input a symbolic link into DIR", |log, w| {
            std::fs::copy(log, w.join("run-B.jsonl")).unwrap();
            let link = w.parent().unwrap().join("link.jsonl");
            std::os::unix::fs::symlink(w.join("run-B.jsonl"), &link).unwrap();
            (link, false)
        }),
        ("standard input", |log, w| {
            let p = w.join("unattributed.jsonl");
            std::fs::copy(log, &p).unwrap();
            (p, true)
        }),
    ];
    for (what, arrange) in cases {
        for force in [true, false] {
            for e in std::fs::read_dir(&w).unwrap() {
                std::fs::remove_file(e.unwrap().path()).unwrap();
            }
            let _ = std::fs::remove_file(base.path().join("link.jsonl"));
            let (input, stdin) = arrange(&log, &w);
            let before = snapshot(&w);
            let input_bytes = std::fs::read(&input).unwrap();
            let mut args = vec!["--dir", ws];
            if force {
                args.push("--force");
            }
            let input_arg = input.to_str().unwrap();
            if !stdin {
                args.push(input_arg);
            }
            let (code, stderr) = split_files(&args, stdin.then_some(input.as_path()));
            assert_eq!(code, 64, "{what} (force {force}): {stderr}");
            assert!(stderr.contains("never writes over an input"), "{stderr}");
            // Nothing written: not the input, nor run A's file.
            assert_eq!(snapshot(&w), before, "{what} (force {force})");
            assert_eq!(std::fs::read(&input).unwrap(), input_bytes, "{what}");
        }
    }
}

/// Other files in DIR are no concern: a log split where it lies.
#[test]
fn an_input_beside_the_run_files_is_fine() {
    let w = tempfile::tempdir().unwrap();
    let log = w.path().join("merged.jsonl");
    std::fs::write(&log, two_runs()).unwrap();
    let (code, stderr) = split_files(
        &["--dir", w.path().to_str().unwrap(), log.to_str().unwrap()],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read(&log).unwrap(), two_runs());
    assert_eq!(
        std::fs::read(w.path().join("run-B.jsonl")).unwrap(),
        lines(&run_lines("B", 1))
    );
}

/// Two run ids whose keys share a 64-bit digest (found by search; the
/// unit tests of `cmd/split/open_files.rs` hold that they collide): each
/// run still gets a file of its own, with its own lines.
#[test]
fn runs_whose_digests_collide_get_files_of_their_own() {
    let (a, b) = ("599a97ae466e01b0", "1de7602d4770b9c1");
    let ev = |ty: &str, seq: u64, run: &str, rest: &str| {
        format!(r#"{{"type":"{ty}","aoi":{{"seq":{seq},"run":"{run}"}}{rest}}}"#)
    };
    let id = r#","tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1""#;
    let done = format!(r#","ok":true,"event_count":3{id}"#);
    let input = lines(&[
        ev("aoi:meta", 0, a, id),
        ev("aoi:meta", 0, b, id),
        ev("hit", 1, a, ""),
        ev("hit", 1, b, ""),
        ev("aoi:summary", 2, a, &done),
        ev("aoi:summary", 2, b, &done),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("runs");
    let out = run(&["split-by-run", "--dir", d.to_str().unwrap()], &input);
    assert_eq!(out.code, 0, "{}", out.stdout);
    for run in [a, b] {
        let file = std::fs::read_to_string(d.join(format!("run-{run}.jsonl"))).unwrap();
        assert_eq!(file.lines().count(), 3, "{run}: {file}");
        assert!(file.lines().all(|l| l.contains(run)), "{run}: {file}");
    }
}

/// Ids whose names differ only in case get names that differ beyond it
/// (`~2`), even when one of them has an id whose digest another id's
/// shares under fixed keys: split's name tables are keyed afresh in every
/// process, so no pair of ids can be crafted to share a file.
#[test]
fn names_equal_but_for_case_get_a_suffix_whatever_the_digests() {
    let ids = ["1DE7602D4770B9C1", "1de7602d4770b9c1", "599a97ae466e01b0"];
    let mut runs = vec![];
    for id in ids {
        runs.push(run_lines(id, 2));
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("runs");
    let out = split(&d, &[], &lines(&interleave(&runs)));
    assert_eq!(out.code, 0, "{}", out.stdout);
    let mut names: Vec<String> = walk(&d).into_iter().map(|(n, _)| n).collect();
    names.sort();
    let lower: std::collections::HashSet<String> = names.iter().map(|n| n.to_lowercase()).collect();
    assert_eq!(lower.len(), 3, "{names:?}");
    let files = files_by_run(&out);
    for (k, r) in runs.iter().enumerate() {
        assert_eq!(files[ids[k]].as_bytes(), &lines(r)[..], "{}", ids[k]);
    }
}

/// A report that cannot be written ends split-by-run (141 on a closed
/// pipe), and every line it had read is in its run's file all the same
/// (docs/contract.md §8.1: nothing already read is lost). The runs come one after
/// another, so the files, in run order, hold a prefix of the input; the
/// report (a line per run) fails while the input is still being read.
#[test]
fn a_failed_report_loses_no_line_already_read() {
    let runs: Vec<Vec<String>> = (0..3000)
        .map(|k| run_lines(&format!("r{k:04}"), 5))
        .collect();
    let input: Vec<u8> = runs.iter().flat_map(|r| lines(r)).collect();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("in.jsonl");
    std::fs::write(&src, &input).unwrap();
    let d = dir.path().join("out");
    let script = format!(
        "$A split-by-run --output jsonl --dir {} {} | head -c 1 >/dev/null",
        d.display(),
        src.display()
    );
    let (_, stderr) = sh(&script);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let mut written = vec![];
    for k in 0..runs.len() {
        match std::fs::read(d.join(format!("run-r{k:04}.jsonl"))) {
            Ok(bytes) => written.extend(bytes),
            Err(_) => break,
        }
    }
    assert!(!written.is_empty());
    assert!(input.starts_with(&written), "a line read was lost");
    // What was read is more than what the report said before it failed.
    let last = input[..written.len()]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    assert!(last >= 5, "{last} lines");
}

/// Open descriptors stay within --max-open and a few: the writer's
/// queue holds at most `CLOSED_WAITING` closed files. 500 runs through
/// one open file under a limit of 40 descriptors.
#[test]
fn max_open_bounds_the_descriptors_with_the_writer_behind() {
    let runs: Vec<Vec<String>> = (0..500).map(|k| run_lines(&format!("r{k}"), 4)).collect();
    let input = lines(&interleave(&runs));
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("in.jsonl");
    std::fs::write(&src, &input).unwrap();
    let d = dir.path().join("out");
    let script = format!(
        "ulimit -n 40; $A split-by-run -q --max-open 1 --dir {} {}",
        d.display(),
        src.display()
    );
    let (code, stderr) = sh(&script);
    assert_eq!(code, 0, "{stderr}");
    let files = walk(&d);
    assert_eq!(files.len(), 500);
}
