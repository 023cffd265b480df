//! The engine every stream command shares: open each input, read it
//! through the scanner as a live pipe (flush before waiting, notice
//! silences and signals), judge every line, report, and end with the
//! verdict's exit status (docs/contract.md §4.1). A command says what it does beyond
//! judging through `Consumer`; `paths` drives each way of reading on its
//! own, for a test that holds them to one another.

mod consumer;
mod follow;
mod judge;
pub mod paths;
mod pool;
mod report;
pub(crate) mod slots;

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::time::Duration;

use crate::check::Tally;
use crate::config::{Input, ReportTo, StreamOptions};
use crate::exit::{Error, Exit, Result};
use crate::input::source;
use crate::output::Emitter;
use crate::output::progress::Progress;
use crate::signal::Signals;

pub use consumer::{Consumer, OpenInput};
pub use pool::Listener;
pub use report::{Holder, Report};

use consumer::clear;
pub use slots::{PerRun, RunSlots};

use judge::{Live, Reader, Serial, small_file};
use report::{Halt, fail};

/// Run a stream command over every input; returns the exit status.
pub fn run(
    opts: &StreamOptions,
    command: &'static str,
    to: ReportTo,
    consumer: &mut dyn Consumer,
) -> Result<Exit> {
    // A closed terminal stops every stream command as SIGTERM does: the
    // report is written whole, cancelled (129), for a reader that may
    // still be there (`nohup`, a log); a follower's state is written and
    // its open runs named (docs/contract.md §3.3).
    let signals = Signals::install(consumer.second_signal_exits(), true)?;
    let typed_in = command != "run"
        && opts.follow.is_none()
        && opts.inputs.iter().any(|i| matches!(i, Input::Stdin))
        && io::stdin().is_terminal();
    if typed_in && io::stderr().is_terminal() {
        // A person who typed `aoitap verify` alone would otherwise wait
        // on silence (jq prints its usage).
        crate::say!(
            "aoitap {command}: reading a stream from standard input, which is this terminal: \
             pipe one in or name a FILE (Ctrl-D ends the input; aoitap {command} --help)"
        );
    }
    let out = report_writer(opts, to)?;
    let relay = relay_writer(opts)?;
    let mut report = Report {
        tally: Tally::default(),
        out: Emitter::new(
            BufWriter::with_capacity(64 * 1024, out),
            opts.style,
            command,
        ),
    };
    report.out.begin()?;
    let sizes: Vec<_> = opts.inputs.iter().map(Input::file_size).collect();
    let total = sizes.iter().copied().sum::<Option<u64>>();
    // What a person types has no progress to show beside it.
    let mut progress = Progress::new(report.out.carries().for_a_person && !typed_in, total);
    let plan = pool::plan(opts, &sizes).filter(|_| consumer.judges_only());
    let read = match (&opts.follow, plan) {
        (Some(how), _) => follow::follow(opts, how, consumer, &signals, &mut report, &mut progress),
        (None, Some(plan)) => pool::judge(opts, plan, &signals.flags(), &mut report, &mut progress),
        (None, None) => each_input(opts, consumer, &signals, relay, &mut report, &mut progress),
    };
    if let Err(halt) = read {
        return Err(halt.end(report));
    }
    clear(&mut progress);
    if let Err(e) = consumer
        .end_all(&mut report)
        .and_then(|()| consumer.flush())
    {
        return Err(fail(report, e));
    }
    let exit = report
        .tally
        .decide(signals.caught(), |verdict| consumer.exit(verdict));
    report.end(exit)?;
    Ok(exit)
}

/// Where the report goes: --report's file, else stderr or stdout as
/// the command has it.
fn report_writer(opts: &StreamOptions, to: ReportTo) -> Result<Box<dyn Write>> {
    match &opts.report {
        Some(path) => match File::create(path) {
            Ok(f) => Ok(Box::new(f)),
            Err(e) => Err(Error::CantCreate(format!(
                "cannot create the report {}: {e}",
                path.display()
            ))),
        },
        None if to == ReportTo::Stderr => Ok(Box::new(io::stderr())),
        None => Ok(Box::new(io::stdout())),
    }
}

/// Where the lines read are relayed as they come, when they are relayed
/// whole: --save's file, else stdout.
fn relay_writer(opts: &StreamOptions) -> Result<Option<File>> {
    // With --redact (and run's --upgrade) the relay is written line by
    // line by the command (`output::relay`, for verify and run), once
    // each line is judged.
    if !opts.relay || opts.redact || opts.upgrade {
        return Ok(None);
    }
    match &opts.save {
        Some(path) => match File::create(path) {
            Ok(f) => Ok(Some(f)),
            Err(e) => Err(Error::CantCreate(format!(
                "cannot create {}: {e}",
                path.display()
            ))),
        },
        None => Ok(Some(source::stdout_file()?)),
    }
}

/// Read and judge the inputs one after another; trouble opening or
/// reading one (66, 74, or run's own) goes to the report's tally.
fn each_input(
    opts: &StreamOptions,
    consumer: &mut dyn Consumer,
    signals: &Signals,
    relay: Option<File>,
    report: &mut Report,
    progress: &mut Option<Progress>,
) -> std::result::Result<(), Halt> {
    let caught = signals.flags();
    let mut reader = Reader::default();
    let mut k = 0;
    while let Some(next) = consumer.next_input(k, &opts.inputs, signals) {
        k += 1;
        report.out.file = next.label;
        let file = match next.file {
            Ok(f) => f,
            Err(e) => {
                report.unopened(&e, next.unopened).map_err(Halt::writing)?;
                continue;
            }
        };
        let relay = match next.relay {
            Some(own) => Some(own),
            None => relay
                .as_ref()
                .map(File::try_clone)
                .transpose()
                .map_err(Halt::writing)?,
        };
        let idle = opts.idle_timeout_ms.map(Duration::from_millis);
        let mut to = Serial {
            consumer: &mut *consumer,
            report: &mut *report,
            progress: &mut *progress,
            opts,
        };
        let stop = if relay.is_none() && next.wake.is_none() && idle.is_none() && small_file(&file)
        {
            // Read on this thread (docs/contract.md §2.2): for a file this
            // small the pipeline's two threads and socket cost more than
            // the file.
            reader.judge(file, opts, &caught, &mut to)?
        } else {
            let on_signal = match next.to_its_end {
                true => None,
                false => Some(signals.wake_fd().map_err(Halt::writing)?),
            };
            let live = Live {
                relay,
                wake: next.wake,
                idle,
                caught: caught.clone(),
                on_signal,
                to_its_end: next.to_its_end,
            };
            to.piped(file, live)?
        };
        if stop {
            break;
        }
    }
    Ok(())
}
