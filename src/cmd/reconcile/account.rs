//! One run's accounting: the seq space present and missing, repeats and
//! reorderings, and elision markers against the gaps they stand for; at
//! most `MAX_GAPS` missing ranges are listed (the rest are counted).

use crate::check::{Protocol, SeqStep, SeqTrack};
use crate::output::reconcile::{Account, Counters, Gap};

/// Missing ranges listed per run; more are counted.
const MAX_GAPS: usize = 1000;

/// One run's accounting. What every line touches is kept together, the
/// rest apart and made when first needed (for most runs, by the summary
/// that ends them): ten thousand interleaved runs' accounts are not all in
/// the cache, and a line costs a miss on its run's few words, not on all
/// it keeps (docs/contract.md §8.2).
#[derive(Default)]
pub struct Recon {
    pub first_line: u64,
    /// Lines of the run: events and unreadable lines (markers are not
    /// lines the producer wrote).
    pub lines: u64,
    /// The line number of the run's last event.
    pub last_line: u64,
    pub seq: SeqTrack,
    pub domain: u64,
    /// A marker not yet matched with a gap: (claims, line).
    pub marker: Option<(u64, u64)>,
    /// The run's protocol, as the checker decided it.
    pub protocol: Protocol,
    /// What lines touch only when something is missing, claimed or said.
    rest: Option<Box<Rest>>,
}

/// The part of a run's accounting few lines touch.
#[derive(Default)]
pub struct Rest {
    pub other_lines: u64,
    pub warnings: u64,
    pub errors: u64,
    pub gaps: Vec<Gap>,
    pub gaps_unlisted: u64,
    pub missing: u64,
    pub repeats: u64,
    pub reorders: u64,
    /// Markers whose claim did not match what was missing.
    pub marker_notes: Vec<String>,
    pub summary: Option<Counters>,
}

/// A run's accounting before anything of the rest is said.
static NOTHING_MORE: Rest = Rest {
    other_lines: 0,
    warnings: 0,
    errors: 0,
    gaps: Vec::new(),
    gaps_unlisted: 0,
    missing: 0,
    repeats: 0,
    reorders: 0,
    marker_notes: Vec::new(),
    summary: None,
};

impl Recon {
    pub fn new(first_line: u64) -> Recon {
        Recon {
            first_line,
            ..Recon::default()
        }
    }

    pub fn rest(&self) -> &Rest {
        self.rest.as_deref().unwrap_or(&NOTHING_MORE)
    }

    pub fn rest_mut(&mut self) -> &mut Rest {
        self.rest.get_or_insert_with(Box::default)
    }

    /// A seq at `line`; `before` is the run's previous event line.
    pub fn seq(&mut self, n: u64, before: u64) {
        match self.seq.step(n) {
            SeqStep::HeadCut { count } | SeqStep::Gap { count, .. } => {
                let gap = Gap {
                    from: n - count,
                    to: n - 1,
                    after_line: before,
                    marker: self.marker.take(),
                };
                if let Some((claims, at)) = gap.marker
                    && claims != gap.count()
                {
                    self.rest_mut().marker_notes.push(format!(
                        "the marker at line {at} claims {claims} lines, but seq {}..{} is {} missing",
                        gap.from,
                        gap.to,
                        gap.count()
                    ));
                }
                let rest = self.rest_mut();
                rest.missing = rest.missing.saturating_add(gap.count());
                if rest.gaps.len() < MAX_GAPS {
                    rest.gaps.push(gap);
                } else {
                    rest.gaps_unlisted += 1;
                }
            }
            SeqStep::InOrder => self.unmatched_marker(),
            SeqStep::Back { .. } => {
                self.unmatched_marker();
                self.late(n);
            }
        }
    }

    /// A seq below the next expected: a late event filling a gap
    /// (reordered), or one seen already (repeated).
    fn late(&mut self, n: u64) {
        let rest = self.rest_mut();
        let i = rest.gaps.partition_point(|g| g.to < n);
        match rest.gaps.get(i) {
            Some(g) if g.from <= n => {
                rest.reorders += 1;
                rest.missing -= 1;
                let g = rest.gaps.remove(i);
                let (left, right) = (
                    (g.from < n).then(|| Gap {
                        to: n - 1,
                        ..g.clone()
                    }),
                    (n < g.to).then(|| Gap { from: n + 1, ..g }),
                );
                for part in [right, left].into_iter().flatten() {
                    rest.gaps.insert(i, part);
                }
            }
            _ => rest.repeats += 1,
        }
    }

    pub fn unmatched_marker(&mut self) {
        if let Some((claims, at)) = self.marker.take() {
            self.rest_mut().marker_notes.push(format!(
                "the marker at line {at} claims {claims} lines, but nothing is missing there"
            ));
        }
    }

    /// Does every count agree? A run without seq cannot be accounted for
    /// event by event (it says "unverifiable"), yet is no fault of its own;
    /// a run without summary is a fault unless the stream is unbounded.
    pub fn reconciles(&self, unbounded: bool) -> bool {
        // Without seq there is nothing of reconcile's own to account for:
        // the checker's findings on counts and ends decide (docs/contract.md §6.1).
        if !self.protocol.numbers_events() {
            return true;
        }
        let rest = self.rest();
        let Some(s) = &rest.summary else {
            return unbounded && rest.missing == 0 && rest.repeats == 0;
        };
        rest.missing == 0
            && rest.repeats == 0
            && rest.marker_notes.is_empty()
            && self.marker.is_none()
            && s.event_count.is_none_or(|n| n == self.lines)
            && s.count.is_none_or(|c| c == self.domain)
            && s.warning_count.is_none_or(|c| c >= rest.warnings)
            && s.error_count.is_none_or(|c| c >= rest.errors)
    }

    /// What the reports show of the run.
    pub fn account(&self) -> Account<'_> {
        let rest = self.rest();
        Account {
            first_line: self.first_line,
            last_line: self.last_line,
            lines: self.lines,
            other_lines: rest.other_lines,
            domain: self.domain,
            warnings: rest.warnings,
            errors: rest.errors,
            seq: &self.seq,
            gaps: &rest.gaps,
            gaps_unlisted: rest.gaps_unlisted,
            missing: rest.missing,
            repeats: rest.repeats,
            reorders: rest.reorders,
            marker: self.marker,
            marker_notes: &rest.marker_notes,
            summary: rest.summary.as_ref(),
            protocol: self.protocol,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reordered_events_close_their_gap() {
        let mut r = Recon::default();
        for n in [0, 1, 4, 2, 3, 3] {
            r.seq(n, 1);
        }
        assert_eq!(
            (r.rest().missing, r.rest().reorders, r.rest().repeats),
            (0, 2, 1)
        );
        assert!(r.rest().gaps.is_empty());
        let mut r = Recon::default();
        for n in [0, 5, 2] {
            r.seq(n, 1);
        }
        let ranges: Vec<(u64, u64)> = r.rest().gaps.iter().map(|g| (g.from, g.to)).collect();
        assert_eq!(ranges, vec![(1, 1), (3, 4)]);
        assert_eq!(r.account().present(), vec![(0, 0), (2, 2), (5, 5)]);
    }

    #[test]
    fn gap_lists_are_bounded() {
        let mut r = Recon::default();
        for k in 0..(MAX_GAPS as u64 + 10) {
            r.seq(k * 2, 1);
        }
        assert_eq!(r.rest().gaps.len(), MAX_GAPS);
        assert_eq!(r.rest().gaps_unlisted, 9);
        assert_eq!(r.rest().missing, MAX_GAPS as u64 + 9);
    }
}
