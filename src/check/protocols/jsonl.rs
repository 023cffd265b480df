//! Plain JSON lines (`--protocol jsonl`, docs/contract.md §6.1, §1.6): the
//! output of a tool that speaks no protocol. Every line is a JSON object
//! and a domain event; nothing marks a run's end, so the run ends where
//! the input does, and under `run` the command's exit status is its
//! outcome. Never guessed: any AOI stream is also JSON lines.

use std::io;

use super::contract::{Contract, Exited, Judged, LineKind, Mapping, Outcomes, Ruling};
use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Reporter;
use crate::check::rules::Rule;
use crate::check::run_state::{RunState, SummaryClaim};
use crate::check::verdict::End;
use crate::json::Event;

pub(in crate::check) struct Jsonl;

impl Contract for Jsonl {
    fn type_field<'a>(&'a self, flag: &'a str) -> &'a str {
        flag
    }

    fn outcomes(&'static self) -> Outcomes {
        Outcomes::Framework
    }

    fn mapping(&'static self) -> Mapping {
        Mapping::Typed {
            discriminator: false,
            untyped_as_record: true,
        }
    }

    fn event(&self, run: &mut RunState, _out: &mut Reporter<'_>, _ev: &Event<'_>) -> Judged {
        run.count_line();
        run.domain += 1;
        Ok(Ruling::seen(LineKind {
            event: true,
            protocol: Protocol::Jsonl,
            ..LineKind::default()
        }))
    }

    /// The input's end is the run's: nothing was promised that it lacks,
    /// but an empty input says nothing at all, and is no success
    /// (docs/contract.md §6.3: plain JSON lines never launder).
    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
        if run.lines > 0 || run.summary.is_some() {
            return Ok(());
        }
        let msg = "the input holds no line: nothing was written, which says nothing of success"
            .to_string();
        out.report(run, Rule::StreamEmpty, None, msg)
    }

    fn end(&self, _run: &RunState, _cfg: &Config) -> End {
        End {
            passed: "ended with its input",
            end: "the end of its input",
            missing: Rule::SummaryMissing,
            unbounded: "plain JSON lines, ended with the input",
            ok_with_error: "the command exited 0, but the run reported an error",
            bounded: false,
            uses_seq: false,
            unscoped: None,
        }
    }

    /// Under `run`, the exit status says how the command did: a failure
    /// is the run's (docs/contract.md §1.6).
    fn exited(
        &self,
        run: &mut RunState,
        _out: &mut Reporter<'_>,
        ended: &Exited<'_>,
    ) -> io::Result<()> {
        run.summary = Some(Box::new(SummaryClaim {
            ok: Some(ended.success()),
            ..SummaryClaim::default()
        }));
        Ok(())
    }
}
