//! One module per subcommand, each `run(&Options) -> Result<Exit>` over
//! the shared engine (`crate::stream`) or on its own; `load` reads the
//! files a command line names before any of them runs.

pub mod capabilities;
pub mod completions;
pub mod filter;
pub mod lint;
pub mod profiles;
pub mod reconcile;
pub mod run;
pub mod schema;
pub mod split;
pub mod strip;
pub mod summarize;
pub mod upgrade;
pub mod verify;

use crate::check::schema::load_schema;
use crate::config::{Invocation, StreamOptions};
use crate::exit::Result;

/// The files a command line names, read once `cli` has lowered it and
/// before the command runs: `--schema FILE` compiled for verify and run,
/// lint's `--expected-failures` list. What fails here fails before
/// anything is written, and `main` says it as it says a refused command
/// line.
pub fn load(invocation: Invocation) -> Result<Invocation> {
    Ok(match invocation {
        Invocation::Verify(mut opts) => {
            compile_schema(&mut opts, "verify")?;
            Invocation::Verify(opts)
        }
        Invocation::Run(mut opts) => {
            compile_schema(&mut opts.stream, "run")?;
            Invocation::Run(opts)
        }
        Invocation::Lint(mut opts) => {
            opts.expected_failures = lint::expected_failures(&opts)?;
            Invocation::Lint(opts)
        }
        other => other,
    })
}

/// `--schema FILE`, compiled once and shared by every worker; a schema
/// that cannot be used is a usage error before anything is read
/// (docs/contract.md §3.5).
fn compile_schema(opts: &mut StreamOptions, command: &str) -> Result<()> {
    let format = opts.style.format;
    opts.check.schema = load_schema(opts.schema_file.as_deref(), &opts.check.secret_names)
        .map_err(|p| crate::cli::refuse_file(command, &p, format))?;
    Ok(())
}
