//! Producer profiles (docs/contract.md §6.3): the agent CLIs' own streams,
//! judged by what a profile (data, `check/profiles/`) says of one
//! producer: which events open a run, which end it and when that end is
//! a success, which errors are provisional, what may come before the
//! opener and after the end, the run id and the ordinal. One engine for
//! every profile, built in or read from a file.

use std::io;

use super::contract::{
    Contract, Exited, Judged, LineKind, Mapping, Outcomes, Ruling, claim_against,
};
use super::profile_said::Said;
use crate::check::config::Config;
use crate::check::finding::{Draft, Reporter};
use crate::check::rules::{Rule, Severity};
use crate::check::run_state::{Cause, Part, RunState, SummaryClaim};
use crate::check::verdict::End;
use crate::json::{Event, Kind, Value};
use crate::text::{plural, quote};

use crate::check::profiles::matching::{Match, any, any_typed};
use crate::check::profiles::model;
use crate::check::profiles::{Form, Level, Profile};

/// How much of a command's stderr `run --profile` keeps, to name why it
/// failed before its end.
const STDERR_KEPT: usize = 64 * 1024;

/// What a run of a profile has said so far.
#[derive(Default)]
struct Turns {
    opened: bool,
    ended: bool,
    /// The run id as first seen (decoded, or the raw value when it is not
    /// a string).
    id: Option<Box<[u8]>>,
    /// The ordinal the next end must carry.
    ordinal: Option<u64>,
    /// The last provisional error, and how many came.
    provisional: Option<Box<Said>>,
    provisionals: u64,
    /// The line the document began on (`form = "json"`).
    document: Option<u64>,
    /// Each once per run.
    open_reported: bool,
    extra_reported: bool,
    after_reported: bool,
    id_reported: bool,
    reopen_reported: bool,
    /// `run`: the command failed before an end, which is the run's outcome.
    exit_failed: bool,
}

impl Part for Turns {}

impl Contract for Profile {
    fn type_field<'a>(&'a self, _flag: &'a str) -> &'a str {
        &self.type_field
    }

    fn outcomes(&'static self) -> Outcomes {
        Outcomes::Profile(self.handle())
    }

    /// `run`: the tail of what the command wrote on stderr names why it
    /// failed before its end (docs/contract.md §6.3).
    fn stderr_read(&self) -> Option<usize> {
        Some(STDERR_KEPT)
    }

    fn mapping(&'static self) -> Mapping {
        Mapping::Profile(self.handle())
    }

    fn event(&self, run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> Judged {
        run.count_line();
        run.domain += 1;
        let mut st = std::mem::take(run.part(|_| Turns::default()));
        // Decoded once; every match asks it.
        let ty = ev.ty_bytes();
        let ty = ty.as_deref();
        let opener = any_typed(&self.open, ev, ty);
        let ender = self.end.iter().find(|e| e.when.holds_typed(ev, ty));
        self.duplicates(run, out, ev, ender)?;
        let typed = !self.from_flags
            || ev
                .get(&self.type_field)
                .is_some_and(|v| v.kind() == Kind::String);
        if !typed {
            let msg = format!(
                "no string {}: every line of a typed stream names its type",
                quote(&self.type_field)
            );
            out.report(run, Rule::NdjsonTypeMissing, None, msg)?;
        }
        let mut ends = false;
        if self.form == Form::Json {
            self.one_document(run, out, &mut st)?;
        }
        if !st.opened {
            if opener {
                st.opened = true;
            } else if !any_typed(&self.before_open, ev, ty) && !st.open_reported {
                st.open_reported = true;
                st.opened = true;
                self.open_missing(run, out, ev)?;
            }
        } else if opener && !st.ended && ender.is_none() && !self.end.is_empty() {
            self.reopened(run, out, ev, &mut st)?;
        } else if st.ended {
            if self.multi_turn && opener {
                st.ended = false;
            } else if !any_typed(&self.after_end, ev, ty) && !st.after_reported {
                st.after_reported = true;
                self.after_end(run, out, ev)?;
            }
        }
        self.run_id(run, out, ev, &mut st)?;
        match ender {
            Some(end) if st.opened && !st.ended => {
                st.ended = true;
                ends = true;
                self.ordinal(run, out, ev, &mut st)?;
                self.ended(run, ev, end, &st);
            }
            Some(_) => {}
            None => {
                if let Some(e) = self.error.iter().find(|e| e.when.holds_typed(ev, ty)) {
                    match e.level {
                        Level::Provisional => {
                            run.errors += 1;
                            st.provisionals += 1;
                            st.provisional = Some(Box::new(self.said(ev, &e.fields(), None)));
                        }
                        Level::Warning => run.warnings += 1,
                    }
                }
            }
        }
        *run.part(|_| Turns::default()) = st;
        Ok(Ruling {
            // A multi-turn run goes on after each turn's end, and a
            // one-document producer's run is its whole document: each
            // ends with its input, or where another run begins.
            ends: ends && !self.multi_turn && self.form != Form::Json,
            ..Ruling::seen(LineKind {
                event: typed,
                // Decided before the run's first event was handed here.
                protocol: run.protocol.unwrap_or_default(),
                ..LineKind::default()
            })
        })
    }

    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
        let st = std::mem::take(run.part(|_| Turns::default()));
        if st.ended {
            if run.summary.as_ref().is_some_and(|s| s.ok == Some(true)) && st.provisionals > 0 {
                let last = st
                    .provisional
                    .as_ref()
                    .map(|s| s.describe())
                    .unwrap_or_default();
                let msg = format!(
                    "{} before the successful end: recovered (the last: {last})",
                    plural(st.provisionals, "provisional error")
                );
                out.report(run, Rule::ProfileRecovered, None, msg)?;
            }
            return Ok(());
        }
        if st.exit_failed {
            return Ok(());
        }
        // Typed NDJSON's flags ask nothing of an empty input but its
        // `--last` (docs/contract.md §6.1).
        if run.lines == 0 && !self.from_flags {
            let msg = format!(
                "nothing was written: a {} run opens with its first event",
                self.name
            );
            return out.report(run, Rule::ProfileOpenMissing, None, msg);
        }
        if !st.opened && !self.from_flags {
            let msg = format!(
                "the input ended after {} without an event that opens a {} run",
                plural(run.lines, "event"),
                self.name
            );
            return out.report(run, Rule::ProfileOpenMissing, None, msg);
        }
        // A profile with no end event describes a stream without one.
        if self.end.is_empty() {
            return Ok(());
        }
        if self.from_flags {
            let msg = format!(
                "the stream ended after {} without its {} line: it was cut off or the producer \
                 stopped",
                plural(run.lines, "line"),
                quote(out.cfg.last.as_deref().unwrap_or_default())
            );
            return out.report(run, Rule::NdjsonLastMissing, None, msg);
        }
        let last = match &st.provisional {
            Some(said) => format!("; the last error before it: {}", said.describe()),
            None => String::new(),
        };
        let msg = format!(
            "the stream ended after {} without its end event: it was cut off, or the producer \
             was killed or failed{last}",
            plural(run.lines, "event")
        );
        out.report(run, Rule::ProfileEndMissing, None, msg)
    }

    fn end(&self, _run: &RunState, _cfg: &Config) -> End {
        End {
            passed: "ended by its producer's successful end event",
            end: "its producer's end event",
            missing: Rule::ProfileEndMissing,
            unbounded: "a producer profile's stream, no end event",
            ok_with_error: "the end says success, but the run reported an error that ended it",
            bounded: !self.end.is_empty(),
            uses_seq: false,
            unscoped: None,
        }
    }

    /// `run --profile` (docs/contract.md §6.3): the stream decides when it has
    /// an end, and an exit status that says otherwise is a warning; without
    /// an end, a failed command is the run's failure.
    fn exited(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ended: &Exited<'_>,
    ) -> io::Result<()> {
        let how = ended.how;
        if run.summary.is_some() {
            let says = match claim_against(run, ended) {
                Some(false) => "failure",
                Some(true) => "success",
                None => return Ok(()),
            };
            let msg = format!(
                "the stream's end says {says}, but the command {how}: the stream's end decides"
            );
            let mut draft = Draft::new(Rule::ExitDisagrees, msg);
            draft.base = Severity::Warning;
            return out.emit(run, draft);
        }
        if ended.success() {
            return Ok(());
        }
        let category = ended
            .code
            .and_then(|c| self.exit.get(&model::ExitStatus(c)))
            .map(|c| c.0);
        let st = run.part(|_| Turns::default());
        st.exit_failed = true;
        let provisional = st.provisional.as_deref().cloned();
        let cause = match (category, provisional) {
            (Some(c), _) => Cause {
                category: Some(c.to_string()),
                code: ended.code.map(|c| format!("EXIT_{c}")),
                retryable: model::Category(c).retryable(),
                ..Cause::default()
            },
            (None, Some(said)) => said.cause,
            (None, None) => Cause {
                category: Some("internal".into()),
                ..Cause::default()
            },
        };
        let tail = ended
            .stderr
            .as_ref()
            .map(|s| crate::text::one_line(&String::from_utf8_lossy(stderr_tail(&s.head))))
            .filter(|s| !s.is_empty());
        run.summary = Some(Box::new(SummaryClaim {
            ok: Some(false),
            reason: Some("failed".into()),
            caused_by: Some(cause),
            why: Some(format!("the command {how} before its end event")),
            said: tail,
            ..SummaryClaim::default()
        }));
        Ok(())
    }
}

/// The last line or two of what a command wrote on stderr.
fn stderr_tail(head: &[u8]) -> &[u8] {
    let trimmed = head.trim_ascii_end();
    let from = trimmed
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    &trimmed[from..]
}

impl Profile {
    /// With `--multi-run`, the run `ev` names: the run id of a multi-turn
    /// producer that writes it on every line (Claude's `session_id`), so
    /// interleaved sessions are told apart. Its run is judged at the end
    /// of input; a producer whose run ends at its end event is placed by
    /// its openers.
    pub(in crate::check) fn names_the_run<'a>(&self, ev: &Event<'a>) -> Option<Value<'a>> {
        let rid = self.run_id.as_ref().filter(|r| r.same && self.multi_turn)?;
        rid.path.find(ev).filter(|v| v.kind() == Kind::String)
    }

    /// With `--multi-run`, does `ev` open the next run, `current` being
    /// the run id-less lines go to now? Not when `current` has only what
    /// may come before an opener (Claude's hook messages are its run's),
    /// nor when it is the end `current` awaits, nor when it carries
    /// `current`'s run id (a next turn, opencode's next step).
    pub(in crate::check) fn opens_next(&self, current: Option<&RunState>, ev: &Event<'_>) -> bool {
        // A one-document producer's input is one run, whatever its
        // array holds: a second document is its finding, not a run.
        if self.form == Form::Json {
            return current.is_none();
        }
        if !any(&self.open, ev) {
            return false;
        }
        // A run that has judged nothing yet (a document's lines held) is
        // the one this event opens.
        let Some(current) = current.filter(|r| r.lines > 0) else {
            return current.is_none();
        };
        // An opener every event matches (typed NDJSON without `--first`)
        // cannot tell where a next run begins.
        if self.open.iter().any(Match::is_empty) {
            return false;
        }
        let Some(st) = current.part_of::<Turns>() else {
            return true;
        };
        // Hooks before the opener are its run's; an end that may also
        // open (a lone result) ends the run that awaits it.
        if !st.opened || (!st.ended && (!self.reopen || self.end.iter().any(|e| e.when.holds(ev))))
        {
            return false;
        }
        !self.carries_run_id(ev, st)
    }

    /// `ev` names the run `st` is, by the profile's run id.
    fn carries_run_id(&self, ev: &Event<'_>, st: &Turns) -> bool {
        let id = || {
            let v = self.run_id.as_ref()?.path.find(ev)?;
            Some(
                v.decoded()
                    .map_or_else(|| v.raw().to_vec(), |d| d.into_owned()),
            )
        };
        st.id.is_some() && id().as_deref() == st.id.as_deref()
    }

    /// An opener inside a run that has not ended, read as one stream: the
    /// run before it was cut, and another began (two outputs one after
    /// the other; a log of them is read with `--multi-run`). Not where
    /// the opener is the run's own next step (its run id), nor where a
    /// turn or an end may open (multi-turn, one document, `reopen =
    /// false`), nor where any event opens (typed NDJSON without
    /// `--first`).
    fn reopened(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ev: &Event<'_>,
        st: &mut Turns,
    ) -> io::Result<()> {
        if st.reopen_reported
            || self.multi_turn
            || !self.reopen
            || self.form == Form::Json
            || self.open.iter().any(Match::is_empty)
            || self.carries_run_id(ev, st)
        {
            return Ok(());
        }
        st.reopen_reported = true;
        if self.from_flags {
            let msg = format!(
                "a {} line before the run's {} line: the run before it was cut off, and another \
                 began (a log of several runs is read with --multi-run)",
                quote(out.cfg.first.as_deref().unwrap_or_default()),
                quote(out.cfg.last.as_deref().unwrap_or_default())
            );
            return out.report(run, Rule::NdjsonLastMissing, None, msg);
        }
        let msg = format!(
            "{} opens a {} run again before this one's end: the run before it was cut off, and \
             another began (a log of several runs is read with --multi-run)",
            self.what(ev),
            self.name
        );
        out.report(run, Rule::ProfileEndMissing, None, msg)
    }

    /// `profile.open-missing`: the run's first event neither opens it nor
    /// may come before its opener (typed NDJSON: `ndjson.first-wrong`).
    fn open_missing(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ev: &Event<'_>,
    ) -> io::Result<()> {
        if self.from_flags {
            let ty = ev.get(&self.type_field).and_then(|v| v.as_str());
            let msg = format!(
                "the run starts with {}, not {}: its head was cut",
                ty.as_deref().map_or("an untyped line".to_string(), quote),
                quote(out.cfg.first.as_deref().unwrap_or_default())
            );
            return out.report(run, Rule::NdjsonFirstWrong, None, msg);
        }
        let msg = format!(
            "the run starts with {}, which neither opens a {} run nor may come before its \
             opener: its head was cut, or it is not a {} stream",
            self.what(ev),
            self.name,
            self.name
        );
        out.report(run, Rule::ProfileOpenMissing, None, msg)
    }

    /// `profile.after-end`: an event the profile does not allow after the
    /// run's end (typed NDJSON: `ndjson.after-last`).
    fn after_end(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ev: &Event<'_>,
    ) -> io::Result<()> {
        if self.from_flags {
            let msg = format!(
                "event after the run's {} line, which ends it",
                quote(out.cfg.last.as_deref().unwrap_or_default())
            );
            return out.report(run, Rule::NdjsonAfterLast, None, msg);
        }
        let msg = format!(
            "{} after the run's end, which {} does not allow after it",
            self.what(ev),
            self.name
        );
        out.report(run, Rule::ProfileAfterEnd, None, msg)
    }

    /// An event as a finding names it: its type, quoted.
    fn what(&self, ev: &Event<'_>) -> String {
        match ev.get(&self.type_field).and_then(|v| v.as_str()) {
            Some(ty) => format!("an event of type {}", quote(&ty)),
            None => format!("an event without a string {}", quote(&self.type_field)),
        }
    }

    /// `verdict.duplicate-key` (docs/contract.md §3.2): a member that decides
    /// where the run is (the type) or how it ended (an end's conditions)
    /// appears twice, and parsers disagree about which one wins.
    fn duplicates(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ev: &Event<'_>,
        ender: Option<&model::End>,
    ) -> io::Result<()> {
        let deciding = ender.into_iter().flat_map(|e| {
            let when = e.when.paths();
            let success = e.success.iter().flat_map(|m| m.paths());
            let cancelled = e.cancelled.iter().flat_map(|m| m.paths());
            when.chain(success).chain(cancelled).map(|p| p.top())
        });
        // The run id decides which run an event is of.
        let deciding = deciding.chain(self.run_id.iter().map(|r| r.path.top()));
        // `type` twice is known from the walk; another field is counted.
        let twice = |key: &&str| match *key {
            "type" => ev.duplicate_reserved_key() == Some("type"),
            field => ev.count(field) > 1,
        };
        let twice = std::iter::once(self.type_field.as_str())
            .chain(deciding)
            .find(twice);
        let Some(key) = twice else {
            return Ok(());
        };
        let msg = format!(
            "{} appears twice: parsers disagree about which one wins, and it decides the run",
            quote(key)
        );
        out.report(run, Rule::VerdictDuplicateKey, None, msg)
    }

    /// `profile.document-extra`: a producer that writes one document
    /// writes every event on the line the document began on (an array's
    /// elements, a pretty-printed object's one event).
    fn one_document(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        st: &mut Turns,
    ) -> io::Result<()> {
        let first = *st.document.get_or_insert(out.line);
        if first == out.line || st.extra_reported {
            return Ok(());
        }
        st.extra_reported = true;
        let msg = format!(
            "a second JSON document (the first began at line {first}): {} writes one",
            self.name
        );
        out.report(run, Rule::ProfileDocumentExtra, None, msg)
    }

    /// `profile.run-id-changed`: the run id is the one first seen.
    fn run_id(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ev: &Event<'_>,
        st: &mut Turns,
    ) -> io::Result<()> {
        let Some(rid) = &self.run_id else {
            return Ok(());
        };
        let Some(v) = rid.path.find(ev) else {
            return Ok(());
        };
        // Compared where it stands: an id is copied once, when first seen.
        let id = match v.decoded() {
            Some(d) => d,
            None => std::borrow::Cow::Borrowed(v.raw()),
        };
        match &st.id {
            None => {
                if run.name.is_none() {
                    run.name = Some(crate::check::id::run_name(&String::from_utf8_lossy(&id)));
                }
                st.id = Some(id.into_owned().into());
            }
            Some(first) if **first != *id && rid.same && !st.id_reported => {
                st.id_reported = true;
                let msg = format!(
                    "{} is {}, but the run's was {}: two runs are mixed, or the producer restarted",
                    rid.path,
                    quote(&String::from_utf8_lossy(&id)),
                    quote(&String::from_utf8_lossy(first))
                );
                out.report(run, Rule::ProfileRunIdChanged, None, msg)?;
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// `profile.ordinal-gap`: an end's ordinal is the one after the last.
    fn ordinal(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ev: &Event<'_>,
        st: &mut Turns,
    ) -> io::Result<()> {
        let Some(path) = &self.ordinal else {
            return Ok(());
        };
        let Some(v) = path.find(ev) else {
            return Ok(());
        };
        let Some(n) = v.uint() else {
            let msg = format!(
                "{path} is {}, not a whole number: the ends cannot be counted",
                crate::text::quote_raw(v.raw())
            );
            return out.report(run, Rule::ProfileOrdinalGap, None, msg);
        };
        // A run of a log may begin at any turn; a whole stream at 0.
        let want = st.ordinal.unwrap_or(if out.cfg.multi_run { n } else { 0 });
        st.ordinal = n.checked_add(1);
        if n != want {
            let msg = if n > want {
                format!(
                    "{path} is {n} where {want} was next: {} lost",
                    plural(n - want, "end event")
                )
            } else {
                format!(
                    "{path} is {n} where {want} was next: an end event repeated or out of order"
                )
            };
            out.report(run, Rule::ProfileOrdinalGap, None, msg)?;
        }
        Ok(())
    }

    /// An end: what it says of the turn. A failed turn stays the run's
    /// outcome, as a failed test stays a suite's.
    fn ended(&self, run: &mut RunState, ev: &Event<'_>, end: &model::End, st: &Turns) {
        // A failed turn stays the outcome; a final failure outweighs a
        // retryable one before it (docs/contract.md §6.3).
        let failed_before = run
            .summary
            .as_ref()
            .filter(|s| s.ok == Some(false))
            .map(|s| s.caused_by.clone());
        if end.success.as_ref().is_some_and(|m| m.holds(ev)) {
            if failed_before.is_none() {
                run.summary = Some(Box::new(SummaryClaim {
                    ok: Some(true),
                    ..SummaryClaim::default()
                }));
            }
            return;
        }
        let cancelled = end.cancelled.as_ref().is_some_and(|m| m.holds(ev));
        let mut said = self.said(ev, &end.fields(), st.provisional.as_deref());
        if cancelled {
            said.cause.category = Some("cancelled".into());
            said.cause.retryable = false;
            said.cause.retry_after_ms = None;
        }
        if let Some(kept) = failed_before
            && !said.cause.outweighs(kept.as_ref(), !said.cause.retryable)
        {
            return;
        }
        run.summary = Some(Box::new(SummaryClaim {
            ok: Some(false),
            reason: Some(if cancelled { "cancelled" } else { "failed" }.into()),
            caused_by: Some(said.cause),
            said: said.message,
            ..SummaryClaim::default()
        }));
    }
}
