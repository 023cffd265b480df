//! The command line: clap's definition (`args`, `values`), the checks clap
//! cannot make (`usage`), and the plain options it becomes (`lower`);
//! `doc` renders help, the man page and completions from the same
//! definition. Nothing past here sees clap.

mod args;
pub mod doc;
mod lower;
mod rules_table;
mod usage;
mod values;

use std::ffi::OsString;

use clap::{ArgMatches, FromArgMatches};

use crate::check::rules::{Rule, Word};
use crate::config::{CapabilitiesOptions, Invocation, SchemaOptions};
use crate::exit::{Error, Problem, Refusal};
pub use args::command;
use args::{Cli, Command, StreamArgs};
pub use usage::refuse_file;

/// Parse the command line into the plain options of one command. What
/// comes back instead is help to print or a refused command line
/// (`exit::Error::Help`, `Error::Refused`): `main` says it.
pub fn parse() -> Result<Invocation, Error> {
    parse_from(std::env::args_os())
}

/// As `parse`, for the command line `args`, the program's name first: a
/// test that judges in process takes its options as the binary would
/// (tests/check.rs).
pub fn parse_from(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, Error> {
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = args::parser_for(&args)
        .try_get_matches_from(&args)
        .and_then(|m| {
            let mut cli = Cli::from_arg_matches(&m)?;
            if let (Some(stream), Some((_, sub))) = (
                cli.command.as_mut().and_then(Command::stream_mut),
                m.subcommand(),
            ) {
                stream.rule_words = rule_words(sub);
            }
            Ok(cli)
        });
    let cli = cli.map_err(|e| {
        if e.use_stderr() {
            usage::clap_refused(e)
        } else {
            Error::Help(doc::help::help(&e))
        }
    })?;
    if cli.schema {
        return Ok(Invocation::Schema(SchemaOptions {
            name: None,
            major: None,
        }));
    }
    if cli.capabilities {
        return Ok(Invocation::Capabilities(CapabilitiesOptions {}));
    }
    let Some(command) = cli.command else {
        return Err(Error::Refused(Box::new(Refusal {
            problem: Problem::NoCommand(command().render_help().to_string()),
            command: "aoitap".to_string(),
            machine: None,
        })));
    };
    lower::lower(command)
}

impl Command {
    /// The stream options of a command that reads a stream.
    fn stream_mut(&mut self) -> Option<&mut StreamArgs> {
        match self {
            Command::Verify(a) => Some(&mut a.stream),
            Command::StripEnvelope(a) => Some(&mut a.stream),
            Command::Upgrade(a) => Some(&mut a.stream),
            Command::SplitByRun(a) => Some(&mut a.stream),
            Command::Summarize(a) => Some(&mut a.stream),
            Command::Reconcile(a) => Some(&mut a.stream),
            Command::Run(a) => Some(&mut a.stream),
            Command::Filter(a) => Some(&mut a.stream),
            Command::Schema(_)
            | Command::Capabilities(_)
            | Command::Profiles(_)
            | Command::Completions(_)
            | Command::Man(_)
            | Command::Lint(_) => None,
        }
    }
}

/// `--allow` and `--deny` as one list in the order they were given, so the
/// last word on a rule wins (docs/contract.md §3.3).
fn rule_words(m: &ArgMatches) -> Vec<(Rule, Word)> {
    let mut words = vec![];
    for (id, word) in [("allow", Word::Allow), ("deny", Word::Deny)] {
        if let (Some(at), Some(rules)) = (m.indices_of(id), m.get_many::<Rule>(id)) {
            words.extend(at.zip(rules).map(|(i, r)| (i, *r, word)));
        }
    }
    words.sort_by_key(|&(i, _, _)| i);
    words.into_iter().map(|(_, r, w)| (r, w)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        args::parser().debug_assert();
        command().debug_assert();
    }
}
