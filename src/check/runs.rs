//! Which run a line belongs to (docs/contract.md §2.1), and the table of open runs.
//!
//! Without `--multi-run` the whole input is one run (spec §13.1
//! cardinality), though `seq` is still tracked per run id. With it, runs
//! are told apart by `aoi.run`; lines without one belong to the run opened
//! by the latest `aoi:meta` (or `--first` line). A run leaves the table
//! when it is judged; its id is remembered a while, so a later line of it
//! is late rather than a new run. The table is bounded: past
//! `MAX_OPEN_RUNS` the run opened longest ago is handed back to be judged
//! as it stands (docs/contract.md §3.2: state bounded).

use std::collections::{HashMap, VecDeque};

use super::id::{id_key, run_name};
use super::run_state::{Identity, RunState};
use super::verdict::RunVerdict;
use crate::json::Value;

/// Finished run ids remembered (so late lines are `summary.not-last`, not a
/// new run); older ones are forgotten to keep memory flat over long logs.
const FINISHED_REMEMBERED: usize = 4096;

/// Runs open at once, at most (multi-run). Each costs a few hundred bytes
/// here and as much again in a command's own state, so a log of ever-new
/// run ids without summaries would grow without end; past the cap the
/// run opened longest ago is judged as it stands (its summary missing),
/// and a later line of it is a late line (docs/contract.md §3.2: state bounded).
pub(super) const MAX_OPEN_RUNS: usize = 32_768;

/// A run not yet judged when reading stopped.
pub struct OpenRun {
    pub name: Option<String>,
    pub first_line: u64,
    pub lines: u64,
    pub domain: u64,
    /// What its `aoi:meta` said, if it was read: a cancelled report still
    /// names its upstream (docs/contract.md §3.3).
    pub identity: Option<Identity>,
    /// How long it was open, when runs are timed (`Config::timed`).
    pub took: Option<std::time::Duration>,
}

/// Where a line goes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Target {
    Slot(usize),
    /// A run already judged (multi-run): the line is late.
    Finished(Box<[u8]>),
}

/// The open runs, each in a slot that is reused once the run is judged.
pub(super) struct Runs {
    multi_run: bool,
    /// Whether a run notes when it opened (`Config::timed`).
    timed: bool,
    /// Open runs at most (`MAX_OPEN_RUNS`; smaller in tests).
    cap: usize,
    slots: Vec<Option<RunState>>,
    free: Vec<usize>,
    index: HashMap<Box<[u8]>, usize>,
    /// The slot the last line with an id went to: the next line is most
    /// likely the same run's.
    last: Option<usize>,
    /// The run id-less lines go to: the one run, or (multi-run) the run
    /// opened by the latest `aoi:meta`.
    current: Option<usize>,
    /// Judged ids, and whether a late line of each was reported.
    finished: HashMap<Box<[u8]>, bool>,
    finished_order: VecDeque<Box<[u8]>>,
    /// Multi-run: (slot, first line) of runs in the order they opened; an
    /// entry whose slot has since been freed or reused is stale.
    opened: VecDeque<(usize, u64)>,
}

impl Runs {
    pub(super) fn new(multi_run: bool) -> Runs {
        Runs::with_cap(multi_run, MAX_OPEN_RUNS)
    }

    /// Runs opened from now on note when (`Config::timed`).
    pub(super) fn timed(&mut self, on: bool) {
        self.timed = on;
    }

    fn with_cap(multi_run: bool, cap: usize) -> Runs {
        Runs {
            multi_run,
            timed: false,
            cap,
            slots: vec![],
            free: vec![],
            index: HashMap::new(),
            last: None,
            current: None,
            finished: HashMap::new(),
            finished_order: VecDeque::new(),
            opened: VecDeque::new(),
        }
    }

    pub(super) fn get(&self, slot: usize) -> Option<&RunState> {
        self.slots.get(slot).and_then(Option::as_ref)
    }

    /// The open run in `slot`.
    pub(super) fn run(&mut self, slot: usize) -> &mut RunState {
        self.slots[slot].as_mut().expect("open run")
    }

    /// Every open run, in no order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &RunState> {
        self.slots.iter().flatten()
    }

    /// The runs still open, in the order they began: what a cancelled
    /// monitor says was left unjudged, and counts as read.
    pub(super) fn open_runs(&self) -> Vec<OpenRun> {
        let mut open: Vec<_> = self
            .iter()
            .filter(|r| r.lines > 0)
            .map(|r| OpenRun {
                name: r.name.clone(),
                first_line: r.first_line,
                lines: r.lines,
                domain: r.domain,
                identity: r.meta.clone(),
                took: r.since.map(|s| s.elapsed()),
            })
            .collect();
        open.sort_by_key(|r| r.first_line);
        open
    }

    /// Multi-run: the first line of the oldest run still open (entries
    /// of runs already judged are let go on the way).
    pub(super) fn oldest_open(&mut self) -> Option<u64> {
        while let Some(&(slot, first)) = self.opened.front() {
            if self.slots[slot]
                .as_ref()
                .is_some_and(|r| r.first_line == first)
            {
                return Some(first);
            }
            self.opened.pop_front();
        }
        None
    }

    /// The slots of the open runs that `keep` picks, in the order the runs
    /// began.
    pub(super) fn open_slots(&self, keep: impl Fn(&RunState) -> bool) -> Vec<usize> {
        let mut open: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].as_ref().is_some_and(&keep))
            .collect();
        open.sort_by_key(|&i| self.slots[i].as_ref().map_or(0, |r| r.first_line));
        open
    }

    /// Open a run at `line` (lines count from 1; a run opened before any
    /// line starts at line 1).
    fn open(&mut self, id: Option<Box<[u8]>>, name: Option<String>, line: u64) -> usize {
        let mut run = RunState::new(id.clone(), name, line.max(1));
        if self.timed {
            run.since = Some(std::time::Instant::now());
        }
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
        if self.multi_run {
            self.opened.push_back((slot, line.max(1)));
        }
        slot
    }

    /// The run id-less lines go to, opened at `line` if there is none:
    /// the run the line at `line` is placed in.
    pub(super) fn current(&mut self, line: u64) -> usize {
        let s = match self.current {
            Some(s) => s,
            None => {
                let s = self.open(None, None, line);
                self.current = Some(s);
                s
            }
        };
        if self.multi_run
            && let Some(run) = &mut self.slots[s]
        {
            run.last_line = line;
        }
        s
    }

    /// The run id-less lines go to now, if there is one.
    pub(super) fn current_run(&self) -> Option<&RunState> {
        self.slots.get(self.current?)?.as_ref()
    }

    /// From now on id-less lines go to `slot` (multi-run: its `aoi:meta`
    /// was read).
    pub(super) fn make_current(&mut self, slot: usize) {
        if self.multi_run {
            self.current = Some(slot);
        }
    }

    /// Which run a line at `line` belongs to (docs/contract.md §2.1): by its decoded
    /// `id`, else the current run; an id-less line that `opens` one (an
    /// `aoi:meta`, a `--first` line) opens a new run. `opens` is read only
    /// when `id` is not a string, and may be false for a line with one.
    #[inline(always)]
    pub(super) fn target(&mut self, id: Option<Value<'_>>, opens: bool, line: u64) -> Target {
        if !self.multi_run {
            return Target::Slot(self.current(line));
        }
        let target = self.find(id, opens, line);
        if let Target::Slot(s) = target
            && let Some(run) = &mut self.slots[s]
        {
            run.last_line = line;
        }
        target
    }

    /// Multi-run: the slot of the run a line at `line` goes to, opened if
    /// it is new, or the judged run it came too late for.
    #[inline(always)]
    fn find(&mut self, id: Option<Value<'_>>, opens: bool, line: u64) -> Target {
        let Some(raw) = id.and_then(|v| v.decoded()) else {
            if opens {
                let s = self.open(None, None, line);
                self.current = Some(s);
                return Target::Slot(s);
            }
            return Target::Slot(self.current(line));
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
        let s = self.open(Some(raw.into()), name, line);
        self.last = Some(s);
        Target::Slot(s)
    }

    /// Multi-run: the run to judge now because more than the cap are open,
    /// marked evicted. Asked once a line is placed: only a line that
    /// opened a run can pass the cap, and that run is the newest, so the
    /// one handed back (the run opened longest ago, as at the end of
    /// input) is never the line's own.
    #[inline(always)]
    pub(super) fn over_cap(&mut self) -> Option<usize> {
        while self.slots.len() - self.free.len() > self.cap {
            let (slot, first) = self.opened.pop_front()?;
            if let Some(r) = self.slots[slot].as_mut()
                && r.first_line == first
            {
                r.evicted = true;
                return Some(slot);
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
        None
    }

    /// A late line for the judged run `id`: true the first time, when it
    /// is reported.
    pub(super) fn first_late(&mut self, id: &[u8]) -> bool {
        let reported = self.finished.get_mut(id).expect("finished id");
        !std::mem::replace(reported, true)
    }

    /// Take the run out of `slot` to be judged; its id is remembered
    /// (multi-run) so that later lines of it are late.
    pub(super) fn remove(&mut self, slot: usize) -> RunState {
        let run = self.slots[slot].take().expect("open run");
        self.free.push(slot);
        if self.current == Some(slot) {
            self.current = None;
        }
        if self.last == Some(slot) {
            self.last = None;
        }
        if let Some(id) = &run.id {
            self.index.remove(id);
            if self.multi_run {
                self.finished.insert(id.clone(), false);
                self.finished_order.push_back(id.clone());
                if self.finished_order.len() > FINISHED_REMEMBERED
                    && let Some(old) = self.finished_order.pop_front()
                {
                    self.finished.remove(&old);
                }
            }
        }
        run
    }
}

/// A run as the commands tell runs apart: by its `aoi.run` id (decoded
/// bytes), by the line of the `aoi:meta` that opened an id-less run, or
/// nowhere (lines no id or meta claims). The id is borrowed while a line is
/// judged (`RunRef`) and owned where a command keeps per-run state
/// (`RunKey`): one shape, so the two cannot drift apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Run<Id> {
    Id(Id),
    FromLine(u64),
    Nowhere,
}

/// The run of the line being judged.
pub type RunRef<'a> = Run<&'a [u8]>;

/// A run as a key of per-run state.
pub type RunKey = Run<Box<[u8]>>;

impl<'a> RunRef<'a> {
    pub(crate) fn of(id: Option<&'a [u8]>, first_line: u64, meta: bool) -> RunRef<'a> {
        match id {
            Some(id) => Run::Id(id),
            None if meta => Run::FromLine(first_line),
            None => Run::Nowhere,
        }
    }

    pub fn to_key(self) -> RunKey {
        match self {
            Run::Id(id) => Run::Id(id.into()),
            Run::FromLine(n) => Run::FromLine(n),
            Run::Nowhere => Run::Nowhere,
        }
    }
}

impl RunKey {
    pub fn as_ref(&self) -> RunRef<'_> {
        match self {
            Run::Id(id) => Run::Id(id),
            Run::FromLine(n) => Run::FromLine(*n),
            Run::Nowhere => Run::Nowhere,
        }
    }
}

impl<'a> RunRef<'a> {
    /// The run a verdict is of, borrowed from it: found and let go by a
    /// command's per-run state with no copy of its id.
    pub fn of_report(r: &'a RunVerdict) -> RunRef<'a> {
        match &r.id {
            Some(id) => Run::Id(id),
            None if r.identity.is_some() || r.protocol.runs_by_position() => {
                Run::FromLine(r.first_line)
            }
            None => Run::Nowhere,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Arena, Parser};

    /// Place a line whose `aoi.run` is the JSON text `id` (None: no id).
    fn place(runs: &mut Runs, id: Option<&str>, opens: bool, line: u64) -> Target {
        let text = match id {
            Some(id) => format!(r#"{{"run":{id}}}"#),
            None => "{}".to_string(),
        };
        let mut arena = Arena::default();
        let index = Parser::new().parse(text.as_bytes(), &mut arena).unwrap();
        let ev = index.event(text.as_bytes(), &arena);
        runs.target(ev.get("run"), opens, line)
    }

    fn slot(t: Target) -> usize {
        match t {
            Target::Slot(s) => s,
            Target::Finished(id) => panic!("finished: {id:?}"),
        }
    }

    #[test]
    fn one_run_takes_every_line_without_multi_run() {
        let mut runs = Runs::new(false);
        let a = slot(place(&mut runs, Some(r#""a""#), false, 1));
        let b = slot(place(&mut runs, Some(r#""b""#), true, 2));
        let none = slot(place(&mut runs, None, true, 3));
        assert_eq!((a, b, none), (a, a, a));
        assert_eq!(runs.iter().count(), 1);
    }

    #[test]
    fn lines_go_to_their_run_by_decoded_id() {
        let mut runs = Runs::new(true);
        let a = slot(place(&mut runs, Some(r#""a""#), true, 1));
        let b = slot(place(&mut runs, Some(r#""b""#), true, 2));
        assert_ne!(a, b);
        // `"\u0061"` is `a` (docs/contract.md §3.2): decided on decoded values.
        assert_eq!(slot(place(&mut runs, Some(r#""\u0061""#), false, 3)), a);
        assert_eq!(slot(place(&mut runs, Some(r#""b""#), false, 4)), b);
        assert_eq!(runs.run(a).first_line, 1);
        assert_eq!(runs.run(b).name.as_deref(), Some("b"));
    }

    #[test]
    fn an_id_less_line_goes_to_the_run_its_meta_opened() {
        let mut runs = Runs::new(true);
        let first = slot(place(&mut runs, None, true, 1));
        assert_eq!(slot(place(&mut runs, None, false, 2)), first);
        let second = slot(place(&mut runs, None, true, 3));
        assert_ne!(second, first);
        assert_eq!(slot(place(&mut runs, None, false, 4)), second);
        // A meta with an id makes its run the current one.
        let c = slot(place(&mut runs, Some(r#""c""#), true, 5));
        runs.make_current(c);
        assert_eq!(slot(place(&mut runs, None, false, 6)), c);
    }

    #[test]
    fn a_judged_id_is_late_and_reported_once() {
        let mut runs = Runs::new(true);
        let a = slot(place(&mut runs, Some(r#""a""#), true, 1));
        let run = runs.remove(a);
        assert_eq!(run.id.as_deref(), Some(&b"a"[..]));
        assert_eq!(
            place(&mut runs, Some(r#""a""#), false, 2),
            Target::Finished(b"a"[..].into())
        );
        assert!(runs.first_late(b"a"));
        assert!(!runs.first_late(b"a"));
        // The freed slot is reused by the next run.
        assert_eq!(slot(place(&mut runs, Some(r#""b""#), true, 3)), a);
    }

    #[test]
    fn judged_ids_are_forgotten_past_the_cap() {
        let mut runs = Runs::new(true);
        for i in 0..=FINISHED_REMEMBERED {
            let s = slot(place(
                &mut runs,
                Some(&format!(r#""r{i}""#)),
                true,
                i as u64 + 1,
            ));
            runs.remove(s);
        }
        // The oldest is forgotten (a new run), the newest still late.
        assert!(matches!(
            place(&mut runs, Some(r#""r0""#), false, 9999),
            Target::Slot(_)
        ));
        let last = format!(r#""r{FINISHED_REMEMBERED}""#);
        assert!(matches!(
            place(&mut runs, Some(&last), false, 10_000),
            Target::Finished(_)
        ));
    }

    #[test]
    fn past_the_cap_the_oldest_open_run_is_handed_back() {
        let mut runs = Runs::with_cap(true, 2);
        let a = slot(place(&mut runs, Some(r#""a""#), true, 1));
        let b = slot(place(&mut runs, Some(r#""b""#), true, 2));
        assert_eq!(runs.over_cap(), None);
        let c = slot(place(&mut runs, Some(r#""c""#), true, 3));
        assert_eq!(runs.over_cap(), Some(a));
        assert!(runs.run(a).evicted);
        runs.remove(a);
        assert_eq!(runs.over_cap(), None);
        // An id judged early is late from then on; the others stay open.
        assert!(matches!(
            place(&mut runs, Some(r#""a""#), false, 4),
            Target::Finished(_)
        ));
        assert_eq!(runs.open_slots(|_| true), [b, c]);
    }

    #[test]
    fn a_long_id_is_kept_bounded_and_still_tells_runs_apart() {
        let mut runs = Runs::new(true);
        let long_a = format!(r#""{}a""#, "x".repeat(10_000));
        let long_b = format!(r#""{}b""#, "x".repeat(10_000));
        let a = slot(place(&mut runs, Some(&long_a), true, 1));
        let b = slot(place(&mut runs, Some(&long_b), true, 2));
        assert_ne!(a, b);
        assert!(runs.run(a).id.as_ref().unwrap().len() <= 256);
        assert_eq!(slot(place(&mut runs, Some(&long_a), false, 3)), a);
    }
}
