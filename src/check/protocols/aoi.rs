//! AOI-CLI 1.x (spec §2, §8, §9, §13): the envelope (`aoi.seq`,
//! `aoi.run`), the 1.x `aoi:error` and `aoi:summary` rules, and what a cut
//! run's end looks like. The framework events 1.x shares with 0.2 are
//! `framework.rs`.

use std::collections::HashMap;
use std::io;

use super::aoi_error::{error, upstream_cause};
use super::contract::{Contract, Judged, LineKind, Mapping, Outcomes, Payload, Ruling, SeqPlace};
use super::framework::{
    Count, Left, by_type, identity, meta_missing, missing_identity, summary_missing, typed,
};
use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::{Draft, Reporter};
use crate::check::id::{id_key, run_name};
use crate::check::rules::Rule;
use crate::check::run_state::{Part, RunState, SummaryClaim};
use crate::check::seq::{SeqStep, SeqTrack};
use crate::check::verdict::End;
use crate::json::{Aoi, Event, Kind, Uint, Value};
use crate::text::quote;

pub(in crate::check) struct Aoi1;

impl Contract for Aoi1 {
    fn outcomes(&'static self) -> Outcomes {
        Outcomes::Framework
    }

    fn numbers_events(&self) -> bool {
        true
    }

    /// Only AOI 1.x has an envelope to take off.
    fn payload(&self, ev: &Event<'_>, _kinds: &[String]) -> Option<Payload> {
        Some(Payload::Whole(ev.aoi_cut()))
    }

    fn mapping(&'static self) -> Mapping {
        Mapping::Framework { envelope: true }
    }

    /// An event of an AOI 1.x run (spec §2, §8, §13).
    fn event(&self, run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> Judged {
        let (ty, seen) = typed(ev, Protocol::Aoi);
        let ty = ty.as_deref();
        // One look-up of the part for all that every line notes in it:
        // each look-up costs a type check.
        let (t, seq, stepped) = run.with_part(Own::of, |run, part| line(run, part, out, ev, ty))?;
        let seen = LineKind {
            seq: stepped,
            ..seen
        };
        let mut step = Ruling::seen(seen);
        if run.unsupported {
            return Ok(step);
        }
        match by_type(run, out, ev, ty, seq)? {
            Left::Nothing => {}
            Left::TypeTwice => own(run).count_trouble = true,
            Left::Meta => step.meta = true,
            Left::Summary => {
                summary(run, out, t, ev, seq)?;
                step.ends = true;
            }
            Left::Error => error(run, out, ev, seq)?,
        }
        Ok(step)
    }

    /// The end of an AOI 1.x run: its summary, meta and seq claimed.
    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
        let part = own(run);
        let typed = part.typed;
        let foreign = (part.untyped || typed) && !part.enveloped && !part.uses_seq();
        if foreign && run.meta.is_none() && run.summary.is_none() && !out.cfg.unbounded {
            // Not a cut AOI stream but no AOI at all: said so, with the
            // protocol that reads it, and no lines said lost (upgrade
            // claims no cut, docs/contract.md §1.6).
            let msg = if typed {
                "no line carries AOI's envelope (no aoi:meta, no aoi member), so nothing says \
                 the run ended: an agent CLI's own stream is read with --profile NAME \
                 (aoitap profiles), other typed JSON lines with --protocol ndjson (--first, \
                 --last) or --protocol jsonl"
            } else {
                "no line is an AOI event (no aoi:meta, no type, no aoi.seq), so nothing says \
                 the run ended: plain JSON lines are read with --protocol jsonl"
            };
            let f = Draft::new(Rule::SummaryMissing, msg.to_string()).none_lost();
            return out.emit(run, f);
        }
        summary_missing(run, out)?;
        if out.line == 0 {
            // Empty input: its missing summary says all there is.
            return Ok(());
        }
        meta_missing(run, out)?;
        let part = own(run);
        if !part.uses_seq() && !part.seq_uncounted {
            let msg = "no aoi.seq: events lost from the middle would go unnoticed".to_string();
            out.report(run, Rule::VerifiableNotClaimed, None, msg)?;
        }
        Ok(())
    }

    fn end(&self, run: &RunState, cfg: &Config) -> End {
        End {
            uses_seq: run.part_of::<Own>().is_some_and(Own::uses_seq),
            ..End::at_summary("summary ok", cfg)
        }
    }
}

/// What an AOI 1.x run keeps of its own: a seq track per run id, and what
/// keeps its summary's counts from being reconciled.
pub(in crate::check) struct Own {
    /// One track per run id seen in the run (more than one only in
    /// single-run mode, where each further id is `run.changed`).
    tracks: Vec<Track>,
    track_index: HashMap<Box<[u8]>, usize>,
    shared_track: Option<usize>,
    cur: usize,
    seq_trouble: bool,
    /// Some line carried an `aoi.seq` that could not be counted: the run
    /// does number its events, so `verifiable.not-claimed` is not said.
    seq_uncounted: bool,
    count_trouble: bool,
    /// Some line had a string type: the run is AOI-shaped, whatever else
    /// is wrong with it; and some object had none.
    typed: bool,
    untyped: bool,
    /// Some line carried an `aoi` object.
    enveloped: bool,
}

/// Seq bookkeeping for one run id (its decoded bytes).
struct Track {
    id: Option<Box<[u8]>>,
    lines: u64,
    seq: SeqTrack,
    /// The track of every id past `MAX_TRACKS`: its seq is not followed.
    shared: bool,
}

/// Run ids tracked within one single-run stream, at most.
const MAX_TRACKS: usize = 1024;

impl Track {
    fn new(id: Option<Box<[u8]>>) -> Track {
        Track {
            id,
            lines: 0,
            seq: SeqTrack::default(),
            shared: false,
        }
    }
}

impl Part for Own {
    /// A line that could not be read stands for one step of seq on the
    /// current track.
    fn unreadable(&mut self) {
        let track = &mut self.tracks[self.cur];
        track.lines += 1;
        track.seq.skip();
    }
}

impl Own {
    /// The part of `run`, made at its first AOI event or at its end: each
    /// line before that could not be read, and stood for a step of seq on
    /// the run's first track.
    fn of(run: &RunState) -> Own {
        let mut first = Track::new(run.id.clone());
        first.lines = run.lines;
        first.seq = SeqTrack::skipped(run.lines);
        Own {
            tracks: vec![first],
            track_index: HashMap::new(),
            shared_track: None,
            cur: 0,
            seq_trouble: false,
            seq_uncounted: false,
            typed: false,
            untyped: false,
            enveloped: false,
            count_trouble: false,
        }
    }

    /// One more line of the run, on its current track.
    fn count_line(&mut self) {
        self.tracks[self.cur].lines += 1;
    }

    /// The run numbers its events: some line carried a seq.
    fn uses_seq(&self) -> bool {
        self.tracks.iter().any(|t| t.seq.started())
    }

    /// The track for `id` (the current one when the line names none), and
    /// whether it is new to this run.
    fn track(&mut self, v: Option<Value<'_>>) -> (usize, bool) {
        let Some(id) = v.and_then(|v| v.decoded()) else {
            return (self.cur, false);
        };
        let id = &id_key(&id)[..];
        if self.tracks[self.cur].id.as_deref() == Some(id) {
            return (self.cur, false);
        }
        if self.tracks[0].id.is_none() {
            // The first id seen names the run; earlier lines were its own.
            self.tracks[0].id = Some(id.into());
            self.cur = 0;
            return (0, false);
        }
        if self.tracks[0].id.as_deref() == Some(id) {
            self.cur = 0;
            return (0, false);
        }
        if let Some(&i) = self.track_index.get(id) {
            self.cur = i;
            return (i, false);
        }
        if self.track_index.len() >= MAX_TRACKS {
            // Past the cap, further ids share one track whose seq is not
            // followed: memory stays bounded, and the stream has long
            // been `run.changed` (65) by then.
            let i = *self.shared_track.get_or_insert_with(|| {
                let mut t = Track::new(None);
                t.shared = true;
                self.tracks.push(t);
                self.tracks.len() - 1
            });
            self.cur = i;
            return (i, false);
        }
        self.tracks.push(Track::new(Some(id.into())));
        let i = self.tracks.len() - 1;
        self.track_index.insert(id.into(), i);
        self.cur = i;
        (i, true)
    }
}

/// What every line of an AOI 1.x run notes, up to its seq: its track and
/// count, the envelope's rules, and `seq`'s. Returns the track with what
/// `seq` returns.
fn line(
    run: &mut RunState,
    part: &mut Own,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    ty: Option<&[u8]>,
) -> io::Result<(usize, Option<u64>, SeqPlace)> {
    let aoi = ev.aoi();
    let (_, run_v, aoi_bad) = aoi.parts();
    let multi = out.cfg.multi_run;
    // Multi-run: `place` sent the line here by its id, so once the run
    // has an id every id it gets is that one.
    let (t, new_id) = if multi && part.tracks[0].id.is_some() {
        (0, false)
    } else {
        track(run, part, run_v)
    };
    run.count_line();
    part.count_line();
    part.enveloped |= matches!(aoi, Aoi::Object { .. });
    part.typed |= ty.is_some();
    part.untyped |= ty.is_none();
    let late = run.summary.is_some() && ty != Some(b"aoi:summary") && !run.not_last_reported;
    if late {
        run.not_last_reported = true;
    }
    if new_id && !multi {
        // Counts over two runs cannot be reconciled with one summary.
        part.seq_trouble = true;
    }
    if late {
        let msg =
            "event after the run's aoi:summary: the summary must be the last line".to_string();
        out.report(run, Rule::SummaryNotLast, None, msg)?;
    }
    if new_id && !multi {
        let name = run_v.and_then(|v| v.as_str()).unwrap_or_default();
        let msg = format!(
            "run id changed to {}: one stream must be one run (use --multi-run for merged logs)",
            crate::text::quote(&name)
        );
        out.report(run, Rule::RunChanged, None, msg)?;
    }

    // The envelope (§2, §8.1).
    if let Some(key) = ev.duplicate_reserved_key() {
        let msg = format!("{key} appears twice: parsers disagree about which one wins");
        out.report(run, Rule::EnvelopeDuplicateKey, None, msg)?;
    }
    if ty.is_none() {
        let msg = match ev.get("type") {
            None => "no type: every event must carry a string type".to_string(),
            Some(_) => "type is not a string".to_string(),
        };
        out.report(run, Rule::EnvelopeTypeMissing, None, msg)?;
    }
    if aoi_bad {
        out.report(
            run,
            Rule::EnvelopeAoiNotObject,
            None,
            "aoi is not an object".into(),
        )?;
    }
    if ev.has_ansi() {
        out.report(
            run,
            Rule::TextAnsi,
            None,
            "ANSI escape inside a string value".into(),
        )?;
    }
    let (seq, stepped) = seq(run, part, out, t, aoi, ev.seq_uint())?;
    Ok((t, seq, stepped))
}

/// The AOI 1.x part of `run`.
fn own(run: &mut RunState) -> &mut Own {
    run.part(Own::of)
}

/// The track of the run id `v` names, and whether it is new to the run;
/// the first id seen names the run.
fn track(run: &mut RunState, part: &mut Own, v: Option<Value<'_>>) -> (usize, bool) {
    let (t, new) = part.track(v);
    if run.id.is_none() {
        run.id = part.tracks[0].id.clone();
        if run.id.is_some() {
            run.name = v.and_then(|v| v.as_str()).map(|s| run_name(&s));
        }
    }
    (t, new)
}

/// `aoi.seq` and `aoi.run` (§8.1, §18 check 15), with `uint` the seq as
/// the walk decoded it. Returns the seq when readable.
fn seq(
    run: &mut RunState,
    part: &mut Own,
    out: &mut Reporter<'_>,
    t: usize,
    aoi: Aoi<'_>,
    uint: Uint,
) -> io::Result<(Option<u64>, SeqPlace)> {
    let (seq_v, run_v, aoi_bad) = aoi.parts();
    if let Some(v) = run_v
        && v.kind() != Kind::String
    {
        out.report(
            run,
            Rule::RunNotString,
            None,
            "aoi.run is not a string".into(),
        )?;
    }
    if part.tracks[t].shared {
        let n = match (seq_v, uint) {
            (Some(_), Uint::Int(n)) => Some(n),
            _ => None,
        };
        return Ok((n, SeqPlace::Untracked));
    }
    let track = &mut part.tracks[t].seq;
    let Some(v) = seq_v else {
        let uses = track.started();
        track.skip();
        if uses && !aoi_bad {
            part.seq_trouble = true;
            let msg = "no aoi.seq in a run that numbers its events".to_string();
            out.report(run, Rule::SeqMissing, None, msg)?;
        }
        return Ok((None, SeqPlace::Skipped));
    };
    // aoitap counts seq in 64 bits: a larger one cannot be placed, and
    // is said so rather than clamped into a false order.
    let past_u64 = uint == Uint::Huge;
    let Uint::Int(n) = uint else {
        track.skip();
        part.seq_trouble = true;
        part.seq_uncounted = true;
        let what = if past_u64 {
            "past 2^64-1, more than aoitap can count"
        } else {
            "not a non-negative integer"
        };
        let msg = format!(
            "aoi.seq is {}, {what}",
            crate::check::secrets::quotable::value(v.raw())
        );
        out.report(run, Rule::SeqNotInteger, None, msg)?;
        return Ok((None, SeqPlace::Skipped));
    };
    let step = track.step(n);
    if run_v.is_none() {
        let msg = "aoi.seq without aoi.run: the line cannot be attributed on its own".to_string();
        out.report(run, Rule::RunMissing, Some(n), msg)?;
    }
    if step != SeqStep::InOrder {
        out_of_order(run, part, out, n, step)?;
    }
    Ok((Some(n), SeqPlace::At(n)))
}

/// Seq `n` out of its place (§8.1): events missing before it (a gap, or
/// the run's head cut), or a seq again or backwards. Either way the
/// run's counts can no longer be reconciled with its summary.
fn out_of_order(
    run: &mut RunState,
    part: &mut Own,
    out: &mut Reporter<'_>,
    n: u64,
    step: SeqStep,
) -> io::Result<()> {
    part.seq_trouble = true;
    match step {
        SeqStep::InOrder => Ok(()),
        SeqStep::HeadCut { count } | SeqStep::Gap { count, .. } => {
            run.missing = run.missing.saturating_add(count);
            let s = if count == 1 { "" } else { "s" };
            let (rule, msg, from) = match step {
                SeqStep::Gap { from, to, .. } => {
                    let msg = format!(
                        "expected seq {from}, got {n}: {count} event{s} missing (seq {from}..{to})"
                    );
                    (Rule::SeqGap, msg, from)
                }
                _ => {
                    let msg = format!(
                        "the run starts at seq {n}, not 0: the head was cut ({count} event{s} missing)"
                    );
                    (Rule::SeqNotFromZero, msg, 0)
                }
            };
            let f = Draft::new(rule, msg)
                .seq(Some(n))
                .missing((from, n - 1, count));
            out.emit(run, f)
        }
        SeqStep::Back { expected } => {
            run.repeats += 1;
            let msg = format!("seq {n} again or backwards: expected {expected}");
            out.report(run, Rule::SeqRepeat, Some(n), msg)
        }
    }
}

/// The terminal summary (§4, §8.3, §13.1), judged on arrival.
fn summary(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    t: usize,
    ev: &Event<'_>,
    seq: Option<u64>,
) -> io::Result<()> {
    let (ok, reason) = outcome(run, out, ev, seq)?;
    let complete = counts(run, out, t, ev, seq)?;
    let (domain, item_errors) = (run.domain, run.item_errors);
    let local_error = run.local_process_error.is_some();
    let partial = ev.get("partial").and_then(|v| v.as_bool()) == Some(true);
    if item_errors > 0 && domain > 0 && !partial {
        let msg = format!("{item_errors} item error(s) and domain output, but partial is not true");
        out.report(run, Rule::SummaryPartialInconsistent, seq, msg)?;
    } else if partial && item_errors == 0 && complete {
        let msg = "partial:true but no item error was seen".to_string();
        out.report(run, Rule::SummaryPartialInconsistent, seq, msg)?;
    }
    if ok == Some(true) && local_error {
        let msg =
            "ok:true after a process-scope aoi:error, which means the run was over".to_string();
        out.report(run, Rule::SummaryOkDespiteError, seq, msg)?;
    }
    let caused_by = ev.get("caused_by");
    if ok == Some(false) && run.forwarded_errors > 0 && !local_error && caused_by.is_none() {
        let msg = "failing because of forwarded errors, but no caused_by: the retry detail is lost"
            .to_string();
        out.report(run, Rule::SummaryCausedByMissing, seq, msg)?;
    }
    if let Some(up) = ev.get("upstream")
        && (up.kind() == Kind::Null || up.children().any(|(_, v)| v.kind() == Kind::Null))
    {
        let msg = "upstream is null or has null members: omit what is unknown".to_string();
        out.report(run, Rule::SummaryUpstreamNull, seq, msg)?;
    }
    identity_missing(run, out, ev, seq)?;
    let caused_by = match caused_by.filter(|v| v.kind() == Kind::Object) {
        Some(v) => Some(upstream_cause(run, out, v, seq)?),
        None => None,
    };
    run.summary = Some(Box::new(SummaryClaim {
        ok,
        partial,
        reason: reason.flatten(),
        caused_by,
        said: None,
        why: None,
    }));
    Ok(())
}

/// The summary's `ok` and `reason` (§4): success stated, never assumed,
/// and a reason that fits it. The reason is `Some(None)` when it is
/// there but not a string.
fn outcome(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    seq: Option<u64>,
) -> io::Result<(Option<bool>, Option<Option<String>>)> {
    let ok = ev.get("ok").and_then(|v| v.as_bool());
    if ok.is_none() {
        let msg = "summary has no boolean ok: success must be stated, never assumed".to_string();
        out.report(run, Rule::SummaryOkMissing, seq, msg)?;
    }
    let reason = ev.get("reason").map(|v| v.as_str().map(|s| s.into_owned()));
    match (ok, &reason) {
        (Some(false), None) => {
            let msg = "ok:false without reason (failed, cancelled, timeout or denied)".to_string();
            out.report(run, Rule::SummaryReasonMissing, seq, msg)?;
        }
        (Some(false), Some(r))
            if !matches!(
                r.as_deref(),
                Some("failed" | "cancelled" | "timeout" | "denied")
            ) =>
        {
            let msg = format!(
                "reason {} with ok:false: must be failed, cancelled, timeout or denied",
                reason_text(r.as_deref())
            );
            out.report(run, Rule::SummaryReasonInvalid, seq, msg)?;
        }
        (Some(true), Some(r)) if r.as_deref() != Some("skipped") => {
            let msg = format!(
                "reason {} with ok:true: only skipped is allowed",
                reason_text(r.as_deref())
            );
            out.report(run, Rule::SummaryReasonInvalid, seq, msg)?;
        }
        _ => {}
    }
    Ok((ok, reason))
}

/// The summary's counters (§8.3) against what arrived on track `t`:
/// `event_count` against its lines, `count` against the domain events
/// when every line was read and numbered, and the warnings and errors
/// it claims against those seen. Returns whether the run was read
/// whole, so that its counts are the run's.
fn counts(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    t: usize,
    ev: &Event<'_>,
    seq: Option<u64>,
) -> io::Result<bool> {
    let mut counters = [None; 5];
    for (i, name) in [
        "event_count",
        "count",
        "input_count",
        "warning_count",
        "error_count",
    ]
    .iter()
    .enumerate()
    {
        if let Some(v) = ev.get(name) {
            match v.as_uint() {
                Uint::NotUint => {
                    let msg = format!(
                        "{name} is {}, not an integer >= 0",
                        crate::check::secrets::quotable::value(v.raw())
                    );
                    out.report(run, Rule::SummaryCounterInvalid, seq, msg)?;
                }
                n => counters[i] = Some(Count::of(n, v)),
            }
        }
    }
    let [event_count, count, _, warning_count, error_count] = counters;
    let received = own(run).tracks[t].lines;
    let uses_seq = own(run).tracks[t].seq.started();
    match event_count {
        Some(n) if n != received => {
            own(run).count_trouble = true;
            let msg = format!(
                "the summary counts {n} events but {received} arrived: {}",
                n.beside(received)
            );
            out.report(run, Rule::SummaryEventCountMismatch, seq, msg)?;
        }
        None if uses_seq && ev.get("event_count").is_none() => {
            let msg =
                "no event_count: the run uses seq, but its length cannot be reconciled".to_string();
            out.report(run, Rule::SummaryEventCountMissing, seq, msg)?;
        }
        _ => {}
    }
    let part = own(run);
    let counted = !part.seq_trouble && !part.count_trouble;
    let complete = !run.unreadable && counted;
    let (domain, warnings, errors) = (run.domain, run.warnings, run.errors);
    if complete
        && let Some(c) = count
        && c != domain
    {
        // Every seq arrived: the count is wrong, no line was lost.
        let msg = format!("count is {c} but {domain} domain events arrived");
        let f = Draft::new(Rule::SummaryCountMismatch, msg)
            .seq(seq)
            .none_lost();
        out.emit(run, f)?;
    }
    for (name, claimed, seen) in [
        ("warning_count", warning_count, warnings),
        ("error_count", error_count, errors),
    ] {
        if let Some(c) = claimed
            && c < seen
        {
            let msg = format!("{name} is {c} but {seen} were seen in the stream");
            out.report(run, Rule::SummaryCounterLow, seq, msg)?;
        }
    }
    Ok(complete)
}

/// The identity the summary lacks (spec §5 asks for it at both ends).
/// What the meta lacks too is said once, of the meta (one finding per
/// cause, docs/contract.md §3.1).
fn identity_missing(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    seq: Option<u64>,
) -> io::Result<()> {
    let in_meta = run.meta.as_ref().map(missing_identity).unwrap_or_default();
    let missing: Vec<_> = missing_identity(&identity(ev))
        .into_iter()
        .filter(|f| !in_meta.contains(f))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let carried = if run.meta.is_some() {
        ", which its aoi:meta carries"
    } else {
        ""
    };
    let msg = format!(
        "aoi:summary lacks {}{carried}: a reader holding only the last line cannot tell what it read (spec §5 asks for them at both ends)",
        missing.join(", ")
    );
    out.report(run, Rule::SummaryIdentityMissing, seq, msg)
}

/// A reason as a message shows it: quoted, or said not to be a string.
fn reason_text(r: Option<&str>) -> String {
    r.map_or_else(|| "(not a string)".to_string(), quote)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Arena, Parser};

    /// The track for the `aoi.run` JSON text `id`.
    fn track_id(run: &mut RunState, id: &str) -> (usize, bool) {
        let text = format!(r#"{{"run":{id}}}"#);
        let mut arena = Arena::default();
        let index = Parser::new().parse(text.as_bytes(), &mut arena).unwrap();
        let v = index.event(text.as_bytes(), &arena).get("run");
        run.with_part(Own::of, |run, part| track(run, part, v))
    }

    #[test]
    fn the_first_id_names_a_run_opened_without_one() {
        let mut run = RunState::new(None, None, 1);
        run.count_line();
        assert_eq!(track_id(&mut run, r#""a""#), (0, false));
        assert_eq!(run.id.as_deref(), Some(&b"a"[..]));
        assert_eq!(run.name.as_deref(), Some("a"));
        assert_eq!(own(&mut run).tracks[0].lines, 1);
    }

    #[test]
    fn a_further_id_is_a_new_track_once() {
        let mut run = RunState::new(None, None, 1);
        track_id(&mut run, r#""a""#);
        assert_eq!(track_id(&mut run, r#""b""#), (1, true));
        assert_eq!(track_id(&mut run, r#""b""#), (1, false));
        assert_eq!(track_id(&mut run, r#""a""#), (0, false));
        assert_eq!(track_id(&mut run, r#""b""#), (1, false));
        run.count_line();
        own(&mut run).count_line();
        assert_eq!((run.lines, own(&mut run).tracks[1].lines), (1, 1));
    }

    #[test]
    fn ids_past_the_cap_share_one_untracked_track() {
        let mut run = RunState::new(None, None, 1);
        track_id(&mut run, r#""first""#);
        for i in 0..MAX_TRACKS {
            track_id(&mut run, &format!(r#""id{i}""#));
        }
        let (shared, new) = track_id(&mut run, r#""one-more""#);
        assert!(!new);
        assert!(own(&mut run).tracks[shared].shared);
        assert_eq!(track_id(&mut run, r#""and-another""#).0, shared);
        assert_eq!(own(&mut run).tracks.len(), MAX_TRACKS + 2);
    }
}
