//! A whole regular file read on the thread that judges it: no thread, no
//! socket and no allocation of its own (DESIGN §14). A live pipe is read
//! through `input::pipeline` instead.

use std::fs::File;
use std::io;

use crate::config::StreamOptions;
use crate::input::line_check::LineCheck;
use crate::input::scan::{BATCH_BYTES, Batch, Cutter};
use crate::json::Parser;
use crate::signal::Caught;

use super::report::Halt;

/// Files at most this long are read on the judging thread when there is
/// one input at a time: past it, the pipeline's second thread pays.
const SMALL_FILE: u64 = 4 * BATCH_BYTES as u64;

/// A regular file small enough to read on the judging thread.
pub(super) fn small_file(file: &File) -> bool {
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.len() <= SMALL_FILE)
}

/// What reading files on one thread keeps from one file to the next: the
/// cutter's buffer, a batch and a parser, so a thousand files cost no
/// more allocations than one.
#[derive(Default)]
pub(super) struct Reader {
    cutter: Option<Cutter<File>>,
    batch: Batch,
    parser: Parser,
}

impl Reader {
    /// Cut and parse `file` batch by batch, handing each to `each`; stops
    /// after the batch in which a signal came. `Ok(Some(e))`: reading
    /// failed part way, after what was handed out.
    pub(super) fn read(
        &mut self,
        file: File,
        opts: &StreamOptions,
        signals: &Caught,
        mut each: impl FnMut(&Batch) -> Result<(), Halt>,
    ) -> Result<Option<io::Error>, Halt> {
        let cutter = match &mut self.cutter {
            Some(c) => {
                c.restart(file);
                c
            }
            None => self.cutter.insert(Cutter::new(file, opts.max_line_bytes)),
        };
        let ended = loop {
            match cutter.next_batch_in(&mut self.batch) {
                Ok(true) => {}
                Ok(false) => break None,
                Err(e) => break Some(e),
            }
            let schema = opts.check.schema.as_deref().map(|s| s as &dyn LineCheck);
            self.batch.parse(&mut self.parser, schema);
            each(&self.batch)?;
            // A buffer grown for a long line goes now, as the pipeline's
            // do: kept from file to file, each of `-j` workers held two
            // of its longest line's size.
            self.batch.release();
            if signals.caught().is_some() {
                break None;
            }
        };
        cutter.release();
        Ok(ended)
    }
}
