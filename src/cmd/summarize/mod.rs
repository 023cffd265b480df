//! `aoitap summarize`: per run, at a glance — identity, lines and bytes,
//! counts by type, warnings and errors by category and code, outcome, seq
//! coverage and the verdict (docs/contract.md §1.2).
//!
//! Runs are told apart as with `--multi-run` (docs/contract.md §2.1). Counts
//! are by the protocol's discriminator, the field its type is judged by:
//! `kind` in AFDATA, `--type-field` in typed NDJSON and plain JSON lines
//! (`--type-field kind`), `type` in the rest; identity and outcome come
//! from the AOI framework events when there are any. Per run, at most
//! `MAX_KINDS` types and `MAX_KINDS` category/code pairs are kept by
//! name; the rest are counted under `(other)`. A run's state is let go
//! once its report is written; `--output json`'s one document is written
//! run by run, so it holds no more than the other outputs
//! (docs/contract.md §3.3).

use std::collections::BTreeMap;
use std::io;

use crate::check::{Checker, Decision, LineKind, Outcomes, Protocol, RunVerdict};
use crate::config::{ReportTo, SummarizeOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::Line;
use crate::json::Event;
use crate::output::summary::{self, Ending};
use crate::stream::{self, Consumer, Holder, PerRun, Report};

mod held;
mod outcomes;
mod types;

use held::{Counts, Held, Sizes, borrowed, write};
use types::{Kinds, Last, Names};

/// Counts of ended runs kept to be used again, at most: a run that
/// begins then costs no allocation (docs/contract.md §8.2).
const SPARE: usize = 256;

/// Names kept over all open runs together (types, and category/code
/// pairs), past each run's first `OWN`: each costs up to a couple of
/// hundred bytes, and 32,768 open runs of `MAX_KINDS` each would hold
/// gigabytes. Past it, a run's new names count under `(other)` until
/// other runs end (docs/contract.md §1.2, §3.2).
const MAX_KEPT: usize = 100_000;

/// The names each run keeps by name whatever other runs hold: a run's
/// counts do not change with how many runs are open beside it, unless
/// it has more names than this (docs/contract.md §1.2).
const OWN: usize = 16;

/// What ended runs held back while a run that began before them is
/// still open may take, about, in bytes: past it the earliest held is
/// written, so one run that never ends cannot make summarize keep every
/// run after it (docs/contract.md §1.2, §3.2).
const MAX_HELD_BYTES: usize = 16 << 20;

pub fn run(opts: &SummarizeOptions) -> Result<Exit> {
    let mut consumer = Summarize {
        type_field: &opts.stream.check.type_field,
        asked: None,
        stats: PerRun::default(),
        width: summary::terminal_width(),
        shared: Shared {
            room: MAX_KEPT,
            ..Shared::default()
        },
        ended: vec![],
        held: BTreeMap::new(),
        held_bytes: 0,
        in_order: opts.stream.follow.is_none(),
    };
    stream::run(&opts.stream, "summarize", ReportTo::Stdout, &mut consumer)
}

/// What is counted of one run: what every line touches first, then its
/// counts by type, and the rest (`Counts`) apart, made when first needed.
/// Ten thousand interleaved runs' state is not all in the cache; a line
/// costs one miss on its run's few words, not several on all it keeps
/// (docs/contract.md §8.2).
#[derive(Default)]
#[repr(C)]
struct Stats {
    lines: u64,
    bytes: u64,
    /// The number of its last line.
    last_line: u64,
    last: Option<Last>,
    kinds: Kinds,
    /// Names this run holds: its types' and its category/code pairs'
    /// (those past `OWN` against `MAX_KEPT`).
    kept: usize,
    counts: Option<Box<Counts>>,
}

// What a repeated line touches (its count, bytes, number and last type)
// is in the first cache line of the run's slot, after the slot's number
// and the run's key (`stream::slots`).
const _: () = assert!(
    8 + std::mem::size_of::<crate::check::RunKey>() + std::mem::offset_of!(Stats, kinds) <= 64
);

struct Summarize<'o> {
    type_field: &'o str,
    /// What the protocol of the last line answered: its field and where
    /// it states its outcome, asked again only when the protocol changes
    /// (asked of every line, they cost summarize 2.7% more instructions).
    asked: Option<(Protocol, &'o str, Outcomes)>,
    stats: PerRun<Stats>,
    /// Standard output's width, when it is a terminal.
    width: Option<usize>,
    shared: Shared,
    /// Runs a line ended, as the checker gave them: kept empty between
    /// lines.
    ended: Vec<RunVerdict>,
    /// Ended runs not yet written, by (first line, number): a merged
    /// log's runs are listed in the order they began, as the log reads
    /// (docs/contract.md §1.2).
    held: BTreeMap<(u64, u64), (RunVerdict, Held)>,
    held_bytes: usize,
    /// Whether runs are listed in the order they began: not under
    /// `--follow`, where a run that began earlier may never end.
    in_order: bool,
}

/// What every run's counts draw on.
#[derive(Default)]
struct Shared {
    /// Names that may still be kept past runs' own (`MAX_KEPT` less
    /// those held).
    room: usize,
    names: Names,
    /// Counts of ended runs, cleared, to be used again (`SPARE`): boxed
    /// as a run holds them, so that one given again costs no allocation.
    #[allow(clippy::vec_box, reason = "the boxes are what is reused")]
    spare: Vec<Box<Counts>>,
}

/// A run's claim on the names all runs may keep.
struct Room<'a> {
    left: &'a mut usize,
    taken: &'a mut usize,
}

impl Room<'_> {
    fn take(&mut self) -> bool {
        let ok = *self.taken < OWN || *self.left > 0;
        if ok && *self.taken >= OWN {
            *self.left -= 1;
        }
        *self.taken += usize::from(ok);
        ok
    }
}

impl Stats {
    fn event(
        &mut self,
        ev: &Event<'_>,
        type_field: &str,
        line: u64,
        outcomes: Outcomes,
        shared: &mut Shared,
    ) {
        match outcomes {
            Outcomes::Kinds => self.afdata(ev, line, &mut shared.spare),
            Outcomes::Envelope => self.aiocs(ev, line, &mut shared.spare),
            Outcomes::Profile(p) => self.profile(p.get(), ev, line, shared),
            Outcomes::Framework | Outcomes::Unstated => {}
        }
        // Decoded once: counted by it, and (below) an `aoi:error`,
        // `aoi:warning` or `aoi:summary` by it too.
        let counted = match type_field {
            "type" => ev.ty_bytes(),
            field => ev.get(field).and_then(|v| v.decoded()),
        };
        let repeated = match (&mut self.last, &counted) {
            (Some(last), Some(d)) => last.repeat(d, &shared.names, &mut self.kinds),
            _ => false,
        };
        if !repeated {
            self.flush();
            let ty = match type_field {
                "type" => ev.ty(),
                field => ev.get(field).and_then(|v| v.as_str()),
            };
            let mut room = Room {
                left: &mut shared.room,
                taken: &mut self.kept,
            };
            let place = self
                .kinds
                .count(ty.as_deref(), &mut shared.names, || room.take());
            self.last = place
                .zip(counted.as_deref())
                .and_then(|(p, d)| p.last(d, &shared.names));
        }
        // Only where the framework's events are the protocol's (AOI,
        // and its types in typed NDJSON or plain JSON lines): an AFDATA
        // or aiocs line's errors and end are its own, read above.
        if outcomes == Outcomes::Framework {
            self.framework_event(ev, counted.as_deref(), line, shared);
        }
    }

    /// Add the counts `last` holds to theirs: before the type changes,
    /// and before the counts are read.
    fn flush(&mut self) {
        if let Some(last) = self.last.as_mut() {
            last.flush(&mut self.kinds);
        }
    }

    /// The run's other counts, made (or taken from `spare`) when first
    /// needed.
    #[allow(clippy::vec_box, reason = "the boxes are what is reused")]
    fn counts(&mut self, spare: &mut Vec<Box<Counts>>) -> &mut Counts {
        Counts::made(&mut self.counts, spare)
    }

    fn sizes(&self) -> Sizes {
        (self.lines, self.last_line, self.bytes)
    }

    fn outcome(&self) -> Option<&Ending> {
        self.counts.as_ref()?.outcome.as_ref()
    }
}

impl Consumer for Summarize<'_> {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        let stats = &self.stats;
        let judged = Holder::judge(check, line, report, &mut self.ended, &|s| stats.touch(s));
        let Ok(decided) = &judged else {
            return judged.map(|d| d.kind).map_err(Into::into);
        };
        let seen = decided.kind;
        // A line of a run already reported is the checker's finding, and
        // no count of ours: no verdict would let that state go, and it
        // would be counted into the next run of that id (another input's).
        if !seen.late {
            self.count(decided, line);
        }
        if !self.ended.is_empty() || !self.held.is_empty() {
            let oldest = if self.in_order {
                check.oldest_open()
            } else {
                None
            };
            let mut ended = std::mem::take(&mut self.ended);
            for r in ended.drain(..) {
                self.ended(r, oldest, report)?;
            }
            self.ended = ended;
            self.write_held(oldest, report)?;
        }
        Ok(seen)
    }

    /// A signal stopped reading: the runs held are judged already, and
    /// are written before the open ones are named unjudged.
    fn input_read(
        &mut self,
        _check: &mut Checker,
        report: &mut Report,
        cancelled: bool,
    ) -> Result<Option<&'static str>> {
        if cancelled {
            self.write_held(None, report)?;
        }
        Ok(cancelled.then_some("cancelled"))
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        // The runs still open, in the order they began: each after the
        // held runs that began before it.
        for r in Holder::finish(check, report)? {
            self.write_held(Some(r.first_line), report)?;
            self.ended(r, None, report)?;
        }
        self.write_held(None, report)?;
        Ok(())
    }

    /// `--output json` is one document, however many inputs: its end.
    fn end_all(&mut self, report: &mut Report) -> Result<()> {
        report.out.close()?;
        Ok(())
    }
}

impl Summarize<'_> {
    /// Count `line` into the run `decided` says it went to.
    fn count(&mut self, decided: &Decision<'_>, line: &Line<'_>) {
        let (seen, number) = (decided.kind, decided.line);
        let st = self.stats.of(decided, Stats::default);
        if !matches!(line, Line::Unterminated { .. }) {
            st.lines += 1;
        }
        st.bytes += line.input_bytes();
        st.last_line = number;
        let Ok(()) = decided.each_event(line, |passed| {
            let ev = &passed.event;
            // Counted by the field the checker judges the line's type by
            // (docs/contract.md §1.2, §6.1): AFDATA's `kind`, `--type-field`
            // where that is the discriminator (typed NDJSON, plain JSON
            // lines), and else `type` (AOI's; aiocs and OKF have none of
            // their own). Another field would count an `aoi:error` as a
            // type and not as an error.
            let (field, outcomes) = match self.asked {
                Some((p, field, outcomes)) if p == seen.protocol => (field, outcomes),
                _ => {
                    let p = seen.protocol;
                    let answers = (p.type_field(self.type_field), p.outcomes());
                    self.asked = Some((p, answers.0, answers.1));
                    answers
                }
            };
            st.event(ev, field, number, outcomes, &mut self.shared);
            Ok::<(), std::convert::Infallible>(())
        });
    }

    /// A run ended: written now if no run that began before it is still
    /// open and none is held, else held, its names copied out so that
    /// the room they took is other runs' again (docs/contract.md §1.2).
    fn ended(&mut self, r: RunVerdict, oldest: Option<u64>, report: &mut Report) -> io::Result<()> {
        let mut st = self.stats.remove_judged(&r).unwrap_or_default();
        if self.held.is_empty() && oldest.is_none_or(|o| r.first_line < o) {
            return self.emit(&r, st, report);
        }
        st.flush();
        let shared = &mut self.shared;
        shared.room += st.kept.saturating_sub(OWN);
        let owned = |v: Vec<(&str, u64)>| -> Vec<(String, u64)> {
            v.into_iter().map(|(n, c)| (n.to_string(), c)).collect()
        };
        let domain = owned(st.kinds.sorted(&shared.names, false));
        let framework = owned(st.kinds.sorted(&shared.names, true));
        st.kinds.release(&mut shared.names);
        // The verdict's words too: an identity of long names, a long
        // message (each bounded, but many runs are held).
        let said = r.message.len()
            + r.identity.as_ref().map_or(0, |i| {
                [
                    &i.tool,
                    &i.tool_version,
                    &i.aoi_version,
                    &i.schema_name,
                    &i.schema_version,
                    &i.command,
                ]
                .iter()
                .map(|f| f.as_ref().map_or(0, String::len))
                .sum()
            });
        let size = 1024
            + said
            + domain
                .iter()
                .chain(&framework)
                .map(|(n, _)| n.len() + 32)
                .sum::<usize>()
            + st.counts.as_deref().map_or(0, Counts::size);
        self.held_bytes += size;
        let held = Held {
            sizes: st.sizes(),
            domain,
            framework,
            counts: st.counts,
            size,
        };
        self.held.insert((r.first_line, r.hint.serial), (r, held));
        Ok(())
    }

    /// Write the held runs that began before `oldest`, the first line of
    /// the oldest run still open (all of them if none is), and the
    /// earliest while more than `MAX_HELD_BYTES` are held.
    fn write_held(&mut self, oldest: Option<u64>, report: &mut Report) -> io::Result<()> {
        loop {
            let over = self.held_bytes > MAX_HELD_BYTES;
            let Some(entry) = self.held.first_entry() else {
                break;
            };
            if !over && oldest.is_some_and(|o| entry.key().0 > o) {
                break;
            }
            let (r, held) = entry.remove();
            self.held_bytes -= held.size;
            let (domain, framework) = (borrowed(&held.domain), borrowed(&held.framework));
            let names = (&domain[..], &framework[..]);
            let c = held.counts.as_deref();
            write(report, self.width, &r, held.sizes, names, c)?;
            self.shared.give_back(held.counts);
        }
        Ok(())
    }

    fn emit(&mut self, r: &RunVerdict, mut st: Stats, report: &mut Report) -> io::Result<()> {
        st.flush();
        let shared = &mut self.shared;
        shared.room += st.kept.saturating_sub(OWN);
        let (domain, framework) = (
            st.kinds.sorted(&shared.names, false),
            st.kinds.sorted(&shared.names, true),
        );
        let names = (&domain[..], &framework[..]);
        let written = write(
            report,
            self.width,
            r,
            st.sizes(),
            names,
            st.counts.as_deref(),
        );
        drop((domain, framework));
        st.kinds.release(&mut shared.names);
        shared.give_back(st.counts);
        written
    }
}

impl Shared {
    /// An ended run's other counts, cleared and kept to be used again
    /// (`SPARE`).
    fn give_back(&mut self, counts: Option<Box<Counts>>) {
        if let Some(mut counts) = counts
            && self.spare.len() < SPARE
        {
            counts.clear();
            self.spare.push(counts);
        }
    }
}
