//! The per-run checker: feeds each line through the rules of DESIGN §3,
//! keeps per-run state, and decides each run's verdict (DESIGN §4).
//!
//! Without `--multi-run` the whole input is one run (spec §13.1
//! cardinality), though `seq` is still tracked per run id. With it, runs are
//! told apart by `aoi.run`; lines without one belong to the run opened by the
//! latest `aoi:meta`. A run is judged when its summary arrives (multi-run) or
//! at end of input, and its state is then released.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::io;

use crate::check::rules::{Rule, Severity};
use crate::input::scan::{Checked, Line};
use crate::json::{Aoi, Event, JsonError, Kind, Uint, Value};
use crate::text::plural;

mod afdata;
mod facts;
mod framework;
mod legacy;
mod marker;
mod ndjson;
mod protocol;
pub mod redact;
pub mod rules;
pub mod schema;
mod secrets;
mod seq;
mod tally;
mod verdict;

pub use facts::*;
pub use framework::major;
use framework::{KNOWN_FRAMEWORK, pin_text};
pub use marker::Markers;
pub use protocol::Protocol;
pub use secrets::{Exposure, Withheld, redact};
pub use seq::{SeqTrack, Step};
pub use tally::Tally;
use verdict::judge;

/// Finished run ids remembered (so late lines are `summary.not-last`, not a
/// new run); older ones are forgotten to keep memory flat over long logs.
const FINISHED_REMEMBERED: usize = 4096;

/// Runs open at once, at most (multi-run). Each costs a few hundred bytes
/// here and as much again in a command's own state, so a log of ever-new
/// run ids without summaries would grow without end; past the cap the
/// run opened longest ago is judged as it stands (its summary missing),
/// and a later line of it is a late line (DESIGN §8: state bounded).
const MAX_OPEN_RUNS: usize = 32_768;

/// The summary's outcome fields, kept until the run is judged.
#[derive(Default)]
struct Outcome {
    ok: Option<bool>,
    partial: bool,
    reason: Option<String>,
    caused_by: Option<Cause>,
}

/// The reading of an AOI 0.2 summary's `count` that matched (DESIGN §13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CountReading {
    /// Every line of the run, meta and summary included (the SDK 0.1 and
    /// machinemode 0.1 code); `emitter` when the summary has their shape.
    EveryLine { emitter: bool },
    /// The events between meta and summary (the public docs' examples).
    Between,
    /// No count at all.
    Missing,
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

struct RunState {
    id: Option<Box<[u8]>>,
    name: Option<String>,
    first_line: u64,
    lines: u64,
    /// One track per run id seen in the run (more than one only in
    /// single-run mode, where each further id is `run.changed`).
    tracks: Vec<Track>,
    track_index: HashMap<Box<[u8]>, usize>,
    shared_track: Option<usize>,
    cur: usize,
    meta: Option<Identity>,
    summary: Option<Outcome>,
    /// Judged early: more than `MAX_OPEN_RUNS` runs were open.
    evicted: bool,
    not_last_reported: bool,
    unreadable: bool,
    seq_trouble: bool,
    /// Some line carried an `aoi.seq` that could not be counted: the run
    /// does number its events, so `verifiable.not-claimed` is not said.
    seq_uncounted: bool,
    count_trouble: bool,
    domain: u64,
    warnings: u64,
    errors: u64,
    item_errors: u64,
    forwarded_errors: u64,
    local_process_error: Option<Cause>,
    /// AOI 0.2: the last error without a scope, which decides a failed
    /// run's retry (it weighs as an item error for an `ok:true` one).
    unscoped_error: Option<Cause>,
    /// AOI 0.2: which reading of the summary's `count` matched.
    count_reading: Option<CountReading>,
    error_findings: u64,
    first_error: Option<String>,
    unsupported: bool,
    missing: u64,
    repeats: u64,
    /// Decided at the run's first JSON object (`protocol.rs`).
    protocol: Option<Protocol>,
}

impl RunState {
    fn new(id: Option<Box<[u8]>>, name: Option<String>, first_line: u64) -> RunState {
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
    fn count_line(&mut self) {
        self.lines += 1;
        self.tracks[self.cur].lines += 1;
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

/// An event's decoded `type` (compared, never shown, so no UTF-8 pass is
/// owed) and what commands that pass lines on need to know of it, in a
/// protocol with a `type` discriminator (AOI 1.x and 0.2).
fn typed<'a>(ev: &Event<'a>, protocol: Protocol) -> (Option<Cow<'a, [u8]>>, Seen) {
    let ty = ev.ty_bytes();
    let seen = Seen {
        event: ty.is_some() && ev.duplicate_reserved_key().is_none(),
        framework: ty.as_deref().is_some_and(|t| t.starts_with(b"aoi:")),
        protocol,
        late: false,
        seq: SeqSeen::Untracked,
    };
    (ty, seen)
}

/// Ids longer than this are kept as a prefix and a digest.
const ID_BYTES: usize = 256;

/// A run id as it is kept: bounded in bytes whatever the input (DESIGN §8:
/// state is bounded in bytes). A long id becomes its first 192 bytes, a
/// 0xFF byte (never in UTF-8, so never in a short id) and a 64-bit digest
/// of the whole.
pub fn id_key(id: &[u8]) -> Cow<'_, [u8]> {
    if id.len() <= ID_BYTES {
        return Cow::Borrowed(id);
    }
    let mut key = id[..192].to_vec();
    key.push(0xff);
    key.extend_from_slice(&digest(id).to_be_bytes());
    Cow::Owned(key)
}

/// A 64-bit digest, the same within one process (SipHash with fixed
/// keys): what is kept where the value itself would cost too much.
pub fn digest(x: &(impl Hash + ?Sized)) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    x.hash(&mut h);
    h.finish()
}

/// A run id as reports show it: a long one cut, with its length.
fn run_name(id: &str) -> String {
    if id.len() <= ID_BYTES {
        return id.to_string();
    }
    format!("{}… ({} bytes)", crate::text::prefix(id, 120), id.len())
}

/// Where the last line went, kept past the run's end.
enum LastRun {
    Nowhere,
    Slot(usize),
    Gone {
        id: Option<Box<[u8]>>,
        first_line: u64,
        meta: bool,
    },
}

/// A finding before the checker fills in line, run and severity.
struct Found {
    rule: Rule,
    base: Severity,
    seq: Option<u64>,
    message: String,
    column: Option<usize>,
    missing: Option<(u64, u64, u64)>,
    place: Option<Box<SchemaPlace>>,
}

impl Found {
    fn new(rule: Rule, message: String) -> Found {
        Found {
            rule,
            base: rule.default_severity(),
            seq: None,
            message,
            column: None,
            missing: None,
            place: None,
        }
    }

    fn seq(self, seq: Option<u64>) -> Found {
        Found { seq, ..self }
    }

    fn column(self, column: Option<usize>) -> Found {
        Found { column, ..self }
    }

    fn missing(self, range: (u64, u64, u64)) -> Found {
        Found {
            missing: Some(range),
            ..self
        }
    }
}

/// Where a line goes.
enum Target {
    Slot(usize),
    /// A run already judged (multi-run): the line is late.
    Finished(Box<[u8]>),
}

/// A run not yet judged when reading stopped.
pub struct OpenRun {
    pub name: Option<String>,
    pub first_line: u64,
    pub lines: u64,
    pub domain: u64,
    /// What its `aoi:meta` said, if it was read: a cancelled report still
    /// names its upstream (DESIGN §13).
    pub identity: Option<Identity>,
}

pub struct Checker<'c> {
    st: State<'c>,
    markers: Markers,
}

struct State<'c> {
    cfg: &'c Config,
    line: u64,
    slots: Vec<Option<RunState>>,
    free: Vec<usize>,
    index: HashMap<Box<[u8]>, usize>,
    last: Option<usize>,
    /// Multi-run: the run opened by the latest `aoi:meta`.
    current: Option<usize>,
    finished: HashMap<Box<[u8]>, bool>,
    finished_order: VecDeque<Box<[u8]>>,
    /// Multi-run: (slot, first line) of runs in the order they opened; an
    /// entry whose slot has since been freed or reused is stale.
    opened: VecDeque<(usize, u64)>,
    last_run: LastRun,
    /// The last line's exposed secrets (for `--redact`).
    exposures: Vec<Exposure>,
    /// Whether `--redact` must withhold the last line, and why.
    withheld: Option<Withheld>,
}

impl<'c> Checker<'c> {
    pub fn new(cfg: &'c Config) -> Checker<'c> {
        let mut st = State {
            cfg,
            line: 0,
            slots: vec![],
            free: vec![],
            index: HashMap::new(),
            last: None,
            current: None,
            finished: HashMap::new(),
            finished_order: VecDeque::new(),
            opened: VecDeque::new(),
            last_run: LastRun::Nowhere,
            exposures: vec![],
            withheld: None,
        };
        if !cfg.multi_run {
            st.current = Some(st.open(None, None));
        }
        Checker {
            st,
            markers: Markers::new(&cfg.markers),
        }
    }

    /// Judge one item of input (its one parse in hand), and say what it
    /// was (for commands that pass lines on).
    pub fn judge(&mut self, item: &Line<'_>, sink: &mut dyn Sink) -> io::Result<Seen> {
        let seen = self.judge_item(item, sink)?;
        // A line that could not be parsed is searched for a secret-looking
        // key byte by byte (DESIGN §13), in every command: one truth.
        let (withheld, key) = secrets::withheld(item, &self.st.cfg.secret_names, &self.markers);
        self.st.withheld = withheld;
        if let Some(suspect) = key {
            let msg = secrets::unparsed_message(&suspect, self.st.cfg.redact);
            let slot = self.st.current_slot();
            self.st.report(sink, slot, Rule::SecretExposed, None, msg)?;
        }
        Ok(seen)
    }

    fn judge_item(&mut self, item: &Line<'_>, sink: &mut dyn Sink) -> io::Result<Seen> {
        let st = &mut self.st;
        st.line += 1;
        st.exposures.clear();
        let (rule, message, column) = match *item {
            Line::Unterminated { len, bytes } => {
                let slot = st.current_slot();
                st.last_run = LastRun::Slot(slot);
                let msg = format!(
                    "the last line has no newline ({len} bytes): the stream was cut, and the fragment is not an event{}",
                    secrets::unheld_note(st.cfg.redact && bytes.is_none())
                );
                st.report(sink, slot, Rule::LineUnterminated, None, msg)?;
                return Ok(Seen::default());
            }
            Line::TooLong { len } => (
                Rule::LineTooLong,
                format!(
                    "line is {len} bytes, over --max-line-bytes {}; skipped{}",
                    st.cfg.max_line_bytes,
                    secrets::unheld_note(st.cfg.redact)
                ),
                None,
            ),
            Line::Complete { bytes, .. }
                if bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) =>
            {
                (
                    Rule::LineBlank,
                    "blank line: every line must be a JSON object".to_string(),
                    None,
                )
            }
            Line::Complete {
                bytes,
                json,
                schema,
            } => match json {
                Ok(ev) if ev.is_object() => return st.event(sink, &ev, schema),
                Err(_) if let Some(n) = self.markers.claims(bytes) => {
                    st.elided(sink, n)?;
                    return Ok(Seen::default());
                }
                Ok(_) => (
                    Rule::JsonNotObject,
                    "valid JSON but not an object: an event must be a JSON object".to_string(),
                    None,
                ),
                Err(JsonError::Utf8 { column }) => (
                    Rule::JsonInvalidUtf8,
                    format!("invalid UTF-8 at byte column {column}"),
                    Some(column),
                ),
                Err(JsonError::Syntax { column, expected }) => (
                    Rule::JsonInvalid,
                    format!("invalid JSON at byte column {column}: expected {expected}"),
                    Some(column),
                ),
            },
        };
        st.unreadable(sink, rule, message, column)?;
        Ok(Seen::default())
    }

    /// The exposed secrets of the last line judged: what `--redact`
    /// replaces.
    pub fn exposures(&self) -> &[Exposure] {
        &self.st.exposures
    }

    /// Whether `--redact` must write a placeholder for the last line
    /// judged instead of the line, and why (DESIGN §13).
    pub fn withheld(&self) -> Option<Withheld> {
        self.st.withheld
    }

    /// The runs still open, in the order they began: what a cancelled
    /// monitor says was left unjudged, and counts as read.
    /// Judge the runs that are complete (their summary or terminal event
    /// read), leaving the others open: what `run` does when it stops a
    /// command that had already said how it ended.
    pub fn finish_complete(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        for slot in self.st.open_slots(|r| r.summary.is_some()) {
            self.st.close(sink, slot)?;
        }
        Ok(())
    }

    pub fn open_runs(&self) -> Vec<OpenRun> {
        let mut open: Vec<_> = self
            .st
            .slots
            .iter()
            .flatten()
            .filter(|r| r.lines > 0)
            .map(|r| OpenRun {
                name: r.name.clone(),
                first_line: r.first_line,
                lines: r.lines,
                domain: r.domain,
                identity: r.meta.clone(),
            })
            .collect();
        open.sort_by_key(|r| r.first_line);
        open
    }

    /// Lines read so far (the number of the last one).
    pub fn line_number(&self) -> u64 {
        self.st.line
    }

    /// The run the last line went to.
    pub fn run_of_last_line(&self) -> RunRef<'_> {
        match &self.st.last_run {
            LastRun::Nowhere => Run::Nowhere,
            LastRun::Slot(s) => match &self.st.slots[*s] {
                Some(r) => RunRef::of(
                    r.id.as_deref(),
                    r.first_line,
                    r.meta.is_some() || r.protocol.is_some_and(Protocol::runs_by_position),
                ),
                None => Run::Nowhere,
            },
            LastRun::Gone {
                id,
                first_line,
                meta,
            } => RunRef::of(id.as_deref(), *first_line, *meta),
        }
    }

    /// `--idle-timeout-ms` passed without a line (spec §4.2): a finding
    /// about the stream, charged to no run.
    pub fn idle(&mut self, sink: &mut dyn Sink, ms: u64) -> io::Result<()> {
        let Some(severity) = self.st.cfg.levels.of(Rule::StreamIdle) else {
            return Ok(());
        };
        sink.finding(&Finding {
            rule: Rule::StreamIdle,
            severity,
            line: self.st.line,
            run: None,
            seq: None,
            message: format!("no line for {ms} ms: the producer is quiet, stuck or gone"),
            column: None,
            missing: None,
            place: None,
        })
    }

    /// End of input: judge every run still open.
    /// `run`: the command's exit against what its stream says (spec §4.1,
    /// §6), for each run still open: `exit.disagrees` when it exited 0 but
    /// the summary says ok:false, or failed (`how`: "exited 3", "was
    /// killed by SIGKILL") but the summary says ok:true.
    pub fn exited(&mut self, sink: &mut dyn Sink, success: bool, how: &str) -> io::Result<()> {
        for slot in self.st.open_slots(|_| true) {
            let ok = self.st.slots[slot]
                .as_ref()
                .and_then(|r| r.summary.as_ref())
                .and_then(|o| o.ok);
            let says = match (ok, success) {
                (Some(false), true) => "ok:false",
                (Some(true), false) => "ok:true",
                _ => continue,
            };
            let msg = format!("the stream's summary says {says}, but the command {how}");
            self.st.report(sink, slot, Rule::ExitDisagrees, None, msg)?;
        }
        Ok(())
    }

    pub fn finish(mut self, sink: &mut dyn Sink) -> io::Result<()> {
        if self.st.line == 0 {
            // Empty input is one run that never began (DESIGN §4): its
            // summary is missing, in every mode.
            self.st.current_slot();
        }
        for slot in self.st.open_slots(|_| true) {
            self.st.close(sink, slot)?;
        }
        Ok(())
    }
}

impl State<'_> {
    /// The slots of the open runs that `keep` picks, in the order the runs
    /// began.
    fn open_slots(&self, keep: impl Fn(&RunState) -> bool) -> Vec<usize> {
        let mut open: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].as_ref().is_some_and(&keep))
            .collect();
        open.sort_by_key(|&i| self.slots[i].as_ref().map_or(0, |r| r.first_line));
        open
    }

    fn open(&mut self, id: Option<Box<[u8]>>, name: Option<String>) -> usize {
        // Lines count from 1; a run opened before any line starts at line 1.
        let run = RunState::new(id.clone(), name, self.line.max(1));
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(run);
                i
            }
            None => {
                self.slots.push(Some(run));
                self.slots.len() - 1
            }
        };
        if let Some(id) = id {
            self.index.insert(id, slot);
        }
        if self.cfg.multi_run {
            self.opened.push_back((slot, self.line.max(1)));
        }
        slot
    }

    /// Multi-run: at most `MAX_OPEN_RUNS` runs open. Called once a line is
    /// placed: only a line that opened a run can pass the cap, and that
    /// run is the newest, so the one judged now (the run opened longest
    /// ago, as at the end of input) is never the line's own.
    fn make_room(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        while self.slots.len() - self.free.len() > MAX_OPEN_RUNS {
            let Some((slot, first)) = self.opened.pop_front() else {
                break;
            };
            let live = self.slots[slot]
                .as_ref()
                .is_some_and(|r| r.first_line == first);
            if live {
                self.run(slot).evicted = true;
                self.close(sink, slot)?;
            }
        }
        if self.opened.len() > 2 * (self.slots.len() - self.free.len()) + 1024 {
            // Drop the entries of finished runs now and then: the queue
            // stays near the number of open runs (amortized, each pass
            // at least halves it).
            let slots = &self.slots;
            self.opened
                .retain(|&(s, f)| slots[s].as_ref().is_some_and(|r| r.first_line == f));
        }
        Ok(())
    }

    fn run(&mut self, slot: usize) -> &mut RunState {
        self.slots[slot].as_mut().expect("open run")
    }

    fn current_slot(&mut self) -> usize {
        match self.current {
            Some(s) => s,
            None => {
                let s = self.open(None, None);
                self.current = Some(s);
                s
            }
        }
    }

    /// Which run a line belongs to (DESIGN §2).
    fn target(&mut self, id: Option<Value<'_>>, is_meta: bool) -> Target {
        if !self.cfg.multi_run {
            return Target::Slot(self.current_slot());
        }
        let Some(raw) = id.and_then(|v| v.decoded()) else {
            if is_meta {
                let s = self.open(None, None);
                self.current = Some(s);
                return Target::Slot(s);
            }
            return Target::Slot(self.current_slot());
        };
        let raw = &id_key(&raw)[..];
        if let Some(s) = self.last
            && self.slots[s].as_ref().and_then(|r| r.id.as_deref()) == Some(raw)
        {
            return Target::Slot(s);
        }
        if let Some(&s) = self.index.get(raw) {
            self.last = Some(s);
            return Target::Slot(s);
        }
        if self.finished.contains_key(raw) {
            return Target::Finished(raw.into());
        }
        let name = id.and_then(|v| v.as_str()).map(|s| run_name(&s));
        let s = self.open(Some(raw.into()), name);
        self.last = Some(s);
        Target::Slot(s)
    }

    fn report(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        rule: Rule,
        seq: Option<u64>,
        message: String,
    ) -> io::Result<()> {
        self.emit(sink, slot, Found::new(rule, message).seq(seq))
    }

    /// Fill in line, run and severity, count it against the run, and send it.
    fn emit(&mut self, sink: &mut dyn Sink, slot: usize, f: Found) -> io::Result<()> {
        let Some(severity) = self.cfg.levels.at(f.rule, f.base) else {
            return Ok(());
        };
        let line = self.line;
        let run = self.run(slot);
        if run.unsupported && !f.rule.is_line_level() {
            return Ok(());
        }
        // Every message is one bounded line, whatever it quotes (DESIGN §8).
        let message = crate::text::one_line(&f.message);
        if severity == Severity::Error {
            run.error_findings += 1;
            run.first_error.get_or_insert_with(|| message.clone());
        }
        sink.finding(&Finding {
            rule: f.rule,
            severity,
            line,
            run: run.name.clone(),
            seq: f.seq,
            message,
            column: f.column,
            missing: f.missing,
            place: f.place,
        })
    }

    /// A harness elision marker: the current run's, but not an event (it
    /// takes no seq step and is not a line the producer wrote).
    fn elided(&mut self, sink: &mut dyn Sink, claims: u64) -> io::Result<()> {
        let slot = self.current_slot();
        self.last_run = LastRun::Slot(slot);
        let msg = format!(
            "elision marker: the harness says {} were cut here",
            crate::text::plural(claims, "line")
        );
        self.emit(sink, slot, Found::new(Rule::LineElided, msg))
    }

    /// A line whose seq cannot be read: it is the current run's, and it
    /// stands for one step of seq (one finding per cause, DESIGN §3).
    fn unreadable(
        &mut self,
        sink: &mut dyn Sink,
        rule: Rule,
        message: String,
        column: Option<usize>,
    ) -> io::Result<()> {
        let slot = self.current_slot();
        self.last_run = LastRun::Slot(slot);
        let run = self.run(slot);
        run.count_line();
        run.unreadable = true;
        run.tracks[run.cur].seq.skip();
        self.emit(sink, slot, Found::new(rule, message).column(column))
    }

    /// A line that is a JSON object: placed in its run, then judged by the
    /// run's protocol. Every decision is made on decoded values (DESIGN
    /// §8): `"\u0061oi:meta"` is an `aoi:meta`.
    fn event(
        &mut self,
        sink: &mut dyn Sink,
        ev: &Event<'_>,
        checked: Checked<'_>,
    ) -> io::Result<Seen> {
        // Only AOI 1.x names runs; the other protocols' runs are known by
        // where they start.
        // One run takes every line unless --multi-run: nothing to place.
        let slot = if self.cfg.multi_run {
            let placed = self.place(ev);
            self.make_room(sink)?;
            placed
        } else {
            Target::Slot(self.current_slot())
        };
        let slot = match slot {
            Target::Slot(s) => s,
            Target::Finished(id) => {
                let (ty, seen) = typed(ev, Protocol::Aoi);
                self.late(sink, &id, ty.as_deref())?;
                self.last_run = LastRun::Gone {
                    id: Some(id),
                    first_line: 0,
                    meta: true,
                };
                return Ok(Seen { late: true, ..seen });
            }
        };
        self.last_run = LastRun::Slot(slot);
        self.secrets(sink, slot, ev)?;
        self.schema(sink, slot, ev, checked)?;
        self.by_protocol(sink, slot, ev)
    }

    /// `verify --schema`: the event against the producer's schema
    /// (DESIGN §11), framework and domain events alike.
    /// The batch was validated where it was parsed (see `Batch::parse`);
    /// a line that was not is validated here.
    fn schema(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
        checked: Checked<'_>,
    ) -> io::Result<()> {
        let Some(schema) = self.cfg.schema.as_deref() else {
            return Ok(());
        };
        let here;
        let outcome = match checked {
            Checked::Valid => return Ok(()),
            Checked::Found(o) => o,
            Checked::Unchecked => {
                here = schema.check(ev);
                &here
            }
        };
        match outcome {
            schema::Outcome::Valid => Ok(()),
            schema::Outcome::Invalid(bad) => {
                let mut f = Found::new(Rule::EventSchemaInvalid, bad.message.clone());
                f.place = Some(Box::new(bad.place.clone()));
                self.emit(sink, slot, f)
            }
            schema::Outcome::Unchecked(why) => {
                let why = why.clone();
                self.report(sink, slot, Rule::EventSchemaUnchecked, None, why)
            }
        }
    }

    /// `secret.exposed` and `secret.url-exposed`, in every protocol
    /// (DESIGN §10): one finding per exposed value, naming its key path,
    /// never its value.
    fn secrets(&mut self, sink: &mut dyn Sink, slot: usize, ev: &Event<'_>) -> io::Result<()> {
        if !ev.has_marked_keys() && self.cfg.secret_names.is_empty() {
            return Ok(());
        }
        let mut found = std::mem::take(&mut self.exposures);
        secrets::scan(ev, &self.cfg.secret_names, &mut found);
        for e in &found {
            let (rule, msg) = if e.url {
                (
                    Rule::SecretUrlExposed,
                    format!(
                        "{} holds a URL with a secret in it (password or secret-named parameter): redact it to ***",
                        crate::text::quote(&e.path)
                    ),
                )
            } else {
                (
                    Rule::SecretExposed,
                    format!(
                        "{} is marked secret but its value is not \"***\"",
                        crate::text::quote(&e.path)
                    ),
                )
            };
            self.report(sink, slot, rule, None, msg)?;
        }
        self.exposures = found;
        Ok(())
    }

    /// Which run of a log a line belongs to.
    fn place(&mut self, ev: &Event<'_>) -> Target {
        let pinned_other = self.cfg.protocol.is_some_and(|p| p != Protocol::Aoi);
        let run_v = match ev.aoi() {
            Aoi::Object { run, .. } if !pinned_other => run,
            _ => None,
        };
        let opens = match self.cfg.protocol {
            Some(Protocol::Ndjson) => ndjson::opens(self.cfg, ev),
            _ => ev.ty_bytes().as_deref() == Some(b"aoi:meta"),
        };
        self.target(run_v, opens)
    }

    /// An event of an AOI 1.x run (spec §2, §8, §13).
    fn aoi_event(&mut self, sink: &mut dyn Sink, slot: usize, ev: &Event<'_>) -> io::Result<Seen> {
        let (ty, seen) = typed(ev, Protocol::Aoi);
        let ty = ty.as_deref();
        let aoi = ev.aoi();
        let (_, run_v, aoi_bad) = aoi.parts();
        let multi = self.cfg.multi_run;
        let run = self.run(slot);
        // Multi-run: `place` sent the line here by its id, so once the run
        // has an id every id it gets is that one.
        let (t, new_id) = if multi && run.tracks[0].id.is_some() {
            (0, false)
        } else {
            run.track(run_v)
        };
        run.count_line();
        let late = run.summary.is_some() && ty != Some(b"aoi:summary") && !run.not_last_reported;
        if late {
            run.not_last_reported = true;
        }
        if new_id && !multi {
            // Counts over two runs cannot be reconciled with one summary.
            run.seq_trouble = true;
        }
        if late {
            let msg =
                "event after the run's aoi:summary: the summary must be the last line".to_string();
            self.report(sink, slot, Rule::SummaryNotLast, None, msg)?;
        }
        if new_id && !multi {
            let name = run_v.and_then(|v| v.as_str()).unwrap_or_default();
            let msg = format!(
                "run id changed to {}: one stream must be one run (use --multi-run for merged logs)",
                crate::text::quote(&name)
            );
            self.report(sink, slot, Rule::RunChanged, None, msg)?;
        }

        // The envelope (§2, §8.1).
        if let Some(key) = ev.duplicate_reserved_key() {
            let msg = format!("{key} appears twice: parsers disagree about which one wins");
            self.report(sink, slot, Rule::EnvelopeDuplicateKey, None, msg)?;
        }
        if ty.is_none() {
            let msg = match ev.get("type") {
                None => "no type: every event must carry a string type".to_string(),
                Some(_) => "type is not a string".to_string(),
            };
            self.report(sink, slot, Rule::EnvelopeTypeMissing, None, msg)?;
        }
        if aoi_bad {
            self.report(
                sink,
                slot,
                Rule::EnvelopeAoiNotObject,
                None,
                "aoi is not an object".into(),
            )?;
        }
        if ev.has_ansi() {
            self.report(
                sink,
                slot,
                Rule::TextAnsi,
                None,
                "ANSI escape inside a string value".into(),
            )?;
        }
        let (seq, stepped) = self.seq(sink, slot, t, aoi, ev.seq_uint())?;
        let seen = Seen {
            seq: stepped,
            ..seen
        };
        if self.run(slot).unsupported {
            return Ok(seen);
        }
        self.by_type(sink, slot, t, ev, ty, seq)?;
        Ok(seen)
    }

    /// An event by its decoded type: the framework events' rules, and the
    /// domain count. AOI 0.2 (`legacy.rs`) differs only in its summary and
    /// error rules.
    fn by_type(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        t: usize,
        ev: &Event<'_>,
        ty: Option<&[u8]>,
        seq: Option<u64>,
    ) -> io::Result<()> {
        // Two `type`s: jq and Python read the last, aoitap the first, so the
        // line is no event of either type (`envelope.duplicate-key` says
        // why). Allowing that finding never makes it a summary (DESIGN §13).
        if ev.duplicate_reserved_key().is_some() && ev.count("type") > 1 {
            // Nor can the domain count be judged: one finding per cause.
            self.run(slot).count_trouble = true;
            return Ok(());
        }
        let framework = ty.is_some_and(|t| t.starts_with(b"aoi:"));
        let legacy = self.run(slot).protocol == Some(Protocol::Aoi02);
        if framework {
            self.verdict_duplicates(sink, slot, ev, seq)?;
        }
        match ty {
            Some(b"aoi:meta") => self.meta(sink, slot, ev, seq)?,
            Some(b"aoi:summary") => {
                if self.run(slot).summary.is_some() {
                    let msg = "second aoi:summary: a stream carries at most one".to_string();
                    self.report(sink, slot, Rule::SummaryDuplicate, seq, msg)?;
                } else {
                    if legacy {
                        self.legacy_summary(sink, slot, ev)?;
                    } else {
                        self.summary(sink, slot, t, ev, seq)?;
                    }
                    if self.cfg.multi_run {
                        self.close(sink, slot)?;
                    }
                }
            }
            Some(b"aoi:error") if legacy => self.legacy_error(sink, slot, ev)?,
            Some(b"aoi:error") => self.error(sink, slot, ev, seq)?,
            Some(b"aoi:warning") => self.run(slot).warnings += 1,
            Some(other) if framework && !KNOWN_FRAMEWORK.iter().any(|k| k.as_bytes() == other) => {
                let msg = format!(
                    "unknown framework event {}: it may carry failure, so success cannot be reported",
                    crate::text::quote(&String::from_utf8_lossy(other))
                );
                self.report(sink, slot, Rule::FrameworkUnknownType, seq, msg)?;
            }
            Some(_) if framework => {}
            Some(_) => self.run(slot).domain += 1,
            None => {}
        }
        Ok(())
    }

    /// A line for a run already judged (multi-run).
    fn late(&mut self, sink: &mut dyn Sink, id: &[u8], ty: Option<&[u8]>) -> io::Result<()> {
        let reported = self.finished.get_mut(id).expect("finished id");
        if *reported {
            return Ok(());
        }
        *reported = true;
        let name = String::from_utf8_lossy(id).into_owned();
        let what = if ty == Some(b"aoi:summary") {
            "second aoi:summary"
        } else {
            "event"
        };
        let rule = if ty == Some(b"aoi:summary") {
            Rule::SummaryDuplicate
        } else {
            Rule::SummaryNotLast
        };
        let Some(severity) = self.cfg.levels.of(rule) else {
            return Ok(());
        };
        sink.finding(&Finding {
            rule,
            severity,
            line: self.line,
            run: Some(name),
            seq: None,
            message: format!("{what} after the run's aoi:summary, which was already judged"),
            column: None,
            missing: None,
            place: None,
        })
    }

    /// `aoi.seq` and `aoi.run` (§8.1, §18 check 15), with `uint` the seq as
    /// the walk decoded it. Returns the seq when readable.
    fn seq(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        t: usize,
        aoi: Aoi<'_>,
        uint: Uint,
    ) -> io::Result<(Option<u64>, SeqSeen)> {
        let (seq_v, run_v, aoi_bad) = aoi.parts();
        if let Some(v) = run_v
            && v.kind() != Kind::String
        {
            self.report(
                sink,
                slot,
                Rule::RunNotString,
                None,
                "aoi.run is not a string".into(),
            )?;
        }
        if self.run(slot).tracks[t].shared {
            let n = match (seq_v, uint) {
                (Some(_), Uint::Int(n)) => Some(n),
                _ => None,
            };
            return Ok((n, SeqSeen::Untracked));
        }
        let track = &mut self.run(slot).tracks[t].seq;
        let Some(v) = seq_v else {
            let uses = track.started();
            track.skip();
            if uses && !aoi_bad {
                self.run(slot).seq_trouble = true;
                let msg = "no aoi.seq in a run that numbers its events".to_string();
                self.report(sink, slot, Rule::SeqMissing, None, msg)?;
            }
            return Ok((None, SeqSeen::Skipped));
        };
        // aoitap counts seq in 64 bits: a larger one cannot be placed, and
        // is said so rather than clamped into a false order.
        let past_u64 = uint == Uint::Huge;
        let Uint::Int(n) = uint else {
            track.skip();
            let run = self.run(slot);
            run.seq_trouble = true;
            run.seq_uncounted = true;
            let what = if past_u64 {
                "past 2^64-1, more than aoitap can count"
            } else {
                "not a non-negative integer"
            };
            let msg = format!("aoi.seq is {}, {what}", crate::text::quote_raw(v.raw()));
            self.report(sink, slot, Rule::SeqNotInteger, None, msg)?;
            return Ok((None, SeqSeen::Skipped));
        };
        let step = track.step(n);
        if run_v.is_none() {
            let msg =
                "aoi.seq without aoi.run: the line cannot be attributed on its own".to_string();
            self.report(sink, slot, Rule::RunMissing, Some(n), msg)?;
        }
        match step {
            Step::InOrder => {}
            Step::HeadCut { count } | Step::Gap { count, .. } => {
                let run = self.run(slot);
                run.seq_trouble = true;
                run.missing = run.missing.saturating_add(count);
                let s = if count == 1 { "" } else { "s" };
                let (rule, msg, from) = match step {
                    Step::Gap { from, to, .. } => {
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
                let f = Found::new(rule, msg)
                    .seq(Some(n))
                    .missing((from, n - 1, count));
                self.emit(sink, slot, f)?;
            }
            Step::Back { expected } => {
                let run = self.run(slot);
                run.seq_trouble = true;
                run.repeats += 1;
                let msg = format!("seq {n} again or backwards: expected {expected}");
                self.report(sink, slot, Rule::SeqRepeat, Some(n), msg)?;
            }
        }
        Ok((Some(n), SeqSeen::At(n)))
    }

    /// Judge a run and release it.
    fn close(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        let protocol = self.protocol_at_end(slot);
        self.close_by_protocol(sink, slot)?;
        self.release(sink, slot, protocol)
    }

    /// The end of an AOI 1.x run: its summary, meta and seq claimed.
    fn aoi_close(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        self.summary_missing(sink, slot)?;
        self.meta_missing(sink, slot)?;
        let run = self.run(slot);
        if !run.tracks.iter().any(|t| t.seq.started()) && !run.seq_uncounted {
            let msg = "no aoi.seq: events lost from the middle would go unnoticed".to_string();
            self.report(sink, slot, Rule::VerifiableNotClaimed, None, msg)?;
        }
        Ok(())
    }

    /// `summary.missing` when the run has none (a warning with
    /// `--unbounded`, §4.2).
    fn summary_missing(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        let cfg = self.cfg;
        let run = self.run(slot);
        if run.summary.is_none() {
            let lines = run.lines;
            let msg = if run.evicted {
                format!(
                    "judged after {} without its aoi:summary: more than {MAX_OPEN_RUNS} runs \
                     were open at once, and the oldest is judged to keep memory bounded",
                    plural(lines, "line")
                )
            } else if cfg.unbounded {
                format!(
                    "no aoi:summary after {} (allowed: --unbounded)",
                    plural(lines, "line")
                )
            } else {
                format!(
                    "the stream ended after {} without its aoi:summary: it was cut off or the producer crashed",
                    plural(lines, "line")
                )
            };
            let mut f = Found::new(Rule::SummaryMissing, msg);
            if cfg.unbounded {
                // Not a violation for a documented unbounded stream (§4.2).
                f.base = Severity::Warning;
            }
            self.emit(sink, slot, f)?;
        }
        Ok(())
    }

    fn meta_missing(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        let cfg = self.cfg;
        if self.run(slot).meta.is_none() {
            self.report(
                sink,
                slot,
                Rule::MetaMissing,
                None,
                "no aoi:meta: the stream does not say what it is".into(),
            )?;
            if let Some(pin) = &cfg.expect_schema {
                let msg = format!(
                    "expected schema {}, but the run has no aoi:meta",
                    pin_text(pin)
                );
                self.report(sink, slot, Rule::VersionSchemaMismatch, None, msg)?;
            }
        }
        Ok(())
    }

    /// Release a run's state and hand its verdict to the sink.
    fn release(&mut self, sink: &mut dyn Sink, slot: usize, protocol: Protocol) -> io::Result<()> {
        let cfg = self.cfg;
        let run = self.slots[slot].take().expect("open run");
        self.free.push(slot);
        if matches!(self.last_run, LastRun::Slot(s) if s == slot) {
            self.last_run = LastRun::Gone {
                id: run.id.clone(),
                first_line: run.first_line,
                meta: run.meta.is_some() || protocol.runs_by_position(),
            };
        }
        if self.current == Some(slot) {
            self.current = None;
        }
        if self.last == Some(slot) {
            self.last = None;
        }
        if let Some(id) = &run.id {
            self.index.remove(id);
            if cfg.multi_run {
                self.finished.insert(id.clone(), false);
                self.finished_order.push_back(id.clone());
                if self.finished_order.len() > FINISHED_REMEMBERED
                    && let Some(old) = self.finished_order.pop_front()
                {
                    self.finished.remove(&old);
                }
            }
        }
        sink.run(&judge(cfg, run, protocol))
    }
}
