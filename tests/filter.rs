//! `aoitap filter PROG [FILE ...]` (docs/contract.md §1.5): jq programs over an AOI
//! stream, the verdict in the exit status, the events' own bytes out.

use crate::util::*;

fn filter(args: &[&str], input: &[u8]) -> (i32, Vec<u8>, String) {
    raw(&[&["filter"], args].concat(), input)
}

/// A good stream whose hits hold escapes, a big integer and number
/// spellings jq would rewrite.
fn spelled() -> Vec<u8> {
    let r = r#""aoi":{"seq":SEQ,"run":"R"}"#;
    let e = |seq: u32, body: &str| format!("{{{},{body}}}", r.replace("SEQ", &seq.to_string()));
    lines(&[
        e(0, &format!(r#""type":"aoi:meta",{IDENTITY}"#)),
        e(
            1,
            r#""type":"hit","id":12345678901234567890,"s":"\u00e9\n","x":1.50,"y":1e2"#,
        ),
        e(2, r#""type":"note","id":2"#),
        e(3, r#""type":"hit","id":3,"s":"\ud83d\ude00""#),
        e(
            4,
            &format!(r#""type":"aoi:summary","ok":true,"event_count":5,"count":3,{IDENTITY}"#),
        ),
    ])
}

/// A stream of one domain event: a program that ignores its input runs
/// once on it (on `spelled()`'s three it would run three times alike).
fn one_event() -> Vec<u8> {
    lines(&good(1))
}

/// A program that builds `[[...[null]...]]`, `levels` deep (a multiple
/// of ten): ten levels a step, the same value in a tenth of the steps.
fn nested(levels: u32) -> String {
    format!(
        "reduce range({}) as $x (null; {}.{})",
        levels / 10,
        "[".repeat(10),
        "]".repeat(10)
    )
}

#[test]
fn an_event_selected_is_written_byte_for_byte() {
    let input = spelled();
    let (code, out, err) = filter(&[r#"select(.type=="hit")"#], &input);
    assert_eq!(code, 0, "{err}");
    let want: Vec<&[u8]> = input
        .split_inclusive(|&b| b == b'\n')
        .filter(|l| l.windows(12).any(|w| w == br#""type":"hit""#))
        .collect();
    assert_eq!(out, want.concat());
}

#[test]
fn the_verdict_is_the_exit_status_of_a_cut_stream() {
    let input = spelled();
    let cut: Vec<u8> = input[..input.len() - 20].to_vec();
    let (code, out, _) = filter(&[r#"select(.type=="hit")"#], &cut);
    assert_eq!(code, 65);
    assert_eq!(
        out.iter().filter(|&&b| b == b'\n').count(),
        2,
        "what was read is written"
    );
    // A summary without its final newline: jq -e would say 0.
    let unterminated = &input[..input.len() - 1];
    assert_eq!(filter(&["."], unterminated).0, 65);
}

#[test]
fn a_runtime_error_is_a_finding_on_its_line_and_the_rest_is_filtered() {
    let (code, out, err) = filter(
        &[r#"if .id == 2 then error("two") else .id end"#],
        &spelled(),
    );
    assert_eq!(code, 65, "{err}");
    assert!(err.contains(":3: error[filter.error]"), "{err}");
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("12345678901234567890") && out.contains("\n3\n"),
        "{out}"
    );
}

#[test]
fn assert_fails_an_event_that_does_not_hold() {
    let (code, _, err) = filter(&["--assert", r#".type != "note""#, "empty"], &spelled());
    assert_eq!(code, 65);
    assert!(err.contains(":3: error[filter.assert]"), "{err}");
    assert_eq!(
        filter(&["--assert", ".aoi.run == \"R\"", "empty"], &spelled()).0,
        0
    );
}

#[test]
fn a_program_that_does_not_compile_or_recurses_is_64_never_a_crash() {
    for bad in [
        "select(",
        "nosuchfunction",
        "def f: 1+f; f",
        "def f: g; def g: 1 + f; f",
    ] {
        let (code, _, err) = filter(&[bad], &spelled());
        assert_eq!(code, 64, "{bad}: {err}");
        assert!(err.contains("filter:"), "{err}");
    }
}

#[test]
fn env_is_empty_and_halt_keeps_the_verdict() {
    let (_, out, _) = filter(&["--domain", "env, $ENV"], &spelled());
    assert!(String::from_utf8(out).unwrap().lines().all(|l| l == "{}"));
    // halt_error ends the program's output, not the judging: a cut stream
    // is still 65, a good one 0.
    let (code, out, _) = filter(&["--domain", ".id, halt_error"], &spelled());
    assert_eq!(code, 0);
    assert_eq!(out, b"12345678901234567890\n");
    let input = spelled();
    assert_eq!(filter(&["halt"], &input[..input.len() - 1]).0, 65);
}

#[test]
fn raw_output_args_and_domain_are_as_jq_has_them() {
    let (_, out, _) = filter(
        &["-r", "--domain", "select(.type==\"hit\") | .s"],
        &spelled(),
    );
    assert_eq!(String::from_utf8(out).unwrap(), "é\n\n😀\n");
    let (_, out, _) = filter(
        &["--arg", "t", "note", "select(.type == $t) | .id"],
        &spelled(),
    );
    assert_eq!(out, b"2\n");
    let (_, out, _) = filter(&["--domain", ".type"], &spelled());
    assert_eq!(out, b"\"hit\"\n\"note\"\n\"hit\"\n");
}

/// strip-envelope --type selects framework types too (it printed nothing
/// and exited 0 for `--type aoi:summary`).
#[test]
fn strip_envelope_type_selects_a_framework_type() {
    let out = run(&["strip-envelope", "--type", "aoi:summary"], &spelled());
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    assert!(out.stdout.contains(r#""type":"aoi:summary""#) && !out.stdout.contains("\"aoi\":"));
}

/// An event whose program errs many times is one finding, with the count,
/// on one line of the report.
#[test]
fn an_error_ends_the_events_outputs() {
    let (code, out, err) = filter(
        &["--domain", r#".id, (range(3) | error("a\nb"))"#],
        &spelled(),
    );
    assert_eq!(code, 65);
    let found: Vec<&str> = err.lines().filter(|l| l.contains("filter.error")).collect();
    assert_eq!(found.len(), 3, "one per domain event, one line each: {err}");
    // What came before the error is written; nothing after it.
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "12345678901234567890\n2\n3\n"
    );
    // An error that would come forever ends too (`tonumber` on "x").
    let (code, _, err) = filter(&[r#".type | tonumber"#], &spelled());
    assert_eq!(code, 65);
    assert_eq!(
        err.lines().filter(|l| l.contains("filter.error")).count(),
        5,
        "{err}"
    );
}

/// A halt ends the program's output, not --assert's judging.
#[test]
fn assert_still_judges_after_a_halt() {
    let (code, _, err) = filter(&["--assert", ".type != \"note\"", "halt"], &spelled());
    assert_eq!(code, 65, "{err}");
    assert!(err.contains(":3: error[filter.assert]"), "{err}");
}

/// `--arg ENV` cannot make `$ENV` other than {}, nor can an unusable name
/// be bound.
#[test]
fn arg_names_are_jq_names_and_never_env() {
    for bad in ["ENV", "a b", "", "1x", "$y"] {
        assert_eq!(
            filter(&["--arg", bad, "x", "."], &spelled()).0,
            64,
            "{bad:?}"
        );
    }
}

/// A program nested deep, and values made deep, run on filter's own large
/// stack instead of aborting on the main thread's.
#[test]
fn deep_programs_and_values_run_on_a_large_stack() {
    let deep = format!("1{}", "+1".repeat(5000));
    let (code, out, err) = filter(&["--domain", "--", &deep], &spelled());
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(b"5001\n"));
    let (code, out, _) = filter(
        &["--domain", "reduce range(10000) as $i (0; [.]) | length"],
        &spelled(),
    );
    assert_eq!((code, &out[..2]), (0, &b"1\n"[..]));
}

#[test]
fn an_assert_that_gives_no_value_fails() {
    let (code, _, err) = filter(&["--assert", "empty", "."], &spelled());
    assert_eq!(code, 65);
    assert!(err.contains("gave no value for this event"), "{err}");
}

/// The programs aoitap runs without jaq's interpreter write what the
/// interpreter writes: the same program, made one it must interpret.
#[test]
fn a_planned_program_writes_what_the_interpreter_writes() {
    let input = spelled();
    for (planned, interpreted) in [
        (
            r#"select(.type=="hit")"#,
            r#"select(.type=="hit") | if true then . else . end"#,
        ),
        (
            ".s, .id, .x, .y",
            "(.s, .id, .x, .y) | if true then . else . end",
        ),
        (
            r#"select(.id > 2 and .type != "x") | .aoi.seq"#,
            r#"select(.id > 2 and .type != "x") | .aoi | .seq | if true then . else . end"#,
        ),
        // An index jaq refuses: the event goes to the interpreter.
        (".aoi.run.x", ".aoi.run.x | if true then . else . end"),
        // More outputs than the plan holds: the interpreter streams them.
        (
            "(.,.)|(.,.)|(.,.)|(.,.)|(.,.)|(.,.)|(.,.)|.id",
            "(.,.)|(.,.)|(.,.)|(.,.)|(.,.)|(.,.)|(.,.)|.id | if true then . else . end",
        ),
    ] {
        let (a, b) = (filter(&[planned], &input), filter(&[interpreted], &input));
        assert_eq!(a.0, b.0, "{planned}: {} / {}", a.2, b.2);
        assert_eq!(
            String::from_utf8_lossy(&a.1),
            String::from_utf8_lossy(&b.1),
            "{planned}"
        );
        assert_eq!(a.2.lines().count(), b.2.lines().count(), "{}\n{}", a.2, b.2);
    }
}

/// The CPU time process `pid` has had so far, user and system, in clock
/// ticks (fields 14 and 15 of /proc/PID/stat, after the command's name).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    fields
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum()
}

/// A program busy on one event is stopped by SIGINT or SIGTERM at its
/// loop's next step or its next pipe, and the report still ends (docs/contract.md §3.4): the
/// cancelled result in human output, the cancelled summary in jsonl, well
/// before the 2 s after which a stop that hangs is cut short unreported.
#[test]
fn a_signal_stops_a_busy_program_and_the_report_ends() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let input = spelled();
    let first = input.iter().position(|&b| b == b'\n').unwrap() + 1;
    let busy = [
        "last(range(1e18))",
        "0 | until(false; . + 1)",
        "[repeat(1)] | length",
        "reduce range(1e15) as $x (0; . + 1)",
        "[0 | while(true; . + 1)] | length",
        "try last(range(1e15)) catch \"caught\"",
        "0 | [recurse(. + 1)] | length",
        // One step busy on large arrays: a signal is seen at its pipes.
        "[range(30000)] | [.[] as $x | .[] | select(. == $x)] | length",
        "[range(30000)] as $a | [$a[] as $x | $a[] as $y | $x * $y] | add",
        // The library's `paths`, walking with `..`, sees it too.
        "reduce range(100000) as $x (null; [.]) | [paths(type == \"null\")] | length",
    ];
    for (k, prog) in busy.iter().enumerate() {
        let (sig, status) = if k % 2 == 0 {
            ("INT", 130)
        } else {
            ("TERM", 143)
        };
        for format in ["human", "jsonl"] {
            let mut child = Command::new(bin())
                .args(["filter", "--output", format, prog])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            std::io::Write::write_all(&mut stdin, &input[..first]).unwrap();
            // Busy in the program: a tenth of a second of CPU had (its
            // start has next to none), however loaded the machine is.
            let deadline = Instant::now() + Duration::from_secs(10);
            while cpu_ticks(child.id()) < 10
                && child.try_wait().unwrap().is_none()
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            let sent = Instant::now();
            let kill = Command::new("kill")
                .args([&format!("-{sig}"), &child.id().to_string()])
                .status()
                .unwrap();
            assert!(kill.success());
            let out = child.wait_with_output().unwrap();
            let took = sent.elapsed();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(status), "{prog} {format}: {err}");
            assert!(took < Duration::from_millis(1500), "{prog}: {took:?}");
            if format == "human" {
                assert!(err.contains("Result: CANCELLED"), "{prog}: {err}");
            } else {
                let last = err.lines().last().unwrap_or_default();
                assert!(last.contains(r#""reason":"cancelled""#), "{prog}: {err}");
            }
            // Nothing is written after the stop, even by a program that
            // catches it; and the stop is no finding about the event.
            assert!(out.stdout.is_empty(), "{prog}: {:?}", out.stdout);
            assert!(!err.contains("filter.error"), "{prog}: {err}");
            drop(stdin);
        }
    }
}

/// jaq's errors quote values; a finding never quotes a secret, nor what a
/// program made of one.
#[test]
fn a_program_error_never_quotes_a_secret() {
    let input = lines(&[
        meta(),
        ev(
            1,
            "hit",
            r#""password":"hunter2","db_url":"https://u:pa55w0rd@h/x","nest":{"api_key":["k\u00e9y\nZ"]},"id":"doc-1""#,
        ),
        ok_summary(2, 1),
    ]);
    for program in [
        ".password + 1",
        ".db_url + 1",
        ".nest + 1",
        "error(.password)",
        ".nest.api_key[0] | error",
        ".password | ascii_upcase | . + 1",
        ".password[0:4] + 1",
    ] {
        let (code, _, err) = filter(&[program], &input);
        assert_eq!(code, 65, "{program}: {err}");
        assert!(err.contains("error[filter.error]"), "{program}: {err}");
        assert!(err.contains("not quoted"), "{program}: {err}");
        for secret in ["hunter2", "HUNTER2", "hunt", "pa55w0rd", "k\\u00e9y", "kéy"] {
            assert!(!err.contains(secret), "{program}: {err}");
        }
    }
    let (_, _, err) = filter(&["--assert", ".password == \"x\"", "."], &input);
    assert!(
        err.contains("error[filter.assert]") && !err.contains("hunter2"),
        "{err}"
    );
    // A secret that is a number, a meta.args flag's value, a URL's query.
    for (body, program) in [
        (r#""password":123456789"#, ".password | .a"),
        (r#""args":["--password","hunter2meta"]"#, ". + 1"),
        (
            r#""cb":"https://h.example/cb?access_token=QSECRET""#,
            ".cb + 1",
        ),
    ] {
        let input = lines(&[meta(), ev(1, "hit", body), ok_summary(2, 1)]);
        let (_, _, err) = filter(&[program], &input);
        assert!(err.contains("not quoted"), "{program}: {err}");
        for secret in ["123456789", "hunter2meta", "QSECRET"] {
            assert!(!err.contains(secret), "{program}: {err}");
        }
    }
    // A secret the program itself names is not quoted either.
    let plain = spelled();
    let (_, _, err) = filter(&[r#"error({db_secret: "hunter3"})"#], &plain);
    assert!(
        err.contains("not quoted") && !err.contains("hunter3"),
        "{err}"
    );
    // What is not secret is still said.
    let (_, _, err) = filter(&[".s + 1"], &plain);
    assert!(err.contains("cannot calculate"), "{err}");
}

#[test]
fn debug_prints_as_jq_and_a_lone_surrogate_is_one_replacement() {
    let input = spelled();
    let (_, out, err) = filter(&[r#"select(.id == 2) | debug | empty"#], &input);
    assert!(out.is_empty());
    assert!(
        err.contains(r#"["DEBUG:",{"aoi":{"seq":2,"run":"R"},"type":"note","id":2}]"#),
        "{err}"
    );
    let (_, _, err) = filter(&["--output", "jsonl", "debug | empty"], &input);
    assert!(err.lines().all(|l| l.starts_with(r#"{"type":"#)), "{err}");
    let lone = lines(&[ev(0, "hit", r#""s":"a\ud800b""#)]);
    let (_, out, _) = filter(&["-r", ".s"], &lone);
    assert_eq!(String::from_utf8(out).unwrap(), "a\u{FFFD}b\n");
}

/// stdout is the program's output: a refused command line in JSONL goes
/// to stderr with the report, and a file taken for PROG is said so.
#[test]
fn a_refusal_never_lands_in_the_data() {
    for args in [
        &["filter", "--output", "jsonl", "--nosuch", "."][..],
        &["filter", "--output", "tap", "."],
        &["strip-envelope", "--output", "jsonl", "--nosuch"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.code, 64, "{args:?}");
        assert_eq!(out.stdout, "", "{args:?}");
    }
    let out = run(&["filter", "--output", "jsonl", "--nosuch", "."], b"");
    assert!(
        out.stderr.contains(r#""type":"aoi:error""#),
        "{}",
        out.stderr
    );
    let file = fixture("streams/ok-complete.jsonl");
    let out = run(&["filter", file.to_str().unwrap()], b"");
    assert_eq!(out.code, 64);
    assert!(out.stderr.contains("PROG comes first"), "{}", out.stderr);
}

/// An event nested deeper than jq users meet is still filtered, as verify
/// still judges it.
#[test]
fn a_deep_event_is_filtered() {
    let deep = format!("{}{}", "[".repeat(600), "]".repeat(600));
    let input = lines(&[
        meta(),
        ev(1, "hit", &format!(r#""a":{deep}"#)),
        ok_summary(2, 1),
    ]);
    let (code, out, err) = filter(&["--domain", ".a | length"], &input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, b"1\n");
}

#[test]
fn csv_tsv_and_a_shadowed_def_are_jq_s_and_input_is_refused() {
    let input = spelled();
    let (code, out, err) = filter(
        &[
            "-r",
            r#"select(.type=="note") | [.id, "a\"b", null] | @csv, @tsv"#,
        ],
        &input,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(String::from_utf8_lossy(&out), "2,\"a\"\"b\",\n2\ta\"b\t\n");
    let (code, out, err) = filter(
        &[r#"select(.type=="note") | def g: def g: 3; g; g"#],
        &input,
    );
    assert_eq!((code, out), (0, b"3\n".to_vec()), "{err}");
    for prog in ["input", "[inputs]"] {
        let (code, _, err) = filter(&[prog], &input);
        assert_eq!(code, 64, "{prog}: {err}");
        assert!(err.contains("one event at a time"), "{err}");
    }
}

#[test]
fn a_jq_flag_gets_a_tip_that_reads_no_wrong_file() {
    for (flag, says) in [
        ("-e", "use --assert EXPR"),
        ("--jsonl", "aoitap filter --help"),
    ] {
        let (code, _, err) = filter(&[flag, "."], b"");
        assert_eq!(code, 64, "{err}");
        assert!(!err.contains(&format!("-- {flag}")), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(err.contains(&format!("'./{flag}'")), "{err}");
    }
}

/// A value the program builds past the depth an event may have is
/// filter.error on its line, never an abort (docs/contract.md §3.4): printed,
/// quoted in an error, turned to text; the stream's verdict stays.
#[test]
fn a_million_deep_value_is_a_finding_never_an_abort() {
    let deep = &nested(1_000_000);
    for (prog, written) in [
        (deep.to_string(), None),
        (format!("{deep} | error"), None),
        (format!("{deep} | {{a: .}} | .a | length"), Some("1\n")),
    ] {
        let (code, out, err) = filter(&["--domain", &prog], &one_event());
        match written {
            None => {
                assert_eq!(code, 65, "{prog}: {err}");
                assert!(err.contains("error[filter.error]"), "{prog}: {err}");
                assert!(out.is_empty(), "{prog}");
                // An error's text is cut, not all million levels.
                assert!(err.len() < 64 * 1024, "{prog}: {} bytes", err.len());
            }
            Some(w) => {
                assert_eq!(code, 0, "{prog}: {err}");
                assert_eq!(String::from_utf8_lossy(&out), w, "{prog}");
            }
        }
    }
    // What prints or walks a value inside the program is an error past
    // that depth too, never an abort (at 3,000,000 levels these overflowed
    // the stack: exit 134).
    for then in [
        "tojson", "tostring", "@text", "@json", "walk(.)", "debug", "stderr",
    ] {
        let prog = format!("{deep} | {then} | length");
        let (code, _, err) = filter(&["--domain", &prog], &one_event());
        assert_eq!(code, 65, "{prog}: {err}");
        assert!(
            err.contains("nests deeper than 100000 levels"),
            "{prog}: {err}"
        );
    }
    let (code, out, err) = filter(
        &[
            "--domain",
            "-c",
            "[1,[2]] | tojson, tostring, @json, walk(.)",
        ],
        &spelled(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(b"\"[1,[2]]\"\n\"[1,[2]]\"\n\"[1,[2]]\"\n[1,[2]]\n"));
    // The verdict of a cut stream is kept beside the finding.
    let mut cut = one_event();
    cut.truncate(
        cut[..cut.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1,
    );
    let (code, _, err) = filter(&["--domain", deep], &cut);
    assert_eq!(code, 65, "{err}");
    assert!(
        err.contains("filter.error") && err.contains("summary.missing"),
        "{err}"
    );
}

/// Every format string and interpolation prints its value by recursion
/// in jaq: on a value built 2,000,000 deep each is filter.error, never an
/// abort (exit 134 before: a stack overflow), and so is `..`
/// (docs/contract.md §3.4). On a shallow value each is what jq makes it.
#[test]
fn formats_and_interpolations_on_a_two_million_deep_value_are_errors() {
    let deep = nested(2_000_000);
    // Uncaught, the refusal is filter.error on its line, nothing written:
    // a format, an interpolation and `..`, each bounded its own way.
    for then in ["@base64", r#""\(.)""#, "[..]"] {
        let prog = format!("{deep} | {then} | length");
        let (code, out, err) = filter(&["--domain", &prog], &one_event());
        assert_eq!(code, 65, "{prog}: {err}");
        assert!(out.is_empty(), "{prog}");
        assert!(err.contains("error[filter.error]"), "{prog}: {err}");
    }
    // Every one of them, in turn on one value built once: each refuses
    // it, and the process lives on to the next. An unbounded one aborts
    // the process (the stack, at this depth), or prints the value.
    let refused = [
        "@base64",
        "@base64d",
        "@uri",
        "@urid",
        "@html",
        "@htmld",
        "@sh",
        "@text",
        "@json",
        "@csv",
        "@tsv",
        r#""\(.)""#,
        r#""x\(.)y""#,
        r#"@base64 "x\(.)""#,
        r#"{"k\(.)": 1}"#,
        r#".["\(.)"]?"#,
        r#""\("\(.)")""#,
        "[..]",
        ".. |= .",
        "[path(..)]",
        "[paths]",
        "[paths(type == \"null\")]",
        "[.] | join(\",\")",
        "strftime(\"%Y\")",
        "strflocaltime(\"%Y\")",
        "mktime",
        "tobytes",
    ];
    let each: Vec<String> = refused
        .iter()
        .map(|then| format!(r#"(try ({then} | length) catch "refused")"#))
        .collect();
    let prog = format!("{deep} | {}", each.join(", "));
    let (code, out, err) = filter(&["--domain", "-c", &prog], &one_event());
    assert_eq!(code, 0, "{prog}: {err}");
    assert_eq!(
        String::from_utf8_lossy(&out),
        "\"refused\"\n".repeat(refused.len()),
        "{prog}"
    );
    // An error caught about such a value is text cut at 8 KiB: jaq made
    // it whole, by recursion, and aborted (vendor/jaq-core/PATCHES.md).
    let caught = [
        "try .a catch 1",
        "(.a? // 1)",
        "try fromjson catch 1",
        "try (. + 1) catch 1",
        "try test(\"a\") catch 1",
        "try implode catch 1",
        "[try .a catch length | . <= 8195] | if .[0] then 1 else 0 end",
    ];
    let each: Vec<String> = caught.iter().map(|c| format!("({c})")).collect();
    let prog = format!("{deep} | {}", each.join(", "));
    let (code, out, err) = filter(&["--domain", &prog], &one_event());
    assert_eq!(code, 0, "{prog}: {err}");
    assert_eq!(String::from_utf8_lossy(&out), "1\n".repeat(caught.len()));
    let (code, out, err) = filter(
        &[
            "--domain",
            "-c",
            r#"{a: [1, "x y"]} | "v=\(.a)", @base64 "\(.a)", @sh "echo \(.a[1])", @html "<\(.a)>", [..], (.. |= (numbers |= . + 1))"#,
        ],
        &spelled(),
    );
    assert_eq!(code, 0, "{err}");
    let (_, joined, _) = filter(
        &[
            "--domain",
            "-c",
            r#"["a", 1, null, true] | join("-"), ([[1]] | try join(",") catch "refused")"#,
        ],
        &spelled(),
    );
    // jq's join: null is empty, an array is refused.
    assert!(
        joined.starts_with(b"\"a-1--true\"\n\"refused\"\n"),
        "{:?}",
        String::from_utf8_lossy(&joined)
    );
    let first = String::from_utf8_lossy(&out);
    let first: Vec<&str> = first.lines().take(6).collect();
    assert_eq!(
        first,
        [
            r#""v=[1,\"x y\"]""#,
            r#""WzEsInggeSJd""#,
            r#""echo 'x y'""#,
            r#""<[1,&quot;x y&quot;]>""#,
            r#"[{"a":[1,"x y"]},[1,"x y"],1,"x y"]"#,
            r#"{"a":[2,"x y"]}"#,
        ]
    );
}

/// A field nested 99,990 deep is read (not refused) and made a value in
/// one pass: the old conversion found each level's end afresh, 26 s for
/// this line; benches/deep.sh measures it against verify.
#[test]
fn a_field_99990_deep_is_read() {
    let n = 99_990;
    let input = lines(&[
        meta(),
        ev(
            1,
            "hit",
            &format!(r#""d":{}1{}"#, "[".repeat(n), "]".repeat(n)),
        ),
        ok_summary(2, 1),
    ]);
    let (code, out, err) = filter(&["--domain", ".d[0][0] | length"], &input);
    assert_eq!((code, out), (0, b"1\n".to_vec()), "{err}");
    let (code, out, err) = filter(&["--domain", ".d | tojson | length"], &input);
    assert_eq!(
        (code, out),
        (0, format!("{}\n", 2 * n + 1).into_bytes()),
        "{err}"
    );
    // One past the limit is refused on its line, the rest filtered.
    let over = 100_001;
    let input = lines(&[
        meta(),
        ev(
            1,
            "hit",
            &format!(r#""d":{}{}"#, "[".repeat(over), "]".repeat(over)),
        ),
        ev(2, "hit", r#""d":1"#),
        ok_summary(3, 2),
    ]);
    let (code, out, err) = filter(&["--domain", ".d"], &input);
    assert_eq!((code, out), (65, b"1\n".to_vec()), "{err}");
    assert!(
        err.contains(":2: error[filter.error]: the event nests deeper than 100000 levels"),
        "{err}"
    );
}

/// `input_filename` is the FILE being read, null for stdin; `$__loc__`
/// is where it stands in the program, as jq gives them (docs/contract.md §3.4).
#[test]
fn input_filename_and_loc_are_jq_s() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    std::fs::write(&a, spelled()).unwrap();
    let a = a.to_str().unwrap();
    let out = run(
        &["filter", "--domain", "-c", "input_filename", a, "-"],
        &spelled(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = format!(
        "{0}\n{0}\n{0}\nnull\nnull\nnull\n",
        serde_json::to_string(a).unwrap()
    );
    assert_eq!(out.stdout, want);
    let prog = "select(.type == \"note\") | $__loc__,\n  \"at \\($__loc__.line)\", \"$__loc__\"";
    // The object shorthand, as jq reads it.
    let (code, out, err) = filter(
        &["-c", r#"select(.type == "note") | {a: 1, $__loc__}"#],
        &spelled(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        b"{\"a\":1,\"__loc__\":{\"file\":\"<top-level>\",\"line\":1}}\n"
    );
    // A syntax error is placed in the program as written.
    let (code, _, err) = filter(&["{$__loc__"], &spelled());
    assert_eq!(code, 64);
    assert!(err.contains("at byte 10"), "{err}");
    let (code, out, err) = filter(&["-c", prog], &spelled());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out),
        "{\"file\":\"<top-level>\",\"line\":1}\n\"at 2\"\n\"$__loc__\"\n"
    );
}

/// `filter --help` says what is refused and why.
#[test]
fn filter_help_lists_what_is_refused() {
    let out = run(&["filter", "--help"], b"");
    assert_eq!(out.code, 0);
    let help = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "Refused, with status 64",
        "a definition that calls itself",
        "input and inputs (the program runs on one event at a time)",
        "there is no -e",
        "input_filename is the FILE being read (null for stdin)",
    ] {
        assert!(help.contains(said), "{said}: {help}");
    }
}

/// The filter's stack is reserved whole (1 GiB of address space, used only
/// as deep as a value goes): under a lower `ulimit -v` it cannot start,
/// and says why, 74, never a crash.
#[test]
fn under_a_low_address_space_limit_the_filter_says_why_it_cannot_start() {
    let script = format!(
        "ulimit -v 1000000 && echo '{{}}' | '{}' filter .",
        bin().display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert!(
        err.contains("reserves 1 GiB") && err.contains("ulimit -v"),
        "{err}"
    );
}
