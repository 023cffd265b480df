//! `--output sarif` (verify; docs/contract.md §19): SARIF 2.1.0, as GitHub code
//! scanning and Jenkins' warnings-ng read it.
//!
//! One SARIF run: the tool's driver with the whole rule catalogue as its
//! `rules` (id, default level, help text, spec anchor), and one result per
//! finding, located at its file's URI and line. Results are written as the
//! findings come, inside the `results` array the header opens, so a long
//! report is never held; the end closes it with the invocation's exit
//! status.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::identity::{TOOL, TOOL_VERSION};
use super::printer::{At, Printer};
use crate::check::rules::{Rule, Severity};
use crate::check::{Finding, Tally};
use crate::exit::Exit;

#[derive(Default)]
pub struct Sarif {
    results: u64,
    /// aoitap's own failures, said on stderr: the invocation did not
    /// execute whole.
    errors: u64,
}

impl Printer for Sarif {
    fn begin(&mut self, out: &mut dyn Write, _at: &At<'_>) -> io::Result<()> {
        self.head(out)
    }

    fn local_error(
        &mut self,
        _out: &mut dyn Write,
        _at: &At<'_>,
        _category: &str,
        _code: &str,
        _message: &str,
    ) -> io::Result<()> {
        self.errors += 1;
        Ok(())
    }

    fn finding(&mut self, out: &mut dyn Write, at: &At<'_>, f: &Finding) -> io::Result<()> {
        self.result(out, at.file, f)
    }

    fn end(
        &mut self,
        out: &mut dyn Write,
        _at: &At<'_>,
        exit: Exit,
        _tally: &Tally,
    ) -> io::Result<()> {
        let executed = self.errors == 0;
        self.finish(out, i32::from(exit.code()), executed)
    }
}

impl Sarif {
    /// The log's head, up to the opening of `results`.
    fn head(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let rules: Vec<Value> = Rule::ALL.iter().map(|r| rule(*r)).collect();
        let driver = json!({
            "name": TOOL,
            "version": TOOL_VERSION,
            "semanticVersion": TOOL_VERSION,
            "rules": rules,
        });
        let head = format!(
            "{{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\
             \"runs\":[{{\"tool\":{{\"driver\":{driver}}},\"columnKind\":\"unicodeCodePoints\",\"results\":["
        );
        out.write_all(head.as_bytes())
    }

    /// One finding of the input `file`.
    fn result(&mut self, out: &mut dyn Write, file: &str, f: &Finding) -> io::Result<()> {
        let index = Rule::ALL.iter().position(|r| *r == f.rule).unwrap_or(0);
        let mut message = f.message.clone();
        if let Some(run) = &f.run {
            message.push_str(&format!(" (run {run})"));
        }
        // SARIF lines count from 1: a finding about the whole input (line
        // 0) is placed at its start.
        let result = json!({
            "ruleId": f.rule.id(),
            "ruleIndex": index,
            "level": level(f.severity),
            "message": {"text": sentence(&message)},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": uri(file)},
                    "region": {"startLine": f.line.max(1)},
                },
            }],
        });
        if self.results > 0 {
            out.write_all(b",")?;
        }
        self.results += 1;
        let text = serde_json::to_string(&result).map_err(io::Error::other)?;
        out.write_all(text.as_bytes())
    }

    /// The log's end: the invocation, which ran whatever it found (an
    /// input that could not be read is a failed execution).
    fn finish(&mut self, out: &mut dyn Write, exit_code: i32, executed: bool) -> io::Result<()> {
        let invocation = json!({"executionSuccessful": executed, "exitCode": exit_code});
        out.write_all(format!("],\"invocations\":[{invocation}]}}]}}\n").as_bytes())
    }
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
    fn messages_end_as_sentences() {
        assert_eq!(sentence("seq gap"), "seq gap.");
        assert_eq!(sentence("done."), "done.");
    }
}
