//! Findings: what one is (a rule broken at a line), how the rules build
//! one, and the one place that fills in its line, run and severity and
//! hands it on.

use std::io;

use super::config::Config;
use super::rules::{Rule, Severity};
use super::run_state::RunState;
use super::verdict::RunVerdict;

/// One finding: a rule broken at a line.
#[derive(Clone, Debug)]
pub struct Finding {
    pub rule: Rule,
    pub severity: Severity,
    /// 1-based; 0 when the finding is about the input as a whole.
    pub line: u64,
    pub run: Option<String>,
    /// The first line of the open run it is charged to: with `run`, which
    /// run it is (runs without an id have no other name); none for a
    /// finding of no run, or of a run already judged.
    pub run_line: Option<u64>,
    pub seq: Option<u64>,
    pub message: String,
    pub column: Option<usize>,
    /// `seq.gap` / `seq.not-from-zero`: first, last and count of the missing.
    pub missing: Option<(u64, u64, u64)>,
    /// `event.schema-invalid`: where in the event and the schema.
    pub place: Option<Box<SchemaPlace>>,
    /// It says lines were lost in transport (`Rule::loses_lines`, unless
    /// the finding itself shows none were: a count below what arrived).
    pub lost: bool,
}

pub use crate::input::line_check::SchemaPlace;

/// Where findings and verdicts go.
pub trait Sink {
    fn finding(&mut self, f: &Finding) -> io::Result<()>;
    /// A run judged, given whole: a sink that keeps it keeps it without
    /// a copy (ten thousand runs, docs/contract.md §8.2).
    fn run(&mut self, r: RunVerdict) -> io::Result<()>;

    /// A line's run is known, by the checker's slot for it, before its
    /// protocol judges the line: a sink that keeps state per run beside
    /// the checker's may fetch it now, so that its cache miss is taken
    /// while the line is judged, not after (docs/contract.md §8.2). Told
    /// only when the slot is not the last line's, whose state is warm.
    fn placed(&mut self, _slot: usize) {}
}

/// A sink that keeps nothing: lines judged only for the state they leave
/// (`--follow --from-end`, `--state`: what was reported already).
pub struct Discard;

impl Sink for Discard {
    fn finding(&mut self, _: &Finding) -> io::Result<()> {
        Ok(())
    }

    fn run(&mut self, _: RunVerdict) -> io::Result<()> {
        Ok(())
    }
}

/// A finding before the checker fills in line, run and severity.
pub(super) struct Draft {
    pub(super) rule: Rule,
    pub(super) base: Severity,
    pub(super) seq: Option<u64>,
    pub(super) message: String,
    pub(super) column: Option<usize>,
    pub(super) missing: Option<(u64, u64, u64)>,
    pub(super) place: Option<Box<SchemaPlace>>,
    pub(super) lost: bool,
}

impl Draft {
    pub(super) fn new(rule: Rule, message: String) -> Draft {
        Draft {
            rule,
            base: rule.default_severity(),
            seq: None,
            message,
            column: None,
            missing: None,
            place: None,
            lost: rule.loses_lines(),
        }
    }

    /// A finding of a rule that may say lines were lost, which shows
    /// none were (a summary that counts fewer than arrived).
    pub(super) fn none_lost(self) -> Draft {
        Draft {
            lost: false,
            ..self
        }
    }

    pub(super) fn seq(self, seq: Option<u64>) -> Draft {
        Draft { seq, ..self }
    }

    pub(super) fn column(self, column: Option<usize>) -> Draft {
        Draft { column, ..self }
    }

    pub(super) fn missing(self, range: (u64, u64, u64)) -> Draft {
        Draft {
            missing: Some(range),
            ..self
        }
    }

    /// The finding this draft is, at `severity`, about `line`, charged to
    /// a run: its id and the line it began, when it is an open run's.
    fn at(self, severity: Severity, line: u64, run: (Option<String>, Option<u64>)) -> Finding {
        Finding {
            rule: self.rule,
            severity,
            line,
            run: run.0,
            run_line: run.1,
            seq: self.seq,
            message: self.message,
            column: self.column,
            missing: self.missing,
            place: self.place,
            lost: self.lost,
        }
    }
}

/// Where the findings about the line being judged go: all a run's rules
/// see of the checker besides the run itself.
pub(super) struct Reporter<'a> {
    pub(super) cfg: &'a Config,
    /// The line being judged (0 before the first).
    pub(super) line: u64,
    pub(super) sink: &'a mut dyn Sink,
    /// `run`: how the command ended, when it wrote no line at all
    /// ("exited 64, a usage error, before writing a stream").
    pub(super) silent_exit: Option<&'a str>,
}

impl<'a> Reporter<'a> {
    pub(super) fn new(cfg: &'a Config, line: u64, sink: &'a mut dyn Sink) -> Reporter<'a> {
        Reporter {
            cfg,
            line,
            sink,
            silent_exit: None,
        }
    }

    /// A finding about `run` with the rule's default severity.
    pub(super) fn report(
        &mut self,
        run: &mut RunState,
        rule: Rule,
        seq: Option<u64>,
        message: String,
    ) -> io::Result<()> {
        self.emit(run, Draft::new(rule, message).seq(seq))
    }

    /// Fill in line, run and severity, count it against the run, and send it.
    pub(super) fn emit(&mut self, run: &mut RunState, f: Draft) -> io::Result<()> {
        let Some(severity) = self.cfg.levels.at(f.rule, f.base) else {
            return Ok(());
        };
        if run.unsupported && !f.rule.is_line_level() {
            return Ok(());
        }
        // Every message is one bounded line, whatever it quotes (docs/contract.md §3.2).
        let message = crate::text::one_line(&f.message);
        if severity == Severity::Error {
            run.error_findings += 1;
            run.first_error.get_or_insert_with(|| message.clone());
            if f.lost {
                run.lost.get_or_insert_with(|| message.clone());
            }
        }
        let f = Draft { message, ..f };
        let run = (run.name.clone(), Some(run.first_line));
        self.sink.finding(&f.at(severity, self.line, run))
    }

    /// A finding charged to no run (`rule` at its configured severity).
    pub(super) fn unowned(
        &mut self,
        rule: Rule,
        run: Option<String>,
        message: String,
    ) -> io::Result<()> {
        let line = self.line;
        self.unowned_at(rule, line, run, message)
    }

    /// As `unowned`, about line `line`.
    pub(super) fn unowned_at(
        &mut self,
        rule: Rule,
        line: u64,
        run: Option<String>,
        message: String,
    ) -> io::Result<()> {
        let Some(severity) = self.cfg.levels.of(rule) else {
            return Ok(());
        };
        let f = Draft::new(rule, message);
        self.sink.finding(&f.at(severity, line, (run, None)))
    }
}

#[cfg(test)]
pub(in crate::check) mod tests {
    use super::*;
    use crate::check::rules::{Levels, Word};

    /// A sink that keeps what it is handed.
    #[derive(Default)]
    pub(in crate::check) struct Kept {
        pub(in crate::check) findings: Vec<Finding>,
        pub(in crate::check) runs: Vec<RunVerdict>,
    }

    impl Sink for Kept {
        fn finding(&mut self, f: &Finding) -> io::Result<()> {
            self.findings.push(f.clone());
            Ok(())
        }
        fn run(&mut self, r: RunVerdict) -> io::Result<()> {
            self.runs.push(r);
            Ok(())
        }
    }

    fn report(cfg: &Config, run: &mut RunState, rule: Rule, msg: &str) -> Vec<Finding> {
        let mut kept = Kept::default();
        let mut out = Reporter {
            cfg,
            line: 7,
            sink: &mut kept,
            silent_exit: None,
        };
        out.report(run, rule, Some(3), msg.to_string()).unwrap();
        kept.findings
    }

    #[test]
    fn a_finding_is_filled_in_and_counted_against_its_run() {
        let cfg = Config::default();
        let mut run = RunState::new(Some(b"r"[..].into()), Some("r".into()), 1);
        let f = report(&cfg, &mut run, Rule::SeqGap, "first\nsecond");
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].line, f[0].seq, f[0].run.as_deref()),
            (7, Some(3), Some("r"))
        );
        assert_eq!(f[0].severity, Severity::Error);
        // One bounded line, whatever the message held (docs/contract.md §3.2).
        assert!(!f[0].message.contains('\n'), "{:?}", f[0].message);
        report(&cfg, &mut run, Rule::SeqRepeat, "later");
        assert_eq!(run.error_findings, 2);
        assert_eq!(run.first_error.as_deref(), Some(f[0].message.as_str()));
    }

    #[test]
    fn an_allowed_rule_is_not_sent_and_not_counted() {
        let cfg = Config {
            levels: Levels::new(&[(Rule::SeqGap, Word::Allow)], false),
            ..Config::default()
        };
        let mut run = RunState::new(None, None, 1);
        assert!(report(&cfg, &mut run, Rule::SeqGap, "gap").is_empty());
        assert_eq!(run.error_findings, 0);
    }

    #[test]
    fn a_run_not_interpreted_keeps_only_its_line_findings() {
        let cfg = Config::default();
        let mut run = RunState::new(None, None, 1);
        run.unsupported = true;
        assert!(report(&cfg, &mut run, Rule::SeqGap, "gap").is_empty());
        assert_eq!(report(&cfg, &mut run, Rule::JsonInvalid, "bad").len(), 1);
    }
}
