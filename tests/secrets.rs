//! Secrets (docs/contract.md §7.1): every exposed `_secret` found and named by its
//! key path, never printed, and `--redact` writing "***" over exactly the
//! secret bytes.

use crate::util::*;

/// The secret strings in `fixtures/secrets/leaky.jsonl`: no report may
/// ever hold one.
const SECRETS: [&str; 5] = ["sk-live-abc123", "hunter2", "c0de42", "t0k3n", "\"x\""];

fn leaky() -> Vec<u8> {
    std::fs::read(fixture("secrets/leaky.jsonl")).unwrap()
}

fn assert_no_secret(what: &str, text: &str) {
    for s in &SECRETS[..4] {
        assert!(!text.contains(s), "{what} printed the secret {s}:\n{text}");
    }
}

#[test]
fn every_exposed_value_is_one_finding() {
    let out = verify(&[], &leaky());
    assert_eq!(out.code, 65);
    let found: Vec<(String, u64)> = out
        .findings()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("secret."))
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["line_number"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("secret.exposed".to_string(), 2),
            ("secret.exposed".to_string(), 3),
            ("secret.url-exposed".to_string(), 4),
            ("secret.url-exposed".to_string(), 4),
        ]
    );
}

#[test]
fn no_report_holds_a_secret() {
    let input = leaky();
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["verify"],
        vec!["verify", "--output", "jsonl"],
        vec!["summarize"],
        vec!["summarize", "--output", "json"],
        vec!["summarize", "--output", "jsonl"],
        vec!["reconcile"],
        vec!["reconcile", "--output", "jsonl"],
        vec!["strip-envelope", "--redact"],
        vec!["verify", "--relay", "--redact"],
    ] {
        let out = run(&args, &input);
        assert_eq!(out.code, 65, "{args:?}");
        assert_no_secret(&format!("{args:?} stdout"), &out.stdout);
        assert_no_secret(&format!("{args:?} stderr"), &out.stderr);
    }
    let d = dir.path().join("runs");
    let out = run(
        &["split-by-run", "--redact", "--dir", d.to_str().unwrap()],
        &input,
    );
    assert_no_secret("split-by-run", &(out.stdout + &out.stderr));
    let file = std::fs::read_to_string(d.join("run-R.jsonl")).unwrap();
    assert_no_secret("split-by-run --redact file", &file);
}

#[test]
fn relay_redact_changes_only_the_secret_bytes() {
    let input = leaky();
    let out = run(&["verify", "--relay", "--redact"], &input);
    assert_eq!(out.code, 65);
    let want = String::from_utf8(input.clone())
        .unwrap()
        .replace(r#""sk-live-abc123""#, r#""***""#)
        .replace(r#"{"user":"x","pw":"hunter2"}"#, r#""***""#)
        .replace("code_secret=c0de42", "code_secret=***")
        .replace("token_secret=t0k3n", "token_secret=***");
    assert_eq!(out.stdout, want);
    // What comes out is clean by aoitap's own rules.
    let again = verify(&[], out.stdout.as_bytes());
    assert_eq!(again.code, 0, "{:?}", again.rules());
    // Without --redact the relay is byte for byte, secrets and all.
    let plain = run(&["verify", "--relay"], &input);
    assert_eq!(plain.stdout.as_bytes(), &input[..]);
}

#[test]
fn strip_and_split_redact() {
    let out = run(&["strip-envelope", "--redact"], &leaky());
    assert!(
        out.stdout
            .contains(r#""api_key_secret":"***","user":"ann"}"#),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("\"aoi\""), "{}", out.stdout);
    // Without --redact, strip-envelope passes the values on (and exits 65).
    let out = run(&["strip-envelope"], &leaky());
    assert_eq!(out.code, 65);
    assert!(out.stdout.contains("sk-live-abc123"));
}

#[test]
fn redacted_and_unmarked_values_pass() {
    // An AFDATA startup log that redacted its secret.
    let afdata = std::fs::read(fixture("streams/afdata-upload.jsonl")).unwrap();
    assert!(String::from_utf8_lossy(&afdata).contains(r#""api_key_secret":"***""#));
    assert_eq!(verify(&[], &afdata).code, 0);
    // Only _secret and _SECRET mark a secret; a URL without secrets is fine.
    let mut g = good(1);
    g.insert(
        1,
        ev(
            1,
            "x",
            r#""a_Secret":"v","secret":"v","home_url":"https://h/?page=2#top","rel_url":"/cb?x=1""#,
        ),
    );
    let last = g.len() - 1;
    g[last] = ok_summary(3, 2);
    g[2] = hit(2);
    let out = verify(&[], &lines(&g));
    assert!(
        !out.rules().iter().any(|r| r.starts_with("secret.")),
        "{:?}",
        out.rules()
    );
}

#[test]
fn secret_names_escapes_and_depth() {
    let line = |rest: &str| lines(&[meta(), ev(1, "x", rest), ok_summary(2, 1)]);
    // --secret-name: exact names, in keys and in URL parameters.
    let input = line(r#""token":"abc","t_url":"https://h/?token=abc""#);
    assert!(!verify(&[], &input).has_rule("secret.exposed"));
    let out = verify(&["--secret-name", "token"], &input);
    assert!(out.has_rule("secret.exposed") && out.has_rule("secret.url-exposed"));
    // An escaped key is its decoded name.
    assert!(verify(&[], &line(r#""api_key\u005fsecret":"v""#)).has_rule("secret.exposed"));
    // A connection string without a scheme, holding @: replaced whole.
    let input = line(r#""db_url":"user:pass@host:5432/db""#);
    let out = run(&["verify", "--relay", "--redact"], &input);
    assert!(out.stdout.contains(r#""db_url":"***""#), "{}", out.stdout);
    // Deep inside arrays and objects: found, with its path, no stack
    // overflow however deep.
    let deep = format!(
        "{}{{\"k_secret\":1}}{}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let out = verify(&[], &line(&format!(r#""d":{deep}"#)));
    assert!(out.has_rule("secret.exposed"), "{:?}", out.rules());
    let out = verify(&[], &line(r#""a":{"b":[0,{"c_secret":[1]}]}"#));
    let f = out
        .findings()
        .into_iter()
        .find(|f| f["rule"] == "secret.exposed")
        .unwrap();
    assert!(
        f["message"].as_str().unwrap().contains("a.b[1].c_secret"),
        "{f}"
    );
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Lines of `data`, each with its `\n` (a cut last line without).
fn split_lines(data: &[u8]) -> Vec<&[u8]> {
    data.split_inclusive(|&b| b == b'\n').collect()
}

/// Streams whose line 2 cannot be parsed and holds `"api_secret":"HUNTER2"`:
/// (what it is, the stream, extra flags, the rule that says why it is
/// withheld).
fn unparsable_secrets() -> Vec<(&'static str, Vec<u8>, Vec<&'static str>, &'static str)> {
    let env = r#"{"type":"x","aoi":{"seq":1,"run":"R"},"#;
    let with = |bad: &[u8]| {
        let mut v = lines(&[meta()]);
        v.extend_from_slice(bad);
        v.push(b'\n');
        v.extend(lines(&[ok_summary(2, 1)]));
        v
    };
    let mut utf8 = format!(r#"{env}"api_secret":"HUNTER2"#).into_bytes();
    utf8.extend_from_slice(b"\xff\"}");
    let long = format!(
        r#"{env}"pad":"{}","api_secret":"HUNTER2"}}"#,
        "a".repeat(5000)
    );
    let mut cut = lines(&[meta()]);
    cut.extend_from_slice(format!(r#"{env}"api_secret":"HUNTER2"}}"#).as_bytes());
    vec![
        (
            "a trailing comma",
            with(format!(r#"{env}"api_secret":"HUNTER2",}}"#).as_bytes()),
            vec![],
            "secret.exposed",
        ),
        ("invalid UTF-8", with(&utf8), vec![], "secret.exposed"),
        (
            "like an elision marker",
            with(br#"[... 1 line omitted ...] {"api_secret":"HUNTER2"}"#),
            vec![],
            "secret.exposed",
        ),
        (
            "a --marker marker",
            with(br#"<<cut 1>> "api_secret" : "HUNTER2""#),
            vec!["--marker", r"^<<cut (\d+)>>"],
            "secret.exposed",
        ),
        (
            "over --max-line-bytes, the key past the cap",
            with(long.as_bytes()),
            vec!["--max-line-bytes", "1000"],
            "line.too-long",
        ),
        ("a cut last line", cut, vec![], "secret.exposed"),
    ]
}

/// The finding on line 2 that says the line was withheld, and why.
fn withheld_finding(stderr: &str, rule: &str, what: &str) {
    let found = stderr
        .lines()
        .filter(|l| l.contains(":2: "))
        .any(|l| l.contains(&format!("[{rule}]")) && l.contains("withheld from the output"));
    assert!(
        found,
        "{what}: no {rule} finding on line 2 saying it was withheld:\n{stderr}"
    );
}

#[test]
fn relay_redact_withholds_an_unparsable_line_with_a_secret() {
    for (what, input, extra, rule) in unparsable_secrets() {
        let mut args = vec!["verify", "--relay", "--redact"];
        args.extend(&extra);
        let (code, out, stderr) = raw(&args, &input);
        assert_eq!(code, 65, "{what}");
        assert!(!contains(&out, b"HUNTER2"), "{what}: relayed the secret");
        assert!(!stderr.contains("HUNTER2"), "{what}: reported the secret");
        withheld_finding(&stderr, rule, what);
        // Line for line: the one withheld is a placeholder with the
        // line's own ending, every other byte as it came.
        let (have, want) = (split_lines(&out), split_lines(&input));
        assert_eq!(
            have.len(),
            want.len(),
            "{what}: {}",
            String::from_utf8_lossy(&out)
        );
        for (k, (h, w)) in have.iter().zip(&want).enumerate() {
            if k == 1 {
                assert_eq!(h.ends_with(b"\n"), w.ends_with(b"\n"), "{what}");
            } else {
                assert_eq!(h, w, "{what}: line {}", k + 1);
            }
        }
        // The placeholder reads as the line did: not an event, one step of
        // seq (a marker: none), so the output counts the gaps the input does.
        let again = verify(&extra, &out);
        let before = verify(&extra, &input);
        assert!(!again.has_rule("secret.exposed"), "{what}");
        for rule in [
            "seq.gap",
            "summary.event-count-mismatch",
            "line.elided",
            "summary.missing",
        ] {
            assert_eq!(
                again.has_rule(rule),
                before.has_rule(rule),
                "{what}: {rule}: {:?} from {:?}",
                again.rules(),
                before.rules()
            );
        }
    }
}

#[test]
fn split_and_strip_redact_withhold_an_unparsable_line_with_a_secret() {
    for (what, input, extra, rule) in unparsable_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("runs");
        let mut args = vec!["split-by-run", "--redact", "--dir", d.to_str().unwrap()];
        args.extend(&extra);
        let (_, out, stderr) = raw(&args, &input);
        withheld_finding(&stderr_or(&out, &stderr), rule, what);
        let file = std::fs::read(d.join("run-R.jsonl")).unwrap();
        assert!(
            !contains(&file, b"HUNTER2"),
            "{what}: split wrote the secret"
        );
        assert!(contains(&file, meta().as_bytes()), "{what}");
        if rule == "secret.exposed" && input.ends_with(b"\n") {
            // A line the plain split writes is there, as a placeholder.
            assert_eq!(split_lines(&file).len(), 3, "{what}");
        }
        let mut args = vec!["strip-envelope", "--redact", "--keep-framework"];
        args.extend(&extra);
        let (code, out, stderr) = raw(&args, &input);
        assert_eq!(code, 65, "{what}");
        assert!(
            !contains(&out, b"HUNTER2"),
            "{what}: strip wrote the secret"
        );
        assert!(!stderr.contains("HUNTER2"), "{what}");
        withheld_finding(&stderr, rule, what);
    }
}

/// split-by-run reports on stdout.
fn stderr_or(out: &[u8], stderr: &str) -> String {
    format!("{}{stderr}", String::from_utf8_lossy(out))
}

#[test]
fn relay_redact_passes_an_unparsable_line_without_a_secret_as_it_came() {
    let env = r#"{"type":"x","aoi":{"seq":1,"run":"R"},"#;
    let mut bad_utf8 = format!(r#"{env}"name":"caf"#).into_bytes();
    bad_utf8.extend_from_slice(b"\xe9\"}");
    for bad in [
        format!(r#"{env}"n":1,}}"#).into_bytes(),
        bad_utf8,
        format!(r#"{env}"a_secret":"***",}}"#).into_bytes(),
        format!(r#"{env}"home_url":"https://h/?page=2",}}"#).into_bytes(),
        b"[... 1 line omitted ...]".to_vec(),
        // A name that does not end in _secret.
        b"plain text: api_secrets = x".to_vec(),
    ] {
        let mut input = lines(&[meta()]);
        input.extend_from_slice(&bad);
        input.push(b'\n');
        input.extend(lines(&[ok_summary(2, 1)]));
        let (_, out, stderr) = raw(&["verify", "--relay", "--redact"], &input);
        assert_eq!(out, input, "{}", String::from_utf8_lossy(&bad));
        assert!(!stderr.contains("secret.exposed"), "{stderr}");
        // A cut last line too, without its newline, as --relay alone does.
        let mut cut = lines(&[meta()]);
        cut.extend_from_slice(&bad);
        let (_, out, _) = raw(&["verify", "--relay", "--redact"], &cut);
        assert_eq!(out, cut, "{}", String::from_utf8_lossy(&bad));
    }
}

#[test]
fn unparsable_secret_keys_are_found_as_a_parser_would_name_them() {
    let env = r#"{"type":"x","aoi":{"seq":1,"run":"R"},"#;
    for (bad, extra) in [
        // An escaped key is its decoded name.
        (format!(r#"{env}"api\u005fsecret":"v",}}"#), vec![]),
        (format!(r#"{env}"API_SECRET" :	"v",}}"#), vec![]),
        (
            format!(r#"{env}"token":"v",}}"#),
            vec!["--secret-name", "token"],
        ),
        // A stray quote earlier does not hide the key after it.
        (format!(r#"{env}"a":"x"y","k_secret":"v"}}"#), vec![]),
        (
            format!(r#"{env}"x":{{"deep":[{{"k_secret":null}}]}},}}"#),
            vec![],
        ),
        // A _url with a password, or cut inside its value.
        (format!(r#"{env}"db_url":"https://u:pw@h/",}}"#), vec![]),
        (format!(r#"{env}"cb_url":"https://h/?t_secret=v"#), vec![]),
        (format!(r#"{env}"k_secret":"#), vec![]),
        // Valid JSON that is not an object.
        (r#"[{"k_secret":"v"}]"#.to_string(), vec![]),
    ] {
        let mut input = lines(&[meta()]);
        input.extend_from_slice(bad.as_bytes());
        input.push(b'\n');
        input.extend(lines(&[ok_summary(2, 1)]));
        let mut args = vec!["verify", "--relay", "--redact"];
        args.extend(&extra);
        let (_, out, stderr) = raw(&args, &input);
        assert!(!contains(&out, bad.as_bytes()), "{bad}: relayed");
        withheld_finding(&stderr, "secret.exposed", &bad);
        // Without --redact the finding stands, in every command.
        let out = verify(&extra, &input);
        assert!(out.has_rule("secret.exposed"), "{bad}: {:?}", out.rules());
    }
}

/// A stream whose `aoi:meta` echoes `args` (after `IDENTITY`), and the
/// same stream as `--redact` must write it.
fn meta_args(args: &str, redacted: &str) -> (Vec<u8>, Vec<u8>) {
    let with = |a: &str| {
        let meta = ev(0, "aoi:meta", &format!(r#"{IDENTITY},"command":"c",{a}"#));
        lines(&[meta, hit(1), ok_summary(2, 1)])
    };
    (with(args), with(redacted))
}

#[test]
fn redact_writes_over_sensitive_meta_args() {
    let cases = [
        // argv: the value after a sensitive flag, after `--flag=`, a URL's
        // password and sensitive query value; the rest as it came.
        meta_args(
            r#""args":["search","--token","tok-AAA","--limit","5","--password=pw-BBB","https://u:pw-CCC@h.example/x?sig=sig-DDD&page=2","--author","kim","--key","$KEY"]"#,
            r#""args":["search","--token","***","--limit","5","--password=***","https://u:***@h.example/x?sig=***&page=2","--author","kim","--key","$KEY"]"#,
        ),
        // Named values, and a string written with escapes (whole).
        meta_args(
            r#""args":{"api_key":"key-EEE","cb":"ftp://a:pw-FFF@h/","q":"x","secret":"pw\u002dGGG"}"#,
            r#""args":{"api_key":"***","cb":"ftp://a:***@h/","q":"x","secret":"***"}"#,
        ),
        meta_args(
            r#""args":["--client-secret=pw\u002dHHH", "-p" ,"--auth" , "tok-III"]"#,
            r#""args":["***", "-p" ,"--auth" , "***"]"#,
        ),
        // A query parameter named as §11 names secrets, not only as URLs do.
        meta_args(
            r#""args":["fetch","https://h.example/x?api_secret=sec-JJJ&page=2"]"#,
            r#""args":["fetch","https://h.example/x?api_secret=***&page=2"]"#,
        ),
    ];
    let secrets = [
        "AAA", "BBB", "CCC", "DDD", "EEE", "FFF", "GGG", "HHH", "III", "JJJ",
    ];
    let clean = |what: &str, out: &[u8]| {
        for s in secrets {
            assert!(!contains(out, s.as_bytes()), "{what} wrote {s}");
        }
        for l in split_lines(out) {
            serde_json::from_slice::<serde_json::Value>(l)
                .unwrap_or_else(|e| panic!("{what}: not JSON ({e})"));
        }
    };
    for (input, want) in cases {
        assert!(verify(&[], &input).has_rule("meta.args-unredacted"));
        let (code, out, stderr) = raw(&["verify", "--relay", "--redact"], &input);
        assert_eq!(code, 65, "{stderr}");
        clean("verify --relay --redact", &out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want)
        );
        let again = verify(&[], &out);
        assert_eq!(again.code, 0, "{:?}", again.rules());

        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("runs");
        raw(
            &["split-by-run", "--redact", "--dir", d.to_str().unwrap()],
            &input,
        );
        let file = std::fs::read(d.join("run-R.jsonl")).unwrap();
        clean("split-by-run --redact", &file);
        assert_eq!(file, want);

        let args = ["strip-envelope", "--redact", "--keep-framework"];
        let (_, out, _) = raw(&args, &input);
        clean("strip-envelope --redact", &out);
        let (_, plain, _) = raw(&["strip-envelope", "--keep-framework"], &want);
        assert_eq!(
            out, plain,
            "strip-envelope --redact is the stripped redaction"
        );
    }
}

#[test]
fn redact_writes_over_a_late_line_and_a_second_args() {
    // A line of a run already judged (multi-run) is not the run's, but its
    // secret is written over all the same.
    let mut g = good(0);
    g.push(ev(2, "x", r#""api_secret":"late-AAA""#));
    let input = lines(&g);
    for args in [
        &["verify", "--multi-run", "--relay", "--redact"][..],
        &["strip-envelope", "--multi-run", "--redact"],
    ] {
        let (_, out, _) = raw(args, &input);
        assert!(!contains(&out, b"late-AAA"), "{args:?}");
        assert!(contains(&out, br#""api_secret":"***""#), "{args:?}");
    }
    // A second `args` member (parsers disagree which one is read) is
    // written over too.
    let (input, want) = meta_args(
        r#""args":["x"],"args":["--token","tok-BBB"]"#,
        r#""args":["x"],"args":["--token","***"]"#,
    );
    let (_, out, _) = raw(&["verify", "--relay", "--redact"], &input);
    assert_eq!(out, want);
}

/// Every output `--redact` writes for `input`: verify's relay and report,
/// split-by-run's report and files, run's relay and report (CMD is `cat`
/// of the stream), each as (what, bytes).
fn redacted_outputs(input: &[u8]) -> Vec<(String, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    let mut outs = vec![];
    let (_, out, err) = raw(&["verify", "--relay", "--redact"], input);
    outs.push(("verify --relay --redact stdout".to_string(), out));
    outs.push((
        "verify --relay --redact stderr".to_string(),
        err.into_bytes(),
    ));
    let d = dir.path().join("runs");
    let (_, out, err) = raw(
        &["split-by-run", "--redact", "--dir", d.to_str().unwrap()],
        input,
    );
    outs.push(("split-by-run --redact stdout".to_string(), out));
    outs.push(("split-by-run --redact stderr".to_string(), err.into_bytes()));
    for f in std::fs::read_dir(&d).into_iter().flatten() {
        let f = f.unwrap().path();
        outs.push((
            format!("split-by-run file {f:?}"),
            std::fs::read(&f).unwrap(),
        ));
    }
    let stream = dir.path().join("stream.jsonl");
    std::fs::write(&stream, input).unwrap();
    let (_, out, err) = raw(
        &["run", "--redact", "--", "cat", stream.to_str().unwrap()],
        b"",
    );
    outs.push(("run --redact stdout".to_string(), out));
    outs.push(("run --redact stderr".to_string(), err.into_bytes()));
    outs
}

/// No output of `--redact` holds `secret`, and verify's report says line
/// `line` was withheld.
fn withheld_everywhere(what: &str, input: &[u8], secret: &str, line: usize) {
    for (out, bytes) in redacted_outputs(input) {
        assert!(
            !contains(&bytes, secret.as_bytes()),
            "{what}: {out} holds {secret}:\n{}",
            String::from_utf8_lossy(&bytes)
        );
    }
    let (_, _, stderr) = raw(&["verify", "--relay", "--redact"], input);
    let said = stderr
        .lines()
        .any(|l| l.contains(&format!(":{line}: ")) && l.contains("withheld from the output"));
    assert!(said, "{what}: line {line} not reported withheld:\n{stderr}");
}

#[test]
fn redact_withholds_an_unparsable_meta_whose_args_hold_a_secret() {
    let meta_with = |args: &[u8]| {
        let mut m = br#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"x.y","schema_version":"1.0.0","command":"c","#.to_vec();
        m.extend_from_slice(args);
        m
    };
    let stream = |meta: Vec<u8>| {
        let mut v = meta;
        v.push(b'\n');
        v.extend(lines(&[hit(1), ok_summary(2, 1)]));
        v
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "a trailing comma",
            stream(meta_with(br#""args":["--token","SEKRIT1"],}"#)),
        ),
        (
            "invalid UTF-8 beside --password=",
            stream(meta_with(b"\"args\":[\"--password=SEKRIT1\",\"\xff\"]}")),
        ),
        (
            "invalid UTF-8 beside a URL's password",
            stream(meta_with(b"\"args\":[\"https://u:SEKRIT1@h/\",\"\xfe\"]}")),
        ),
        (
            "an escaped args key",
            stream(meta_with(br#""\u0061rgs":["--token","SEKRIT1"],}"#)),
        ),
        (
            "the cut last line, valid JSON",
            meta_with(br#""args":["--token","SEKRIT1"]}"#),
        ),
    ];
    for (what, input) in cases {
        withheld_everywhere(what, &input, "SEKRIT1", 1);
    }
    // An unparsable line whose args hold nothing sensitive is relayed.
    let input = stream(meta_with(br#""args":["--author","kim","--limit","5"],}"#));
    let (_, out, _) = raw(&["verify", "--relay", "--redact"], &input);
    assert_eq!(out, input);
}

#[test]
fn redact_withholds_an_unparsable_line_naming_a_secret_outside_a_key() {
    for (what, bad) in [
        ("key=value text", b"api_secret=SEKRIT1".to_vec()),
        ("binary", b"\x00\x01api_secret\x02SEKRIT1\xfe".to_vec()),
        (
            "a marker-like line",
            b"[... 1 lines omitted ...] api_secret=SEKRIT1".to_vec(),
        ),
        (
            "an escaped name in a string",
            br#"{"note":"\"a_secret\": SEKRIT1",}"#.to_vec(),
        ),
    ] {
        let mut input = lines(&[meta()]);
        input.extend_from_slice(&bad);
        input.push(b'\n');
        input.extend(lines(&[ok_summary(2, 1)]));
        withheld_everywhere(what, &input, "SEKRIT1", 2);
    }
    // A plain elision marker is still a marker: no seq step, not withheld.
    let mut input = lines(&[meta()]);
    input.extend_from_slice(b"[... 1 line omitted ...]\n");
    input.extend(lines(&[ok_summary(2, 1)]));
    let (_, out, stderr) = raw(&["verify", "--relay", "--redact"], &input);
    assert_eq!(out, input);
    assert!(stderr.contains("line.elided"), "{stderr}");
    // A marker-like line with a secret is withheld, and read as it was
    // (the built-in forms claim no text after the marker: not a marker).
    let mut input = lines(&[meta()]);
    input.extend_from_slice(b"[... 1 lines omitted ...] api_secret=SEKRIT1\n");
    input.extend(lines(&[ok_summary(2, 1)]));
    let (_, out, _) = raw(&["verify", "--relay", "--redact"], &input);
    let mut before = verify(&[], &input).rules();
    before.retain(|r| r != "secret.exposed");
    assert_eq!(
        verify(&[], &out).rules(),
        before,
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[test]
fn redact_writes_over_args_as_a_string_nested_lists_and_headers() {
    let cases = [
        meta_args(
            r#""args":"--token SEKRIT1 --limit 5""#,
            r#""args":"--token *** --limit 5""#,
        ),
        meta_args(
            r#""args":[["--token","SEKRIT1"],["--limit","5"]]"#,
            r#""args":[["--token","***"],["--limit","5"]]"#,
        ),
        meta_args(
            r#""args":["-H","Authorization: Bearer SEKRIT1","-H","Accept: text/plain"]"#,
            r#""args":["-H","Authorization: ***","-H","Accept: text/plain"]"#,
        ),
        meta_args(
            r#""args":["--header=X-Api-Key: SEKRIT1"]"#,
            r#""args":["--header=X-Api-Key: ***"]"#,
        ),
    ];
    for (input, want) in cases {
        let what = String::from_utf8_lossy(&input).into_owned();
        let found = verify(&[], &input);
        assert!(
            found.has_rule("meta.args-unredacted"),
            "{what}: {:?}",
            found.rules()
        );
        for (out, bytes) in redacted_outputs(&input) {
            assert!(!contains(&bytes, b"SEKRIT1"), "{what}: {out} holds it");
        }
        let (_, out, _) = raw(&["verify", "--relay", "--redact"], &input);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want)
        );
        let again = verify(&[], &out);
        assert_eq!(again.code, 0, "{what}: {:?}", again.rules());
    }
}

#[test]
fn a_url_list_is_searched_url_by_url() {
    let input = lines(&[
        meta(),
        ev(
            1,
            "x",
            r#""db_url":["https://h/ok","https://user:SEKRIT1@h/db"]"#,
        ),
        ok_summary(2, 1),
    ]);
    let out = verify(&[], &input);
    assert!(out.has_rule("secret.url-exposed"), "{:?}", out.rules());
    for (what, bytes) in redacted_outputs(&input) {
        assert!(!contains(&bytes, b"SEKRIT1"), "{what} holds it");
    }
    let (_, out, _) = raw(&["verify", "--relay", "--redact"], &input);
    assert!(
        contains(
            &out,
            br#""db_url":["https://h/ok","https://user:***@h/db"]"#
        ),
        "{}",
        String::from_utf8_lossy(&out)
    );
    // Unparsable, it is withheld.
    let mut input = lines(&[meta()]);
    input.extend_from_slice(
        br#"{"type":"x","aoi":{"seq":1,"run":"R"},"db_url":["https://user:SEKRIT1@h/db"],}"#,
    );
    input.push(b'\n');
    input.extend(lines(&[ok_summary(2, 1)]));
    withheld_everywhere("an unparsable _url list", &input, "SEKRIT1", 2);
}

/// A secret-looking key that ends a line that cannot be parsed, its
/// value on the lines after (a key alone, with escapes, a `:` or an open
/// list): under `--redact` the lines after are withheld too, until the
/// value has been read (an object or string on the next line, a list to
/// its `]`); inside a pretty document, to its end (docs/contract.md §3.3).
/// Lines after the value are relayed as they came.
#[test]
fn a_value_after_a_secret_key_on_its_line_is_withheld() {
    let meta = r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"r"},"spec":"aoi-cli/1.0-alpha","tool":{"name":"t","version":"1"}}"#;
    let event = r#"{"type":"x","aoi":{"seq":1,"run":"r"}}"#;
    let cases: [(&str, &[&str]); 11] = [
        (
            "an escaped key alone",
            &[r#"junk "api\u005fsecret""#, r#"  : "HUNTER2""#],
        ),
        (
            "a key and its colon",
            &[r#"junk "db_secret":"#, r#"  "HUNTER2","#],
        ),
        (
            "a list opened",
            &[
                r#"junk "proxy_url": ["#,
                r#"  "https://u:HUNTER2@h/","#,
                "  ]",
            ],
        ),
        (
            "a key after a cut line",
            &["junk", r#"  "API_SECRET""#, "", "HUNTER2"],
        ),
        (
            "an object as the value",
            &[r#""api_secret":"#, r#"{"v":"HUNTER2"}"#],
        ),
        (
            "a list of objects",
            &[
                r#"j "api_secret": ["#,
                r#"{"v":"HUNTER2"},"#,
                r#"{"v":"HUNTER2"}"#,
                "]",
            ],
        ),
        (
            "a colon alone",
            &[r#"{"x":1, "API_SECRET"   "#, " : ", r#"["HUNTER2"]"#],
        ),
        (
            "a key inside a string",
            &[r#"{"x":"{\"api_secret\":"#, r#"\"HUNTER2\"}"}"#],
        ),
        (
            "a string left open",
            &[r#"{"x":1, "api_secret":"#, r#""x"#, "HUNTER2", r#"""#],
        ),
        (
            "a URL left open",
            &[r#"{"x":1, "db_url": ""#, "postgres://u:HUNTER2@h/db\""],
        ),
        ("a bare name", &["export API_SECRET", "HUNTER2"]),
    ];
    for (what, lines) in cases {
        let mut input = format!("{meta}\n");
        for l in lines {
            input += l;
            input += "\n";
        }
        input += &format!("{event}\nafter\n");
        let (_, out, stderr) = raw(&["verify", "--relay", "--redact"], input.as_bytes());
        let out = String::from_utf8_lossy(&out);
        assert!(
            !out.contains("HUNTER2"),
            "{what}: relayed the secret:\n{out}"
        );
        assert!(!stderr.contains("HUNTER2"), "{what}: {stderr}");
        assert_eq!(out.lines().count(), input.lines().count(), "{what}: {out}");
        assert!(out.ends_with(&format!("{event}\nafter\n")), "{what}: {out}");
    }
    // In a pretty document the key alone ends what is relayed of it.
    let doc = "{\n  \"ok\": true,\n  \"data\": {\n    \"api\\u005fsecret\"\n    : [\"HUNTER2\",\n      \"x\"]\n  }\n}\n";
    let (_, out, _) = raw(&["verify", "--relay", "--redact"], doc.as_bytes());
    let out = String::from_utf8_lossy(&out);
    assert!(!out.contains("HUNTER2"), "{out}");
    assert!(out.starts_with("{\n  \"ok\": true,\n"), "{out}");
}
