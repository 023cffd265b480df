//! What clap cannot see: the checks across flags and files that make a
//! command line a usage error (64), found before anything is opened for
//! writing (docs/contract.md §3.2), and how such an error is said.

use std::path::Path;

use clap::ValueEnum;

use super::args::{OutputArg, ProtocolArg, ReconcileArgs, RunArgs, StreamArgs};
use crate::config::SplitOptions;
use crate::exit::{Error, Machine, Problem, Refusal, Rendered};
use crate::input::file_id::{FileId, input_in_dir, same_file, stdin_is, stdout_is};
use crate::output::style::Format;

/// The checks every stream command makes that clap cannot: a `--report`
/// that would destroy an input, `--first` and `--last` without ndjson,
/// standard input named twice.
pub(super) fn stream(args: &StreamArgs, command: &str) -> Result<(), Error> {
    // Which --output and --protocol values a command takes is clap's to
    // say (its value parsers list them: `args::parser`).
    let stdout_input = args
        .files
        .iter()
        .find(|f| f.as_os_str() != "-" && stdout_is(f));
    let problem = if let Some(input) = stdout_input {
        Some(format!(
            "standard output is the input {}: aoitap would read what it writes",
            input.display()
        ))
    } else if let Some(report) = &args.report
        && let Some(input) = args.files.iter().find(|f| same_file(f, report))
    {
        Some(format!(
            "--report {} is an input: writing the report would destroy it",
            input.display()
        ))
    } else if let Some(report) = &args.report
        && (args.files.is_empty() || args.files.iter().any(|f| f.as_os_str() == "-"))
        && stdin_is(report)
    {
        Some(format!(
            "--report {} is standard input: writing the report would destroy it",
            report.display()
        ))
    } else if (args.first.is_some() || args.last.is_some()) && args.protocol != ProtocolArg::Ndjson
    {
        Some("--first and --last describe typed NDJSON runs: give --protocol ndjson".into())
    } else if args.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        Some("standard input (\"-\") is named more than once: it can be read once".into())
    } else {
        None
    };
    let Some(problem) = problem else {
        return Ok(());
    };
    let mut err = refuse(command, &problem, args.output);
    // Standard output is an input: the refusal is not written there
    // either, where it would be appended to the file it protects; jsonl
    // goes to stderr, TAP is not written.
    if stdout_input.is_some()
        && let Error::Refused(refusal) = &mut err
    {
        refusal.machine = match refusal.machine {
            Some(Machine::Jsonl { .. } | Machine::Upgraded) => {
                Some(Machine::Jsonl { on_stderr: true })
            }
            _ => None,
        };
    }
    Err(err)
}

/// `--schema FILE` of verify is not the stream it reads: standard input
/// is read once (docs/contract.md §3.5).
pub(super) fn schema_file(path: Option<&Path>, args: &StreamArgs) -> Result<(), Error> {
    match path {
        Some(p)
            if p.as_os_str() == "-"
                || (args.files.is_empty() || args.files.iter().any(|f| f.as_os_str() == "-"))
                    && stdin_is(p) =>
        {
            let problem = "--schema cannot be standard input: that is the stream (use a file or <(tool schema --output json))";
            Err(refuse("verify", problem, args.output))
        }
        _ => Ok(()),
    }
}

/// split-by-run never writes over an input, --force or not (docs/contract.md §3.3),
/// and this is known before anything is written, though which names it
/// writes depends on run ids not read yet: so no input may be a file in
/// DIR that split-by-run may write (`run-*.jsonl`, `unattributed*.jsonl`).
/// Other files in DIR are no concern: `split-by-run --dir . log.jsonl` is
/// fine.
pub(super) fn split(
    dir: &Path,
    inputs: &[(FileId, String)],
    output: OutputArg,
) -> Result<(), Error> {
    match input_in_dir(dir, inputs, SplitOptions::may_write) {
        None => Ok(()),
        Some((path, name)) => {
            let problem = format!(
                "{} is the input {name}: split-by-run may write that name, and never writes over an input (--force or not); give another --dir",
                path.display()
            );
            Err(refuse("split-by-run", &problem, output))
        }
    }
}

/// reconcile's report never overwrites the reference it compares with.
pub(super) fn reconcile(a: &ReconcileArgs) -> Result<(), Error> {
    if let (Some(report), Some(against)) = (&a.stream.report, &a.against)
        && same_file(report, against)
    {
        let problem = format!(
            "--report {} is the --against reference: writing the report would destroy it",
            report.display()
        );
        return Err(refuse("reconcile", &problem, a.stream.output));
    }
    Ok(())
}

/// run reads CMD's output, never FILE, and its report never overwrites
/// the saved output.
pub(super) fn run(a: &RunArgs) -> Result<(), Error> {
    let problem = match (a.stream.files.first(), &a.save, &a.stream.report) {
        (Some(f), _, _) => Some(format!(
            "run reads CMD's output, not files ({}): give the command after --, as in aoitap run -- tool args",
            f.display()
        )),
        (None, Some(save), Some(report)) if save == report || same_file(save, report) => {
            Some(format!(
                "--save and --report are both {}: the report would overwrite the output",
                save.display()
            ))
        }
        (None, None, _)
            if a.upgrade && matches!(a.stream.output, OutputArg::Tap | OutputArg::Junit) =>
        {
            Some("--upgrade writes CMD's stream upgraded, and with this --output stdout is the report's: give --save FILE".to_string())
        }
        _ => None,
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(refuse("run", &problem, a.stream.output)),
    }
}

/// clap's own usage error, to be said as clap says it, and once more as
/// a machine reads it when `--output` asks for one.
pub(super) fn clap_refused(e: clap::Error) -> Error {
    // `args()` panics on an argument that is not UTF-8: clap refused it,
    // and the refusal must not become a panic.
    let args = args_lossy();
    let e = match command_name(&args).as_str() {
        c @ ("run" | "lint") if !args.iter().any(|a| a == "--") => command_tip(e, c),
        c => unknown_tip(e, c),
    };
    Error::Refused(Box::new(Refusal {
        problem: Problem::Clap(rendered(&e)),
        command: command_name(&args),
        machine: machine(
            wants_output(&args).unwrap_or(OutputArg::Human),
            &command_name(&args),
            &args,
        ),
    }))
}

/// clap's words as plain text: with its styles as escape codes, which
/// `output::style::write_as_clap` writes as clap would, and without.
pub(super) fn rendered(e: &clap::Error) -> Rendered {
    Rendered {
        ansi: e.render().ansi().to_string(),
        plain: e.to_string(),
    }
}

/// The tip for a flag a command does not know. clap's own, "to pass
/// '-o' as a value, use '-- -o'", would read a file of that name, never
/// what was meant (docs/contract.md §3.4: a tip never leads to a wrong
/// file): the tip names the flag meant where one is known (`-o` is
/// `--output`; jq's flags in filter have their replacement), else where
/// the command's flags are listed, and how a FILE of that name is named.
/// A near miss clap spelled out ("a similar argument exists") is kept.
fn unknown_tip(mut e: clap::Error, command: &str) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg).cloned() else {
        return e;
    };
    let flag = arg.split('=').next().unwrap_or(&arg);
    let file = format!("a FILE named '{arg}' is './{arg}'");
    let meant = match (command, flag) {
        (_, "-o") => Some("did you mean --output? (--output FORMAT)".to_string()),
        ("filter", "-e" | "--exit-status") => Some(format!(
            "jq's {flag} is not filter's: the exit status is the stream's verdict already; \
             to fail the events a condition does not hold for, use --assert EXPR"
        )),
        ("filter", "-n" | "--null-input") => Some(format!(
            "jq's {flag} is not filter's: PROG runs on each event; for a value made from \
             nothing, use jq -n"
        )),
        ("filter", "-s" | "--slurp") => Some(format!(
            "jq's {flag} is not filter's: PROG runs on one event at a time; to gather them, \
             aoitap filter . FILE | jq -s PROG"
        )),
        ("filter", "--argjson") => Some(
            "jq's --argjson is not filter's: --arg NAME VALUE gives a string, and \
             ($NAME | fromjson) its JSON value"
                .to_string(),
        ),
        _ => None,
    };
    // A near miss clap found (`--ouput`) is its tip, unless the flag is
    // one whose meaning is known (jq's `--argjson` is no `--arg`).
    if meant.is_none() && e.get(ContextKind::SuggestedArg).is_some() {
        return e;
    }
    let tip = match meant {
        Some(meant) => format!("{meant}; {file}"),
        None if command == "filter" => format!(
            "'{flag}' is not an option of filter: jq's own flags are not filter's (its options \
             are in 'aoitap filter --help'); {file}"
        ),
        None => format!(
            "'{flag}' is not an option of aoitap {command} ('aoitap {command} --help' lists \
             them); {file}"
        ),
    };
    e.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
    e
}

/// run's and lint's tip when CMD was given without `--` before it (`aoitap
/// run ls`: CMD "not provided"; `aoitap lint python3 x.py`: "unexpected
/// argument"): the fix, never a guess at which word begins CMD (docs/contract.md §3.4).
fn command_tip(mut e: clap::Error, command: &str) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        e.kind(),
        ErrorKind::UnknownArgument | ErrorKind::MissingRequiredArgument
    ) {
        return e;
    }
    let tip = format!(
        "put `--` before CMD, so that its words are its own: aoitap {command} [OPTIONS] -- CMD [ARG ...]"
    );
    e.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
    e
}

/// A usage error of aoitap's own, to be said the way clap says its own
/// (and, with `--output jsonl`, as aoitap's own failed run; with `--output
/// tap`, as a bail out on stdout, docs/contract.md §3.3): 64.
pub(super) fn refuse(command: &str, problem: &str, output: OutputArg) -> Error {
    Error::Refused(Box::new(Refusal {
        problem: Problem::Check(problem.to_string()),
        command: command.to_string(),
        machine: machine(output, command, &args_lossy()),
    }))
}

/// A usage error in a file the command line names (`--schema`,
/// `--expected-failures`), found by the command that reads it: said as
/// `refuse` says one, in the machine format `format` asks for (only jsonl
/// and tap have one).
pub fn refuse_file(command: &str, problem: &str, format: Format) -> Error {
    let output = match format {
        Format::Jsonl => OutputArg::Jsonl,
        Format::Tap => OutputArg::Tap,
        Format::Human
        | Format::Junit
        | Format::Sarif
        | Format::Github
        | Format::Json
        | Format::Html => OutputArg::Human,
    };
    refuse(command, problem, output)
}

fn args_lossy() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// The machine format a usage error is said in besides stderr: jsonl
/// (on stdout, or on stderr where the command's report goes when stdout is
/// its data) and tap (for the commands that report in it); a person's
/// formats need nothing more.
fn machine(output: OutputArg, command: &str, args: &[String]) -> Option<Machine> {
    let data_on_stdout = matches!(command, "filter" | "strip-envelope")
        || (command == "verify" && args.iter().any(|a| a == "--relay"));
    // upgrade's stdout is an AOI stream, whatever its report's format.
    let upgrading = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--upgrade");
    if command == "upgrade" || (command == "run" && upgrading) {
        return Some(Machine::Upgraded);
    }
    match output {
        OutputArg::Jsonl => Some(Machine::Jsonl {
            on_stderr: data_on_stdout,
        }),
        OutputArg::Tap if matches!(command, "verify" | "run" | "lint") && !data_on_stdout => {
            Some(Machine::Tap)
        }
        // A CI report that cannot start is its exit status and stderr.
        OutputArg::Tap
        | OutputArg::Human
        | OutputArg::Json
        | OutputArg::Junit
        | OutputArg::Sarif
        | OutputArg::Github
        | OutputArg::Html => None,
    }
}

/// The `--output` (or `--format`) asked for, read from the words before
/// `--` (after it, they are run's CMD and its arguments); the last wins,
/// as clap reads it.
pub(super) fn wants_output(args: &[String]) -> Option<OutputArg> {
    let mut asked = None;
    let mut words = args.iter().skip(1).take_while(|a| *a != "--");
    while let Some(a) = words.next() {
        if matches!(a.as_str(), "--output" | "--format") {
            asked = words.next().map(String::as_str);
        } else if let Some(v) = a
            .strip_prefix("--output=")
            .or_else(|| a.strip_prefix("--format="))
        {
            asked = Some(v);
        }
    }
    asked.and_then(|v| OutputArg::from_str(v, false).ok())
}

/// The subcommand named on the command line, for aoitap's own meta.
pub(in crate::cli) fn command_name(args: &[String]) -> String {
    let root = super::args::command();
    args.iter()
        .skip(1)
        .find(|a| root.find_subcommand(a.as_str()).is_some())
        .cloned()
        .unwrap_or_else(|| "aoitap".to_string())
}
