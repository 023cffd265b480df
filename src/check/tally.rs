//! What a command's exit status is made from (docs/contract.md §4.1): every finding
//! and run verdict its report saw, what the upstream said of itself, and
//! the trouble reading the input. The report writer reads it for the
//! summary; it never decides with it. `Tally::decide` is the one place
//! the three make an exit status.

use super::finding::Finding;
use super::rules::Severity;
use super::run_state::{Cause, Identity};
use super::verdict::{RunVerdict, Verdict};
use crate::exit::Exit;

/// Counts over everything judged, for the exit status and the summary.
#[derive(Default, Debug)]
pub struct Tally {
    pub findings: [u64; 3],
    pub runs: [u64; 4],
    pub upstream_warnings: u64,
    pub upstream_errors: u64,
    pub input_domain: u64,
    /// The cause to report when failing: the retryable one with the
    /// longest wait, else the first non-retryable one.
    pub cause: Option<Cause>,
    pub identity: Option<Identity>,
    pub identities: u8,
    /// The worst trouble opening or reading an input (66, 74; run's 73,
    /// 126, 127), by `Exit::worse`.
    trouble: Option<Exit>,
}

impl Tally {
    /// The exit status of a command that read input (docs/contract.md §4.1), decided
    /// once: a signal caught ends it as cancelled, whatever it had met;
    /// else trouble reading, since what was not read has no verdict; else
    /// `own`, the command's weighing of the verdict on what was judged
    /// (reconcile adds its own 65, run keeps its last attempt's).
    pub fn decide(&self, caught: Option<Exit>, own: impl FnOnce(Exit) -> Exit) -> Exit {
        caught.or(self.trouble).unwrap_or_else(|| own(self.exit()))
    }

    /// An input not opened or not read whole, and the status it ends with.
    pub fn trouble(&mut self, exit: Exit) {
        self.trouble = Exit::worst(self.trouble, Some(exit));
    }

    /// The verdict on what was judged: 65 over 1 over 75 (`Exit::verdict`).
    pub fn exit(&self) -> Exit {
        let [nonconforming, failed, retryable] = self.counts();
        Exit::verdict(nonconforming, failed, retryable)
    }

    /// What the exit status is made of: the causes of 65 (error findings,
    /// and nonconforming runs, since a run can be one with every finding
    /// allowed: a cut run passes only with --unbounded, docs/contract.md §3.3), the
    /// failed runs and the retryable ones. `run` takes the difference over
    /// one attempt.
    pub fn counts(&self) -> [u64; 3] {
        [
            self.findings[Severity::Error as usize] + self.runs[Verdict::Nonconforming as usize],
            self.runs[Verdict::Failed as usize],
            self.runs[Verdict::Retryable as usize],
        ]
    }

    pub fn finding(&mut self, f: &Finding) {
        self.findings[f.severity as usize] += 1;
    }

    /// A verdict of a command's own (reconcile).
    pub fn verdict(&mut self, v: Verdict) {
        self.runs[v as usize] += 1;
    }

    pub fn run(&mut self, r: &RunVerdict) {
        self.runs[r.verdict as usize] += 1;
        self.upstream_warnings += r.warnings;
        self.upstream_errors += r.errors;
        self.input_domain += r.domain_events;
        if let Some(id) = &r.identity {
            self.upstream(id);
        }
        if let Some(c) = &r.cause {
            let failed = match r.verdict {
                Verdict::Failed => Some(true),
                Verdict::Retryable => Some(false),
                _ => None,
            };
            if let Some(final_) = failed
                && c.outweighs(self.cause.as_ref(), final_)
            {
                self.cause = Some(c.clone());
            }
        }
    }

    /// The upstream's identity, from a judged run or one still open when
    /// the reading stopped (a cancelled or timed-out report keeps it).
    pub fn upstream(&mut self, id: &Identity) {
        let same = |a: &Identity| {
            (&a.tool, &a.tool_version, &a.schema_name, &a.schema_version)
                == (
                    &id.tool,
                    &id.tool_version,
                    &id.schema_name,
                    &id.schema_version,
                )
        };
        match &self.identity {
            None if self.identities == 0 => {
                self.identity = Some(id.clone());
                self.identities = 1;
            }
            Some(known) if !same(known) => {
                // `upstream` names one direct upstream (§13.1); with
                // several, it is unknown and so omitted.
                self.identity = None;
                self.identities = 2;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Tally;
    use crate::check::verdict::Verdict;
    use crate::exit::Exit::{self, *};

    fn tally(troubles: &[Exit], verdicts: &[Verdict]) -> Tally {
        let mut t = Tally::default();
        for &e in troubles {
            t.trouble(e);
        }
        for &v in verdicts {
            t.verdict(v);
        }
        t
    }

    /// A signal caught, the troubles met, the run verdicts, and the status.
    type Row = (Option<Exit>, &'static [Exit], &'static [Verdict], Exit);

    /// A signal, then the trouble reading, then the verdict (docs/contract.md §4.1).
    #[test]
    fn the_decision() {
        let rows: [Row; 12] = [
            (None, &[], &[], Pass),
            (None, &[], &[Verdict::Pass], Pass),
            (None, &[], &[Verdict::Retryable], Retryable),
            // 75 only when every failed run is retryable.
            (None, &[], &[Verdict::Retryable, Verdict::Failed], Failed),
            (
                None,
                &[],
                &[Verdict::Failed, Verdict::Nonconforming],
                Nonconforming,
            ),
            (None, &[NoInput], &[Verdict::Nonconforming], NoInput),
            (None, &[Io], &[Verdict::Pass], Io),
            (None, &[NoInput, Io], &[], Io),
            (None, &[Io, NoInput], &[], Io),
            (None, &[Io, CommandNotFound], &[], CommandNotFound),
            (
                Some(Interrupted),
                &[Io],
                &[Verdict::Nonconforming],
                Interrupted,
            ),
            (Some(HungUp), &[], &[], HungUp),
        ];
        for (caught, troubles, verdicts, want) in rows {
            let got = tally(troubles, verdicts).decide(caught, |v| v);
            assert_eq!(got, want, "{caught:?} {troubles:?} {verdicts:?}");
        }
    }

    /// The command weighs the verdict, never a signal or the trouble.
    #[test]
    fn the_command_weighs_only_the_verdict() {
        let wrong = |v: Exit| v.worse(Nonconforming);
        assert_eq!(
            tally(&[], &[Verdict::Pass]).decide(None, wrong),
            Nonconforming
        );
        assert_eq!(tally(&[Io], &[]).decide(None, wrong), Io);
        assert_eq!(tally(&[], &[]).decide(Some(Terminated), wrong), Terminated);
        let last = |_| Retryable;
        assert_eq!(tally(&[], &[Verdict::Failed]).decide(None, last), Retryable);
    }
}
