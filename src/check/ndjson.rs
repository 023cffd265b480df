//! Typed NDJSON (DESIGN §9), such as the aiocs daemon stream
//! (`spec/aiocs-cli-json-contract.md`): every line an object with a string
//! discriminator (`--type-field`, default `type`). Such a stream is
//! unbounded unless `--first TYPE` / `--last TYPE` say how a run starts and
//! ends; with `--multi-run` a `--first` line opens the next run. Exit 0 or
//! 65: the format has no failure of its own to report.

use std::io;

use super::{Config, Outcome, Protocol, Seen, Sink, State};
use crate::check::rules::Rule;
use crate::json::Event;
use crate::text::quote;

/// Does `ev` open a run (`--first`, with `--multi-run`)?
pub(super) fn opens(cfg: &Config, ev: &Event<'_>) -> bool {
    cfg.first
        .as_deref()
        .is_some_and(|first| discriminator(cfg, ev).as_deref() == Some(first))
}

fn discriminator(cfg: &Config, ev: &Event<'_>) -> Option<String> {
    ev.get(&cfg.type_field)
        .and_then(|v| v.as_str())
        .map(|s| s.into_owned())
}

impl State<'_> {
    pub(super) fn ndjson_event(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
    ) -> io::Result<Seen> {
        let cfg = self.cfg;
        let run = self.run(slot);
        run.count_line();
        let first_line = run.lines == 1;
        let after_last = run.summary.is_some();
        run.domain += 1;
        let ty = discriminator(cfg, ev);
        if ev.count(&cfg.type_field) > 1 {
            // The discriminator decides where a run ends (DESIGN §13).
            let msg = format!(
                "{} appears twice: parsers disagree about which one wins",
                quote(&cfg.type_field)
            );
            self.report(sink, slot, Rule::VerdictDuplicateKey, None, msg)?;
        }
        if ty.is_none() {
            let msg = format!(
                "no string {}: every line of a typed stream names its type",
                quote(&cfg.type_field)
            );
            self.report(sink, slot, Rule::NdjsonTypeMissing, None, msg)?;
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
            self.report(sink, slot, Rule::NdjsonFirstWrong, None, msg)?;
        }
        if after_last && !self.run(slot).not_last_reported {
            self.run(slot).not_last_reported = true;
            let msg = format!(
                "event after the run's {} line, which ends it",
                quote(cfg.last.as_deref().unwrap_or_default())
            );
            self.report(sink, slot, Rule::NdjsonAfterLast, None, msg)?;
        }
        if !after_last && ty.is_some() && ty.as_deref() == cfg.last.as_deref() {
            self.run(slot).summary = Some(Outcome {
                ok: Some(true),
                ..Outcome::default()
            });
            if cfg.multi_run {
                self.close(sink, slot)?;
            }
        }
        Ok(Seen {
            event: ty.is_some(),
            protocol: Protocol::Ndjson,
            ..Seen::default()
        })
    }

    /// With `--last`, a run that never reached it was cut.
    pub(super) fn ndjson_close(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        if let Some(last) = &self.cfg.last
            && self.run(slot).summary.is_none()
        {
            let msg = format!(
                "the stream ended after {} without its {} line: it was cut off or the producer stopped",
                crate::text::plural(self.run(slot).lines, "line"),
                quote(last)
            );
            self.report(sink, slot, Rule::NdjsonLastMissing, None, msg)?;
        }
        Ok(())
    }
}
