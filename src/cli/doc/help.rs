//! Help and version text, and run's help, which leaves out the FILE
//! operand.

use std::io::{self, Write};

use crate::cli::args::command;
use crate::cli::usage;
use crate::output::style;

/// Print clap's help or version text (on stdout: the text is the answer,
/// not a fatal error). run's help comes from `command()`,
/// which leaves out the FILE operand run refuses: hiding it in the command
/// that parses would also change how clap hands out the words after `--`.
pub fn print_help(e: &clap::Error) -> io::Result<()> {
    // Not `args()`: it panics on an argument that is not UTF-8.
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if e.kind() != clap::error::ErrorKind::DisplayHelp || usage::command_name(&args) != "run" {
        return e.print();
    }
    let mut cmd = command();
    let run = cmd.find_subcommand_mut("run").expect("run is a subcommand");
    let text = if args.iter().any(|a| a == "--help") {
        run.render_long_help()
    } else {
        run.render_help()
    };
    let mut out = io::stdout().lock();
    if style::help_painted() {
        write!(out, "{}", text.ansi())?;
    } else {
        write!(out, "{text}")?;
    }
    out.flush()
}
