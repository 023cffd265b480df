//! `--output junit` (verify, run, lint; docs/contract.md §5.2): JUnit XML, as GitLab,
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
//! judged (docs/contract.md §5.3).
//!
//! Every suite and case has a `time` in seconds, as Surefire's schema asks
//! (`tests/fixtures/schemas/junit/`): a run's from its first line to its
//! verdict as read, an attempt's wall time under `run`, a lint check's
//! from the result before it; a suite's is its cases' sum. A rerun
//! (`flakyFailure`, `rerunFailure`) carries its findings, or failing those
//! its message, as its `stackTrace`, and comes before an `<error>`, in
//! the order Surefire's schema gives a testcase's children.
//!
//! A run's case is named by its FILE (the classname) and what its
//! `aoi:meta` says, tool and command, so the same run of the same log is
//! the same test from one build to the next; its run id, new on every
//! build, is a property (`suite.rs`). A case lists at most `LISTED`
//! findings and counts the rest.

mod suite;

use std::collections::HashMap;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use crate::check::{Finding, Identity, OpenRun, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::output::printer::{At, Carries, Check, Ended, Item, Local, Printer};
use crate::text::prefix;
use suite::{Case, CaseResult, Report, Suite, xml};

/// Findings listed per testcase; the rest are counted.
const LISTED: usize = 50;

/// Bytes of a tool or a command a case's name shows.
const NAMED: usize = 160;

pub struct Junit<W> {
    out: W,
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

impl<W: Write> Junit<W> {
    pub fn new(out: W) -> Junit<W> {
        Junit {
            out,
            suite: None,
            any: false,
            pending: HashMap::new(),
            attempt: vec![],
            reruns: vec![],
            ran: None,
            last_check: None,
        }
    }

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
    fn run_case(&mut self, file: &str, r: &RunVerdict, under_run: bool) -> io::Result<()> {
        let text = self.findings_of(file, &r.run);
        let outcome = match r.verdict {
            Verdict::Pass => CaseResult::Pass,
            v => CaseResult::Failure(Report {
                kind: v.name().to_string(),
                message: r.message.clone(),
                text: text.clone(),
            }),
        };
        let case = Case {
            time: r.took.unwrap_or_default(),
            text,
            id: r.run.clone(),
            begun: Some(r.first_line),
            ..Case::new(&named(r.identity.as_ref()), file, outcome)
        };
        if under_run {
            self.attempt.push(case);
            Ok(())
        } else {
            self.push(file, case)
        }
    }

    /// A run still open when reading stopped: an `<error>`, cancelled.
    fn open_case(&mut self, file: &str, run: &OpenRun, message: &str) -> io::Result<()> {
        let text = self.findings_of(file, &run.name);
        let outcome = CaseResult::Error(Report::new("cancelled", message, &text));
        let case = Case {
            time: run.took.unwrap_or_default(),
            text,
            id: run.name.clone(),
            begun: Some(run.first_line),
            ..Case::new(&named(run.identity.as_ref()), file, outcome)
        };
        self.push(file, case)
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
    fn attempt_case(&mut self, e: &Ended<'_>) -> io::Result<()> {
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
            cases.push(Case::new("", "", outcome(Report::new(why, message, ""))));
        } else if cases.is_empty() {
            let failed = Report::new("failed", message, "");
            cases.push(Case::new("", "", CaseResult::Failure(failed)));
        }
        for (k, case) in cases.iter_mut().enumerate() {
            case.name = match k {
                0 => command.to_string(),
                _ => format!("{command} (run {})", k + 1),
            };
            case.classname = command.to_string();
            // Named by CMD and place already: unique, with no number.
            case.begun = None;
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
            self.push(command, case)?;
        }
        self.reruns.clear();
        Ok(())
    }

    /// `lint`: one check's testcase.
    fn check_case(&mut self, suite: &str, c: &Check<'_>) -> io::Result<()> {
        let outcome = match c.properties.result {
            "pass" => CaseResult::Pass,
            "skipped" | "not-claimed" | "inconclusive" | "expected-failure" => {
                CaseResult::Skipped(format!("{}: {}", c.properties.result, c.detail))
            }
            result if c.ok => CaseResult::Skipped(format!("{result}: {}", c.detail)),
            // The failure's text: its calls' stderr (docs/contract.md §1.4).
            result => CaseResult::Failure(Report {
                kind: result.to_string(),
                message: c.detail.to_string(),
                text: c
                    .properties
                    .stderr
                    .iter()
                    .flat_map(|s| s.lines())
                    .collect::<Vec<_>>()
                    .join("\n"),
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
            time,
            ..Case::new(c.name, &classname, outcome)
        };
        self.push(suite, case)
    }

    /// A failure of aoitap itself: an `<error>` case of its own.
    fn error_case(&mut self, file: &str, code: &str, message: &str) -> io::Result<()> {
        let suite = if file.is_empty() { "aoitap" } else { file };
        let outcome = CaseResult::Error(Report::new(code, message, ""));
        let case = Case::new(code, suite, outcome);
        self.push(suite, case)
    }

    /// The report's head (its suites follow as each is done).
    fn head(&mut self, command: &str) -> io::Result<()> {
        let head = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\">\n",
            xml(&format!("aoitap {command}"))
        );
        self.out.write_all(head.as_bytes())
    }

    /// The report's end. One that judged nothing still says how it ended,
    /// as one case.
    fn finish(&mut self, command: &str, pass: bool, result: &str) -> io::Result<()> {
        // Attempt cases left by a signal between attempts.
        for case in std::mem::take(&mut self.attempt) {
            self.push(command, case)?;
        }
        // Attempts retried before a signal stopped the wait for the next:
        // kept, as reruns of the attempt that never came, cancelled.
        if self.reruns.iter().any(|r| !r.is_empty()) {
            let reruns = std::mem::take(&mut self.reruns).concat();
            let ran = self.ran.clone().unwrap_or_else(|| command.to_string());
            let outcome = CaseResult::Error(Report::new("cancelled", result, ""));
            let case = Case {
                reruns,
                ..Case::new(&ran, &ran, outcome)
            };
            self.push(&ran, case)?;
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
            let outcome = CaseResult::Error(Report::new("unjudged", result, &text));
            let case = Case {
                text,
                ..Case::new("findings of no judged run", suite, outcome)
            };
            self.push(suite, case)?;
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
            let case = Case::new("result", command, outcome);
            self.push(command, case)?;
        }
        if let Some(suite) = self.suite.take() {
            suite.write(&mut self.out)?;
        }
        self.out.write_all(b"</testsuites>\n")
    }

    /// One case of the suite `name`: a suite named anew begins once the
    /// one before is written.
    fn push(&mut self, name: &str, case: Case) -> io::Result<()> {
        self.any = true;
        if self.suite.as_ref().is_some_and(|s| s.name != name)
            && let Some(done) = self.suite.take()
        {
            done.write(&mut self.out)?;
        }
        self.suite
            .get_or_insert_with(|| Suite::new(name))
            .add(&case)
    }
}

/// A run's case name: the tool and command its `aoi:meta` gave, each cut
/// to `NAMED` bytes; "run" when it gave neither. Stable from one build to
/// the next, as the run id is not (docs/contract.md §5.2).
fn named(identity: Option<&Identity>) -> String {
    let said: Vec<&str> = identity
        .into_iter()
        .flat_map(|i| [i.tool.as_deref(), i.command.as_deref()])
        .flatten()
        .filter(|s| !s.is_empty())
        .map(|s| prefix(s, NAMED))
        .collect();
    match said.is_empty() {
        true => "run".to_string(),
        false => said.join(" "),
    }
}

impl<W: Write> Printer for Junit<W> {
    fn carries(&self) -> Carries {
        Carries {
            errors: true,
            ..Carries::default()
        }
    }

    fn begin(&mut self, at: &At<'_>) -> io::Result<()> {
        self.last_check = Some(Instant::now());
        self.head(at.command)
    }

    fn local(&mut self, at: &At<'_>, l: &Local<'_>) -> io::Result<()> {
        self.error_case(at.file, l.code, l.message)
    }

    fn finding(&mut self, at: &At<'_>, f: &Finding) -> io::Result<()> {
        self.pend(at.file, f);
        Ok(())
    }

    fn open_run(&mut self, at: &At<'_>, run: &OpenRun, text: &str) -> io::Result<()> {
        self.open_case(at.file, run, text.trim_end())
    }

    fn run(&mut self, at: &At<'_>, r: &RunVerdict, _path: Option<&str>) -> io::Result<()> {
        self.run_case(at.file, r, at.command == "run")
    }

    fn item(&mut self, at: &At<'_>, item: Item<'_>) -> io::Result<()> {
        match item {
            Item::Check(c) => {
                let suite = if at.file.is_empty() {
                    at.command
                } else {
                    at.file
                };
                self.check_case(suite, c)
            }
            Item::Attempt(e) => self.attempt_case(e),
            _ => Ok(()),
        }
    }

    fn end(&mut self, at: &At<'_>, exit: Exit, tally: &Tally) -> io::Result<()> {
        let result = crate::output::words::worded(at, exit, tally);
        self.finish(at.command, exit == Exit::Pass, &result)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
