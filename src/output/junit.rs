//! `--output junit` (verify, run, lint; DESIGN §19): JUnit XML, as GitLab,
//! Jenkins' JUnit plugin and cargo-nextest read and write it.
//!
//! One `<testsuite>` per FILE (per CMD under `run`, lint's command for
//! lint), one `<testcase>` per run (per check for lint). A run that did
//! not pass has a `<failure>` whose `type` is its verdict and whose text
//! lists its findings; a run's findings of any severity are listed, a
//! passing run's in `<system-out>`. Under `run --retries` a retried
//! attempt is a rerun of its testcase, as nextest writes one: the final
//! attempt's testcase carries each earlier failure as `<flakyFailure>`
//! when it passed, as `<rerunFailure>` when it failed too. A failure of
//! aoitap itself (an input it cannot read) is an `<error>`.
//!
//! The counts of a `<testsuite>` come before its cases, so the report is
//! written at the end: each case is held, with at most `LISTED` of its
//! findings (the rest counted).

use std::collections::HashMap;
use std::io::{self, Write};

use crate::check::{Finding, RunVerdict, Verdict};
use crate::output::jsonl::Check;

/// Findings listed per testcase; the rest are counted.
const LISTED: usize = 50;

#[derive(Default)]
pub struct Junit {
    /// In the order each was first named.
    suites: Vec<Suite>,
    /// Findings of each open run, waiting for its verdict.
    pending: HashMap<Option<String>, Listed>,
    /// `run`: the cases of the attempt under way.
    attempt: Vec<Case>,
    /// `run`: what each case of the attempts retried so far said, by its
    /// place in the attempt.
    reruns: Vec<Vec<Report>>,
}

struct Suite {
    name: String,
    cases: Vec<Case>,
}

struct Case {
    name: String,
    classname: String,
    outcome: Outcome,
    /// The findings, for the failure's text or `<system-out>`.
    text: String,
    reruns: Vec<Report>,
}

enum Outcome {
    Pass,
    Failure(Report),
    Error(Report),
    Skipped(String),
}

/// What a failure element says: its `type`, `message` and text.
#[derive(Clone)]
struct Report {
    kind: String,
    message: String,
    text: String,
}

#[derive(Default)]
struct Listed {
    lines: Vec<String>,
    more: u64,
}

impl Listed {
    fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.more > 0 {
            text.push_str(&format!("\n... and {} more findings", self.more));
        }
        text
    }
}

impl Junit {
    /// Held until its run's verdict.
    pub fn finding(&mut self, f: &Finding) {
        let listed = self.pending.entry(f.run.clone()).or_default();
        if listed.lines.len() >= LISTED {
            listed.more += 1;
            return;
        }
        let at = if f.line > 0 {
            format!("line {}: ", f.line)
        } else {
            String::new()
        };
        listed.lines.push(format!(
            "{at}{}[{}]: {}",
            f.severity.name(),
            f.rule.id(),
            f.message
        ));
    }

    /// One run's testcase. `run`'s wait for their attempt (`attempt`).
    pub fn run(&mut self, file: &str, r: &RunVerdict, under_run: bool) {
        let mut found = self.pending.remove(&r.run).unwrap_or_default();
        // Findings about no run (the input's) go with the next case.
        if let Some(loose) = self.pending.remove(&None) {
            found.more += loose.more;
            found.lines.extend(loose.lines);
        }
        let text = found.text();
        let outcome = match r.verdict {
            Verdict::Pass => Outcome::Pass,
            v => Outcome::Failure(Report {
                kind: v.name().to_string(),
                message: r.message.clone(),
                text: text.clone(),
            }),
        };
        let name = match &r.run {
            Some(id) => format!("run {id}"),
            None => format!("run from line {}", r.first_line),
        };
        let case = Case {
            name,
            classname: file.to_string(),
            outcome,
            text,
            reruns: vec![],
        };
        if under_run {
            self.attempt.push(case);
        } else {
            self.suite(file).cases.push(case);
        }
    }

    /// `run`: attempt `number` of `command` ended (`stopped`: timed out or
    /// cancelled, before a run was judged). Its cases are named by CMD and
    /// their place, so each attempt's are the same testcases; a retried
    /// attempt's are reruns of the next one's.
    pub fn attempt(
        &mut self,
        command: &str,
        number: u32,
        stopped: Option<&str>,
        retried: bool,
        message: &str,
    ) {
        let mut cases = std::mem::take(&mut self.attempt);
        if cases.is_empty() {
            // Timed out or cancelled before a run was judged: the attempt
            // is the case.
            cases.push(Case {
                name: String::new(),
                classname: String::new(),
                outcome: Outcome::Failure(Report {
                    kind: stopped.unwrap_or("failed").to_string(),
                    message: message.to_string(),
                    text: String::new(),
                }),
                text: String::new(),
                reruns: vec![],
            });
        }
        for (k, case) in cases.iter_mut().enumerate() {
            case.name = match k {
                0 => command.to_string(),
                _ => format!("{command} (run {})", k + 1),
            };
            case.classname = command.to_string();
        }
        if retried {
            for (k, case) in cases.iter().enumerate() {
                if self.reruns.len() <= k {
                    self.reruns.push(vec![]);
                }
                let mut said = match &case.outcome {
                    Outcome::Failure(r) | Outcome::Error(r) => r.clone(),
                    _ => continue,
                };
                said.message = format!("attempt {number}: {}", said.message);
                self.reruns[k].push(said);
            }
            return;
        }
        for (k, mut case) in cases.into_iter().enumerate() {
            case.reruns = self
                .reruns
                .get_mut(k)
                .map(std::mem::take)
                .unwrap_or_default();
            self.suite(command).cases.push(case);
        }
        self.reruns.clear();
    }

    /// `lint`: one check's testcase.
    pub fn check(&mut self, suite: &str, c: &Check<'_>) {
        let outcome = match c.properties.result {
            "pass" => Outcome::Pass,
            "skipped" | "not-claimed" | "inconclusive" | "expected-failure" => {
                Outcome::Skipped(format!("{}: {}", c.properties.result, c.detail))
            }
            result if c.ok => Outcome::Skipped(format!("{result}: {}", c.detail)),
            result => Outcome::Failure(Report {
                kind: result.to_string(),
                message: c.detail.to_string(),
                text: String::new(),
            }),
        };
        let classname = match c.properties.command {
            Some(command) => format!("{suite} {command}"),
            None => suite.to_string(),
        };
        self.suite(suite).cases.push(Case {
            name: c.name.to_string(),
            classname,
            outcome,
            text: String::new(),
            reruns: vec![],
        });
    }

    /// A failure of aoitap itself: an `<error>` case of its own.
    pub fn local_error(&mut self, file: &str, code: &str, message: &str) {
        let suite = if file.is_empty() { "aoitap" } else { file };
        self.suite(suite).cases.push(Case {
            name: code.to_string(),
            classname: suite.to_string(),
            outcome: Outcome::Error(Report {
                kind: code.to_string(),
                message: message.to_string(),
                text: String::new(),
            }),
            text: String::new(),
            reruns: vec![],
        });
    }

    /// The whole report. One that judged nothing still says how it ended,
    /// as one case.
    pub fn end(
        &mut self,
        out: &mut dyn Write,
        command: &str,
        pass: bool,
        result: &str,
    ) -> io::Result<()> {
        // Attempt cases left by a signal between attempts.
        if !self.attempt.is_empty() {
            let cases = std::mem::take(&mut self.attempt);
            self.suite(command).cases.extend(cases);
        }
        if self.suites.iter().all(|s| s.cases.is_empty()) {
            let outcome = if pass {
                Outcome::Pass
            } else {
                Outcome::Failure(Report {
                    kind: "failed".to_string(),
                    message: result.to_string(),
                    text: String::new(),
                })
            };
            self.suite(command).cases.push(Case {
                name: "result".to_string(),
                classname: command.to_string(),
                outcome,
                text: String::new(),
                reruns: vec![],
            });
        }
        let count =
            |s: &Suite, f: fn(&Outcome) -> bool| s.cases.iter().filter(|c| f(&c.outcome)).count();
        let failed = |o: &Outcome| matches!(o, Outcome::Failure(_));
        let errored = |o: &Outcome| matches!(o, Outcome::Error(_));
        let skipped = |o: &Outcome| matches!(o, Outcome::Skipped(_));
        let total =
            |f: fn(&Outcome) -> bool| self.suites.iter().map(|s| count(s, f)).sum::<usize>();
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        x.push_str(&format!(
            "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
            xml(&format!("aoitap {command}")),
            self.suites.iter().map(|s| s.cases.len()).sum::<usize>(),
            total(failed),
            total(errored),
            total(skipped),
        ));
        for s in self.suites.iter().filter(|s| !s.cases.is_empty()) {
            x.push_str(&format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
                xml(&s.name),
                s.cases.len(),
                count(s, failed),
                count(s, errored),
                count(s, skipped),
            ));
            for c in &s.cases {
                case(&mut x, c);
            }
            x.push_str("  </testsuite>\n");
            // Written suite by suite: a long report is never one string.
            out.write_all(x.as_bytes())?;
            x.clear();
        }
        x.push_str("</testsuites>\n");
        out.write_all(x.as_bytes())
    }

    fn suite(&mut self, name: &str) -> &mut Suite {
        let at = match self.suites.iter().position(|s| s.name == name) {
            Some(at) => at,
            None => {
                self.suites.push(Suite {
                    name: name.to_string(),
                    cases: vec![],
                });
                self.suites.len() - 1
            }
        };
        &mut self.suites[at]
    }
}

fn case(x: &mut String, c: &Case) {
    x.push_str(&format!(
        "    <testcase name=\"{}\" classname=\"{}\"",
        xml(&c.name),
        xml(&c.classname)
    ));
    let passed = matches!(c.outcome, Outcome::Pass);
    if passed && c.reruns.is_empty() && c.text.is_empty() {
        x.push_str("/>\n");
        return;
    }
    x.push_str(">\n");
    match &c.outcome {
        Outcome::Pass => {}
        Outcome::Failure(r) => element(x, "failure", r),
        Outcome::Error(r) => element(x, "error", r),
        Outcome::Skipped(why) => {
            x.push_str(&format!("      <skipped message=\"{}\"/>\n", xml(why)));
        }
    }
    // nextest's names: a rerun that failed before a pass is flaky.
    let rerun = if passed {
        "flakyFailure"
    } else {
        "rerunFailure"
    };
    for r in &c.reruns {
        let (kind, message) = (xml(&r.kind), xml(&r.message));
        if r.text.is_empty() {
            x.push_str(&format!(
                "      <{rerun} type=\"{kind}\" message=\"{message}\"/>\n"
            ));
        } else {
            x.push_str(&format!(
                "      <{rerun} type=\"{kind}\" message=\"{message}\">\n        <system-out>{}</system-out>\n      </{rerun}>\n",
                xml(&r.text)
            ));
        }
    }
    if passed && !c.text.is_empty() {
        x.push_str(&format!(
            "      <system-out>{}</system-out>\n",
            xml(&c.text)
        ));
    }
    x.push_str("    </testcase>\n");
}

fn element(x: &mut String, name: &str, r: &Report) {
    x.push_str(&format!(
        "      <{name} type=\"{}\" message=\"{}\">{}</{name}>\n",
        xml(&r.kind),
        xml(&r.message),
        xml(&r.text)
    ));
}

/// Text as XML 1.0 holds it, in an attribute or an element: the five
/// markup characters escaped, line breaks and tabs as references (an
/// attribute keeps them so), and the characters XML 1.0 cannot hold at
/// all (other C0 controls, U+FFFE, U+FFFF) as U+FFFD.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_markup_and_replaces_what_xml_cannot_hold() {
        assert_eq!(
            xml("a<b>&\"c'\n\u{1b}[31m\u{fffe}"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#10;\u{fffd}[31m\u{fffd}"
        );
    }
}
