//! Seq bookkeeping for one run id (spec §8.1), shared by the checker and
//! `reconcile`, so that both read the same gaps from the same seqs.
//!
//! After a gap the next expected seq is the one after the line's; after a
//! repeat (or a seq that goes back) it stays, so a duplicated line is one
//! repeat, not a repeat and a false gap. Seqs are `u64`; one past
//! `u64::MAX` saturates rather than wrapping.

/// Where a run's seq stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqTrack {
    /// The seq the next line should carry.
    next: u64,
    /// Some line of this id carried a seq.
    started: bool,
    /// A line carried seq `u64::MAX`: every seq there is was reached.
    top: bool,
}

/// What one seq says about the lines before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqStep {
    /// The seq expected.
    InOrder,
    /// The run's first seq is not 0: seqs `0..seq` were cut from the head.
    HeadCut { count: u64 },
    /// Seqs `from..=to` (`count` of them) never came.
    Gap { from: u64, to: u64, count: u64 },
    /// A seq already passed: repeated, or late.
    Back { expected: u64 },
}

impl SeqTrack {
    /// Some line carried a seq.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The seq the next line should carry.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// How many seqs the lines so far reach: `next`, or 2^64 once a line
    /// carried `u64::MAX` (its seq is then counted too).
    pub fn reached(&self) -> u128 {
        if self.top {
            1 << 64
        } else {
            u128::from(self.next)
        }
    }

    /// A track whose first `n` lines could not be read: `n` skips.
    pub fn skipped(n: u64) -> SeqTrack {
        SeqTrack {
            next: n,
            ..SeqTrack::default()
        }
    }

    /// A line that takes a step of seq but whose seq cannot be read (one
    /// finding per cause, docs/contract.md §3.1).
    pub fn skip(&mut self) {
        self.next = self.next.saturating_add(1);
    }

    /// A line carrying seq `n`.
    pub fn step(&mut self, n: u64) -> SeqStep {
        let (expected, started) = (self.next, self.started);
        let after = match n.checked_add(1) {
            Some(after) => after,
            None => {
                self.top = true;
                u64::MAX
            }
        };
        self.next = expected.max(after);
        self.started = true;
        if n > expected {
            let count = n - expected;
            if !started && expected == 0 {
                SeqStep::HeadCut { count }
            } else {
                SeqStep::Gap {
                    from: expected,
                    to: n - 1,
                    count,
                }
            }
        } else if n < expected {
            SeqStep::Back { expected }
        } else {
            SeqStep::InOrder
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(seqs: &[u64]) -> Vec<SeqStep> {
        let mut t = SeqTrack::default();
        seqs.iter().map(|&n| t.step(n)).collect()
    }

    #[test]
    fn in_order_gap_repeat_and_head() {
        use SeqStep::*;
        assert_eq!(steps(&[0, 1, 2]), vec![InOrder; 3]);
        assert_eq!(
            steps(&[0, 3, 4]),
            vec![
                InOrder,
                Gap {
                    from: 1,
                    to: 2,
                    count: 2
                },
                InOrder
            ]
        );
        assert_eq!(
            steps(&[0, 1, 1, 2]),
            vec![InOrder, InOrder, Back { expected: 2 }, InOrder]
        );
        assert_eq!(steps(&[5, 6]), vec![HeadCut { count: 5 }, InOrder]);
    }

    #[test]
    fn never_wraps() {
        let s = steps(&[0, u64::MAX, 1, 3]);
        assert_eq!(
            s[1],
            SeqStep::Gap {
                from: 1,
                to: u64::MAX - 1,
                count: u64::MAX - 1
            }
        );
        assert_eq!(s[2], SeqStep::Back { expected: u64::MAX });
        assert_eq!(s[3], SeqStep::Back { expected: u64::MAX });
    }

    #[test]
    fn an_unreadable_line_is_one_step() {
        let mut t = SeqTrack::default();
        t.step(0);
        t.skip();
        assert_eq!(t.step(2), SeqStep::InOrder);
    }
}
