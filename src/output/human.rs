//! Human output: the words a person reads at a terminal or in a log, one
//! line each. Everything that came from the input (file names, run ids,
//! tools, messages) is escaped with `clean`, so no control byte reaches a
//! terminal and no id can forge a line (docs/contract.md §3.2).

use std::io::{self, Write};

use super::printer::{At, Carries, Check, Item, Printer};
use super::style::{self, BAD, GOOD, NOTE, WARN};
use super::words;
use crate::check::rules::Severity;
use crate::check::{Finding, OpenRun, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::text::{clean, plural, push_number};

/// The human report: findings, verdicts and a result line, each a line of
/// its own.
pub struct Human<W> {
    pub(super) out: W,
    /// `Style::per_input`: the input whose findings are being counted, how
    /// many were shown and how many left out and not yet said.
    capped: (String, u64, u64),
    /// lint: the stderr tails shown, by call and text, and the check they
    /// were shown under: one call that fails several checks is quoted once.
    tails: Vec<(String, String, String)>,
}

impl<W: Write> Human<W> {
    pub fn new(out: W) -> Human<W> {
        Human {
            out,
            capped: Default::default(),
            tails: vec![],
        }
    }

    /// The findings `Style::per_input` left out since this was last said:
    /// said before the verdict they led to, or the next input's findings.
    fn say_capped(&mut self) -> io::Result<()> {
        let n = std::mem::take(&mut self.capped.2);
        if n == 0 {
            return Ok(());
        }
        let text = format!(
            "{}: and {} (--limit 0 shows all)\n",
            clean(&self.capped.0),
            plural(n, "more finding")
        );
        self.out.write_all(text.as_bytes())
    }

    /// lint: one check's line, and under it the stderr of the calls that
    /// failed it, each call quoted once.
    fn check(&mut self, c: &Check<'_>) -> io::Result<()> {
        let mut text = format!(
            "{:<16} {} — {}\n",
            c.properties.result,
            c.name,
            clean(c.detail)
        );
        // Under the check, indented past its result word.
        let indent = " ".repeat(17);
        for s in &c.properties.stderr {
            let key = (s.call.to_string(), s.tail.unwrap_or_default().to_string());
            let under = self.tails.iter().find(|t| (&t.0, &t.1) == (&key.0, &key.1));
            if let Some((_, _, check)) = under {
                let call = clean(s.call);
                text.push_str(&format!("{indent}stderr of {call}: as under {check}\n"));
                continue;
            }
            for line in s.lines() {
                text.push_str(&format!("{indent}{line}\n"));
            }
            self.tails.push((key.0, key.1, c.name.to_string()));
        }
        self.out.write_all(text.as_bytes())
    }
}

impl<W: Write> Printer for Human<W> {
    fn carries(&self) -> Carries {
        Carries {
            for_a_person: true,
            ..Carries::default()
        }
    }

    fn text(&mut self, _at: &At<'_>, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())
    }

    fn shows(&self, at: &At<'_>, f: &Finding) -> bool {
        !(at.style.failures_only && f.severity != Severity::Error)
    }

    fn finding(&mut self, at: &At<'_>, f: &Finding) -> io::Result<()> {
        if let Some(cap) = at.style.per_input {
            if self.capped.0 != at.file {
                self.say_capped()?;
                self.capped = (at.file.to_string(), 0, 0);
            }
            if self.capped.1 >= cap {
                self.capped.2 += 1;
                return Ok(());
            }
            self.capped.1 += 1;
        }
        if at.style.quiet_pass && f.severity == Severity::Info {
            return Ok(());
        }
        self.out
            .write_all(finding(at.file, f, at.style.color).as_bytes())
    }

    fn open_run(&mut self, at: &At<'_>, _run: &OpenRun, text: &str) -> io::Result<()> {
        self.say_capped()?;
        self.text(at, text)
    }

    fn run(&mut self, at: &At<'_>, r: &RunVerdict, path: Option<&str>) -> io::Result<()> {
        self.say_capped()?;
        let passed = r.verdict == Verdict::Pass;
        if (at.style.quiet_pass || at.style.failures_only) && passed {
            return Ok(());
        }
        self.out
            .write_all(run(at.file, r, path, at.style.color).as_bytes())
    }

    fn item(&mut self, at: &At<'_>, item: Item<'_>) -> io::Result<()> {
        match item {
            Item::Check(c) => self.check(c),
            Item::Attempt(a) => words::attempt(&mut self.out, at, a),
            _ => Ok(()),
        }
    }

    fn end(&mut self, at: &At<'_>, exit: Exit, tally: &Tally) -> io::Result<()> {
        self.say_capped()?;
        if at.style.quiet_pass && exit == Exit::Pass {
            return Ok(());
        }
        let mut line = words::dropped(at);
        match at.result {
            Some(r) => line.push_str(r),
            None => line.push_str(&words::result(exit, tally, at.timed_out(), at.style.color)),
        }
        line.push('\n');
        self.out.write_all(line.as_bytes())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// How a severity is named to a person, and its colour.
pub fn severity(s: Severity) -> (&'static str, anstyle::Style) {
    match s {
        Severity::Error => ("error", BAD),
        Severity::Warning => ("warning", WARN),
        Severity::Info => ("note", NOTE),
    }
}

/// `file:12: error[seq.gap]: message (run R)`.
pub fn finding(file: &str, f: &Finding, color: bool) -> String {
    let (word, paint) = severity(f.severity);
    let place = if f.line > 0 {
        format!("{}:{}", clean(file), f.line)
    } else {
        clean(file).into_owned()
    };
    let run = f
        .run
        .as_ref()
        .map(|r| format!(" (run {})", clean(r)))
        .unwrap_or_default();
    let head = format!("{word}[{}]", f.rule);
    let head = style::paint(color, paint, &head);
    format!("{place}: {head}: {}{run}\n", clean(&f.message))
}

/// `file: PASS: run R (tool command) [protocol] -> path: message`.
pub fn run(file: &str, r: &RunVerdict, path: Option<&str>, color: bool) -> String {
    let (word, paint) = verdict(r.verdict);
    let what = r
        .identity
        .as_ref()
        .map(|i| {
            let parts: Vec<&str> = [i.tool.as_deref(), i.command.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            if parts.is_empty() {
                String::new()
            } else {
                format!(" ({})", clean(&parts.join(" ")))
            }
        })
        .unwrap_or_default();
    let to = path
        .map(|p| format!(" -> {}", clean(p)))
        .unwrap_or_default();
    // AOI 1.x is the default and goes unsaid; any other protocol is named,
    // so a pass is never read as a 1.x pass.
    let proto = match r.protocol {
        p if p.is_default() => String::new(),
        p => format!(" [{}]", p.name()),
    };
    format!(
        "{}: {}: {}{what}{proto}{to}: {}\n",
        clean(file),
        style::paint(color, paint, word),
        run_name(r),
        clean(&r.message)
    )
}

/// How a run's verdict is named, and its colour.
pub fn verdict(v: Verdict) -> (&'static str, anstyle::Style) {
    match v {
        Verdict::Pass => ("PASS", GOOD),
        Verdict::Failed => ("FAIL", BAD),
        Verdict::Retryable => ("RETRYABLE", WARN),
        Verdict::Nonconforming => ("NOT CONFORMING", BAD),
    }
}

/// A run by its id (escaped), else by its first line.
pub fn run_name(r: &RunVerdict) -> String {
    let mut name = String::new();
    push_run_name(&mut name, r);
    name
}

/// `run_name` into `out`.
pub(super) fn push_run_name(out: &mut String, r: &RunVerdict) {
    match &r.run {
        Some(id) => {
            out.push_str("run ");
            out.push_str(&clean(id));
        }
        // No byte, so no line to name it by.
        None if r.lines == 0 && r.message.starts_with("nothing was written") => {
            out.push_str("empty input")
        }
        None => {
            out.push_str("run from line ");
            push_number(out, r.first_line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::printer::tests::{at, gap};
    use crate::output::style::{Format, Style};

    /// At a terminal without `--limit`, an input's findings past its cap
    /// are counted, and the count is said before its run's verdict
    /// (docs/contract.md §3.4).
    #[test]
    fn findings_past_the_cap_are_counted_before_the_verdict() {
        let mut style = Style::plain(Format::Human);
        style.per_input = Some(2);
        let at = at("verify", "a.jsonl", &style);
        let mut human = Human::new(Vec::new());
        for line in 2..6 {
            human.finding(&at, &gap(line)).unwrap();
        }
        let failed = RunVerdict::sample(Some("r1"), Verdict::Nonconforming, "lines were lost");
        human.run(&at, &failed, None).unwrap();
        let text = String::from_utf8(human.out).unwrap();
        assert_eq!(
            text,
            "a.jsonl:2: error[seq.gap]: seq jumped from 1 to 3 (run r1)\n\
             a.jsonl:3: error[seq.gap]: seq jumped from 1 to 3 (run r1)\n\
             a.jsonl: and 2 more findings (--limit 0 shows all)\n\
             a.jsonl: NOT CONFORMING: run r1: lines were lost\n"
        );
    }

    /// `--failures-only` shows no finding that never fails a run, and
    /// no passing run.
    #[test]
    fn failures_only_leaves_out_warnings_and_passes() {
        let mut style = Style::plain(Format::Human);
        style.failures_only = true;
        let at = at("verify", "a.jsonl", &style);
        let mut human = Human::new(Vec::new());
        let mut warning = gap(2);
        warning.severity = Severity::Warning;
        assert!(!human.shows(&at, &warning));
        assert!(human.shows(&at, &gap(2)));
        let passed = RunVerdict::sample(Some("r1"), Verdict::Pass, "summary ok");
        human.run(&at, &passed, None).unwrap();
        assert!(human.out.is_empty());
    }
}
