//! `aoitap completions SHELL`: completion scripts from the clap definition.

use std::io::{self, Write};

use anyhow::Result;

use crate::cli;
use crate::exit::Exit;

pub fn run(shell: clap_complete::Shell) -> Result<Exit> {
    let mut out = io::stdout().lock();
    clap_complete::generate(shell, &mut cli::command(), "aoitap", &mut out);
    out.flush()?;
    Ok(Exit::Pass)
}
