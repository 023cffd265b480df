//! The engine's reading paths, each driven on its own: a small file read
//! whole on the judging thread, a pipe read by the pipeline's threads,
//! files shared out to the pool's workers, a file followed a look at a
//! time. `run` picks the path its inputs call for; here the caller names
//! it, so that one stream can be judged in process through every path and
//! what each found held to the others (tests/check.rs, after ripgrep's
//! `SearcherTester`). Each is the code `run` calls, with no signal of its
//! own (a `Caught` that never comes: the process's signals are not
//! ours), no relay and no progress line.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use super::consumer::Consumer;
use super::follow;
use super::judge::{Live, Reader, Serial};
use super::pool::{self, Listener};
use super::report::{Halt, Report};
use crate::config::{Input, StreamOptions};
use crate::exit::{Error, Result};
use crate::signal::Caught;

/// How one file is read on its own.
#[derive(Clone, Copy, Debug)]
pub enum Alone {
    /// Whole on this thread, as `run` reads a small regular file
    /// (docs/contract.md §2.2).
    Whole,
    /// By the pipeline's threads, as `run` reads standard input or a
    /// large file: a pipe's pauses flushed, read to its end.
    Piped,
}

/// `file` read `how`, its lines through `consumer` to `report`.
pub fn alone(
    how: Alone,
    file: File,
    opts: &StreamOptions,
    consumer: &mut dyn Consumer,
    report: &mut Report,
) -> Result<()> {
    let mut progress = None;
    let mut to = Serial {
        consumer,
        report,
        progress: &mut progress,
        opts,
    };
    let caught = Caught::default();
    let read = match how {
        Alone::Whole => Reader::default().judge(file, opts, &caught, &mut to),
        Alone::Piped => {
            let live = Live {
                relay: None,
                wake: None,
                idle: opts.idle_timeout_ms.map(Duration::from_millis),
                caught,
                on_signal: None,
                to_its_end: false,
            };
            to.piped(file, live)
        }
    };
    read.map_err(halted)?;
    Ok(())
}

/// `opts.inputs` judged by the pool of `opts.jobs` workers (docs/contract.md
/// §2.2), what they found told to `to` in operand order. A usage error
/// when the pool would not take them: `run` would read them one after
/// another instead (fewer than two regular files, or one worker).
pub fn pooled(opts: &StreamOptions, to: &mut dyn Listener) -> Result<()> {
    let sizes: Vec<_> = opts.inputs.iter().map(Input::file_size).collect();
    let Some(plan) = pool::plan(opts, &sizes) else {
        return Err(Error::Usage(
            "the pool takes two or more regular files and two or more workers".into(),
        ));
    };
    pool::judge(opts, plan, &Caught::default(), to, &mut None).map_err(halted)
}

/// `path` followed alone, as `--follow` follows a name (docs/contract.md
/// §2.3), a look at a time, `grow` called before each look (false once it
/// has nothing more to add). A follower never comes to a file's end; here,
/// once `grow` is done and a look finds nothing new, the file ends as a
/// rotated file does when its drain ends (its line in progress cut and
/// judged) and its open runs are judged, as every other path judges them
/// at its end.
pub fn followed(
    opts: &StreamOptions,
    path: &Path,
    consumer: &mut dyn Consumer,
    report: &mut Report,
    grow: &mut dyn FnMut() -> bool,
) -> Result<()> {
    follow::to_end(opts, path, consumer, report, grow).map_err(halted)
}

/// The error a path stopped with: `run` ends its report with it
/// (`Halt::end`); a caller here has no report to end.
fn halted(halt: Halt) -> Error {
    match halt {
        Halt::Judging(e) | Halt::Writing(e) => e,
    }
}
