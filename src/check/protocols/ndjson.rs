//! Typed NDJSON (docs/contract.md §6.1), such as the aiocs daemon stream
//! (`spec/aiocs-cli-json-contract.md`): every line an object with a string
//! discriminator (`--type-field`, default `type`). Such a stream is
//! unbounded unless `--first TYPE` / `--last TYPE` say how a run starts and
//! ends; with `--multi-run` a `--first` line opens the next run. Exit 0 or
//! 65: the format has no failure of its own to report.
//!
//! The flags make a profile (`Config::typed`), and the profile engine
//! (`profile.rs`) judges its lines, as it judges an agent CLI's: what is
//! typed NDJSON's own here is how it is named, counted and upgraded.

use std::io;

use super::contract::{Contract, Judged, Mapping, Outcomes};
use crate::check::config::Config;
use crate::check::finding::Reporter;
use crate::check::rules::Rule;
use crate::check::run_state::RunState;
use crate::check::verdict::End;
use crate::json::Event;

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

    fn event(&self, run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> Judged {
        let cfg = out.cfg;
        cfg.typed().event(run, out, ev)
    }

    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
        let cfg = out.cfg;
        cfg.typed().close(run, out)
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
