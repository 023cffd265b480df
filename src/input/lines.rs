//! The one cut-parse loop: a cutter's next batch of whole lines, parsed
//! once, with the per-line check (`--schema`) it carries. Every reader on
//! the judging thread goes through here (a whole file, a followed file,
//! lint's spooled call, reconcile's reference); the pipeline's threads cut
//! and parse the same batches, split between two cores.

use std::io::{self, Read};

use crate::input::line_check::LineCheck;
use crate::input::scan::{Batch, Cutter};
use crate::json::Parser;

/// One batch and one parser, reused for every cutter read through them:
/// a thousand files, or a thousand followed names, cost no more
/// allocations than one.
#[derive(Default)]
pub struct Lines {
    batch: Batch,
    parser: Parser,
}

impl Lines {
    /// The next batch of `cutter`'s whole lines, parsed (each event also
    /// through `check`), reading until a batch is full or the input ends;
    /// `None` once everything was handed out. The batch's buffer is the
    /// one the cutter fills next, so a caller reads any input with two
    /// buffers, allocated and zeroed once.
    pub fn next<R: Read>(
        &mut self,
        cutter: &mut Cutter<R>,
        check: Option<&dyn LineCheck>,
    ) -> io::Result<Option<&Batch>> {
        // A buffer grown for a long line goes before the next batch, as
        // the pipeline's do: kept from file to file, each of `-j` workers
        // held two of its longest line's size.
        self.batch.release();
        loop {
            let more = cutter.read()?;
            if cutter.full() || !more {
                self.batch = cutter.take(std::mem::take(&mut self.batch));
                if self.batch.is_empty() && !more {
                    return Ok(None);
                }
                self.batch.parse(&mut self.parser, check);
                return Ok(Some(&self.batch));
            }
        }
    }

    /// What `cutter` holds now, its tail ended (`Cutter::end_tail`: a
    /// followed file rotated away or cut), parsed; `None` when it holds
    /// nothing.
    pub fn rest<R: Read>(
        &mut self,
        cutter: &mut Cutter<R>,
        check: Option<&dyn LineCheck>,
    ) -> Option<&Batch> {
        self.batch.release();
        self.batch = cutter.take(std::mem::take(&mut self.batch));
        if self.batch.is_empty() {
            return None;
        }
        self.batch.parse(&mut self.parser, check);
        Some(&self.batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::scan::Line;

    /// The lines of `input` as `Lines` hands them out, cut at `max`.
    fn cut(input: &[u8], max: usize) -> Vec<String> {
        let mut cutter = Cutter::new(input, max);
        let mut lines = Lines::default();
        let mut out = vec![];
        while let Some(batch) = lines.next(&mut cutter, None).unwrap() {
            for line in batch.lines() {
                out.push(match line {
                    Line::Complete { bytes, json, .. } => format!(
                        "{}{}",
                        String::from_utf8_lossy(bytes),
                        if json.is_ok() { "" } else { " (bad)" }
                    ),
                    other => format!("other {}", other.input_bytes()),
                });
            }
        }
        out
    }

    #[test]
    fn every_line_is_handed_out_once_in_order_and_parsed() {
        let input = b"{\"a\":1}\nnot json\n{\"b\":[2]}\n";
        assert_eq!(
            cut(input, 1 << 20),
            ["{\"a\":1}", "not json (bad)", "{\"b\":[2]}"]
        );
    }

    #[test]
    fn an_empty_input_has_no_batch_and_a_cut_tail_is_one_line() {
        assert!(cut(b"", 1 << 20).is_empty());
        assert_eq!(cut(b"{}\n{\"x\"", 1 << 20), ["{}", "other 4"]);
    }

    #[test]
    fn many_batches_lose_no_line() {
        let mut input = vec![];
        for k in 0..200_000 {
            input.extend_from_slice(format!("{{\"k\":{k}}}\n").as_bytes());
        }
        let out = cut(&input, 1 << 20);
        assert_eq!(out.len(), 200_000);
        assert_eq!(out[123_456], "{\"k\":123456}");
    }

    #[test]
    fn rest_hands_out_what_a_held_tail_kept() {
        let mut cutter = Cutter::holding_tail(&b"{}\n{\"cut\""[..], 1 << 20);
        let mut lines = Lines::default();
        let first = lines.next(&mut cutter, None).unwrap().unwrap();
        assert_eq!(first.lines().count(), 1);
        assert!(lines.next(&mut cutter, None).unwrap().is_none());
        cutter.end_tail();
        let rest = lines.rest(&mut cutter, None).unwrap();
        assert_eq!(rest.lines().count(), 1);
        assert!(lines.rest(&mut cutter, None).is_none());
    }
}
