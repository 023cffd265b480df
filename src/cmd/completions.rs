//! `aoitap completions SHELL`: completion scripts from the clap definition.

use std::io::{self, Write};

use crate::cli;
use crate::config::CompletionsOptions;
use crate::exit::{Exit, Result};

pub fn run(opts: &CompletionsOptions) -> Result<Exit> {
    let script = cli::doc::completions::script(opts.shell);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Exit::Pass)
}
