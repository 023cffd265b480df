//! The engine every stream command shares: open each input, read it
//! through the scanner as a live pipe (flush before waiting, notice
//! silences and signals), judge every line, report, and end with the
//! verdict's exit status (DESIGN §4). A command says what it does beyond
//! judging through `Consumer`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::check::{ByDigest, Checker, Finding, LineKind, RunKey, RunRef, RunVerdict, Sink, Tally};
use crate::config::{Input, ReportTo, StreamOptions};
use crate::exit::{Error, Exit, Result};
use crate::input::line_check::LineCheck;
use crate::input::pipeline::{End, Feed};
use crate::input::scan::{BATCH_BYTES, Batch, Cutter, Line};
use crate::input::source::{self, RelayError, Source};
use crate::json::Parser;
use crate::output::Emitter;
use crate::output::progress::Progress;
use crate::output::style::Format;
use crate::signal::Signals;

/// A stream command's report: what it writes (`out`) and the tally its
/// exit status is made from. Every finding and verdict goes through here,
/// so the two cannot disagree.
pub struct Report {
    pub tally: Tally,
    pub out: Emitter<BufWriter<Box<dyn Write>>>,
}

impl Report {
    /// A run's verdict, and the file that holds its lines (split-by-run).
    pub fn run_at(&mut self, r: &RunVerdict, path: Option<&str>) -> io::Result<()> {
        self.tally.run(r);
        self.out.run_at(r, path)
    }

    /// End the report with `exit`.
    pub fn end(&mut self, exit: Exit) -> io::Result<()> {
        self.out.end(exit, &self.tally)
    }
}

impl Sink for Report {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.tally.finding(f);
        self.out.finding(f)
    }

    fn run(&mut self, r: &RunVerdict) -> io::Result<()> {
        self.run_at(r, None)
    }
}

/// What a command does with the lines beyond judging them.
pub trait Consumer {
    /// Judge one line (through `check`, with `report` or a sink of the
    /// command's own) and act on it.
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        Ok(check.judge(line, report)?.kind)
    }

    /// The `k`th input (from 0), opened; `None` when there are no more.
    /// The command line's files, unless the command makes its own (run).
    fn next_input(&mut self, k: usize, inputs: &[Input], _signals: &Signals) -> Option<OpenInput> {
        inputs.get(k).map(|i| OpenInput {
            label: i.label(),
            file: i.open(),
            unopened: Exit::NoInput,
            wake: None,
            relay: None,
        })
    }

    /// Reading an input stopped (its end, or a signal), before its open
    /// runs are judged. `Some(why)`: they are not judged, because reading
    /// was stopped by us, not cut by the producer ("cancelled").
    fn input_read(
        &mut self,
        _check: &mut Checker,
        _report: &mut Report,
        cancelled: bool,
    ) -> Result<Option<&'static str>> {
        Ok(cancelled.then_some("cancelled"))
    }

    /// End of one input: judge its open runs.
    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        Ok(check.finish(report)?)
    }

    /// Every input has been read: write what covers them all.
    fn end_all(&mut self, _report: &mut Report) -> Result<()> {
        Ok(())
    }

    /// The input would make us wait: push out what is buffered.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    /// A second SIGINT/SIGTERM ends aoitap at once (run: it kills CMD's
    /// group first, so it waits for it).
    fn second_signal_exits(&self) -> bool {
        true
    }

    /// SIGHUP is caught, as SIGTERM is (run: CMD's group must be stopped
    /// first, DESIGN §13); else it keeps its default action.
    fn catches_hangup(&self) -> bool {
        false
    }

    /// The exit status, given the verdict of what was read.
    fn exit(&self, verdict: Exit) -> Exit {
        verdict
    }
}

/// An input as a consumer hands it to the loop.
pub struct OpenInput {
    /// How findings name it.
    pub label: String,
    pub file: io::Result<File>,
    /// The exit status when it could not be opened.
    pub unopened: Exit,
    /// Stops the reading when readable (run: a daemon holding CMD's
    /// stdout after CMD has exited).
    pub wake: Option<OwnedFd>,
    /// Where this input is relayed, in place of the command's one relay
    /// output (run: a retry's `--save FILE`, begun anew).
    pub relay: Option<File>,
}

/// Run a stream command over every input; returns the exit status.
pub fn run(
    opts: &StreamOptions,
    command: &'static str,
    to: ReportTo,
    consumer: &mut dyn Consumer,
) -> Result<Exit> {
    let signals = Signals::install(consumer.second_signal_exits(), consumer.catches_hangup())?;
    let out: Box<dyn Write> = match &opts.report {
        Some(path) => match File::create(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                return Err(Error::CantCreate(format!(
                    "cannot create the report {}: {e}",
                    path.display()
                )));
            }
        },
        None if to == ReportTo::Stderr => Box::new(io::stderr()),
        None => Box::new(io::stdout()),
    };
    // With --redact the relay is written line by line by the command
    // (`output::relay`, for verify and run), once each line is judged.
    let relay = if opts.relay && !opts.redact {
        match &opts.save {
            Some(path) => match File::create(path) {
                Ok(f) => Some(f),
                Err(e) => {
                    return Err(Error::CantCreate(format!(
                        "cannot create {}: {e}",
                        path.display()
                    )));
                }
            },
            None => Some(source::stdout_file()?),
        }
    } else {
        None
    };
    let mut report = Report {
        tally: Tally::default(),
        out: Emitter::new(
            BufWriter::with_capacity(64 * 1024, out),
            opts.style,
            command,
        ),
    };
    report.out.begin()?;
    let total = opts
        .inputs
        .iter()
        .map(|i| i.file_size())
        .sum::<Option<u64>>();
    let mut progress = Progress::new(&opts.style, total);
    let mut trouble: Option<Exit> = None;
    let mut whole = Whole::default();
    let mut k = 0;
    while let Some(next) = consumer.next_input(k, &opts.inputs, &signals) {
        k += 1;
        report.out.file = next.label;
        let file = match next.file {
            Ok(f) => f,
            Err(e) => {
                let (category, code) = match (next.unopened, e.kind()) {
                    (Exit::CantCreate, _) => ("io", "OUTPUT_FAILED"),
                    (_, io::ErrorKind::NotFound) => ("not_found", "INPUT_NOT_FOUND"),
                    _ => ("io", "INPUT_UNREADABLE"),
                };
                report
                    .out
                    .local_error(category, code, &format!("{}: {e}", report.out.file))?;
                trouble = trouble.max(Some(next.unopened));
                continue;
            }
        };
        let relay = match next.relay {
            Some(own) => Some(own),
            None => relay.as_ref().map(File::try_clone).transpose()?,
        };
        let idle = opts.idle_timeout_ms.map(Duration::from_millis);
        let mut check = Checker::new(&opts.check);
        if relay.is_none() && next.wake.is_none() && idle.is_none() && small_file(&file) {
            // Read on this thread (DESIGN §14): for a file this small the
            // pipeline's two threads and socket cost more than the file.
            let cutter = match &mut whole.cutter {
                Some(c) => {
                    c.restart(file);
                    c
                }
                None => whole.cutter.insert(Cutter::new(file, opts.max_line_bytes)),
            };
            loop {
                match cutter.next_batch_in(&mut whole.batch) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => {
                        let msg = format!("{}: read failed: {e}", report.out.file);
                        report.out.local_error("io", "READ_FAILED", &msg)?;
                        trouble = trouble.max(Some(Exit::Io));
                        break;
                    }
                }
                let schema = opts.check.schema.as_deref().map(|s| s as &dyn LineCheck);
                whole.batch.parse(&mut whole.parser, schema);
                let judged = judge_lines(
                    &whole.batch,
                    consumer,
                    &mut check,
                    &mut report,
                    &mut progress,
                    opts,
                );
                if let Err(halt) = judged {
                    return Err(halt.end(report));
                }
                if signals.caught().is_some() {
                    break;
                }
            }
        } else {
            let (stopped, stop) = UnixStream::pair()?;
            let mut wake = vec![signals.wake_fd()?, OwnedFd::from(stopped)];
            wake.extend(next.wake);
            let mut feed = Feed::start(
                Source::new(file, relay, wake, idle),
                opts.max_line_bytes,
                opts.check
                    .schema
                    .clone()
                    .map(|s| s as std::sync::Arc<dyn LineCheck>),
                stop,
            );
            while let Some(piece) = feed.next_piece() {
                let judged = judge_lines(
                    &piece.batch,
                    consumer,
                    &mut check,
                    &mut report,
                    &mut progress,
                    opts,
                );
                if let Err(halt) = judged {
                    return Err(halt.end(report));
                }
                let stop = match &piece.end {
                    End::More => false,
                    End::WouldBlock => {
                        consumer.flush()?;
                        clear(&mut progress);
                        report.out.flush()?;
                        false
                    }
                    End::Idle => {
                        check.idle(&mut report, opts.idle_timeout_ms.unwrap_or(0))?;
                        consumer.flush()?;
                        clear(&mut progress);
                        report.out.flush()?;
                        false
                    }
                    End::Signal | End::Eof => true,
                    End::Failed(e) if e.get_ref().is_some_and(|i| i.is::<RelayError>()) => {
                        // Our own output failed: said, and the report ended,
                        // so it still reads as a whole run (a closed
                        // downstream stays quiet: 141).
                        return Err(fail(report, io::Error::new(e.kind(), e.to_string()).into()));
                    }
                    End::Failed(e) => {
                        let msg = format!("{}: read failed: {e}", report.out.file);
                        report.out.local_error("io", "READ_FAILED", &msg)?;
                        trouble = trouble.max(Some(Exit::Io));
                        true
                    }
                };
                feed.done(piece.batch);
                if stop || signals.caught().is_some() {
                    break;
                }
            }
        }
        let cancelled = signals.caught().is_some();
        let unjudged = match consumer.input_read(&mut check, &mut report, cancelled) {
            Ok(why) => why,
            Err(e) => return Err(fail(report, e)),
        };
        if let Some(why) = unjudged {
            // What was judged is reported; the runs are not: they were
            // stopped by us, not cut by the producer. A person watching
            // is told which were still open.
            clear(&mut progress);
            for run in check.open_runs() {
                // Read, though not judged: counted in the summary, and
                // its upstream named (DESIGN §13).
                report.tally.input_domain += run.domain;
                if let Some(id) = &run.identity {
                    report.tally.upstream(id);
                }
                let who = match run.name {
                    Some(n) => format!("run {}", crate::text::clean(&n)),
                    None => format!("run from line {}", run.first_line),
                };
                report.out.text(&format!(
                    "{}: {why}: {who} still open after {}, not judged\n",
                    crate::text::clean(&report.out.file),
                    crate::text::plural(run.lines, "line")
                ))?;
            }
            if cancelled {
                break;
            }
            continue;
        }
        if let Err(e) = consumer.end_input(check, &mut report) {
            return Err(fail(report, e));
        }
    }
    clear(&mut progress);
    if let Err(e) = consumer
        .end_all(&mut report)
        .and_then(|()| consumer.flush())
    {
        return Err(fail(report, e));
    }
    let exit = signals
        .caught()
        .or(trouble)
        .unwrap_or_else(|| consumer.exit(report.tally.exit()));
    report.end(exit)?;
    Ok(exit)
}

/// Files at most this long are read whole on the judging thread.
const SMALL_FILE: u64 = 4 * BATCH_BYTES as u64;

/// A regular file small enough to read on the judging thread.
fn small_file(file: &File) -> bool {
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.len() <= SMALL_FILE)
}

/// What reading small files on the judging thread keeps from one file to
/// the next: the cutter's buffer, a batch and a parser, so a thousand
/// files cost no more allocations than one.
#[derive(Default)]
struct Whole {
    cutter: Option<Cutter<File>>,
    batch: Batch,
    parser: Parser,
}

/// Why judging a batch stopped: a command's own failure, which ends the
/// report it began (`fail`), or a failed flush of the report itself.
enum Halt {
    Judging(Error),
    Writing(Error),
}

impl Halt {
    /// The error the command ends with.
    fn end(self, report: Report) -> Error {
        match self {
            Halt::Judging(e) => fail(report, e),
            Halt::Writing(e) => e,
        }
    }
}

/// Judge every line of `batch`, and count its bytes as read.
fn judge_lines(
    batch: &Batch,
    consumer: &mut dyn Consumer,
    check: &mut Checker,
    report: &mut Report,
    progress: &mut Option<Progress>,
    opts: &StreamOptions,
) -> std::result::Result<(), Halt> {
    let mut judged = 0;
    for line in batch.lines() {
        consumer.line(check, &line, report).map_err(Halt::Judging)?;
        judged += line.input_bytes();
        if opts.line_buffered {
            clear(progress);
            report.out.flush().map_err(|e| Halt::Writing(e.into()))?;
        }
    }
    if let Some(p) = progress {
        p.add(judged);
    }
    Ok(())
}

fn clear(progress: &mut Option<Progress>) {
    if let Some(p) = progress {
        p.clear();
    }
}

/// A command's own read or write failed after its report began: the
/// report says so where it can (an `aoi:error` in jsonl, a TAP point) and
/// ends, so it still reads as a whole; the error goes to main, which says
/// it on stderr when the report does not (a human report has no Result
/// line then: its one line is main's, DESIGN §8). A closed downstream
/// ends quietly instead (spec §7).
fn fail(mut report: Report, e: Error) -> Error {
    let exit = e.exit();
    if exit == Exit::BrokenPipe {
        return e;
    }
    let message = e.to_string();
    let in_report = report.out.carries_errors();
    if in_report {
        let category = if exit == Exit::CantCreate {
            "conflict"
        } else {
            "io"
        };
        if let Err(e) = report.out.local_error(category, "OUTPUT_FAILED", &message) {
            return e.into();
        }
    }
    if report.out.format() != Format::Human
        && let Err(e) = report.end(exit)
    {
        return e.into();
    }
    Error::Ended {
        exit,
        message: crate::text::one_line(&message),
        in_report,
    }
}

/// A sink for commands that report runs their own way: verdicts raised
/// while a line is judged are held (so the line can be counted first), and
/// findings only counted into `tally`'s report, when there is one.
pub struct Holder<'a> {
    pub tally: Option<&'a mut Report>,
    pub runs: Vec<RunVerdict>,
}

impl Holder<'_> {
    /// Findings counted into `report`'s tally, verdicts held.
    pub fn counting(report: &mut Report) -> Holder<'_> {
        Holder {
            tally: Some(report),
            runs: vec![],
        }
    }
}

impl Sink for Holder<'_> {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        if let Some(r) = self.tally.as_mut() {
            r.tally.finding(f);
        }
        Ok(())
    }

    fn run(&mut self, r: &RunVerdict) -> io::Result<()> {
        self.runs.push(r.clone());
        Ok(())
    }
}

/// Values kept per run, each in a slot that stays put while its run has
/// it: found by the run's digest, then its key (two runs' digests may be
/// equal: a run whose digest another has already is kept in `collided`).
/// Finding one costs a digest and a lookup, never a move or an
/// allocation: a thousand interleaved runs switch on every line (DESIGN
/// §14).
pub struct RunSlots<T> {
    slots: Vec<Option<(RunKey, T)>>,
    free: Vec<usize>,
    by_digest: ByDigest<usize>,
    collided: Vec<usize>,
}

impl<T> Default for RunSlots<T> {
    fn default() -> Self {
        RunSlots {
            slots: vec![],
            free: vec![],
            by_digest: ByDigest::default(),
            collided: vec![],
        }
    }
}

impl<T> RunSlots<T> {
    /// How many runs have a value.
    pub fn len(&self) -> usize {
        self.by_digest.len() + self.collided.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot of `run`, if it has a value.
    pub fn find(&self, run: RunRef<'_>) -> Option<usize> {
        if let Some(&s) = self.by_digest.get(&crate::check::digest(&run))
            && self.is(s, run)
        {
            return Some(s);
        }
        self.collided.iter().copied().find(|&s| self.is(s, run))
    }

    /// Does `slot` hold `run`'s value?
    pub fn is(&self, slot: usize, run: RunRef<'_>) -> bool {
        self.slots[slot]
            .as_ref()
            .is_some_and(|(k, _)| k.as_ref() == run)
    }

    /// Keep `value` for `key`, which has none; its slot.
    pub fn insert(&mut self, key: RunKey, value: T) -> usize {
        let d = crate::check::digest(&key.as_ref());
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s] = Some((key, value));
                s
            }
            None => {
                self.slots.push(Some((key, value)));
                self.slots.len() - 1
            }
        };
        match self.by_digest.entry(d) {
            std::collections::hash_map::Entry::Occupied(_) => self.collided.push(slot),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(slot);
            }
        }
        slot
    }

    /// Take the value out of `slot`, which holds one.
    pub fn remove(&mut self, slot: usize) -> (RunKey, T) {
        let (key, value) = self.slots[slot].take().expect("a held slot");
        let d = crate::check::digest(&key.as_ref());
        if self.by_digest.get(&d) == Some(&slot) {
            self.by_digest.remove(&d);
        } else {
            self.collided.retain(|&s| s != slot);
        }
        self.free.push(slot);
        (key, value)
    }

    /// The value in `slot`, if it holds one.
    pub fn held(&self, slot: usize) -> Option<&T> {
        self.slots.get(slot)?.as_ref().map(|(_, v)| v)
    }

    /// The value in `slot`, which holds one.
    pub fn value(&mut self, slot: usize) -> &mut T {
        &mut self.slots[slot].as_mut().expect("a held slot").1
    }

    /// Every run's key and value, in the order the slots hold them.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&RunKey, &mut T)> {
        self.slots.iter_mut().flatten().map(|(k, v)| (&*k, v))
    }

    /// Take every value out.
    pub fn drain(&mut self) -> impl Iterator<Item = (RunKey, T)> + '_ {
        self.by_digest.clear();
        self.collided.clear();
        self.free.clear();
        self.slots.drain(..).flatten()
    }
}

/// State a command keeps per run, the run of the line before held apart:
/// most lines belong to the same run as the one before, so they cost one
/// comparison of ids.
pub struct PerRun<T> {
    runs: RunSlots<T>,
    current: Option<usize>,
}

impl<T> Default for PerRun<T> {
    fn default() -> Self {
        PerRun {
            runs: RunSlots::default(),
            current: None,
        }
    }
}

impl<T> PerRun<T> {
    /// The state of `run`, made by `new` if the run is new.
    pub fn get(&mut self, run: RunRef<'_>, new: impl FnOnce() -> T) -> &mut T {
        let slot = match self.current.filter(|&s| self.runs.is(s, run)) {
            Some(s) => s,
            None => {
                let s = match self.runs.find(run) {
                    Some(s) => s,
                    None => self.runs.insert(run.to_key(), new()),
                };
                self.current = Some(s);
                s
            }
        };
        self.runs.value(slot)
    }

    /// The state of the run last asked for, or else of `run`.
    pub fn last_or(&mut self, run: RunRef<'_>, new: impl FnOnce() -> T) -> &mut T {
        match self.current {
            Some(s) => self.runs.value(s),
            None => self.get(run, new),
        }
    }

    /// The state of the run `key`, if it has one; it is forgotten.
    pub fn remove(&mut self, key: &RunKey) -> Option<T> {
        let slot = self.runs.find(key.as_ref())?;
        if self.current == Some(slot) {
            self.current = None;
        }
        Some(self.runs.remove(slot).1)
    }

    /// Every run that has state, in the order the slots hold them.
    pub fn keys(&mut self) -> Vec<RunKey> {
        self.runs.iter_mut().map(|(k, _)| k.clone()).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::check::Run;

    /// Two run ids whose keys share a digest (`check::digest` is SipHash
    /// with fixed keys, so one can be searched for): each must keep a slot
    /// of its own (and split-by-run a file, tests/split.rs).
    pub(crate) const COLLIDING: [&str; 2] = ["599a97ae466e01b0", "1de7602d4770b9c1"];

    #[test]
    fn runs_whose_digests_collide_keep_slots_of_their_own() {
        let d = |id: &str| crate::check::digest(&Run::Id(id.as_bytes()));
        let [a, b] = COLLIDING;
        assert_eq!(d(a), d(b), "the ids collide");
        let mut slots: RunSlots<&str> = RunSlots::default();
        let sa = slots.insert(Run::Id(a.as_bytes().into()), "a");
        let sb = slots.insert(Run::Id(b.as_bytes().into()), "b");
        assert_eq!(slots.find(Run::Id(a.as_bytes())), Some(sa));
        assert_eq!(slots.find(Run::Id(b.as_bytes())), Some(sb));
        assert_eq!(slots.len(), 2);
        // The one the digest names goes; the other is still found.
        assert_eq!(slots.remove(sa).1, "a");
        assert_eq!(slots.find(Run::Id(a.as_bytes())), None);
        assert_eq!(slots.find(Run::Id(b.as_bytes())), Some(sb));
        assert_eq!(slots.remove(sb).1, "b");
        assert!(slots.is_empty());
    }

    #[test]
    fn per_run_state_is_kept_by_run_and_forgotten_on_remove() {
        let mut per: PerRun<u32> = PerRun::default();
        for (i, id) in [b"a", b"b", b"a", b"c", b"b"].iter().enumerate() {
            *per.get(Run::Id(&id[..]), || 0) += i as u32 + 1;
        }
        assert_eq!(*per.get(Run::Id(b"a"), || 99), 1 + 3);
        assert_eq!(*per.get(Run::Id(b"b"), || 99), 2 + 5);
        assert_eq!(
            *per.last_or(Run::Nowhere, || 99),
            7,
            "the run last asked for"
        );
        assert_eq!(per.remove(&Run::Id(b"a"[..].into())), Some(4));
        assert_eq!(per.remove(&Run::Id(b"a"[..].into())), None);
        // A forgotten run starts anew; its slot is reused.
        assert_eq!(*per.get(Run::Id(b"a"), || 10), 10);
        assert_eq!(per.keys().len(), 3);
        assert_eq!(*per.get(Run::FromLine(7), || 5), 5);
        assert_eq!(*per.get(Run::Nowhere, || 6), 6);
        assert_eq!(per.keys().len(), 5);
    }
}
