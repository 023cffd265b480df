//! `--output sarif` (verify; docs/contract.md §5.2): SARIF 2.1.0, as GitHub code
//! scanning and Jenkins' warnings-ng read it.
//!
//! One SARIF run: the tool's driver with the whole rule catalogue as its
//! `rules` (id, default level, help text, spec anchor), and one result per
//! finding, located at its file's URI and line. Results are written as the
//! findings come, inside the `results` array the header opens, so a long
//! report is never held; the end closes it with the invocation's exit
//! status.
//!
//! For GitHub code scanning (docs/contract.md §5.3): the driver's
//! `informationUri`, the run's `automationDetails.id` (`aoitap/verify/`,
//! one category), and on every result a `partialFingerprints` entry that
//! is the same for the same finding on the same content and moves with
//! its line. A run that did not pass is a result of its own, of its
//! verdict's descriptor (`run.failed`, `run.retryable`,
//! `run.nonconforming`), at the line it began: these three follow the
//! catalogue in the driver's `rules`, and name verdicts, not findings (no
//! `--allow` reaches them).

use std::io::{self, Write};

use serde_json::{Value, json};

use super::identity::{INFORMATION_URI, TOOL, TOOL_VERSION};
use super::printer::{At, Local, Printer};
use super::words::of_run;
use crate::check::rules::{Rule, Severity};
use crate::check::{Finding, RunVerdict, Tally, Verdict};
use crate::exit::Exit;

/// The descriptors of a run's verdict, after the catalogue's rules: id,
/// level, what it means.
const VERDICTS: [(Verdict, &str, Severity, &str); 3] = [
    (
        Verdict::Failed,
        "run.failed",
        Severity::Error,
        "the run's producer reported that it failed (ok:false or its protocol's word)",
    ),
    (
        Verdict::Retryable,
        "run.retryable",
        Severity::Warning,
        "the run's producer reported a failure that may pass if tried again",
    ),
    (
        Verdict::Nonconforming,
        "run.nonconforming",
        Severity::Error,
        "the run broke its contract: its findings say where",
    ),
];

/// The ids of the verdicts' descriptors (`run.failed`, ...), which the
/// contract names beside the rules.
pub fn verdict_ids() -> impl Iterator<Item = &'static str> {
    VERDICTS.iter().map(|&(_, id, ..)| id)
}

/// The key of aoitap's own fingerprint in `partialFingerprints`.
const FINGERPRINT: &str = "aoitapFinding/v1";

pub struct Sarif<W> {
    out: W,
    results: u64,
    /// aoitap's own failures, said on stderr: the invocation did not
    /// execute whole.
    errors: u64,
}

impl<W: Write> Printer for Sarif<W> {
    fn begin(&mut self, _at: &At<'_>) -> io::Result<()> {
        self.head()
    }

    fn local(&mut self, _at: &At<'_>, l: &Local<'_>) -> io::Result<()> {
        self.errors += u64::from(!l.warning);
        Ok(())
    }

    fn finding(&mut self, at: &At<'_>, f: &Finding) -> io::Result<()> {
        let index = Rule::ALL.iter().position(|r| *r == f.rule).unwrap_or(0);
        let place = Place {
            rule: f.rule.id(),
            index,
            level: f.severity,
            line: f.line,
        };
        self.result(at.file, &place, &of_run(&f.message, &f.run))
    }

    fn run(&mut self, at: &At<'_>, r: &RunVerdict, _path: Option<&str>) -> io::Result<()> {
        let Some(k) = VERDICTS.iter().position(|(v, ..)| *v == r.verdict) else {
            return Ok(());
        };
        let (_, id, level, _) = VERDICTS[k];
        let place = Place {
            rule: id,
            index: Rule::ALL.len() + k,
            level,
            line: r.first_line,
        };
        self.result(at.file, &place, &of_run(&r.message, &r.run))
    }

    fn end(&mut self, _at: &At<'_>, exit: Exit, _tally: &Tally) -> io::Result<()> {
        // A signal stopped the reading: runs were left unjudged, so the
        // invocation did not execute whole (its exit code says which).
        let executed = self.errors == 0 && !exit.cancelled();
        self.finish(i32::from(exit.code()), executed)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> Sarif<W> {
    pub fn new(out: W) -> Sarif<W> {
        Sarif {
            out,
            results: 0,
            errors: 0,
        }
    }

    /// The log's head, up to the opening of `results`.
    fn head(&mut self) -> io::Result<()> {
        let mut rules: Vec<Value> = Rule::ALL.iter().map(|r| rule(*r)).collect();
        rules.extend(
            VERDICTS
                .iter()
                .map(|&(_, id, level, what)| verdict_rule(id, level, what)),
        );
        let driver = json!({
            "name": TOOL,
            "version": TOOL_VERSION,
            "semanticVersion": TOOL_VERSION,
            "informationUri": INFORMATION_URI,
            "rules": rules,
        });
        let automation = json!({"id": "aoitap/verify/"});
        let head = format!(
            "{{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\
             \"runs\":[{{\"tool\":{{\"driver\":{driver}}},\"automationDetails\":{automation},\
             \"columnKind\":\"unicodeCodePoints\",\"results\":["
        );
        self.out.write_all(head.as_bytes())
    }

    /// One result about the input `file`.
    fn result(&mut self, file: &str, at: &Place<'_>, message: &str) -> io::Result<()> {
        // SARIF lines count from 1: a finding about the whole input (line
        // 0) is placed at its start.
        let (uri, line) = (uri(file), at.line.max(1));
        let print = fingerprint(&[at.rule, &uri, &line.to_string(), message]);
        let result = json!({
            "ruleId": at.rule,
            "ruleIndex": at.index,
            "level": level(at.level),
            "message": {"text": sentence(message)},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": {"startLine": line},
                },
            }],
            "partialFingerprints": {FINGERPRINT: print},
        });
        if self.results > 0 {
            self.out.write_all(b",")?;
        }
        self.results += 1;
        let text = serde_json::to_string(&result).map_err(io::Error::other)?;
        self.out.write_all(text.as_bytes())
    }

    /// The log's end: the invocation, which ran whatever it found (an
    /// input that could not be read is a failed execution).
    fn finish(&mut self, exit_code: i32, executed: bool) -> io::Result<()> {
        let invocation = json!({"executionSuccessful": executed, "exitCode": exit_code});
        self.out
            .write_all(format!("],\"invocations\":[{invocation}]}}]}}\n").as_bytes())
    }
}

/// Where a result points: its rule (id and place in the driver's
/// `rules`), level and line.
struct Place<'a> {
    rule: &'a str,
    index: usize,
    level: Severity,
    line: u64,
}

/// A result's fingerprint: FNV-1a (64 bits) over its rule, file, line and
/// message, each ended by a NUL, in hex. The same finding on the same
/// content has the same one in every run of aoitap, of any build (a
/// fixed function, not std's seeded hasher); a line moved moves it.
fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(&[0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// A verdict's reporting descriptor.
fn verdict_rule(id: &str, level_of: Severity, what: &str) -> Value {
    json!({
        "id": id,
        "shortDescription": {"text": sentence(what)},
        "fullDescription": {"text": sentence(what)},
        "help": {"text": sentence(&format!("{what} (a run's verdict, docs/contract.md §4.1)"))},
        "defaultConfiguration": {"level": level(level_of)},
        "properties": {"spec": "AOI-CLI §9"},
    })
}

/// A catalogue rule as a SARIF reporting descriptor.
fn rule(r: Rule) -> Value {
    // A section by number is the AOI-CLI spec's.
    let anchor = match r.reference() {
        a if a.starts_with('§') => format!("AOI-CLI {a}"),
        a => a,
    };
    json!({
        "id": r.id(),
        "name": r.name(),
        "shortDescription": {"text": sentence(r.what())},
        "fullDescription": {"text": sentence(r.what())},
        "help": {"text": sentence(&format!("{} (where it is defined: {})", r.what(), anchor))},
        "defaultConfiguration": {"level": level(r.default_severity())},
        "properties": {"spec": anchor},
    })
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// SARIF messages are sentences (SARIF2001): one that does not end so
/// gets its full stop.
fn sentence(s: &str) -> String {
    let s = s.trim_end();
    if s.ends_with(['.', '!', '?']) {
        s.to_string()
    } else {
        format!("{s}.")
    }
}

/// A file's name as a URI reference (RFC 3986): relative names stay
/// relative (code scanning places them in the repository), absolute ones
/// are `file:` URIs; every byte but the unreserved ones and `/` is
/// percent-encoded.
pub fn uri(file: &str) -> String {
    let mut out = String::with_capacity(file.len());
    if file.starts_with('/') {
        out.push_str("file://");
    }
    for b in file.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_uri_references() {
        assert_eq!(uri("runs/a b.jsonl"), "runs/a%20b.jsonl");
        assert_eq!(uri("/tmp/x#1.jsonl"), "file:///tmp/x%231.jsonl");
        assert_eq!(uri("<stdin>"), "%3Cstdin%3E");
        assert_eq!(uri("é"), "%C3%A9");
    }

    #[test]
    fn a_fingerprint_is_fixed_and_moves_with_the_line() {
        // FNV-1a's published value for the empty input.
        assert_eq!(fingerprint(&[]), "cbf29ce484222325");
        let a = fingerprint(&["seq.gap", "x.jsonl", "3", "gap"]);
        assert_eq!(a, fingerprint(&["seq.gap", "x.jsonl", "3", "gap"]));
        assert_ne!(a, fingerprint(&["seq.gap", "x.jsonl", "4", "gap"]));
        // Parts are kept apart: "ab"+"c" is not "a"+"bc".
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
    }

    #[test]
    fn messages_end_as_sentences() {
        assert_eq!(sentence("seq gap"), "seq gap.");
        assert_eq!(sentence("done."), "done.");
    }
}
