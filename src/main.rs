//! The binary: parse the command line, dispatch to one command, and turn
//! its result into the one exit status (DESIGN §4); nothing else.

use std::process::ExitCode;

use aoitap::cli;
use aoitap::cmd;
use aoitap::config::Invocation;
use aoitap::exit::{Error, Exit, Machine, Problem, Refusal};
use aoitap::output;

fn main() -> ExitCode {
    let parsed = cli::parse();
    let jsonl = parsed.as_ref().ok().and_then(Invocation::jsonl_command);
    let on_stderr = parsed.as_ref().is_ok_and(Invocation::report_on_stderr);
    let tap = parsed.as_ref().is_ok_and(Invocation::tap_on_stdout);
    let result = match parsed {
        Err(err) => refused(err),
        Ok(Invocation::Verify(opts)) => cmd::verify::run(&opts),
        Ok(Invocation::StripEnvelope(opts)) => cmd::strip::run(&opts),
        Ok(Invocation::SplitByRun(opts)) => cmd::split::run(&opts),
        Ok(Invocation::Summarize(opts)) => cmd::summarize::run(&opts),
        Ok(Invocation::Reconcile(opts)) => cmd::reconcile::run(&opts),
        Ok(Invocation::Schema(opts)) => cmd::schema::run(&opts),
        Ok(Invocation::Capabilities(opts)) => cmd::capabilities::run(&opts),
        Ok(Invocation::Completions(opts)) => cmd::completions::run(&opts),
        Ok(Invocation::Man) => cmd::completions::man(),
        Ok(Invocation::Run(opts)) => cmd::run::run(&opts),
        Ok(Invocation::Lint(opts)) => cmd::lint::run(&opts),
        Ok(Invocation::Filter(opts)) => cmd::filter::run(&opts),
    };
    match result {
        Ok(exit) => exit.into(),
        Err(err) => {
            let exit = err.exit();
            // A closed downstream is a normal ending (spec §7): no message;
            // nor when the command's own report carries it.
            if exit != Exit::BrokenPipe && !err.in_report() {
                aoitap::say!("aoitap: {err}");
            }
            // Said once more, as the stream a jsonl reader parses, when the
            // command never got to start its own (a failed read or write
            // ends the report it started instead: stream::fail).
            if let Some(command) = jsonl
                && !err.report_begun()
            {
                let _ = output::error_stream(command, &err, on_stderr);
            }
            // A TAP consumer is told to stop, with the reason (DESIGN §13).
            if tap && exit != Exit::BrokenPipe && !err.report_begun() {
                let _ = output::tap::bail_out(&err.to_string());
            }
            exit.into()
        }
    }
}

/// What `cli::parse` hands back instead of a command, said here: help,
/// printed as clap prints it, or a refused command line (`say_refusal`);
/// then the status the error ends with. A failed write of the help comes
/// back as the I/O error it is, for the one fatal-error message above.
fn refused(err: Error) -> Result<Exit, Error> {
    match &err {
        Error::Help(help) => cli::doc::help::print_help(help)
            .map_err(|e| Error::io("cannot write the help".to_string(), e))?,
        Error::Refused(refusal) => say_refusal(refusal),
        _ => return Err(err),
    }
    Ok(err.exit())
}

/// A refused command line on stderr, then on stdout for a machine: jsonl,
/// aoitap's own failed run (spec §2, §9: usage); tap, a bail out (DESIGN
/// §13). A closed or full stream loses the words, never the status.
fn say_refusal(refusal: &Refusal) {
    match &refusal.problem {
        Problem::Clap(e) => {
            let _ = e.print();
        }
        Problem::Check(problem) => aoitap::say!(
            "error: {problem}\n\nFor more information, try 'aoitap {} --help'.",
            refusal.command
        ),
        Problem::NoCommand(help) => aoitap::say_part!("{help}"),
    }
    match refusal.machine {
        Some(Machine::Jsonl { on_stderr }) => {
            let usage = Error::Usage(refusal.reason());
            let _ = output::error_stream(&refusal.command, &usage, on_stderr);
        }
        Some(Machine::Tap) => {
            let _ = output::tap::bail_out(&refusal.reason());
        }
        None => {}
    }
}
