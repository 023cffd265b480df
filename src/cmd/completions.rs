//! `aoitap completions SHELL` and `aoitap man`: completion scripts and the
//! manual page, from the clap definition.

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

/// The page `man/aoitap.1` holds (a test keeps the two the same).
pub fn man() -> Result<Exit> {
    let mut out = io::stdout().lock();
    out.write_all(cli::doc::man::render().as_bytes())?;
    out.flush()?;
    Ok(Exit::Pass)
}
