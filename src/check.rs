//! The per-run checker: feeds each line through the rules of DESIGN §3,
//! keeps per-run state, and decides each run's verdict (DESIGN §4).
//!
//! Without `--multi-run` the whole input is one run (spec §13.1
//! cardinality), though `seq` is still tracked per run id. With it, runs are
//! told apart by `aoi.run`; lines without one belong to the run opened by the
//! latest `aoi:meta`. A run is judged when its summary arrives (multi-run) or
//! at end of input, and its state is then released.

use std::collections::{HashMap, VecDeque};
use std::io;

use crate::event::{Aoi, Envelope, Event, JsonError, Kind, Parser, Uint, Value};
use crate::redact;
use crate::rules::{CATEGORIES, Levels, Rule, Severity};
use crate::scan::Line;

/// Finished run ids remembered (so late lines are `summary.not-last`, not a
/// new run); older ones are forgotten to keep memory flat over long logs.
const FINISHED_REMEMBERED: usize = 4096;

const KNOWN_FRAMEWORK: &[&str] = &[
    "aoi:meta",
    "aoi:summary",
    "aoi:warning",
    "aoi:error",
    "aoi:heartbeat",
    "aoi:plan",
    "aoi:check",
    "aoi:progress",
];

/// The checker's plain configuration (made from the command line in cli.rs).
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub multi_run: bool,
    pub unbounded: bool,
    pub accept_partial: bool,
    pub continue_on_error: bool,
    pub expect_schema: Option<SchemaPin>,
    pub levels: Levels,
}

/// `--expect-schema NAME[@MAJOR]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaPin {
    pub name: String,
    pub major: Option<u64>,
}

/// One finding: a rule broken at a line.
#[derive(Clone, Debug)]
pub struct Finding {
    pub rule: Rule,
    pub severity: Severity,
    /// 1-based; 0 when the finding is about the input as a whole.
    pub line: u64,
    pub run: Option<String>,
    pub seq: Option<u64>,
    pub message: String,
    pub column: Option<usize>,
    /// `seq.gap` / `seq.not-from-zero`: first, last and count of the missing.
    pub missing: Option<(u64, u64, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Failed,
    Retryable,
    Nonconforming,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Failed => "failed",
            Verdict::Retryable => "retryable",
            Verdict::Nonconforming => "nonconforming",
        }
    }
}

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

/// A judged run.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub run: Option<String>,
    /// The run id's raw bytes (the JSON string's inside), if it has one.
    pub id: Option<Box<[u8]>>,
    pub first_line: u64,
    pub lines: u64,
    pub verdict: Verdict,
    /// One sentence a person understands without the spec.
    pub message: String,
    pub cause: Option<Cause>,
    pub identity: Option<Identity>,
    pub domain_events: u64,
    pub warnings: u64,
    pub errors: u64,
    /// Events missing by seq (gaps and a cut head), repeated seqs, and
    /// whether the run numbers its events at all.
    pub missing: u64,
    pub repeats: u64,
    pub uses_seq: bool,
    pub error_findings: u64,
}

/// Where findings and verdicts go.
pub trait Sink {
    fn finding(&mut self, f: &Finding) -> io::Result<()>;
    fn run(&mut self, r: &RunReport) -> io::Result<()>;
}

/// The summary's outcome fields, kept until the run is judged.
#[derive(Default)]
struct Outcome {
    ok: Option<bool>,
    partial: bool,
    reason: Option<String>,
    caused_by: Option<Cause>,
}

/// Seq bookkeeping for one run id.
struct Track {
    id: Option<Box<[u8]>>,
    lines: u64,
    /// The seq the next line should carry.
    next: u64,
    /// Some line of this id carried a seq.
    started: bool,
}

impl Track {
    fn new(id: Option<Box<[u8]>>) -> Track {
        Track {
            id,
            lines: 0,
            next: 0,
            started: false,
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
    cur: usize,
    meta: Option<Identity>,
    summary: Option<Outcome>,
    not_last_reported: bool,
    unreadable: bool,
    seq_trouble: bool,
    count_trouble: bool,
    domain: u64,
    warnings: u64,
    errors: u64,
    item_errors: u64,
    forwarded_errors: u64,
    local_process_error: Option<Cause>,
    error_findings: u64,
    first_error: Option<String>,
    unsupported: bool,
    missing: u64,
    repeats: u64,
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
            cur: 0,
            meta: None,
            summary: None,
            not_last_reported: false,
            unreadable: false,
            seq_trouble: false,
            count_trouble: false,
            domain: 0,
            warnings: 0,
            errors: 0,
            item_errors: 0,
            forwarded_errors: 0,
            local_process_error: None,
            error_findings: 0,
            first_error: None,
            unsupported: false,
            missing: 0,
            repeats: 0,
        }
    }

    /// The track for `id` (the current one when the line names none), and
    /// whether it is new to this run.
    fn track(&mut self, v: Option<Value<'_>>) -> (usize, bool) {
        let Some(id) = v.and_then(|v| v.raw_str()) else {
            return (self.cur, false);
        };
        if self.tracks[self.cur].id.as_deref() == Some(id) {
            return (self.cur, false);
        }
        if self.tracks[0].id.is_none() {
            // The first id seen names the run; earlier lines were its own.
            self.tracks[0].id = Some(id.into());
            self.id = Some(id.into());
            self.name = v.and_then(|v| v.as_str()).map(|s| s.into_owned());
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
        self.tracks.push(Track::new(Some(id.into())));
        let i = self.tracks.len() - 1;
        self.track_index.insert(id.into(), i);
        self.cur = i;
        (i, true)
    }
}

/// What the checker learned of a line, for commands that pass lines on.
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    /// A JSON object with a string `type` and no reserved key twice: an
    /// event that can be passed on.
    pub event: bool,
    /// Its type is `aoi:*`.
    pub framework: bool,
    /// Where the type string's inside stands in the line.
    pub ty: (usize, usize),
    /// The bytes to cut to remove the top-level `aoi` member and one comma.
    pub cut: Option<(usize, usize)>,
}

impl Seen {
    fn of(line: &[u8], env: &Envelope) -> Seen {
        let ty = env.ty(line).and_then(|v| v.raw_str().map(|_| v.span()));
        let Some((start, end)) = ty else {
            return Seen::default();
        };
        Seen {
            event: env.duplicate_reserved_key().is_none(),
            framework: line[start + 1..].starts_with(b"aoi:"),
            ty: (start + 1, end - 1),
            cut: env.aoi_cut(),
        }
    }

    /// Is the type `t` (decoded, as a JSON reader would compare it)?
    pub fn type_is(&self, line: &[u8], t: &str) -> bool {
        let raw = &line[self.ty.0..self.ty.1];
        if raw.contains(&b'\\') {
            crate::event::unescape(raw) == t
        } else {
            raw == t.as_bytes()
        }
    }
}

/// The run a line went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOf<'a> {
    /// A run with an `aoi.run` id (raw bytes of the JSON string's inside).
    Named(&'a [u8]),
    /// A run without an id, opened by an `aoi:meta` at this line.
    Anonymous { first_line: u64 },
    /// Lines that no run id or meta claims.
    Nowhere,
}

impl RunOf<'_> {
    fn of(id: Option<&[u8]>, first_line: u64, meta: bool) -> RunOf<'_> {
        match id {
            Some(id) => RunOf::Named(id),
            None if meta => RunOf::Anonymous { first_line },
            None => RunOf::Nowhere,
        }
    }
}

/// A run as commands file it: by id, by the line of the meta that opened
/// it, or nowhere.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RunKey {
    Id(Box<[u8]>),
    FromLine(u64),
    Nowhere,
}

impl RunKey {
    pub fn of(run: RunOf<'_>) -> RunKey {
        match run {
            RunOf::Named(id) => RunKey::Id(id.into()),
            RunOf::Anonymous { first_line } => RunKey::FromLine(first_line),
            RunOf::Nowhere => RunKey::Nowhere,
        }
    }

    pub fn of_report(r: &RunReport) -> RunKey {
        match &r.id {
            Some(id) => RunKey::Id(id.clone()),
            None if r.identity.is_some() => RunKey::FromLine(r.first_line),
            None => RunKey::Nowhere,
        }
    }
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

pub struct Checker<'c> {
    parser: Parser,
    /// The parser holds the current line.
    parsed: bool,
    st: State<'c>,
}

/// A line parsed ahead of judging (see `Checker::judge`).
pub type Parsed = Result<Envelope, JsonError>;

/// Parse on the checker's own parser.
fn parse(parser: &mut Parser, parsed: &mut bool, line: &[u8]) -> Parsed {
    *parsed = true;
    parser.parse(line).map(|ev| ev.envelope())
}

/// Framework events are judged with the whole event in hand.
const FULL: &str = "framework events are parsed in full";

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
    last_run: LastRun,
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
            last_run: LastRun::Nowhere,
        };
        if !cfg.multi_run {
            st.current = Some(st.open(None, None));
        }
        Checker {
            parser: Parser::new(),
            parsed: false,
            st,
        }
    }

    /// Judge one item from the scanner, and say what it was (for commands
    /// that pass lines on).
    pub fn line(&mut self, item: Line<'_>, sink: &mut dyn Sink) -> io::Result<Seen> {
        self.judge(item, None, sink)
    }

    /// As `line`, with the line already parsed elsewhere (`pre`, for a
    /// complete line). Framework events are parsed again here in full: they
    /// are few, and their rules read many fields.
    pub fn judge(
        &mut self,
        item: Line<'_>,
        pre: Option<Parsed>,
        sink: &mut dyn Sink,
    ) -> io::Result<Seen> {
        let st = &mut self.st;
        st.line += 1;
        self.parsed = false;
        let (rule, message, column) = match item {
            Line::Unterminated { len } => {
                let slot = st.current_slot();
                st.last_run = LastRun::Slot(slot);
                let msg = format!(
                    "the last line has no newline ({len} bytes): the stream was cut, and the fragment is not an event"
                );
                st.report(sink, slot, Rule::LineUnterminated, None, msg)?;
                return Ok(Seen::default());
            }
            Line::TooLong { len } => (
                Rule::LineTooLong,
                format!("line is {len} bytes, over --max-line-bytes; skipped"),
                None,
            ),
            Line::Complete(bytes) if bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) => (
                Rule::LineBlank,
                "blank line: every line must be a JSON object".to_string(),
                None,
            ),
            Line::Complete(bytes) => {
                match pre.unwrap_or_else(|| parse(&mut self.parser, &mut self.parsed, bytes)) {
                    Ok(env) if env.is_object => {
                        let framework = env
                            .ty(bytes)
                            .and_then(|v| v.raw_str())
                            .is_some_and(|t| t.starts_with(b"aoi:"));
                        if framework && !self.parsed {
                            self.parsed = self.parser.parse(bytes).is_ok();
                        }
                        let full = if framework {
                            self.parser.last(bytes)
                        } else {
                            None
                        };
                        st.event(sink, bytes, &env, full.as_ref())?;
                        return Ok(Seen::of(bytes, &env));
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
                }
            }
        };
        st.unreadable(sink, rule, message, column)?;
        Ok(Seen::default())
    }

    /// Lines read so far (the number of the last one).
    pub fn line_number(&self) -> u64 {
        self.st.line
    }

    /// The last line as an event, if it was one (`line` must be its bytes).
    pub fn last_event<'a>(&'a mut self, line: &'a [u8]) -> Option<Event<'a>> {
        if !self.parsed {
            self.parsed = true;
            let _ = self.parser.parse(line);
        }
        self.parser.last(line).filter(Event::is_object)
    }

    /// The run the last line went to.
    pub fn run_of_last_line(&self) -> RunOf<'_> {
        match &self.st.last_run {
            LastRun::Nowhere => RunOf::Nowhere,
            LastRun::Slot(s) => match &self.st.slots[*s] {
                Some(r) => RunOf::of(r.id.as_deref(), r.first_line, r.meta.is_some()),
                None => RunOf::Nowhere,
            },
            LastRun::Gone {
                id,
                first_line,
                meta,
            } => RunOf::of(id.as_deref(), *first_line, *meta),
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
        })
    }

    /// End of input: judge every run still open.
    pub fn finish(mut self, sink: &mut dyn Sink) -> io::Result<()> {
        let mut open: Vec<usize> = (0..self.st.slots.len())
            .filter(|&i| self.st.slots[i].is_some())
            .collect();
        open.sort_by_key(|&i| self.st.slots[i].as_ref().map_or(0, |r| r.first_line));
        for slot in open {
            self.st.close(sink, slot)?;
        }
        Ok(())
    }
}

impl State<'_> {
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
        slot
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
        let raw = id.and_then(|v| v.raw_str());
        if !self.cfg.multi_run {
            return Target::Slot(self.current_slot());
        }
        let Some(raw) = raw else {
            if is_meta {
                let s = self.open(None, None);
                self.current = Some(s);
                return Target::Slot(s);
            }
            return Target::Slot(self.current_slot());
        };
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
        let name = id.and_then(|v| v.as_str()).map(|s| s.into_owned());
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
        if severity == Severity::Error {
            run.error_findings += 1;
            run.first_error.get_or_insert_with(|| f.message.clone());
        }
        sink.finding(&Finding {
            rule: f.rule,
            severity,
            line,
            run: run.name.clone(),
            seq: f.seq,
            message: f.message,
            column: f.column,
            missing: f.missing,
        })
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
        run.lines += 1;
        run.unreadable = true;
        let t = &mut run.tracks[run.cur];
        t.lines += 1;
        t.next = t.next.saturating_add(1);
        self.emit(sink, slot, Found::new(rule, message).column(column))
    }

    /// A line that is a JSON object. `full` is the whole event, given for
    /// framework events (`aoi:*`), whose rules read more than the envelope.
    fn event(
        &mut self,
        sink: &mut dyn Sink,
        line: &[u8],
        env: &Envelope,
        full: Option<&Event<'_>>,
    ) -> io::Result<()> {
        let ty_value = env.ty(line);
        let ty = ty_value.and_then(|v| v.as_str());
        let ty = ty.as_deref();
        let (seq_v, run_v, aoi_bad) = match env.aoi(line) {
            Aoi::Absent => (None, None, false),
            Aoi::NotObject => (None, None, true),
            Aoi::Object { seq, run } => (seq, run, false),
        };
        let is_meta = ty == Some("aoi:meta");
        let slot = match self.target(run_v, is_meta) {
            Target::Slot(s) => s,
            Target::Finished(id) => {
                self.late(sink, &id, ty)?;
                self.last_run = LastRun::Gone {
                    id: Some(id),
                    first_line: 0,
                    meta: true,
                };
                return Ok(());
            }
        };
        self.last_run = LastRun::Slot(slot);
        let multi = self.cfg.multi_run;
        let run = self.run(slot);
        run.lines += 1;
        let (t, new_id) = run.track(run_v);
        run.tracks[t].lines += 1;
        let late = run.summary.is_some() && ty != Some("aoi:summary") && !run.not_last_reported;
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
                "run id changed to {name:?}: one stream must be one run (use --multi-run for merged logs)"
            );
            self.report(sink, slot, Rule::RunChanged, None, msg)?;
        }

        // The envelope (§2, §8.1).
        if let Some(key) = env.duplicate_reserved_key() {
            let msg = format!("{key} appears twice: parsers disagree about which one wins");
            self.report(sink, slot, Rule::EnvelopeDuplicateKey, None, msg)?;
        }
        if ty.is_none() {
            let msg = match ty_value {
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
        if env.has_ansi {
            self.report(
                sink,
                slot,
                Rule::TextAnsi,
                None,
                "ANSI escape inside a string value".into(),
            )?;
        }
        let seq = self.seq(sink, slot, t, seq_v, run_v, aoi_bad)?;
        if self.run(slot).unsupported {
            return Ok(());
        }

        match ty {
            Some("aoi:meta") => self.meta(sink, slot, full.expect(FULL), seq)?,
            Some("aoi:summary") => {
                if self.run(slot).summary.is_some() {
                    let msg = "second aoi:summary: a stream carries at most one".to_string();
                    self.report(sink, slot, Rule::SummaryDuplicate, seq, msg)?;
                } else {
                    self.summary(sink, slot, t, full.expect(FULL), seq)?;
                    if self.cfg.multi_run {
                        self.close(sink, slot)?;
                    }
                }
            }
            Some("aoi:error") => self.error(sink, slot, full.expect(FULL), seq)?,
            Some("aoi:warning") => self.run(slot).warnings += 1,
            Some(other) if other.starts_with("aoi:") && !KNOWN_FRAMEWORK.contains(&other) => {
                let msg = format!(
                    "unknown framework event {other:?}: it may carry failure, so success cannot be reported"
                );
                self.report(sink, slot, Rule::FrameworkUnknownType, seq, msg)?;
            }
            Some(other) if other.starts_with("aoi:") => {}
            Some(_) => self.run(slot).domain += 1,
            None => {}
        }
        Ok(())
    }

    /// A line for a run already judged (multi-run).
    fn late(&mut self, sink: &mut dyn Sink, id: &[u8], ty: Option<&str>) -> io::Result<()> {
        let reported = self.finished.get_mut(id).expect("finished id");
        if *reported {
            return Ok(());
        }
        *reported = true;
        let name = String::from_utf8_lossy(id).into_owned();
        let what = if ty == Some("aoi:summary") {
            "second aoi:summary"
        } else {
            "event"
        };
        let rule = if ty == Some("aoi:summary") {
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
        })
    }

    /// `aoi.seq` and `aoi.run` (§8.1, §18 check 15). Returns the seq when readable.
    fn seq(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        t: usize,
        seq_v: Option<Value<'_>>,
        run_v: Option<Value<'_>>,
        aoi_bad: bool,
    ) -> io::Result<Option<u64>> {
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
        let track = &mut self.run(slot).tracks[t];
        let Some(v) = seq_v else {
            let uses = track.started;
            track.next = track.next.saturating_add(1);
            if uses && !aoi_bad {
                self.run(slot).seq_trouble = true;
                let msg = "no aoi.seq in a run that numbers its events".to_string();
                self.report(sink, slot, Rule::SeqMissing, None, msg)?;
            }
            return Ok(None);
        };
        let Uint::Int(n) = v.as_uint() else {
            track.next = track.next.saturating_add(1);
            self.run(slot).seq_trouble = true;
            let msg = format!(
                "aoi.seq is {}, not a non-negative integer",
                String::from_utf8_lossy(v.raw())
            );
            self.report(sink, slot, Rule::SeqNotInteger, None, msg)?;
            return Ok(None);
        };
        let (expected, started) = (track.next, track.started);
        track.next = expected.max(n.saturating_add(1));
        track.started = true;
        if run_v.is_none() {
            let msg =
                "aoi.seq without aoi.run: the line cannot be attributed on its own".to_string();
            self.report(sink, slot, Rule::RunMissing, Some(n), msg)?;
        }
        if n > expected {
            let count = n - expected;
            let run = self.run(slot);
            run.seq_trouble = true;
            run.missing = run.missing.saturating_add(count);
            let (rule, msg) = if !started && expected == 0 {
                let msg = format!(
                    "the run starts at seq {n}, not 0: the head was cut ({count} events missing)"
                );
                (Rule::SeqNotFromZero, msg)
            } else {
                let s = if count == 1 { "" } else { "s" };
                let msg = format!(
                    "expected seq {expected}, got {n}: {count} event{s} missing (seq {expected}..{})",
                    n - 1
                );
                (Rule::SeqGap, msg)
            };
            let f = Found::new(rule, msg)
                .seq(Some(n))
                .missing((expected, n - 1, count));
            self.emit(sink, slot, f)?;
        } else if n < expected {
            let run = self.run(slot);
            run.seq_trouble = true;
            run.repeats += 1;
            let msg = format!("seq {n} again or backwards: expected {expected}");
            self.report(sink, slot, Rule::SeqRepeat, Some(n), msg)?;
        }
        Ok(Some(n))
    }

    fn meta(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
        seq: Option<u64>,
    ) -> io::Result<()> {
        if self.cfg.multi_run {
            self.current = Some(slot);
        }
        let run = self.run(slot);
        if run.meta.is_some() {
            let msg =
                "second aoi:meta: a stream carries at most one (use --multi-run for merged logs)"
                    .to_string();
            return self.report(sink, slot, Rule::MetaDuplicate, seq, msg);
        }
        let first = run.lines == 1;
        let id = identity(ev);
        run.meta = Some(id.clone());
        if !first {
            let msg = "aoi:meta is not the run's first event".to_string();
            self.report(sink, slot, Rule::MetaNotFirst, seq, msg)?;
        }
        if let Some(v) = &id.aoi_version
            && major(v) != Some(1)
        {
            let msg = format!(
                "aoi_version {v:?} is not AOI-CLI 1.x: aoitap does not interpret this stream (spec §5.2)"
            );
            self.report(sink, slot, Rule::VersionAoiUnsupported, seq, msg)?;
            self.run(slot).unsupported = true;
            return Ok(());
        }
        let missing = missing_identity(&id);
        if !missing.is_empty() {
            let msg = format!("aoi:meta lacks {}", missing.join(", "));
            self.report(sink, slot, Rule::MetaIdentityMissing, seq, msg)?;
        }
        if let Some(leak) = ev.get("args").and_then(args_leak) {
            self.report(
                sink,
                slot,
                Rule::MetaArgsUnredacted,
                seq,
                format!("meta.args: {leak}"),
            )?;
        }
        if let Some(pin) = &self.cfg.expect_schema {
            let name_ok = id.schema_name.as_deref() == Some(pin.name.as_str());
            let major_ok =
                pin.major.is_none() || id.schema_version.as_deref().and_then(major) == pin.major;
            if !(name_ok && major_ok) {
                let got = format!(
                    "{}@{}",
                    id.schema_name.as_deref().unwrap_or("(none)"),
                    id.schema_version.as_deref().unwrap_or("(none)")
                );
                let msg = format!("expected schema {}, got {got}", pin_text(pin));
                self.report(sink, slot, Rule::VersionSchemaMismatch, seq, msg)?;
            }
        }
        Ok(())
    }

    fn error(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
        seq: Option<u64>,
    ) -> io::Result<()> {
        let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
        let category = text("category");
        let code = text("code");
        let message = text("message");
        let retryable = ev.get("retryable").and_then(|v| v.as_bool());
        let origin = text("origin");
        let scope = ev.get("scope");
        let retry_after = ev.get("retry_after_ms");

        let mut missing = vec![];
        for (name, present) in [
            ("category", category.is_some()),
            ("code", code.is_some()),
            ("message", message.is_some()),
            ("retryable", retryable.is_some()),
        ] {
            if !present {
                missing.push(name);
            }
        }
        if !missing.is_empty() {
            let msg = format!(
                "aoi:error lacks {} (or has the wrong type)",
                missing.join(", ")
            );
            self.report(sink, slot, Rule::ErrorFieldMissing, seq, msg)?;
        }
        match category.as_deref() {
            Some(c @ ("partial" | "temporary")) => {
                let msg = format!(
                    "category {c:?} was removed in v1.0-alpha (use the real category, or unavailable)"
                );
                self.report(sink, slot, Rule::ErrorCategoryRemoved, seq, msg)?;
            }
            Some(c) if !CATEGORIES.contains(&c) => {
                let msg = format!("unknown category {c:?}: consumers route it as internal");
                self.report(sink, slot, Rule::ErrorCategoryUnknown, seq, msg)?;
            }
            _ => {}
        }
        if let Some(c) = &code
            && !is_code(c)
        {
            let msg = format!("code {c:?} is not [A-Z][A-Z0-9_]*");
            self.report(sink, slot, Rule::ErrorCodeFormat, seq, msg)?;
        }
        if let Some(m) = &message
            && (m.contains(['\n', '\r', '\u{2028}', '\u{2029}', '\u{1b}', '\u{9b}']))
        {
            let msg =
                "message has a line break or ANSI escape: it must be one plain line".to_string();
            self.report(sink, slot, Rule::ErrorMessageMultiline, seq, msg)?;
        }
        let retry_after_ms = match retry_after {
            None => None,
            Some(v) => match v.as_uint() {
                Uint::Int(n) => Some(n),
                Uint::NotUint => {
                    let msg = format!(
                        "retry_after_ms is {}, not an integer >= 0",
                        String::from_utf8_lossy(v.raw())
                    );
                    self.report(sink, slot, Rule::ErrorRetryAfterInvalid, seq, msg)?;
                    None
                }
            },
        };
        if retry_after.is_some() && retryable == Some(false) {
            let msg = "retry_after_ms with retryable:false".to_string();
            self.report(sink, slot, Rule::ErrorRetryAfterForbidden, seq, msg)?;
        }
        let scope = match scope {
            None => Some("process".to_string()),
            Some(v) => v.as_str().map(|s| s.into_owned()),
        };
        if !matches!(scope.as_deref(), Some("process" | "item")) {
            let msg = "scope is not \"process\" or \"item\"".to_string();
            self.report(sink, slot, Rule::ErrorScopeInvalid, seq, msg)?;
        }
        let cause = Cause {
            origin: origin.clone(),
            category,
            code,
            retryable: retryable == Some(true),
            retry_after_ms: retry_after_ms.filter(|_| retryable == Some(true)),
        };
        let run = self.run(slot);
        run.errors += 1;
        if origin.is_some() {
            run.forwarded_errors += 1;
        }
        if scope.as_deref() == Some("item") {
            run.item_errors += 1;
        } else if origin.is_none() {
            run.local_process_error = Some(cause);
        }
        Ok(())
    }

    /// The terminal summary (§4, §8.3, §13.1), judged on arrival.
    fn summary(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        t: usize,
        ev: &Event<'_>,
        seq: Option<u64>,
    ) -> io::Result<()> {
        let ok = ev.get("ok").and_then(|v| v.as_bool());
        if ok.is_none() {
            let msg =
                "summary has no boolean ok: success must be stated, never assumed".to_string();
            self.report(sink, slot, Rule::SummaryOkMissing, seq, msg)?;
        }
        let reason = ev.get("reason").map(|v| v.as_str().map(|s| s.into_owned()));
        match (ok, &reason) {
            (Some(false), None) => {
                let msg =
                    "ok:false without reason (failed, cancelled, timeout or denied)".to_string();
                self.report(sink, slot, Rule::SummaryReasonMissing, seq, msg)?;
            }
            (Some(false), Some(r))
                if !matches!(
                    r.as_deref(),
                    Some("failed" | "cancelled" | "timeout" | "denied")
                ) =>
            {
                let msg = format!(
                    "reason {r:?} with ok:false: must be failed, cancelled, timeout or denied"
                );
                self.report(sink, slot, Rule::SummaryReasonInvalid, seq, msg)?;
            }
            (Some(true), Some(r)) if r.as_deref() != Some("skipped") => {
                let msg = format!("reason {r:?} with ok:true: only skipped is allowed");
                self.report(sink, slot, Rule::SummaryReasonInvalid, seq, msg)?;
            }
            _ => {}
        }

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
                counters[i] = v.uint();
                if counters[i].is_none() {
                    let msg = format!(
                        "{name} is {}, not an integer >= 0",
                        String::from_utf8_lossy(v.raw())
                    );
                    self.report(sink, slot, Rule::SummaryCounterInvalid, seq, msg)?;
                }
            }
        }
        let [event_count, count, _, warning_count, error_count] = counters;
        let run = self.run(slot);
        let received = run.tracks[t].lines;
        let uses_seq = run.tracks[t].started;
        match event_count {
            Some(n) if n != received => {
                run.count_trouble = true;
                let msg = if n > received {
                    format!(
                        "the summary counts {n} events but {received} arrived: {} missing",
                        n - received
                    )
                } else {
                    format!(
                        "the summary counts {n} events but {received} arrived: {} more than it says",
                        received - n
                    )
                };
                self.report(sink, slot, Rule::SummaryEventCountMismatch, seq, msg)?;
            }
            None if uses_seq && ev.get("event_count").is_none() => {
                let msg = "no event_count: the run uses seq, but its length cannot be reconciled"
                    .to_string();
                self.report(sink, slot, Rule::SummaryEventCountMissing, seq, msg)?;
            }
            _ => {}
        }
        let run = self.run(slot);
        let complete = !run.unreadable && !run.seq_trouble && !run.count_trouble;
        let (domain, warnings, errors, item_errors) =
            (run.domain, run.warnings, run.errors, run.item_errors);
        let local_error = run.local_process_error.is_some();
        let forwarded = run.forwarded_errors;
        if complete
            && let Some(c) = count
            && c != domain
        {
            let msg = format!("count is {c} but {domain} domain events arrived");
            self.report(sink, slot, Rule::SummaryCountMismatch, seq, msg)?;
        }
        for (name, claimed, seen) in [
            ("warning_count", warning_count, warnings),
            ("error_count", error_count, errors),
        ] {
            if let Some(c) = claimed
                && c < seen
            {
                let msg = format!("{name} is {c} but {seen} were seen in the stream");
                self.report(sink, slot, Rule::SummaryCounterLow, seq, msg)?;
            }
        }
        let partial = ev.get("partial").and_then(|v| v.as_bool()) == Some(true);
        if item_errors > 0 && domain > 0 && !partial {
            let msg =
                format!("{item_errors} item error(s) and domain output, but partial is not true");
            self.report(sink, slot, Rule::SummaryPartialInconsistent, seq, msg)?;
        } else if partial && item_errors == 0 && complete {
            let msg = "partial:true but no item error was seen".to_string();
            self.report(sink, slot, Rule::SummaryPartialInconsistent, seq, msg)?;
        }
        if ok == Some(true) && local_error {
            let msg =
                "ok:true after a process-scope aoi:error, which means the run was over".to_string();
            self.report(sink, slot, Rule::SummaryOkDespiteError, seq, msg)?;
        }
        let caused_by = ev.get("caused_by");
        if ok == Some(false) && forwarded > 0 && !local_error && caused_by.is_none() {
            let msg =
                "failing because of forwarded errors, but no caused_by: the retry detail is lost"
                    .to_string();
            self.report(sink, slot, Rule::SummaryCausedByMissing, seq, msg)?;
        }
        if let Some(up) = ev.get("upstream")
            && (up.kind() == Kind::Null
                || up.children().iter().any(|(_, v)| v.kind() == Kind::Null))
        {
            let msg = "upstream is null or has null members: omit what is unknown".to_string();
            self.report(sink, slot, Rule::SummaryUpstreamNull, seq, msg)?;
        }
        let missing = missing_identity(&identity(ev));
        if !missing.is_empty() {
            let msg = format!("aoi:summary lacks {}", missing.join(", "));
            self.report(sink, slot, Rule::SummaryIdentityMissing, seq, msg)?;
        }
        let caused_by = caused_by.filter(|v| v.kind() == Kind::Object).map(|v| {
            let text = |k: &str| v.field(k).and_then(|x| x.as_str()).map(|s| s.into_owned());
            let retryable = v.field("retryable").and_then(|x| x.as_bool()) == Some(true);
            Cause {
                origin: text("origin"),
                category: text("category"),
                code: text("code"),
                retryable,
                retry_after_ms: v
                    .field("retry_after_ms")
                    .and_then(|x| x.uint())
                    .filter(|_| retryable),
            }
        });
        self.run(slot).summary = Some(Outcome {
            ok,
            partial,
            reason: reason.flatten(),
            caused_by,
        });
        Ok(())
    }

    /// Judge a run and release it.
    fn close(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        let cfg = self.cfg;
        let run = self.run(slot);
        let (has_summary, has_meta) = (run.summary.is_some(), run.meta.is_some());
        let started = run.tracks.iter().any(|t| t.started);
        if !has_summary {
            let lines = run.lines;
            let msg = if cfg.unbounded {
                format!("no aoi:summary after {lines} lines (allowed: --unbounded)")
            } else {
                format!(
                    "the stream ended after {lines} lines without its aoi:summary: it was cut off or the producer crashed"
                )
            };
            let mut f = Found::new(Rule::SummaryMissing, msg);
            if cfg.unbounded {
                // Not a violation for a documented unbounded stream (§4.2).
                f.base = Severity::Warning;
            }
            self.emit(sink, slot, f)?;
        }
        if !has_meta {
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
        if !started {
            let msg = "no aoi.seq: events lost from the middle would go unnoticed".to_string();
            self.report(sink, slot, Rule::VerifiableNotClaimed, None, msg)?;
        }
        let run = self.slots[slot].take().expect("open run");
        self.free.push(slot);
        if matches!(self.last_run, LastRun::Slot(s) if s == slot) {
            self.last_run = LastRun::Gone {
                id: run.id.clone(),
                first_line: run.first_line,
                meta: run.meta.is_some(),
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
        sink.run(&judge(cfg, run))
    }
}

/// The verdict of a finished run (DESIGN §4).
fn judge(cfg: &Config, run: RunState) -> RunReport {
    let item_failure = run.item_errors + run.forwarded_errors > 0 && !cfg.continue_on_error;
    let (verdict, message, cause) = if run.error_findings > 0 {
        let more = match run.error_findings - 1 {
            0 => String::new(),
            1 => " (and 1 more error)".to_string(),
            n => format!(" (and {n} more errors)"),
        };
        let first = run.first_error.clone().unwrap_or_default();
        (Verdict::Nonconforming, format!("{first}{more}"), None)
    } else {
        match &run.summary {
            Some(o) if o.ok == Some(true) && !item_failure => {
                (Verdict::Pass, pass_message(&run), None)
            }
            Some(o) if o.ok == Some(false) && o.partial && cfg.accept_partial => (
                Verdict::Pass,
                format!("{}; partial result accepted", pass_message(&run)),
                None,
            ),
            Some(o) => {
                let cause = o
                    .caused_by
                    .clone()
                    .or_else(|| run.local_process_error.clone());
                let why = match (o.ok, o.reason.as_deref()) {
                    (Some(true), _) => "the summary says ok, but the run holds item errors (--continue-on-error accepts them)".to_string(),
                    (_, Some(r)) => format!("the producer reported failure (reason: {r})"),
                    _ => "the producer reported failure".to_string(),
                };
                failed(why, cause)
            }
            None if run.local_process_error.is_some() => failed(
                "the run reported a process-scope error".to_string(),
                run.local_process_error.clone(),
            ),
            None if item_failure => failed(
                "the run holds item errors (--continue-on-error accepts them)".to_string(),
                None,
            ),
            None => (
                Verdict::Pass,
                format!(
                    "{} lines, no error (unbounded stream, no summary)",
                    run.lines
                ),
                None,
            ),
        }
    };
    RunReport {
        run: run.name,
        id: run.id,
        first_line: run.first_line,
        lines: run.lines,
        verdict,
        message,
        cause,
        identity: run.meta,
        domain_events: run.domain,
        warnings: run.warnings,
        errors: run.errors,
        missing: run.missing,
        repeats: run.repeats,
        uses_seq: run.tracks.iter().any(|t| t.started),
        error_findings: run.error_findings,
    }
}

fn failed(why: String, cause: Option<Cause>) -> (Verdict, String, Option<Cause>) {
    let retryable = cause.as_ref().is_some_and(|c| c.retryable);
    let mut message = why;
    if let Some(c) = &cause {
        let name = [c.category.as_deref(), c.code.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        message.push_str(&format!("; deciding error: {name}"));
        if let Some(o) = &c.origin {
            message.push_str(&format!(" from {o}"));
        }
        if retryable {
            match c.retry_after_ms {
                Some(ms) => message.push_str(&format!("; retryable after {ms} ms")),
                None => message.push_str("; retryable"),
            }
        }
    }
    let verdict = if retryable {
        Verdict::Retryable
    } else {
        Verdict::Failed
    };
    (verdict, message, cause)
}

fn pass_message(run: &RunState) -> String {
    let seq = if run.tracks.iter().any(|t| t.started) {
        format!(", seq 0..{} complete", run.lines.saturating_sub(1))
    } else {
        String::new()
    };
    format!("{} events{seq}, summary ok", run.lines)
}

fn identity(ev: &Event<'_>) -> Identity {
    let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
    Identity {
        tool: text("tool"),
        tool_version: text("tool_version"),
        aoi_version: text("aoi_version"),
        schema_name: text("schema_name"),
        schema_version: text("schema_version"),
        command: text("command"),
    }
}

fn missing_identity(id: &Identity) -> Vec<&'static str> {
    [
        ("tool_version", &id.tool_version),
        ("aoi_version", &id.aoi_version),
        ("schema_name", &id.schema_name),
        ("schema_version", &id.schema_version),
    ]
    .into_iter()
    .filter(|(_, v)| v.is_none())
    .map(|(k, _)| k)
    .collect()
}

/// The major number of `1.0-alpha`, `2.1.0`, `0.2`.
pub fn major(version: &str) -> Option<u64> {
    let end = version
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(version.len());
    version[..end].parse().ok()
}

fn pin_text(pin: &SchemaPin) -> String {
    match pin.major {
        Some(m) => format!("{}@{m}", pin.name),
        None => pin.name.clone(),
    }
}

fn is_code(c: &str) -> bool {
    let mut chars = c.chars();
    chars.next().is_some_and(|f| f.is_ascii_uppercase())
        && chars.all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_')
}

/// `meta.args` as an argv list or as an object of named values.
fn args_leak(args: Value<'_>) -> Option<String> {
    match args.kind() {
        Kind::Array => {
            let argv: Vec<String> = args
                .children()
                .into_iter()
                .filter_map(|(_, v)| v.as_str().map(|s| s.into_owned()))
                .collect();
            redact::argv_leak(&argv)
        }
        Kind::Object => args.children().into_iter().find_map(|(k, v)| {
            let value = v.as_str()?;
            if redact::is_sensitive_name(&k) && !redact::is_redacted(&value) {
                Some(format!("the value of {k:?} is not redacted"))
            } else if redact::url_leaks(&value) {
                Some(format!("{k:?} is a URL with credentials"))
            } else {
                None
            }
        }),
        _ => None,
    }
}
