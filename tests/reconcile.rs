//! `aoitap reconcile`: every event accounted for, every cut measured.

use serde_json::Value;

use crate::util::*;

fn jsonl(args: &[&str], input: &[u8]) -> Out {
    let mut a = vec!["reconcile", "--output", "jsonl"];
    a.extend_from_slice(args);
    run(&a, input)
}

fn of_type(out: &Out, ty: &str) -> Vec<Value> {
    out.events()
        .into_iter()
        .filter(|e| e["type"] == ty)
        .collect()
}

#[test]
fn the_elided_stream_has_one_gap_and_its_marker_agrees() {
    let out = jsonl(
        &[],
        &std::fs::read(fixture("streams/elided-with-marker.jsonl")).unwrap(),
    );
    let gaps = of_type(&out, "gap");
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    let g = &gaps[0];
    assert_eq!(
        (
            g["from_seq"].as_u64(),
            g["to_seq"].as_u64(),
            g["missing_count"].as_u64()
        ),
        (Some(6), Some(34), Some(29))
    );
    assert_eq!(g["marker_claims"], 29);
    assert_eq!(g["after_line_number"], 6);
    let run = &of_type(&out, "run")[0];
    assert_eq!(run["marker_notes"], serde_json::json!([]));
    assert_eq!(run["verdict"], "nonconforming");
    assert_eq!(out.code, 65);
}

#[test]
fn a_marker_that_lies_is_reported() {
    let input = std::fs::read_to_string(fixture("streams/elided-with-marker.jsonl"))
        .unwrap()
        .replace("29 lines", "30 lines");
    let out = jsonl(&[], input.as_bytes());
    let g = &of_type(&out, "gap")[0];
    assert_eq!(
        (g["missing_count"].as_u64(), g["marker_claims"].as_u64()),
        (Some(29), Some(30))
    );
    let notes = of_type(&out, "run")[0]["marker_notes"].clone();
    assert!(
        notes[0]
            .as_str()
            .unwrap()
            .contains("claims 30 lines, but seq 6..34 is 29 missing"),
        "{notes}"
    );
    let human = run(&["reconcile", "--color", "never"], input.as_bytes());
    assert!(
        human
            .stdout
            .contains("marker at line 7 claims 30: disagrees"),
        "{}",
        human.stdout
    );
}

#[test]
fn the_spec_import_example_misses_seq_2_to_30() {
    let out = jsonl(
        &[],
        &std::fs::read(fixture("streams/spec-19-4-import-elided.jsonl")).unwrap(),
    );
    let gaps = of_type(&out, "gap");
    assert_eq!(gaps.len(), 1);
    assert_eq!(
        (
            gaps[0]["from_seq"].as_u64(),
            gaps[0]["to_seq"].as_u64(),
            gaps[0]["missing_count"].as_u64()
        ),
        (Some(2), Some(30), Some(29))
    );
}

#[test]
fn a_complete_stream_reconciles() {
    let out = jsonl(
        &[],
        &std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap(),
    );
    assert_eq!(out.code, 0);
    assert!(of_type(&out, "gap").is_empty());
    assert_eq!(of_type(&out, "run")[0]["verdict"], "pass");
    assert_eq!(
        of_type(&out, "run")[0]["present"],
        serde_json::json!([[0, 7]])
    );
    // Interleaved runs are accounted for one by one.
    let out = jsonl(
        &[],
        &std::fs::read(fixture("streams/interleaved-two-runs.jsonl")).unwrap(),
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(of_type(&out, "run").len(), 2);
}

#[test]
fn counters_that_do_not_match_fail() {
    let out = jsonl(
        &[],
        &lines(&[
            meta(),
            hit(1),
            summary(2, r#""ok":true,"event_count":3,"count":5"#),
        ]),
    );
    assert_eq!(out.code, 65);
    assert!(of_type(&out, "gap").is_empty());
}

#[test]
fn repeats_and_reorders_are_told_apart() {
    let input = lines(&[meta(), hit(2), hit(1), hit(1), ok_summary(3, 2)]);
    let out = jsonl(&[], &input);
    let r = &of_type(&out, "run")[0];
    assert_eq!(
        (
            r["reorders"].as_u64(),
            r["repeats"].as_u64(),
            r["missing_count"].as_u64()
        ),
        (Some(1), Some(1), Some(0))
    );
    assert_eq!(out.code, 65);
}

#[test]
fn custom_markers() {
    let mut ls = good(5);
    ls.drain(2..5);
    ls.insert(2, "~~ 3 events cut ~~".to_string());
    let out = jsonl(&["--marker", r"^~~ (\d+) events cut ~~$"], &lines(&ls));
    let g = &of_type(&out, "gap")[0];
    assert_eq!(
        (g["missing_count"].as_u64(), g["marker_claims"].as_u64()),
        (Some(3), Some(3))
    );
    let without = jsonl(&[], &lines(&ls));
    assert!(of_type(&without, "gap")[0].get("marker_claims").is_none());
    assert_eq!(run(&["reconcile", "--marker", "no group"], b"").code, 64);
}

#[test]
fn against_a_reference_names_each_difference_and_nothing_else() {
    let reference: Vec<String> = good(20);
    let mut got = reference.clone();
    got.remove(5); // seq 5 dropped
    got.insert(9, hit(9)); // seq 9 twice (the copy lands after seq 8)
    got[13] = got[13].replace(r#""id":13"#, r#""id":1300"#); // seq 13 altered
    let dir = tempfile::tempdir().unwrap();
    let refpath = dir.path().join("ref.jsonl");
    std::fs::write(&refpath, lines(&reference)).unwrap();
    let out = jsonl(&["--against", refpath.to_str().unwrap()], &lines(&got));
    let mut diffs: Vec<(String, u64, u64)> = of_type(&out, "difference")
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap().to_string(),
                d["from_seq"].as_u64().unwrap(),
                d["to_seq"].as_u64().unwrap(),
            )
        })
        .collect();
    diffs.sort();
    assert_eq!(
        diffs,
        vec![
            ("altered".into(), 13, 13),
            ("extra".into(), 9, 9),
            ("missing".into(), 5, 5)
        ]
    );
    assert_eq!(out.code, 65);
    let same = jsonl(
        &["--against", refpath.to_str().unwrap()],
        &lines(&reference),
    );
    assert!(of_type(&same, "difference").is_empty());
    assert_eq!(same.code, 0);
}

#[test]
fn text_lines_are_counted_not_fatal() {
    let mut ls = good(2);
    ls.insert(1, "harness: starting tool".to_string());
    ls.insert(2, "harness: still going".to_string());
    let out = jsonl(&[], &lines(&ls));
    // They are json.invalid to the checker, as in every command (docs/contract.md
    // §3.2), but the accounting goes on around them.
    assert_eq!(out.code, verify(&[], &lines(&ls)).code);
    assert_eq!(out.code, 65, "{}", out.stdout);
    assert_eq!(
        of_type(&out, "run").len(),
        1,
        "text lines belong to the run before them"
    );
    assert_eq!(of_type(&out, "run")[0]["text_lines"], 2);
}

/// The human rendering, pinned: a change to it must change the snapshot.
#[test]
fn human_rendering_snapshot() {
    let input = std::fs::read(fixture("streams/elided-with-marker.jsonl")).unwrap();
    let out = run(&["reconcile", "--color", "never", "-"], &input);
    let want =
        std::fs::read_to_string(fixture("snapshots/reconcile-elided-with-marker.txt")).unwrap();
    assert_eq!(out.stdout, want);
}

/// `--report` naming the `--against` reference would overwrite the
/// capture before it is read: a usage error, and the file is untouched.
#[test]
fn report_over_the_reference_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("ref.jsonl");
    let original = std::fs::read(fixture("streams/ok-complete.jsonl")).unwrap();
    std::fs::write(&reference, &original).unwrap();
    let r = reference.to_str().unwrap();
    let out = run(&["reconcile", "--report", r, "--against", r], &original);
    assert_eq!(out.code, 64, "{}", out.stderr);
    assert_eq!(std::fs::read(&reference).unwrap(), original);
}

/// A seq past 2^64-1 is one verify cannot count (seq.not-integer): reconcile
/// reads the seq the checker placed, so both see the same gap after it.
#[test]
fn a_seq_past_u64_is_read_alike_by_verify_and_reconcile() {
    let input = lines(&[
        meta(),
        hit(1),
        ev(10, "hit", "").replace(r#""seq":10"#, &format!(r#""seq":1{}"#, "0".repeat(40))),
        hit(5),
    ]);
    let v = verify(&["--multi-run"], &input);
    let gap = v
        .findings()
        .into_iter()
        .find(|f| f["rule"] == "seq.gap")
        .expect("a gap");
    let r = run(&["reconcile", "--output", "jsonl"], &input);
    let gaps: Vec<Value> = r
        .events()
        .into_iter()
        .filter(|e| e["type"] == "gap")
        .collect();
    assert_eq!(gaps.len(), 1, "{}", r.stdout);
    assert_eq!(gaps[0]["from_seq"], gap["missing_from"], "{}", r.stdout);
    assert_eq!(gaps[0]["to_seq"], gap["missing_to"], "{}", r.stdout);
    assert_eq!(v.code, r.code);
}

/// The bar over a seq space near 2^64: its cells are cut in 128 bits, so
/// almost all of it missing draws as missing (it wrapped, and drew a
/// space with two events as present from end to end).
#[test]
fn the_bar_of_a_seq_space_near_u64_max_shows_it_missing() {
    let input = lines(&[
        meta(),
        ev(18_446_744_073_709_551_614, "hit", ""),
        summary(u64::MAX, r#""ok":true"#),
    ]);
    let out = run(&["reconcile"], &input);
    let bar = format!("▒{}▒", "░".repeat(38));
    assert!(out.stdout.contains(&bar), "{}", out.stdout);
}

/// An event at seq 2^64-1, the last there is, is present: the seq space
/// is then all of u64, 2^64 seqs, counted as such.
#[test]
fn the_last_seq_there_is_is_present() {
    let input = lines(&[meta(), hit(1), ev(u64::MAX, "hit", "")]);
    let out = run(&["reconcile"], &input);
    assert!(
        out.stdout.contains("3 of 18446744073709551616 present"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("seq 0..18446744073709551615 "),
        "{}",
        out.stdout
    );
    let out = jsonl(&[], &input);
    let run = &of_type(&out, "run")[0];
    assert_eq!(
        run["present"],
        serde_json::json!([[0, 1], [u64::MAX, u64::MAX]]),
        "{}",
        out.stdout
    );
    assert_eq!(run["missing_count"], u64::MAX - 2);
}
