//! The guide's recipes past one machine (docs/contract.md §2.2), run as
//! written: the Spark recipe in `local[2]` mode over a few hundred
//! transcripts, reduced by `verify --multi-run`, its `run` events and
//! verdict held to those of `verify -j 2` over the same files; and the
//! DuckDB query over Spark's reports held to the same counts. pyspark
//! and duckdb (PyPI) are peers: skipped, and said, where they are not
//! installed, unless `AOITAP_PEERS=require` (CI installs them).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{bin, fixture, installed, peer};

/// The body of the fenced block after the guide's `<!-- recipe: NAME`.
fn recipe(name: &str) -> String {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md")).unwrap();
    let at = guide
        .find(&format!("<!-- recipe: {name}"))
        .unwrap_or_else(|| panic!("the guide has no {name} recipe"));
    let fence = at + guide[at..].find("\n```").unwrap() + 1;
    let body = fence + guide[fence..].find('\n').unwrap() + 1;
    let end = body + guide[body..].find("\n```").unwrap() + 1;
    guide[body..end].to_string()
}

fn python_has(modules: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `n` transcripts in `dir`: passing, retryable, cut, and an agent CLI's,
/// of three tools in all.
fn transcripts(dir: &Path, n: usize) -> Vec<PathBuf> {
    let kinds = [
        "streams/ok-complete.jsonl",
        "streams/retryable-failure.jsonl",
        "streams/no-summary.jsonl",
        "profiles/codex-exec/success-tool-calls.jsonl",
        "streams/spec-19-3-doctor.jsonl",
        "profiles/claude-stream/api-error-429.jsonl",
    ];
    (0..n)
        .map(|i| {
            let p = dir.join(format!("t{i:04}.jsonl"));
            std::fs::copy(fixture(kinds[i % kinds.len()]), &p).unwrap();
            p
        })
        .collect()
}

/// Each `run` event of the reports: (file, tool, verdict).
fn runs(reports: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = reports
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "run")
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (s("file"), s("tool"), s("verdict"))
        })
        .collect();
    out.sort();
    out
}

fn path_with_aoitap() -> String {
    format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The exit status of `aoitap verify -q --multi-run` over `reports`.
fn reduced(reports: &str) -> i32 {
    crate::util::run(&["verify", "-q", "--multi-run"], reports.as_bytes()).code
}

#[test]
fn the_spark_recipe_and_the_duckdb_query_agree_with_verify() {
    if !peer(
        installed("java") && python_has("pyspark, duckdb"),
        "java, pyspark and duckdb",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("t")).unwrap();
    let files = transcripts(&d.join("t"), 300);
    let list: String = files.iter().map(|p| format!("{}\n", p.display())).collect();
    std::fs::write(d.join("list.txt"), list).unwrap();
    std::fs::write(d.join("verify_on_spark.py"), recipe("spark")).unwrap();

    // The map, in Spark's local mode on two cores.
    let spark = Command::new("python3")
        .args(["verify_on_spark.py", "list.txt", "reports"])
        .current_dir(d)
        .env("PATH", path_with_aoitap())
        .env("PYSPARK_SUBMIT_ARGS", "--master local[2] pyspark-shell")
        .env("PYSPARK_PYTHON", "python3")
        .output()
        .unwrap();
    assert!(
        spark.status.success(),
        "spark: {}",
        String::from_utf8_lossy(&spark.stderr)
    );
    let mut parts: Vec<PathBuf> = std::fs::read_dir(d.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("part-")
        })
        .collect();
    parts.sort();
    assert!(parts.len() > 1, "one partition: nothing was shared out");
    let from_spark: String = parts
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();

    // The same files on one machine.
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let args: Vec<&str> = ["verify", "-j", "2", "--output", "jsonl"]
        .into_iter()
        .chain(names.iter().map(String::as_str))
        .collect();
    let local = crate::util::run(&args, b"");

    // Every run, with its tool and verdict, and the verdict they reduce to.
    let want = runs(&local.stdout);
    assert_eq!(want.len(), 300, "{}", local.stderr);
    let got = runs(&from_spark);
    assert!(
        got == want,
        "spark's runs differ: {} against {}; first: {:?}",
        got.len(),
        want.len(),
        got.iter().zip(&want).find(|(a, b)| a != b)
    );
    assert_eq!(reduced(&from_spark), reduced(&local.stdout));
    assert_eq!(
        reduced(&from_spark),
        1,
        "a cut and a failed transcript among them"
    );

    // DuckDB's counts over Spark's reports: those of verify -j 2's runs.
    let mut counts: BTreeMap<(String, String), i64> = BTreeMap::new();
    for (_, tool, verdict) in &want {
        *counts.entry((verdict.clone(), tool.clone())).or_default() += 1;
    }
    let query = recipe("duckdb");
    let first = &query[..query.find(';').unwrap() + 1];
    let script = "import duckdb, json, sys\nrows = duckdb.sql(sys.stdin.read()).fetchall()\n\
                  print(json.dumps([[v, t or '', n] for v, t, n in rows]))\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(first.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let rows: Vec<(String, String, i64)> = serde_json::from_slice(&out.stdout).unwrap();
    let got: BTreeMap<(String, String), i64> =
        rows.into_iter().map(|(v, t, n)| ((v, t), n)).collect();
    assert_eq!(got, counts);
    assert!(counts.len() >= 4, "verdicts and tools: {counts:?}");

    // The guide's account and reduce, as written after spark-submit: no
    // file unjudged; and with one partition's report lost, its files
    // named and the status 1 whatever the others say.
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md")).unwrap();
    let at = guide.find("spark-submit verify_on_spark.py").unwrap();
    let after = at + guide[at..].find('\n').unwrap() + 1;
    let reduce = &guide[after..after + guide[after..].find("```").unwrap()];
    let status = || {
        Command::new("bash")
            .args(["-c", reduce])
            .current_dir(d)
            .env("PATH", path_with_aoitap())
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(status(), Some(1));
    assert_eq!(std::fs::read(d.join("not-judged.txt")).unwrap(), b"");
    let lost = parts
        .iter()
        .find(|p| std::fs::metadata(p).unwrap().len() > 0)
        .unwrap();
    std::fs::write(lost, b"").unwrap();
    assert_eq!(status(), Some(1));
    let unjudged = std::fs::read_to_string(d.join("not-judged.txt")).unwrap();
    assert!(
        unjudged.lines().count() > 0,
        "a lost share's files are named"
    );
}
