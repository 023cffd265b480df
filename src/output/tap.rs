//! `--output tap` (verify and run, docs/contract.md §1.3): TAP, so `prove` and every
//! other TAP consumer can read aoitap's verdict.
//!
//! The version line says 13, not 14: what is written here is the common
//! ground of TAP 13 and 14 (YAML blocks, plan at the end, `\#` escaped),
//! and `prove` from Test::Harness 3.44 (Debian 12's) rejects a
//! `TAP version 14` line as a parse error, failing every file.
//!
//! One test point per judged run (per attempt under `run`), `ok` only for
//! a pass; `not ok` carries a YAML diagnostic block with the verdict, its
//! message and the run's findings (rule, line, message). The plan comes
//! last (`1..N`), as TAP allows when the count is not known in advance.
//! A run is judged or it is not a point: `# SKIP` is only lint's, for a
//! check not made. `# TODO` is `run`'s, for an attempt that failed and
//! was retried, and lint's, for a failure listed as expected.
//! YAML strings are written as JSON strings, which YAML 1.2 reads as
//! double-quoted scalars, so no message can break the block.

use std::collections::HashMap;
use std::io::{self, Write};

use super::printer::{At, Carries, Check, Ended, Item, Local, Printer};
use crate::check::{Finding, RunVerdict, Tally, Verdict};
use crate::exit::Exit;
use crate::text::{clean, one_line};

/// Findings listed per test point; the rest are counted.
const LISTED: usize = 10;

/// The TAP side of a report: points so far, and each open run's findings
/// waiting for its verdict.
pub struct Tap<W> {
    out: W,
    points: u64,
    pending: HashMap<Option<String>, Pending>,
    /// Points written but held back (`hold`): their head line and block.
    held: Option<Vec<(String, String)>>,
}

#[derive(Default)]
struct Pending {
    listed: Vec<String>,
    more: u64,
}

impl<W: Write> Tap<W> {
    pub fn new(out: W) -> Tap<W> {
        Tap {
            out,
            points: 0,
            pending: HashMap::new(),
            held: None,
        }
    }

    /// Held until its run's verdict: a test point is one run.
    fn pend(&mut self, f: &Finding) {
        let p = self.pending.entry(f.run.clone()).or_default();
        if p.listed.len() >= LISTED {
            p.more += 1;
            return;
        }
        let mut item = format!(
            "    - rule: {}\n      severity: {}\n",
            f.rule.id(),
            f.severity.name()
        );
        if f.line > 0 {
            item.push_str(&format!("      line: {}\n", f.line));
        }
        item.push_str(&format!("      message: {}\n", yaml(&f.message)));
        p.listed.push(item);
    }

    /// One run's test point.
    fn run_point(&mut self, file: &str, r: &RunVerdict) -> io::Result<()> {
        let who = match &r.run {
            Some(id) => format!("run {id}"),
            None => format!("run from line {}", r.first_line),
        };
        let mut diag = vec![
            ("verdict", yaml(r.verdict.name())),
            ("message", yaml(&r.message)),
            ("protocol", r.protocol.name().to_string()),
        ];
        if let Some(c) = &r.cause {
            diag.push(("retryable", c.retryable.to_string()));
            if let Some(ms) = c.retry_after_ms.filter(|_| c.retryable) {
                diag.push(("retry_after_ms", ms.to_string()));
            }
        }
        // Findings without a run (about the input) go with the next point.
        let mut found = self.pending.remove(&r.run).unwrap_or_default();
        if let Some(loose) = self.pending.remove(&None) {
            found.more += loose.more;
            found.listed.extend(loose.listed);
        }
        self.point(
            r.verdict == Verdict::Pass,
            &format!("{file}: {who}: {}", r.message),
            &diag,
            &found,
        )
    }

    /// A failure of aoitap itself (an input that cannot be read, a command
    /// that cannot be run): a point of its own, never ok.
    fn error_point(&mut self, code: &str, message: &str) -> io::Result<()> {
        let diag = [("code", yaml(code)), ("message", yaml(message))];
        self.point(false, message, &diag, &Pending::default())
    }

    /// A point for something that is not a run: an attempt that timed
    /// out or was cancelled before its run could be judged.
    fn other(&mut self, ok: bool, what: &str) -> io::Result<()> {
        self.point(ok, what, &[("message", yaml(what))], &Pending::default())
    }

    /// `lint`: one check's point. A check not made (skipped, not claimed,
    /// inconclusive) is `ok # SKIP` with the reason; an expected failure
    /// is `not ok # TODO` (TAP: not counted), so a consumer agrees with
    /// lint's exit status.
    fn check_point(&mut self, ok: bool, what: &str, directive: Option<&str>) -> io::Result<()> {
        let Some(directive) = directive else {
            return self.other(ok, what);
        };
        self.points += 1;
        let status = if ok { "ok" } else { "not ok" };
        let escape = |s: &str| one_line(s).replace('\\', "\\\\").replace('#', "\\#");
        let head = format!(
            "{status} {} - {} # {directive}\n",
            self.points,
            escape(what)
        );
        self.out.write_all(head.as_bytes())
    }

    fn point(
        &mut self,
        ok: bool,
        description: &str,
        diag: &[(&str, String)],
        found: &Pending,
    ) -> io::Result<()> {
        self.points += 1;
        let status = if ok { "ok" } else { "not ok" };
        // `#` would start a directive (TAP 14: escape it).
        let description = one_line(description)
            .replace('\\', "\\\\")
            .replace('#', "\\#");
        let head = format!("{status} {} - {description}", self.points);
        let mut text = String::new();
        // A block is never empty: an empty one is not YAML to `prove`.
        if (!ok && !diag.is_empty()) || !found.listed.is_empty() {
            text.push_str("  ---\n");
            for (k, v) in diag {
                text.push_str(&format!("  {k}: {v}\n"));
            }
            if !found.listed.is_empty() {
                text.push_str("  findings:\n");
                for item in &found.listed {
                    text.push_str(item);
                }
            }
            if found.more > 0 {
                text.push_str(&format!("  more_findings: {}\n", found.more));
            }
            text.push_str("  ...\n");
        }
        match &mut self.held {
            Some(held) => {
                held.push((head, text));
                Ok(())
            }
            None => self.out.write_all(format!("{head}\n{text}").as_bytes()),
        }
    }

    /// Hold the points that follow until `release`: `run` knows whether
    /// an attempt is retried only once its run is judged.
    fn hold_points(&mut self) {
        self.held.get_or_insert_with(Vec::new);
    }

    /// Write the held points; a failure that is retried is marked
    /// `# TODO` (TAP's "expected to fail, not counted"), so a consumer
    /// agrees with the exit status, which is the last attempt's.
    fn release_points(&mut self, todo: Option<&str>) -> io::Result<()> {
        for (head, block) in self.held.take().unwrap_or_default() {
            let directive = match todo {
                Some(why) if head.starts_with("not ok") => format!(" # TODO {why}"),
                _ => String::new(),
            };
            self.out
                .write_all(format!("{head}{directive}\n{block}").as_bytes())?;
        }
        Ok(())
    }

    /// The plan, last, and the result as a comment. A report with no
    /// point still says how it ended, as one point.
    fn finish(&mut self, pass: bool, result: &str) -> io::Result<()> {
        // Points held for a retry that never began (a signal came).
        self.release_points(None)?;
        if self.points == 0 {
            self.other(pass, result)?;
        }
        self.out
            .write_all(format!("1..{}\n# {}\n", self.points, clean(result)).as_bytes())
    }

    /// A comment line (what human output says in passing).
    fn comment(&mut self, text: &str) -> io::Result<()> {
        for line in text.lines() {
            self.out
                .write_all(format!("# {}\n", clean(line)).as_bytes())?;
        }
        Ok(())
    }

    /// `lint`: one check's point, a failure's calls' stderr in its
    /// diagnostics (docs/contract.md §1.4).
    fn check(&mut self, c: &Check<'_>) -> io::Result<()> {
        let what = format!("{}: {}", c.name, c.detail);
        let directive = match c.properties.result {
            "skipped" | "not-claimed" | "inconclusive" => {
                Some(format!("SKIP {}", c.properties.result))
            }
            "expected-failure" => Some("TODO expected failure".to_string()),
            _ => None,
        };
        // An expected failure is a failure TAP does not count.
        let ok = c.ok && c.properties.result != "expected-failure";
        if directive.is_none() && !c.properties.stderr.is_empty() {
            let said: Vec<String> = c.properties.stderr.iter().flat_map(|s| s.lines()).collect();
            let stderr = serde_json::to_string(&said.join("\n")).unwrap_or_default();
            let diag = [("message", yaml(&what)), ("stderr", stderr)];
            return self.point(ok, &what, &diag, &Pending::default());
        }
        self.check_point(ok, &what, directive.as_deref())
    }

    /// `run`: an attempt no run was judged in is the point; any other is
    /// a comment beside its run's point.
    fn attempt(&mut self, at: &At<'_>, e: &Ended<'_>) -> io::Result<()> {
        if e.attempt.timed_out || e.attempt.cancelled {
            let what = format!("{}: {}", at.file, e.message);
            self.other(false, &what)
        } else {
            self.comment(e.message)
        }
    }
}

impl<W: Write> Printer for Tap<W> {
    fn carries(&self) -> Carries {
        Carries::LOG
    }

    fn begin(&mut self, _at: &At<'_>) -> io::Result<()> {
        self.out.write_all(b"TAP version 13\n")
    }

    fn text(&mut self, _at: &At<'_>, text: &str) -> io::Result<()> {
        self.comment(text)
    }

    fn local(&mut self, _at: &At<'_>, l: &Local<'_>) -> io::Result<()> {
        if l.warning {
            return writeln!(self.out, "# {}", l.message);
        }
        self.error_point(l.code, l.message)
    }

    fn finding(&mut self, _at: &At<'_>, f: &Finding) -> io::Result<()> {
        self.pend(f);
        Ok(())
    }

    fn run(&mut self, at: &At<'_>, r: &RunVerdict, _path: Option<&str>) -> io::Result<()> {
        self.run_point(at.file, r)
    }

    fn item(&mut self, at: &At<'_>, item: Item<'_>) -> io::Result<()> {
        match item {
            Item::Check(c) => self.check(c),
            Item::Attempt(e) => self.attempt(at, e),
            Item::TimedOut(_) => Ok(()),
            Item::Hold => {
                self.hold_points();
                Ok(())
            }
            Item::Release(todo) => self.release_points(todo),
        }
    }

    fn end(&mut self, at: &At<'_>, exit: Exit, tally: &Tally) -> io::Result<()> {
        let result = super::words::worded(at, exit, tally);
        self.finish(exit == Exit::Pass, &result)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A run that cannot start (a usage error, a `--save` that cannot be
/// created): `Bail out!` on stdout, so a TAP consumer stops and says why
/// instead of finding no plan (docs/contract.md §3.3).
pub fn bail_out(reason: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(format!("Bail out! {}\n", one_line(reason)).as_bytes())?;
    out.flush()
}

/// A YAML scalar that holds any text: a JSON string, one bounded line.
fn yaml(s: &str) -> String {
    serde_json::to_string(&one_line(s)).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::printer::tests::{at, gap};
    use crate::output::style::{Format, Style};

    /// `run --retries`: the points of an attempt that is retried are
    /// held, and its failures go out as `# TODO retried`, so `prove`
    /// agrees with the exit status, which is the last attempt's; the
    /// last attempt's go out as they are.
    #[test]
    fn a_retried_attempts_failures_are_todo_and_the_last_ones_are_not() {
        let style = Style::plain(Format::Tap);
        let at = at("run", "tool", &style);
        let failed = RunVerdict::sample(Some("r1"), Verdict::Failed, "the run failed");
        let mut tap = Tap::new(Vec::new());
        tap.begin(&at).unwrap();
        tap.item(&at, Item::Hold).unwrap();
        tap.finding(&at, &gap(2)).unwrap();
        tap.run(&at, &failed, None).unwrap();
        assert_eq!(tap.out, b"TAP version 13\n", "held until released");
        tap.item(&at, Item::Release(Some("retried"))).unwrap();
        tap.item(&at, Item::Hold).unwrap();
        tap.run(&at, &failed, None).unwrap();
        tap.item(&at, Item::Release(None)).unwrap();
        tap.end(&at, Exit::Failed, &Tally::default()).unwrap();
        let text = String::from_utf8(tap.out).unwrap();
        let heads: Vec<&str> = text.lines().filter(|l| l.contains("ok ")).collect();
        assert_eq!(
            heads,
            [
                "not ok 1 - tool: run r1: the run failed # TODO retried",
                "not ok 2 - tool: run r1: the run failed",
            ],
            "{text}"
        );
        assert!(text.contains("      rule: seq.gap\n") || text.contains("    - rule: seq.gap\n"));
        assert!(
            text.ends_with("1..2\n# Result: FAIL (0 runs; exit 1)\n"),
            "{text}"
        );
    }
}
