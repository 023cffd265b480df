//! `aoitap completions SHELL`: completion scripts from the clap definition.

use std::io::{self, Write};

use crate::cli;
use crate::exit::{Exit, Result};

pub fn run(shell: clap_complete::Shell) -> Result<Exit> {
    // Made in memory first: clap_complete panics on a failed write.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cli::command(), "aoitap", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Exit::Pass)
}
