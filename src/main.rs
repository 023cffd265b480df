//! The binary: parse the command line, dispatch to one command, and turn
//! its result into the one exit status (DESIGN §4); nothing else.

use std::process::ExitCode;

use aoitap::cli;
use aoitap::cmd;
use aoitap::config::Invocation;
use aoitap::exit::Exit;
use aoitap::output;

fn main() -> ExitCode {
    let invocation = match cli::parse() {
        Ok(i) => i,
        Err(exit) => return exit.into(),
    };
    let jsonl = invocation.jsonl_command();
    let tap = invocation.tap_on_stdout();
    let result = match invocation {
        Invocation::Verify(opts) => cmd::verify::run(&opts),
        Invocation::StripEnvelope(opts) => cmd::strip::run(&opts),
        Invocation::SplitByRun(opts) => cmd::split::run(&opts),
        Invocation::Summarize(opts) => cmd::summarize::run(&opts),
        Invocation::Reconcile(opts) => cmd::reconcile::run(&opts),
        Invocation::Schema { name, major } => cmd::schema::run(name.as_deref(), major),
        Invocation::Capabilities => cmd::capabilities::run(),
        Invocation::Completions(shell) => cmd::completions::run(shell),
        Invocation::Run(opts) => cmd::run::run(&opts),
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
                let _ = output::error_stream(command, &err);
            }
            // A TAP consumer is told to stop, with the reason (DESIGN §13).
            if tap && exit != Exit::BrokenPipe && !err.report_begun() {
                let _ = output::tap::bail_out(&err.to_string());
            }
            exit.into()
        }
    }
}
