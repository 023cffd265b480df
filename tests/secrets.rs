//! Secrets (DESIGN §10): every exposed `_secret` found and named by its
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
