//! The checker: takes each line in turn, decides what it is (a line rule
//! of docs/contract.md §3.1, or an event), places an event in its run (`runs.rs`),
//! hands it to the rules of the run's protocol (`protocols/`), and judges
//! each run when it ends (docs/contract.md §4.1). A run is judged when its summary
//! arrives (multi-run) or at the end of input, and its state is then
//! released.

use std::io;

use crate::check::common;
use crate::check::config::{Config, Protocol};
use crate::check::decision::{Decision, LastRun, Went};
use crate::check::document::{self, Closed, HELD, Joined};
use crate::check::finding::{Draft, Reporter, Sink};
use crate::check::marker::Markers;
use crate::check::profiles::{Form, Profile};
use crate::check::protocols::{self, Exited, LineKind};
use crate::check::rules::Rule;
use crate::check::run_state::RunState;
use crate::check::runs::{OpenRun, Runs, Target};
use crate::check::secrets::{self, Exposure, Suspect, Withholding};
use crate::check::verdict::judge;
use crate::input::scan::{Line, Validation};
use crate::json::{Aoi, Event, JsonError, Kind};

mod sniff;

/// What `Checker::stalled` remembers of each open run: (slot, first line)
/// to its line count when it last moved, since when, and whether it was
/// reported stalled.
#[derive(Default)]
pub struct Stalls(std::collections::HashMap<(usize, u64), (u64, std::time::Instant, bool)>);

pub struct Checker<'c> {
    cfg: &'c Config,
    /// Lines read so far (the number of the one being judged).
    line: u64,
    runs: Runs,
    markers: Markers,
    last_run: LastRun,
    /// The last line's exposed secrets (for `--redact`).
    exposures: Vec<Exposure>,
    /// Whether `--redact` must withhold the last line, and why.
    withheld: Option<Withholding>,
    /// Whether a line before ended in a secret-looking key (`--redact`).
    after_key: secrets::AfterKey,
    /// A pretty-printed document being read (the aiocs envelope,
    /// docs/contract.md §6.2): its lines so far, held until the object closes.
    doc: document::Reader,
    /// The document the last line closed, for commands that read events.
    closed: Option<Closed>,
    /// Whether the input is text: unknown before its first line; once
    /// it is known not to be, its lines are read and not judged.
    text: Option<bool>,
    /// `run`: how the command ended, when it wrote nothing; its run's
    /// missing end then names the exit, not a cut (docs/contract.md §1.3).
    silent_exit: Option<String>,
}

impl<'c> Checker<'c> {
    pub fn new(cfg: &'c Config) -> Checker<'c> {
        let mut runs = Runs::new(cfg.multi_run);
        runs.timed(cfg.timed);
        if !cfg.multi_run {
            runs.current(0);
        }
        Checker {
            cfg,
            line: 0,
            runs,
            markers: Markers::new(&cfg.markers),
            last_run: LastRun::Nowhere,
            exposures: vec![],
            withheld: None,
            after_key: secrets::AfterKey::default(),
            doc: document::Reader::default(),
            closed: None,
            text: None,
            silent_exit: None,
        }
    }

    /// Judge one item of input (its one parse in hand), and say what was
    /// decided about it.
    pub fn judge(&mut self, item: &Line<'_>, sink: &mut dyn Sink) -> io::Result<Decision<'_>> {
        let held_back = self.doc.held_back();
        let kind = self.judge_item(item, sink)?;
        // An event on a line of its own, with no value of a secret key
        // awaited, is withheld for nothing: what it exposes is replaced
        // span by span. Most lines are this; they skip what follows.
        if item.event().is_some() && !kind.held && self.closed.is_none() && self.after_key.idle() {
            self.withheld = None;
            return Ok(self.decision(kind));
        }
        // A line that could not be parsed is searched for a secret-looking
        // key byte by byte (docs/contract.md §3.3), in every command: one
        // truth. A document on this line alone was parsed and searched
        // whole: its exposed secrets are the line's.
        let (withheld, key) = match &self.closed {
            Some(doc) if doc.first_line == self.line => {
                self.exposures.clone_from(&doc.exposures);
                (None, None)
            }
            _ => secrets::withheld(item, &self.cfg.secret_names, &self.markers),
        };
        let in_document = kind.held || self.closed.is_some();
        let carried = (self.after_key).next(item, in_document, &self.cfg.secret_names);
        self.withheld = match withheld {
            _ if self.text == Some(false) && item.event().is_none() => Some(Withholding::NotText),
            None if kind.held => held_back,
            None => carried,
            withheld => withheld,
        };
        // A document's line is searched whole, as the document, when it
        // closes; till then what its bytes hold is kept.
        match key {
            Some(suspect) if kind.held && self.doc.is_open() && !self.doc.skipping() => {
                self.doc.suspect(suspect)
            }
            Some(_) if kind.held && self.closed.is_some() => {}
            // What is not text was said once (`stream.not-text`); what
            // `--redact` would withhold of it is still withheld.
            Some(_) if self.text == Some(false) => {}
            Some(suspect) => self.unparsed_secret(sink, &suspect)?,
            None => {}
        }
        Ok(self.decision(kind))
    }

    /// What was decided about the line just judged.
    fn decision(&self, kind: LineKind) -> Decision<'_> {
        Decision {
            kind,
            line: self.line,
            went: Went {
                last: &self.last_run,
                runs: &self.runs,
                doc_open: self.doc.is_open(),
            },
            exposures: &self.exposures,
            closed: self.closed.as_ref(),
            withheld: self.withheld,
        }
    }

    fn judge_item(&mut self, item: &Line<'_>, sink: &mut dyn Sink) -> io::Result<LineKind> {
        self.line += 1;
        self.exposures.clear();
        self.closed = None;
        if self.text != Some(true) && !self.is_text(item, sink)? {
            return Ok(LineKind::default());
        }
        // Only a document's line, or one that does not parse, can be part
        // of a document: a good line costs one test.
        let mut closed = None;
        if let Line::Complete { bytes, json, .. } = item
            && (self.doc.is_open() || json.is_err())
        {
            match self.joined(sink, bytes, json.is_err())? {
                Joined::Line => {}
                Joined::Held | Joined::Dropped(..) => return Ok(HELD),
                Joined::Closed(doc) => closed = Some(doc),
            }
        } else if let Line::Unterminated {
            bytes: Some(bytes), ..
        } = item
            && self.one_document()
        {
            match self.unterminated_document(sink, bytes)? {
                Some(doc) => closed = Some(doc),
                None => return Ok(HELD),
            }
        }
        // One call of `event` for a line and a document alike, so it stays
        // inlined here: out of line, every line paid 3% more instructions.
        let picked = match (&closed, item) {
            // A one-document input's document may be an array of events.
            (Some(_), _)
                if closed
                    .as_ref()
                    .is_some_and(|d| d.event().as_value().kind() == Kind::Array) =>
            {
                let doc = closed.take().expect("just matched");
                return self.closed_array(sink, doc);
            }
            (Some(doc), _) => Some((doc.event(), Validation::Unchecked)),
            (
                None,
                Line::Complete {
                    json: Ok(ev),
                    schema,
                    ..
                },
            ) if ev.is_object() => Some((*ev, *schema)),
            _ => None,
        };
        if let Some((ev, schema)) = picked {
            let here = self.line;
            if let Some(doc) = &closed {
                // A document's findings name the line it opened on.
                self.line = doc.first_line;
            }
            let kind = self.event(sink, &ev, schema);
            self.line = here;
            let Some(doc) = closed else {
                return kind;
            };
            // Its secrets' places are the document's, not a line's.
            let mut doc = doc;
            doc.exposures = std::mem::take(&mut self.exposures);
            self.closed = Some(doc);
            return kind.map(|k| LineKind { held: true, ..k });
        }
        if let Line::Complete { json: Ok(ev), .. } = item
            && !ev.is_object()
            && self.one_document()
        {
            return self.one_line_array(sink, ev);
        }
        self.line_rule(sink, item)
    }

    /// A line that is no event: the line rule it breaks (docs/contract.md
    /// §3.1: cut, too long, blank, not JSON, not an object), or what an
    /// elision marker says it stands for.
    fn line_rule(&mut self, sink: &mut dyn Sink, item: &Line<'_>) -> io::Result<LineKind> {
        let cfg = self.cfg;
        let (rule, message, column) = match *item {
            Line::Unterminated { len, bytes } => {
                let slot = self.runs.current(self.line);
                self.last_run = LastRun::Slot(slot);
                let msg = format!(
                    "the last line has no newline ({len} bytes): the stream was cut, and the fragment is not an event{}",
                    secrets::unheld_note(cfg.redact && bytes.is_none())
                );
                self.report(sink, slot, Rule::LineUnterminated, msg)?;
                return Ok(LineKind::default());
            }
            Line::TooLong { len } => (
                Rule::LineTooLong,
                format!(
                    "line is {len} bytes, over --max-line-bytes {}; skipped{}",
                    cfg.max_line_bytes,
                    secrets::unheld_note(cfg.redact)
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
            Line::Complete { bytes, json, .. } => match json {
                Err(_) if let Some(n) = self.markers.claims(bytes) => {
                    self.elided(sink, n)?;
                    return Ok(LineKind::default());
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
        self.unreadable(sink, Draft::new(rule, message).column(column))?;
        Ok(LineKind::default())
    }

    /// Judge the runs that are complete (their summary or terminal event
    /// read), leaving the others open: what `run` does when it stops a
    /// command that had already said how it ended.
    pub fn finish_complete(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        for slot in self.runs.open_slots(|r| r.summary.is_some()) {
            self.close(sink, slot)?;
        }
        Ok(())
    }

    /// The runs still open, in the order they began: what a cancelled
    /// monitor says was left unjudged, and counts as read.
    pub fn open_runs(&self) -> Vec<OpenRun> {
        self.runs.open_runs()
    }

    /// Multi-run: the first line of the oldest run still open.
    pub fn oldest_open(&mut self) -> Option<u64> {
        self.runs.oldest_open()
    }

    /// `--idle-timeout-ms` passed without a line (spec §4.2): a finding
    /// about the stream, charged to no run.
    pub fn idle(&mut self, sink: &mut dyn Sink, ms: u64) -> io::Result<()> {
        let msg = format!("no line for {ms} ms: the producer is quiet, stuck or gone");
        self.out(sink).unowned(Rule::StreamIdle, None, msg)
    }

    /// `--follow --run-idle-timeout` (docs/contract.md §2.3): `run.stalled` for each
    /// open run whose line count has not moved for `after`, once until it
    /// moves again. `clock` is the caller's, kept from look to look: each
    /// run's line count when it last moved, and since when.
    pub fn stalled(
        &mut self,
        sink: &mut dyn Sink,
        clock: &mut Stalls,
        now: std::time::Instant,
        after: std::time::Duration,
    ) -> io::Result<()> {
        // Each run is looked up in its slot: 30,000 open runs are 30,000
        // looks, not a search of the list for each (docs/contract.md §8.2).
        clock.0.retain(|(slot, first), _| {
            self.runs.get(*slot).is_some_and(|r| r.first_line == *first)
        });
        let open = self.runs.open_slots(|_| true);
        for slot in open {
            let run = self.runs.run(slot);
            if run.lines == 0 {
                continue;
            }
            let seen = clock
                .0
                .entry((slot, run.first_line))
                .or_insert((run.lines, now, false));
            if seen.0 != run.lines {
                *seen = (run.lines, now, false);
            } else if !seen.2 && now.duration_since(seen.1) >= after {
                seen.2 = true;
                let quiet = now.duration_since(seen.1);
                let msg = format!(
                    "no line of this run for {:.1} s (--run-idle-timeout), after {}: its producer \
                     is quiet, stuck or gone",
                    quiet.as_secs_f64(),
                    crate::text::plural(run.lines, "line")
                );
                self.report(sink, slot, Rule::RunStalled, msg)?;
            }
        }
        Ok(())
    }

    /// `run`: the command has ended (`ended`), and each run still open is
    /// held to it by its protocol's rules (spec §4.1, §6: `exit.disagrees`;
    /// OKF's error envelope). Output that never began is one run too, as
    /// at `finish`, for a contract that asks for output.
    pub fn exited(&mut self, sink: &mut dyn Sink, ended: &Exited<'_>) -> io::Result<()> {
        // Its stdout has ended: a document still open was cut.
        self.cut_document(sink)?;
        if self.line == 0 {
            self.runs.current(0);
            self.silent_exit = Some(ended.before_a_line());
        }
        let cfg = self.cfg;
        for slot in self.runs.open_slots(|_| true) {
            let mut out = Reporter::new(cfg, self.line, &mut *sink);
            let run = self.runs.run(slot);
            let protocol = protocols::at_end(run, cfg);
            protocols::contract_of(protocol).exited(run, &mut out, ended)?;
        }
        Ok(())
    }

    /// `filter`: what the program found on the line just judged (an
    /// error, a failed `--assert`).
    /// `line`: the line it is about (the program may run behind the
    /// reading); `run`: its run id, as the finding names it.
    pub fn program_finding(
        &mut self,
        sink: &mut dyn Sink,
        line: u64,
        run: Option<String>,
        rule: Rule,
        message: &str,
    ) -> io::Result<()> {
        // Not charged to the run's state: the line may have ended the run
        // (a summary), and the program's error is not the producer's.
        let message = crate::text::one_line(message);
        self.out(sink).unowned_at(rule, line, run, message)
    }

    /// A line of a pretty-printed JSON document (`document.rs`), which is
    /// judged as one event once it closes, at the line it opened on. The
    /// document's lines are its run's.
    #[inline(never)]
    fn joined(&mut self, sink: &mut dyn Sink, bytes: &[u8], unparsed: bool) -> io::Result<Joined> {
        let joined = self.doc.join(self.cfg, self.line, bytes, unparsed);
        if matches!(joined, Joined::Line) {
            return Ok(joined);
        }
        self.last_run = LastRun::Slot(self.runs.current(self.line));
        if let Joined::Dropped(f, suspect) = joined {
            self.unreadable(sink, f)?;
            self.never_read(sink, suspect)?;
            return Ok(Joined::Held);
        }
        Ok(joined)
    }

    /// The input is one JSON document (a profile of `form = "json"`,
    /// docs/contract.md §6.3), whose final newline is optional and which
    /// may be an array of events.
    fn one_document(&self) -> bool {
        matches!(self.cfg.protocol, Some(Protocol::Profile(p)) if p.get().form == Form::Json)
    }

    /// The input's last bytes, without a newline, in a one-document
    /// input: they close the document being read, or are the document.
    /// `None` when they are neither: held, or reported as cut.
    #[inline(never)]
    fn unterminated_document(
        &mut self,
        sink: &mut dyn Sink,
        bytes: &[u8],
    ) -> io::Result<Option<Closed>> {
        if self.doc.is_open() {
            return match self.joined(sink, bytes, true)? {
                Joined::Closed(doc) => Ok(Some(doc)),
                _ => Ok(None),
            };
        }
        if let Some(doc) = Closed::whole(bytes, self.line) {
            return Ok(Some(doc));
        }
        let slot = self.runs.current(self.line);
        self.last_run = LastRun::Slot(slot);
        self.runs.run(slot).unreadable_line();
        let msg = format!(
            "the last line has no newline ({} bytes) and is not a whole JSON document: the output was cut",
            bytes.len()
        );
        self.emit(sink, slot, Draft::new(Rule::LineUnterminated, msg))?;
        Ok(None)
    }

    /// A pretty-printed array document just closed: its elements judged at
    /// the line it opened on.
    #[cold]
    #[inline(never)]
    fn closed_array(&mut self, sink: &mut dyn Sink, mut doc: Closed) -> io::Result<LineKind> {
        let here = self.line;
        self.line = doc.first_line;
        let kind = self.array_document(sink, &mut doc);
        self.line = here;
        self.closed = Some(doc);
        kind.map(|k| LineKind { held: true, ..k })
    }

    /// A one-document input that is one line, not an object: an array of
    /// events (Claude's `--output-format json --verbose` writes one line),
    /// or no event at all.
    #[cold]
    #[inline(never)]
    fn one_line_array(&mut self, sink: &mut dyn Sink, ev: &Event<'_>) -> io::Result<LineKind> {
        let array = (ev.as_value().kind() == Kind::Array)
            .then(|| Closed::whole(ev.line(), self.line))
            .flatten();
        let Some(mut doc) = array else {
            let msg = "valid JSON but not an object: an event must be a JSON object".to_string();
            self.unreadable(sink, Draft::new(Rule::JsonNotObject, msg))?;
            return Ok(LineKind::default());
        };
        let kind = self.array_document(sink, &mut doc);
        self.closed = Some(doc);
        kind
    }

    /// A one-document input whose document is an array: each element is
    /// an event, judged at the line; their exposed secrets are kept, in
    /// order, placed in the document. A second caller of `event`: see its
    /// note.
    #[cold]
    #[inline(never)]
    fn array_document(&mut self, sink: &mut dyn Sink, doc: &mut Closed) -> io::Result<LineKind> {
        let mut kind = LineKind::default();
        let mut found = vec![];
        let (mut events, mut elements) = (0u64, 0u64);
        // Elements that are no event: the first, and how many (one
        // finding a document, not one an element).
        let mut not_events: Option<(u64, u64)> = None;
        doc.each_element(|(at, _), element| {
            elements += 1;
            match element {
                Some(ev) => {
                    events += 1;
                    kind = self.event(sink, &ev, Validation::Unchecked)?;
                }
                None => not_events.get_or_insert((elements, 0)).1 += 1,
            }
            found.extend(self.exposures.drain(..).map(|e| e.moved_on(at)));
            Ok::<(), io::Error>(())
        })?;
        if let Some((first, n)) = not_events {
            let more = match n {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            let msg = format!(
                "element {first} of the document's array is not an object{more}: every event is one"
            );
            self.unreadable(sink, Draft::new(Rule::JsonNotObject, msg))?;
        }
        // An array of no event is a run that wrote nothing.
        if events == 0 {
            let slot = self.runs.current(self.line);
            self.last_run = LastRun::Slot(slot);
        }
        doc.array = true;
        doc.exposures = found;
        Ok(kind)
    }

    /// End of input: judge every run still open.
    pub fn finish(mut self, sink: &mut dyn Sink) -> io::Result<()> {
        self.cut_document(sink)?;
        if self.line == 0 {
            // Empty input is one run that never began (docs/contract.md §4.1): its
            // summary is missing, in every mode.
            self.runs.current(0);
        }
        for slot in self.runs.open_slots(|_| true) {
            self.close(sink, slot)?;
        }
        Ok(())
    }

    /// The input ended inside a document: it was cut.
    fn cut_document(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        if let Some(cut) = self.doc.cut(self.cfg) {
            self.unreadable(sink, cut.finding)?;
            let slot = self.runs.current(self.line);
            self.runs.run(slot).protocol.get_or_insert(cut.protocol);
            self.never_read(sink, cut.suspect)?;
        }
        Ok(())
    }

    /// A line that could not be parsed holds a secret-looking key.
    fn unparsed_secret(
        &mut self,
        sink: &mut dyn Sink,
        suspect: &secrets::Suspect,
    ) -> io::Result<()> {
        let msg = secrets::unparsed_message(suspect, self.cfg.redact);
        let slot = self.runs.current(self.line);
        self.report(sink, slot, Rule::SecretExposed, msg)
    }

    /// A document that was never read whole: the secret its lines' bytes
    /// showed is said, as no parse will.
    fn never_read(&mut self, sink: &mut dyn Sink, suspect: Option<Suspect>) -> io::Result<()> {
        match suspect {
            Some(suspect) => self.unparsed_secret(sink, &suspect),
            None => Ok(()),
        }
    }

    /// Where the findings about the line being judged go.
    fn out<'a>(&self, sink: &'a mut dyn Sink) -> Reporter<'a>
    where
        'c: 'a,
    {
        Reporter::new(self.cfg, self.line, sink)
    }

    fn report(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        rule: Rule,
        message: String,
    ) -> io::Result<()> {
        self.emit(sink, slot, Draft::new(rule, message))
    }

    fn emit(&mut self, sink: &mut dyn Sink, slot: usize, f: Draft) -> io::Result<()> {
        let mut out = self.out(sink);
        out.emit(self.runs.run(slot), f)
    }

    /// A harness elision marker: the current run's, but not an event (it
    /// takes no seq step and is not a line the producer wrote).
    fn elided(&mut self, sink: &mut dyn Sink, claims: u64) -> io::Result<()> {
        let slot = self.runs.current(self.line);
        self.last_run = LastRun::Slot(slot);
        let msg = format!(
            "elision marker: the harness says {} were cut here",
            crate::text::plural(claims, "line")
        );
        self.emit(sink, slot, Draft::new(Rule::LineElided, msg))
    }

    /// A line whose seq cannot be read: it is the current run's, and it
    /// stands for one step of seq (one finding per cause, docs/contract.md §3.1).
    fn unreadable(&mut self, sink: &mut dyn Sink, f: Draft) -> io::Result<()> {
        let slot = self.runs.current(self.line);
        self.last_run = LastRun::Slot(slot);
        self.runs.run(slot).unreadable_line();
        self.emit(sink, slot, f)
    }

    /// A line that is a JSON object: placed in its run, then judged by the
    /// run's protocol. Every decision is made on decoded values (docs/contract.md
    /// §3.2): `"\u0061oi:meta"` is an `aoi:meta`. Always inlined, and the
    /// calls it makes on every line too: `judge` and an array document's
    /// elements both call it, and left to the compiler, `judge` kept it,
    /// or what it calls, out of line (1-3% more instructions a line).
    #[inline(always)]
    fn event(
        &mut self,
        sink: &mut dyn Sink,
        ev: &Event<'_>,
        checked: Validation<'_>,
    ) -> io::Result<LineKind> {
        // One run takes every line unless --multi-run: nothing to place.
        let target = if self.cfg.multi_run {
            let placed = self.place(ev);
            while let Some(oldest) = self.runs.over_cap() {
                self.close(sink, oldest)?;
            }
            placed
        } else {
            Target::Slot(self.runs.current(self.line))
        };
        let slot = match target {
            Target::Slot(s) => s,
            Target::Finished(id) => {
                // Not a run's line, so no finding: searched only for what
                // `--redact` writes over.
                if self.cfg.redact {
                    secrets::scan(ev, &self.cfg.secret_names, &mut self.exposures);
                }
                let (ty, seen) = protocols::typed(ev, Protocol::Aoi);
                self.late(sink, &id, ty.as_deref())?;
                self.last_run = LastRun::Gone {
                    id: Some(id),
                    first_line: 0,
                    meta: true,
                    slot: None,
                    serial: None,
                };
                return Ok(LineKind { late: true, ..seen });
            }
        };
        // The sink is told only of a move: a line of the run the last
        // line went to finds that run's state where it was just used.
        let moved = !matches!(self.last_run, LastRun::Slot(s) if s == slot);
        self.last_run = LastRun::Slot(slot);
        if moved {
            sink.placed(slot);
        }
        let mut out = Reporter::new(self.cfg, self.line, sink);
        let run = self.runs.run(slot);
        common::secrets_found(run, &mut out, ev, &mut self.exposures)?;
        common::schema_checked(run, &mut out, ev, checked)?;
        let protocol = protocols::decide(run, &mut out, ev)?;
        if matches!(protocol, Protocol::Afdata) || out.cfg.afdata_names {
            common::suffixes_typed(run, &mut out, ev)?;
        }
        let step = protocols::contract_of(protocol).event(run, &mut out, ev)?;
        if step.meta {
            self.runs.make_current(slot);
        }
        if step.ends && self.cfg.multi_run {
            self.close(sink, slot)?;
        }
        Ok(step.seen)
    }

    /// Which run of a log a line belongs to. Only AOI 1.x names runs; the
    /// other protocols' runs are known by where they start.
    #[inline(always)]
    fn place(&mut self, ev: &Event<'_>) -> Target {
        if let Some(Protocol::Profile(p)) = self.cfg.protocol {
            return self.place_by_profile(p.get(), ev);
        }
        let pinned_other = self.cfg.protocol.is_some_and(|p| p != Protocol::Aoi);
        let run_v = match ev.aoi() {
            Aoi::Object { run, .. } if !pinned_other => run,
            _ => None,
        };
        // Under auto, a line without AOI's run id goes where the run it
        // would join says: a detected producer's run is followed by its
        // next one where its profile's opener says (its run ids are read
        // only under --profile, which names them from the first line).
        if run_v.is_none()
            && self.cfg.protocol.is_none()
            && let Some(Protocol::Profile(p)) = self.runs.current_run().and_then(|r| r.protocol)
        {
            let opens = p.get().opens_next(self.runs.current_run(), ev);
            return self.runs.target(None, opens, self.line);
        }
        // Whether the line opens a run matters only to a line without a
        // string id (`Runs::target`): most lines have one, and their type
        // is not decoded here for nothing.
        let opens = run_v.and_then(|v| v.raw_str()).is_none()
            && match self.cfg.protocol {
                Some(Protocol::Ndjson) => self.cfg.typed().opens_next(self.runs.current_run(), ev),
                _ => ev.ty_bytes().as_deref() == Some(b"aoi:meta"),
            };
        self.runs.target(run_v, opens, self.line)
    }

    /// A line of a producer's log (docs/contract.md §6.3): placed by the
    /// run id the profile names, else by its openers. Out of line, so the
    /// AOI path of `place` stays small enough to be inlined.
    #[inline(never)]
    fn place_by_profile(&mut self, p: &Profile, ev: &Event<'_>) -> Target {
        let run_v = p.names_the_run(ev);
        let opens = p.opens_next(self.runs.current_run(), ev);
        self.runs.target(run_v, opens, self.line)
    }

    /// A line for a run already judged (multi-run): reported once per run.
    fn late(&mut self, sink: &mut dyn Sink, id: &[u8], ty: Option<&[u8]>) -> io::Result<()> {
        if !self.runs.first_late(id) {
            return Ok(());
        }
        let summary = ty == Some(b"aoi:summary");
        let (rule, what) = if summary {
            (Rule::SummaryDuplicate, "second aoi:summary")
        } else {
            (Rule::SummaryNotLast, "event")
        };
        let name = String::from_utf8_lossy(id).into_owned();
        let msg = format!("{what} after the run's aoi:summary, which was already judged");
        self.out(sink).unowned(rule, Some(name), msg)
    }

    /// Judge a run by its protocol's end rules, release its state and hand
    /// its verdict to the sink.
    fn close(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        let (cfg, run) = (self.cfg, self.runs.run(slot));
        run.log_line = self.line;
        let line = run.ended_at(self.line);
        let silent_exit = self.silent_exit.as_deref();
        let mut out = Reporter {
            cfg,
            line,
            sink,
            silent_exit,
        };
        // What the protocol would say of an input that is not text (no
        // summary, no meta) `stream.not-text` said.
        run.unsupported |= self.text == Some(false);
        let protocol = protocols::at_end(run, cfg);
        let contract = protocols::contract_of(protocol);
        contract.close(run, &mut out)?;
        let run: RunState = self.runs.remove(slot);
        if matches!(self.last_run, LastRun::Slot(s) if s == slot) {
            self.last_run = LastRun::Gone {
                id: run.id.clone(),
                first_line: run.first_line,
                meta: run.meta.is_some() || protocol.runs_by_position(),
                slot: Some(slot),
                serial: Some(run.serial),
            };
        }
        let end = contract.end(&run, cfg);
        out.sink.run(judge(cfg, run, protocol, end, slot))
    }
}
