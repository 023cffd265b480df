//! What is kept of one run while it is open: its counts, its seq
//! tracks, what its meta said and how its summary ended it. The rules of
//! its protocol fill it in; the verdict reads it once the run is over.

use std::collections::HashMap;

use super::id::{id_key, run_name};
use super::protocol::Protocol;
use super::seq::SeqTrack;
use crate::json::Value;

/// The retry-critical fields of the error that decided a failure (§13.1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cause {
    pub origin: Option<String>,
    pub category: Option<String>,
    pub code: Option<String>,
    pub retryable: bool,
    pub retry_after_ms: Option<u64>,
}

/// What a stream says it is (§5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub tool: Option<String>,
    pub tool_version: Option<String>,
    pub aoi_version: Option<String>,
    pub schema_name: Option<String>,
    pub schema_version: Option<String>,
    pub command: Option<String>,
}

/// The summary's outcome fields, kept until the run is judged.
#[derive(Default)]
pub(super) struct SummaryClaim {
    pub(super) ok: Option<bool>,
    pub(super) partial: bool,
    pub(super) reason: Option<String>,
    pub(super) caused_by: Option<Cause>,
}

/// The reading of an AOI 0.2 summary's `count` that matched (DESIGN §13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CountReading {
    /// Every line of the run, meta and summary included (the SDK 0.1 and
    /// machinemode 0.1 code); `emitter` when the summary has their shape.
    EveryLine { emitter: bool },
    /// The events between meta and summary (the public docs' examples).
    Between,
    /// No count at all.
    Missing,
}

/// Seq bookkeeping for one run id (its decoded bytes).
pub(super) struct Track {
    pub(super) id: Option<Box<[u8]>>,
    pub(super) lines: u64,
    pub(super) seq: SeqTrack,
    /// The track of every id past `MAX_TRACKS`: its seq is not followed.
    pub(super) shared: bool,
}

/// Run ids tracked within one single-run stream, at most.
pub(super) const MAX_TRACKS: usize = 1024;

impl Track {
    pub(super) fn new(id: Option<Box<[u8]>>) -> Track {
        Track {
            id,
            lines: 0,
            seq: SeqTrack::default(),
            shared: false,
        }
    }
}

pub(super) struct RunState {
    pub(super) id: Option<Box<[u8]>>,
    pub(super) name: Option<String>,
    pub(super) first_line: u64,
    pub(super) lines: u64,
    /// One track per run id seen in the run (more than one only in
    /// single-run mode, where each further id is `run.changed`).
    pub(super) tracks: Vec<Track>,
    pub(super) track_index: HashMap<Box<[u8]>, usize>,
    pub(super) shared_track: Option<usize>,
    pub(super) cur: usize,
    pub(super) meta: Option<Identity>,
    pub(super) summary: Option<SummaryClaim>,
    /// Judged early: more than `MAX_OPEN_RUNS` runs were open.
    pub(super) evicted: bool,
    pub(super) not_last_reported: bool,
    /// AFDATA: an event without `trace` was reported (once per run).
    pub(super) trace_missing_reported: bool,
    pub(super) unreadable: bool,
    pub(super) seq_trouble: bool,
    /// Some line carried an `aoi.seq` that could not be counted: the run
    /// does number its events, so `verifiable.not-claimed` is not said.
    pub(super) seq_uncounted: bool,
    pub(super) count_trouble: bool,
    pub(super) domain: u64,
    pub(super) warnings: u64,
    pub(super) errors: u64,
    pub(super) item_errors: u64,
    pub(super) forwarded_errors: u64,
    pub(super) local_process_error: Option<Cause>,
    /// AOI 0.2: the last error without a scope, which decides a failed
    /// run's retry (it weighs as an item error for an `ok:true` one).
    pub(super) unscoped_error: Option<Cause>,
    /// AOI 0.2: which reading of the summary's `count` matched.
    pub(super) count_reading: Option<CountReading>,
    pub(super) error_findings: u64,
    pub(super) first_error: Option<String>,
    pub(super) unsupported: bool,
    pub(super) missing: u64,
    pub(super) repeats: u64,
    /// Decided at the run's first JSON object (`protocol.rs`).
    pub(super) protocol: Option<Protocol>,
}

impl RunState {
    pub(super) fn new(id: Option<Box<[u8]>>, name: Option<String>, first_line: u64) -> RunState {
        RunState {
            tracks: vec![Track::new(id.clone())],
            id,
            name,
            first_line,
            lines: 0,
            track_index: HashMap::new(),
            shared_track: None,
            cur: 0,
            meta: None,
            summary: None,
            evicted: false,
            not_last_reported: false,
            trace_missing_reported: false,
            unreadable: false,
            seq_trouble: false,
            seq_uncounted: false,
            count_trouble: false,
            domain: 0,
            warnings: 0,
            errors: 0,
            item_errors: 0,
            forwarded_errors: 0,
            local_process_error: None,
            unscoped_error: None,
            count_reading: None,
            error_findings: 0,
            first_error: None,
            unsupported: false,
            missing: 0,
            repeats: 0,
            protocol: None,
        }
    }

    /// One more line of the run, on its current track.
    pub(super) fn count_line(&mut self) {
        self.lines += 1;
        self.tracks[self.cur].lines += 1;
    }

    /// The track for `id` (the current one when the line names none), and
    /// whether it is new to this run.
    pub(super) fn track(&mut self, v: Option<Value<'_>>) -> (usize, bool) {
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
            self.id = Some(id.into());
            self.name = v.and_then(|v| v.as_str()).map(|s| run_name(&s));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Arena, Parser};

    /// The track for the `aoi.run` JSON text `id`.
    fn track(run: &mut RunState, id: &str) -> (usize, bool) {
        let text = format!(r#"{{"run":{id}}}"#);
        let mut arena = Arena::default();
        let index = Parser::new().parse(text.as_bytes(), &mut arena).unwrap();
        run.track(index.event(text.as_bytes(), &arena).get("run"))
    }

    #[test]
    fn the_first_id_names_a_run_opened_without_one() {
        let mut run = RunState::new(None, None, 1);
        run.count_line();
        assert_eq!(track(&mut run, r#""a""#), (0, false));
        assert_eq!(run.id.as_deref(), Some(&b"a"[..]));
        assert_eq!(run.name.as_deref(), Some("a"));
        assert_eq!(run.tracks[0].lines, 1);
    }

    #[test]
    fn a_further_id_is_a_new_track_once() {
        let mut run = RunState::new(None, None, 1);
        track(&mut run, r#""a""#);
        assert_eq!(track(&mut run, r#""b""#), (1, true));
        assert_eq!(track(&mut run, r#""b""#), (1, false));
        assert_eq!(track(&mut run, r#""a""#), (0, false));
        assert_eq!(track(&mut run, r#""b""#), (1, false));
        run.count_line();
        assert_eq!((run.lines, run.tracks[1].lines), (1, 1));
    }

    #[test]
    fn ids_past_the_cap_share_one_untracked_track() {
        let mut run = RunState::new(None, None, 1);
        track(&mut run, r#""first""#);
        for i in 0..MAX_TRACKS {
            track(&mut run, &format!(r#""id{i}""#));
        }
        let (shared, new) = track(&mut run, r#""one-more""#);
        assert!(!new);
        assert!(run.tracks[shared].shared);
        assert_eq!(track(&mut run, r#""and-another""#).0, shared);
        assert_eq!(run.tracks.len(), MAX_TRACKS + 2);
    }
}
