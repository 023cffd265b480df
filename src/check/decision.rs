//! What the checker decided about one line (`Decision`), and the events
//! the line gives the commands that pass events on (`Decision::events`):
//! the line's own, or a document's once it closes, an array document's
//! one by one (docs/contract.md §6.2, §6.3).

use crate::check::config::Protocol;
use crate::check::document::{Closed, Passed};
use crate::check::protocols::LineKind;
use crate::check::runs::{Run, RunRef, Runs};
use crate::check::secrets::{Exposure, Withholding};
use crate::check::verdict::Hint;
use crate::input::scan::Line;

/// What the checker decided about one line: what it is, where it went,
/// and what `--redact` must do with it. Borrowed from the checker until
/// the next line is judged; every command reads the line's facts here,
/// so none asks the checker about "the last line" (STYLE §15).
#[derive(Clone, Copy)]
pub struct Decision<'a> {
    pub kind: LineKind,
    /// The line's number (from 1).
    pub line: u64,
    /// Where it went: read only by the commands that ask (`run`,
    /// `serial`, `hint`), so `verify` pays nothing for it.
    pub(super) went: Went<'a>,
    /// Its exposed secrets, late lines' too: what `--redact` writes over.
    pub exposures: &'a [Exposure],
    /// The document this line closed (one over several lines, or an
    /// array of events): the events it gives (`Decision::events`).
    pub(super) closed: Option<&'a Closed>,
    /// Whether `--redact` must write a placeholder instead of the line,
    /// and why (docs/contract.md §3.3).
    pub withheld: Option<Withholding>,
}

impl<'a> Decision<'a> {
    /// Each event `line` gives the commands that pass events on, in
    /// turn: a document's once it closes (its lines give none), an array
    /// document's elements one by one (docs/contract.md §6.3), else the
    /// line's own when it is an object.
    #[inline]
    pub fn each_event<E>(
        &self,
        line: &Line<'_>,
        mut f: impl FnMut(&Passed<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match (self.closed, line.event()) {
            (Some(doc), _) => doc.each_passed(f),
            (None, Some(event)) => f(&Passed {
                event,
                document: false,
                exposures: self.exposures,
            }),
            (None, None) => Ok(()),
        }
    }

    /// This line closed a document: a last line without its newline is
    /// then no cut fragment, but the end of the input's one document.
    pub fn closed_a_document(&self) -> bool {
        self.closed.is_some()
    }

    /// The run it went to (a judged run's, for a late line).
    pub fn run(&self) -> RunRef<'a> {
        self.went().0
    }

    /// The run it went to and the hint for state kept per run beside
    /// the checker (`run` and `hint`, read with one look at the table:
    /// the commands that keep state per run ask for both every line).
    #[inline]
    pub fn went(&self) -> (RunRef<'a>, Option<Hint>) {
        let w = self.went;
        match w.last {
            LastRun::Nowhere => (Run::Nowhere, None),
            LastRun::Slot(s) => match w.runs.get(*s) {
                // A document being read is its run's, known by the line it
                // opened on, before it closes and says what it is.
                Some(r) => {
                    let by_position = r.meta.is_some()
                        || r.protocol.is_some_and(Protocol::runs_by_position)
                        || w.doc_open;
                    let run = RunRef::of(r.id.as_deref(), r.first_line, by_position);
                    let hint = Hint {
                        slot: *s,
                        serial: r.serial,
                    };
                    (run, Some(hint))
                }
                None => (Run::Nowhere, None),
            },
            LastRun::Gone {
                id,
                first_line,
                meta,
                slot,
                serial,
            } => {
                let hint = slot
                    .zip(*serial)
                    .map(|(slot, serial)| Hint { slot, serial });
                (RunRef::of(id.as_deref(), *first_line, *meta), hint)
            }
        }
    }

    /// Its run's number, never given to another run in the process: the
    /// identity a hint is checked by. A run with an id keeps it for its
    /// whole life, so an equal number with `Run::Id` is an equal id.
    pub fn serial(&self) -> Option<u64> {
        match *self.went.last {
            LastRun::Slot(s) => self.went.runs.get(s).map(|r| r.serial),
            LastRun::Gone { serial, .. } => serial,
            LastRun::Nowhere => None,
        }
    }

    /// The hint for state kept per run beside the checker.
    pub fn hint(&self) -> Option<Hint> {
        self.went().1
    }
}

/// Where the checker's last line went, as the checker holds it.
#[derive(Clone, Copy)]
pub(super) struct Went<'a> {
    pub(super) last: &'a LastRun,
    pub(super) runs: &'a Runs,
    /// A document is being read (its lines are its run's by position).
    pub(super) doc_open: bool,
}

/// Where the last line went, kept past the run's end.
pub(super) enum LastRun {
    Nowhere,
    Slot(usize),
    Gone {
        id: Option<Box<[u8]>>,
        first_line: u64,
        meta: bool,
        /// The slot it had, if it had one, and its number.
        slot: Option<usize>,
        serial: Option<u64>,
    },
}
