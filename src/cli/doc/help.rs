//! Help and version text, and run's help, which leaves out the FILE
//! operand.

use std::io::{self, Write};

use crate::cli::args::command;
use crate::cli::usage;
use crate::exit::Help;
use crate::output::style;

/// clap's help or version text (on stdout: the text is the answer, not a
/// fatal error), as plain text for `main`. run's help comes from
/// `command()`, which leaves out the FILE operand run refuses: hiding it
/// in the command that parses would also change how clap hands out the
/// words after `--`.
pub fn help(e: &clap::Error) -> Help {
    // Not `args()`: it panics on an argument that is not UTF-8.
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if e.kind() != clap::error::ErrorKind::DisplayHelp || usage::command_name(&args) != "run" {
        return Help::Clap(usage::rendered(e));
    }
    let mut cmd = command();
    let run = cmd.find_subcommand_mut("run").expect("run is a subcommand");
    let text = if args.iter().any(|a| a == "--help") {
        run.render_long_help()
    } else {
        run.render_help()
    };
    if style::help_painted() {
        Help::Own(text.ansi().to_string())
    } else {
        Help::Own(text.to_string())
    }
}

/// Print the help `help` made.
pub fn print_help(help: &Help) -> io::Result<()> {
    match help {
        Help::Clap(text) => style::write_as_clap(text, false),
        Help::Own(text) => {
            let mut out = io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()
        }
    }
}
