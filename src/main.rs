//! The binary: parse the command line, read the files it names
//! (`cmd::load`), dispatch to one command, and turn its result into the
//! one exit status (docs/contract.md §4.1); nothing else.

use std::process::ExitCode;

use aoitap::cli;
use aoitap::cmd;
use aoitap::config::Invocation;
use aoitap::exit::{Error, Exit, Machine, Problem, Refusal};
use aoitap::output;

fn main() -> ExitCode {
    // A panic is a bug that ends the process at once, whatever the build's
    // panic strategy (release aborts; the quick profile the tests build
    // unwinds, Cargo.toml says why): the default message, then abort, so
    // no thread's panic leaves the others running.
    let said = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        said(info);
        std::process::abort();
    }));
    let parsed = cli::parse().and_then(cmd::load);
    let machine = parsed.as_ref().ok().and_then(Invocation::machine);
    let result = match parsed {
        Err(err) => refused(err),
        Ok(Invocation::Verify(opts)) => cmd::verify::run(&opts),
        Ok(Invocation::StripEnvelope(opts)) => cmd::strip::run(&opts),
        Ok(Invocation::Upgrade(opts)) => cmd::upgrade::run(&opts),
        Ok(Invocation::SplitByRun(opts)) => cmd::split::run(&opts),
        Ok(Invocation::Summarize(opts)) => cmd::summarize::run(&opts),
        Ok(Invocation::Reconcile(opts)) => cmd::reconcile::run(&opts),
        Ok(Invocation::Schema(opts)) => cmd::schema::run(&opts),
        Ok(Invocation::Capabilities(opts)) => cmd::capabilities::run(&opts),
        Ok(Invocation::Profiles(one)) => cmd::profiles::run(one),
        Ok(Invocation::Completions(opts)) => cmd::completions::run(&opts),
        Ok(Invocation::Man) => cmd::completions::man(),
        Ok(Invocation::Run(opts)) => cmd::run::run(&opts),
        Ok(Invocation::Lint(opts)) => cmd::lint::run(&opts),
        Ok(Invocation::Filter(opts)) => cmd::filter::run(&opts),
    };
    match result {
        Ok(exit) => exit.into(),
        Err(err) => {
            say_fatal(&err, machine);
            err.exit().into()
        }
    }
}

/// What `cli::parse` or `cmd::load` hands back instead of a command, said
/// here: help, printed as clap prints it, or a refused command line (or a
/// file it names that is not there, on stderr alone); then the status the
/// error ends with. A failed write of the help comes back as the I/O
/// error it is, for `say_fatal`.
fn refused(err: Error) -> Result<Exit, Error> {
    match &err {
        Error::Help(help) => cli::doc::help::print_help(help)
            .map_err(|e| Error::io("cannot write the help".to_string(), e))?,
        Error::Refused(refusal) => {
            let machine = refusal.machine.map(|m| (refusal.command.as_str(), m));
            say_fatal(&err, machine);
        }
        _ => return Err(err),
    }
    Ok(err.exit())
}

/// The one place a fatal error is said: on stderr, once (a refused command
/// line the way clap says its own errors; nothing for a closed downstream,
/// spec §7, or when the command's own report carried it), then once more in
/// `machine`, the format the reader parses, as `command`: jsonl, aoitap's
/// own failed run (spec §2, §9); tap, a bail out (docs/contract.md §3.3). Not when
/// the command had begun a report of its own: a failed read or write ends
/// that one instead (`stream::fail`). A closed or full stream loses the
/// words, never the status.
fn say_fatal(err: &Error, machine: Option<(&str, Machine)>) {
    let exit = err.exit();
    match err {
        Error::Refused(refusal) => say_refusal(refusal),
        _ if exit == Exit::BrokenPipe || err.in_report() => {}
        _ => aoitap::say!("aoitap: {err}"),
    }
    if err.report_begun() {
        return;
    }
    match machine {
        Some((command, Machine::Jsonl { on_stderr })) => {
            let _ = output::jsonl::error_stream(command, err, on_stderr);
        }
        Some((_, Machine::Tap)) if exit != Exit::BrokenPipe => {
            let _ = output::tap::bail_out(&err.to_string());
        }
        Some((_, Machine::Upgraded)) if exit != Exit::BrokenPipe => {
            let _ = cmd::upgrade::refused(&mut std::io::stdout().lock(), exit, &err.to_string());
        }
        _ => {}
    }
}

/// A refused command line on stderr, as clap says its own errors.
fn say_refusal(refusal: &Refusal) {
    match &refusal.problem {
        Problem::Clap(text) => {
            let _ = output::style::write_as_clap(text, true);
        }
        Problem::Check(problem) => aoitap::say!(
            "error: {problem}\n\nFor more information, try 'aoitap {} --help'.",
            refusal.command
        ),
        Problem::NoCommand(help) => aoitap::say_part!("{help}"),
    }
}
