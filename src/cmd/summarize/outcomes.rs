//! Where each protocol says how a run ended, as summarize reads it
//! (docs/contract.md §1.2): AOI's framework events, AFDATA's terminal kinds,
//! the aiocs envelope, a producer profile's end and errors. The protocol
//! says which (`protocol.outcomes()`); this file reads them.

use super::types::MAX_KINDS;
use super::{Counts, Room, Shared, Stats};
use crate::check::Reading;
use crate::check::profiles::{Level, Profile};
use crate::json::{Event, Kind, Value};
use crate::output::summary::{Ending, Problem};
use crate::text::one_line;

impl Stats {
    /// An `aoi:error` or `aoi:warning` by category and code, and the
    /// summary's outcome.
    pub(super) fn framework_event(
        &mut self,
        ev: &Event<'_>,
        ty: Option<&[u8]>,
        line: u64,
        shared: &mut Shared,
    ) {
        let text = |v: Option<Value<'_>>| v.and_then(|v| v.as_str()).map(|s| s.into_owned());
        match ty {
            Some(t @ (b"aoi:error" | b"aoi:warning")) => {
                let mut room = Room {
                    left: &mut shared.room,
                    taken: &mut self.kept,
                };
                // The counts apart from `kept`, which `room` holds.
                let counts = Counts::made(&mut self.counts, &mut shared.spare);
                let list = if t == b"aoi:error" {
                    &mut counts.errors
                } else {
                    &mut counts.warnings
                };
                let [category, code, message] = ev.get_each(["category", "code", "message"]);
                let category = text(category).unwrap_or_else(|| "-".into());
                let code = text(code).unwrap_or_else(|| "-".into());
                tally(list, category, code, || text(message), line, &mut room);
            }
            Some(b"aoi:summary") => {
                let [ok, reason, partial, truncated, next_cursor, elapsed_ms] = ev.get_each([
                    "ok",
                    "reason",
                    "partial",
                    "truncated",
                    "next_cursor",
                    "elapsed_ms",
                ]);
                let flag = |v: Option<Value<'_>>| v.and_then(|v| v.as_bool());
                self.counts(&mut shared.spare).outcome = Some(Ending {
                    ok: flag(ok),
                    reason: text(reason),
                    partial: flag(partial),
                    truncated: flag(truncated),
                    next_cursor: next_cursor.is_some_and(|v| v.kind() != Kind::Null),
                    elapsed_ms: elapsed_ms.and_then(|v| v.uint()),
                });
            }
            _ => {}
        }
    }

    /// The aiocs envelope is the run's outcome; its error is counted by
    /// code.
    #[allow(clippy::vec_box, reason = "the boxes are what is reused")]
    pub(super) fn aiocs(&mut self, ev: &Event<'_>, line: u64, spare: &mut Vec<Box<Counts>>) {
        if self.outcome().is_some() {
            return;
        }
        let ok = ev.get("ok").and_then(|v| v.as_bool());
        let counts = self.counts(spare);
        counts.outcome = Some(Ending {
            ok,
            reason: (ok == Some(false)).then(|| "error".into()),
            ..Ending::default()
        });
        if ok == Some(false) {
            counts.payload_error(ev, line);
        }
    }

    /// A producer profile's end is the run's outcome (a failed turn's
    /// stays it); its errors, and a failed end's, are counted by category
    /// and code (docs/contract.md §6.3).
    pub(super) fn profile(&mut self, p: &Profile, ev: &Event<'_>, line: u64, shared: &mut Shared) {
        let (ending, problem) = match p.read(ev) {
            Reading::End {
                ok,
                cancelled,
                error,
            } => {
                let reason = match (ok, cancelled) {
                    (true, _) => None,
                    (false, true) => Some("cancelled".into()),
                    (false, false) => Some("failed".into()),
                };
                let ending = Ending {
                    ok: Some(ok),
                    reason,
                    ..Ending::default()
                };
                (Some(ending), error.map(|e| (Level::Provisional, e)))
            }
            Reading::Error { level, error } => (None, Some((level, error))),
            Reading::Other => return,
        };
        let mut room = Room {
            left: &mut shared.room,
            taken: &mut self.kept,
        };
        let counts = Counts::made(&mut self.counts, &mut shared.spare);
        if let Some(e) = ending
            && counts.outcome.as_ref().is_none_or(|o| o.ok == Some(true))
        {
            counts.outcome = Some(e);
        }
        let Some((level, problem)) = problem else {
            return;
        };
        let list = match level {
            Level::Warning => &mut counts.warnings,
            Level::Provisional => &mut counts.errors,
        };
        let code = problem.code.unwrap_or_else(|| "-".into());
        tally(
            list,
            problem.category,
            code,
            || problem.message,
            line,
            &mut room,
        );
    }

    /// AFDATA's terminal event is the run's outcome; its error payload is
    /// counted as an error by code.
    #[allow(clippy::vec_box, reason = "the boxes are what is reused")]
    pub(super) fn afdata(&mut self, ev: &Event<'_>, line: u64, spare: &mut Vec<Box<Counts>>) {
        let kind = ev.get("kind").and_then(|v| v.as_str());
        let (Some(kind), None) = (kind, self.outcome()) else {
            return;
        };
        match &*kind {
            "result" => {
                self.counts(spare).outcome = Some(Ending {
                    ok: Some(true),
                    ..Ending::default()
                });
            }
            "error" => {
                let counts = self.counts(spare);
                counts.outcome = Some(Ending {
                    ok: Some(false),
                    reason: Some("error".into()),
                    ..Ending::default()
                });
                counts.payload_error(ev, line);
            }
            _ => {}
        }
    }
}

/// One more error or warning of `category` and `code` in `list`: counted
/// with its like, or kept by name (its first message) while there is room.
fn tally(
    list: &mut Vec<Problem>,
    category: String,
    code: String,
    message: impl FnOnce() -> Option<String>,
    line: u64,
    room: &mut Room<'_>,
) {
    if let Some(p) = list
        .iter_mut()
        .find(|p| p.category == category && p.code == code)
    {
        p.count += 1;
    } else if list.len() < MAX_KINDS && room.take() {
        list.push(Problem {
            category,
            code,
            count: 1,
            // Bounded, one line (docs/contract.md §3.2).
            first_message: one_line(&message().unwrap_or_default()),
            first_line: line,
        });
    } else if let Some(p) = list.iter_mut().find(|p| p.category == OTHER) {
        p.count += 1;
    } else {
        // Counted, not kept by name: one entry more, past MAX_KINDS.
        list.push(Problem {
            category: OTHER.into(),
            code: OTHER.into(),
            count: 1,
            first_message: String::new(),
            first_line: line,
        });
    }
}

/// What the errors and warnings no longer kept by name count under.
const OTHER: &str = "(other)";

impl Counts {
    /// An `error` payload of `code` and `message`, as AFDATA and aiocs
    /// carry it: an error with no category, counted by its code.
    fn payload_error(&mut self, ev: &Event<'_>, line: u64) {
        if self.errors.len() >= MAX_KINDS {
            return;
        }
        let payload = ev.get("error");
        let text = |k: &str| {
            payload
                .and_then(|p| p.field(k))
                .and_then(|v| v.as_str())
                .map(|s| s.into_owned())
        };
        self.errors.push(Problem {
            category: "-".into(),
            code: text("code").unwrap_or_else(|| "-".into()),
            count: 1,
            first_message: one_line(&text("message").unwrap_or_default()),
            first_line: line,
        });
    }
}
