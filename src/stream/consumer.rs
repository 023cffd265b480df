//! What a command does beyond judging (`Consumer`), and the pause the
//! engine makes when the input would make it wait: the stream engine's
//! loops (`each_input`, `follow`) share them.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;

use super::report::{Halt, Report};
use crate::check::{Checker, Discard, LineKind};
use crate::config::{Input, StreamOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::{Batch, Line};
use crate::output::progress::Progress;
use crate::signal::Signals;

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
            to_its_end: false,
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

    /// Only judging is done, as `Consumer::line`'s default does, with no
    /// state beyond the checker's: files may be judged by a pool of
    /// workers (docs/contract.md §2.2).
    fn judges_only(&self) -> bool {
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
    /// Read to its end after a signal too: its writer is told of the
    /// signal and ends it (run: CMD's watcher passes the signal on, and
    /// kills CMD's group at `--kill-after`).
    pub to_its_end: bool,
}

/// The input would make us wait: push out what is buffered.
pub(super) fn pause(
    consumer: &mut dyn Consumer,
    report: &mut Report,
    progress: &mut Option<Progress>,
) -> std::result::Result<(), Halt> {
    consumer.flush().map_err(Halt::Writing)?;
    clear(progress);
    report.out.flush().map_err(Halt::writing)
}

pub(super) fn clear(progress: &mut Option<Progress>) {
    if let Some(p) = progress {
        p.clear();
    }
}

/// The end of `check`'s input: the consumer judges its open runs, or
/// leaves them (a signal stopped reading), and then they are named, not
/// judged; whether it left them.
pub(super) fn left_open(
    consumer: &mut dyn Consumer,
    check: &mut Checker,
    report: &mut Report,
    progress: &mut Option<Progress>,
    cancelled: bool,
) -> std::result::Result<bool, Halt> {
    let unjudged = consumer
        .input_read(check, report, cancelled)
        .map_err(Halt::Judging)?;
    let Some(why) = unjudged else {
        return Ok(false);
    };
    clear(progress);
    report
        .not_judged(check.open_runs(), why)
        .map_err(Halt::writing)?;
    Ok(true)
}

/// Judge every line of `batch`, and count its bytes as read. A line of
/// `bytes` bytes for which `silent(bytes)` holds is judged for the state it
/// leaves only (follow: what a file held already, docs/contract.md §2.3).
pub(super) fn judge_lines(
    batch: &Batch,
    consumer: &mut dyn Consumer,
    check: &mut Checker,
    report: &mut Report,
    progress: &mut Option<Progress>,
    opts: &StreamOptions,
    mut silent: impl FnMut(u64) -> bool,
) -> std::result::Result<(), Halt> {
    let mut judged = 0;
    for line in batch.lines() {
        if silent(line.input_bytes()) {
            check.judge(&line, &mut Discard).map_err(Halt::writing)?;
            continue;
        }
        consumer.line(check, &line, report).map_err(Halt::Judging)?;
        judged += line.input_bytes();
        if opts.line_buffered {
            clear(progress);
            report.out.flush().map_err(Halt::writing)?;
        }
    }
    if let Some(p) = progress {
        p.add(judged);
    }
    Ok(())
}
