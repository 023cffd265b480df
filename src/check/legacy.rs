//! AOI 0.2, as the published emitters write it (DESIGN §9; spec §5.2 lists
//! what changed in 1.0): the AOI TypeScript SDK 0.1 (`src/emit.ts`) and
//! machinemode 0.1.
//!
//! There is no envelope, so no seq or run rules: a run is opened by its
//! `aoi:meta`. The summary's `count` is the run's line count *including*
//! meta and summary (`count: events + 1` in the SDK), which is what finds
//! a cut middle: counted, not located. An `aoi:error` has no `scope`, and
//! `retryable` may be missing (= not retryable); the categories
//! `temporary` and `partial`, a missing `reason`, `truncated` and
//! `upstream` are valid. The verdict is §4's: 0 / 1 / 75 / 65.

use std::io;

use super::{Cause, Outcome, Protocol, Seen, Sink, State, typed};
use crate::check::rules::Rule;
use crate::json::{Event, Uint};
use crate::output::{plural, quote_raw};

impl State<'_> {
    pub(super) fn legacy_event(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
    ) -> io::Result<Seen> {
        let (ty, seen) = typed(ev, Protocol::Aoi02);
        let ty = ty.as_deref();
        self.line_of_run(sink, slot, ty == Some(b"aoi:summary"))?;
        if let Some(key) = ev.duplicate_reserved_key() {
            let msg = format!("{key} appears twice: parsers disagree about which one wins");
            self.report(sink, slot, Rule::EnvelopeDuplicateKey, None, msg)?;
        }
        if ty.is_none() {
            let msg = "no string type: every event must carry one".to_string();
            self.report(sink, slot, Rule::EnvelopeTypeMissing, None, msg)?;
        }
        if ev.has_ansi() {
            let msg = "ANSI escape inside a string value".to_string();
            self.report(sink, slot, Rule::TextAnsi, None, msg)?;
        }
        let t = self.run(slot).cur;
        self.by_type(sink, slot, t, ev, ty, None)?;
        Ok(seen)
    }

    /// Count a line into its run; the first line after the summary is
    /// `summary.not-last`.
    pub(super) fn line_of_run(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        is_summary: bool,
    ) -> io::Result<()> {
        let run = self.run(slot);
        run.count_line();
        if run.summary.is_some() && !is_summary && !run.not_last_reported {
            run.not_last_reported = true;
            let msg =
                "event after the run's aoi:summary: the summary must be the last line".to_string();
            self.report(sink, slot, Rule::SummaryNotLast, None, msg)?;
        }
        Ok(())
    }

    /// `aoi:error` in 0.2: `code`, `category` and `message`; `retryable`
    /// when present. Without `scope`, every error may be the one that
    /// decides a failed run: the last one does.
    pub(super) fn legacy_error(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
    ) -> io::Result<()> {
        let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
        let (category, code, message) = (text("category"), text("code"), text("message"));
        let missing: Vec<&str> = [
            ("category", category.is_some()),
            ("code", code.is_some()),
            ("message", message.is_some()),
        ]
        .into_iter()
        .filter(|(_, present)| !present)
        .map(|(name, _)| name)
        .collect();
        if !missing.is_empty() {
            let msg = format!(
                "aoi:error lacks {} (or has the wrong type)",
                missing.join(", ")
            );
            self.report(sink, slot, Rule::ErrorFieldMissing, None, msg)?;
        }
        let retryable = ev.get("retryable").and_then(|v| v.as_bool()) == Some(true);
        let retry_after_ms = self.retry_after(sink, slot, ev.get("retry_after_ms"), None)?;
        let run = self.run(slot);
        run.errors += 1;
        run.local_process_error = Some(Cause {
            origin: None,
            category,
            code,
            retryable,
            retry_after_ms: retry_after_ms.filter(|_| retryable),
        });
        Ok(())
    }

    /// The 0.2 summary: `ok`, and `count` against the lines that arrived.
    pub(super) fn legacy_summary(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
    ) -> io::Result<()> {
        let ok = ev.get("ok").and_then(|v| v.as_bool());
        if ok.is_none() {
            let msg =
                "summary has no boolean ok: success must be stated, never assumed".to_string();
            self.report(sink, slot, Rule::SummaryOkMissing, None, msg)?;
        }
        let received = self.run(slot).lines;
        match ev.get("count").map(|v| (v.as_uint(), v)) {
            None => {
                let msg = "no count: lines lost from the middle cannot be found".to_string();
                self.report(sink, slot, Rule::SummaryEventCountMissing, None, msg)?;
            }
            Some((Uint::NotUint, v)) => {
                let msg = format!("count is {}, not an integer >= 0", quote_raw(v.raw()));
                self.report(sink, slot, Rule::SummaryCounterInvalid, None, msg)?;
            }
            Some((Uint::Int(n), _)) if n != received => {
                let run = self.run(slot);
                run.count_trouble = true;
                let msg = if n > received {
                    run.missing = run.missing.saturating_add(n - received);
                    format!(
                        "the summary counts {} but {received} arrived: {} missing from the run",
                        plural(n, "line"),
                        plural(n - received, "line")
                    )
                } else {
                    format!(
                        "the summary counts {} but {received} arrived: {} more than it says",
                        plural(n, "line"),
                        received - n
                    )
                };
                self.report(sink, slot, Rule::SummaryCountMismatch, None, msg)?;
            }
            Some(_) => {}
        }
        let reason = ev
            .get("reason")
            .and_then(|v| v.as_str())
            .map(|s| s.into_owned());
        self.run(slot).summary = Some(Outcome {
            ok,
            partial: false,
            reason,
            caused_by: None,
        });
        Ok(())
    }

    /// A 0.2 run ends with its summary; it has no seq to claim.
    pub(super) fn legacy_close(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        self.summary_missing(sink, slot)?;
        self.meta_missing(sink, slot)
    }
}
