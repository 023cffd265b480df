//! Typed NDJSON (docs/contract.md §9), such as the aiocs daemon stream
//! (`spec/aiocs-cli-json-contract.md`): every line an object with a string
//! discriminator (`--type-field`, default `type`). Such a stream is
//! unbounded unless `--first TYPE` / `--last TYPE` say how a run starts and
//! ends; with `--multi-run` a `--first` line opens the next run. Exit 0 or
//! 65: the format has no failure of its own to report.

use std::io;

use super::contract::{Contract, LineKind, Mapping, Outcomes, Ruling};
use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Reporter;
use crate::check::rules::Rule;
use crate::check::run_state::{RunState, SummaryClaim};
use crate::check::verdict::End;
use crate::json::Event;
use crate::text::quote;

pub(in crate::check) struct Ndjson;

impl Contract for Ndjson {
    fn type_field<'a>(&'a self, flag: &'a str) -> &'a str {
        flag
    }

    fn outcomes(&'static self) -> Outcomes {
        Outcomes::Framework
    }

    fn mapping(&'static self) -> Mapping {
        Mapping::Typed {
            discriminator: true,
            untyped_as_record: false,
        }
    }

    fn event(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ev: &Event<'_>,
    ) -> io::Result<Ruling> {
        let cfg = out.cfg;
        run.count_line();
        let first_line = run.lines == 1;
        let after_last = run.summary.is_some();
        run.domain += 1;
        let ty = discriminator(cfg, ev);
        if ev.count(&cfg.type_field) > 1 {
            // The discriminator decides where a run ends (docs/contract.md §13).
            let msg = format!(
                "{} appears twice: parsers disagree about which one wins",
                quote(&cfg.type_field)
            );
            out.report(run, Rule::VerdictDuplicateKey, None, msg)?;
        }
        if ty.is_none() {
            let msg = format!(
                "no string {}: every line of a typed stream names its type",
                quote(&cfg.type_field)
            );
            out.report(run, Rule::NdjsonTypeMissing, None, msg)?;
        }
        if let Some(first) = &cfg.first
            && first_line
            && ty.as_deref() != Some(first)
        {
            let msg = format!(
                "the run starts with {}, not {}: its head was cut",
                ty.as_deref().map_or("an untyped line".to_string(), quote),
                quote(first)
            );
            out.report(run, Rule::NdjsonFirstWrong, None, msg)?;
        }
        if after_last && !run.not_last_reported {
            run.not_last_reported = true;
            let msg = format!(
                "event after the run's {} line, which ends it",
                quote(cfg.last.as_deref().unwrap_or_default())
            );
            out.report(run, Rule::NdjsonAfterLast, None, msg)?;
        }
        let ends = !after_last && ty.is_some() && ty.as_deref() == cfg.last.as_deref();
        if ends {
            run.summary = Some(Box::new(SummaryClaim {
                ok: Some(true),
                ..SummaryClaim::default()
            }));
        }
        let seen = LineKind {
            event: ty.is_some(),
            protocol: Protocol::Ndjson,
            ..LineKind::default()
        };
        Ok(Ruling {
            ends,
            ..Ruling::seen(seen)
        })
    }

    /// With `--last`, a run that never reached it was cut.
    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
        if let Some(last) = &out.cfg.last
            && run.summary.is_none()
        {
            let msg = format!(
                "the stream ended after {} without its {} line: it was cut off or the producer stopped",
                crate::text::plural(run.lines, "line"),
                quote(last)
            );
            out.report(run, Rule::NdjsonLastMissing, None, msg)?;
        }
        Ok(())
    }

    /// Typed NDJSON without `--last` has no end to wait for.
    fn end(&self, _run: &RunState, cfg: &Config) -> End {
        End {
            passed: "ended by its last type",
            end: "its --last line",
            missing: Rule::NdjsonLastMissing,
            unbounded: "typed NDJSON, no end type given",
            ok_with_error: "the summary says ok, but the run reported a process-scope error, which ended it",
            bounded: cfg.last.is_some() && !cfg.unbounded,
            uses_seq: false,
            unscoped: None,
        }
    }
}

/// Does `ev` open a run (`--first`, with `--multi-run`)?
pub(in crate::check) fn opens(cfg: &Config, ev: &Event<'_>) -> bool {
    cfg.first
        .as_deref()
        .is_some_and(|first| discriminator(cfg, ev).as_deref() == Some(first))
}

fn discriminator(cfg: &Config, ev: &Event<'_>) -> Option<String> {
    ev.get(&cfg.type_field)
        .and_then(|v| v.as_str())
        .map(|s| s.into_owned())
}
