//! One truth per line (docs/contract.md §3.2): every command decides on decoded
//! values, and a line is never lost, whatever shape the input takes.

use crate::util::*;

/// `aoitap CMD --output jsonl ARGS` on `input`; split-by-run gets a fresh
/// directory.
fn each_command(input: &[u8], args: &[&str]) -> Vec<(&'static str, Out)> {
    STREAM_COMMANDS
        .iter()
        .map(|&cmd| {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path().join("runs");
            let mut a = command_words(cmd, &d);
            a.extend(["--output", "jsonl"]);
            a.extend_from_slice(args);
            (cmd, run(&a, input))
        })
        .collect()
}

/// 0.1.0 panicked here: the framework test looked at raw bytes, the
/// dispatch at the decoded type. Each escaped line gets what its plain
/// spelling gets, from every command.
#[test]
fn escaped_framework_types_never_panic() {
    for (escaped, plain) in [
        (r#"{"type":"\u0061oi:meta"}"#, r#"{"type":"aoi:meta"}"#),
        (
            r#"{"type":"aoi\u003asummary"}"#,
            r#"{"type":"aoi:summary"}"#,
        ),
        (r#"{"type":"\u0061oi:error"}"#, r#"{"type":"aoi:error"}"#),
        (
            r#"{"type":"\u0061oi:summary","ok":true}"#,
            r#"{"type":"aoi:summary","ok":true}"#,
        ),
    ] {
        let a = each_command(format!("{escaped}\n").as_bytes(), &[]);
        let b = each_command(format!("{plain}\n").as_bytes(), &[]);
        for ((cmd, a), (_, b)) in a.into_iter().zip(b) {
            assert_eq!(a.code, b.code, "{cmd} on {escaped}: {}", a.stderr);
        }
    }
}

/// `"\u0061oi:meta"` is an `aoi:meta` for every rule: a stream written
/// with escaped framework types is the same stream.
#[test]
fn escaped_framework_types_are_framework_events() {
    let plain = lines(&good(2));
    let escaped: Vec<String> = good(2)
        .iter()
        .map(|l| l.replace(r#""type":"aoi:"#, r#""type":"\u0061oi:"#))
        .collect();
    assert_ne!(lines(&escaped), plain);
    let escaped = lines(&escaped);
    for ((cmd, a), (_, b)) in each_command(&plain, &[])
        .into_iter()
        .zip(each_command(&escaped, &[]))
    {
        assert_eq!(a.code, 0, "{cmd}: {}", a.stdout);
        assert_eq!(b.code, 0, "{cmd} on escaped types: {}", b.stdout);
    }
}

#[test]
fn strip_envelope_never_leaks_an_escaped_framework_event() {
    let input = lines(&[
        meta(),
        ev(1, r"\u0061oi:progress", r#""done":1"#),
        hit(2),
        ok_summary(3, 1),
    ]);
    let out = run(&["strip-envelope"], &input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "{\"type\":\"hit\",\"id\":2}\n");
}

#[test]
fn summarize_counts_escaped_types_by_their_decoded_name() {
    let input = lines(&[
        meta(),
        ev(1, r"h\u0069t", r#""id":1"#),
        hit(2),
        ok_summary(3, 2),
    ]);
    let out = run(&["summarize", "--output", "json"], &input);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["runs"][0]["domain_types"]["hit"], 2, "{v}");
}

/// A run id is its decoded value: `"R\u0031"` and `"R1"` are one run.
#[test]
fn run_ids_are_compared_decoded() {
    let input = lines(&[
        meta().replace(r#""run":"R""#, r#""run":"R\u0031""#),
        hit(1).replace(r#""run":"R""#, r#""run":"R1""#),
        hit(2).replace(r#""run":"R""#, r#""run":"\u00521""#),
        ok_summary(3, 2).replace(r#""run":"R""#, r#""run":"R1""#),
    ]);
    for (cmd, out) in each_command(&input, &[]) {
        assert_eq!(out.code, 0, "{cmd}: {}", out.stdout);
        assert!(!out.stdout.contains("run.changed"), "{cmd}: {}", out.stdout);
    }
    let out = verify(&[], &input);
    assert_eq!(out.summary()["upstream"]["tool"], "t", "{}", out.stdout);
}

/// A lone surrogate is its own id, never confused with another.
#[test]
fn lone_surrogate_ids_stay_distinct() {
    let input = lines(&[
        meta().replace(r#""run":"R""#, r#""run":"\ud800""#),
        hit(1).replace(r#""run":"R""#, r#""run":"\ud801""#),
    ]);
    let out = verify(&[], &input);
    assert!(out.has_rule("run.changed"), "{:?}", out.rules());
}

fires_exit!(duplicate_ok_is_not_a_pass, {
    let mut g = good(2);
    g[3] = g[3].replace(r#""ok":true"#, r#""ok":true,"ok":false"#);
    lines(&g)
});

fires_exit!(duplicate_retryable_is_not_a_retry, {
    lines(&[
        meta(),
        ev(
            1,
            "aoi:error",
            r#""category":"rate_limited","code":"RL","message":"m","retryable":true,"retryable":false"#,
        ),
        summary(
            2,
            r#""ok":false,"reason":"failed","event_count":3,"count":0,"error_count":1"#,
        ),
    ])
});

fires_exit!(duplicate_escaped_key_counts, {
    let mut g = good(2);
    g[3] = g[3].replace(r#""ok":true"#, r#""ok":true,"o\u006b":false"#);
    lines(&g)
});

fires_exit!(duplicate_in_caused_by, {
    lines(&[
        meta(),
        summary(
            1,
            r#""ok":false,"reason":"failed","event_count":2,"count":0,"caused_by":{"origin":"up","category":"io","code":"X","retryable":true,"retryable":false}"#,
        ),
    ])
});

/// `verdict.duplicate-key`, exit 65, in every command.
macro_rules! fires_exit {
    ($name:ident, $input:expr) => {
        #[test]
        fn $name() {
            let input = $input;
            let out = verify(&[], &input);
            assert!(out.has_rule("verdict.duplicate-key"), "{:?}", out.rules());
            for (cmd, out) in each_command(&input, &[]) {
                assert_eq!(out.code, 65, "{cmd}: {}", out.stdout);
            }
        }
    };
}
use fires_exit;

/// 0.1.0 lost the line after two over-long ones, and a file and the same
/// bytes through a pipe got different verdicts.
#[test]
fn over_long_lines_in_a_row_lose_no_line() {
    let long = format!("{{\"x\":\"{}\"}}", "y".repeat(300_000));
    let input = lines(&[meta(), hit(1), long.clone(), long, hit(4), ok_summary(5, 2)]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.jsonl");
    std::fs::write(&path, &input).unwrap();
    let args = ["--max-line-bytes", "1000"];
    let piped = verify(&args, &input);
    let mut a = vec!["verify", "--output", "jsonl"];
    a.extend(args);
    a.push(path.to_str().unwrap());
    let file = run(&a, b"");
    let found = |o: &Out| {
        o.findings()
            .iter()
            .map(|f| {
                (
                    f["rule"].as_str().unwrap().to_string(),
                    f["line_number"].as_u64(),
                )
            })
            .collect::<Vec<_>>()
    };
    // The two long lines take two seq steps (so seq 4 is no gap), and
    // every line after them keeps its number.
    let want = vec![
        ("line.too-long".to_string(), Some(3)),
        ("line.too-long".to_string(), Some(4)),
    ];
    assert_eq!(found(&piped), want, "{}", piped.stdout);
    assert_eq!(found(&piped), found(&file));
    assert_eq!(piped.code, file.code);
}

/// Every fixture stream (the shared samples and the tests' own), with
/// `--multi-run` given to all five commands, gets one exit status from all
/// of them (docs/contract.md §3.2).
#[test]
fn every_command_gives_every_fixture_the_same_exit() {
    let dir = fixture("streams");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 18, "{files:?}");
    let mut streams: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read(p).unwrap()))
        .collect();
    // And the shapes the tests build: cut, gapped, repeated, failed.
    let g = good(3);
    for (name, ls) in [
        ("cut", g[..3].to_vec()),
        ("gap", [&g[..2], &g[3..]].concat()),
        ("repeat", [&g[..3], &g[2..]].concat()),
        (
            "text line",
            [&g[..2], &["hello".to_string()], &g[2..]].concat(),
        ),
        ("blank line", [&g[..2], &[String::new()], &g[2..]].concat()),
        (
            "array line",
            [&g[..2], &["[1]".to_string()], &g[2..]].concat(),
        ),
    ] {
        streams.push((name.to_string(), lines(&ls)));
    }
    for (name, input) in streams {
        let exits: Vec<(&str, i32)> = each_command(&input, &["--multi-run"])
            .into_iter()
            .map(|(cmd, out)| (cmd, out.code))
            .collect();
        assert!(
            exits.iter().all(|(_, c)| *c == exits[0].1),
            "{name}: {exits:?}"
        );
    }
}

/// Empty input is a run whose summary is missing (docs/contract.md §4.1), in every
/// command and mode: a producer that died before writing is no pass.
#[test]
fn empty_input_is_no_pass_in_any_mode() {
    for args in [&[][..], &["--multi-run"]] {
        for (cmd, out) in each_command(b"", args) {
            assert_eq!(out.code, 65, "{cmd} {args:?}: {}", out.stdout);
        }
    }
    assert_eq!(verify(&["--multi-run", "--unbounded"], b"").code, 0);
}

fires_exit!(duplicate_caused_by_is_not_a_verdict, {
    lines(&[
        meta(),
        summary(
            1,
            r#""ok":false,"reason":"failed","event_count":2,"count":0,"caused_by":{"retryable":false},"caused_by":{"retryable":true,"retry_after_ms":5}"#,
        ),
    ])
});

fires_exit!(duplicate_origin_is_not_a_verdict, {
    lines(&[
        meta(),
        ev(
            1,
            "aoi:error",
            r#""origin":"up","origin":null,"category":"io","code":"X","message":"m","retryable":false"#,
        ),
        ok_summary(2, 0),
    ])
});

/// aoitap's own output quotes at most 80 bytes of an input value, on one
/// line, so it passes its own verify whatever the input (0.1.0 echoed a
/// 35 MB seq into a 71 MB finding line).
#[test]
fn messages_quote_a_bounded_piece_of_the_input() {
    let huge = "\\\\".repeat(1 << 20);
    let input = lines(&[
        meta(),
        ev(1, "hit", "").replace(r#""seq":1"#, &format!(r#""seq":"{huge}""#)),
        hit(2).replace(
            r#""run":"R""#,
            &format!(r#""run":"{}\n""#, "x".repeat(1 << 20)).replace('\n', "\\n"),
        ),
    ]);
    let out = verify(&[], &input);
    assert!(out.has_rule("seq.not-integer") && out.has_rule("run.changed"));
    let longest = out.stdout.lines().map(str::len).max().unwrap();
    assert!(longest < 2048, "a {longest}-byte line");
    assert_eq!(verify(&[], out.stdout.as_bytes()).code, 1);
    let human = run(&["verify", "--color", "never"], &input);
    assert!(human.stdout.lines().all(|l| l.len() < 2048));
}

/// Run ids are kept bounded in bytes: a thousand runs with 64 KiB ids
/// cost no more than a few MiB (0.1.0 kept every id whole).
#[test]
fn long_run_ids_are_kept_bounded() {
    let mut input = vec![];
    for i in 0..1000 {
        let id = format!("{i:06}{}", "x".repeat(64 << 10));
        let run = String::from_utf8(lines(&good(1))).unwrap();
        input.extend_from_slice(
            run.replace(r#""run":"R""#, &format!(r#""run":"{id}""#))
                .as_bytes(),
        );
    }
    let (peak, out) = peak_kib(&["verify", "--multi-run", "--output", "jsonl"], &input);
    assert!(peak < 40 << 10, "peak RSS {peak} KiB");
    assert_eq!(
        out.lines()
            .filter(|l| l.contains(r#""verdict":"pass""#))
            .count(),
        1000
    );
}

/// Found by an attacker run (issue 10): each held by a test.
/// An allowed rule passes in every command: reconcile's own accounting
/// never overrules the checker (docs/contract.md §3.2).
#[test]
fn allowed_rules_pass_in_every_command() {
    let mut no_summary = good(2);
    no_summary.pop();
    let late = lines(&[meta(), ok_summary(1, 0), hit(2)]);
    let mut garbage = lines(&[meta()]);
    garbage.extend_from_slice(b"garbage\n");
    garbage.extend(lines(&[summary(2, r#""ok":true,"event_count":3"#)]));
    for (input, allow) in [(late, "summary.not-last"), (garbage, "json.invalid")] {
        for (cmd, out) in each_command(&input, &["--multi-run", "--allow", allow]) {
            assert_eq!(out.code, 0, "{cmd} --allow {allow}: {}", out.stdout);
        }
    }
    // Allowing a rule never supplies what the verdict needs (docs/contract.md §3.3):
    // a run without its summary passes only with --unbounded.
    let no_summary = lines(&no_summary);
    for (cmd, out) in each_command(&no_summary, &["--multi-run", "--allow", "summary.missing"]) {
        assert_eq!(
            out.code, 65,
            "{cmd} --allow summary.missing: {}",
            out.stdout
        );
    }
    for (cmd, out) in each_command(&no_summary, &["--multi-run", "--unbounded"]) {
        assert_eq!(out.code, 0, "{cmd} --unbounded: {}", out.stdout);
    }
}

/// An unreadable line is a line received and one seq step, in reconcile
/// as in verify (docs/contract.md §3.1).
#[test]
fn reconcile_counts_unreadable_lines() {
    let mut input = lines(&[meta()]);
    input.extend_from_slice(b"garbage\n");
    input.extend(lines(&[summary(2, r#""ok":true,"event_count":3"#)]));
    let out = run(&["reconcile"], &input);
    assert!(
        out.stdout.contains("3 received, event_count 3"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("missing"), "{}", out.stdout);
}

/// A seq past 2^64-1 is said to be uncountable, never clamped into a
/// false order that passes.
#[test]
fn seq_past_u64_is_not_clamped() {
    let big = "18446744073709551616";
    let input = lines(&[
        format!(r#"{{"type":"aoi:meta","aoi":{{"seq":{big},"run":"R"}},{IDENTITY}}}"#),
        format!(
            r#"{{"type":"aoi:summary","aoi":{{"seq":{big},"run":"R"}},"ok":true,"event_count":2}}"#
        ),
    ]);
    let out = verify(&["--allow", "seq.not-from-zero"], &input);
    assert_eq!(out.code, 65);
    assert!(out.has_rule("seq.not-integer"), "{:?}", out.rules());
    // The run numbers its events, if past counting: not "no aoi.seq".
    assert!(!out.has_rule("verifiable.not-claimed"), "{:?}", out.rules());
}

/// A marker's count past u64 is still a marker; a second `aoi` member is
/// named as such.
#[test]
fn odd_markers_and_a_second_envelope() {
    let mut g = good(2);
    g.insert(2, "[… 99999999999999999999999999 lines omitted …]".into());
    assert!(verify(&[], &lines(&g)).has_rule("line.elided"));
    let out = verify(
        &[],
        &lines(&[r#"{"type":"hit","aoi":{"seq":0,"run":"R"},"aoi":{"seq":1,"run":"R"}}"#]),
    );
    let f = out
        .findings()
        .into_iter()
        .find(|f| f["rule"] == "envelope.duplicate-key")
        .unwrap();
    assert!(
        f["message"].as_str().unwrap().starts_with("aoi appears"),
        "{f}"
    );
}

/// Bidi overrides and line separators in input names are escaped in human
/// output: they reorder or break a terminal line.
#[test]
fn bidi_controls_are_escaped() {
    let id = "R\u{202e}SSAP";
    let input = lines(&[
        format!(r#"{{"type":"aoi:meta","aoi":{{"seq":0,"run":"{id}"}},{IDENTITY}}}"#),
        format!(
            r#"{{"type":"aoi:summary","aoi":{{"seq":1,"run":"{id}"}},"ok":true,"event_count":2}}"#
        ),
    ]);
    for cmd in ["verify", "summarize", "reconcile"] {
        let out = run(&[cmd], &input);
        assert!(!out.stdout.contains('\u{202e}'), "{cmd}: {}", out.stdout);
    }
}
