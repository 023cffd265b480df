use std::io;
use std::process::ExitCode;

use aoitap::cli;
use aoitap::cmd;
use aoitap::config::Invocation;
use aoitap::exit::Exit;

fn main() -> ExitCode {
    let invocation = match cli::parse() {
        Ok(i) => i,
        Err(exit) => return exit.into(),
    };
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
        Err(err) if is_broken_pipe(&err) => Exit::BrokenPipe.into(),
        Err(err) => {
            aoitap::say!("aoitap: {err:#}");
            Exit::Io.into()
        }
    }
}

/// A closed downstream is a normal ending (spec §7): no message.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
