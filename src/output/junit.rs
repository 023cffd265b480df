//! `--output junit` (verify, run, lint; docs/contract.md §19): JUnit XML, as GitLab,
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
//! A run still open when reading stopped (a signal) is an `<error>` of
//! type `cancelled`, with its findings: `errors` counts what could not be
//! judged (docs/contract.md §21).
//!
//! Every suite and case has a `time` in seconds, as Surefire's schema asks
//! (`tests/fixtures/schemas/junit/`): a run's from its first line to its
//! verdict as read, an attempt's wall time under `run`, a lint check's
//! from the result before it; a suite's is its cases' sum. A rerun
//! (`flakyFailure`, `rerunFailure`) carries its findings, or failing those
//! its message, as its `stackTrace`, and comes before an `<error>`, in
//! the order Surefire's schema gives a testcase's children.
//!
//! The counts of a `<testsuite>` come before its cases, so a suite is
//! written once its last case is known (the next suite begins, or the
//! report ends); its cases wait as XML text, in memory up to `SPILL`
//! bytes and in an unnamed temporary file past that, so memory stays
//! bounded however many runs a file holds. A case lists at most `LISTED`
//! findings and counts the rest.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Seek, Write};
use std::time::{Duration, Instant};

use crate::check::{Finding, OpenRun, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::output::printer::{At, Check, Ended, Printer};

/// Findings listed per testcase; the rest are counted.
const LISTED: usize = 50;

/// A suite's cases held in memory before they go to a temporary file.
const SPILL: usize = 1 << 20;

#[derive(Default)]
pub struct Junit {
    /// The suite being written, and whether any suite had a case.
    suite: Option<Suite>,
    any: bool,
    /// Findings of each open run, waiting for its verdict.
    /// (file, run): a run id names a run within its FILE only.
    pending: HashMap<(String, Option<String>), Listed>,
    /// `run`: the cases of the attempt under way.
    attempt: Vec<Case>,
    /// `run`: what each case of the attempts retried so far said, by its
    /// place in the attempt.
    reruns: Vec<Vec<Report>>,
    /// `run`: the CMD the attempts ran, which names their cases.
    ran: Option<String>,
    /// `lint`: when the last check's result (or the report's start) came.
    last_check: Option<Instant>,
}

/// A suite whose cases are still coming: their XML, and their counts.
struct Suite {
    name: String,
    tests: u64,
    failures: u64,
    errors: u64,
    skipped: u64,
    time: Duration,
    body: Vec<u8>,
    spilled: Option<File>,
}

impl Suite {
    fn new(name: &str) -> Suite {
        Suite {
            name: name.to_string(),
            tests: 0,
            failures: 0,
            errors: 0,
            skipped: 0,
            time: Duration::ZERO,
            body: vec![],
            spilled: None,
        }
    }

    fn add(&mut self, c: &Case) -> io::Result<()> {
        self.tests += 1;
        self.time += c.time;
        match c.outcome {
            CaseResult::Pass => {}
            CaseResult::Failure(_) => self.failures += 1,
            CaseResult::Error(_) => self.errors += 1,
            CaseResult::Skipped(_) => self.skipped += 1,
        }
        let mut x = String::new();
        case(&mut x, c);
        self.body.extend_from_slice(x.as_bytes());
        if self.body.len() > SPILL {
            if self.spilled.is_none() {
                // No temporary file (TMPDIR missing, /tmp full): the cases
                // wait in memory instead, and the report stays whole.
                self.spilled = tempfile::tempfile().ok();
            }
            if let Some(file) = &mut self.spilled {
                file.write_all(&self.body)?;
                self.body.clear();
            }
        }
        Ok(())
    }

    /// The suite, whole.
    fn write(mut self, out: &mut dyn Write) -> io::Result<()> {
        let head = format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">\n",
            xml(&self.name),
            self.tests,
            self.failures,
            self.errors,
            self.skipped,
            seconds(self.time),
        );
        out.write_all(head.as_bytes())?;
        if let Some(mut file) = self.spilled.take() {
            file.rewind()?;
            io::copy(&mut file, out)?;
        }
        out.write_all(&self.body)?;
        out.write_all(b"  </testsuite>\n")
    }
}

struct Case {
    name: String,
    classname: String,
    time: Duration,
    outcome: CaseResult,
    /// The findings, for the failure's text or `<system-out>`.
    text: String,
    reruns: Vec<Report>,
}

enum CaseResult {
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
    fn pend(&mut self, file: &str, f: &Finding) {
        let key = (file.to_string(), f.run.clone());
        let listed = self.pending.entry(key).or_default();
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
    fn run_case(
        &mut self,
        out: &mut dyn Write,
        file: &str,
        r: &RunVerdict,
        under_run: bool,
    ) -> io::Result<()> {
        let text = self.findings_of(file, &r.run);
        let outcome = match r.verdict {
            Verdict::Pass => CaseResult::Pass,
            v => CaseResult::Failure(Report {
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
            time: r.took.unwrap_or_default(),
            outcome,
            text,
            reruns: vec![],
        };
        if under_run {
            self.attempt.push(case);
            Ok(())
        } else {
            self.push(out, file, case)
        }
    }

    /// A run still open when reading stopped: an `<error>`, cancelled.
    fn open_case(
        &mut self,
        out: &mut dyn Write,
        file: &str,
        run: &OpenRun,
        message: &str,
    ) -> io::Result<()> {
        let text = self.findings_of(file, &run.name);
        let name = match &run.name {
            Some(id) => format!("run {id}"),
            None => format!("run from line {}", run.first_line),
        };
        let case = Case {
            name,
            classname: file.to_string(),
            time: run.took.unwrap_or_default(),
            outcome: CaseResult::Error(Report {
                kind: "cancelled".to_string(),
                message: message.to_string(),
                text: text.clone(),
            }),
            text,
            reruns: vec![],
        };
        self.push(out, file, case)
    }

    /// The findings held for `run`, and those about no run (the input's),
    /// which go with the next case.
    fn findings_of(&mut self, file: &str, run: &Option<String>) -> String {
        let file = file.to_string();
        let mut found = self
            .pending
            .remove(&(file.clone(), run.clone()))
            .unwrap_or_default();
        if let Some(loose) = self.pending.remove(&(file, None)) {
            found.more += loose.more;
            found.lines.extend(loose.lines);
        }
        found.text()
    }

    /// `run`: attempt `number` of `command` ended (`stopped`: timed out or
    /// cancelled, before a run was judged). Its cases are named by CMD and
    /// their place, so each attempt's are the same testcases; a retried
    /// attempt's are reruns of the next one's.
    fn attempt_case(&mut self, out: &mut dyn Write, e: &Ended<'_>) -> io::Result<()> {
        let (a, message) = (e.attempt, e.message);
        let (command, number) = (a.command, a.attempt);
        self.ran = Some(command.to_string());
        let stopped = match (a.timed_out, a.cancelled) {
            (true, _) => Some("timeout"),
            (_, true) => Some("cancelled"),
            _ => None,
        };
        let retried = a.retry_in_ms.is_some();
        let took = Duration::from_millis(a.elapsed_ms);
        let mut cases = std::mem::take(&mut self.attempt);
        if let Some(why) = stopped {
            // Timed out or cancelled: the attempt is a case of its own,
            // beside any run it finished.
            let outcome = match why {
                "cancelled" => CaseResult::Error,
                _ => CaseResult::Failure,
            };
            cases.push(Case {
                name: String::new(),
                classname: String::new(),
                time: Duration::ZERO,
                outcome: outcome(Report {
                    kind: why.to_string(),
                    message: message.to_string(),
                    text: String::new(),
                }),
                text: String::new(),
                reruns: vec![],
            });
        } else if cases.is_empty() {
            cases.push(Case {
                name: String::new(),
                classname: String::new(),
                time: Duration::ZERO,
                outcome: CaseResult::Failure(Report {
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
            // The attempt's runs were read as it ran: each is timed by it.
            case.time = took;
        }
        if retried {
            for (k, case) in cases.iter().enumerate() {
                if self.reruns.len() <= k {
                    self.reruns.push(vec![]);
                }
                let mut said = match &case.outcome {
                    CaseResult::Failure(r) | CaseResult::Error(r) => r.clone(),
                    _ => continue,
                };
                said.message = format!("attempt {number}: {}", said.message);
                self.reruns[k].push(said);
            }
            return Ok(());
        }
        for (k, mut case) in cases.into_iter().enumerate() {
            case.reruns = self
                .reruns
                .get_mut(k)
                .map(std::mem::take)
                .unwrap_or_default();
            self.push(out, command, case)?;
        }
        self.reruns.clear();
        Ok(())
    }

    /// `lint`: one check's testcase.
    fn check_case(&mut self, out: &mut dyn Write, suite: &str, c: &Check<'_>) -> io::Result<()> {
        let outcome = match c.properties.result {
            "pass" => CaseResult::Pass,
            "skipped" | "not-claimed" | "inconclusive" | "expected-failure" => {
                CaseResult::Skipped(format!("{}: {}", c.properties.result, c.detail))
            }
            result if c.ok => CaseResult::Skipped(format!("{result}: {}", c.detail)),
            result => CaseResult::Failure(Report {
                kind: result.to_string(),
                message: c.detail.to_string(),
                text: String::new(),
            }),
        };
        let classname = match c.properties.command {
            Some(command) => format!("{suite} {command}"),
            None => suite.to_string(),
        };
        let now = Instant::now();
        let time = self
            .last_check
            .replace(now)
            .map_or(Duration::ZERO, |then| now - then);
        let case = Case {
            name: c.name.to_string(),
            classname,
            time,
            outcome,
            text: String::new(),
            reruns: vec![],
        };
        self.push(out, suite, case)
    }

    /// A failure of aoitap itself: an `<error>` case of its own.
    fn error_case(
        &mut self,
        out: &mut dyn Write,
        file: &str,
        code: &str,
        message: &str,
    ) -> io::Result<()> {
        let suite = if file.is_empty() { "aoitap" } else { file };
        let case = Case {
            name: code.to_string(),
            classname: suite.to_string(),
            time: Duration::ZERO,
            outcome: CaseResult::Error(Report {
                kind: code.to_string(),
                message: message.to_string(),
                text: String::new(),
            }),
            text: String::new(),
            reruns: vec![],
        };
        self.push(out, suite, case)
    }

    /// The report's head (its suites follow as each is done).
    fn head(&mut self, out: &mut dyn Write, command: &str) -> io::Result<()> {
        let head = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\">\n",
            xml(&format!("aoitap {command}"))
        );
        out.write_all(head.as_bytes())
    }

    /// The report's end. One that judged nothing still says how it ended,
    /// as one case.
    fn finish(
        &mut self,
        out: &mut dyn Write,
        command: &str,
        pass: bool,
        result: &str,
    ) -> io::Result<()> {
        // Attempt cases left by a signal between attempts.
        for case in std::mem::take(&mut self.attempt) {
            self.push(out, command, case)?;
        }
        // Attempts retried before a signal stopped the wait for the next:
        // kept, as reruns of the attempt that never came, cancelled.
        if self.reruns.iter().any(|r| !r.is_empty()) {
            let reruns = std::mem::take(&mut self.reruns).concat();
            let ran = self.ran.clone().unwrap_or_else(|| command.to_string());
            let case = Case {
                name: ran.clone(),
                classname: ran.clone(),
                time: Duration::ZERO,
                outcome: CaseResult::Error(Report {
                    kind: "cancelled".to_string(),
                    message: result.to_string(),
                    text: String::new(),
                }),
                text: String::new(),
                reruns,
            };
            self.push(out, &ran, case)?;
        }
        // Findings of runs never judged nor named open (an event after its
        // run's summary), each in its own FILE's suite.
        let mut left: Vec<_> = std::mem::take(&mut self.pending).into_iter().collect();
        left.sort_by(|a, b| a.0.cmp(&b.0));
        let mut files: Vec<(String, Vec<String>)> = vec![];
        for ((file, _), listed) in left {
            match files.last_mut() {
                Some((f, texts)) if *f == file => texts.push(listed.text()),
                _ => files.push((file, vec![listed.text()])),
            }
        }
        for (file, texts) in files {
            let suite = if file.is_empty() { command } else { &file };
            let text = texts.join("\n");
            let case = Case {
                name: "findings of no judged run".to_string(),
                classname: suite.to_string(),
                time: Duration::ZERO,
                outcome: CaseResult::Error(Report {
                    kind: "unjudged".to_string(),
                    message: result.to_string(),
                    text: text.clone(),
                }),
                text,
                reruns: vec![],
            };
            self.push(out, suite, case)?;
        }
        if !self.any {
            let outcome = if pass {
                CaseResult::Pass
            } else {
                CaseResult::Failure(Report {
                    kind: "failed".to_string(),
                    message: result.to_string(),
                    text: String::new(),
                })
            };
            let case = Case {
                name: "result".to_string(),
                classname: command.to_string(),
                time: Duration::ZERO,
                outcome,
                text: String::new(),
                reruns: vec![],
            };
            self.push(out, command, case)?;
        }
        if let Some(suite) = self.suite.take() {
            suite.write(out)?;
        }
        out.write_all(b"</testsuites>\n")
    }

    /// One case of the suite `name`: a suite named anew begins once the
    /// one before is written.
    fn push(&mut self, out: &mut dyn Write, name: &str, case: Case) -> io::Result<()> {
        self.any = true;
        if self.suite.as_ref().is_some_and(|s| s.name != name)
            && let Some(done) = self.suite.take()
        {
            done.write(out)?;
        }
        self.suite
            .get_or_insert_with(|| Suite::new(name))
            .add(&case)
    }
}

impl Printer for Junit {
    fn begin(&mut self, out: &mut dyn Write, at: &At<'_>) -> io::Result<()> {
        self.last_check = Some(Instant::now());
        self.head(out, at.command)
    }

    fn carries_errors(&self) -> bool {
        true
    }

    fn local_error(
        &mut self,
        out: &mut dyn Write,
        at: &At<'_>,
        _category: &str,
        code: &str,
        message: &str,
    ) -> io::Result<()> {
        self.error_case(out, at.file, code, message)
    }

    fn finding(&mut self, _out: &mut dyn Write, at: &At<'_>, f: &Finding) -> io::Result<()> {
        self.pend(at.file, f);
        Ok(())
    }

    fn open_run(
        &mut self,
        out: &mut dyn Write,
        at: &At<'_>,
        run: &OpenRun,
        text: &str,
    ) -> io::Result<()> {
        self.open_case(out, at.file, run, text.trim_end())
    }

    fn run(
        &mut self,
        out: &mut dyn Write,
        at: &At<'_>,
        r: &RunVerdict,
        _path: Option<&str>,
    ) -> io::Result<()> {
        self.run_case(out, at.file, r, at.command == "run")
    }

    fn check(&mut self, out: &mut dyn Write, at: &At<'_>, c: &Check<'_>) -> io::Result<()> {
        let suite = if at.file.is_empty() {
            at.command
        } else {
            at.file
        };
        self.check_case(out, suite, c)
    }

    fn attempt(&mut self, out: &mut dyn Write, _at: &At<'_>, e: &Ended<'_>) -> io::Result<()> {
        self.attempt_case(out, e)
    }

    fn end(
        &mut self,
        out: &mut dyn Write,
        at: &At<'_>,
        exit: Exit,
        tally: &Tally,
    ) -> io::Result<()> {
        let result = super::words::worded(at, exit, tally);
        self.finish(out, at.command, exit == Exit::Pass, &result)
    }
}

/// One testcase, its children in the order Surefire's schema gives them:
/// failure, reruns, skipped, error, system-out.
fn case(x: &mut String, c: &Case) {
    x.push_str(&format!(
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
        xml(&c.name),
        xml(&c.classname),
        seconds(c.time)
    ));
    let passed = matches!(c.outcome, CaseResult::Pass);
    if passed && c.reruns.is_empty() && c.text.is_empty() {
        x.push_str("/>\n");
        return;
    }
    x.push_str(">\n");
    if let CaseResult::Failure(r) = &c.outcome {
        element(x, "failure", r);
    }
    // nextest's names: a rerun that failed before a pass is flaky.
    let rerun = if passed {
        "flakyFailure"
    } else {
        "rerunFailure"
    };
    for r in &c.reruns {
        let trace = if r.text.is_empty() {
            &r.message
        } else {
            &r.text
        };
        x.push_str(&format!(
            "      <{rerun} type=\"{}\" message=\"{}\">\n        <stackTrace>{}</stackTrace>\n      </{rerun}>\n",
            xml(&r.kind),
            xml(&r.message),
            xml(trace)
        ));
    }
    match &c.outcome {
        CaseResult::Skipped(why) => {
            x.push_str(&format!("      <skipped message=\"{}\"/>\n", xml(why)));
        }
        CaseResult::Error(r) => element(x, "error", r),
        CaseResult::Pass | CaseResult::Failure(_) => {}
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

/// A time as Surefire writes it: seconds, to the millisecond.
fn seconds(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
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
