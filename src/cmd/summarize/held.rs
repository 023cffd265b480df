//! What summarize keeps of a run besides its counts by type (its
//! problems and outcome), what it keeps of a run that ended while one
//! begun before it is still open, and the one writer of a run's
//! summary, held or not (docs/contract.md §1.2).

use std::io;

use crate::check::RunVerdict;
use crate::output::summary::{Counted, Ending, Problem};
use crate::stream::Report;

/// A run's lines, the number of its last line, and its bytes.
pub(super) type Sizes = (u64, u64, u64);

/// A run's counts by type name, sorted: domain, framework.
type ByType<'a> = (&'a [(&'a str, u64)], &'a [(&'a str, u64)]);

/// Write run `r`'s summary from its counts, written now or held, and
/// count its verdict.
pub(super) fn write(
    report: &mut Report,
    width: Option<usize>,
    r: &RunVerdict,
    (lines, last_line, bytes): Sizes,
    (domain, framework): ByType<'_>,
    c: Option<&Counts>,
) -> io::Result<()> {
    report.tally.run(r);
    let counted = Counted {
        lines,
        last_line,
        bytes,
        domain,
        framework,
        warnings: c.map_or(&[], |c| &c.warnings),
        errors: c.map_or(&[], |c| &c.errors),
        outcome: c.and_then(|c| c.outcome.as_ref()),
    };
    report.out.summarized(r, &counted, width)
}

/// What is kept of a run that ended while one that began before it is
/// still open: its counts, its names copied out of the shared table.
pub(super) struct Held {
    pub(super) sizes: Sizes,
    pub(super) domain: Vec<(String, u64)>,
    pub(super) framework: Vec<(String, u64)>,
    pub(super) counts: Option<Box<Counts>>,
    /// About what it holds, in bytes (`MAX_HELD_BYTES`).
    pub(super) size: usize,
}

pub(super) fn borrowed(v: &[(String, u64)]) -> Vec<(&str, u64)> {
    v.iter().map(|(n, c)| (n.as_str(), *c)).collect()
}

/// What else a run's lines are counted as: the framework's errors and
/// warnings, and how it ended.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) warnings: Vec<Problem>,
    pub(super) errors: Vec<Problem>,
    pub(super) outcome: Option<Ending>,
}

impl Counts {
    /// The counts `held` has, made (or taken from `spare`) if none yet.
    #[allow(clippy::vec_box, reason = "the boxes are what is reused")]
    pub(super) fn made<'c>(
        held: &'c mut Option<Box<Counts>>,
        spare: &mut Vec<Box<Counts>>,
    ) -> &'c mut Counts {
        held.get_or_insert_with(|| spare.pop().unwrap_or_default())
    }

    /// About what its lists hold, in bytes (`MAX_HELD_BYTES`).
    pub(super) fn size(&self) -> usize {
        let each = |p: &Problem| 64 + p.category.len() + p.code.len() + p.first_message.len();
        self.warnings.iter().chain(&self.errors).map(each).sum()
    }

    /// Nothing counted, the room of its lists kept.
    pub(super) fn clear(&mut self) {
        self.warnings.clear();
        self.errors.clear();
        self.outcome = None;
    }
}
