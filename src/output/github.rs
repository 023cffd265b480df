//! `--output github` (verify, run; docs/contract.md §5.2, §5.3): GitHub Actions
//! workflow commands, which the runner turns into annotations on the file
//! and line: `::error title=RULE,file=F,line=N::message` per finding
//! (`::warning`, `::notice` by severity), and one for each run that failed
//! without a finding of its own (its producer said `ok:false`), naming its
//! run as a finding does. Anything else is a plain log line.
//!
//! Each command is the bytes `@actions/core`'s `issueCommand` writes for
//! the same message and properties: properties in its order (title, file,
//! line), `%`, CR and LF escaped in both, `:` and `,` in properties too
//! (tests/ci.rs runs the toolkit itself and compares). Before escaping,
//! text from the input is cleaned of terminal controls and bidi marks
//! (`text::clean`), but its CR and LF are kept for the escaping to carry:
//! a file name with a line break names its own path.

use std::io::{self, Write};

use super::printer::{At, Carries, Item, Local, Printer};
use super::words;
use crate::check::rules::Severity;
use crate::check::{Finding, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::text::clean;

/// GitHub's log: workflow commands for what annotates, plain lines for
/// the rest.
pub struct Github<W> {
    out: W,
}

impl<W: Write> Github<W> {
    pub fn new(out: W) -> Github<W> {
        Github { out }
    }
}

impl<W: Write> Printer for Github<W> {
    fn carries(&self) -> Carries {
        Carries::LOG
    }

    fn text(&mut self, _at: &At<'_>, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())
    }

    fn local(&mut self, _at: &At<'_>, l: &Local<'_>) -> io::Result<()> {
        let line = match l.warning {
            true => local_warning(l.code, l.message),
            false => local_error(l.code, l.message),
        };
        self.out.write_all(line.as_bytes())
    }

    fn finding(&mut self, at: &At<'_>, f: &Finding) -> io::Result<()> {
        self.out.write_all(finding(at.input_file(), f).as_bytes())
    }

    fn run(&mut self, at: &At<'_>, r: &RunVerdict, _path: Option<&str>) -> io::Result<()> {
        match run(at.input_file(), r) {
            Some(line) => self.out.write_all(line.as_bytes()),
            None => Ok(()),
        }
    }

    fn item(&mut self, at: &At<'_>, item: Item<'_>) -> io::Result<()> {
        match item {
            Item::Attempt(a) => words::attempt(&mut self.out, at, a),
            _ => Ok(()),
        }
    }

    fn end(&mut self, at: &At<'_>, exit: Exit, tally: &Tally) -> io::Result<()> {
        let mut line = words::dropped(at);
        line.push_str(&words::worded(at, exit, tally));
        line.push('\n');
        self.out.write_all(line.as_bytes())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
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
    line(
        command,
        file,
        f.line,
        f.rule.id(),
        &words::of_run(&f.message, &f.run),
    )
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
    let message = words::of_run(&r.message, &r.run);
    Some(line(command, file, r.first_line, &title, &message))
}

/// A failure of aoitap itself (an input it cannot read): an error of no
/// file.
pub fn local_error(code: &str, message: &str) -> String {
    format!(
        "::error title={}::{}\n",
        property(code),
        data(&shown(message))
    )
}

/// A warning of aoitap itself, as a workflow command.
pub fn local_warning(code: &str, message: &str) -> String {
    format!(
        "::warning title={}::{}\n",
        property(code),
        data(&shown(message))
    )
}

/// Every value `shown`, then escaped for the runner; the properties in
/// the toolkit's order.
fn line(command: &str, file: Option<&str>, at: u64, title: &str, message: &str) -> String {
    let mut props = format!("title={}", property(&shown(title)));
    // The file's name as it is, escaped only as the toolkit escapes it:
    // cleaned, it would name a file that does not exist (an ESC, a tab).
    if let Some(file) = file {
        props.push_str(&format!(",file={}", property(file)));
        if at > 0 {
            props.push_str(&format!(",line={at}"));
        }
    }
    format!("::{command} {props}::{}\n", data(&shown(message)))
}

/// Text as the log shows it: cleaned as human output cleans it (no
/// terminal control, no bidi override reaches the log), but with its CR
/// and LF, which `data` and `property` escape as the toolkit does.
fn shown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for piece in s.split_inclusive(['\r', '\n']) {
        let text = piece.trim_end_matches(['\r', '\n']);
        out.push_str(&clean(text));
        out.push_str(&piece[text.len()..]);
    }
    out
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
            "::error title=seq.gap,file=x%2Cy.jsonl,line=3::gap: 2\n"
        );
        // CR and LF are escaped, not cleaned; an ESC is cleaned in the
        // message, and kept in the file's name, which must name the file.
        assert_eq!(
            line("error", Some("a\nb"), 0, "t", "x\r\n\u{1b}[1m"),
            "::error title=t,file=a%0Ab::x%0D%0A\\u{1b}[1m\n"
        );
        assert_eq!(
            line("error", Some("a\u{1b}\u{7}\tb"), 1, "t", "m"),
            "::error title=t,file=a\u{1b}\u{7}\tb,line=1::m\n"
        );
    }
}
