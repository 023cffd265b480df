//! One file judged, from its first line to its end: read on the judging
//! thread when it is a small regular file (no thread, no socket and no
//! allocation of its own, docs/contract.md §2.2), through `input::pipeline`
//! when it is large or live; its lines judged in order; then its open runs
//! judged, or named when a signal stopped the reading. The serial engine
//! and every worker of the pool judge a file here, each saying what it
//! found its own way (`Judging`); follow reads a file a look at a time,
//! through the same `Lines`.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use crate::check::Checker;
use crate::config::StreamOptions;
use crate::exit::Error;
use crate::input::line_check::LineCheck;
use crate::input::lines::Lines;
use crate::input::pipeline::{End, Feed};
use crate::input::scan::{BATCH_BYTES, Batch, Cutter};
use crate::input::source::{RelayError, Source};
use crate::output::progress::Progress;
use crate::signal::Caught;

use super::consumer::{Consumer, judge_lines, left_open, pause};
use super::report::{Halt, Report};

/// Files at most this long are read on the judging thread when there is
/// one input at a time: past it, the pipeline's second thread pays.
const SMALL_FILE: u64 = 4 * BATCH_BYTES as u64;

/// A regular file small enough to read on the judging thread.
pub(super) fn small_file(file: &File) -> bool {
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.len() <= SMALL_FILE)
}

/// Where one file's judging goes: to the report through the command's
/// consumer (`Serial`), or to a pool worker's teller, said later in
/// operand order.
pub(super) trait Judging {
    /// Judge the lines of `batch`, in order.
    fn batch(&mut self, check: &mut Checker, batch: &Batch) -> Result<(), Halt>;
    /// Reading failed part way, after the lines judged.
    fn read_failed(&mut self, e: io::Error) -> Result<(), Halt>;
    /// Reading ended (`cancelled`: stopped by a signal): the file's open
    /// runs are judged, or named; whether reading stops here, before
    /// the next file.
    fn end(&mut self, check: Checker, cancelled: bool) -> Result<bool, Halt>;
}

/// What reading files on one thread keeps from one file to the next: the
/// cutter's buffer and `Lines`' batch and parser, so a thousand files
/// cost no more allocations than one.
#[derive(Default)]
pub(super) struct Reader {
    cutter: Option<Cutter<File>>,
    lines: Lines,
}

impl Reader {
    /// Judge `file` whole on this thread into `to`; whether reading stops
    /// here (a signal came and the runs were left open).
    pub(super) fn judge(
        &mut self,
        file: File,
        opts: &StreamOptions,
        caught: &Caught,
        to: &mut dyn Judging,
    ) -> Result<bool, Halt> {
        let mut check = Checker::new(&opts.check);
        let cutter = match &mut self.cutter {
            Some(c) => {
                c.restart(file);
                c
            }
            None => self.cutter.insert(Cutter::new(file, opts.max_line_bytes)),
        };
        let schema = opts.check.schema.as_deref().map(|s| s as &dyn LineCheck);
        let failed = loop {
            match self.lines.next(cutter, schema) {
                Ok(Some(batch)) => to.batch(&mut check, batch)?,
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
            if caught.caught().is_some() {
                break None;
            }
        };
        cutter.release();
        if let Some(e) = failed {
            to.read_failed(e)?;
        }
        to.end(check, caught.caught().is_some())
    }
}

/// The serial engine's judging: each line through the command's
/// consumer, said to the report at once.
pub(super) struct Serial<'a> {
    pub consumer: &'a mut dyn Consumer,
    pub report: &'a mut Report,
    pub progress: &'a mut Option<Progress>,
    pub opts: &'a StreamOptions,
}

impl Judging for Serial<'_> {
    fn batch(&mut self, check: &mut Checker, batch: &Batch) -> Result<(), Halt> {
        judge_lines(
            batch,
            self.consumer,
            check,
            self.report,
            self.progress,
            self.opts,
            |_| false,
        )
    }

    fn read_failed(&mut self, e: io::Error) -> Result<(), Halt> {
        self.report.read_failed(&e).map_err(Halt::writing)
    }

    fn end(&mut self, mut check: Checker, cancelled: bool) -> Result<bool, Halt> {
        if left_open(
            self.consumer,
            &mut check,
            self.report,
            self.progress,
            cancelled,
        )? {
            return Ok(cancelled);
        }
        self.consumer
            .end_input(check, self.report)
            .map_err(Halt::Judging)?;
        Ok(false)
    }
}

/// What reading a file through the pipeline needs besides the file: where
/// it is relayed, what else stops it, how long a silence may last.
pub(super) struct Live {
    pub relay: Option<File>,
    pub wake: Option<OwnedFd>,
    pub idle: Option<Duration>,
    /// Which signal came, and a descriptor readable once one did (none
    /// when reading goes on after a signal, or no signal is ours:
    /// `stream::paths`).
    pub caught: Caught,
    pub on_signal: Option<OwnedFd>,
    /// Read on after a signal (`OpenInput::to_its_end`).
    pub to_its_end: bool,
}

impl Serial<'_> {
    /// Judge `file` read by the pipeline's threads, as a live pipe is:
    /// flush before waiting, say a silence, stop at a signal; whether
    /// reading stops here.
    pub(super) fn piped(&mut self, file: File, live: Live) -> Result<bool, Halt> {
        let caught = live.caught;
        let (stopped, stop) = UnixStream::pair().map_err(Halt::writing)?;
        let mut wake = vec![OwnedFd::from(stopped)];
        wake.extend(live.on_signal);
        wake.extend(live.wake);
        let schema = self.opts.check.schema.clone();
        let mut feed = Feed::start(
            Source::new(file, live.relay, wake, live.idle),
            self.opts.max_line_bytes,
            schema.map(|s| s as Arc<dyn LineCheck>),
            stop,
        )
        .map_err(|e| Halt::Judging(Error::io("cannot start the reading thread".into(), e)))?;
        let mut check = Checker::new(&self.opts.check);
        while let Some(piece) = feed.next_piece() {
            self.batch(&mut check, &piece.batch)?;
            let stop = match &piece.end {
                End::More => false,
                End::WouldBlock => {
                    pause(self.consumer, self.report, self.progress)?;
                    false
                }
                End::Idle => {
                    let ms = self.opts.idle_timeout_ms.unwrap_or(0);
                    check.idle(self.report, ms).map_err(Halt::writing)?;
                    pause(self.consumer, self.report, self.progress)?;
                    false
                }
                End::Signal | End::Eof => true,
                End::Failed(e) if e.get_ref().is_some_and(|i| i.is::<RelayError>()) => {
                    // Our own output failed: said, and the report ended,
                    // so it still reads as a whole run (a closed
                    // downstream stays quiet: 141).
                    let e = io::Error::new(e.kind(), e.to_string());
                    return Err(Halt::judging(e));
                }
                End::Failed(e) => {
                    self.report.read_failed(e).map_err(Halt::writing)?;
                    true
                }
            };
            feed.done(piece.batch);
            if stop || (caught.caught().is_some() && !live.to_its_end) {
                break;
            }
        }
        self.end(check, caught.caught().is_some())
    }
}
