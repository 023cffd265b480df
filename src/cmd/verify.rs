//! `aoitap verify`: the pass/fail gate (DESIGN §1, §4), and with `--relay`
//! a judge inside a live pipe (DESIGN §5).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::Duration;

use anyhow::Result;

use crate::check::Checker;
use crate::cli::StreamOptions;
use crate::emit::Emitter;
use crate::exit::Exit;
use crate::scan::Scanner;
use crate::signal::Signals;
use crate::source::{self, Pause, RelayFailed, Source};

pub fn run(opts: &StreamOptions) -> Result<Exit> {
    let signals = Signals::install()?;
    let report: Box<dyn Write> = match &opts.report {
        Some(path) => match File::create(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("aoitap: cannot create the report {}: {e}", path.display());
                return Ok(Exit::CantCreate);
            }
        },
        None if opts.relay => Box::new(io::stderr()),
        None => Box::new(io::stdout()),
    };
    let mut relay = if opts.relay {
        Some(source::stdout_file()?)
    } else {
        None
    };
    let mut em = Emitter::new(
        BufWriter::with_capacity(64 * 1024, report),
        opts.style,
        "verify",
    );
    em.begin()?;
    let mut trouble: Option<Exit> = None;
    for input in &opts.inputs {
        em.file = input.label();
        let file = match input.open() {
            Ok(f) => f,
            Err(e) => {
                let code = if e.kind() == io::ErrorKind::NotFound {
                    "INPUT_NOT_FOUND"
                } else {
                    "INPUT_UNREADABLE"
                };
                let category = if e.kind() == io::ErrorKind::NotFound {
                    "not_found"
                } else {
                    "io"
                };
                em.local_error(category, code, &format!("{}: {e}", em.file))?;
                trouble = trouble.max(Some(Exit::NoInput));
                continue;
            }
        };
        let idle = opts.idle_timeout_ms.map(Duration::from_millis);
        let source = Source::new(file, relay.as_mut(), Some(signals.wake_fd()), idle);
        let mut scan = Scanner::new(source, opts.max_line_bytes);
        let mut check = Checker::new(&opts.check);
        loop {
            if signals.caught().is_some() {
                break;
            }
            match scan.next_line() {
                Ok(Some(line)) => {
                    check.line(line, &mut em)?;
                    if opts.line_buffered {
                        em.flush()?;
                    }
                }
                Ok(None) => break,
                Err(e) => match Pause::of(&e) {
                    Some(Pause::WouldBlock) => {
                        em.flush()?;
                        scan.get_mut().arm();
                    }
                    Some(Pause::Idle) => {
                        check.idle(&mut em, opts.idle_timeout_ms.unwrap_or(0))?;
                        em.flush()?;
                    }
                    Some(Pause::Signal) => break,
                    None if e.get_ref().is_some_and(|i| i.is::<RelayFailed>()) => {
                        return Err(e.into());
                    }
                    None => {
                        em.local_error(
                            "io",
                            "READ_FAILED",
                            &format!("{}: read failed: {e}", em.file),
                        )?;
                        trouble = trouble.max(Some(Exit::Io));
                        break;
                    }
                },
            }
        }
        if signals.caught().is_some() {
            // What was judged is reported; the runs are not: they were
            // stopped by us, not cut by the producer.
            break;
        }
        check.finish(&mut em)?;
    }
    let exit = signals
        .caught()
        .or(trouble)
        .unwrap_or_else(|| em.tally.exit());
    em.end(exit)?;
    Ok(exit)
}
