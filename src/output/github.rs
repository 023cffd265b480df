//! `--output github` (verify, run; docs/contract.md §19): GitHub Actions workflow
//! commands, which the runner turns into annotations on the file and line:
//! `::error file=F,line=N,title=RULE::message` per finding (`::warning`,
//! `::notice` by severity), and one for each run that failed without a
//! finding of its own (its producer said `ok:false`). Anything else is a
//! plain log line.

use std::io::{self, Write};

use super::printer::{At, Ended, Printer};
use super::words;
use crate::check::rules::Severity;
use crate::check::{Finding, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::text::clean;

/// GitHub's log: workflow commands for what annotates, plain lines for
/// the rest.
pub struct Github;

impl Printer for Github {
    fn text(&mut self, out: &mut dyn Write, _at: &At<'_>, text: &str) -> io::Result<()> {
        out.write_all(text.as_bytes())
    }

    fn carries_errors(&self) -> bool {
        true
    }

    fn local_error(
        &mut self,
        out: &mut dyn Write,
        _at: &At<'_>,
        _category: &str,
        code: &str,
        message: &str,
    ) -> io::Result<()> {
        out.write_all(local_error(code, message).as_bytes())
    }

    fn local_warning(
        &mut self,
        out: &mut dyn Write,
        _category: &str,
        code: &str,
        message: &str,
    ) -> io::Result<bool> {
        out.write_all(local_warning(code, message).as_bytes())?;
        Ok(true)
    }

    fn finding(&mut self, out: &mut dyn Write, at: &At<'_>, f: &Finding) -> io::Result<()> {
        out.write_all(finding(at.input_file(), f).as_bytes())
    }

    fn run(
        &mut self,
        out: &mut dyn Write,
        at: &At<'_>,
        r: &RunVerdict,
        _path: Option<&str>,
    ) -> io::Result<()> {
        match run(at.input_file(), r) {
            Some(line) => out.write_all(line.as_bytes()),
            None => Ok(()),
        }
    }

    fn attempt(&mut self, out: &mut dyn Write, at: &At<'_>, a: &Ended<'_>) -> io::Result<()> {
        words::attempt(out, at, a)
    }

    fn end(
        &mut self,
        out: &mut dyn Write,
        at: &At<'_>,
        exit: Exit,
        tally: &Tally,
    ) -> io::Result<()> {
        let mut line = words::dropped(at);
        line.push_str(&words::worded(at, exit, tally));
        line.push('\n');
        out.write_all(line.as_bytes())
    }
}

/// One finding's workflow command; `file` is the input's, when it is one
/// (under `run` it is a command, which no annotation can be placed on).
pub fn finding(file: Option<&str>, f: &Finding) -> String {
    let command = match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let mut message = f.message.clone();
    if let Some(run) = &f.run {
        message.push_str(&format!(" (run {run})"));
    }
    line(command, file, f.line, f.rule.id(), &message)
}

/// A run that failed or is retryable by its producer's word: its own
/// annotation, at the line it began; a nonconforming run's findings say
/// why already.
pub fn run(file: Option<&str>, r: &RunVerdict) -> Option<String> {
    let command = match r.verdict {
        Verdict::Failed => "error",
        Verdict::Retryable => "warning",
        Verdict::Pass | Verdict::Nonconforming => return None,
    };
    let title = format!("run {}", r.verdict.name());
    Some(line(command, file, r.first_line, &title, &r.message))
}

/// A failure of aoitap itself (an input it cannot read): an error of no
/// file.
pub fn local_error(code: &str, message: &str) -> String {
    format!(
        "::error title={}::{}\n",
        property(code),
        data(&clean(message))
    )
}

/// A warning of aoitap itself, as a workflow command.
pub fn local_warning(code: &str, message: &str) -> String {
    format!(
        "::warning title={}::{}\n",
        property(code),
        data(&clean(message))
    )
}

/// Every value cleaned as human output cleans it (no terminal control, no
/// bidi override reaches the log), then escaped for the runner.
fn line(command: &str, file: Option<&str>, at: u64, title: &str, message: &str) -> String {
    let mut props = String::new();
    if let Some(file) = file {
        props.push_str(&format!("file={},", property(&clean(file))));
        if at > 0 {
            props.push_str(&format!("line={at},"));
        }
    }
    props.push_str(&format!("title={}", property(&clean(title))));
    format!("::{command} {props}::{}\n", data(&clean(message)))
}

/// A command's data: `%`, CR and LF escaped, as the runner unescapes them
/// (toolkit's `escapeData`).
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property's value: its data escapes, and `:` and `,`, which end it
/// (toolkit's `escapeProperty`).
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_as_the_runner_reads_them() {
        assert_eq!(data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(property("a,b:c%"), "a%2Cb%3Ac%25");
        assert_eq!(
            line("error", Some("x,y.jsonl"), 3, "seq.gap", "gap: 2"),
            "::error file=x%2Cy.jsonl,line=3,title=seq.gap::gap: 2\n"
        );
    }
}
